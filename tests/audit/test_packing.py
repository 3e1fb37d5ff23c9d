"""The packing bound (audit.packing): pure statistics and the engine on toy learners."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audit import Claim, Dataset
from audit.errors import PrivauditError
from audit.packing import (
    PackingFamily,
    audit_packing,
    epsilon_bound,
    kmax_formula,
    packing_bound,
)
from audit.stats import cp_lower


def test_bound_matches_the_closed_form_at_equal_distances():
    """All K datasets 2 moves apart, every run a success: the bound is (1/2) ln(sum_{j!=i} p_j^lo /
    (1 - p_i^lo)) with every CP bound at level 0.05/K (spec 7.5)."""
    K, n = 598, 10_000
    D = 2 * (1 - np.eye(K, dtype=np.int64))
    b = packing_bound(np.full(K, n), np.full(K, n), D, Claim(0.1), 0.95)
    p = float(cp_lower(n, n, 0.05 / K))
    assert b.epsilon_lower == pytest.approx(0.5 * math.log((K - 1) * p / (1 - p)), rel=1e-9)
    assert b.kmax_epsilon == pytest.approx(b.epsilon_lower, rel=1e-9)
    assert b.violation and b.max_certifiable_epsilon == pytest.approx(b.epsilon_lower)
    # the spec's 7.2 leaves the Bonferroni factor out of 1 - p_i: ln(2/0.05)/n instead of ln(K/0.05)/n
    assert 6.6 < b.epsilon_lower < 6.75


def test_per_pair_distances_are_never_weaker_than_k_max():
    rng = np.random.default_rng(3)
    K = 12
    D = rng.integers(1, 6, size=(K, K))
    D = np.triu(D, 1) + np.triu(D, 1).T
    p = rng.uniform(0.5, 0.99, K)
    for i in range(K):
        assert epsilon_bound(p, D, i) >= kmax_formula(p, int(D.max()), i) - 1e-9


def test_no_bound_from_chance_level_successes():
    K = 10
    D = 1 - np.eye(K, dtype=np.int64)
    b = packing_bound(np.full(K, 100), np.full(K, 1000), D, Claim(1.0), 0.95)
    assert b.epsilon_lower == 0.0 and not b.violation


class RandomizedResponse:
    """Exactly eps-DP per record on the toy family: dataset j is k copies of the point j; the
    learner outputs the majority point's index with probability e^{eps'}/(e^{eps'} + K - 1) where
    the score is eps per agreeing record (the exponential mechanism with sensitivity-1 scores
    and weight e^{eps * votes}, which is 2 eps-DP in general; here every replace-one move changes
    one vote by one and the other by one, so the per-record loss is at most 2 eps: the claim says
    2 eps)."""

    name = "toy-em"

    def __init__(self, eps: float, K: int) -> None:
        self.eps, self.K = eps, K
        self.claim = Claim(2 * eps, 0.0, "replace-one", "model")

    def predict(self, data, queries, runs, rng):
        votes = np.bincount(data.X[:, 0].astype(int), minlength=self.K)
        w = np.exp(self.eps * (votes - votes.max()))
        j = rng.choice(self.K, size=runs, p=w / w.sum())
        return (queries[None, :, 0] == j[:, None]).astype(np.int8)


def _toy_family(K: int, k: int) -> PackingFamily:
    ds = [Dataset(np.full((k, 1), float(j)), np.zeros(k, dtype=int)) for j in range(K)]
    Q = np.arange(K, dtype=float).reshape(-1, 1)
    return PackingFamily(ds, Q, np.eye(K, dtype=np.int8), 0, name="toy")


def test_engine_is_sound_and_tight_on_a_toy_exponential_mechanism():
    """Over 20 seeds the bound never exceeds the true loss of the pair at distance k (the toy EM
    realizes exactly eps k between the two extreme datasets: ln of the weight ratio), and the
    best seed gets within 15 % of what the family can show. False-alarm analysis: each seed's
    bound exceeds the truth with probability <= 5 %, and a single seed exceeding 2 eps (the
    claim) would need a much larger deviation; the assertion below is checked on fixed seeds."""
    eps, K, k = 0.5, 6, 2
    L = RandomizedResponse(eps, K)
    fam = _toy_family(K, k)
    bounds = [audit_packing(L, fam, claim=L.claim, runs=4_000, seed=s).epsilon_lower for s in range(20)]
    # truth: p_j = e^{eps k}/(e^{eps k} + K - 1) for all j; the family's formula at the true p's
    p = math.exp(eps * k) / (math.exp(eps * k) + K - 1)
    ideal = 0.5 * math.log((K - 1) * p / (1 - p))
    assert max(bounds) <= 2 * eps                  # never above the claim (it is exactly 2 eps-DP)
    assert ideal <= eps + 1e-12                    # the family can show at most eps per record here
    assert max(bounds) <= ideal + 0.05 and max(bounds) > 0.6 * ideal


def test_family_validation_and_refusals():
    ds = [Dataset([[0.0]], [0]), Dataset([[1.0]], [1])]
    with pytest.raises(PrivauditError, match="not disjoint"):
        PackingFamily(ds, [[0.0], [1.0]], [[0, 1], [0, 0]], 1)
    with pytest.raises(PrivauditError, match="shape"):
        PackingFamily(ds, [[0.0], [1.0]], [[0, 1]], 0)
    with pytest.raises(PrivauditError, match="between 2 and"):
        PackingFamily(ds[:1], [[0.0]], [[0]], 0)

    class PredictionScope(RandomizedResponse):
        name = "pp"

        def __init__(self):
            super().__init__(0.5, 2)
            self.claim = Claim(1.0, 0.0, "replace-one", "prediction")

    with pytest.raises(PrivauditError, match="prediction scope .* cannot be audited by a packing"):
        audit_packing(PredictionScope(), _toy_family(2, 1), claim=PredictionScope().claim)
    fam = _toy_family(3, 1)
    with pytest.raises(PrivauditError, match="label claim allows label moves only"):
        audit_packing(RandomizedResponse(0.5, 3), fam, claim=Claim(1.0, 0.0, "label"), runs=10)


def test_user_membership_test_is_recorded_as_declared():
    K = 4
    fam = PackingFamily([Dataset(np.full((1, 1), float(j)), [0]) for j in range(K)],
                        np.arange(K, dtype=float).reshape(-1, 1),
                        member=lambda j, preds: preds[:, j] == 1, name="mine")
    L = RandomizedResponse(0.5, K)
    r = audit_packing(L, fam, claim=L.claim, runs=500)
    assert any("declared, not checked" in n for n in r.notes)
    assert r.search["packing"]["regions"].startswith("user membership")


def test_a_pivot_named_in_advance_halves_the_budget_on_one_minus_p():
    """Spec 7.5's LB5 example (K = 598, n = 10^4, all successes): with pivot i named before the
    runs, 1 - p_i gets (1 - confidence)/2 and the others share the other half, so the bound is
    (1/2) ln(sum p_j / (1 - p_i)) with 1 - p_i ~ ln(40)/n: about 7.15 (spec: ~7.2)."""
    K, n = 598, 10_000
    D = 2 * (1 - np.eye(K, dtype=np.int64))
    b = packing_bound(np.full(K, n), np.full(K, n), D, Claim(0.1), 0.95, pivot=0)
    p0 = float(cp_lower(n, n, 0.025))
    pj = float(cp_lower(n, n, 0.025 / (K - 1)))
    assert b.epsilon_lower == pytest.approx(0.5 * math.log((K - 1) * pj / (1 - p0)), rel=1e-9)
    assert 7.1 < b.epsilon_lower < 7.2 and b.pivot == 0
    # a pivot with few successes gives a weak bound: the choice must come before the data
    k = np.full(K, n)
    k[3] = n // 2
    weak = packing_bound(k, np.full(K, n), D, Claim(0.1), 0.95, pivot=3).epsilon_lower
    assert weak == pytest.approx(0.5 * math.log(597 * pj / (1 - float(cp_lower(n // 2, n, 0.025)))))
    assert weak < packing_bound(k, np.full(K, n), D, Claim(0.1), 0.95).epsilon_lower - 3
    with pytest.raises(PrivauditError, match="pivot must be in"):
        _toy_family(3, 1).__class__(_toy_family(3, 1).datasets, np.arange(3.0).reshape(-1, 1),
                                    np.eye(3, dtype=np.int8), pivot=5)
