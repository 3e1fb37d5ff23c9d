"""The shared random-partition sampler (`df_common.partition_counts`) and the vectorised block ERM
of DF-REAL, DF-PP2 and Li-Wang-Ye P1/P2: exact laws by brute-force enumeration vs Monte Carlo.

Every exact law here is computed from first principles -- all orderings of the items (or of the
records) enumerated with itertools, each equally likely, and every block's ERM taken from
`HypothesisClass.erm` / a direct error count -- so it shares no code with the samplers.

False alarms: each chi-square goodness-of-fit check requires p > 1e-6 and each Clopper-Pearson
check is two-sided at total level 1e-7; the file has 20 such checks, so a correct sampler fails
any of them with probability at most 2e-5 for any seed (the seeds are fixed, so a run is
reproducible). Moment checks use |z| < 6 per entry (normal tail 2e-9, < 1e-5 for the 3,072
entries checked); the ERM identities are deterministic.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats as sps

from algorithms.li_wang_ye import core as lwy_core
from algorithms.common.sampling import em_probs, partition_counts, subset_distribution
from algorithms.dagan_feldman.pp2 import PrivatePredictionLearner
from algorithms.dagan_feldman.real import (RealizablePrivateLearner, block_sizes, block_votes,
                                           erm_vote_counts, prepare, random_partition_votes)
from algorithms.li_wang_ye.learners import lwy_p1
from audit.errors import PrivauditError
from audit.stats import cp_lower, cp_upper
from audit.types import Dataset

P_MIN = 1e-6
A_CP = 1e-7


def covers(ones: int, runs: int, p: float) -> bool:
    return bool(cp_lower(ones, runs, A_CP / 2) <= p + 1e-12 and p - 1e-12 <= cp_upper(ones, runs, A_CP / 2))


# -- the sampler itself ---------------------------------------------------------------------------
def exact_table_law(colors, sizes) -> dict:
    """Law of the (block, cell) count table: every ordering of the items equally likely, blocks are
    consecutive slices (the leftover after sum(sizes) is dropped)."""
    items = [g for g, c in enumerate(colors) for _ in range(c)]
    cuts = np.concatenate([[0], np.cumsum(sizes)])
    law = Counter()
    perms = list(itertools.permutations(items))
    for p in perms:
        law[tuple(tuple(np.bincount(p[cuts[b]:cuts[b + 1]], minlength=len(colors)))
                  for b in range(len(sizes)))] += 1
    return {t: c / len(perms) for t, c in law.items()}


def gof(samples: np.ndarray, law: dict) -> float:
    """Chi-square p-value of sampled tables against an exact law (tables outside it: p = 0)."""
    obs = Counter(tuple(map(tuple, t)) for t in samples)
    if set(obs) - set(law):
        return 0.0
    keys = list(law)
    f_obs = np.array([obs.get(t, 0) for t in keys], float)
    f_exp = np.array([law[t] for t in keys]) * len(samples)
    return float(sps.chisquare(f_obs, f_exp).pvalue)


@pytest.mark.parametrize("method", ["items", "hypergeometric", "auto"])
@pytest.mark.parametrize("colors,sizes", [([3, 1, 2], [2, 2]),          # leftover of 2 dropped
                                          ([2, 0, 1, 3], [3, 2, 1]),    # an empty cell, no leftover
                                          ([4, 1, 1], [1, 1, 1, 1])])   # leftover, one dominant cell
def test_partition_counts_exact_law(method, colors, sizes):
    law = exact_table_law(colors, sizes)
    runs = 40_000
    T = partition_counts(np.array(colors), sizes, np.random.default_rng(7), runs, method=method)
    assert T.shape == (runs, len(sizes), len(colors)) and T.dtype == np.int64
    assert np.all(T.sum(axis=2) == np.array(sizes))                    # blocks exactly full
    assert np.all(T.sum(axis=1) <= np.array(colors))
    assert gof(T, law) > P_MIN


@pytest.mark.parametrize("method", ["items", "hypergeometric"])
def test_partition_counts_per_run_colours(method):
    rows = np.array([[2, 2, 0, 1], [0, 1, 3, 1]])                     # both rows hold 5 items
    runs = 40_000
    colors = np.tile(rows, (runs // 2, 1))
    T = partition_counts(colors, [2, 2], np.random.default_rng(8), method=method)
    for i, row in enumerate(rows):
        assert gof(T[i::2], exact_table_law(row, [2, 2])) > P_MIN


def test_partition_counts_moments_at_scale():
    """n = 1,000 on 64 cells into 12 blocks (the df-real benchmark shape), both samplers: exact
    margins, and every entry's mean and variance those of Hypergeometric(n, c_g, s_b)."""
    rng = np.random.default_rng(9)
    colors = np.bincount(rng.integers(0, 64, 1000), minlength=64)
    sizes = block_sizes(1000, 12)
    m = 1000
    mean = sizes[:, None] * colors[None, :] / m
    var = sizes[:, None] * (colors / m) * (1 - colors / m) * (m - sizes[:, None]) / (m - 1)
    runs = 20_000
    for method in ("items", "hypergeometric"):
        T = partition_counts(colors, sizes, rng, runs, method=method)
        assert np.all(T.sum(axis=2) == sizes) and np.all(T.sum(axis=1) == colors)
        z_mean = (T.mean(axis=0) - mean) / np.sqrt(var / runs)
        # sample variance: sd of s^2 is sqrt((mu_4 - var^2) / runs), mu_4 estimated from the draws
        mu4 = ((T - mean) ** 4).mean(axis=0)
        z_var = (T.var(axis=0) - var) / np.sqrt(np.maximum(mu4 - var**2, 1e-12) / runs)
        assert np.abs(z_mean).max() < 6 and np.abs(z_var).max() < 6


