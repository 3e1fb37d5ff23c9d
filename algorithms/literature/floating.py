"""Floating-point Laplace: the textbook inverse-CDF sampler in float64 versus the snapping
mechanism (Mironov, "On significance of the least significant bits for differential privacy",
ACM CCS 2012).

The textbook sampler ``x + (-lambda sgn(u) ln(1 - 2|u|))`` with u uniform on the doubles of
``rng.random() - 1/2`` is not differentially private at all: which doubles it can output depends
on x (Mironov Sec. 3-4). Concretely, for x = 1 every output ``fl(1 + n)`` is a multiple of 2^-53
(the sum of 1 and a double n either lies in [1/2, 2) or is exact by Sterbenz's lemma), while for
x = 0 the output is n itself and has bits far below 2^-53 whenever |n| < 1/2. The auditor sees this
through the exact-value feature (`audit.reducers.lattice_exponent`) the mechanism opts into with
``exact_values = True``: the event {output is not a multiple of 2^-53} has probability about
0.03 under x = 0 and exactly 0 under x = 1 (support mismatch, true epsilon infinite).

The snapping mechanism (Mironov Sec. 5.2) clamps the input to [-B, B], adds lambda ln(U*) S with
U* the *exact* uniform on (0, 1] rounded to a double and S a random sign, rounds to the nearest
multiple of Lambda (the smallest power of 2 >= lambda) and clamps again: every output lies on
the grid Lambda Z whatever x is, and Mironov's Thm 1 bounds its loss by
``1/lambda + 2^-49 B / lambda`` for lambda < B < 2^46 lambda (sensitivity 1).
"""

from __future__ import annotations

import math

import numpy as np

from audit import validate
from audit.errors import PrivauditError
from audit.neighbours import InputDistance
from audit.types import Claim

from ..registry import register
from .base import EPSILON0, LiteratureMechanism, epsilon as _eps


class FloatLaplace(LiteratureMechanism):
    """Textbook float64 Laplace mechanism [Mironov 2012, Sec. 3] on one sensitivity-1 query.

    Claim as published: eps-DP (replace-one, model scope). True epsilon: infinite (the sets of
    reachable doubles differ between inputs 0 and 1). Outputs are declared exact doubles
    (``exact_values``), so the audit tests events on their exact values.
    """

    input_distance = InputDistance("l1", 1)   # the answer vector moves by at most 1 in l1 (sensitivity 1)

    name = "lit-laplace-float"
    true_reference = "Mironov CCS 2012 Sec. 4 (supports differ: infinite loss)"
    exact_values = True

    def __init__(self, epsilon: float = EPSILON0) -> None:
        self.epsilon = _eps(epsilon)
        super().__init__(Claim(self.epsilon), math.inf, [([0.0], [1.0])], {"epsilon": self.epsilon})

    def sample(self, inp, runs, rng):
        x = self.vector(inp, 1)[0]
        u = rng.random(runs) - 0.5                       # doubles on the 2^-53 grid in [-1/2, 1/2)
        u = np.where(np.abs(u) >= 0.5, 0.0, u)           # ln(0) guard (probability 2^-53)
        noise = -(1.0 / self.epsilon) * np.sign(u) * np.log(1.0 - 2.0 * np.abs(u))
        return x + noise


def exact_uniform(rng: np.random.Generator, runs: int) -> np.ndarray:
    """U* of Mironov Sec. 5.2: the uniform on (0, 1) rounded to a double, i.e. exponent
    geometric (P(2^-e scale) = 2^-e) and 52 uniform mantissa bits."""
    e = rng.geometric(0.5, size=runs)
    m = rng.integers(0, 1 << 52, size=runs, dtype=np.int64)
    return np.ldexp(1.0 + m * 2.0 ** -52, -e)


class Snapping(LiteratureMechanism):
    """Snapping mechanism [Mironov 2012, Sec. 5.2, Thm 1] on one sensitivity-1 query.

    ``clamp_B(round_Lambda(clamp_B(x) + S lambda ln(U*)))`` with lambda = 1/eps, Lambda the
    smallest power of 2 >= lambda, B the clamping bound. Claim (Thm 1):
    (1/lambda + 2^-49 B/lambda)-DP, replace-one, model scope; true epsilon at most that.
    Outputs are exact doubles (``exact_values``) and pass the exact-value audit.
    """

    input_distance = InputDistance("l1", 1)   # the answer vector moves by at most 1 in l1 (sensitivity 1)

    name = "lit-snapping"
    true_reference = "Mironov CCS 2012 Thm 1 (upper bound)"
    exact_values = True

    def __init__(self, epsilon: float = EPSILON0, bound: float = 100.0) -> None:
        self.epsilon = _eps(epsilon)
        self.lam = 1.0 / self.epsilon
        self.bound = validate.positive("bound", bound)
        if not self.lam < self.bound < 2.0 ** 46 * self.lam:
            raise PrivauditError(f"{self.name}: Mironov's Thm 1 needs 1/eps < bound < 2^46/eps, "
                                 f"got bound = {bound} at eps = {self.epsilon}")
        self.grid = 2.0 ** math.ceil(math.log2(self.lam))
        claimed = 1.0 / self.lam + 2.0 ** -49 * self.bound / self.lam
        super().__init__(Claim(claimed), claimed, [([0.0], [1.0])],
                         {"epsilon": self.epsilon, "bound": self.bound})

    def sample(self, inp, runs, rng):
        x = min(max(self.vector(inp, 1)[0], -self.bound), self.bound)
        sign = np.where(rng.random(runs) < 0.5, -1.0, 1.0)
        y = x + sign * self.lam * np.log(exact_uniform(rng, runs))
        return np.clip(np.round(y / self.grid) * self.grid, -self.bound, self.bound)


@register("lit-laplace-float", kind="mechanism", paper="Mironov (CCS 2012)",
          section="Sec. 3-4 (textbook inverse-CDF Laplace in float64)",
          summary="x + Laplace by the textbook float64 sampler; NOT private (reachable doubles leak)",
          expect={"correct": "violation"})
def lit_laplace_float(epsilon: float = EPSILON0) -> FloatLaplace:
    return FloatLaplace(epsilon)


@register("lit-snapping", kind="mechanism", paper="Mironov (CCS 2012)",
          section="Sec. 5.2, Thm 1 (snapping mechanism)",
          summary="Laplace with exact-uniform sampling, snapped to a power-of-2 grid and clamped")
def lit_snapping(epsilon: float = EPSILON0, bound: float = 100.0) -> Snapping:
    return Snapping(epsilon, bound)
