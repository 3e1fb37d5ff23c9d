"""Corollary 2 with secrecy of the sample (BLM-11 + BLM-12): any target epsilon.

Corollary 2 of Bun, Livni & Moran reaches every privacy level by running an O(1)-private agnostic
learner on a secret random subsample ("secrecy of the sample", Sec. I-A; spec BLM-12): draw a
uniformly random m-subset of the n records (without replacement, in uniformly random order,
independent of the data) and run the inner learner on it. If the inner learner is
(eps0, delta0)-DP under substitution, the wrapper is

    ( ln(1 + (m/n)(e^{eps0} - 1)),  (m/n) delta0 )-DP under substitution

(Balle, Barthe & Gaboardi 2018, Theorem 9: sampling without replacement, substitution
relation). The inner learner here is the Corollary 2 stand-in of `agnostic` (EM relabelling +
M of Theorem 17; (eps0, delta0) = (eps1 + eps_A, delta)), which needs exactly ``m = n_inner``
records (M's ``k m + n'``). For a target epsilon <= eps0 the sampling rate is
``frac = (e^eps - 1)/(e^{eps0} - 1)`` and the wrapper takes datasets of ``n >= n_inner / frac``
records; larger n only lowers m/n, so the claim (eps, frac delta0) holds for every accepted n.

Claim: (epsilon, frac * delta0)-DP, replace-one, model scope (amplification bound, not a
measurement). With M's paper split the inner certified epsilon is eps1 + eps_A/2, and `certified`
is the amplified value of that.

Cost: every run draws its own subsample, so every run is one run of the inner learner on its own
dataset (~10 ms each on the default tiny domain): audit this mode with a few thousand runs.

Planted bug ``s1`` (secrecy mode): the "subsample" is the first m records (no randomness), while
the amplified claim is kept — the spec's B17 for the Corollary 2 pipeline: the true loss is the
inner learner's eps0 for a change among the first m records.

References
----------
M. Bun, R. Livni and S. Moran, "An equivalence between private classification and online
prediction", FOCS 2020, Corollary 2 and Sec. I-A. B. Balle, G. Barthe and M. Gaboardi, "Privacy
amplification by subsampling: tight analyses via couplings and divergences", NeurIPS 2018.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from audit.errors import PrivauditError
from audit.types import Claim, Dataset, as_dataset, as_queries

from ..common.checks import check_runs


def amplified(eps0: float, frac: float) -> float:
    """``ln(1 + frac (e^{eps0} - 1))`` (Balle, Barthe & Gaboardi 2018, WOR + substitution)."""
    return math.log1p(frac * math.expm1(eps0))


def rate_for(epsilon: float, eps0: float) -> float:
    """The sampling rate m/n at which the amplified epsilon equals `epsilon` (<= eps0)."""
    if not 0 < epsilon <= eps0:
        raise PrivauditError(f"blm-c2 secrecy mode: the target epsilon must be in (0, eps0 = {eps0:g}], "
                             f"got {epsilon:g}")
    return math.expm1(epsilon) / math.expm1(eps0)


class SecrecyLearner:
    """The secrecy-of-the-sample wrapper around the Corollary 2 stand-in (`AgnosticLearner`).

    Parameters
    ----------
    inner : AgnosticLearner
        The (eps0, delta0)-DP stand-in; it takes datasets of exactly ``inner.A.n_total`` records.
    epsilon : float
        Target epsilon (0 < epsilon <= eps0).
    first_m : bool
        Planted bug s1: the first m records instead of a uniform random subsample.
    """

    name = "blm-c2"
    chunk_runs = 256

    def __init__(self, inner: Any, epsilon: float, first_m: bool = False) -> None:
        self.inner, self.first_m = inner, first_m
        self.eps0, self.delta0 = inner.claim.epsilon, inner.claim.delta
        self.frac = rate_for(epsilon, self.eps0)
        self.m = int(inner.A.n_total)
        self.n_min = int(math.ceil(self.m / self.frac - 1e-9))
        self.H = inner.H
        self.variant = inner.variant if not first_m else "s1"
        self.claim = Claim(amplified(self.eps0, self.frac), min(self.frac * self.delta0, 0.999),
                           "replace-one", "model")
        ic = inner.certified
        self.certified = None if ic is None else Claim(amplified(ic.epsilon, self.frac),
                                                       self.claim.delta, "replace-one", "model")
        self.pairs: list = []
        self.queries = inner.queries

    def _check(self, data: Any) -> Dataset:
        data = as_dataset(data)
        if data.n < self.n_min:
            raise PrivauditError(f"blm-c2 (secrecy): needs n >= m / frac = {self.m} / {self.frac:.4g} "
                                 f"= {self.n_min} records for the claim, got {data.n}")
        return data

    def subsample(self, n: int, runs: int, rng: np.random.Generator) -> np.ndarray:
        """(runs, m) record indices: each row a uniform m-subset in uniform random order."""
        if self.first_m:
            return np.broadcast_to(np.arange(self.m), (runs, self.m))
        # one draw per run (memory runs x m, not runs x n)
        return np.stack([rng.choice(n, self.m, replace=False) for _ in range(runs)])

    def predict(self, data: Any, queries: Any, runs: int, rng: np.random.Generator) -> np.ndarray:
        data = self._check(data)
        runs = check_runs(runs)
        q = as_queries(queries, data.d)
        if self.first_m:          # the bug is deterministic: one inner call serves every run
            return self.inner.predict(Dataset(data.X[: self.m], data.y[: self.m]), q, runs, rng)
        idx = self.subsample(data.n, runs, rng)
        out = np.empty((runs, q.shape[0]), dtype=np.int8)
        for r in range(runs):     # one inner run per subsample (see the module docstring: cost)
            rows = idx[r]
            out[r] = self.inner.predict(Dataset(data.X[rows], data.y[rows]), q, 1, rng)[0]
        return out

    def design_pair(self, pair: tuple[Dataset, Dataset]) -> tuple[Dataset, Dataset]:
        """An inner design pair placed first, padded to n_min with copies of its last record
        (the same padding on both sides, so the pair still differs in one record)."""
        a, b = pair
        k = self.n_min - a.n
        pad_x, pad_y = np.repeat(a.X[-1:], k, axis=0), np.repeat(a.y[-1:], k)
        return (Dataset(np.vstack([a.X, pad_x]), np.concatenate([a.y, pad_y])),
                Dataset(np.vstack([b.X, pad_x]), np.concatenate([b.y, pad_y])))

    def lift(self, pair: tuple[Dataset, Dataset]) -> tuple[Dataset, Dataset]:
        """`design_pair` as the search's `lift` (`audit.interfaces.HasInner`): with no pairs,
        the search searches ``inner`` and places its short list here, first and padded, as the
        hand-made designs place the inner designs. The correct wrapper's uniform subsample
        reads every position alike; a wrapper whose bug reads other positions than its
        ``lift`` fills would not be found this way (the generic families still run)."""
        return self.design_pair(pair)

    def __repr__(self) -> str:
        return (f"<blm-c2 mode=secrecy variant={self.variant} frac={self.frac:.4g} m={self.m} "
                f"{self.claim.describe()}>")


__all__ = ["SecrecyLearner", "amplified", "rate_for"]
