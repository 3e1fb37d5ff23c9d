"""Plots for the HTML reports, as inline SVG text (no files, no network, no display).

matplotlib is imported lazily, only when a report is rendered, and only through
`matplotlib.figure.Figure` (no pyplot, so no global state and no GUI backend is touched).
Text stays text in the SVG (``svg.fonttype = "none"``) and ids are deterministic
(``svg.hashsalt``), so the same result renders to the same bytes.

The numbers behind the plots come from `audit.stats`, the same functions the auditor uses.
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np

from audit import stats

_RC = {"svg.fonttype": "none", "svg.hashsalt": "privaudit", "font.size": 10,
       "font.family": "sans-serif", "axes.spines.top": False, "axes.spines.right": False}
RED, GREEN, BLUE, GREY, ORANGE = "#c62828", "#2e7d32", "#1565c0", "#757575", "#ef6c00"


def _figure(width: float, height: float):
    from matplotlib.figure import Figure  # lazy: only HTML rendering needs matplotlib
    return Figure(figsize=(width, height), dpi=96, layout="constrained")


def _svg(fig) -> str:
    import matplotlib
    buf = io.StringIO()
    with matplotlib.rc_context(_RC):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    # Drop the XML prolog and DOCTYPE: the <svg> element is embedded in HTML as it is.
    return text[text.index("<svg"):]


def _with_rc(fn):
    def wrapped(*args, **kwargs):
        import matplotlib
        with matplotlib.rc_context(_RC):
            return fn(*args, **kwargs)
    wrapped.__doc__, wrapped.__name__ = fn.__doc__, fn.__name__
    return wrapped


_SUP = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _log_axis(axis) -> None:
    """Decade ticks as plain text "10⁶": matplotlib's default log labels go through mathtext,
    whose parser costs more than the rest of a plot."""
    from matplotlib.ticker import FuncFormatter, NullLocator

    def label(v, _pos):
        if v <= 0:
            return ""
        e = math.log10(v)
        if abs(e - round(e)) > 1e-9:
            return ""
        e = int(round(e))
        return {0: "1", 1: "10"}.get(e, "10" + str(e).translate(_SUP))

    axis.set_major_formatter(FuncFormatter(label))
    axis.set_minor_locator(NullLocator())   # dozens of unlabelled minor ticks cost more than they show


def _alpha(result) -> float:
    a = float(getattr(result, "alpha_per_bound", 0.0) or 0.0)
    if 0.0 < a < 1.0:
        return a
    return stats.per_bound_alpha(result.confidence, max(int(result.tests or 1), 1))


@_with_rc
def epsilon_scale(epsilon_lower: float, claim_epsilon: float, ceiling: float,
                  violation: bool) -> str:
    """One bar: epsilon_lower against the claimed epsilon and the certifiable ceiling."""
    finite = [v for v in (epsilon_lower, claim_epsilon, ceiling) if math.isfinite(v)]
    top = max(finite + [1e-3]) * 1.15
    fig = _figure(7.5, 1.7)
    ax = fig.subplots()
    ax.barh([0], [min(epsilon_lower, top)], height=0.5, color=RED if violation else GREEN,
            label="ε lower bound (certified)")
    ax.axvline(claim_epsilon, color="black", lw=2, label="claimed ε")
    if math.isfinite(ceiling):
        ax.axvline(ceiling, color=GREY, lw=1.5, ls="--", label="ceiling: most the budget can certify")
    ax.set_xlim(0, top)
    ax.set_yticks([])
    ax.set_xlabel("ε")
    fig.legend(loc="outside lower center", ncol=3, frameon=False, fontsize=9)
    return _svg(fig)


def _two_sided(k: int, n: int, alpha: float) -> tuple[float, float]:
    return float(stats.cp_lower(k, n, alpha)), float(stats.cp_upper(k, n, alpha))


@_with_rc
def intervals(test: Any, claim_epsilon: float, claim_delta: float, alpha: float) -> str:
    """Confidence intervals of the witness's two probabilities p = P[A(S) ∈ E], q = P[A(S′) ∈ E].

    Each interval is drawn at the per-bound level the audit used; the bound the audit relies on is
    marked (p's lower end, q's upper end), and so is the largest p the claim allows given q_hi,
    ``e^ε q_hi + δ``: the claim is refuted exactly when p_lo lies to its right.
    """
    p_hat = test.k_p / test.n_p if test.n_p else 0.0
    q_hat = test.k_q / test.n_q if test.n_q else 0.0
    p_lo2, p_hi2 = _two_sided(test.k_p, test.n_p, alpha) if test.n_p else (0.0, 1.0)
    q_lo2, q_hi2 = _two_sided(test.k_q, test.n_q, alpha) if test.n_q else (0.0, 1.0)
    allowed = min(math.exp(claim_epsilon) * test.q_hi + claim_delta, 1.0)
    values = [v for v in (p_hat, q_hat, p_lo2, p_hi2, q_lo2, q_hi2, test.p_lo, test.q_hi, allowed)
              if v > 0]
    log = bool(values) and max(values) / min(values) > 20
    lo_edge = min(values) / 3 if log else 0.0
    hi_edge = min(max(values + [1e-12]) * (3 if log else 1.1), 1.0 if not log else 2.0)

    fig = _figure(7.5, 2.4)
    ax = fig.subplots()
    rows = [(1, "p = P[A(S) ∈ E]", p_hat, p_lo2, p_hi2, test.p_lo, "p_lo", BLUE),
            (0, "q = P[A(S′) ∈ E]", q_hat, q_lo2, q_hi2, test.q_hi, "q_hi", ORANGE)]
    for y, _, est, lo, hi, bound, name, colour in rows:
        ax.plot([max(lo, lo_edge), hi], [y, y], color=colour, lw=6, alpha=0.35, solid_capstyle="butt")
        if est > 0 or not log:
            ax.plot([est], [y], "o", color=colour, ms=7)
        ax.plot([max(bound, lo_edge)], [y], "|", color=colour, ms=22, mew=3)
        # p_lo's label goes on its side of the claim's line, away from it: when the bound is
        # tight the two are close, and a centred label would sit on the line
        away = 0 if name != "p_lo" else (-1 if bound <= allowed else 1)
        ax.annotate(f"{name} = {bound:.3g}", (max(bound, lo_edge), y), xytext=(4 * away, 14),
                    textcoords="offset points", fontsize=9, color=colour,
                    ha={-1: "right", 0: "center", 1: "left"}[away])
    ax.axvline(allowed, color=RED, ls="--", lw=1.5)
    # Label on the side of the line with more room, so it stays inside the axes; below the q
    # row, where no other label is, so it cannot overlap p_lo's when the bound is tight.
    right = (math.log(allowed / lo_edge) / math.log(hi_edge / lo_edge) if log and allowed > 0
             else allowed / hi_edge) < 0.6
    ax.annotate("claim allows p ≤ e^ε·q_hi + δ", (allowed, -0.4), xytext=(5 if right else -5, 0),
                textcoords="offset points", fontsize=9, color=RED, va="center",
                ha="left" if right else "right")
    if log:
        ax.set_xscale("log")
        _log_axis(ax.xaxis)
    ax.set_xlim(lo_edge if log else 0.0, hi_edge)
    ax.set_ylim(-0.6, 1.6)
    ax.set_yticks([1, 0], [r[1] for r in rows])
    ax.set_xlabel(f"probability (bars: Clopper–Pearson at level {alpha:.2g} per side; dot: observed)")
    return _svg(fig)


def budget_points(test: Any | None, alpha: float, claim_epsilon: float, claim_delta: float,
                  n_now: int) -> dict:
    """epsilon_lower the same observed proportions would give at n runs per side, and the ceiling.

    Returns
    -------
    dict with arrays ``n``, ``epsilon`` (None without a witness test), ``ceiling``, and
    ``n_violation``: the smallest n on the grid whose expected bound exceeds the claim (or None).
    """
    n_now = max(int(n_now), 1)
    lo, hi = min(100, n_now / 100), max(1e9, n_now * 100)
    grid = np.logspace(math.log10(max(lo, 10)), math.log10(hi), 80).astype(np.int64)
    # The audit's own n is on the grid, so the curve passes through the reported bound.
    n = np.unique(np.append(grid, n_now))
    with np.errstate(divide="ignore", invalid="ignore"):
        ceiling = stats.epsilon_lower(stats.cp_lower(n, n, alpha), stats.cp_upper(0, n, alpha),
                                      claim_delta)
    out = {"n": n, "ceiling": ceiling, "epsilon": None, "n_violation": None}
    if test is not None and test.n_p and test.n_q:
        p_hat, q_hat = test.k_p / test.n_p, test.k_q / test.n_q
        # Keep the audit's ratio of q-side to p-side runs.
        n_q = np.maximum(np.round(n * (test.n_q / test.n_p)), 1)
        p_lo = stats.cp_lower(p_hat * n, n, alpha)
        q_hi = stats.cp_upper(q_hat * n_q, n_q, alpha)
        eps = stats.epsilon_lower(p_lo, q_hi, claim_delta)
        out["epsilon"] = eps
        over = np.flatnonzero(eps > claim_epsilon)
        out["n_violation"] = int(n[over[0]]) if over.size else None
    return out


@_with_rc
def budget_curve(points: dict, claim_epsilon: float, n_now: int, eps_now: float,
                 violation: bool) -> str:
    """epsilon_lower against confirmation runs per side, with the claim and the ceiling."""
    fig = _figure(9.5, 3.2)
    ax = fig.subplots()
    n = points["n"]
    ax.plot(n, points["ceiling"], color=GREY, ls="--", lw=1.5,
            label="ceiling (E in every run on one\nside and in none on the other)")
    if points["epsilon"] is not None:
        ax.plot(n, points["epsilon"], color=BLUE, lw=2, label="ε lower bound if the observed\nproportions were exact")
    ax.axhline(claim_epsilon, color="black", lw=1.5, label=f"claimed ε = {claim_epsilon:g}")
    if n_now > 0:
        ax.plot([n_now], [eps_now], "o", color=RED if violation else GREEN, ms=8,
                label=f"this audit: n = {n_now:,}")
    ax.set_xscale("log")
    _log_axis(ax.xaxis)
    top = max([claim_epsilon * 1.5, eps_now * 1.2, 0.5]
              + ([float(np.nanmax(points["epsilon"]))] if points["epsilon"] is not None else []))
    # The whole ceiling line stays in view (a clipped line reads as a ceiling that stops).
    finite = np.asarray(points["ceiling"], dtype=float)
    finite = finite[np.isfinite(finite)]
    ceil_max = float(finite.max()) if finite.size else 0.0
    ax.set_ylim(0, max(top, ceil_max) * 1.08)
    ax.set_xlabel("confirmation runs per side")
    ax.set_ylabel("ε lower bound")
    fig.legend(loc="outside right center", fontsize=8, frameon=False)
    return _svg(fig)


@_with_rc
def sequential_path(path: list, claim_epsilon: float, budget: int, stopped: str,
                    violation: bool, final: dict | None = None) -> str:
    """The anytime-valid bounds after each round of a sequential confirmation.

    `path` is the result's ``sequential["path"]``: per round the runs per side, the lower bound
    (running max over the confirmed tests) and the upper bound on the tested events' privacy
    loss (the futility side; infinite while the q side has seen nothing). `final` (the result's
    ``sequential["final"]``) is the final fixed-n analysis at the budget, drawn as one point.
    """
    fig = _figure(9.5, 3.2)
    ax = fig.subplots()
    n = np.array([p["runs"] for p in path], dtype=float)
    lo = np.array([float(p["epsilon_lower"]) for p in path])
    hi = np.array([float(p.get("epsilon_upper", math.inf)) for p in path])
    ax.step(n, lo, where="post", color=BLUE, lw=2, label="anytime-valid ε lower bound")
    finite = np.isfinite(hi)
    if finite.any():
        ax.step(n[finite], hi[finite], where="post", color=ORANGE, lw=1.5,
                label="upper bound on the tested events' loss")
    ax.axhline(claim_epsilon, color="black", lw=1.5, label=f"claimed ε = {claim_epsilon:g}")
    f_eps = float(final["epsilon_lower"]) if final else None
    if final:
        ax.plot([float(final["runs"])], [f_eps], "D", color=RED if violation else GREEN, ms=8,
                label=f"final fixed-n analysis at the budget: ε ≥ {f_eps:.4g}")
    elif len(n):
        ax.plot([n[-1]], [lo[-1]], "o", color=RED if violation else GREEN, ms=8,
                label=f"stopped ({stopped}) at n = {int(n[-1]):,}")
    ax.axvline(budget, color=GREY, ls="--", lw=1, label=f"budget {budget:,}")
    ax.set_xscale("log")
    _log_axis(ax.xaxis)
    shown = np.concatenate([lo, hi[finite], [claim_epsilon]] + ([[f_eps]] if final else []))
    ax.set_ylim(0, max(float(np.max(shown)) * 1.15, 0.5))
    ax.set_xlim(max(1.0, n.min() / 1.5) if len(n) else 1.0, budget * 1.5)
    ax.set_xlabel("confirmation runs per side")
    ax.set_ylabel("ε")
    fig.legend(loc="outside right center", fontsize=8, frameon=False)
    return _svg(fig)


@_with_rc
def suite_overview(labels: list[str], eps_lower: list[float], claims: list[float],
                   ceilings: list[float], colours: list[str]) -> str:
    """epsilon_lower of every suite entry against its claim.

    `labels` are the entries' numbers ("#1"), not their names: names are user text and stay in
    the escaped HTML table, never inside the SVG.
    """
    k = len(labels)
    fig = _figure(7.5, 0.9 + 0.35 * max(k, 1))
    ax = fig.subplots()
    y = np.arange(k)[::-1]
    finite = [v for v in list(eps_lower) + list(claims) if math.isfinite(v)]
    top = max(finite + [1e-3]) * 1.15
    ax.barh(y, [min(e, top) for e in eps_lower], height=0.55, color=colours)
    for yi, c, ceil in zip(y, claims, ceilings):
        ax.plot([c, c], [yi - 0.38, yi + 0.38], color="black", lw=2.5)
        if math.isfinite(ceil) and ceil <= top:
            ax.plot([ceil, ceil], [yi - 0.38, yi + 0.38], color=GREY, lw=1.2, ls="--")
    ax.set_yticks(y, labels)
    ax.set_xlim(0, top)
    ax.set_xlabel("ε lower bound (bar), claimed ε (black), ceiling (grey dashed, when on this scale)")
    return _svg(fig)


__all__ = ["epsilon_scale", "intervals", "budget_points", "budget_curve", "suite_overview"]
