"""Learned events: a classifier's score separating A(S) from A(S'), thresholded (DESIGN.md §4).

When the leak is spread over many coordinates or many rare codes, no single coordinate's
half-line and no prefix of individually-counted codes captures it. As in DP-Sniper (Bichsel et
al., IEEE S&P 2021, Section 4) and Delta-Siege, a logistic regression is fitted to tell the two
inputs' outputs apart, and events are half-lines ``{score >= t}`` / ``{score < t}`` of its score.
What privaudit keeps that they do not:

* the model is fitted on a separate *learning* sample (spawn keys ``(LEARN,) + pair key + (side,)``,
  ``learn_runs(explore_runs)`` runs per input, drawn like the pilot); the threshold is chosen on
  the exploration counts by the bound a confirmation is *expected* to certify (with
  Clopper–Pearson-safe rates, as for every threshold event); and the chosen event is confirmed on
  fresh runs with the Bonferroni split over everything confirmed. Learned events are more
  candidates, not more tests: they cost no confidence.
* no floor c on the event's probability: the expected-bound criterion already trades a rarer,
  sharper event against its confirmation noise.

Features (`audit.mixed.Featurizer`): raw coordinates, one-hot codes, counts per symbol and
"no value" indicators; a nonlinear variant adds every pairwise product. The fit is L2-penalised
logistic regression by `scipy.optimize.minimize` (L-BFGS) on standardised features.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from scipy import special

from .binning import bin_index
from .crossfit import LearningCodes
from .events import Candidate, threshold_candidates
from .mixed import Featurizer, continuous_layout, discrete_layout
from .reducers import (CodeCounter, CodeCounts, HistogramCounter, HistogramCounts,
                       distinct_rows)
from .runners.base import Job, call_blackbox, chunk_rng
from .runners.local import LocalRunner
from .types import Claim

LEARN = 4                    # spawn-key phase of learning samples (0-3: explore, confirm, pilot, search)
LEARN_RUNS_MAX = 20_000
# discrete vectors: as many learning runs as exploration runs — the learning sample also ranks
# exploration's events (audit.crossfit), and a smaller one ranks them with more noise than the
# curse it removes (measured: SVT1 at c = 2 with 2e7 exploration and 1e6 learning runs confirmed
# 0.0387 against 0.0614 without cross-fitting); counted in chunks, fitted on distinct codes
LEARN_CODES_MAX = 100_000_000
LEARN_CHUNK = 1 << 16
NEWTON_MAX_FEATURES = 64    # exact Newton steps up to this many features, L-BFGS beyond
MAX_PAIRWISE_BASE_CODES = 64  # discrete codes are fitted and scored per distinct row: cheap
MAX_PAIRWISE_BASE = 40       # pairwise products only for at most this many base features
ENABLED = True               # switched off only to measure what learned events add


def learn_runs(explore_runs: int) -> int:
    """Runs per input of the learning sample: half the exploration runs, at most 20 000."""
    return int(max(min(explore_runs // 2, LEARN_RUNS_MAX), min(explore_runs, 2_000)))


def _score(featurizer: Featurizer, weights: tuple, outputs: np.ndarray) -> np.ndarray:
    """``w . φ(output)`` per run; integer outputs are featurised once per distinct row (a chunk
    of a sparse vector's runs holds a few thousand distinct answer vectors)."""
    if outputs.dtype.kind in "biu" and outputs.ndim == 2 and outputs.shape[0] > 1:
        rows, inv = distinct_rows(outputs)
        return featurizer.scores(rows, [weights])[0][inv]
    return featurizer.scores(outputs, [weights])[0]


def score_all(scorers: Sequence["Scorer"], outputs: np.ndarray) -> list[np.ndarray]:
    """``[s(outputs) for s in scorers]``, bit for bit, with each featurizer applied once.

    Many scorers share a featurizer (one per column of a mixed output, linear and pairwise fits
    of the same layout); featurising is the costly step, so the base features are computed once
    per distinct featurizer (`Featurizer.scores`) and released before the next."""
    integer = outputs.dtype.kind in "biu" and outputs.ndim == 2 and outputs.shape[0] > 1
    if integer:
        rows, inv = distinct_rows(outputs)
    groups: dict = {}
    for i, s in enumerate(scorers):
        groups.setdefault(s.featurizer, []).append(i)
    out: list = [None] * len(scorers)
    for featurizer, members in groups.items():
        scores = featurizer.scores(rows if integer else outputs, [scorers[i].weights for i in members])
        for i, sc in zip(members, scores):
            out[i] = sc[inv] if integer else sc
    return out


@dataclass(frozen=True)
class ScoreEvent:
    """The event ``w . φ(output) >= threshold`` (side "ge") or ``<`` (side "lt")."""

    featurizer: Featurizer
    weights: tuple[float, ...]
    threshold: float
    side: str = "ge"
    label: str = "learned score"

    def statistic(self, outputs: np.ndarray) -> np.ndarray:
        return _score(self.featurizer, self.weights, outputs)

    def contains(self, outputs: np.ndarray) -> np.ndarray:
        s = self.statistic(outputs)
        return s >= self.threshold if self.side == "ge" else s < self.threshold

    def to_dict(self) -> dict:
        return {"type": "score", "featurizer": self.featurizer.to_dict(),
                "weights": list(self.weights), "threshold": self.threshold, "side": self.side,
                "label": self.label}

    @staticmethod
    def from_dict(d: dict) -> "ScoreEvent":
        return ScoreEvent(Featurizer.from_dict(d["featurizer"]), tuple(float(w) for w in d["weights"]),
                          float(d["threshold"]), d.get("side", "ge"), d.get("label", "learned score"))

    def describe(self) -> str:
        op = ">=" if self.side == "ge" else "<"
        return f"{self.label} {op} {self.threshold:.6g}"


@dataclass(frozen=True)
class Scorer:
    """A named linear score on a featurizer's features."""

    label: str
    featurizer: Featurizer
    weights: tuple[float, ...]

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        return _score(self.featurizer, self.weights, outputs)


@dataclass(frozen=True)
class ScoreHistogramCounter:
    """Fixed-grid histograms of raw linear statistics (as `HistogramCounter`) followed by scores.

    Rows ``0 .. len(projections)-1`` are the raw statistics, exactly as `HistogramCounter` counts
    them; the scorers' rows follow."""

    projections: tuple[tuple[float, ...], ...]
    edges: tuple[tuple[float, ...], ...]
    scorers: tuple[Scorer, ...]
    score_edges: tuple[tuple[float, ...], ...]
    features: tuple[str, ...] = ()

    def _width(self) -> int:
        return max(len(e) for e in self.edges + self.score_edges) + 1

    def __call__(self, outputs: np.ndarray) -> HistogramCounts:
        rows = len(self.edges) + len(self.score_edges)
        counts = np.zeros((rows, self._width()), dtype=np.int64)
        if self.projections:  # the raw statistics, counted exactly as without learned scores
            raw = HistogramCounter(self.projections, self.edges, self.features)(outputs).counts
            counts[: raw.shape[0], : raw.shape[1]] = raw
        scores = score_all(self.scorers[: len(self.score_edges)], outputs)
        for k, (e, sc) in enumerate(zip(self.score_edges, scores)):
            b = bin_index(np.asarray(e), sc)
            counts[len(self.edges) + k, : len(e) + 1] = np.bincount(b, minlength=len(e) + 1)
        return HistogramCounts(int(outputs.shape[0]), counts)

    def empty(self) -> HistogramCounts:
        rows = len(self.edges) + len(self.score_edges)
        return HistogramCounts(0, np.zeros((rows, self._width()), dtype=np.int64))


# ---------------------------------------------------------------------------------------------
# fitting
# ---------------------------------------------------------------------------------------------
def fit_logistic(fa: np.ndarray, fb: np.ndarray, l2: float = 1e-4, wa: np.ndarray | None = None,
                 wb: np.ndarray | None = None) -> np.ndarray | None:
    """Weights w (on the raw features) of an L2-penalised logistic regression of "came from a"
    on features `fa` (label 1) and `fb` (label 0); None when the features carry nothing.

    `wa`, `wb`: optional counts per row (distinct discrete outputs are fitted once each, weighted
    by how often they occurred — the same fit as on the runs, thousands of times faster)."""
    x = np.vstack([fa, fb])
    y = np.r_[np.ones(len(fa)), np.zeros(len(fb))]
    wt = np.r_[np.ones(len(fa)) if wa is None else wa, np.ones(len(fb)) if wb is None else wb]
    wt = wt / wt.sum()
    mu = wt @ x
    sd = np.sqrt(np.maximum(wt @ (x - mu) ** 2, 0.0))
    keep = sd > 1e-12
    if not keep.any():
        return None
    z = (x[:, keep] - mu[keep]) / sd[keep]
    m = z.shape[1]
    s = 2.0 * y - 1.0

    def loss(theta):
        w, b = theta[:m], theta[m]
        t = s * (z @ w + b)
        f = wt @ np.logaddexp(0.0, -t) + 0.5 * l2 * (w @ w)
        g = -s * special.expit(-t) * wt
        return f, np.r_[z.T @ g + l2 * w, g.sum()]

    if m <= NEWTON_MAX_FEATURES:
        theta = _newton(loss, z, s, wt, l2)
    else:
        # imported here: scipy.optimize costs ~0.3 s of every command's start-up, and only a
        # model with more than NEWTON_MAX_FEATURES features needs it
        from scipy import optimize
        theta = optimize.minimize(loss, np.zeros(m + 1), jac=True, method="L-BFGS-B",
                                  options={"maxiter": 100, "ftol": 1e-8}).x
    w = np.zeros(x.shape[1])
    w[keep] = theta[:m] / sd[keep]
    if not np.all(np.isfinite(w)) or not np.any(w):
        return None
    return w / np.abs(w).max()  # scale-free: only the order of scores matters


def _newton(loss, z: np.ndarray, s: np.ndarray, wt: np.ndarray, l2: float,
            iters: int = 30) -> np.ndarray:
    """Damped Newton steps for the (strictly convex) penalised logistic loss: a few exact steps
    where L-BFGS needs dozens (few features)."""
    m = z.shape[1]
    za = np.column_stack([z, np.ones(len(z))])
    reg = np.r_[np.full(m, l2), 1e-10]
    theta = np.zeros(m + 1)
    f, g = loss(theta)
    for _ in range(iters):
        p = special.expit(za @ theta)
        h = (za * (wt * p * (1.0 - p))[:, None]).T @ za + np.diag(reg)
        try:
            step = np.linalg.solve(h, g)
        except np.linalg.LinAlgError:
            break
        t = 1.0
        while t > 1e-6:
            f_new, g_new = loss(theta - t * step)
            if f_new <= f:
                break
            t *= 0.5
        theta = theta - t * step
        done = f - f_new < 1e-12
        f, g = f_new, g_new
        if done or np.max(np.abs(g)) < 1e-9:
            break
    return theta


def score_grid(values: np.ndarray) -> tuple[float, ...]:
    """Thresholds for a score: quantiles of the learning sample's scores, fine in the bulk, plus
    far-tail points (where pure-DP losses show) — the same shape of grid as for raw outputs."""
    values = values[np.isfinite(values)]
    uniq = np.unique(values)
    if uniq.size <= 400:  # few distinct scores (discrete outputs): cut between each two
        mids = 0.5 * (uniq[1:] + uniq[:-1])
        return tuple(float(v) for v in mids) if mids.size else (float(uniq[0]) if uniq.size else 0.0,)
    lo, hi = float(values.min()), float(values.max())
    # about 20 learning runs per grid cell at least: finer cells only add noise to the choice
    inner = np.quantile(values, np.linspace(0.0, 1.0, int(np.clip(values.size // 20, 50, 400)) + 1))
    span = float(np.quantile(values, 0.99) - np.quantile(values, 0.01)) or (abs(hi) + 1.0) * 1e-3
    tails = span / 50.0 * (2.0 ** np.arange(0, 14))
    return tuple(float(v) for v in np.unique(np.concatenate([lo - tails, inner, hi + tails])))


def _column_scorers(lay: Featurizer, flat: np.ndarray) -> list[Scorer]:
    """Mixed outputs: per column, the value with "no value" put above all values and below all
    values, and each "no value" indicator alone — half-lines on (is-missing, value)."""
    out = []
    pos = 0
    m = lay.n_features()
    feats = lay(flat)
    big = 1.0 + 2.0 * float(np.abs(feats).max()) if feats.size else 1.0
    for j in range(lay.width):
        n_ind = len(lay.atoms[j]) + int(lay.missing[j])
        ind = list(range(pos, pos + n_ind))
        val = pos + n_ind if lay.numeric[j] else None
        pos += n_ind + int(lay.numeric[j])
        tag = f"output[{j}]" if lay.width > 1 else "output"
        for k in ind:
            w = np.zeros(m)
            w[k] = 1.0
            out.append(Scorer(f"{tag} has no value" if k == ind[-1] and lay.missing[j]
                              else f"{tag} is atom {lay.atoms[j][k - ind[0]]:g}", lay, tuple(w)))
        if val is not None and ind:
            for sign, where in ((1.0, "above"), (-1.0, "below")):
                w = np.zeros(m)
                w[val] = 1.0
                w[ind] = sign * big
                out.append(Scorer(f"{tag} (no value {where} every value)", lay, tuple(w)))
    return out


def learned_scorers(fa: np.ndarray, fb: np.ndarray, lay: Featurizer,
                    weights: tuple | None = None) -> list[Scorer]:
    """Linear logistic score on the featurizer's features, and the pairwise (nonlinear) variant
    when the base features are few enough. `weights`: counts per row of `fa` and `fb` (discrete
    outputs are fitted on their distinct codes)."""
    xa, xb = fa, fb
    wa, wb = weights if weights is not None else (None, None)
    out = []
    w = fit_logistic(lay(xa), lay(xb), wa=wa, wb=wb)
    if w is not None:
        out.append(Scorer("learned score (logistic)", lay, tuple(float(v) for v in w)))
    base = lay.n_features()
    if 2 <= base <= (MAX_PAIRWISE_BASE_CODES if weights is not None else MAX_PAIRWISE_BASE):
        lay2 = lay.with_pairwise()
        w2 = fit_logistic(lay2(xa), lay2(xb), wa=wa, wb=wb)
        if w2 is not None:
            out.append(Scorer("learned score (logistic, pairwise)", lay2, tuple(float(v) for v in w2)))
    return out


def learning_codes(blackbox: Any, pair: Any, key: tuple[int, ...], seed: int, runs: int,
                   runner: Any = None, journal: Any = None) -> list[dict]:
    """Code counts of both inputs' discrete vector outputs over `runs` learning runs each.

    Two jobs on `runner` (in-process when None), counted like exploration codes, in chunks of
    `LEARN_CHUNK` (spawn keys ``(LEARN,) + key + (side,)``, chunk i): as large as exploration, so
    they run where exploration runs (Ray workers) and a `journal` keeps their finished chunks
    for a resume."""
    jobs = [Job(blackbox, inp, runs, CodeCounter(None, "rows"), (LEARN,) + tuple(key) + (s,),
                pair.queries, chunk_runs=LEARN_CHUNK) for s, inp in enumerate((pair.a, pair.b))]
    reds = (runner if runner is not None else LocalRunner()).run(jobs, seed, journal=journal)
    return [dict(r.table) for r in reds]


def learning_sample(blackbox: Any, pair: Any, key: tuple[int, ...], seed: int,
                    runs: int) -> list[np.ndarray]:
    """Outputs of both inputs for fitting, from spawn keys ``(LEARN,) + key + (side,)``."""
    return [call_blackbox(blackbox, inp, pair.queries, runs, chunk_rng(seed, (LEARN,) + tuple(key) + (s,), 0))
            for s, inp in enumerate((pair.a, pair.b))]


def attach(blackbox: Any, pair: Any, model: Any, key: tuple[int, ...], seed: int,
           explore_runs: int, runner: Any = None, journal: Any = None) -> Any:
    """Fit learned scores for one pair and record them on its output model (in place).

    Applies to vector outputs (continuous or discrete, width > 1) and to mixed outputs; scalar
    outputs already have every half-line. Returns the model."""
    if not ENABLED:
        return model
    if model.kind == "mixed":
        lay = model.featurizer
    elif model.kind == "continuous" and model.width > 1:
        lay = continuous_layout(model.width)
    elif model.kind == "discrete" and model.encoding == "rows" and model.width > 1:
        lay = None
    else:
        return model
    if lay is None:  # discrete vectors: fit on distinct codes, so a large sample costs little
        ca, cb = learning_codes(blackbox, pair, key, seed, min(explore_runs, LEARN_CODES_MAX),
                                runner, journal)
        rows = sorted(set(ca) | set(cb))
        x = np.asarray(rows, dtype=np.float64).reshape(len(rows), -1)
        wa = np.array([ca.get(r, 0) for r in rows], dtype=np.float64)
        wb = np.array([cb.get(r, 0) for r in rows], dtype=np.float64)
        lay = discrete_layout([x])
        model.scorers = tuple(learned_scorers(x, x, lay, weights=(wa, wb)))
        model.learning = LearningCodes(ca, cb, min(explore_runs, LEARN_CODES_MAX))
        return model
    fa, fb = learning_sample(blackbox, pair, key, seed, learn_runs(explore_runs))
    scorers = learned_scorers(fa, fb, lay)
    if model.kind == "mixed":
        flat = np.vstack([np.asarray(o, dtype=np.float64).reshape(o.shape[0], -1) for o in (fa, fb)])
        scorers = _column_scorers(lay, flat) + scorers
    model.scorers = tuple(scorers)
    if model.kind != "discrete":
        sa, sb = score_all(scorers, fa), score_all(scorers, fb)
        model.score_edges = tuple(score_grid(np.concatenate([x, y])) for x, y in zip(sa, sb))
    return model


# ---------------------------------------------------------------------------------------------
# candidates
# ---------------------------------------------------------------------------------------------
def _as_score_event(c: Candidate, scorer: Scorer) -> Candidate:
    ev = c.event
    c.event = ScoreEvent(scorer.featurizer, scorer.weights, ev.threshold, ev.side, scorer.label)
    c.extra = {"statistic": scorer.label}
    return c


def histogram_score_candidates(ha: HistogramCounts, hb: HistogramCounts, offset: int,
                               scorers, score_edges, *, pair_index: int, n_confirm: int,
                               alpha: float, claim: Claim) -> list[Candidate]:
    """Threshold candidates of each learned score from histogram rows ``offset ..``."""
    if not scorers:
        return []
    sa = HistogramCounts(ha.runs, ha.counts[offset:])
    sb = HistogramCounts(hb.runs, hb.counts[offset:])
    dummy = [(0.0,)] * len(scorers)
    cands = threshold_candidates(sa, sb, dummy, score_edges, [s.label for s in scorers],
                                 pair_index=pair_index, n_confirm=n_confirm, alpha=alpha, claim=claim)
    per = len(cands) // len(scorers)
    return [_as_score_event(c, scorers[k // per]) for k, c in enumerate(cands)]


def code_score_candidates(ca: CodeCounts, cb: CodeCounts, scorers, *, pair_index: int,
                          n_confirm: int, alpha: float, claim: Claim) -> list[Candidate]:
    """Discrete vector outputs: each learned score evaluated on every code seen in exploration;
    the events are half-lines of the score, so codes never seen in exploration are still placed
    (by their features) when the event is confirmed."""
    if not scorers:
        return []
    codes = sorted(set(ca.table) | set(cb.table))
    rows = np.asarray(codes, dtype=np.float64).reshape(len(codes), -1)
    ka = np.array([ca.table.get(c, 0) for c in codes], dtype=np.int64)
    kb = np.array([cb.table.get(c, 0) for c in codes], dtype=np.int64)
    out = []
    for s in scorers:
        v = s(rows)
        uniq, inv = np.unique(v, return_inverse=True)
        if uniq.size < 2:
            continue
        edges = tuple(float(e) for e in 0.5 * (uniq[1:] + uniq[:-1]))
        # bin b holds scores with #{edges <= v} == b: the b-th distinct score
        hist_a = np.bincount(inv, weights=ka, minlength=uniq.size).astype(np.int64)[None, :]
        hist_b = np.bincount(inv, weights=kb, minlength=uniq.size).astype(np.int64)[None, :]
        cands = threshold_candidates(HistogramCounts(ca.runs, hist_a), HistogramCounts(cb.runs, hist_b),
                                     [(0.0,)], [edges], [s.label], pair_index=pair_index,
                                     n_confirm=n_confirm, alpha=alpha, claim=claim)
        out += [_as_score_event(c, s) for c in cands]
    return out


__all__ = ["ScoreEvent", "Scorer", "ScoreHistogramCounter", "fit_logistic", "attach",
           "learned_scorers", "histogram_score_candidates", "code_score_candidates", "learn_runs",
           "LEARN", "ENABLED"]