def test_partition_counts_validation():
    rng = np.random.default_rng(0)
    with pytest.raises(PrivauditError, match="sum to at most"):
        partition_counts(np.array([1, 2]), [2, 2], rng, 5)
    with pytest.raises(PrivauditError, match="runs is required"):
        partition_counts(np.array([1, 2]), [2], rng)
    with pytest.raises(PrivauditError, match="same number of items"):
        partition_counts(np.array([[1, 2], [2, 2]]), [2], rng)
    with pytest.raises(PrivauditError, match="method"):
        partition_counts(np.array([1, 2]), [2], rng, 3, method="sort")
    assert partition_counts(np.array([1, 2]), [2], rng, 0).shape == (0, 1, 2)


# -- DF-REAL / DF-PP2: the block ERM and the whole random-partition learner --------------------------
def tiny_data(H, xs, ys) -> Dataset:
    return Dataset(H.domain[np.array(xs)], np.array(ys))


def brute_votes(H, data: Dataset, k: int, q: int, overlap: bool = False) -> Counter:
    """Law of c_1 at domain point q: every ordering of the records equally likely, blocks =
    array_split slices, ERM per block by `HypothesisClass.erm` (first row of minimum error)."""
    n = data.n
    cuts = np.concatenate([[0], np.cumsum(block_sizes(n, k))])
    law, vote = Counter(), {}
    perms = list(itertools.permutations(range(n)))
    for p in perms:
        blocks = [p[cuts[b]:cuts[b + 1]] for b in range(k)]
        if overlap:
            blocks = [blocks[b] + blocks[(b + 1) % k] for b in range(k)]
        c1 = 0
        for b in blocks:
            key = tuple(sorted(b))
            if key not in vote:
                vote[key] = int(H.matrix[H.erm(Dataset(data.X[list(key)], data.y[list(key)])), q])
            c1 += vote[key]
        law[c1] += 1
    return Counter({c: v / len(perms) for c, v in law.items()})


def sigma(t):
    return 1 / (1 + math.exp(-t))


