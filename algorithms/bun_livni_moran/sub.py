"""Secrecy of the sample (BLM-12): privacy amplification by random subsampling.

``A^sub(S)``: draw a uniform ``m``-subset of the ``n`` record indices (without replacement,
independent of the data) and run ``A`` on it. If ``A`` is (eps0, delta0)-DP under substitution,
``A^sub`` is ``(ln(1 + (m/n)(e^eps0 - 1)), (m/n) delta0)``-DP under substitution [BBG18]. Here
``A`` is the GenericLearner over the whole class (pure eps0-DP, one model per run), i.e. the
project's EM learner with subsampling (`df_em.ExponentialMechanismLearner`, ``eta = m/n``), whose
subsample counts are drawn multivariate-hypergeometrically, vectorised over runs.

Claim: ``(ln(1 + (m/n)(e^eps0 - 1)), 0)``-DP, replace-one, model scope.

Planted bug ``b17``: the "subsample" is the first ``m`` records (no randomness) while the
amplified claim is kept: the true loss is eps0 for a change at position 0.

References
----------
M. Bun, R. Livni and S. Moran, FOCS 2020, Sec. I-A ("secrecy of the sample", used by Cor. 2);
B. Balle, G. Barthe and M. Gaboardi, "Privacy amplification by subsampling", NeurIPS 2018.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from audit.errors import PrivauditError
from audit.types import Claim, Dataset, as_dataset

from ..common.checks import check_positive
from ..common.hypotheses import make_class
from ..dagan_feldman.em import ExponentialMechanismLearner
from ..common.variants import Row, describe, row_of
from ..registry import register
from .hist import PAPER, gl_design

@dataclass(frozen=True)
class SubRow(Row):
    """A blm-sub variant: how the m records are chosen."""

    first_m: bool = False        # the first m records (no randomness) instead of a uniform m-subset


SUB_TABLE = {
    "correct": SubRow("uniform m-subset without replacement, then the GenericLearner (eps0-DP)"),
    "b17": SubRow("BUG B17: takes the first m records (no randomness) but keeps the amplified claim",
                  first_m=True),
}
SUB_VARIANTS = describe(SUB_TABLE)


class SubsampledLearner:
    """The subsample wrapper around the GenericLearner; ``frac = m/n``."""

    name = "blm-sub"

    def __init__(self, H, eps0: float, frac: float, variant: str) -> None:
        self.row = row_of(SUB_TABLE, variant, "blm-sub")
        self.H, self.eps0, self.frac, self.variant = H, eps0, frac, variant
        cand = np.arange(H.size)
        self._wor = ExponentialMechanismLearner(H, eps0, cand, frac, False, "correct", self.name)
        self._full = ExponentialMechanismLearner(H, eps0, cand, 0.0, False, "correct", self.name)
        self.claim = Claim(math.log1p(frac * math.expm1(eps0)), 0.0, "replace-one", "model")
        self.chunk_runs = self._wor.chunk_runs

    def m(self, n: int) -> int:
        return int(math.floor(self.frac * n))

    def _first(self, data: Dataset) -> Dataset:
        m = self.m(data.n)
        if m < 1:
            raise PrivauditError(f"blm-sub: m = floor(frac n) = 0 for n = {data.n}")
        return Dataset(data.X[:m], data.y[:m])

    def predict(self, data: Any, queries: Any, runs: int, rng: np.random.Generator) -> np.ndarray:
        data = as_dataset(data)
        if self.row.first_m:
            return self._full.predict(self._first(data), queries, runs, rng)
        return self._wor.predict(data, queries, runs, rng)

    def exact(self, data: Any, queries: Any) -> np.ndarray:
        data = as_dataset(data)
        if self.row.first_m:
            return self._full.exact(self._first(data), queries)
        return self._wor.exact(data, queries)


def sub_design(H, eps0: float, frac: float) -> tuple[Dataset, Dataset, np.ndarray]:
    """Spec 6.3's GenericLearner design with the changed record moved to position 0, padded with
    records on which the two candidates agree, to ``n = ceil(len / frac)`` records."""
    S, S2, q = gl_design(H, eps0, pad=6)
    order = np.r_[S.n - 1, np.arange(S.n - 1)]
    n = int(math.ceil(S.n / frac))
    j = H.N // 2
    extra = n - S.n
    px = np.r_[np.full(extra // 2, j - 1), np.full(extra - extra // 2, j + 1)]
    py = np.r_[np.zeros(extra // 2), np.ones(extra - extra // 2)]
    a = Dataset(np.vstack([S.X[order], H.domain[px]]), np.r_[S.y[order], py])
    b = Dataset(np.vstack([S2.X[order], H.domain[px]]), np.r_[S2.y[order], py])
    return a, b, q


@register("blm-sub", kind="learner", paper=PAPER, section="Sec. I-A (secrecy of the sample) [BBG18]",
          summary="subsampling wrapper: GenericLearner on a uniform m-subset (m = frac n); "
                  "(ln(1 + frac (e^eps0 - 1)), 0)-DP",
          variants=SUB_VARIANTS)
def blm_sub(eps0: float = 2.0, frac: float = 0.25, cls: str = "thr", grid: int = 8,
            variant: str = "correct") -> SubsampledLearner:
    eps0 = check_positive("eps0", eps0)
    frac = check_positive("frac", frac, upper=1.0)
    H = make_class(cls, grid)
    L = SubsampledLearner(H, eps0, frac, variant)
    a, b, q = sub_design(H, eps0, frac)
    L.pairs, L.queries = [(a, b)], q
    return L


__all__ = ["SubsampledLearner", "blm_sub", "SUB_VARIANTS", "SUB_TABLE", "sub_design"]
