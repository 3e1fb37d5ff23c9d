"""Anytime-valid confirmation: confidence sequences for the two probabilities of an event.

A fixed-n Clopper–Pearson bound is valid only at the one sample size fixed in advance: looking at
the counts after every chunk and stopping when they look good inflates the false-alarm rate. A
*confidence sequence* (CS) is a sequence of intervals ``C_t`` with ``P[exists t: p not in C_t] <=
alpha``, so an audit may peek after every chunk and stop whenever it likes.

The confidence sequence
-----------------------
Robbins' beta-binomial mixture (H. Robbins, "Statistical methods related to the law of the
iterated logarithm", Ann. Math. Statist. 41 (1970); the modern treatment is S. R. Howard,
A. Ramdas, J. McAuliffe and J. Sekhon, "Time-uniform, nonparametric, nonasymptotic confidence
sequences", Ann. Statist. 49 (2021), whose conjugate-mixture section includes this
beta-binomial mixture). For a candidate value ``p0`` and ``k`` events in ``t`` Bernoulli runs, the
likelihood ratio of ``theta`` against ``p0``, mixed over a prior ``theta ~ Beta(c p0, c (1 - p0))``,

    M_t(p0) = B(c p0 + k, c (1 - p0) + t - k) / B(c p0, c (1 - p0)) / (p0^k (1 - p0)^(t - k)),

is a non-negative martingale with ``M_0 = 1`` when ``p = p0``. By Ville's inequality
``P[exists t: M_t(p0) >= 1/alpha] <= alpha``, so ``C_t = {p0 : M_t(p0) < 1/alpha}`` is a
two-sided CS at level ``alpha``. ``M_t`` is computed with `scipy.special.betaln`; ``C_t`` always
contains the empirical rate (there ``M_t <= 1``) and its two ends are found by bisection on the
logit scale (relative precision for rare events, which carry the large epsilons). A finite
mixture of such martingales with weights summing to 1 is again one; `DEFAULT_HORIZONS` mixes
three concentrations ``c``, tuned to be tightest at 1/256, 1/16 and all of the budget, so the
bounds are good both early (where planted bugs are caught) and at the end (the price in tightness
when an audit runs to the end is a few per cent of the Clopper–Pearson width; see README).

From two CS to an anytime-valid epsilon
---------------------------------------
As in the fixed-n path (`audit.stats`), each confirmed test (pair, event, direction) has two
probabilities, ``p = P[A(S) in E]`` and ``q = P[A(S') in E]``; each gets a two-sided CS at level
``(1 - confidence) / (2 tests)`` (Bonferroni over both probabilities of every test). On the event
that every CS covers at every time (probability >= confidence), at *every* time t
``epsilon >= ln((p_lo(t) - delta) / q_hi(t))`` and ``delta >= p_lo(t) - e^epsilon q_hi(t)``: the
bounds hold at whatever data-dependent time the audit stops. Running intersections (the largest
lower and the smallest upper end so far) are CS too, so the bounds never move backwards.

Spending the error budget: anytime bound and final analysis
------------------------------------------------------------
A confidence sequence pays for its validity at every time with width: run to the end, it is
wider than the Clopper–Pearson bound at the same n (randomized response at 10^6 runs: epsilon
0.9922 against 0.9955), and much wider for rare events (an event seen 392 against 218 times in
10^6 runs: 0.18 against 0.35). So each bound's error level ``a = (1 - confidence) / (2 tests)``
is split as in a group-sequential design with a final analysis (alpha spending: Lan & DeMets,
Biometrika 70 (1983); Jennison & Turnbull, *Group Sequential Methods with Applications to Clinical
Trials*, 2000, ch. 7): a share ``ANYTIME_SHARE`` (1/4) goes to the confidence sequences, used at
every peek to stop early, and the rest (3/4) to one fixed-n Clopper–Pearson bound on each
probability,
computed only when the run reaches its planned budget ``n`` (``confirm_runs``, fixed before any
run) without having stopped. Validity is a union bound over the two rules: a false violation
needs either some confidence sequence to miss its probability at some time (probability
``<= ANYTIME_SHARE * a`` per sequence, Ville) or a Clopper–Pearson bound at the planned n to miss
(``<= (1 - ANYTIME_SHARE) * a`` per bound; it is a statement about the first n runs, which exist
whether or not the audit looked at them earlier), so the audit's false-violation rate stays
``<= 2 tests a = 1 - confidence``. On the intersection of both good events both bounds hold, so
at the budget the reported bounds are the intersections (the larger lower and the smaller upper
end) of the two. As in O'Brien–Fleming-type spending, most of the level is kept for the final
analysis: early looks are there for large leaks, which need little of it (the sequences' width
grows only like ``sqrt(ln(1/level))``: randomized response at epsilon = 2 against a claim of 1,
its bound after 3,907 runs is 1.803 at a quarter of the level against 1.821 at all of it),
while leaks near the edge of what the budget can show are decided at the end, where the level
matters most (randomized response at epsilon = 1, 10^6 runs, mean of 200 draws: 0.9952 against
the fixed audit's 0.9955 and the sequences' 0.9922; a share of 1/2 would give 0.9949).

The final analysis is valid only at the planned budget, not at a data-dependent time: the
result says which rule decided (``decided_by``: ``"anytime"`` when a confidence sequence stopped
the run — violation or futility — at the runs it reports; ``"final"`` when the run reached the
budget and the final analysis decided) and ``anytime_valid`` is true only in the first case. A
budget raised after looking at a result is not "planned": that is a new audit.

Stopping rule
-------------
Rounds (one chunk of every job) are taken in chunk order whatever order a cluster returns them
in, so a seed fixes the stopping point on every runner and after a resume. The bounds are checked
after every round at which the runs per side have grown by `CHECK_GROWTH` (10 %) since the last
check — after every round early on, where small chunks matter — and at the last one. A check
first screens the counts with Clopper–Pearson bounds at the CS level, which are never wider than
the CS: when even they show neither a violation nor futility, the bisection for the CS is
skipped (`SequentialState.needs_cs`; the running intersections are then over fewer times, which
keeps them valid). At a check where the CS is computed, stop at the first of:

* ``violation``: some test has ``p_lo > e^epsilon q_hi + delta`` — certified at the confidence;
* ``futility``: for every test, even with the remaining runs at the favourable ends of a CS at
  the planning level `FUTILITY_LEVEL` (5 %; ``p`` at its upper end, ``q`` at its lower end), the
  expected final counts (the counts so far plus the remaining runs times those rates) would not
  give a bound above the claim at the budget, by either rule (CS or final analysis): the claim
  cannot be shown violated within the remaining budget, a PASS that says so. This is a
  non-binding futility boundary in the group-sequential sense (Jennison & Turnbull, ch. 10): it
  spends none of the error level — stopping for futility never reports a violation, so it can
  only lower the false-alarm rate — and costs power only: a violation is missed only if the true
  rates leave that 5 % CS at some time (probability <= 5 %) or sit within it on the favourable
  side and the remaining runs' noise would have carried the final bound over the claim (at the
  boundary about one chance in two);
* ``budget``: the confirmation budget is spent; the final analysis decides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from scipy import special
from scipy.special import betaln

from . import stats
from .errors import PrivauditError
from .events import Candidate
from .reducers import EventCounter
from .result import BoundTest
from .runners.base import Job, Runner, resolve_chunk_runs
from .types import Claim

RULE = "beta-binomial mixture confidence sequence (Robbins 1970; Howard et al. 2021)"
FINAL_RULE = ("Clopper–Pearson at the planned budget (final fixed-n analysis of a group-sequential "
              "design; valid at that budget only)")
# Share of every bound's error level spent on the confidence sequences (early stopping); the
# rest goes to the final fixed-n analysis at the planned budget (see the module notes).
ANYTIME_SHARE = 0.25
# Fractions of the budget at which the mixture components are tightest, and their weights.
DEFAULT_HORIZONS: tuple[tuple[float, float], ...] = ((1 / 256, 0.25), (1 / 16, 0.25), (1.0, 0.5))
# The first rounds are 1/TARGET_ROUNDS of the budget (at least MIN_CHUNK_RUNS runs); later
# ones grow with the runs so far (`sequential_schedule`).
TARGET_ROUNDS = 256
MIN_CHUNK_RUNS = 1024
# The bounds are evaluated when the runs per side have grown by this factor since the last check
# (every round while rounds are larger than that, and always at the last round): the CS is valid
# at every time, so checking less often only saves computation (and can only lower false alarms).
CHECK_GROWTH = 1.1
PATH_POINTS = 200            # at most this many points of the bound's path are recorded
# The CS is computed at a check only when a cheap screen says it could stop the run there
# (`SequentialState.needs_cs`; always at the budget), and for the bound's path whenever the runs
# per side have grown by this factor since the last point (such a point's CS is found together
# with the next check's, in one root finding).
PATH_GROWTH = 2.0
# Two-sided level of the confidence sequences on the futility side (p's upper and q's lower end):
# a planning level, not part of the error budget (stopping for futility never makes a violation).
FUTILITY_LEVEL = 0.05
_LOGIT_MAX = 700.0           # bisection bracket on the logit scale (p down to ~1e-304)
_ITERATIONS = 200           # at most; stops when every bracket is narrower than _TOL
_TOL = 1e-10                # bracket width on the logit scale (relative precision of p)
_NEAR = 60.0                # first bracket: within e^60 of the empirical odds
_GRID = 16                 # grid points per bracket and step (few rows: `_shrink_on_grid`)
_GRID_ROWS = 128            # at most this many rows are shrunk on grids, more by regula falsi
_SCALAR_ROWS = 16           # at most this many rows are solved one by one in plain floats


# ---------------------------------------------------------------------------------------------
# the mixture martingale and its confidence sequence
# ---------------------------------------------------------------------------------------------
def concentration(horizon: float, alpha: float) -> float:
    """Prior concentration ``c`` making the mixture tightest near `horizon` runs.

    The Beta prior has variance ``p0 (1 - p0) / (c + 1)``; matching it to the squared width
    ``2 ln(1/alpha) p0 (1 - p0) / horizon`` of the deviations to be detected there gives
    ``c + 1 = horizon / (2 ln(1/alpha))`` (Howard et al.'s tuning of a conjugate mixture to an
    intrinsic time, for the Bernoulli case).
    """
    return max(1.0, float(horizon) / (2.0 * math.log(1.0 / alpha)) - 1.0)


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def log_mixture(k, t, p0, c) -> np.ndarray:
    """``ln M_t(p0)`` of one beta-binomial mixture with prior ``Beta(c p0, c (1 - p0))``."""
    k, t, p0, c = (np.asarray(v, dtype=np.float64) for v in (k, t, p0, c))
    a, b = c * p0, c * (1.0 - p0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (betaln(a + k, b + t - k) - betaln(a, b) - k * np.log(p0)
                - (t - k) * np.log1p(-p0))


def _log_m_logit(k, t, x, components) -> np.ndarray:
    """ln of the weighted mixture of martingales at logit(p0) = x.

    p0 and 1 - p0 are both taken from the logit (no cancellation at either end); the components
    are broadcast along a first axis, so each call is two `betaln` evaluations."""
    comp = np.asarray(components, dtype=np.float64)
    return _log_m_rows(k, t, x, np.log(comp[:, :1]), comp[:, 1:])


def components_for(budget: int, alpha: float,
                   horizons: Sequence[tuple[float, float]] = DEFAULT_HORIZONS) -> tuple:
    """The (weight, concentration) pairs of the mixture for a budget of `budget` runs."""
    total = sum(w for _, w in horizons)
    if not horizons or abs(total - 1.0) > 1e-9 or any(w <= 0 for _, w in horizons):
        raise PrivauditError("mixture weights must be positive and sum to 1")
    return tuple((w, concentration(max(1.0, f * budget), alpha)) for f, w in horizons)


def _log_m_rows(k, t, x, lw, c) -> np.ndarray:
    """`_log_m_logit` with a mixture of its own per row: `lw`, `c` carry the components on a
    first axis and broadcast against `k`, `t`, `x` (rows, or rows by grid points)."""
    p0, q0 = _expit(x), _expit(-x)
    a, b = c * p0, c * q0
    terms = lw + betaln(a + k, b + (t - k)) - betaln(a, b)
    mixed = np.logaddexp.reduce(terms, axis=0) if len(terms) > 1 else terms[0]
    return mixed + k * np.logaddexp(0.0, -x) + (t - k) * np.logaddexp(0.0, x)


def _component_rows(components, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """ln-weights and concentrations of a mixture as ``(components, rows)`` arrays."""
    comp = np.asarray(components, dtype=np.float64)
    return (np.broadcast_to(np.log(comp[:, :1]), (len(comp), rows)),
            np.broadcast_to(comp[:, 1:], (len(comp), rows)))


def _lower_logit(k, t, components, threshold: float) -> np.ndarray:
    """Logit of the lower end of ``{p0 : ln M_t(p0) < threshold}`` (``-inf``-like at k = 0).

    The upper end follows by symmetry: the prior ``Beta(c p0, c (1 - p0))`` and the likelihood
    are symmetric under ``(p0, k) -> (1 - p0, t - k)``, so ``logit(upper(k, t)) =
    -logit(lower(t - k, t))``. See `_lower_logit_rows` for the root finding.
    """
    shape = np.broadcast_shapes(np.shape(k), np.shape(t))
    k, t = (np.broadcast_to(np.asarray(v, dtype=np.float64), shape).ravel() for v in (k, t))
    lw, c = _component_rows(components, k.size)
    thr = np.full(k.size, float(threshold))
    return _lower_logit_rows(k, t, lw, c, thr).reshape(shape)


def _lower_logit_rows(k, t, lw, c, thr, scalar: bool | None = None) -> np.ndarray:
    """`_lower_logit` for rows with a mixture (`lw`, `c`: ``(components, rows)``) and a threshold
    of their own each.

    ln M_t is below the threshold at the empirical rate (M <= 1 there: the empirical rate
    maximises the likelihood) and grows monotonically away from it (checked numerically in the
    tests), so the crossing is bracketed between the empirical logit (inner end) and a rejected
    point (outer end), and the outer end of a shrinking bracket is returned: the CS is never made
    narrower than it is. Few rows (what an audit's check needs: four ends per confirmed test)
    shrink the bracket `_GRID` times per step, with ln M evaluated on a grid across every
    bracket at once (about five vectorised steps to `_TOL`, where one-point root finding takes
    about twenty, each paying numpy's per-call cost on tiny arrays); many rows (planning grids,
    the tests' simulated paths) take Illinois regula falsi steps, which need fewer evaluations
    per row. The fewest (up to `_SCALAR_ROWS`: an audit's check with one to four tests) take the
    same Illinois steps row by row in plain floats (`_lower_logit_scalar`), paying numpy's
    per-call cost only for one `betaln` call per evaluation: about half the grids' time for
    four rows. `scalar` forces the choice (a check computing several times' ends at once
    solves them as it would one by one).
    """
    m = k.size
    if (m <= _SCALAR_ROWS) if scalar is None else scalar:
        with np.errstate(all="ignore"):    # once here, not at every `betaln` call
            return np.array([_lower_logit_scalar(float(k[i]), float(t[i]), lw[:, i].tolist(),
                                                 c[:, i].tolist(), float(thr[i]))
                             for i in range(m)], dtype=np.float64)
    with np.errstate(all="ignore"):   # entries with k = 0 or t = 0 are replaced at the end
        safe_t = np.maximum(t, 1.0)
        phat = np.clip(k / safe_t, 1e-300, 1.0 - 1e-16)
        inner = np.log(phat) - np.log1p(-phat)
        # first bracket: a few normal-approximation widths out, else e^60, else the edge
        se = 1.0 / np.sqrt(np.maximum(safe_t * phat * (1.0 - phat), 1e-300))
        outer = inner - np.minimum(_NEAR, 2.0 * np.sqrt(2.0 * thr + 8.0) * se)
        f_out = _log_m_rows(k, safe_t, outer, lw, c) - thr
        for edge in (inner - _NEAR, np.full_like(inner, -_LOGIT_MAX)):
            low = ~(f_out >= 0)
            if not low.any():
                break
            outer = np.where(low, edge, outer)
            f_out = np.where(low, _log_m_rows(k, safe_t, outer, lw, c) - thr, f_out)
        if m <= _GRID_ROWS:
            outer = _shrink_on_grid(k, safe_t, lw, c, thr, inner, outer)
        else:
            f_in = _log_m_rows(k, safe_t, inner, lw, c) - thr      # < 0
            outer = _shrink_illinois(k, safe_t, lw, c, thr, inner, outer, f_in, f_out)
    return np.where((k <= 0) | (t <= 0), -np.inf, outer)


def _shrink_on_grid(k, t, lw, c, thr, inner, outer) -> np.ndarray:
    """Shrink every bracket [outer, inner] to its cell of a `_GRID`-point grid holding the first
    rejected point from the inside, until narrower than `_TOL`; the outer ends are returned.
    A point where ln M is NaN counts as not rejected (the bracket moves outwards, never in)."""
    inner, outer = inner.copy(), outer.copy()
    frac = np.arange(1, _GRID) / _GRID
    for _ in range(_ITERATIONS):
        act = np.flatnonzero(np.abs(inner - outer) > _TOL)
        if act.size == 0:
            break
        xi, xo = inner[act], outer[act]
        grid = xi[:, None] + (xo - xi)[:, None] * frac            # from the inside outwards
        f = _log_m_rows(k[act, None], t[act, None], grid, lw[:, act, None], c[:, act, None]) \
            - thr[act, None]
        rej = f >= 0
        hit = rej.any(axis=1)
        j = np.where(hit, rej.argmax(axis=1), _GRID - 1)           # first rejected grid point
        rows = np.arange(act.size)
        outer[act] = np.where(hit, grid[rows, np.minimum(j, _GRID - 2)], xo)
        inner[act] = np.where(j > 0, grid[rows, np.maximum(j - 1, 0)], xi)
    return outer


def _shrink_illinois(k, t, lw, c, thr, inner, outer, f_in, f_out) -> np.ndarray:
    """Illinois regula falsi keeping [outer, inner] bracketing the crossing; bisection steps
    take over where it stalls. The outer ends (rejected side) are returned."""
    inner, outer = inner.copy(), outer.copy()
    side = np.zeros_like(inner)
    for it in range(_ITERATIONS):
        act = np.flatnonzero(np.abs(inner - outer) > _TOL)   # only unfinished brackets
        if act.size == 0:
            break
        xi, xo, fi, fo, sd = inner[act], outer[act], f_in[act], f_out[act], side[act]
        half = 0.5 * (xi + xo)
        if it % 4 == 3:
            mid = half
        else:
            denom = fo - fi
            mid = np.where(np.isfinite(denom) & (denom > 0), xo - fo * (xo - xi) / denom, half)
            mid = np.where((mid - xo) * (mid - xi) < 0, mid, half)
        fm = _log_m_rows(k[act], t[act], mid, lw[:, act], c[:, act]) - thr[act]
        rej = fm >= 0
        # Illinois: halve the retained end's value when the same end is kept twice in a row
        fi = np.where(rej & (sd == 1), 0.5 * fi, fi)
        fo = np.where(~rej & (sd == -1), 0.5 * fo, fo)
        inner[act], f_in[act] = np.where(rej, xi, mid), np.where(rej, fi, fm)
        outer[act], f_out[act] = np.where(rej, mid, xo), np.where(rej, fm, fo)
        side[act] = np.where(rej, 1.0, -1.0)
    return outer


def _softplus(z: float) -> float:
    """``ln(1 + e^z)`` without overflow."""
    return z + math.log1p(math.exp(-z)) if z > 0.0 else math.log1p(math.exp(z))


def _log_m_scalar(k: float, t: float, x: float, lw: list, c: list) -> float:
    """`_log_m_rows` for one row in plain floats but for one `betaln` call over the mixture's
    components (the same special function, so the same precision); NaN where a term is
    undefined (counted as not rejected, as in the vectorised form). The caller silences
    numpy's floating-point warnings (`_lower_logit_rows`)."""
    if x >= 0.0:
        e = math.exp(-x)
        p0, q0 = 1.0 / (1.0 + e), e / (1.0 + e)
    else:
        e = math.exp(x)
        p0, q0 = e / (1.0 + e), 1.0 / (1.0 + e)
    a = [cj * p0 for cj in c]
    b = [cj * q0 for cj in c]
    j = len(c)
    bl = betaln([ai + k for ai in a] + a, [bi + (t - k) for bi in b] + b).tolist()
    terms = [w + bl[i] - bl[j + i] for i, w in enumerate(lw)]
    if any(v != v for v in terms):
        return math.nan
    top = max(terms)
    mixed = top + math.log(sum(math.exp(v - top) for v in terms)) \
        if j > 1 and math.isfinite(top) else top
    return mixed + k * _softplus(-x) + (t - k) * _softplus(x)


def _lower_logit_scalar(k: float, t: float, lw: list, c: list, thr: float) -> float:
    """`_lower_logit_rows` for one row: the same first bracket, then the Illinois steps of
    `_shrink_illinois` (a bisection every fourth) until narrower than `_TOL`; the outer
    (rejected) end is returned.
    """
    if k <= 0.0 or t <= 0.0:
        return -math.inf
    phat = min(max(k / t, 1e-300), 1.0 - 1e-16)
    inner = math.log(phat) - math.log1p(-phat)
    se = 1.0 / math.sqrt(max(t * phat * (1.0 - phat), 1e-300))
    outer = inner - min(_NEAR, 2.0 * math.sqrt(2.0 * thr + 8.0) * se)
    f_out = _log_m_scalar(k, t, outer, lw, c) - thr
    for edge in (inner - _NEAR, -_LOGIT_MAX):
        if f_out >= 0.0:
            break
        outer = edge
        f_out = _log_m_scalar(k, t, outer, lw, c) - thr
    f_in = _log_m_scalar(k, t, inner, lw, c) - thr
    side = 0
    for it in range(_ITERATIONS):
        if abs(inner - outer) <= _TOL:
            break
        half = 0.5 * (inner + outer)
        mid = half
        if it % 4 != 3:
            denom = f_out - f_in
            if math.isfinite(denom) and denom > 0.0:
                mid = outer - f_out * (outer - inner) / denom
                if not (mid - outer) * (mid - inner) < 0.0:
                    mid = half
        f_mid = _log_m_scalar(k, t, mid, lw, c) - thr
        if f_mid >= 0.0:
            if side == 1:
                f_in *= 0.5
            outer, f_out, side = mid, f_mid, 1
        else:
            if side == -1:
                f_out *= 0.5
            inner, f_in, side = mid, f_mid, -1
    return outer


def _cp_rows(k_lo, n_lo, a_lo, k_hi, n_hi, a_hi) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper–Pearson lower ends at counts `k_lo` of `n_lo` with levels `a_lo`, and
    upper ends at `k_hi` of `n_hi` with levels `a_hi` (arrays, a level per row): the beta
    quantiles of `audit.stats.cp_lower` / `cp_upper`, bit for bit, in one scipy call each."""
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = special.betaincinv(k_lo, n_lo - k_lo + 1.0, a_lo)
        hi = special.betainccinv(k_hi + 1.0, n_hi - k_hi, a_hi)
    return np.where(k_lo <= 0, 0.0, lo), np.where(k_hi >= n_hi, 1.0, hi)


def _check(alpha: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise PrivauditError(f"error level alpha must be in (0, 1), got {alpha}")
    return math.log(1.0 / alpha)


def cs_ends(k_lower, k_upper, t, alpha: float, components) -> tuple[np.ndarray, np.ndarray]:
    """Lower ends at counts `k_lower` and upper ends at counts `k_upper` (both out of `t`), in
    one vectorised pass."""
    thr = _check(alpha)
    kl, ku, t = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (k_lower, k_upper, t)))
    x = _lower_logit(np.concatenate([kl.ravel(), (t - ku).ravel()]),
                     np.concatenate([t.ravel(), t.ravel()]), components, thr)
    with np.errstate(over="ignore"):  # expit of -inf/inf is exactly 0/1
        lo = _expit(x[:kl.size]).reshape(kl.shape)
        hi = _expit(-x[kl.size:]).reshape(kl.shape)
    return lo, hi


def cs_lower(k, t, alpha: float, components) -> np.ndarray:
    """Lower end of the confidence sequence ``{p0 : M_t(p0) < 1/alpha}`` at counts (k, t).

    Vectorised over arrays (``0 <= k <= t``; k may be fractional, for planning); 0 at k = 0.
    """
    k, t = np.broadcast_arrays(np.asarray(k, dtype=np.float64), np.asarray(t, dtype=np.float64))
    with np.errstate(over="ignore"):
        return _expit(_lower_logit(k, t, components, _check(alpha)))


def cs_upper(k, t, alpha: float, components) -> np.ndarray:
    """Upper end of the confidence sequence (1 at k = t); see `cs_lower`."""
    k, t = np.broadcast_arrays(np.asarray(k, dtype=np.float64), np.asarray(t, dtype=np.float64))
    with np.errstate(over="ignore"):
        return _expit(-_lower_logit(t - k, t, components, _check(alpha)))


def cs_bounds(k, t, alpha: float, components) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided confidence sequence at level `alpha`: ``(cs_lower, cs_upper)``."""
    return cs_ends(k, k, t, alpha, components)


# ---------------------------------------------------------------------------------------------
# the sequential test of a set of confirmed candidates
# ---------------------------------------------------------------------------------------------
@dataclass
class SequentialState:
    """Counts and running-intersection bounds of every confirmed test, updated after each round.

    Tests are the rows; ``kp, np_, kq, nq`` their counts; ``p_lo, q_hi`` (violation side) the
    running intersections of the CS at level `alpha` each, ``p_hi, q_lo`` (futility side) those
    of the CS at the planning level `futility_alpha`; `alpha_final` is the level of each
    Clopper–Pearson bound of the final analysis at `budget`.
    """

    claim: Claim
    budget: int
    alpha: float
    components: tuple
    kp: np.ndarray
    np_: np.ndarray
    kq: np.ndarray
    nq: np.ndarray
    alpha_final: float = 0.0
    futility_alpha: float = 0.0          # 0: the futility side uses `alpha` and `components`
    futility_components: tuple = ()
    final: bool = False          # True once the final analysis has been applied
    p_lo: np.ndarray = field(init=False)
    q_hi: np.ndarray = field(init=False)
    p_hi: np.ndarray = field(init=False)
    q_lo: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        m = len(self.kp)
        self.p_lo, self.q_lo = np.zeros(m), np.zeros(m)
        self.p_hi, self.q_hi = np.ones(m), np.ones(m)
        if self.futility_alpha <= 0.0:
            self.futility_alpha, self.futility_components = self.alpha, self.components

    @classmethod
    def start(cls, claim: Claim, tests: int, budget: int, confidence: float,
              horizons: Sequence[tuple[float, float]] = DEFAULT_HORIZONS,
              anytime_share: float = ANYTIME_SHARE,
              futility_level: float = FUTILITY_LEVEL) -> "SequentialState":
        alpha, alpha_final = split_alpha(confidence, tests, anytime_share)
        f_alpha = max(alpha, float(futility_level))
        z = np.zeros(tests)
        return cls(claim, int(budget), alpha, components_for(budget, alpha, horizons),
                   z.copy(), z.copy(), z.copy(), z.copy(), alpha_final, f_alpha,
                   components_for(budget, f_alpha, horizons))

    def update(self, kp, np_, kq, nq, earlier: Sequence[tuple] = ()) -> list[dict]:
        """Take the cumulative counts after a round and intersect the bounds with the new CS.

        `earlier` holds the counts ``(kp, np_, kq, nq)`` of earlier checks, in order, whose CS
        was not needed then (path points where the screen showed it could not stop the run):
        their CS are found in the same root finding and intersected first, in order, so the
        bounds are those of computing each at its time. Returns the path point (`path_point`)
        after each earlier check."""
        snaps = [tuple(np.asarray(v, dtype=np.float64) for v in c) for c in earlier]
        snaps.append(tuple(np.asarray(v, dtype=np.float64) for v in (kp, np_, kq, nq)))
        m = len(snaps[-1][0])
        # the four ends of every test in one root finding: p's lower and q's upper end at
        # `alpha` (violation side), q's lower and p's upper end at the planning level (futility
        # side); an upper end is the lower end of the complementary count (see `_lower_logit`)
        k = np.concatenate([np.concatenate([a, d - c, c, b - a]) for a, b, c, d in snaps])
        t = np.concatenate([np.concatenate([b, d, d, b]) for a, b, c, d in snaps])
        rows = len(snaps) * 2 * m
        (lw_v, c_v), (lw_f, c_f) = (_component_rows(self.components, 2 * m),
                                    _component_rows(self.futility_components, 2 * m))
        if len(lw_v) == len(lw_f):
            thr = np.tile(np.repeat([_check(self.alpha), _check(self.futility_alpha)], 2 * m),
                          len(snaps))
            lw = np.tile(np.concatenate([lw_v, lw_f], axis=1), (1, len(snaps)))
            c = np.tile(np.concatenate([c_v, c_f], axis=1), (1, len(snaps)))
            # solved as one check's rows would be, however many earlier checks join them
            x = _lower_logit_rows(k, t, lw, c, thr, scalar=4 * m <= _SCALAR_ROWS)
        else:   # mixtures of different sizes: one root finding each
            v = np.tile(np.repeat([True, False], 2 * m), len(snaps))
            x = np.empty(2 * rows)
            x[v] = _lower_logit(k[v], t[v], self.components, _check(self.alpha))
            x[~v] = _lower_logit(k[~v], t[~v], self.futility_components,
                                 _check(self.futility_alpha))
        points = []
        for i, snap in enumerate(snaps):
            xi = x[4 * m * i:4 * m * (i + 1)]
            with np.errstate(over="ignore"):  # expit of -inf/inf is exactly 0/1
                plo, qhi = _expit(xi[:m]), _expit(-xi[m:2 * m])
                qlo, phi = _expit(xi[2 * m:3 * m]), _expit(-xi[3 * m:])
            self.observe(*snap)
            self.p_lo, self.p_hi = np.maximum(self.p_lo, plo), np.minimum(self.p_hi, phi)
            self.q_lo, self.q_hi = np.maximum(self.q_lo, qlo), np.minimum(self.q_hi, qhi)
            if i < len(snaps) - 1:
                points.append(self.path_point())
        return points

    def path_point(self) -> dict:
        """The bounds now, as a point of the bound's path: runs per side, the largest epsilon
        lower bound, the largest epsilon upper bound and the largest delta lower bound."""
        eps_lo, eps_hi = self.epsilon_lower(), self.epsilon_upper()
        best = int(np.argmax(eps_lo))
        return {"runs": int(self.np_[best]), "epsilon_lower": float(eps_lo[best]),
                "epsilon_upper": float(np.max(eps_hi)),
                "delta_lower": float(np.max(self.delta_lower()))}

    def at_budget(self) -> bool:
        return bool(np.all(self.np_ >= self.budget) and np.all(self.nq >= self.budget))

    def final_analysis(self) -> None:
        """Intersect the bounds with the Clopper–Pearson bounds of the final analysis.

        Only at the planned budget (both sides of every test have run `budget` times): that is
        where the final analysis' share of the error level was spent."""
        if not self.at_budget():
            raise PrivauditError("the final analysis is valid only at the planned budget")
        if self.alpha_final <= 0.0:
            return
        self.p_lo = np.maximum(self.p_lo, stats.cp_lower(self.kp, self.np_, self.alpha_final))
        self.q_hi = np.minimum(self.q_hi, stats.cp_upper(self.kq, self.nq, self.alpha_final))
        self.final = True

    def epsilon_lower(self) -> np.ndarray:
        return stats.epsilon_lower(self.p_lo, self.q_hi, self.claim.delta)

    def delta_lower(self) -> np.ndarray:
        return stats.delta_lower(self.p_lo, self.q_hi, self.claim.epsilon)

    def epsilon_upper(self) -> np.ndarray:
        """Upper confidence bound on each test event's privacy loss ``ln((p - delta)/q)``."""
        num = self.p_hi - self.claim.delta
        with np.errstate(divide="ignore", invalid="ignore"):
            e = np.log(num / self.q_lo)
        return np.where(num <= 0, 0.0, np.where(self.q_lo > 0, np.maximum(e, 0.0), np.inf))

    def violated(self) -> np.ndarray:
        return self.p_lo > math.exp(self.claim.epsilon) * self.q_hi + self.claim.delta

    def final_bounds(self, kp, kq) -> tuple[np.ndarray, np.ndarray]:
        """``(p_lo, q_hi)`` the audit would report at the budget from final counts `kp`, `kq`
        (fractional for planning): the CS and, when it has a share, the final analysis."""
        n = float(self.budget)
        if self.alpha_final >= self.alpha:
            # the CS at level alpha is never narrower than Clopper–Pearson at alpha (see
            # `needs_cs`), itself wider than at alpha_final >= alpha: the intersection is the
            # final analysis' bound, and the bisection can be skipped
            return stats.cp_lower(kp, n, self.alpha_final), stats.cp_upper(kq, n, self.alpha_final)
        plo, qhi = cs_ends(kp, kq, n, self.alpha, self.components)
        if self.alpha_final > 0.0:
            plo = np.maximum(plo, stats.cp_lower(kp, n, self.alpha_final))
            qhi = np.minimum(qhi, stats.cp_upper(kq, n, self.alpha_final))
        return plo, qhi

    def futile(self) -> bool:
        """True when no test can show a violation within the budget (see the module notes).

        The remaining runs are taken at the most favourable rates the CS allow (p at its upper
        end, q at its lower end); the expected final counts are checked against the claim with
        the bounds the audit would report at the budget (`final_bounds`).
        """
        return self._futile_at(self.p_hi, self.q_lo)

    def observe(self, kp, np_, kq, nq) -> None:
        """Take the cumulative counts after a round without computing the CS (see `needs_cs`)."""
        self.kp, self.np_ = np.asarray(kp, dtype=np.float64), np.asarray(np_, dtype=np.float64)
        self.kq, self.nq = np.asarray(kq, dtype=np.float64), np.asarray(nq, dtype=np.float64)

    def needs_cs(self) -> bool:
        """Could the CS at the observed counts stop the run? A cheap screen before the bisection.

        The CS is never narrower than the one-sided Clopper–Pearson bound at the same level and
        counts (a p0 the mixture rejects from above has ``P[K >= k] <= alpha``, the CP rejection
        rule), so when the CP ends, intersected with the running bounds, show neither a violation
        nor futility, the CS would not either (futility is monotone in ``p_hi`` and ``q_lo``)
        and computing it can be skipped: this only makes the intersections over fewer times."""
        if self.at_budget():
            return True
        m, a, fa = len(self.kp), self.alpha, self.futility_alpha
        limit = math.exp(self.claim.epsilon)
        # p's lower and q's upper end at `alpha`, q's lower and p's upper end at the planning
        # level: two scipy calls for the four (this runs at every check)
        lo, hi = _cp_rows(np.concatenate([self.kp, self.kq]), np.concatenate([self.np_, self.nq]),
                          np.repeat([a, fa], m),
                          np.concatenate([self.kq, self.kp]), np.concatenate([self.nq, self.np_]),
                          np.repeat([a, fa], m))
        p_lo = np.maximum(self.p_lo, lo[:m])
        q_hi = np.minimum(self.q_hi, hi[:m])
        if np.any(p_lo > limit * q_hi + self.claim.delta):
            return True
        p_hi = np.minimum(self.p_hi, hi[m:])
        q_lo = np.maximum(self.q_lo, lo[m:])
        return self._futile_at(p_hi, q_lo)

    def _futile_at(self, p_hi: np.ndarray, q_lo: np.ndarray) -> bool:
        n = float(self.budget)
        if self.at_budget():
            return False   # the budget itself decides
        kp = self.kp + np.maximum(n - self.np_, 0.0) * p_hi
        kq = self.kq + np.maximum(n - self.nq, 0.0) * q_lo
        limit = math.exp(self.claim.epsilon)
        if self.alpha_final > 0.0:
            # the final analysis' bounds alone are cheap (no bisection): when they already show
            # a violation is still possible, the intersection with the CS does too
            plo, qhi = _cp_rows(kp, n, self.alpha_final, kq, n, self.alpha_final)
            if self.alpha_final >= self.alpha:   # they are `final_bounds` itself
                return bool(np.all(plo <= limit * qhi + self.claim.delta))
            if np.any(plo > limit * qhi + self.claim.delta):
                return False
        plo, qhi = self.final_bounds(kp, kq)
        return bool(np.all(plo <= limit * qhi + self.claim.delta))

    def decide(self) -> str | None:
        """'violation', 'futility', 'budget' or None (go on)."""
        if np.any(self.violated()):
            return "violation"
        if self.at_budget():
            return "budget"
        if self.futile():
            return "futility"
        return None


def split_alpha(confidence: float, tests: int,
                anytime_share: float = ANYTIME_SHARE) -> tuple[float, float]:
    """Levels of each confidence sequence and of each final Clopper–Pearson bound.

    Bonferroni over both probabilities of every test gives each ``a = (1 - confidence) /
    (2 tests)``; the sequences get ``anytime_share * a``, the final analysis the rest."""
    if not 0.0 < float(anytime_share) <= 1.0:
        raise PrivauditError(f"anytime_share must be in (0, 1], got {anytime_share}")
    a = stats.per_bound_alpha(confidence, tests)
    return a * float(anytime_share), a * (1.0 - float(anytime_share))


def extreme_bounds(budget: int, confidence: float, tests: int,
                   horizons: Sequence[tuple[float, float]] = DEFAULT_HORIZONS,
                   anytime_share: float = ANYTIME_SHARE) -> tuple[float, float]:
    """The most extreme ``(p_lo, q_hi)`` a sequential audit can report with `budget` runs per
    side (n of n against 0 of n, at the budget): what the ceiling and CI checks are made of."""
    alpha, alpha_final = split_alpha(confidence, tests, anytime_share)
    z = np.zeros(1)
    st = SequentialState(Claim(0.0), int(budget), alpha, components_for(budget, alpha, horizons),
                         z, z, z, z, alpha_final)
    lo, hi = st.final_bounds(np.array([float(budget)]), np.array([0.0]))
    return float(lo[0]), float(hi[0])


def max_certifiable_epsilon(budget: int, confidence: float, tests: int, delta: float = 0.0,
                            horizons: Sequence[tuple[float, float]] = DEFAULT_HORIZONS,
                            anytime_share: float = ANYTIME_SHARE) -> float:
    """The largest epsilon bound `budget` runs per side can give (n of n vs 0 of n, at the
    budget, where the final analysis joins the confidence sequence)."""
    lo, hi = extreme_bounds(budget, confidence, tests, horizons, anytime_share)
    return float(stats.epsilon_lower(lo, hi, delta))


def sequential_schedule(job: Job, runner_chunk_runs: int | None, budget: int) -> tuple[int, ...]:
    """Chunk sizes of a sequential confirmation: rounds of `sequential_chunk_runs` runs while
    those add 10 % or more, then rounds of ``CHECK_GROWTH - 1`` (10 %) of the runs so far (at
    most the runner's or black box's chunk size, which bounds memory): about one round per check
    (~45 rounds for 10^6 runs instead of 256), so cheap black boxes do not pay per-chunk costs
    for rounds nobody looks at. Depends only on the budget and the configured chunk sizes, never
    on the kind of runner, so every runner cuts the same rounds."""
    first = sequential_chunk_runs(job, runner_chunk_runs, budget)
    cap = max(first, resolve_chunk_runs(job, runner_chunk_runs))
    sizes, done = [], 0
    while done < budget:
        size = min(budget - done, max(first, min(cap, math.ceil((CHECK_GROWTH - 1.0) * done))))
        sizes.append(size)
        done += size
    return tuple(sizes)


def sequential_chunk_runs(job: Job, runner_chunk_runs: int | None, budget: int) -> int:
    """Size of the first rounds of a sequential confirmation: 1/`TARGET_ROUNDS` of the budget.

    Depends only on the budget, the runner's configured ``chunk_runs`` and the black box's hint
    (never on the kind of runner), so every runner cuts the same rounds.
    """
    base = resolve_chunk_runs(job, runner_chunk_runs)
    return max(1, min(base, max(MIN_CHUNK_RUNS, math.ceil(budget / TARGET_ROUNDS))))


def _thin(path: list[dict], limit: int = PATH_POINTS) -> list[dict]:
    if len(path) <= limit:
        return path
    idx = np.unique(np.round(np.linspace(0, len(path) - 1, limit)).astype(int))
    return [path[i] for i in idx]


def confirm_sequential(blackbox: Any, pairs: Sequence[Any], chosen: Sequence[Candidate], *,
                       claim: Claim, confirm_runs: int, confidence: float, seed: int,
                       runner: Runner, phase: int, journal: Any = None,
                       progress: Any = None) -> tuple[list[BoundTest], dict]:
    """Count the chosen events round by round and stop as soon as the evidence is enough.

    Parameters as for `audit.auditor.confirm`; `phase` is the first element of the job keys.

    Returns
    -------
    (tests, info)
        One `BoundTest` per candidate (counts so far, anytime-valid bounds), and the ``sequential``
        record of the result: rule, stopping reason, runs spent per side, the bound's path.
    """
    by_pair: dict[int, list[int]] = {}
    for k, c in enumerate(chosen):
        by_pair.setdefault(c.pair_index, []).append(k)
    order = sorted(by_pair)
    jobs: list[Job] = []
    for i in order:
        events = tuple(chosen[k].event for k in by_pair[i])
        p = pairs[i]
        for s, inp in enumerate((p.a, p.b)):
            job = Job(blackbox, inp, confirm_runs, EventCounter(events), (phase, i, s), p.queries)
            sizes = sequential_schedule(job, getattr(runner, "chunk_runs", None), confirm_runs)
            jobs.append(Job(blackbox, inp, confirm_runs, job.reducer, job.key, p.queries,
                            sizes[0], sizes))
    state = SequentialState.start(claim, len(chosen), confirm_runs, confidence)
    # which job/event column holds each candidate's p side and q side
    where = [None] * len(chosen)
    for j, i in enumerate(order):
        for e, k in enumerate(by_pair[i]):
            a, b = 2 * j, 2 * j + 1
            where[k] = (a, b, e) if chosen[k].direction == "a>b" else (b, a, e)
    path: list[dict] = []
    deferred: list[tuple] = []     # counts at path points whose CS is computed with the next one
    reason, rounds, checks, evaluations, next_check, next_point = "budget", 0, 0, 0, 0.0, 0.0
    n_rounds = len(jobs[0].chunk_sizes()) if jobs else 0
    rounds_iter = runner.iter_rounds(jobs, seed, journal=journal, progress=progress)
    try:
        for r, reds in rounds_iter:
            rounds += 1
            runs_now = reds[0].runs
            if runs_now < next_check and r < n_rounds - 1:
                continue   # between checkpoints: the counts keep streaming
            next_check = runs_now * CHECK_GROWTH
            checks += 1
            kp = np.array([reds[a].counts[e] for a, _, e in where], dtype=np.float64)
            kq = np.array([reds[b].counts[e] for _, b, e in where], dtype=np.float64)
            np_ = np.array([reds[a].runs for a, _, _ in where], dtype=np.float64)
            nq = np.array([reds[b].runs for _, b, _ in where], dtype=np.float64)
            state.observe(kp, np_, kq, nq)
            due = runs_now >= next_point
            if due:
                next_point = runs_now * PATH_GROWTH
            if not state.needs_cs():
                # the CS could not stop the run here: a path point due now is computed with
                # the next CS (one root finding for both; the same bounds at every check)
                if due:
                    deferred.append((kp, np_, kq, nq))
                continue
            evaluations += 1 + len(deferred)
            path += state.update(kp, np_, kq, nq, earlier=deferred)
            deferred = []
            path.append(state.path_point())
            decision = state.decide()
            if decision is not None:
                reason = decision
                break
    finally:
        rounds_iter.close()      # a Ray runner drops what is still in flight, unread
    final = None
    if reason == "budget" and state.at_budget():
        # the planned budget is reached without a stop: the final fixed-n analysis
        state.final_analysis()
        eps_f, delta_f = state.epsilon_lower(), state.delta_lower()
        best = int(np.argmax(eps_f))
        final = {"runs": int(state.np_[best]), "epsilon_lower": float(eps_f[best]),
                 "delta_lower": float(np.max(delta_f)), "violation": bool(np.any(state.violated())),
                 "alpha_per_bound": state.alpha_final}
    eps_lo, delta_lo = state.epsilon_lower(), state.delta_lower()
    tests: list[BoundTest] = []
    for k, c in enumerate(chosen):
        tests.append(BoundTest(
            pair_index=c.pair_index, direction=c.direction, event=c.event.to_dict(),
            event_text=c.event.describe(), k_p=int(state.kp[k]), n_p=int(state.np_[k]),
            k_q=int(state.kq[k]), n_q=int(state.nq[k]), p_lo=float(state.p_lo[k]),
            q_hi=float(state.q_hi[k]), epsilon_lower=float(eps_lo[k]),
            delta_lower=float(delta_lo[k]), expected_epsilon=c.expected_epsilon,
            query_indices=None if c.query_indices is None else list(c.query_indices)))
    runs_per_side = int(max(state.np_.max(initial=0), state.nq.max(initial=0)))
    decided_by = "final" if state.final else "anytime"
    info = {
        "rule": RULE,
        "final_rule": FINAL_RULE,
        "decided_by": decided_by,
        "anytime_valid": decided_by == "anytime",
        "validity": (f"confidence sequences: valid at any stopping time (here {runs_per_side:,} "
                     f"runs per side)") if decided_by == "anytime" else
                    (f"final analysis: valid at the planned budget of {int(confirm_runs):,} runs "
                     f"per side only (not at a data-dependent time)"),
        "stopped": reason,
        "runs_per_side": runs_per_side,
        "budget_per_side": int(confirm_runs),
        "rounds": rounds,
        "checks": checks,
        "cs_evaluations": evaluations,
        "chunk_runs": int(jobs[0].chunk_runs) if jobs else 0,
        "anytime_share": ANYTIME_SHARE,
        "alpha_per_sequence": state.alpha,
        "alpha_final": state.alpha_final,
        "horizons": [list(h) for h in DEFAULT_HORIZONS],
        "path": _thin(path),
        **({} if final is None else {"final": final}),
    }
    return tests, info


STOP_REASONS = {
    "violation": "a violation was certified",
    "futility": "the claim cannot be shown violated within the remaining budget",
    "budget": "the confirmation budget was spent; the final fixed-n analysis decided",
}

__all__ = ["cs_bounds", "cs_ends", "cs_lower", "cs_upper", "log_mixture", "concentration",
           "components_for", "SequentialState", "split_alpha", "extreme_bounds",
           "confirm_sequential", "max_certifiable_epsilon", "sequential_chunk_runs", "RULE",
           "FINAL_RULE", "ANYTIME_SHARE", "STOP_REASONS", "DEFAULT_HORIZONS"]