@pytest.mark.parametrize("variant", ["correct", "bv-real-1"])
def test_df_real_random_partition_exact(variant):
    L = RealizablePrivateLearner(epsilon=1.0, k=3, grid=8, variant=variant)
    D = tiny_data(L.H, [1, 2, 2, 3, 4, 5, 6], [0, 0, 1, 1, 0, 1, 1])
    q = 3
    law = brute_votes(L.H, D, 3, q, overlap=variant == "bv-real-1")
    assert len(law) >= 2                          # the partition matters for this dataset
    p1 = sum(w * sigma(1.0 * (2 * c - 3) / 2) for c, w in law.items())
    runs = 60_000
    out = L.predict(D, L.H.domain[[q]], runs, np.random.default_rng(11))
    assert covers(int(out.sum()), runs, p1)
    # the vote counts themselves, against the enumerated law
    prep = prepare(L.H, D, L.H.domain[[q]])
    c1 = L.votes(prep, runs, np.random.default_rng(12))[:, 0]
    keys = sorted(law)
    assert set(np.unique(c1)) <= set(keys)
    obs = np.array([(c1 == c).sum() for c in keys], float)
    assert sps.chisquare(obs, np.array([law[c] for c in keys]) * runs).pvalue > P_MIN


def test_erm_vote_counts_equals_block_votes():
    """The cell-count ERM (one float32 product, first-index argmin) returns exactly the votes of
    the location-count `block_votes`, ties included, with and without DF-PP2's sign trick."""
    L = RealizablePrivateLearner(grid=16)
    rng = np.random.default_rng(3)
    xs = rng.integers(0, 16, 300)
    D = tiny_data(L.H, xs, (rng.random(300) < 0.5).astype(int))
    prep = prepare(L.H, D, L.H.domain[[3, 8, 12]])
    T = partition_counts(prep.cell_size, [5, 3, 7, 2, 4], rng, 500)          # small blocks: many ties
    c = np.zeros(T.shape[:2] + (len(prep.locs), 2), np.int64)
    c[:, :, prep.cell_loc, prep.cell_lab] = T
    assert np.array_equal(erm_vote_counts(T, prep.miss32, prep.Pq),
                          block_votes(c[..., 0], c[..., 1], prep).sum(axis=1))
    # DF-PP2: location counts relabelled by each run's h
    cnt = c.sum(axis=3)
    h = rng.integers(0, L.H.size, 500)
    one = cnt * prep.P.astype(np.int64)[h][:, None, :]
    ref = block_votes(cnt - one, one, prep).sum(axis=1)
    assert np.array_equal(erm_vote_counts(cnt, prep.PT32, prep.Pq, sign=1.0 - 2.0 * prep.P32[h]), ref)


