"""Li, Wang & Ye learners: exact oracles vs Monte Carlo, spec reference values, white-box
properties (spec 4.5) and utility.

False alarms: every Monte Carlo check below is a Clopper-Pearson interval at a per-check level
``ALPHA / checks`` (Bonferroni), with ALPHA = 1e-6 for the whole file, so the file's statistical
checks fail spuriously with probability below 1e-6; seeds are fixed, so a run is reproducible.
Utility checks use margins several standard deviations wide (stated at each test).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

import algorithms
from algorithms.li_wang_ye import core as core
from algorithms.li_wang_ye import designs as D
from audit import Claim, Dataset
from audit.errors import PrivauditError
from audit.stats import cp_lower, cp_upper

ALPHA = 1e-6


def _covered(learner, data, queries, runs, seed, checks):
    """Exact Pr[1] inside the two-sided CP interval of `runs` Monte Carlo runs at level ALPHA/checks."""
    exact = learner.exact(data, queries)
    out = learner.predict(data, queries, runs, np.random.default_rng(seed))
    assert out.shape == (runs, len(queries)) and out.dtype == np.int8
    k = out.sum(axis=0)
    a = ALPHA / checks / 2
    lo, hi = cp_lower(k, runs, a), cp_upper(k, runs, a)
    assert np.all((lo <= exact + 1e-12) & (exact <= hi + 1e-12)), (exact, k / runs)


EXACT_CASES = [
    ("lwy-n2", dict(epsilon=0.1, base="em"), D.d1_label(100, 58)[0]),
    ("lwy-n2", dict(epsilon=0.1, base="locprobe", n=200), D.d2_membership(200)[0]),
    ("lwy-n2", dict(epsilon=0.2, base="leaky", delta_A=0.1), D.d3_split(60)[0]),
    ("lwy-n2", dict(epsilon=0.01, n=2001, variant="v7", neighbours="replace-one"), D.d3_split(2001)[0]),
    ("lwy-n2", dict(epsilon=0.1, variant="v5"), D.d2_membership(100)[0]),
    ("lwy-n2", dict(epsilon=0.1, variant="v11", base="em"), D.d2_membership(100)[1]),
    ("lwy-b1", dict(), D.d3_split(40)[0]),
    ("lwy-b3", dict(epsilon=1.0, base="em", n=300), D.d3_split(300)[0]),
    ("lwy-n1", dict(), D.d1_label(60, 40)[0]),
    ("lwy-n3", dict(), D._ds([(3.0, 0, 1), (1.0, 0, 9), (5.0, 1, 10)])),
]


@pytest.mark.parametrize("name,params,data", EXACT_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(EXACT_CASES)])
def test_exact_oracle_matches_monte_carlo(name, params, data):
    L = algorithms.get(name, **params)
    _covered(L, data, L.queries, 20_000, 7, checks=len(EXACT_CASES))


# -- spec reference values (exact enumeration, [proto] numbers of spec 4.3/4.4) -------------------------
def _label_loss(variant, n=100, c1=70):
    S1, S2 = D.d1_label(n, c1)
    L = algorithms.get("lwy-n2", epsilon=0.1, variant=variant, neighbours="label", base="em")
    p1, p2 = L.relabel_distribution(S1)[1], L.relabel_distribution(S2)[1]
    return float(np.max(np.abs(np.log(p1 / p2))))


@pytest.mark.parametrize("variant,expected", [("correct", 0.0766), ("v2", 0.1749), ("v3", 8.85), ("v4", 0.1640)])
def test_d1_reference_values(variant, expected):
    assert _label_loss(variant) == pytest.approx(expected, abs=6e-4 if expected < 1 else 0.01)


def test_v7_and_locprobe_reference_values():
    S1, S2 = D.d3_split(2001)
    for variant, lo, hi in (("v7", 0.35, 0.37), ("correct", 0.0, 0.02)):
        L = algorithms.get("lwy-n2", epsilon=0.01, n=2001, variant=variant, base="em", neighbours="replace-one")
        e1, e2 = L.exact(S1, [[1.0]])[0], L.exact(S2, [[1.0]])[0]
        assert lo <= math.log((1 - e1) / (1 - e2)) <= hi
        assert L.claim.epsilon == pytest.approx(0.2690, abs=1e-3)      # spec 5.3 (eps n = 20.01)
    S1, S2 = D.d2_membership(1000)
    L = algorithms.get("lwy-n2", epsilon=0.1, n=1000, base="locprobe")
    loss = math.log(L.exact(S1, [[1.0]])[0] / L.exact(S2, [[1.0]])[0])
    assert loss == pytest.approx(math.log1p(0.1 * (math.e - 1)), abs=1e-9)     # 0.1586 exactly
    assert loss < L.claim.epsilon == pytest.approx(1.4791, abs=1e-4)


def test_certified_table_5_3():
    for eps, ref in ((0.01, 0.2690), (0.02, 0.4845), (0.05, 0.9581), (0.1, 1.4791), (0.2, 2.1530)):
        assert core.n2_certified(eps, 10_000, 1.0, 0.0)[0] == pytest.approx(ref, abs=1e-4)
    assert core.b1_certified(1.0, 1.0, 1e-6) == pytest.approx((3.3863, 10.873e-6), rel=1e-4)


# -- white-box properties (spec 4.5) --------------------------------------------------------------------
def test_representative_invariance():
    """4.5(1): the first- or last-row representative gives the same relabelling law; V18 does not."""
    data = D.d3_split(40)[0]
    for variant, same in (("correct", True), ("v18", False)):
        dists = []
        for rule in ("first", "last"):
            L = algorithms.get("lwy-n2", epsilon=0.2, variant=variant, cls="int", grid=8)
            L.rep_rule = rule
            pats, p = L.relabel_distribution(data)
            dists.append(dict(zip(map(bytes, pats), p)))
        keys = set(dists[0]) | set(dists[1])
        diff = max(abs(dists[0].get(k, 0) - dists[1].get(k, 0)) for k in keys)
        assert (diff < 1e-12) == same, diff


def test_permutation_invariance():
    """4.5(2): N2's output law ignores record order; the deterministic split V5 does not."""
    S = D.d2_membership(100)[0]
    perm = np.random.default_rng(3).permutation(S.n)
    Sp = Dataset(S.X[perm], S.y[perm])
    for variant, same in (("correct", True), ("v5", False)):
        L = algorithms.get("lwy-n2", epsilon=0.1, variant=variant, base="locprobe")
        a, b = L.exact(S, [[1.0]]), L.exact(Sp, [[1.0]])
        assert np.allclose(a, b, atol=1e-12) == same


