"""Event selection on exploration counts (audit/events.py), tested directly.

Each test builds exploration counts by hand, so what the selector must choose is known exactly:
the Neyman–Pearson order of codes, the prefix that maximises the *expected confirmed* bound (not
the raw ratio), threshold events with tail-safe planning, support mismatches, the delta objective
for stability claims, and `select`'s de-duplication.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from audit import Claim
from audit.events import (Candidate, discrete_candidates, label_candidates, objective,
                          prefix_events, select, threshold_candidates)
from audit.reducers import CodeCounts, CodeSet, HistogramCounts, Threshold
from audit.stats import cp_lower, cp_upper, expected_bounds

ALPHA = 0.025
EPS1 = Claim(1.0)


def _by_direction(cands):
    return {c.direction: c for c in cands}


def test_objective_is_delta_only_for_stability_claims():
    assert objective(Claim(1.0)) == "epsilon"
    assert objective(Claim(1.0, 1e-5)) == "epsilon"
    assert objective(Claim(0.0, 0.1)) == "delta"


def test_prefix_orders_codes_by_likelihood_ratio():
    # code 2 has the largest a/b ratio, then 1, then 0: the a>b event must start with 2
    codes = [0, 1, 2]
    ka, kb = np.array([100, 300, 600]), np.array([600, 300, 100])
    c = _by_direction(prefix_events(codes, ka, kb, 1000, 1000, pair_index=0, n_confirm=10**6,
                                    alpha=ALPHA, claim=EPS1, columns=None, encoding="value"))
    assert c["a>b"].event.codes[0] == 2
    assert c["b>a"].event.codes[0] == 0
    # the full set of codes is never an event (it says nothing)
    assert len(c["a>b"].event.codes) < 3 and len(c["b>a"].event.codes) < 3


def test_prefix_prefers_a_large_event_to_a_rare_extreme_one():
    """Code 9 has the larger ratio (3/0) but is rare; the prefix {0} has ratio e^1 at probability
    ~0.5 and certifies far more with 10^5 confirmation runs: the expected-bound criterion picks
    a prefix holding the frequent code, the raw ratio would stop at the rare one."""
    codes = [0, 1, 9]
    ka = np.array([5000, 4997, 3])
    kb = np.array([1839, 8161, 0])           # 5000/1839 = e^1
    c = _by_direction(prefix_events(codes, ka, kb, 10_000, 10_000, pair_index=0, n_confirm=10**5,
                                    alpha=ALPHA, claim=EPS1, columns=None, encoding="value"))["a>b"]
    assert 0 in c.event.codes
    rare_only, _ = expected_bounds(np.array([3 / 1e4]), np.array([0.5 / 10_001]), 10**5, ALPHA, 1.0, 0.0)
    assert c.expected_epsilon > float(rare_only[0]) + 0.2


def test_expected_bound_matches_stats_at_the_chosen_cut():
    codes = [0, 1]
    ka, kb = np.array([7311, 2689]), np.array([2689, 7311])     # ratio e^1 on code 0
    c = _by_direction(prefix_events(codes, ka, kb, 10_000, 10_000, pair_index=3, n_confirm=10**6,
                                    alpha=ALPHA, claim=EPS1, columns=None, encoding="value"))["a>b"]
    assert c.event.codes == (0,) and c.pair_index == 3
    assert (c.k_p, c.k_q) == (7311, 2689)
    # planned with Clopper-Pearson-safe rates on the exploration counts (the winner's curse)
    p_safe, q_safe = cp_lower(7311, 10_000, 0.05), cp_upper(2689, 10_000, 0.05)
    eps, _ = expected_bounds(np.array([p_safe]), np.array([q_safe]), 10**6, ALPHA, 1.0, 0.0)
    assert c.expected_epsilon == pytest.approx(float(eps[0]))
    assert 0.95 < c.expected_epsilon < 1.0      # close to the truth, never above it in plan


def test_support_mismatch_is_planned_with_an_upper_bound():
    """A code never seen under b: planned with q = cp_upper(0, n) at level 0.05, so the expected
    bound is finite and large, not infinite."""
    codes = [0, 1]
    ka, kb = np.array([5000, 5000]), np.array([0, 10_000])
    c = _by_direction(prefix_events(codes, ka, kb, 10_000, 10_000, pair_index=0, n_confirm=10**6,
                                    alpha=ALPHA, claim=EPS1, columns=None, encoding="value"))["a>b"]
    assert c.event.codes == (0,) and c.k_q == 0
    assert math.isfinite(c.expected_epsilon) and c.expected_epsilon > 5


def test_identical_distributions_plan_no_leak():
    codes = list(range(5))
    k = np.array([2000] * 5)
    for c in prefix_events(codes, k, k, 10_000, 10_000, pair_index=0, n_confirm=10**6, alpha=ALPHA,
                           claim=EPS1, columns=None, encoding="value"):
        assert c.expected_epsilon < 0.05


def test_discrete_candidates_merge_code_tables():
    ca = CodeCounts(1000, {(0,): 700, (1,): 300})
    cb = CodeCounts(1000, {(1,): 700, (2,): 300})
    cands = discrete_candidates(ca, cb, pair_index=0, n_confirm=10**5, alpha=ALPHA, claim=EPS1,
                                encoding="rows")
    c = _by_direction(cands)
    assert (0,) in c["a>b"].event.codes and c["a>b"].k_q == 0        # (0,) is a's alone
    assert (2,) in c["b>a"].event.codes and c["b>a"].k_q == 0


def test_label_candidates_cover_each_query_and_the_joint_event():
    # two queries; bits: code = y0 + 2 y1
    ca = CodeCounts(1000, {0: 100, 1: 400, 2: 100, 3: 400})
    cb = CodeCounts(1000, {0: 400, 1: 100, 2: 400, 3: 100})
    model = label_candidates(ca, cb, 2, pair_index=0, n_confirm=10**5, alpha=ALPHA, claim=EPS1)
    single = [c for c in model if isinstance(c.event, CodeSet) and c.event.encoding == "value"]
    # per query, per label, per direction
    assert len(single) == 2 * 2 * 2
    assert {c.query_indices for c in single} == {(0,), (1,)}
    assert any(c.event.encoding == "bits" for c in model)          # joint events (model scope)
    pred = label_candidates(ca, cb, 2, pair_index=0, n_confirm=10**5, alpha=ALPHA,
                            claim=Claim(1.0, scope="prediction"))
    assert all(c.event.encoding == "value" for c in pred)          # prediction scope: one query


def _hist(samples: np.ndarray, edges: np.ndarray) -> HistogramCounts:
    idx = np.searchsorted(edges, samples, side="right")
    counts = np.bincount(idx, minlength=len(edges) + 1).reshape(1, -1)
    return HistogramCounts(len(samples), counts)


def test_threshold_events_find_the_central_cut_of_a_shift():
    rng = np.random.default_rng(0)
    edges = np.linspace(-8, 9, 171)
    a, b = rng.laplace(0.0, 1.0, 200_000), rng.laplace(1.0, 1.0, 200_000)
    cands = threshold_candidates(_hist(a, edges), _hist(b, edges), [(1.0,)], [edges], ["output"],
                                 pair_index=0, n_confirm=10**6, alpha=ALPHA, claim=EPS1)
    best = max(cands, key=lambda c: c.score)
    assert isinstance(best.event, Threshold)
    # Laplace shift by 1 at scale 1: every central cut has ratio e^1; planning must not chase a
    # noisy far tail (the tail-safe rates guard against that)
    assert -1.5 < best.event.threshold < 2.5
    assert 0.9 < best.expected_epsilon <= 1.0


def test_select_keeps_distinct_events_and_ranks_by_score():
    ev = CodeSet((0,), None, "value")
    mk = lambda e, s, d="a>b", p=0: Candidate(p, d, e, 1, 10, 0, 10, s, 0.0)   # noqa: E731
    cands = [mk(ev, 0.5), mk(ev, 0.9), mk(CodeSet((1,), None, "value"), 0.7), mk(ev, 0.8, "b>a")]
    chosen = select(cands, 2)
    assert [c.expected_epsilon for c in chosen] == [0.9, 0.8]
    chosen = select(cands, 10)
    assert len(chosen) == 3                       # the duplicate (pair, direction, event) is dropped


def test_delta_objective_ranks_by_delta_first():
    c1 = Candidate(0, "a>b", CodeSet((0,)), 1, 10, 0, 10, 3.0, 0.01, "delta")
    c2 = Candidate(0, "a>b", CodeSet((1,)), 1, 10, 0, 10, 0.1, 0.20, "delta")
    assert select([c1, c2], 1)[0] is c2


def _label_counts(rng, rates, n):
    """Exploration code counts of a model answering len(rates) independent queries, label 1 at
    query j with probability rates[j] (code = sum of label_j << j)."""
    codes = sum((rng.random(n) < r).astype(np.int64) << j for j, r in enumerate(rates))
    values, counts = np.unique(codes, return_counts=True)
    return CodeCounts(n, {int(v): int(k) for v, k in zip(values, counts)})


def _rate_real_leak_chosen(seeds: int) -> float:
    # six rare labels with no leak (1.25 % under both inputs) beside one common label that leaks
    # (10.76 % against 9.15 %: ln ratio 0.162, the rates of lwy-n2's searched pair at seed 0)
    claim, n, k = Claim(1.0, scope="prediction"), 20_000, 6
    chosen = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        ca = _label_counts(rng, [0.0125] * k + [0.1076], n)
        cb = _label_counts(rng, [0.0125] * k + [0.0915], n)
        best = max(label_candidates(ca, cb, k + 1, pair_index=0, n_confirm=200_000, alpha=ALPHA,
                                    claim=claim), key=lambda c: c.score)
        chosen += best.event.columns == (k,)
    return chosen / seeds


def test_label_planning_resists_the_winners_curse_of_rare_labels(monkeypatch):
    """Label events are planned one standard error toward no leak (`_planning_rates`), so a rare
    label whose ratio looks large only because its counts are small does not outrank a common
    label with a real leak. Over 200 seeded explorations (seeds 0-199) the real leak is chosen
    at 0.97 (0.99 over seeds 0-999); the assertion (>= 0.95, at most 10 misses) fails at a miss
    rate of 0.01 with probability about 1e-5. Plug-in planning, the one before, chooses it at
    0.87 on the same draws (0.887 over 1,000; >= 0.95 there has probability about 0.003): the
    check has the power to see the difference."""
    assert _rate_real_leak_chosen(200) >= 0.95
    monkeypatch.setattr("audit.events._planning_rates", lambda kp, kq, np_, nq: (
        np.asarray(kp, float) / np_, (np.asarray(kq, float) + 0.5) / (nq + 1.0)))
    assert _rate_real_leak_chosen(200) < 0.95
