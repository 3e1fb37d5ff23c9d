"""Chaudhuri & Hsu's lower-bound constructions and examples as dataset families (spec section 4).

Each scenario is a frozen value with a sampler (``sample(m, rng) -> Dataset``, labels {0, 1}) and
the exact quantities the paper states, so that utility tests and benchmarks can score a learner's
released hypothesis exactly and the packing audit (`audit.packing`) can use the same datasets:

* `LB5` -- Theorem 5 / Example 1 (spec 4.1-4.2): thresholds on [0, 1] (Definition 4,
  ``h_t(x) = 1[x >= t]``), ``eta = 1/(6 + 4 e^{alpha M})``, targets ``z = j eta``; ``P_z`` is half
  uniform on [0, 1], half uniform on ``G_z = [z - eta/3, z + eta/3]``, label ``1[x >= z]``. Example
  1's density ``1/2 + 3/(4 eta)`` on G_z, ``1/2`` elsewhere; ``kappa = 1/2 + 3/(4 eta)`` w.r.t. the
  uniform U. Exact error ``err_z(t) = |t - z|/2 + (3/(4 eta)) min(|t - z|, eta/3)``.
* `SphereBand` -- Examples 2 and 3 (spec 4.3): D uniform on the band ``|u.x| <= gamma`` of S^{n-1}
  (Example 2) or on its complement, the two caps (Example 3); U uniform on the sphere. The exact
  ``U(W) = F_B((1 + gamma)/2) - F_B((1 - gamma)/2)`` with ``B = Beta((n-1)/2, (n-1)/2)``, exact
  ``kappa = 1/U(W)`` (band) or ``1/(1 - U(W))`` (caps), and the paper's bounds (Lemma 20/21) for
  comparison. Labels: realizable by ``w*`` (default ``u``: the boundary through the band).
* `LabelPacking` -- Lemma 11 / Theorem 12 (spec 4.4): a fixed unlabeled X, hypotheses of a packing
  P, datasets ``S_{X,h}`` = X labelled by h; success = the output within ``B_X(h, s/2)``.

The grid versions (`LB5.on_grid`) snap x to a learner's finite domain, which the registered
learners need (their records must be domain points).

References
----------
K. Chaudhuri and D. Hsu, "Sample complexity bounds for differentially private learning", COLT 2011
(JMLR W&CP 19): Theorem 5, Example 1, Examples 2-3 with Lemmas 20-21, Lemma 11, Theorem 12.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from audit.errors import PrivauditError
from audit.types import Dataset


# ---------------------------------------------------------------------------------------------
# Theorem 5 / Example 1
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LB5:
    """The Theorem 5 family for privacy `alpha` and sample bound `M`; `j` picks z = j eta."""

    alpha: float
    M: float
    j: int = 1
    grid: np.ndarray | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not (self.alpha > 0 and self.M > 0):
            raise PrivauditError(f"LB5 needs alpha > 0 and M > 0, got {self.alpha}, {self.M}")
        if not 1 <= self.j <= self.K:
            raise PrivauditError(f"LB5 target index j must be in [1, {self.K}], got {self.j}")

    @property
    def eta(self) -> float:
        return 1.0 / (6.0 + 4.0 * math.exp(self.alpha * self.M))

    @property
    def K(self) -> int:
        return int(math.floor(1.0 / self.eta)) - 1

    @property
    def z(self) -> float:
        return self.j * self.eta

    @property
    def kappa(self) -> float:
        """Example 1: smoothness w.r.t. uniform U, ``1/2 + 3/(4 eta)``."""
        return 0.5 + 3.0 / (4.0 * self.eta)

    def density(self, x: np.ndarray) -> np.ndarray:
        """Example 1's density of D_z on [0, 1]."""
        x = np.asarray(x, dtype=np.float64)
        inside = np.abs(x - self.z) <= self.eta / 3
        return np.where(inside, self.kappa, 0.5) * ((x >= 0) & (x <= 1))

    def error(self, t: np.ndarray) -> np.ndarray:
        """Exact population error of the threshold(s) t under P_z (spec 4.1)."""
        d = np.abs(np.asarray(t, dtype=np.float64) - self.z)
        return d / 2 + (3.0 / (4.0 * self.eta)) * np.minimum(d, self.eta / 3)

    def on_grid(self, points: np.ndarray) -> "LB5":
        """The same scenario with x snapped to the sorted 1-D `points` (a learner's domain)."""
        return LB5(self.alpha, self.M, self.j, np.unique(np.asarray(points, dtype=np.float64).ravel()))

    def sample(self, m: int, rng: np.random.Generator) -> Dataset:
        """m i.i.d. draws from P_z (snapped to the grid when one is set)."""
        u = rng.random(m)
        inside = rng.random(m) < 0.5
        x = np.where(inside, self.z - self.eta / 3 + (2 * self.eta / 3) * u, rng.random(m))
        if self.grid is not None:
            P = self.grid
            k = np.clip(np.searchsorted(P, x), 1, len(P) - 1)
            x = np.where(np.abs(P[k - 1] - x) <= np.abs(P[k] - x), P[k - 1], P[k])
        return Dataset(x.reshape(-1, 1), (x >= self.z).astype(np.int8))


# ---------------------------------------------------------------------------------------------
# Examples 2 and 3
# ---------------------------------------------------------------------------------------------
def band_mass(n: int, gamma: float) -> float:
    """Exact ``U(W)``, W = {x in S^{n-1}: |u.x| <= gamma}: ``(u.x + 1)/2 ~ Beta((n-1)/2, (n-1)/2)``."""
    if n < 2 or not 0 <= gamma <= 1:
        raise PrivauditError(f"band_mass needs n >= 2 and gamma in [0, 1], got n={n}, gamma={gamma}")
    a = (n - 1) / 2.0
    return float(stats.beta.cdf((1 + gamma) / 2, a, a) - stats.beta.cdf((1 - gamma) / 2, a, a))


