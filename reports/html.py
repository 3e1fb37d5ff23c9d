"""Self-contained HTML reports: one file, inline CSS, inline SVG plots, no scripts, no network.

Templates live in ``reports/templates/`` (package data) and are rendered by jinja2 with
``autoescape=True``: every string that comes from a result (algorithm names, event texts, search
history, versions) is escaped. Only the SVG produced by `reports.plots` is marked safe.
"""

from __future__ import annotations

import math
from functools import lru_cache

from markupsafe import Markup

from audit.errors import PrivauditError
from audit.result import AuditResult
from audit.suite import SuiteResult

from . import context as ctx
from . import plots as P


@lru_cache(maxsize=1)
def _env():
    import jinja2
    env = jinja2.Environment(loader=jinja2.PackageLoader("reports", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["fmt"] = ctx.fmt
    env.filters["short"] = ctx.short
    return env


def _plot(fn, *args) -> Markup:
    # Plots are our own SVG (user text is never drawn into them), hence safe to embed as is.
    return Markup(fn(*args))


def audit_view(result: AuditResult, plots: bool = True, anchor: str = "") -> dict:
    """Everything the audit template shows, as plain values (and safe SVG markup)."""

    claim = result.claim
    test = ctx.witness_test(result)
    alpha = P._alpha(result)
    w = result.witness
    view: dict = {
        "r": result, "anchor": anchor, "claim": claim, "claim_text": claim.describe(),
        "certified_text": None if result.certified is None else result.certified.describe(),
        "test": test, "alpha": alpha, "witness": w, "plots": {},
        "confirmed": result.confirmed, "search_tables": ctx.search_tables(result.search),
        "search_kv": ctx.kv(result.search, skip=tuple(ctx.table_keys(result.search))), "params": ctx.kv(result.params),
        "runner": ctx.kv(result.runner), "timings": ctx.kv(result.timings),
        "versions": ctx.kv(result.versions, skip=("git_commit", "code_sha256")),
        "git_commit": result.versions.get("git_commit") if isinstance(result.versions, dict) else None,
        "code_sha256": result.versions.get("code_sha256") if isinstance(result.versions, dict) else None,
    }
    if w is not None:
        p_name, q_name = ctx.direction_text(w.direction)
        view["p_name"], view["q_name"] = p_name, q_name
        view["datasets"] = ctx.dataset_pair(w.a, w.b, w.differing)
        view["inputs"] = None if view["datasets"] is not None else ctx.input_pair(w.a, w.b)
        view["queries"] = [ctx._vec(q) for q in (w.queries or [])[: ctx.MAX_ROWS]]
        # the indices the event text uses ("prediction at query 1") are into the pair's query
        # list; the witness stores only the queries its event looks at, so label them by those
        idx = list(getattr(test, "query_indices", None) or []) if test is not None else []
        view["query_labels"] = [idx[i] if i < len(idx) and len(idx) == len(w.queries or []) else i
                                for i in range(len(view["queries"]))]
        view["n_queries"] = len(w.queries or [])
        view["event_json"] = ctx.short(w.event, 2000)
    n_now = test.n_p if test is not None else int(result.confirm_runs or 0)
    eps_now = test.epsilon_lower if test is not None else float(result.epsilon_lower)
    if not math.isfinite(eps_now):
        eps_now = float(result.max_certifiable_epsilon)
    budget = P.budget_points(test, alpha, claim.epsilon, claim.delta, n_now)
    view["n_now"] = n_now
    view["n_violation"] = budget["n_violation"]
    if plots:
        view["plots"]["scale"] = _plot(P.epsilon_scale, float(result.epsilon_lower), claim.epsilon,
                                       float(result.max_certifiable_epsilon), bool(result.violation))
        if test is not None:
            view["plots"]["intervals"] = _plot(P.intervals, test, claim.epsilon, claim.delta, alpha)
        view["plots"]["budget"] = _plot(P.budget_curve, budget, claim.epsilon, n_now, eps_now,
                                        bool(result.violation))
        seq = result.sequential
        if seq and seq.get("path"):
            view["plots"]["sequential"] = _plot(P.sequential_path, seq["path"], claim.epsilon,
                                                int(seq.get("budget_per_side", result.confirm_runs)),
                                                str(seq.get("stopped", "")), bool(result.violation),
                                                seq.get("final"))
    return view


def suite_view(suite: SuiteResult) -> dict:

    entries = []
    for i, e in enumerate(suite.entries):
        entries.append({"e": e, "i": i + 1, "anchor": f"entry-{i + 1}",
                        "view": None if e.result is None else audit_view(e.result, anchor=f"entry-{i + 1}")})
    with_result = [x for x in entries if x["e"].result is not None]
    overview = None
    if with_result:
        overview = _plot(
            P.suite_overview, [f"#{x['i']}" for x in with_result],
            [float(x["e"].result.epsilon_lower) for x in with_result],
            [x["e"].result.claim.epsilon for x in with_result],
            [float(x["e"].result.max_certifiable_epsilon) for x in with_result],
            [P.GREEN if x["e"].ok else P.RED for x in with_result])
    return {"s": suite, "entries": entries, "overview": overview,
            "n_failed": sum(not e.ok for e in suite.entries),
            "versions": ctx.kv(suite.versions, skip=("git_commit",)),
            "git_commit": suite.versions.get("git_commit"),
            "code_sha256": suite.versions.get("code_sha256"),
            "runner": ctx.kv(suite.runner), "timings": ctx.kv(suite.timings)}


def render_html(obj: AuditResult | SuiteResult) -> str:
    """One self-contained HTML page for an audit result or a suite.

    Parameters
    ----------
    obj : AuditResult or SuiteResult

    Returns
    -------
    str
        The whole document: CSS inline, plots as inline SVG, no scripts, no external resources.
    """
    if isinstance(obj, AuditResult):
        return _env().get_template("audit.html.j2").render(v=audit_view(obj))
    if isinstance(obj, SuiteResult):
        return _env().get_template("suite.html.j2").render(v=suite_view(obj))
    raise PrivauditError(f"expected an AuditResult or a SuiteResult, got {type(obj).__name__}")


__all__ = ["render_html"]
