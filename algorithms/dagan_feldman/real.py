"""DF-REAL: the realizable PAC learner with private prediction ``A^R`` (Dagan & Feldman, Lemma 6).

The paper uses ``A^R_{eps,alpha,H}`` as a black box, citing Dwork & Feldman 2018 [DF18, Thm 4.1]:
"training several models on disjoint subsets of data and using standard private aggregation".
The reconstruction (spec `dagan_feldman.md` section 3.6) is

1. split the records into ``k`` disjoint blocks by a data-independent partition (fresh random
   permutation per run, or a fixed one -- spec section 5.3 / negative control NC-5);
2. train ERM (first-row tie-break, part A's `HypothesisClass` order) on every block;
3. count the votes ``c_1`` for label 1 at the query, ``c_0 = k - c_1``;
4. release label 1 with probability ``exp(eps_R c_1/2) / (exp(eps_R c_1/2) + exp(eps_R c_0/2))
   = sigma(eps_R (2 c_1 - k)/2)`` -- the exponential mechanism over the two labels with the
   sensitivity-1 utility ``c_y``.

Claim: ``eps_R``-private prediction (pure), replace-one, prediction scope. Replace-one changes one
block, hence each vote count by at most one; the vote-EM is ``eps_R``-DP conditionally on every
data-independent partition.

This module also holds the vectorised block machinery (block counts per run, batched block ERM,
vote aggregation) reused by DF-PP2 (`df_pp2`) and the baselines (`df_baselines`).

References
----------
Y. Dagan and V. Feldman, "PAC learning with stable and private predictions", COLT 2020,
Lemma 6, Lemma 8, Remark 2.
C. Dwork and V. Feldman, "Privacy-preserving prediction", COLT 2018, Theorem 4.1 [DF18].
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable

import numpy as np

from audit.errors import PrivauditError
from audit.types import Claim, Dataset, as_dataset, as_queries

from ..common.hypotheses import HypothesisClass, make_class
from ..common.sampling import (
    PARTITION_MAX_ITEMS,
    partition_counts,
    partition_method,
    skinny_matmul,
)
from ..common.checks import check_positive, check_runs
from ..common.variants import Row, describe, row_of
from ..registry import register

PAPER = "Dagan & Feldman, PAC learning with stable and private predictions (COLT 2020)"
DF18 = "Dwork & Feldman, Privacy-preserving prediction (COLT 2018), Thm 4.1"
PARTITIONS = ("random", "fixed")
AGGREGATORS = ("em", "em-no-half", "majority", "laplace")

# float32 entries of one block-ERM error matrix (runs x blocks x |H|): bounds memory, stays in cache
ERM_CHUNK = 1 << 20


def sigmoid(t: np.ndarray) -> np.ndarray:
    t = np.asarray(t, dtype=np.float64)
    return np.exp(-np.logaddexp(0.0, -t))


def flip_labels(out: np.ndarray, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """DF-FLIP: randomized response on the released label, a fresh coin per (run, query)."""
    return (out ^ (rng.random(out.shape) < alpha)).astype(np.int8)


# ---------------------------------------------------------------------------------------------
# data on the class's domain
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Prepared:
    """A dataset and queries mapped onto the distinct domain points they use.

    ``locs``: the L distinct domain indices used by the records (sorted); ``rec_loc`` (n,) the
    position of each record's point in ``locs``; ``P`` = ``H.matrix[:, locs]`` as float64 (for
    batched error counts); ``Pq`` = ``H.matrix[:, query indices]`` (|H|, q).
    """

    H: HypothesisClass
    n: int
    y: np.ndarray
    locs: np.ndarray
    rec_loc: np.ndarray
    qidx: np.ndarray
    P: np.ndarray
    Pq: np.ndarray

    @cached_property
    def c0(self) -> np.ndarray:
        return np.bincount(self.rec_loc[self.y == 0], minlength=len(self.locs))

    @cached_property
    def c1(self) -> np.ndarray:
        return np.bincount(self.rec_loc[self.y == 1], minlength=len(self.locs))

    @cached_property
    def P32(self) -> np.ndarray:
        return self.P.astype(np.float32)

    @cached_property
    def PT32(self) -> np.ndarray:
        """``P.T`` as C-contiguous float32 (L, |H|)."""
        return np.ascontiguousarray(self.P32.T)

    @cached_property
    def _cells(self) -> tuple[np.ndarray, np.ndarray]:
        return np.unique(self.rec_loc * 2 + self.y, return_counts=True)

    @property
    def cell_loc(self) -> np.ndarray:
        """Location (index into ``locs``) of each cell = distinct (location, label) of the records."""
        return self._cells[0] // 2

    @property
    def cell_lab(self) -> np.ndarray:
        return self._cells[0] % 2

    @property
    def cell_size(self) -> np.ndarray:
        """Records per cell (G,)."""
        return self._cells[1]

    @cached_property
    def miss32(self) -> np.ndarray:
        """``miss[g, h] = 1[h(loc_g) != lab_g]`` (G, |H|) float32: block errors are ``counts @ miss``."""
        return (self.P.T[self.cell_loc] != self.cell_lab[:, None]).astype(np.float32)

    @cached_property
    def err_all(self) -> np.ndarray:
        """``err_S(h)`` for every row of H: int64 (|H|,)."""
        return batched_errors(self.c0[None].astype(np.float64), self.c1[None].astype(np.float64), self.P)[0]


# Recently prepared (class, data, queries), by content: an audit calls `predict` once per chunk
# on the same data and queries -- tens of times in a sequential audit's small rounds -- and the
# mapping onto the domain (~0.4 ms) would otherwise be paid every time, with the lazily built
# matrices of `Prepared` (P32, miss32, err_all) rebuilt too. Only small entries are kept.
PREPARED_CACHE = 8
PREPARED_CACHE_BYTES = 1 << 21
_PREPARED: OrderedDict[tuple, Prepared] = OrderedDict()


def _content_key(H: HypothesisClass, data: Dataset, q: np.ndarray) -> tuple:
    h = hashlib.blake2b(digest_size=16)
    for a in (np.ascontiguousarray(data.X, np.float64), np.ascontiguousarray(data.y, np.int64),
              np.ascontiguousarray(q, np.float64)):
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return id(H), h.digest()


def prepare(H: HypothesisClass, data: Any, queries: Any) -> Prepared:
    """The records and queries on H's domain (see `Prepared`); the arrays are read-only."""
    data = as_dataset(data)
    if data.n < 1:
        raise PrivauditError("the dataset must hold at least one record")
    if data.d != H.d:
        raise PrivauditError(f"records have {data.d} features but hypothesis class {H.name} has {H.d}")
    q = as_queries(queries, data.d)
    key = _content_key(H, data, q)
    hit = _PREPARED.get(key)
    if hit is not None and hit.H is H:   # an entry holds its H, so its id is not reused meanwhile
        try:
            _PREPARED.move_to_end(key)
        except KeyError:                 # dropped meanwhile by another thread: still valid
            pass
        return hit
    idx = H.index(data.X)
    locs, rec_loc = np.unique(idx, return_inverse=True)
    qidx = H.index(q)
    M = H.matrix
    prep = Prepared(H, data.n, data.y.astype(np.int64), locs, rec_loc.astype(np.int64), qidx,
                    M[:, locs].astype(np.float64), M[:, qidx].astype(np.int8))
    for a in (prep.y, prep.locs, prep.rec_loc, prep.qidx, prep.P, prep.Pq):
        a.setflags(write=False)      # shared between calls: nobody may write into them
    if prep.P.nbytes + prep.Pq.nbytes <= PREPARED_CACHE_BYTES:
        _PREPARED[key] = prep
        while len(_PREPARED) > PREPARED_CACHE:
            try:
                _PREPARED.popitem(last=False)
            except KeyError:
                break
    return prep


