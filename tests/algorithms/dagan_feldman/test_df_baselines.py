"""DF-B1 (SSSSS10 subsample/average stability) and DF-B2 (DF18/BTT18 flip aggregation).

False alarms: Clopper-Pearson bounds at one-sided level ``A = 1e-7`` each (< 40 bounds here:
family-wise < 1e-5 for any seed); seeds are fixed.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import algorithms
from audit import audit_learner
from audit.errors import PrivauditError
from audit.types import Dataset
from algorithms.dagan_feldman.baselines import (AggregationBaseline, StableBaseline, compositions)
from mc_helpers import covers, label_ones as ones


def test_compositions_enumerate_exactly():
    sizes = np.array([2, 0, 3, 1])
    got = {tuple(c) for c in compositions(sizes, 3)}
    want = {c for c in itertools.product(*(range(s + 1) for s in sizes)) if sum(c) == 3}
    assert got == want and len(compositions(sizes, 3)) == len(want)


def test_subsample_exact_against_brute_force():
    # tiny instance: all C(8, 3) subsets, ERM with first-row tie-break done by hand
    L = StableBaseline(gamma=3 / 8)
    H = L.H
    xs = np.array([10, 10, 20, 30, 30, 40, 50, 20])
    ys = np.array([0, 1, 0, 1, 0, 1, 1, 1])
    S = Dataset(H.domain[xs], ys)
    q = H.domain[[25, 35]]
    tot = np.zeros(2)
    subsets = list(itertools.combinations(range(8), 3))
    for I in subsets:
        err = (H.matrix[:, xs[list(I)]] != ys[list(I)]).sum(axis=1)
        tot += H.matrix[np.argmin(err), [25, 35]]
    assert np.allclose(L.exact(S, q), tot / len(subsets), atol=1e-12)


@pytest.mark.parametrize("make", [lambda: StableBaseline(), lambda: StableBaseline(mode="avg"),
                                  lambda: AggregationBaseline(),
                                  lambda: AggregationBaseline(variant="bv-b2-1")])
def test_exact_matches_monte_carlo(make):
    L = make()
    runs = 50_000
    S, S2 = L.pairs[0]
    for j, D in enumerate((S, S2)):
        assert covers(ones(L, D, L.queries, runs, j), runs, L.exact(D, L.queries))


def test_b1_gap_inclusion_is_tight():
    for mode in ("sub", "avg"):
        L = StableBaseline(gamma=0.1, mode=mode)
        S, S2 = L.pairs[0]
        diff = abs(L.exact(S, L.queries)[0] - L.exact(S2, L.queries)[0])
        assert diff == pytest.approx(0.1, abs=1e-12)        # = m/n = 1/k = gamma: tight
        assert L.claim.epsilon == 0 and L.claim.delta == pytest.approx(0.1)


def test_b2_loss_is_the_certified_value():
    for eps, a in ((1.0, 0.1), (0.5, 0.05)):
        L = AggregationBaseline(epsilon=eps, alpha=a)
        S, S2 = L.pairs[0]
        p0, p02 = 1 - L.exact(S, L.queries)[0], 1 - L.exact(S2, L.queries)[0]
        assert math.log(p0 / p02) == pytest.approx(L.certified_for(S.n), rel=1e-9)
        assert L.certified_for(S.n) <= eps


@pytest.mark.parametrize("variant", ["bv-b2-1", "bv-b2-2"])
def test_b2_bugs_exceed_eps(variant):
    L = AggregationBaseline(variant=variant)
    S, S2 = L.pairs[0]
    p0, p02 = 1 - L.exact(S, L.queries)[0], 1 - L.exact(S2, L.queries)[0]
    if variant == "bv-b2-2":
        assert p02 <= 1e-12 and p0 > 0.1              # label 0 impossible under S': infinite loss
    else:
        assert math.log(p0 / p02) > 2 * L.epsilon


def data(n, rng, H, noise):
    x = rng.integers(0, H.N, n)
    y = (x >= 20).astype(int)
    return Dataset(H.domain[x], np.where(rng.random(n) < noise, 1 - y, y))


@pytest.mark.parametrize("noise", [0.0, 0.1])
def test_utility(noise):
    # B1 at gamma = 0.1 on n = 2000 trains ERM on m = 200 points: uniform convergence for
    # thresholds gives excess error well below 0.1; B2 adds its flip: alpha + (1-2alpha) err.
    truth = (np.arange(64) >= 20).astype(float)
    S = data(2000, np.random.default_rng(1), StableBaseline().H, noise)
    for L, extra in ((StableBaseline(gamma=0.1), 0.0), (AggregationBaseline(epsilon=1.0, alpha=0.1), 0.1)):
        p1 = ones(L, S, L.H.domain, 400, 2) / 400
        err = np.mean(np.abs(p1 - truth))
        assert err <= extra + 0.1


def test_bad_input():
    L = StableBaseline(gamma=0.1)
    with pytest.raises(PrivauditError, match="gamma n"):
        L.predict(Dataset(L.H.domain[:5], [0] * 5), L.queries, 3, np.random.default_rng(0))
    with pytest.raises(PrivauditError):
        algorithms.get("df-b1", mode="bag")
    with pytest.raises(PrivauditError):
        algorithms.get("df-b2", alpha=0.6)
    big = Dataset(L.H.domain[np.arange(2000) % 64], np.arange(2000) % 2)
    with pytest.raises(PrivauditError, match="compositions"):
        StableBaseline(gamma=0.3).exact(big, L.queries)


@pytest.mark.parametrize("name,variant,flagged", [("df-b1", "correct", False), ("df-b2", "correct", False),
                                                  ("df-b2", "bv-b2-1", True), ("df-b2", "bv-b2-2", True)])
def test_audit(name, variant, flagged):
    L = algorithms.get(name, variant=variant)
    res = audit_learner(L, explore_runs=20_000, confirm_runs=50_000, seed=4)
    assert res.violation == flagged
