"""Vectorised machinery of Li, Wang & Ye's transformation (spec IDs M1-M4, A, P1 voting).

A dataset over a finite hypothesis class is summarised once as *cells*: its distinct (domain
point, label) pairs with multiplicities. Every algorithm here depends on the data only through
multisets (the privacy proof of Lemma 15 compares index sets as multisets; the learner A sees a
shuffled ``T^h``), so a uniform ``k``-subset of the record indices is drawn for many runs at once as
multivariate-hypergeometric cell counts -- exactly the distribution of the multiset ``T``.

Building blocks, all vectorised over a block of ``B`` independent runs:

* `relabel_logits` -- M2 (candidate patterns ``Pi_C(T_X)``), M3 (the new score
  ``q(h) = min_f dis_T(h, f) + err_W(f)`` or the classic ``err_T(h)``) and the M1 log-weights;
  the exponential mechanism itself is `algorithms.common.sampling.em_sample` / `em_probs` (Gumbel-free
  inverse-CDF sampling in float64 with the row maximum subtracted), shared with the DF learners.
* `base_outputs` / `base_probs` -- the private realizable learner ``A`` of spec 3.2 run on the
  relabelled dataset: ``EMLearner`` (the generic learner of Kasiviswanathan et al. 2011, pure
  ``eps_A``-DP), ``LocProbe`` (randomized response on "some point sits at u", ``eps_A``-DP) and
  ``DeltaLeakyLearner`` (``EMLearner`` except that with probability ``delta_A`` it returns ERM).
* `mvhg_rows` -- a multivariate hypergeometric draw whose colour counts differ per run (numpy's
  own only takes one colour vector).
* `portion_counts` -- the random disjoint partition of subsample-and-aggregate (P1), drawn by
  the shared exact sampler `algorithms.common.sampling.partition_counts`.

References
----------
X. Li, C. Wang, X. Ye, "Private realizable-to-agnostic transformation with near-optimal sample
complexity", COLT 2025 (arXiv 2510.01291): Algorithm 1, Algorithm 2, Lemma 11, Lemma 15, Lemma 19.
F. McSherry and K. Talwar, FOCS 2007 (exponential mechanism).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from audit.errors import PrivauditError
from audit.types import Dataset, as_dataset

from ..common.hypotheses import (
    HypothesisClass,
    allfun,
    intervals,
    points,
    signed_stumps,
    thresholds,
)
from ..common.sampling import count_distribution, em_probs, em_sample, partition_counts

PAPER = ("Li, Wang & Ye, Private realizable-to-agnostic transformation with near-optimal sample "
         "complexity")
BASES = ("em", "locprobe", "leaky")
MEMORY_FLOATS = 4_000_000      # float64 entries of the (B, K, K) disagreement block


# -- classes on an integer grid ------------------------------------------------------------------
_CLASS_MAKERS = {"thr": thresholds, "thr2": signed_stumps, "int": intervals, "point": points}


@lru_cache(maxsize=32)
def grid_class(cls: str, grid: int) -> HypothesisClass:
    """The preset class ``cls`` on the integer domain ``0, 1, .., grid - 1`` (cached).

    ``thr`` thresholds, ``thr2`` signed stumps, ``int`` intervals, ``point`` point functions,
    ``allfun`` all functions (``grid <= 10``)."""
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or not 2 <= grid <= 256:
        raise PrivauditError(f"grid must be an integer in [2, 256], got {grid!r}")
    if cls == "allfun":
        if grid > 10:
            raise PrivauditError(f"allfun needs grid <= 10 (2^grid concepts), got {grid}")
        return allfun(int(grid))
    if cls not in _CLASS_MAKERS:
        raise PrivauditError(f"unknown class {cls!r}; valid: {', '.join([*_CLASS_MAKERS, 'allfun'])}")
    return _CLASS_MAKERS[cls](int(grid), 0.0, float(grid - 1))


@lru_cache(maxsize=32)
def _xor(H: HypothesisClass) -> np.ndarray:
    """``X[h, f, x] = 1[h(x) != f(x)]`` flattened to (K*K, N) float64 for one matmul per block."""
    M = H.matrix.astype(bool)
    return (M[:, None, :] != M[None, :, :]).reshape(-1, H.N).astype(np.float64)


def block_size(H: HypothesisClass) -> int:
    return max(1, MEMORY_FLOATS // (H.size * H.size))


# -- data summary -----------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Cells:
    """A dataset as distinct (domain index, label) cells: ``loc``, ``lab``, ``count`` (G,) and the
    cell-to-domain incidence ``onehot`` (G, N); ``order`` maps each record to its cell."""

    loc: np.ndarray
    lab: np.ndarray
    count: np.ndarray
    onehot: np.ndarray
    order: np.ndarray
    n: int

    def domain_counts(self, counts: np.ndarray, label: int | None = None) -> np.ndarray:
        """Per-domain-point counts (B, N) of cell counts (B, G), optionally of one label only."""
        c = np.asarray(counts, dtype=np.float64)
        if label is not None:
            c = c * (self.lab == label)
        return c @ self.onehot

    def first_records(self, k: int) -> np.ndarray:
        """Cell counts of the records at indices ``0 .. k-1`` (the deterministic split of V5)."""
        return np.bincount(self.order[:k], minlength=self.loc.size).astype(np.int64)


def cells_of(H: HypothesisClass, data: Dataset) -> Cells:
    data = as_dataset(data)
    if data.n < 1:
        raise PrivauditError("the dataset is empty")
    idx = H.index(data.X)
    key = idx * 2 + data.y.astype(np.int64)
    uk, order, count = np.unique(key, return_inverse=True, return_counts=True)
    loc, lab = uk // 2, (uk % 2).astype(np.int8)
    onehot = np.zeros((loc.size, H.N))
    onehot[np.arange(loc.size), loc] = 1.0
    return Cells(loc, lab, count.astype(np.int64), onehot, order.reshape(-1), data.n)


def subsample_counts(count: np.ndarray, k: int, runs: int, rng: np.random.Generator) -> np.ndarray:
    """M4's sampler: cell counts of ``runs`` uniform ``k``-subsets (without replacement), (runs, G)."""
    if k == int(count.sum()):
        return np.broadcast_to(count, (runs, count.size)).astype(np.int64)
    # numpy's "count" method (a partial shuffle, ~min(k, n - k) steps per run) has the same exact
    # law as "marginals" (one hypergeometric draw per cell) and is far cheaper for small k
    n = int(count.sum())
    method = "count" if 8 * min(k, n - k) < 60 * count.size else "marginals"
    return rng.multivariate_hypergeometric(count, k, size=runs, method=method).astype(np.int64)