def test_label_blindness_of_T():
    """4.5(3): with T_X and W fixed, changing T's labels leaves the new score's log-weights
    unchanged; V4's score (adds err_T) changes."""
    H = core.grid_class("thr", 8)
    x2 = H.index([[2.0]])[0]

    def setup(records, t_label):
        S = D._ds(records)
        cells = core.cells_of(H, S)
        tc = np.zeros(cells.count.size, np.int64)
        tc[np.flatnonzero((cells.loc == x2) & (cells.lab == t_label))[0]] = 5
        return cells, tc[None, :]

    rest = [(5.0, 1, 30), (1.0, 0, 30)]
    ca, ta = setup([(2.0, 0, 5), (2.0, 1, 5)] + rest, 0)     # T = 5 x (2, 0); W = 5 x (2, 1) + rest
    cb, tb = setup([(2.0, 1, 10)] + rest, 1)                 # T = 5 x (2, 1); the same W
    for score, same in (("new", True), ("new+errT", False)):
        rule = core.RelabelRule(score, 3.0)
        la = core.relabel_logits(H, ca, ta, rule).logits
        lb = core.relabel_logits(H, cb, tb, rule).logits
        assert np.allclose(la, lb) == same


def test_invariants():
    """4.5(4): k = ceil(eps n) >= eps n (V9 breaks it), EM scale eps |W| / 2, r of Lemma 19."""
    L = algorithms.get("lwy-n2", epsilon=0.1)
    for n in (10, 99, 100, 1001, 12345):
        L.check_invariants(n)
        assert L.k(n) == math.ceil(0.1 * n - 1e-9) >= 0.1 * n - 1e-9
        assert L.rule(n).scale == pytest.approx(0.1 * (n - L.k(n)) / 2)
    with pytest.raises(AssertionError):
        algorithms.get("lwy-n2", epsilon=0.1, variant="v9").check_invariants(1000)
    assert algorithms.get("lwy-n2", epsilon=0.1, variant="v2").rule(100).scale == pytest.approx(0.1 * 90)
    table = {(0.5, 1): 13, (0.25, 1): 17, (0.1, 1): 23, (0.01, 1): 36, (0.1, 0.5): 45, (0.05, 0.1): 263}
    for (alpha, e), r in table.items():
        assert core.r_portions(alpha, e) == r
    P = algorithms.get("lwy-p1")
    assert P.r == 13 and P.claim == Claim(1.0, 0.0, "replace-one", "prediction")
    assert algorithms.get("lwy-n2", epsilon=0.1, n=1000).base.eps_A == 1.0