@dataclass(frozen=True)
class SphereBand:
    """Example 2 (``part="band"``: D uniform on |u.x| <= gamma) or Example 3 (``part="caps"``)."""

    n: int
    gamma: float
    part: str = "band"
    target: str = "u"             # "u": w* = u (boundary through the band); "perp": w* _|_ u

    def __post_init__(self) -> None:
        if self.part not in ("band", "caps") or self.target not in ("u", "perp"):
            raise PrivauditError("SphereBand part must be band|caps and target u|perp")
        band_mass(self.n, self.gamma)

    @property
    def u(self) -> np.ndarray:
        e = np.zeros(self.n)
        e[0] = 1.0
        return e

    @property
    def w_star(self) -> np.ndarray:
        if self.target == "u":
            return self.u
        e = np.zeros(self.n)
        e[1] = 1.0
        return e

    @property
    def U_W(self) -> float:
        return band_mass(self.n, self.gamma)

    @property
    def kappa(self) -> float:
        """Exact smoothness of D w.r.t. uniform U: ``1/U(W)`` (band) or ``1/(1 - U(W))`` (caps)."""
        return 1.0 / self.U_W if self.part == "band" else 1.0 / (1.0 - self.U_W)

    @property
    def kappa_paper(self) -> float:
        """The paper's bound: Lemma 20 ``1/(1 - 2 e^{-n gamma^2/2})`` (inf when vacuous) or
        Lemma 21 ``(2/(1 - gamma))^{(n-1)/2}``."""
        if self.part == "band":
            b = 1.0 - 2.0 * math.exp(-self.n * self.gamma ** 2 / 2)
            return math.inf if b <= 0 else 1.0 / b
        return (2.0 / (1.0 - self.gamma)) ** ((self.n - 1) / 2.0)

    def sample_x(self, m: int, rng: np.random.Generator) -> np.ndarray:
        """m points of D: ``s = (u.x + 1)/2`` from the Beta law restricted by inverse CDF, then a
        uniform direction in u's orthogonal complement."""
        a = (self.n - 1) / 2.0
        lo, hi = stats.beta.cdf((1 - self.gamma) / 2, a, a), stats.beta.cdf((1 + self.gamma) / 2, a, a)
        V = rng.random(m)
        if self.part == "band":
            s = stats.beta.ppf(lo + V * (hi - lo), a, a)
        else:   # one cap (upper tail, by isf for accuracy), then a uniformly random sign
            s = stats.beta.isf(V * (1.0 - hi), a, a)
            s = np.where(rng.random(m) < 0.5, s, 1.0 - s)
        t = 2.0 * s - 1.0
        g = rng.standard_normal((m, self.n))
        g -= np.outer(g @ self.u, self.u)
        g /= np.linalg.norm(g, axis=1, keepdims=True)
        return t[:, None] * self.u[None, :] + np.sqrt(np.clip(1 - t ** 2, 0, None))[:, None] * g

    def sample(self, m: int, rng: np.random.Generator) -> Dataset:
        X = self.sample_x(m, rng)
        return Dataset(X, (X @ self.w_star >= 0).astype(np.int8))

    def error(self, w: np.ndarray, samples: int = 200_000, seed: int = 0) -> float:
        """Population error of ``h_w`` under D (Monte Carlo on a fixed public sample)."""
        X = self.sample_x(samples, np.random.default_rng(seed))
        return float(np.mean((X @ np.asarray(w) >= 0) != (X @ self.w_star >= 0)))


# ---------------------------------------------------------------------------------------------
# Lemma 11 / Theorem 12
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class LabelPacking:
    """Lemma 11's datasets: fixed X (m, d), labellings P (K, m) of a packing, success radius."""

    X: np.ndarray
    P: np.ndarray
    s: float

    def __post_init__(self) -> None:
        if self.P.ndim != 2 or self.P.shape[1] != self.X.shape[0] or self.P.shape[0] < 2:
            raise PrivauditError("LabelPacking needs X (m, d) and at least two labellings (K, m)")

    @classmethod
    def from_class(cls, matrix: np.ndarray, domain: np.ndarray, m: int, s: float,
                   ball: float = 4.0) -> "LabelPacking":
        """X = m evenly spread domain points; P = greedy s-packing (rho_X > s) of B_X(h0, ball s)
        among the class's labellings of X, h0 the middle labelling (Lemma 11 with ball = 4)."""
        N = domain.shape[0]
        idx = np.unique(np.linspace(0, N - 1, m).round().astype(int))
        pats = np.unique(np.asarray(matrix)[:, idx].astype(np.int8), axis=0)
        mm = len(idx)
        h0 = pats[len(pats) // 2]
        inside = pats[np.count_nonzero(pats != h0, axis=1) <= ball * s * mm]
        inside = inside[np.argsort(np.count_nonzero(inside != h0, axis=1), kind="stable")]
        chosen: list[np.ndarray] = []
        for row in inside:
            if not chosen or np.count_nonzero(np.asarray(chosen) != row, axis=1).min() > s * mm:
                chosen.append(row)
        return cls(domain[idx], np.asarray(chosen, dtype=np.int8), s)

    @property
    def datasets(self) -> list[Dataset]:
        return [Dataset(self.X, row) for row in self.P]

    def success(self, j: int, predictions: np.ndarray) -> np.ndarray:
        """Runs whose released predictions on X lie in ``B_X(h_j, s/2)``."""
        return np.count_nonzero(predictions != self.P[j], axis=1) <= (self.s / 2) * self.X.shape[0]


__all__ = ["LB5", "SphereBand", "band_mass", "LabelPacking"]