def with_replacement_counts(count: np.ndarray, m: int, runs: int, rng: np.random.Generator) -> np.ndarray:
    """W1's sampler: cell counts of ``m`` i.i.d. uniform record draws (with replacement)."""
    return rng.multinomial(m, count / count.sum(), size=runs).astype(np.int64)


def mvhg_rows(colors: np.ndarray, m: np.ndarray | int, rng: np.random.Generator) -> np.ndarray:
    """One multivariate hypergeometric draw per row, each row with its own colour counts.

    Parameters
    ----------
    colors : (B, C) int
    m : int or (B,) int, at most the row totals.

    Returns
    -------
    (B, C) int64: how many of each colour a uniform ``m``-subset of the row's items holds.
    """
    colors = np.asarray(colors, dtype=np.int64)
    B, C = colors.shape
    need = np.broadcast_to(np.asarray(m, dtype=np.int64), (B,)).copy()
    rest = colors.sum(axis=1)
    out = np.zeros((B, C), dtype=np.int64)
    for c in np.flatnonzero(colors.any(axis=0)):
        good = colors[:, c]
        rest = rest - good
        x = rng.hypergeometric(good, rest, need) if need.any() else np.zeros(B, np.int64)
        out[:, c] = x
        need = need - x
    return out


# -- M2/M3/M1: the relabelling step -----------------------------------------------------------------
@dataclass(frozen=True)
class RelabelRule:
    """How the relabelling EM is built (the correct rule and the planted bugs of spec 4.4).

    score : "new" (Algorithm 1, ``min_f dis_T(h,f) + err_W(f)``), "classic" (``err_T(h)``,
        Baseline-A/C), "new+errT" (V4: adds T's labels), "naive" (V18: ``err_{T o W}(h)``).
    scale : the coefficient c in the log-weights ``-c * score``.
    argmax : V1, no privacy in the relabelling (deterministic best pattern, lowest row on ties).
    patterns_from_s : V7, candidate patterns of ``S_X`` instead of ``T_X``.
    rep_rule : representative of each pattern ("first"/"last" row) for the invariance test.
    """

    score: str
    scale: float
    argmax: bool = False
    patterns_from_s: bool = False
    rep_rule: str = "first"