def test_em_sampler_matches_softmax():
    """4.5(5): chi-square goodness of fit of the relabelling EM draws (p-value > 1e-6 required)."""
    H = core.grid_class("thr", 8)
    cells = core.cells_of(H, D.d3_split(60)[0])
    tc = np.broadcast_to(cells.count, (1, cells.count.size)).copy()
    tc[0] = core.subsample_counts(cells.count, 12, 1, np.random.default_rng(1))[0]
    logits = core.relabel_logits(H, cells, tc, core.RelabelRule("new", 0.2 * 48 / 2)).logits
    p = core.pick_probs(logits, False)[0]
    draws = core.pick(np.broadcast_to(logits, (200_000, H.size)), False, np.random.default_rng(2))
    obs = np.bincount(draws, minlength=H.size)
    keep = p > 0
    assert obs[~keep].sum() == 0
    assert sps.chisquare(obs[keep], 200_000 * p[keep]).pvalue > ALPHA


def test_mvhg_rows_marginals():
    """The batched hypergeometric partition keeps totals and has the right mean."""
    colors = np.array([[5, 0, 7, 3], [1, 1, 1, 12]])
    out = core.mvhg_rows(np.repeat(colors, 5000, axis=0), 6, np.random.default_rng(0))
    assert np.all(out.sum(1) == 6) and np.all(out <= np.repeat(colors, 5000, axis=0))
    mean = out.reshape(2, 5000, 4).mean(1)
    assert np.allclose(mean, 6 * colors / colors.sum(1, keepdims=True), atol=0.08)   # sd < 0.02


# -- utility ----------------------------------------------------------------------------------------
def _thr1(n, eta, rng, N=32, t_star=13):
    x = rng.integers(0, N, n).astype(np.float64)
    y = ((x >= t_star) ^ (rng.random(n) < eta)).astype(np.int8)
    return Dataset(x.reshape(-1, 1), y)


def _excess(pred, N=32, t_star=13, eta=0.4):
    """Excess population error of predictions at all N grid points (uniform D_X)."""
    target = (np.arange(N) >= t_star).astype(np.int8)
    return (1 - 2 * eta) * (pred != target).mean(axis=-1)


def test_n2_agnostic_utility_thr1():
    """Spec 4.5(6): excess error <= 0.05 at n = 10^4, eps = 0.1, eta = 0.4 (prototype: 0.001);
    mean over 200 runs, each excess in [0, 0.2], so the mean is within 0.05 unless the learner fails."""
    L = algorithms.get("lwy-n2", epsilon=0.1, cls="thr", grid=32, base="em")
    rng = np.random.default_rng(5)
    S = _thr1(10_000, 0.4, rng)
    pred = L.predict(S, np.arange(32.0).reshape(-1, 1), 200, rng)
    assert _excess(pred).mean() <= 0.05


