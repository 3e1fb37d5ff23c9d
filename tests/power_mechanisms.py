"""Black boxes privaudit has no hand-made designs for: the power tests and benchmarks use them.

Written from the papers, vectorised over runs. They live here (not in `algorithms/`) because they
exist to measure the generic path of the auditor: learned events, mixed outputs, ordinal
half-lines.

Sparse vector variants: M. Lyu, D. Su, N. Li, "Understanding the Sparse Vector Technique for
Differential Privacy", PVLDB 10(6), 2017, Figure 1 (Algorithms 1, 3 and 6) and Table 1 (their
privacy). Every query has sensitivity Delta; neighbouring inputs are query-answer vectors that
differ by at most Delta in every coordinate (StatDP's patterns, `attacks.mechanism_pairs(k,
norm="statdp")`).

Two-sided geometric mechanism: A. Ghosh, T. Roughgarden, M. Sundararajan, "Universally
utility-maximizing privacy mechanisms", STOC 2009, Section 2: output ``x + Z`` with
``P(Z = z) ∝ alpha^|z|``, ``alpha = exp(-epsilon / Delta)``; epsilon-DP for counts of sensitivity
Delta, and the loss of the tail event ``{output <= x}`` on inputs x, x + Delta is exactly epsilon.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attacks.mechanisms import mechanism_pairs
from audit import Claim

ABOVE, BELOW, ABORTED = 1, 0, -1


def _laplace(rng: np.random.Generator, scale: float, size) -> np.ndarray:
    return rng.laplace(0.0, scale, size=size)


@dataclass
class SVT1:
    """Lyu–Su–Li 2017, Figure 1, Algorithm 1 (their corrected sparse vector; Table 1: eps-DP).

    ``rho = Lap(Delta / eps1)``, ``nu_i = Lap(2 c Delta / eps2)`` with ``eps1 = eps2 = eps / 2``;
    answer ⊤ (1) when ``q_i + nu_i >= T + rho``, ⊥ (0) otherwise, and stop after `c` ⊤ answers
    (later queries report -1, "aborted"). Claim: eps-DP for queries of sensitivity Delta, every
    coordinate of the answer vector moving by at most Delta. Correct: no planted bug.
    """

    epsilon: float = 1.0
    c: int = 1
    threshold: float = 0.5
    sensitivity: float = 1.0
    name: str = "lsl-svt1"
    claim: Claim = field(default_factory=lambda: Claim(1.0))

    def __post_init__(self) -> None:
        self.claim = Claim(self.epsilon)

    def _noise_scales(self) -> tuple[float, float]:
        e1 = self.epsilon / 2.0
        e2 = self.epsilon - e1
        return self.sensitivity / e1, 2.0 * self.c * self.sensitivity / e2

    def _answers(self, inp: np.ndarray, runs: int, rng: np.random.Generator):
        q = np.asarray(inp, dtype=np.float64).reshape(-1)
        s_rho, s_nu = self._noise_scales()
        rho = _laplace(rng, s_rho, (runs, 1))
        noisy = q[None, :] + _laplace(rng, s_nu, (runs, q.size))
        above = noisy >= self.threshold + rho
        return above, noisy

    def _cut(self, above: np.ndarray) -> np.ndarray:
        """True where a query comes after the c-th ⊤ (the algorithm has stopped)."""
        done = np.cumsum(above, axis=1)
        return np.concatenate([np.zeros((above.shape[0], 1), dtype=bool),
                               done[:, :-1] >= self.c], axis=1)

    def sample(self, inp: np.ndarray, runs: int, rng: np.random.Generator) -> np.ndarray:
        above, _ = self._answers(inp, runs, rng)
        out = np.where(above, ABOVE, BELOW).astype(np.int64)
        out[self._cut(above)] = ABORTED
        return out


@dataclass
class SVT3(SVT1):
    """Lyu–Su–Li 2017, Figure 1, Algorithm 3 (from Roth's 2011 lecture notes).

    As Algorithm 1 but ``nu_i = Lap(c Delta / eps2)`` and a ⊤ answer *releases the noisy value*
    ``q_i + nu_i``. Planted flaw (Table 1: infinity-DP, no finite eps): the released value tells
    how far below it the noisy threshold was, so the ⊥ answers before it leak without bound.
    "No answer" (⊥, or after the stop) is returned as `missing` (NaN by default; any float —
    privaudit's bound must not depend on the choice).
    """

    missing: float = float("nan")
    name: str = "lsl-svt3"

    def _noise_scales(self) -> tuple[float, float]:
        e1 = self.epsilon / 2.0
        e2 = self.epsilon - e1
        return self.sensitivity / e1, self.c * self.sensitivity / e2

    def sample(self, inp: np.ndarray, runs: int, rng: np.random.Generator) -> np.ndarray:
        above, noisy = self._answers(inp, runs, rng)
        out = np.where(above, noisy, self.missing)
        out[self._cut(above)] = self.missing
        return out


@dataclass
class SVT6(SVT1):
    """Lyu–Su–Li 2017, Figure 1, Algorithm 6 (Chen et al. 2015): no cutoff.

    ``rho = Lap(Delta / eps1)``, ``nu_i = Lap(Delta / eps2)``, every query answered ⊤/⊥.
    Planted flaw (Table 1: infinity-DP): the query noise does not grow with the number of ⊤
    answers, so k ⊤ answers cost about k eps2 and nothing stops them.
    """

    name: str = "lsl-svt6"

    def _noise_scales(self) -> tuple[float, float]:
        e1 = self.epsilon / 2.0
        return self.sensitivity / e1, self.sensitivity / (self.epsilon - e1)

    def sample(self, inp: np.ndarray, runs: int, rng: np.random.Generator) -> np.ndarray:
        above, _ = self._answers(inp, runs, rng)
        return above.astype(np.int64)


@dataclass
class Geometric:
    """Two-sided geometric mechanism (Ghosh–Roughgarden–Sundararajan 2009, Section 2).

    Output ``x + Z``, ``P(Z = z) = (1 - a) / (1 + a) a^|z|``, ``a = exp(-eps / Delta)``, drawn as
    the difference of two geometric variables. Claim: eps-DP for an integer count of sensitivity
    Delta (inputs x, x +- Delta). Correct; the loss of ``{output <= x}`` is exactly eps.
    """

    epsilon: float = 1.0
    sensitivity: int = 1
    name: str = "geometric"
    claim: Claim = field(default_factory=lambda: Claim(1.0))

    def __post_init__(self) -> None:
        self.claim = Claim(self.epsilon)

    def sample(self, inp: np.ndarray, runs: int, rng: np.random.Generator) -> np.ndarray:
        x = int(np.asarray(inp).reshape(-1)[0])
        p = 1.0 - np.exp(-self.epsilon / self.sensitivity)
        z = rng.geometric(p, runs) - rng.geometric(p, runs)
        return (x + z).astype(np.int64)


@dataclass
class LaplaceVector:
    """Laplace mechanism on a vector of k answers of l1 sensitivity 1 (Dwork et al. 2006,
    Section 3): ``x + Lap(1/eps)^k``. Correct eps-DP; used by the false-violation test."""

    epsilon: float = 1.0
    name: str = "laplace-vector"
    claim: Claim = field(default_factory=lambda: Claim(1.0))

    def __post_init__(self) -> None:
        self.claim = Claim(self.epsilon)

    def sample(self, inp: np.ndarray, runs: int, rng: np.random.Generator) -> np.ndarray:
        x = np.asarray(inp, dtype=np.float64).reshape(-1)
        return x[None, :] + rng.laplace(0.0, 1.0 / self.epsilon, size=(runs, x.size))


def statdp_pairs(k: int = 10) -> list[tuple[np.ndarray, np.ndarray]]:
    """StatDP's patterns (one above / below, rest above / below, half-half, all above, X-shape)
    around all-ones inputs: `attacks.mechanism_pairs(k, norm="statdp")`."""
    return mechanism_pairs(k, norm="statdp")