def batched_errors(c0: np.ndarray, c1: np.ndarray, P: np.ndarray) -> np.ndarray:
    """``err(h) = sum_l P[h,l] c0_l + (1 - P[h,l]) c1_l`` for count batches (..., L): (..., |H|)."""
    shape = c0.shape[:-1]
    a = (c0 - c1).reshape(-1, c0.shape[-1])
    err = a @ P.T
    err += c1.reshape(-1, c1.shape[-1]).sum(axis=1, keepdims=True)
    return np.rint(err).astype(np.int64).reshape(shape + (P.shape[0],))


# ---------------------------------------------------------------------------------------------
# partitions and block counts
# ---------------------------------------------------------------------------------------------
def block_of_position(n: int, k: int) -> np.ndarray:
    """Block id of each position of an ordering: ``array_split`` sizes floor/ceil(n/k)."""
    sizes = [len(b) for b in np.array_split(np.arange(n), k)]
    return np.repeat(np.arange(k), sizes)


def counts_from_ids(ids: np.ndarray, rec_loc: np.ndarray, y: np.ndarray, k: int, L: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Per run and block, label-0 and label-1 counts per location: two (runs, k, L) arrays."""
    runs = ids.shape[0]
    key = (rec_loc * 2 + y).astype(np.int64)
    big = runs * k * L * 2 >= 2**31
    dt = np.int64 if big else np.int32
    flat = (np.arange(runs, dtype=dt)[:, None] * k + ids.astype(dt)) * (2 * L) + key.astype(dt)[None, :]
    c = np.bincount(flat.ravel(), minlength=runs * k * L * 2).reshape(runs, k, L, 2)
    return c[..., 0], c[..., 1]


def random_block_counts(prep: Prepared, k: int, runs: int, rng: np.random.Generator
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Label counts per (run, block, location) under fresh random balanced partitions: two
    (runs, k, L) arrays (the shared exact sampler `df_common.partition_counts` over the cells)."""
    T = partition_counts(prep.cell_size, block_sizes(prep.n, k), rng, runs)      # (runs, k, G)
    c = np.zeros((runs, k, len(prep.locs), 2), np.int64)
    c[:, :, prep.cell_loc, prep.cell_lab] = T
    return c[..., 0], c[..., 1]


def block_sizes(n: int, k: int) -> np.ndarray:
    """Sizes of the ``k`` blocks (``array_split``: floor/ceil(n/k), larger blocks first)."""
    return np.bincount(block_of_position(n, k), minlength=k)


def erm_vote_counts(T: np.ndarray, W: np.ndarray, Pq: np.ndarray, sign: np.ndarray | None = None
                    ) -> np.ndarray:
    """ERM (first row among minimum error) on every block of every run, votes for 1 at the queries.

    T : (runs, k, G) block counts; W : (G, |H|) float32 with block errors ``T[r, b] @ W`` up to a
    per-block constant (a constant shift does not move the argmin); ``sign`` (runs, G), optional:
    per-run factors applied to the counts first (DF-PP2's relabelling by the run's h). Errors are
    integers below 2^24, so the float32 matrix product is exact and ties keep the first index.
    Returns (runs, q) int64 vote counts ``c_1``.
    """
    runs, k, G = T.shape
    out = np.empty((runs, Pq.shape[1]), np.int64)
    step = max(1, ERM_CHUNK // max(k * max(G, W.shape[1]), 1))
    for s in range(0, runs, step):
        a = T[s:s + step].astype(np.float32)
        if sign is not None:
            a *= sign[s:s + step, None, :]
        h = np.argmin(skinny_matmul(a.reshape(-1, G), W), axis=1)
        out[s:s + step] = Pq[h].reshape(-1, k, Pq.shape[1]).sum(axis=1, dtype=np.int64)
    return out


def random_partition_votes(cell_size: np.ndarray, n: int, k: int, W: np.ndarray, Pq: np.ndarray,
                           runs: int, rng: np.random.Generator, sign: np.ndarray | None = None,
                           overlap: bool = False) -> np.ndarray:
    """Vote counts ``c_1`` (runs, q) of ``k`` block ERMs under fresh random balanced partitions.

    Samples the blocks' cell counts (`partition_counts`, exact) and runs `erm_vote_counts`, a
    memory-bounded chunk of runs at a time. ``overlap`` (planted bug BV-REAL-1): model ``b``
    trains on blocks ``b`` and ``b + 1``.
    """
    out = np.empty((runs, Pq.shape[1]), np.int64)
    sizes = block_sizes(n, k)
    method = partition_method(cell_size, sizes)
    step = max(1, 2 * ERM_CHUNK // (k * max(len(cell_size), 1)))
    if method == "items":                  # one shuffle chunk at a time, straight into the ERM
        step = min(step, max(1, PARTITION_MAX_ITEMS // n))
    for s in range(0, runs, step):
        r = min(step, runs - s)
        T = partition_counts(cell_size, sizes, rng, r, method=method)
        if overlap:
            T = T + np.roll(T, -1, axis=1)
        out[s:s + r] = erm_vote_counts(T, W, Pq, None if sign is None else sign[s:s + r])
    return out


def fixed_block_counts(prep: Prepared, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Counts (1, k, L) for one given block-id vector (n,)."""
    return counts_from_ids(ids[None, :], prep.rec_loc, prep.y, k, len(prep.locs))


def block_votes(c0: np.ndarray, c1: np.ndarray, prep: Prepared) -> np.ndarray:
    """ERM (first row among minimum error) on every block; its labels at the queries.

    c0, c1: (runs, k, L) counts. Returns (runs, k, q) int8 votes. Errors are integers below
    2^24, so float32 arithmetic is exact and the first-index tie-break is preserved.
    """
    shape = c0.shape[:-1]
    a = (c0 - c1).reshape(-1, c0.shape[-1]).astype(np.float32)
    err = a @ prep.P32.T
    # in place: a second (runs, |H|) temporary costs ~10x the addition itself at 10^3-10^4 runs
    err += c1.reshape(-1, c1.shape[-1]).sum(axis=1, keepdims=True).astype(np.float32)
    h = np.argmin(err, axis=-1).reshape(shape)
    return prep.Pq[h]


def aggregate(c1: np.ndarray, k: int, eps_R: float, rule: str, rng: np.random.Generator) -> np.ndarray:
    """Turn vote counts ``c1`` (runs, q) of ``k`` voters into released labels (runs, q) int8."""
    c1 = np.asarray(c1, dtype=np.float64)
    if rule == "em":
        return (rng.random(c1.shape) < sigmoid(eps_R * (2 * c1 - k) / 2)).astype(np.int8)
    if rule == "em-no-half":                                    # BV-REAL-3
        return (rng.random(c1.shape) < sigmoid(eps_R * (2 * c1 - k))).astype(np.int8)
    if rule == "majority":                                      # BV-REAL-4; ties -> 1
        return (2 * c1 >= k).astype(np.int8)
    if rule == "laplace":                                       # BV-REAL-5, Lap(1/eps_R)
        noise = rng.laplace(0.0, 1.0 / eps_R, size=(2,) + c1.shape)
        return (c1 + noise[1] > (k - c1) + noise[0]).astype(np.int8)
    raise PrivauditError(f"unknown aggregator {rule!r}; valid: {', '.join(AGGREGATORS)}")


def aggregate_prob(c1: np.ndarray, k: int, eps_R: float, rule: str) -> np.ndarray:
    """Exact ``Pr[label = 1]`` of `aggregate` for given vote counts."""
    c1 = np.asarray(c1, dtype=np.float64)
    if rule == "em":
        return sigmoid(eps_R * (2 * c1 - k) / 2)
    if rule == "em-no-half":
        return sigmoid(eps_R * (2 * c1 - k))
    if rule == "majority":
        return (2 * c1 >= k).astype(np.float64)
    if rule == "laplace":
        # L0 - L1 is a difference of two Lap(b): P[L0 - L1 < g] = 1 - (1/2)(1 + |g|/(2b)) e^{-|g|/b}
        b = 1.0 / eps_R
        g = 2 * c1 - k
        tail = 0.5 * (1 + np.abs(g) / (2 * b)) * np.exp(-np.abs(g) / b)
        return np.where(g >= 0, 1 - tail, tail)
    raise PrivauditError(f"unknown aggregator {rule!r}; valid: {', '.join(AGGREGATORS)}")


def default_k(eps_R: float, alpha: float) -> int:
    """``k = ceil(4 ln(2/alpha) / eps_R)`` blocks (spec 3.6): margin > k/2 then leaves error
    ``exp(-eps_R k/4) <= alpha/2``."""
    return max(1, math.ceil(4 * math.log(2 / alpha) / eps_R))


# ---------------------------------------------------------------------------------------------
# default adversarial pairs (spec 5.4) on the THR grid
# ---------------------------------------------------------------------------------------------
def grid_point(H: HypothesisClass, j: int) -> np.ndarray:
    return H.domain[j]


def pair_unanimous(H: HypothesisClass, n: int, q: int) -> tuple[Dataset, Dataset]:
    """D5 (partition-free form): 0s left of the query, 1s right, the record at the query.

    With first-row (leftmost) ERM on THR, a block without a point at ``x_q`` votes 1 at ``x_q``;
    the block holding the record votes ``y``. So ``c_1 = k - 1`` under S (record ``(x_q, 0)``)
    and ``c_1 = k`` under S' (record ``(x_q, 1)``) for *every* partition: loss
    ``ln((1 + e^{eps k/2}) / (1 + e^{eps (k-2)/2}))`` -> eps_R.
    """
    left, right = list(range(max(0, q - 4), q)), list(range(q + 1, min(H.N, q + 5)))
    xs = [left[i % len(left)] if i % 2 == 0 else right[i % len(right)] for i in range(n - 1)]
    ys = [0 if i % 2 == 0 else 1 for i in range(n - 1)]
    X = H.domain[np.array(xs + [q])]
    S = Dataset(X, np.array(ys + [0]))
    return S, S.replace(n - 1, H.domain[q], 1)


def pair_vote_margin(H: HypothesisClass, k: int, q: int, ones: int) -> tuple[Dataset, Dataset]:
    """D5 at a chosen vote margin: ``n = k`` records, all at ``x_q``, so every block is one record.

    ``ones`` records are ``(x_q, 1)`` and ``k - ones`` are ``(x_q, 0)`` in S; S' relabels one
    ``(x_q, 0)`` to 1. A one-record block's ERM (first consistent row) votes the record's label,
    so ``c_1 = ones`` under S and ``ones + 1`` under S' for *every* partition, random or fixed.
    The unanimous D5 (`pair_unanimous`) puts the released label's rare side at probability about
    ``e^{-eps_R k/2}`` (6e-6 at the defaults): a doubled leak there is invisible at 1e6 runs. Here
    the margin is free: with ``ones = ceil((k + 2/eps_R)/2)`` the vote-EM logit under S is about
    2, so label 0 has probability ~0.27 (S) vs ~0.12 (S') for the correct aggregator (loss 0.81 <
    eps_R = 1 at k = 12), while a 2 eps_R aggregator (BV-REAL-3 / BV-REAL-5) gives 0.12 vs 0.018
    (loss 1.89) or 0.135 vs 0.027 (loss 1.60).
    """
    if not 0 <= ones < k:
        raise PrivauditError(f"pair_vote_margin: ones must be in [0, k - 1] = [0, {k - 1}], got {ones}")
    y = np.array([1] * ones + [0] * (k - ones), dtype=np.int8)
    S = Dataset(np.repeat(H.domain[[q]], k, axis=0), y)
    return S, S.replace(k - 1, H.domain[q], 1)


def margin_ones(k: int, eps_R: float) -> int:
    """Votes for 1 under S in `pair_vote_margin` that put a ``2 eps_R`` aggregator's rare label near
    its most certifiable point: vote-EM-without-1/2 logit ``eps_R (2 c_1 - k) ~ 2`` under S."""
    return int(min(k - 1, max(0, math.ceil((k + 2 / eps_R) / 2))))


def pair_majority_edge(H: HypothesisClass, n: int, q: int, k: int) -> tuple[Dataset, Dataset]:
    """Votes at the majority boundary (built for BV-REAL-4, valid for every DF-REAL variant).

    Background: 0s left of ``x_q``, 1s right, ``floor(k/2)`` copies of ``(x_q, 0)``; S adds one
    more ``(x_q, 0)``, S' puts that record at a harmless ``(x_left, 0)``. A block votes 0 iff it
    holds some ``(x_q, 0)``, so ``c_0 <= floor(k/2)`` under S' and a plain majority vote never
    outputs 0, while under S ``c_0 = floor(k/2) + 1`` has positive probability.
    """
    z = k // 2
    if n < 2 * z + 4:
        raise PrivauditError(f"pair needs n >= {2 * z + 4}")
    rest = n - 1 - z
    xs = [q] * z + [(q - 1 - (i % 3)) if i % 2 == 0 else (q + 1 + (i % 3)) for i in range(rest)]
    ys = [0] * z + [0 if i % 2 == 0 else 1 for i in range(rest)]
    X = H.domain[np.array(xs + [q])]
    S = Dataset(X, np.array(ys + [0]))
    return S, S.replace(n - 1, H.domain[max(q - 4, 0)], 0)


def pair_sorted_shift(H: HypothesisClass, k: int, m: int, q: int = 0) -> tuple[Dataset, Dataset]:
    """D4 MoveToQuery against BV-REAL-2 (blocks = contiguous runs of the x-sorted data).

    Background: ``k`` periods ``[(x_{2j+1}, 0), (x_{2j+2}, 1) x (m-1)]`` minus the last 1. S puts
    the record ``(x_far, 1)`` at the right end: sorted blocks are the periods, each votes 0 at
    ``x_q = x_0``. S' moves it to ``(x_q, 1)``: every sorted block shifts by one, becomes
    ``[1, 0, 1 x (m-2)]`` and (leftmost tie-break) votes 1. A data-independent partition sees
    one changed record only.
    """
    if 2 * k + 2 >= H.N:
        raise PrivauditError(f"pair needs a grid with more than {2 * k + 2} points")
    xs, ys = [], []
    for j in range(k):
        xs += [2 * j + 1] + [2 * j + 2] * (m - 1)
        ys += [0] + [1] * (m - 1)
    xs, ys = xs[:-1], ys[:-1]
    X = H.domain[np.array(xs + [H.N - 1])]
    S = Dataset(X, np.array(ys + [1]))
    return S, S.replace(len(xs), H.domain[q], 1)


# ---------------------------------------------------------------------------------------------
# the learner
# ---------------------------------------------------------------------------------------------
def positional_blocks(prep: Prepared, k: int) -> np.ndarray:
    """The fixed data-independent partition: record ``i`` in block ``floor(i k / n)``."""
    return block_of_position(prep.n, k)


def sorted_blocks(prep: Prepared, k: int) -> np.ndarray:
    """BV-REAL-2's data-dependent partition: records sorted by x (stable: ties by index), then
    contiguous blocks."""
    order = np.argsort(prep.locs[prep.rec_loc], kind="stable")
    ids = np.empty(prep.n, np.int64)
    ids[order] = block_of_position(prep.n, k)
    return ids


@dataclass(frozen=True)
class RealRow(Row):
    """A DF-REAL variant: the partition, the blocks' overlap and the vote aggregator."""

    fixed: bool = False                                        # one fixed partition (not fresh per run)
    blocks: Callable[[Prepared, int], np.ndarray] = positional_blocks   # the fixed partition's ids
    overlap: bool = False                                      # block b = chunks b and b+1
    rule: str = "em"                                           # the aggregator (`aggregate`)


REAL_TABLE = {
    "correct": RealRow("fresh random balanced partition per run, ERM per block, vote-EM "
                       "sigma(eps_R(2c1-k)/2)"),
    "nc-5": RealRow("negative control NC-5: a fixed data-independent partition (record i in block "
                    "floor(i k / n)); still eps_R-private, exact oracle available", fixed=True),
    "bv-real-1": RealRow("planted bug: overlapping blocks (block b = chunks b and b+1), each record "
                         "sits in 2 models, so replace-one moves 2 votes (loss up to 2 eps_R)",
                         overlap=True),
    "bv-real-2": RealRow("planted bug: data-dependent partition (records sorted by x, contiguous "
                         "blocks); moving one point shifts every block (loss up to k eps_R)",
                         fixed=True, blocks=sorted_blocks),
    "bv-real-3": RealRow("planted bug: vote-EM without the 1/2, exp(eps_R c_y) (loss tends to 2 eps_R)",
                         rule="em-no-half"),
    "bv-real-4": RealRow("planted bug: plain majority vote, ties to 1 (deterministic; loss infinite)",
                         rule="majority"),
    "bv-real-5": RealRow("planted bug: report-noisy-max with Lap(1/eps_R) instead of Lap(2/eps_R) "
                         "(loss tends to 2 eps_R)", rule="laplace"),
}
REAL_VARIANTS = describe(REAL_TABLE)


@dataclass(eq=False)
class RealizablePrivateLearner:
    """DF-REAL ``A^R``: disjoint blocks + ERM per block + exponential mechanism over the votes.

    Parameters
    ----------
    epsilon : float
        ``eps_R``, the private-prediction parameter.
    alpha : float
        Target error; sets ``k = ceil(4 ln(2/alpha)/eps_R)`` when ``k == 0``.
    k : int
        Number of blocks (0: derived from ``epsilon`` and ``alpha``).
    hclass, grid : str, int
        Hypothesis class (`algorithms.common.hypotheses.make_class`); records must lie on its domain.
    variant : str
        See `REAL_VARIANTS`.

    Claim: ``eps_R``-private prediction, replace-one, prediction scope [DF18 Thm 4.1, RECON].
    """

    epsilon: float = 1.0
    alpha: float = 0.1
    k: int = 0
    hclass: str = "thr"
    grid: int = 64
    variant: str = "correct"
    name: str = "df-real"
    chunk_runs: int = 4096

    def __post_init__(self) -> None:
        self.epsilon = check_positive("epsilon", self.epsilon)
        self.alpha = check_positive("alpha", self.alpha, upper=0.5, upper_open=True)
        self.row = row_of(REAL_TABLE, self.variant, self.name)
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 0:
            raise PrivauditError(f"k must be a non-negative integer (0 = derived), got {self.k!r}")
        self.k = int(self.k) or default_k(self.epsilon, self.alpha)
        self.H = make_class(self.hclass, self.grid)
        if self.variant != "correct":
            self.name = f"df-real[{self.variant}]"
        self.claim = Claim(self.epsilon, 0.0, "replace-one", "prediction")
        self.certified = self.claim
        self.rule = self.row.rule
        self.partition = "fixed" if self.row.fixed else "random"
        self._q = self.H.N // 2

    # -- default audit inputs ----------------------------------------------------------------
    @cached_property
    def pairs(self) -> list[tuple[Dataset, Dataset]]:
        if self.hclass != "thr":
            return []
        m = 8
        out = [pair_unanimous(self.H, self.k * m, self._q),
               pair_majority_edge(self.H, self.k * m, self._q, self.k)]
        if 2 * self.k + 2 < self.H.N:
            out.append(pair_sorted_shift(self.H, self.k, m))
        if self.k >= 2:
            out.append(pair_vote_margin(self.H, self.k, self._q, margin_ones(self.k, self.epsilon)))
        return out

    @cached_property
    def queries(self) -> np.ndarray:
        return self.H.domain[[self._q, 0]]

    # -- mechanics ---------------------------------------------------------------------------
    def _check_n(self, prep: Prepared) -> None:
        if prep.n < self.k:
            raise PrivauditError(f"{self.name}: n = {prep.n} records cannot fill k = {self.k} blocks; "
                                 f"use more data or a smaller k")

    def votes(self, prep: Prepared, runs: int, rng: np.random.Generator | None) -> np.ndarray:
        """Vote counts ``c_1`` (runs, q) (fixed partitions: (1, q), deterministic)."""
        self._check_n(prep)
        if self.partition != "fixed":                # cell counts per block, ERM straight on them
            return random_partition_votes(prep.cell_size, prep.n, self.k, prep.miss32, prep.Pq, runs,
                                          rng, overlap=self.row.overlap)
        c0, c1 = fixed_block_counts(prep, self.row.blocks(prep, self.k), self.k)
        if self.row.overlap:              # each model trains on chunks b and b+1
            c0, c1 = c0 + np.roll(c0, -1, axis=1), c1 + np.roll(c1, -1, axis=1)
        return block_votes(c0, c1, prep).sum(axis=1)

    def predict(self, data: Dataset, queries: np.ndarray, runs: int,
                rng: np.random.Generator) -> np.ndarray:
        runs = check_runs(runs)
        prep = prepare(self.H, data, queries)
        if runs == 0:
            return np.zeros((0, len(prep.qidx)), np.int8)
        c1 = self.votes(prep, runs, rng)
        c1 = np.broadcast_to(c1, (runs, c1.shape[1]))
        return aggregate(c1, self.k, self.epsilon, self.rule, rng)

    def exact(self, data: Dataset, queries: np.ndarray) -> np.ndarray:
        """Exact ``Pr[label = 1]`` per query for the fixed-partition variants
        (``sigma(eps_R (2 c_1 - k)/2)``, or the variant's aggregator).

        Raises
        ------
        PrivauditError
            For random partitions (no closed form; use ``variant="nc-5"``).
        """
        prep = prepare(self.H, data, queries)
        if self.partition != "fixed":
            raise PrivauditError(f"{self.name}: the exact oracle needs a fixed partition "
                                 f"(variant 'nc-5' or 'bv-real-2')")
        return aggregate_prob(self.votes(prep, 1, None)[0], self.k, self.epsilon, self.rule)


@register("df-real", kind="learner", paper=f"{PAPER}; reconstruction of {DF18}",
          section="Lemma 6 (realizable learner with private prediction), spec 3.6",
          summary="k disjoint blocks, ERM per block, exponential mechanism over the vote counts "
                  "(eps_R-private prediction)",
          variants=REAL_VARIANTS)
def make_df_real(epsilon: float = 1.0, alpha: float = 0.1, k: int = 0, hclass: str = "thr",
                 grid: int = 64, variant: str = "correct") -> RealizablePrivateLearner:
    return RealizablePrivateLearner(epsilon=epsilon, alpha=alpha, k=k, hclass=hclass, grid=grid,
                                    variant=variant)


__all__ = ["RealizablePrivateLearner", "make_df_real", "prepare", "Prepared", "block_votes",
           "aggregate", "aggregate_prob", "pair_vote_margin", "margin_ones", "random_block_counts",
           "fixed_block_counts", "block_of_position", "default_k", "sigmoid", "flip_labels", "REAL_VARIANTS", "REAL_TABLE", "RealRow"]
