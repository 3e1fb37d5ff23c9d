"""Shared, vectorised machinery of the Dagan & Feldman learners (DF-EM, DF-SUB, DF-HT, DF-FLIP).

A dataset is summarised once per `predict` call as *groups*: its distinct (domain point, label)
pairs with multiplicities (`Groups`). A uniform ``n'``-subset of the record indices then has group
counts distributed multivariate-hypergeometrically, so drawing the subsample of many runs at once
costs ``O(runs * #groups)`` instead of ``O(runs * n)``, and gives exactly the same distribution of
``S_I`` (up to the order of records, which no algorithm here looks at).

References
----------
Y. Dagan and V. Feldman, "PAC learning with stable and private predictions", COLT 2020:
Lemma 4 (exponential mechanism), Lemma 5 (subsampling), Section 3 (flip), Section 2.1 (H_T).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from audit import validate
from audit.errors import PrivauditError
from audit.types import Claim, Dataset, as_dataset, as_queries

from ..common.checks import check_runs
from ..common.hypotheses import HypothesisClass

PAPER = "Dagan & Feldman, PAC learning with stable and private predictions (COLT 2020)"


BLOCK = 16_384          # independent fits processed per vectorised block (bounds memory)


@dataclass(frozen=True, eq=False)
class Groups:
    """A dataset grouped by distinct (domain index, label): what every DF learner needs of it.

    Attributes
    ----------
    loc, lab, count : (G,) arrays
        Domain index, label and multiplicity of each group.
    n : int
        Number of records.
    err : (|H|,) int64
        ``err_S(h)`` for every row of the class.
    miss : (G, |H|) float64
        ``miss[g, h] = 1[h(loc_g) != lab_g]``: subsample errors are ``counts @ miss``.
    onehot : (G, N) float64
        Group-to-domain incidence: domain hit set of a subsample is ``counts @ onehot > 0``.
    """

    loc: np.ndarray
    lab: np.ndarray
    count: np.ndarray
    n: int
    err: np.ndarray
    miss: np.ndarray
    onehot: np.ndarray

    @property
    def size(self) -> int:
        return int(self.loc.size)


def summarize(H: HypothesisClass, data: Any) -> Groups:
    """Group ``data`` by (domain point, label) and precompute ``err_S`` over the whole class."""
    data = as_dataset(data)
    if data.n < 1:
        raise PrivauditError("the dataset is empty")
    idx = H.index(data.X)
    key = idx * 2 + data.y.astype(np.int64)
    uk, count = np.unique(key, return_counts=True)
    loc, lab = uk // 2, (uk % 2).astype(np.int8)
    miss = (H.matrix[:, loc].T != lab[:, None]).astype(np.float64)
    err = np.rint(count.astype(np.float64) @ miss).astype(np.int64)
    onehot = np.zeros((loc.size, H.N))
    onehot[np.arange(loc.size), loc] = 1.0
    return Groups(loc, lab, count.astype(np.int64), data.n, err, miss, onehot)


def hit_from_counts(G: Groups, counts: np.ndarray) -> np.ndarray:
    """Domain points present in each subsample: (r, N) bool."""
    return (np.asarray(counts, dtype=np.float64) @ G.onehot) > 0


def check_design_n(n: int) -> int:
    """``n``, the size of a learner's built-in audit datasets: an integer in [8, 1e7]."""
    return validate.integer("n (size of the built-in audit datasets)", n, lo=8, hi=10**7)


class DFLearner:
    """Base of the DF learners: validation, blocking over runs, the Learner contract.

    Subclasses implement ``_fit_eval(G, qidx, rng) -> (k,) int8``: ``k = len(qidx)`` *independent*
    complete runs (fit + predict), run ``i`` evaluated at domain point ``qidx[i]``; fresh
    randomness for every run and every query (spec 5.3). Learners whose model is released whole
    (``per_query = False``) instead implement ``_fit_models(G, r, rng) -> (r,) row indices``.
    """

    name: str = "df"
    claim: Claim
    certified: Claim | None = None
    chunk_runs: int = 200_000
    per_query: bool = True

    def __init__(self, H: HypothesisClass, variant: str) -> None:
        self.H = H
        self.variant = variant

    # the Learner contract ------------------------------------------------------------------------
    def predict(self, data: Any, queries: Any, runs: int, rng: np.random.Generator) -> np.ndarray:
        data = as_dataset(data)
        runs = check_runs(runs)
        q = as_queries(queries, data.d)
        qi = self.H.index(q)
        G = summarize(self.H, data)
        self._check_data(G)
        return self._predict_groups(G, data, qi, runs, rng)

    def _predict_groups(self, G: Groups, data: Dataset, qi: np.ndarray, runs: int,
                        rng: np.random.Generator) -> np.ndarray:
        out = np.empty((runs, qi.size), dtype=np.int8)
        if self.per_query:
            flat = out.reshape(-1)
            qidx = np.tile(qi, runs)
            for s in range(0, qidx.size, BLOCK):
                flat[s:s + BLOCK] = self._fit_eval(G, qidx[s:s + BLOCK], rng)
        else:
            step = max(1, BLOCK // max(qi.size, 1))
            for s in range(0, runs, step):
                h = self._fit_models(G, min(step, runs - s), rng)
                out[s:s + h.size] = self.H.matrix[h[:, None], qi[None, :]]
        return out

    def _check_data(self, G: Groups) -> None:
        pass

    def exact(self, data: Any, queries: Any) -> np.ndarray:
        """Exact ``Pr[label = 1]`` at each query (float64); PrivauditError when too large."""
        data = as_dataset(data)
        q = as_queries(queries, data.d)
        qi = self.H.index(q)
        G = summarize(self.H, data)
        self._check_data(G)
        return self._exact_groups(G, data, qi)

    def _exact_groups(self, G: Groups, data: Dataset, qi: np.ndarray) -> np.ndarray:
        raise PrivauditError(f"{self.name} ({self.variant}) has no exact oracle")

    def __repr__(self) -> str:
        return f"<{self.name} variant={self.variant} {self.claim.describe()}>"