def test_relabel_excess_decreases_with_W():
    """Claim 16 scaling: with |T| fixed (200), a larger W gives a better relabelling h. Mean
    disagreement of h with the best threshold on T over 2000 runs each; the two means differ by
    far more than their standard errors (< 0.005)."""
    rng = np.random.default_rng(6)
    H = core.grid_class("thr", 32)
    ex = []
    for n in (1000, 40_000):
        S = _thr1(n, 0.4, rng)
        cells = core.cells_of(H, S)
        tc = core.subsample_counts(cells.count, 200, 2000, rng)
        blk = core.relabel_logits(H, cells, tc, core.RelabelRule("new", (200 / n) * (n - 200) / 2))
        h = core.pick(blk.logits, False, rng)
        ex.append(float(blk.dis[np.arange(h.size), h, 13].mean() / 200))   # row 13 = the target
    assert ex[1] < ex[0] - 0.01, ex


def test_p1_realizable_and_p2_agnostic_utility():
    """P1 (realizable, k = 2600) and P2 (eta = 0.1, n = 4000) err on at most 10% of grid points
    on average over 100 runs (typical: < 3%)."""
    rng = np.random.default_rng(8)
    q = np.arange(32.0).reshape(-1, 1)
    P1 = algorithms.get("lwy-p1", grid=32)
    S = _thr1(2600, 0.0, rng)
    assert (_excess(P1.predict(S, q, 100, rng), eta=0.0)).mean() <= 0.10
    P2 = algorithms.get("lwy-p2", epsilon=0.25, grid=32, n=4000)
    S = _thr1(4000, 0.1, rng)
    assert (_excess(P2.predict(S, q, 100, rng), eta=0.1) / 0.8).mean() <= 0.10


def test_v15_utility_regression():
    """V15: the aggregator at the small eps makes P2's answers near-uniform (error ~ 0.5)."""
    rng = np.random.default_rng(9)
    q = np.arange(32.0).reshape(-1, 1)
    S = _thr1(4000, 0.1, rng)
    P2 = algorithms.get("lwy-p2", epsilon=0.05, grid=32, n=4000, variant="v15")
    err = (_excess(P2.predict(S, q, 100, rng), eta=0.1) / 0.8).mean()
    assert err >= 0.3      # the correct P2 is at most 0.1 (test above); sd of the mean < 0.02


# -- bad input ---------------------------------------------------------------------------------------
def test_bad_input_is_a_privaudit_error():
    with pytest.raises(PrivauditError, match="eps n >= 1"):
        algorithms.get("lwy-n2", epsilon=0.1).predict(D.d1_label(5, 3)[0], [[2.0]], 3, np.random.default_rng(0))
    with pytest.raises(PrivauditError, match="epsilon"):
        algorithms.get("lwy-n2", epsilon=0.5)
    with pytest.raises(PrivauditError, match="not on the domain grid"):
        algorithms.get("lwy-n2").predict(D.d1_label(100, 60)[0], [[2.5]], 3, np.random.default_rng(0))
    with pytest.raises(PrivauditError, match="portions"):
        algorithms.get("lwy-p2", epsilon=0.1).predict(D.d1_label(100, 60)[0], [[2.0]], 3, np.random.default_rng(0))
    with pytest.raises(PrivauditError, match="no exact oracle"):
        algorithms.get("lwy-p1").exact(D.d5_votes(13, 2)[0], [[4.0]])
    with pytest.raises(PrivauditError, match="base learner"):
        algorithms.get("lwy-n2", base="nope")


def test_registered_and_listed():
    names = algorithms.names()
    for n in ("lwy-n1", "lwy-n2", "lwy-n3", "lwy-b1", "lwy-b3", "lwy-p1", "lwy-p2", "lwy-m4", "lwy-w1"):
        assert n in names
        info = algorithms.info(n)
        assert info["paper"].startswith("Li, Wang & Ye") and info["claim"]["epsilon"] >= 0
        L = algorithms.get(n)
        assert 1 <= len(L.pairs) <= 4 and 1 <= len(L.queries) <= 8


@pytest.mark.parametrize("name", ["lwy-m4", "lwy-w1"])
def test_subsampling_wrappers_reject_a_dataset_of_another_size(name):
    # their amplified claims are about m-of-n sampling: on 8 records m = 100 draws leak eps_A
    L = algorithms.get(name)
    small = Dataset(np.arange(8.0).reshape(-1, 1), np.r_[np.zeros(4), np.ones(4)])
    with pytest.raises(PrivauditError, match="datasets of n = 1000"):
        L.predict(small, L.queries, 10, np.random.default_rng(0))