@dataclass
class RelabelBlock:
    """One block of relabelling outcomes: the log-weights over all rows (-inf off the candidate
    set), T's domain counts and the pairwise disagreement counts on ``T_X``."""

    logits: np.ndarray        # (B, K)
    wT: np.ndarray            # (B, N)
    dis: np.ndarray           # (B, K, K) counts: dis[b, h, f] = #T points where h != f


def relabel_logits(H: HypothesisClass, cells: Cells, tc: np.ndarray, rule: RelabelRule) -> RelabelBlock:
    """Candidate set and scores of Algorithm 1 (or the classic EM) for each row of T counts ``tc``."""
    tc = np.atleast_2d(tc)
    B, K = tc.shape[0], H.size
    wT = cells.domain_counts(tc)
    k = float(tc[0].sum())
    dis = (wT @ _xor(H).T).reshape(B, K, K)
    Mf = H.matrix.astype(np.float64)
    if rule.score in ("new", "new+errT"):
        wc = cells.count[None, :] - tc
        nW = float(wc[0].sum())
        if nW <= 0:
            raise PrivauditError("W is empty: the subsample took every record (need ceil(eps n) < n)")
        w0, w1 = cells.domain_counts(wc, 0), cells.domain_counts(wc, 1)
        errW = (w0 @ Mf.T + w1 @ (1.0 - Mf).T) / nW                          # (B, K) fractions
        score = (dis / k + errW[:, None, :]).min(axis=2)                     # q(h), (B, K)
        if rule.score == "new+errT":
            t0, t1 = cells.domain_counts(tc, 0), cells.domain_counts(tc, 1)
            score = score + (t0 @ Mf.T + t1 @ (1.0 - Mf).T) / k
    elif rule.score in ("classic", "naive"):
        src = tc if rule.score == "classic" else np.broadcast_to(cells.count, tc.shape)
        t0, t1 = cells.domain_counts(src, 0), cells.domain_counts(src, 1)
        score = (t0 @ Mf.T + t1 @ (1.0 - Mf).T) / float(src[0].sum())
    else:  # pragma: no cover - rules are built internally
        raise PrivauditError(f"unknown score {rule.score!r}")
    hit = wT > 0
    if rule.patterns_from_s:
        hit = np.broadcast_to(cells.onehot.sum(axis=0) > 0, wT.shape)
    reps = H.rep_mask(hit, rule.rep_rule)
    logits = np.where(reps, -rule.scale * score, -np.inf)
    return RelabelBlock(logits, wT, dis)


def pick(logits: np.ndarray, argmax: bool, rng: np.random.Generator) -> np.ndarray:
    """M1: one exponential-mechanism draw per row (or the deterministic argmax of bug V1)."""
    if argmax:
        return np.argmax(logits, axis=1)
    return em_sample(logits, None, rng)


def pick_probs(logits: np.ndarray, argmax: bool) -> np.ndarray:
    """Exact M1 probabilities per row (one-hot argmax for V1)."""
    if argmax:
        P = np.zeros(logits.shape)
        P[np.arange(logits.shape[0]), np.argmax(logits, axis=1)] = 1.0
        return P
    return em_probs(logits)


