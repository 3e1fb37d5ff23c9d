"""Additive-noise benchmark mechanisms: Laplace, Gaussian (classic and analytic), geometric and
truncated geometric.

References
----------
.. [DMNS06] Dwork, McSherry, Nissim & Smith, "Calibrating noise to sensitivity", TCC 2006.
.. [DR14] Dwork & Roth, "The algorithmic foundations of differential privacy", 2014: Thm 3.6
   (Laplace), Thm A.1 (Gaussian, classic calibration).
.. [BW18] Balle & Wang, "Improving the Gaussian mechanism for differential privacy: analytical
   calibration and optimal denoising", ICML 2018, Thm 8 / Alg. 1 (analytic calibration).
.. [GRS09] Ghosh, Roughgarden & Sundararajan, "Universally utility-maximizing privacy mechanisms",
   STOC 2009 (the geometric mechanism).
.. [BV18] Balcer & Vadhan, "Differential privacy on finite computers", ITCS 2018 (arXiv
   1709.05396), Alg. 4.8 GeoSample and Thm 4.7: ln(1 + 2^-ceil(ln(2/eps)))-DP.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from audit import validate
from audit.errors import PrivauditError
from audit.neighbours import InputDistance
from audit.types import Claim

from ..registry import register
from .base import EPSILON0, LiteratureMechanism, epsilon as _eps


class Laplace(LiteratureMechanism):
    """Laplace mechanism [DMNS06; DR14 Thm 3.6] on one sensitivity-1 sum query.

    Output ``x + Lap(1/eps)`` for a one-entry input x (the query's answer). Claim: eps-DP for
    answers that differ by at most 1 (replace-one), model scope; true epsilon = eps (tight on
    ``[0] -> [1]``, DP-Sniper's witness). Real-number model: the textbook float64 sampler behind it
    leaks through its exact values — see `lit-laplace-float`.
    """

    input_distance = InputDistance("l1", 1)   # the answer vector moves by at most 1 in l1 (sensitivity 1)

    name = "lit-laplace"
    true_reference = "DR14 Thm 3.6 (tight for |x - x'| = 1)"

    def __init__(self, epsilon: float = EPSILON0) -> None:
        self.epsilon = _eps(epsilon)
        super().__init__(Claim(self.epsilon), self.epsilon, [([0.0], [1.0])], {"epsilon": self.epsilon})

    def sample(self, inp, runs, rng):
        return self.vector(inp, 1)[0] + rng.laplace(0.0, 1.0 / self.epsilon, size=runs)


def classic_sigma(epsilon: float, delta: float) -> float:
    """sigma = sqrt(2 ln(1.25/delta)) / eps for sensitivity 1 [DR14 Thm A.1, eps < 1]."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def analytic_delta(sigma: float, epsilon: float) -> float:
    """delta(eps) of N(0, sigma^2) noise at sensitivity 1 [BW18 Thm 8]:
    Phi(1/(2 sigma) - eps sigma) - e^eps Phi(-1/(2 sigma) - eps sigma)."""
    a, b = 0.5 / sigma - epsilon * sigma, -0.5 / sigma - epsilon * sigma
    return float(special.ndtr(a) - math.exp(epsilon) * special.ndtr(b))


def analytic_sigma(epsilon: float, delta: float) -> float:
    """The smallest sigma with ``analytic_delta(sigma, eps) <= delta`` [BW18 Alg. 1], by bisection."""
    hi = 1.0
    while analytic_delta(hi, epsilon) > delta:
        hi *= 2.0
    # imported here: scipy.optimize costs ~0.3 s of every command's start-up, and only the
    # analytic Gaussian's calibration needs it
    from scipy import optimize
    return float(optimize.brentq(lambda s: analytic_delta(s, epsilon) - delta, 1e-6, hi, xtol=1e-12))


class Gaussian(LiteratureMechanism):
    """Gaussian mechanism on one sensitivity-1 query, ``x + N(0, sigma^2)``.

    ``calibration="classic"``: sigma of DR14 Thm A.1 (valid for eps < 1; loose: the mechanism's
    true delta at eps is far below the claimed delta). ``calibration="analytic"``: sigma of
    Balle & Wang [BW18, Alg. 1], the smallest sigma for which it is (eps, delta)-DP — tight: at the
    claimed eps its privacy profile equals delta. Claim: (eps, delta)-DP, replace-one, model scope.
    """

    input_distance = InputDistance("l1", 1)   # the answer vector moves by at most 1 in l1 (sensitivity 1)

    name = "lit-gaussian"
    true_reference = "DR14 Thm A.1 (classic); BW18 Thm 8 (analytic, tight)"

    def __init__(self, epsilon: float = 0.5, delta: float = 1e-5, calibration: str = "classic") -> None:
        self.epsilon = _eps(epsilon)
        self.delta = validate.probability("delta", delta, allow_zero=False)
        self.calibration = validate.choice("calibration", calibration, ("classic", "analytic"))
        if self.calibration == "classic":
            if self.epsilon >= 1.0:
                raise PrivauditError(f"{self.name}: the classic calibration (DR14 Thm A.1) needs "
                                     f"epsilon < 1, got {self.epsilon}")
            self.sigma = classic_sigma(self.epsilon, self.delta)
        else:
            self.name = "lit-gaussian-analytic"
            self.sigma = analytic_sigma(self.epsilon, self.delta)
        super().__init__(Claim(self.epsilon, self.delta), self.epsilon, [([0.0], [1.0])],
                         {"epsilon": self.epsilon, "delta": self.delta, "calibration": self.calibration})

    def sample(self, inp, runs, rng):
        return self.vector(inp, 1)[0] + rng.normal(0.0, self.sigma, size=runs)


class Geometric(LiteratureMechanism):
    """Two-sided geometric mechanism [GRS09] on one integer count of sensitivity 1.

    Output ``x + Z`` with ``P(Z = z) ∝ exp(-eps |z|)``, drawn as the difference of two geometric
    variables. Integer outputs. Claim: eps-DP, replace-one, model scope; true epsilon = eps (any
    tail event ``{output >= 1}`` on ``[0] -> [1]``).
    """

    input_distance = InputDistance("l1", 1)   # the answer vector moves by at most 1 in l1 (sensitivity 1)

    name = "lit-geometric"
    true_reference = "GRS09 (tight: every tail has ratio e^eps)"

    def __init__(self, epsilon: float = EPSILON0) -> None:
        self.epsilon = _eps(epsilon)
        super().__init__(Claim(self.epsilon), self.epsilon, [([0.0], [1.0])], {"epsilon": self.epsilon})

    def sample(self, inp, runs, rng):
        x = self.vector(inp, 1)[0]
        if x != round(x):
            raise PrivauditError(f"{self.name}: input must be an integer count, got {x}")
        p = -math.expm1(-self.epsilon)
        return int(x) + rng.geometric(p, size=runs) - rng.geometric(p, size=runs)


def geosample_cdf(c: int, n: int, k: int) -> list[int]:
    """``F(0..n)`` of GeoSample [BV18 Alg. 4.8, step 2] as exact integers over the common
    denominator ``d = (2^(k+1) + 1)(2^k + 1)^(n-1)``."""
    d = (2 ** (k + 1) + 1) * (2 ** k + 1) ** (n - 1)
    f = [2 ** (k * (c - z)) * (2 ** k + 1) ** (n - (c - z)) for z in range(c)]
    f += [d - 2 ** (k * (z - c + 1)) * (2 ** k + 1) ** (n - 1 - (z - c)) for z in range(c, n)]
    return f + [d]


class TruncatedGeometric(LiteratureMechanism):
    """Truncated geometric mechanism, GeoSample(eps, n) of Balcer & Vadhan [BV18, Alg. 4.8]: a
    counting query over n individuals answered in {0, ..., n} with integer arithmetic only.

    Its output distribution is computed exactly (`pmf`) and sampled in one vectorised call.
    Claim (BV18 Thm 4.7): ln(1 + 2^-k)-DP with k = ceil(ln(2/eps)) — 0.1178 at eps = 0.1, which is
    exactly its true loss (`exact_epsilon` computes it from the pmf). Replace-one (the count moves
    by 1), model scope. Pairs: every adjacent (c, c + 1), DP-Sniper's witness [2] -> [1] first.
    """

    input_distance = InputDistance("l1", 1)   # the answer vector moves by at most 1 in l1 (sensitivity 1)

    name = "lit-truncated-geometric"
    true_reference = "BV18 Thm 4.7; equal to the exact maximum log-ratio of the pmf"

    def __init__(self, epsilon: float = EPSILON0, n: int = 5) -> None:
        self.epsilon = _eps(epsilon)
        self.n = validate.count("n", n, maximum=64)
        self.k = math.ceil(math.log(2.0 / self.epsilon))
        claimed = math.log1p(2.0 ** -self.k)
        pairs = [([2.0], [1.0])] + [([float(c)], [float(c + 1)]) for c in range(self.n) if c != 1]
        super().__init__(Claim(claimed), self.exact_epsilon(), pairs,
                         {"epsilon": self.epsilon, "n": self.n})

    def pmf(self, c: int) -> np.ndarray:
        f = geosample_cdf(c, self.n, self.k)
        d = f[-1]
        return np.array([(f[z] - (f[z - 1] if z else 0)) / d for z in range(self.n + 1)])

    def exact_epsilon(self) -> float:
        """max over adjacent counts c, c+1 and outputs z of |ln P_c(z) - ln P_{c+1}(z)|."""
        worst = 0.0
        for c in range(self.n):
            fa, fb = geosample_cdf(c, self.n, self.k), geosample_cdf(c + 1, self.n, self.k)
            for z in range(self.n + 1):
                pa = fa[z] - (fa[z - 1] if z else 0)
                pb = fb[z] - (fb[z - 1] if z else 0)
                worst = max(worst, abs(math.log(pa) - math.log(pb)))  # exact integers: log of ints
        return worst

    def sample(self, inp, runs, rng):
        c = self.vector(inp, 1)[0]
        if c != round(c) or not 0 <= c <= self.n:
            raise PrivauditError(f"{self.name}: input must be a count in 0..{self.n}, got {c}")
        cdf = np.cumsum(self.pmf(int(c)))
        return np.minimum(np.searchsorted(cdf, rng.random(runs), side="right"), self.n).astype(np.int64)


# ---------------------------------------------------------------------------------------------
@register("lit-laplace", kind="mechanism", paper="Dwork, McSherry, Nissim & Smith (TCC 2006)",
          section="DR14 Thm 3.6; DP-Sniper Table 2 'Laplace'",
          summary="one sum query plus Lap(1/eps); eps-DP (true eps = eps)")
def lit_laplace(epsilon: float = EPSILON0) -> Laplace:
    return Laplace(epsilon)


@register("lit-gaussian", kind="mechanism", paper="Dwork & Roth (2014)",
          section="Thm A.1 (classic calibration)",
          summary="one query plus N(0, sigma^2), sigma = sqrt(2 ln(1.25/delta))/eps; (eps, delta)-DP")
def lit_gaussian(epsilon: float = 0.5, delta: float = 1e-5) -> Gaussian:
    return Gaussian(epsilon, delta, "classic")


@register("lit-gaussian-analytic", kind="mechanism", paper="Balle & Wang (ICML 2018)",
          section="Thm 8, Alg. 1 (analytic calibration)",
          summary="one query plus N(0, sigma^2), the smallest (eps, delta)-DP sigma; tight")
def lit_gaussian_analytic(epsilon: float = 0.5, delta: float = 1e-5) -> Gaussian:
    return Gaussian(epsilon, delta, "analytic")


@register("lit-geometric", kind="mechanism", paper="Ghosh, Roughgarden & Sundararajan (STOC 2009)",
          section="the geometric mechanism (two-sided)",
          summary="count plus two-sided geometric noise; eps-DP, integer outputs")
def lit_geometric(epsilon: float = EPSILON0) -> Geometric:
    return Geometric(epsilon)


@register("lit-truncated-geometric", kind="mechanism", paper="Balcer & Vadhan (ITCS 2018)",
          section="Alg. 4.8 GeoSample, Thm 4.7; DP-Sniper Table 2 'TruncatedGeometric'",
          summary="count over n in {0..n} by integer arithmetic; ln(1+2^-ceil(ln(2/eps)))-DP")
def lit_truncated_geometric(epsilon: float = EPSILON0, n: int = 5) -> TruncatedGeometric:
    return TruncatedGeometric(epsilon, n)