def test_df_pp2_random_partition_exact():
    """DF-PP2 end to end with its random partition: exact Pr[1] = sum over subsample hit sets
    (Mobius formula) of EM weights times Pr[A^R(S_h) = 1], the latter by enumerating partitions."""
    L = PrivatePredictionLearner(epsilon=1.0, alpha=0.1, eps0=1.0, subsample=0.3, k=3, grid=8)
    D = tiny_data(L.H, [1, 2, 2, 3, 5, 6, 6], [0, 0, 1, 1, 1, 1, 0])
    q = 4
    prep = prepare(L.H, D, L.H.domain[[q]])
    keys, sizes = np.unique(prep.rec_loc * 2 + prep.y, return_counts=True)
    ghit, prob = subset_distribution(sizes, L.n_prime(prep.n))
    hit = np.zeros((len(prob), L.H.N), bool)
    for g, key in enumerate(keys):
        hit[:, prep.locs[key // 2]] |= ghit[:, g]
    w = em_probs(-L.eps0 * prep.err_all.astype(float), L.H.rep_mask(hit))
    a1 = np.zeros(L.H.size)
    for h in np.flatnonzero((prob[:, None] * w).sum(axis=0) > 0):        # A^R on S_h, exactly
        Sh = Dataset(D.X, L.H.matrix[h, L.H.index(D.X)])
        law = brute_votes(L.H, Sh, 3, q)
        a1[h] = sum(wt * sigma(L.eps0 * (2 * c - 3) / 2) for c, wt in law.items())
    p1 = float(prob @ (w @ a1))
    p1 = L.alpha + (1 - 2 * L.alpha) * p1
    runs = 60_000
    out = L.predict(D, L.H.domain[[q]], runs, np.random.default_rng(13))
    assert covers(int(out.sum()), runs, p1)


def test_random_partition_votes_chunks_are_independent():
    """Chunking over runs (memory bound) must not repeat or correlate partitions."""
    L = RealizablePrivateLearner(k=4, grid=8, variant="bv-real-4")      # deterministic given blocks
    D = tiny_data(L.H, [1, 1, 2, 3, 3, 4, 5, 6], [0, 0, 0, 1, 0, 1, 1, 1])
    prep = prepare(L.H, D, L.H.domain[[3]])
    import algorithms.dagan_feldman.real as dr
    old = dr.ERM_CHUNK
    try:
        dr.ERM_CHUNK = 64                                               # many tiny chunks
        a = random_partition_votes(prep.cell_size, prep.n, 4, prep.miss32, prep.Pq, 20_000,
                                   np.random.default_rng(5))[:, 0]
    finally:
        dr.ERM_CHUNK = old
    law = brute_votes(L.H, D, 4, 3)
    keys = sorted(law)
    obs = np.array([(a == c).sum() for c in keys], float)
    assert obs.sum() == 20_000
    assert sps.chisquare(obs, np.array([law[c] for c in keys]) * 20_000).pvalue > P_MIN


# -- Li-Wang-Ye P1 / P2 ---------------------------------------------------------------------------------
def test_lwy_p1_random_portions_exact():
    """P1 with r = 3 portions of floor(7/3) = 2 records (one left over), consistent learner per
    portion, EM over the votes: exact Pr[1] by enumerating the orderings of the records."""
    L = lwy_p1(eps_agg=6.0, alpha=0.5, cls="thr", grid=8)
    assert L.r == 3
    X = np.array([1.0, 2.0, 2.0, 4.0, 5.0, 5.0, 7.0])
    y = np.array([0, 0, 1, 1, 0, 1, 1])
    D = Dataset(X.reshape(-1, 1), y)
    H = L.H
    idx = H.index(D.X)
    q = 3
    pr, perms = 0.0, list(itertools.permutations(range(7)))
    for p in perms:
        v1 = 0
        for j in range(3):
            part = list(p[2 * j:2 * j + 2])
            err = (H.matrix[:, idx[part]] != y[part][None, :]).sum(axis=1)
            v1 += int(H.matrix[int(np.argmin(err)), q])
        pr += sigma(6.0 / 2 * (2 * v1 - 3))
    pr /= len(perms)
    runs = 60_000
    out = L.predict(D, H.domain[[q]], runs, np.random.default_rng(17))
    assert covers(int(out.sum()), runs, pr)


def test_lwy_votes_match_consistent_rows():
    """`Aggregate._votes` (float32 product, argmin) equals the reference `consistent_rows` on
    the exact error counts, for fixed labels (P1) and for T^h relabelled per run (P2)."""
    L = lwy_p1(eps_agg=1.0, alpha=0.5, cls="thr", grid=16)
    H = L.H
    rng = np.random.default_rng(4)
    B, C = 400, H.N
    colors = rng.multinomial(60, np.full(C, 1 / C), size=1)[0]
    pc = lwy_core.portion_counts_shared(colors, L.r, B, rng)             # (B, r, N)
    qs = rng.integers(0, C, B)
    M = H.matrix.astype(np.float32)
    lab = rng.integers(0, 2, C)                                          # P1: one label per point
    miss = (H.matrix.T != lab[:, None]).astype(np.float32)
    ref = H.matrix[lwy_core.consistent_rows(pc @ miss.astype(np.float64)), qs[:, None]].sum(axis=1)
    assert np.array_equal(L._votes(pc, miss, qs), ref)
    h = rng.integers(0, H.size, B)                                       # P2: labels h_b(x)
    X = (H.matrix[:, None, :] != H.matrix[None, :, :])[h].astype(np.float64)      # (B, K, N)
    ref = H.matrix[lwy_core.consistent_rows(np.einsum("brx,bkx->brk", pc.astype(float), X)),
                   qs[:, None]].sum(axis=1)
    assert np.array_equal(L._votes(pc, np.ascontiguousarray(M.T), qs, 1.0 - 2.0 * M[h]), ref)