# -- the private realizable learner A (spec 3.2 / 3.4) ----------------------------------------------
@dataclass(frozen=True)
class Base:
    """The (eps_A, delta_A)-DP algorithm A run on the relabelled dataset.

    kind : "em" (EMLearner over the whole class), "locprobe" (RR of "a point sits at domain index
        ``u``"), "leaky" (DeltaLeakyLearner: EMLearner, but ERM with probability ``delta_A``).
    """

    kind: str = "em"
    eps_A: float = 1.0
    delta_A: float = 0.0
    u: int = 2

    @property
    def keep(self) -> float:
        return 1.0 / (1.0 + math.exp(-self.eps_A))


def base_outputs(H: HypothesisClass, base: Base, h: np.ndarray, wT: np.ndarray, dis: np.ndarray,
                 qidx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Run A once per row on ``T^h`` (domain counts ``wT``, labels ``h``); predictions (B, q) int8.

    ``dis[b, h_b, c]`` is the error count of concept c on ``T^h`` (it disagrees with h there)."""
    B = h.size
    if base.kind == "locprobe":
        b = wT[:, base.u] > 0
        flip = rng.random(B) >= base.keep
        return np.repeat((b ^ flip).astype(np.int8)[:, None], qidx.size, axis=1)
    err = dis[np.arange(B), h]                                          # (B, K)
    logits = -0.5 * base.eps_A * err
    g = em_sample(logits, None, rng)
    if base.kind == "leaky":
        erm = np.argmax(logits, axis=1)
        g = np.where(rng.random(B) < base.delta_A, erm, g)
    elif base.kind != "em":  # pragma: no cover
        raise PrivauditError(f"unknown base learner {base.kind!r}; valid: {', '.join(BASES)}")
    return H.matrix[g[:, None], qidx[None, :]]


def base_probs(H: HypothesisClass, base: Base, wT: np.ndarray, dis: np.ndarray,
               qidx: np.ndarray) -> np.ndarray:
    """Exact ``Pr[A(T^h)(x_q) = 1]`` for every row b and every candidate h: (B, K, q)."""
    B, K = dis.shape[0], dis.shape[1]
    if base.kind == "locprobe":
        p = np.where(wT[:, base.u] > 0, base.keep, 1.0 - base.keep)
        return np.broadcast_to(p[:, None, None], (B, K, qidx.size)).copy()
    logits = -0.5 * base.eps_A * dis.reshape(B * K, K)
    P = em_probs(logits)
    if base.kind == "leaky":
        P = (1.0 - base.delta_A) * P + base.delta_A * pick_probs(logits, True)
    Mq = H.matrix[:, qidx].astype(np.float64)
    return (P @ Mq).reshape(B, K, qidx.size)


def enumerate_subsamples(count: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every cell-count vector of a uniform ``k``-subset with its probability (spec 4.6)."""
    return count_distribution(np.asarray(count, dtype=np.int64), int(k))


# -- P1: subsample-and-aggregate votes ----------------------------------------------------------------
def portion_counts(wT_lab: np.ndarray, r: int, rng: np.random.Generator) -> np.ndarray:
    """Random disjoint partition into ``r`` portions of ``floor(k/r)`` items (leftover dropped).

    wT_lab : (B, C) counts of the items' colours (cells), every row with the same total ``k``.
    Returns (B, r, C), the exact law of a uniformly random partition, independently per row
    (`df_common.partition_counts`, the sampler of the Dagan-Feldman block learners too)."""
    wT_lab = np.asarray(wT_lab)
    k = int(wT_lab[0].sum())
    return partition_counts(wT_lab.astype(np.int64), np.full(r, k // r), rng)


def portion_counts_shared(colors: np.ndarray, r: int, runs: int, rng: np.random.Generator) -> np.ndarray:
    """`portion_counts` for ``runs`` rows that share one colour vector (C,): (runs, r, C)."""
    colors = np.asarray(colors, dtype=np.int64)
    return partition_counts(colors, np.full(r, int(colors.sum()) // r), rng, runs)


def consistent_rows(miss: np.ndarray, rule: str = "first") -> np.ndarray:
    """Spec 3.3 ConsistentLearner per portion: the first (or last) concept with zero error, else
    the first minimum-error concept. ``miss`` (..., K) error counts."""
    zero = miss == 0
    if rule == "last":
        has = zero.any(axis=-1)
        last = miss.shape[-1] - 1 - np.argmax(zero[..., ::-1], axis=-1)
        return np.where(has, last, np.argmin(miss, axis=-1))
    return np.where(zero.any(axis=-1), np.argmax(zero, axis=-1), np.argmin(miss, axis=-1))


def aggregate(v1: np.ndarray, r: int, eps_agg: float, mode: str, rng: np.random.Generator) -> np.ndarray:
    """Lemma 19's aggregation: EM over the two labels with score = votes (sensitivity 1):
    ``Pr[y] ~ exp(eps_agg v_y / 2)``. ``mode``: "em" (correct), "majority" (V12: no noise, ties
    to 1), "em2" (V13: ``exp(eps_agg v_y)``, the temperature halved)."""
    z = (2.0 * v1 - r)
    if mode == "majority":
        return (z >= 0).astype(np.int8)
    factor = eps_agg if mode == "em2" else eps_agg / 2.0
    p1 = 1.0 / (1.0 + np.exp(-factor * z))
    return (rng.random(v1.shape) < p1).astype(np.int8)


def r_portions(alpha: float, eps_agg: float) -> int:
    """Lemma 19: ``r = ceil(6 ln(4/alpha) / eps_agg)``."""
    return int(math.ceil(6.0 * math.log(4.0 / alpha) / eps_agg - 1e-12))


# -- certified claims (spec 4.1 / 5.3) -------------------------------------------------------------
def k_of(eps: float, n: int) -> int:
    """Algorithm 2: ``|I| = ceil(eps n)`` (guarded against float round-up, e.g. 0.1*30)."""
    return int(math.ceil(eps * n - 1e-9))


def n2_certified(eps: float, n: int, eps_A: float, delta_A: float) -> tuple[float, float]:
    """Lemma 15 with explicit constants [spec N2, derived]: a2 = exp(eps n / k),
    ``(ln(e^eps + 4 a2 e^eps_A k/(n-k)), 4 a2 delta_A k/n)``."""
    k = k_of(eps, n)
    a2 = math.exp(eps * n / k)
    return (math.log(math.exp(eps) + 4 * a2 * math.exp(eps_A) * k / (n - k)),
            min(4 * a2 * delta_A * k / n, 0.999))


def n2_paper(eps: float, eps_A: float, delta_A: float) -> tuple[float, float]:
    """Lemma 15 as proved in App. B, free of n: ``a2 <= e`` and ``k/(n-k) <= 6 eps``, ``k/n <= 2 eps``
    (needs eps n >= 1 and eps <= 1/3): ``(ln(e^eps + 24 e^(1+eps_A) eps), 8 e eps delta_A)``."""
    return (math.log(math.exp(eps) + 24.0 * math.e * math.exp(eps_A) * eps),
            min(8.0 * math.e * eps * delta_A, 0.999))


def b1_certified(eps_EM: float, eps_A: float, delta_A: float) -> tuple[float, float]:
    """Baseline-A [spec B1, derived from App. B case 2]: ``(eps_EM + eps_A + 2 ln 2, 4 e^eps_EM delta_A)``."""
    return eps_EM + eps_A + 2 * math.log(2.0), min(4 * math.exp(eps_EM) * delta_A, 0.999)


def amplified(eps0: float, delta0: float, frac: float) -> tuple[float, float]:
    """M4 [Balle, Barthe & Gaboardi 2018; substitution, without replacement]:
    ``(ln(1 + frac (e^eps0 - 1)), frac delta0)``."""
    return math.log1p(frac * math.expm1(eps0)), frac * delta0


__all__ = ["PAPER", "BASES", "Cells", "cells_of", "grid_class", "subsample_counts",
           "with_replacement_counts", "mvhg_rows", "RelabelRule", "RelabelBlock", "relabel_logits",
           "pick", "pick_probs", "Base", "base_outputs", "base_probs", "enumerate_subsamples",
           "portion_counts", "portion_counts_shared", "consistent_rows", "aggregate", "r_portions",
           "k_of", "n2_certified",
           "n2_paper", "b1_certified", "amplified", "block_size"]
