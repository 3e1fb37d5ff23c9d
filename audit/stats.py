"""Clopper–Pearson bounds and the (epsilon, delta) lower bounds built from them.

For one event E and one ordered pair (S, S'), (epsilon, delta)-DP requires
``P[A(S) in E] <= e^epsilon P[A(S') in E] + delta``. With a lower confidence bound ``p_lo`` on
the left probability and an upper bound ``q_hi`` on the right one, both valid simultaneously,
``epsilon >= ln((p_lo - delta) / q_hi)`` and ``delta >= p_lo - e^epsilon q_hi``.

All functions are vectorised over numpy arrays. Bounds are exact one-sided Clopper–Pearson
(beta quantiles), never a normal approximation; they agree with statsmodels'
``proportion_confint(method="beta")`` (tested).

References
----------
C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial limits illustrated in the
case of the binomial", Biometrika 26 (1934).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import special

from .errors import PrivauditError


def _check_alpha(alpha: float) -> None:
    if not (0.0 < float(alpha) < 1.0):
        raise PrivauditError(f"error level alpha must be in (0, 1), got {alpha}")


def cp_lower(k, n, alpha: float) -> np.ndarray:
    """One-sided Clopper–Pearson lower bound: ``P(p < cp_lower) <= alpha``.

    Parameters
    ----------
    k, n : array_like
        Successes and trials (k may be fractional, for expected-count planning).
    alpha : float
        One-sided error level.
    """
    _check_alpha(alpha)
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        # the beta quantile itself (what stats.beta.ppf computes, bit for bit, without its
        # per-call argument checking: this runs on every threshold grid)
        lo = special.betaincinv(k, n - k + 1.0, alpha)
    return np.where(k <= 0, 0.0, lo)


def cp_upper(k, n, alpha: float) -> np.ndarray:
    """One-sided Clopper–Pearson upper bound: ``P(p > cp_upper) <= alpha``."""
    _check_alpha(alpha)
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        hi = special.betainccinv(k + 1.0, n - k, alpha)
    return np.where(k >= n, 1.0, hi)


def epsilon_lower(p_lo, q_hi, delta: float = 0.0) -> np.ndarray:
    """``max(0, ln((p_lo - delta) / q_hi))``; 0 where ``p_lo <= delta`` (no evidence)."""
    p_lo = np.asarray(p_lo, dtype=np.float64)
    q_hi = np.asarray(q_hi, dtype=np.float64)
    num = p_lo - delta
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        eps = np.log(num / q_hi)
    return np.where((num > 0) & (q_hi > 0), np.maximum(eps, 0.0), np.where(num > 0, np.inf, 0.0))


def delta_lower(p_lo, q_hi, epsilon: float) -> np.ndarray:
    """``max(0, p_lo - e^epsilon q_hi)``: the smallest delta consistent with the bounds."""
    p_lo = np.asarray(p_lo, dtype=np.float64)
    q_hi = np.asarray(q_hi, dtype=np.float64)
    return np.maximum(p_lo - math.exp(epsilon) * q_hi, 0.0)


def per_bound_alpha(confidence: float, tests: int) -> float:
    """Bonferroni: each of the ``2 * tests`` one-sided bounds gets ``(1 - confidence) / (2 tests)``."""
    if not (0.0 < confidence < 1.0):
        raise PrivauditError(f"confidence must be in (0, 1), got {confidence}")
    if tests < 1:
        raise PrivauditError(f"number of tests must be >= 1, got {tests}")
    return (1.0 - confidence) / (2.0 * tests)


def max_certifiable_epsilon(n: int, confidence: float = 0.95, tests: int = 1,
                            delta: float = 0.0) -> float:
    """The largest epsilon lower bound that `n` runs per side can give at all.

    It is reached when the event happened in every run on one side and never on the other:
    ``ln((cp_lower(n, n) - delta) / cp_upper(0, n))``, about ``ln(n / ln(2 tests / alpha))``.
    """
    a = per_bound_alpha(confidence, tests)
    return float(epsilon_lower(cp_lower(n, n, a), cp_upper(0, n, a), delta))


def runs_to_certify(epsilon: float, ceiling: Callable[[int], float],
                    limit: int = 10 ** 13) -> int | None:
    """The fewest runs per side ``n`` whose ``ceiling(n)`` (a certifiable-epsilon function
    such as `max_certifiable_epsilon` with the audit's confidence, tests and delta bound in)
    exceeds `epsilon`: below it no confirmation can show a violation of an epsilon-claim, n of
    n against 0 of n included. None when not even `limit` runs do. The ceiling grows with n,
    so doubling then bisection finds it in about 2 log2(n) evaluations."""
    def above(n: int) -> bool:
        c = ceiling(n)
        return bool(np.isfinite(c) and c > epsilon)
    hi = 1
    while not above(hi):
        if hi >= limit:
            return None
        hi = min(limit, 2 * hi)
    lo = hi // 2                       # not above (or 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if above(mid) else (mid, hi)
    return hi


def ceiling_approx(n: int, alpha: float) -> float:
    """DESIGN's rule of thumb ``ln(n / ln(2 / alpha))`` for the certifiable ceiling."""
    return math.log(n / math.log(2.0 / alpha))


def expected_bounds(p_hat, q_hat, n: int, alpha: float, epsilon: float, delta: float):
    """Bounds a confirmation with `n` runs per side is expected to give at true rates p, q.

    Plugs the expected counts ``n p`` and ``n q`` into the Clopper–Pearson bounds; used to choose
    events on exploration data (DESIGN section 4), never to report.

    Returns
    -------
    (epsilon_lower at `delta`, delta_lower at `epsilon`) arrays.
    """
    p_lo = cp_lower(np.asarray(p_hat) * n, n, alpha)
    q_hi = cp_upper(np.asarray(q_hat) * n, n, alpha)
    return epsilon_lower(p_lo, q_hi, delta), delta_lower(p_lo, q_hi, epsilon)
