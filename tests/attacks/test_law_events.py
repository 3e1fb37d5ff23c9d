"""Events on whole outputs for the search's exact scores (attacks.search.law_events and
score_exact with a learner's joint law, `HasExactLaw`)."""

import itertools
import math

import numpy as np
import pytest

import algorithms
from attacks.search import _marginals, law_bounds, law_events, score_exact
from attacks.trial import Trial
from audit.interfaces import claim_of, exact_law_oracle
from audit.types import Claim


def test_law_events_hold_every_code_and_the_ratio_prefix_sets_both_ways():
    a = {b"x": 0.5, b"y": 0.3, b"z": 0.2}
    b = {b"x": 0.1, b"y": 0.3, b"w": 0.6}
    P, Q = law_events(a, b)
    # codes sorted: w, x, y, z; first half S over S', second half S' over S
    assert P.size == Q.size == 16
    np.testing.assert_allclose(P[:4], [0.0, 0.5, 0.3, 0.2])
    np.testing.assert_allclose(Q[:4], [0.6, 0.1, 0.3, 0.0])
    # prefix sets by a/b: z (inf), x (5), y (1), w (0)
    np.testing.assert_allclose(P[4:8], [0.2, 0.7, 1.0, 1.0])
    np.testing.assert_allclose(Q[4:8], [0.0, 0.1, 0.4, 1.0])
    # the other way: w (inf), y (1), x (0.2), z (0)
    np.testing.assert_allclose(P[12:], [0.6, 0.9, 1.0, 1.0])
    np.testing.assert_allclose(Q[12:], [0.0, 0.3, 0.8, 1.0])
    assert np.all((P >= 0) & (P <= 1) & (Q >= 0) & (Q <= 1))


def test_whole_output_events_raise_the_score_of_m_s_crossing_and_respect_the_oracle():
    """BLM's M with bug B5 on spec 6.4's crossing (its first design): three released outputs.
    At its best single query the expected bound is 0.97 (the claim is 1); on whole outputs 1.56.
    The joint law is consistent with the marginals `exact` gives."""
    L = algorithms.get("blm-m", variant="b5")
    law = exact_law_oracle(L)
    assert law is not None
    S, S2 = L.pairs[0]
    q = L.queries
    for d in (S, S2):
        joint = law(d, q)
        assert math.isclose(sum(joint.values()), 1.0, rel_tol=1e-9)
        marg = sum(p * np.frombuffer(c, np.int8).astype(float) for c, p in joint.items())
        np.testing.assert_allclose(marg, L.exact(d, q), atol=1e-12)
        np.testing.assert_allclose(_marginals(joint, len(q)), L.exact(d, q), atol=1e-12)
    t = _pair_trial(S, S2, q)
    claim = claim_of(L)
    full = score_exact(L, [t], claim=claim, confirm_runs=200_000, confidence=0.95, tests=3)[0]
    # the same learner without the joint law: single-query events only
    class Marginals:
        def __init__(self, inner):
            self.exact = inner.exact
    single = score_exact(Marginals(L), [t], claim=claim, confirm_runs=200_000, confidence=0.95,
                         tests=3)[0]
    assert single.value < 1.0 < 1.5 < full.value, (single.value, full.value)
    assert full.detail["event"] == "whole output" and "query" not in full.detail
    assert full.tiebreak >= single.tiebreak
    # prediction scope: every event is about one query, the joint law is not used
    pred = score_exact(L, [t], claim=Claim(claim.epsilon, claim.delta, claim.neighbours,
                                           "prediction"),
                       confirm_runs=200_000, confidence=0.95, tests=3)[0]
    assert pred.value == pytest.approx(single.value)


def _pair_trial(S, S2, q):
    """A Trial holding the neighbouring pair (S, S2): the record where they differ."""
    diff = np.flatnonzero(np.any(S.X != S2.X, axis=1) | (S.y != S2.y))
    assert diff.size == 1
    i = int(diff[0])
    keep = np.arange(S.n) != i
    return Trial(S.X[keep], S.y[keep], (S.X[i], int(S.y[i])), (S2.X[i], int(S2.y[i])), i, q,
                 "design", {})


@pytest.mark.parametrize("bad, reason", [
    ({}, "non-empty dict"),
    ([(b"\x00\x01\x00", 1.0)], "non-empty dict"),
    ({b"\x00\x01": 1.0}, "every key must be the 3 int8 labels"),
    ({"010": 1.0}, "every key must be the 3 int8 labels"),
    ({b"\x00\x02\x00": 1.0}, "labels must be 0 or 1"),
    ({b"\x00\x01\x00": 0.5}, "sum to 1"),
    ({b"\x00\x01\x00": 1.5, b"\x00\x00\x00": -0.5}, ">= 0"),
    ({b"\x00\x01\x00": float("nan")}, "finite"),
])
def test_a_malformed_joint_law_is_refused_with_its_reason_not_scored(bad, reason):
    """A learner whose exact_law returns garbage gets its trial refused (-inf, the reason in
    the search history), like an oracle that raises -- never a score made of that law."""
    L = algorithms.get("blm-m", variant="b5")
    S, S2 = L.pairs[0]
    q = L.queries[:3]

    class Garbage:
        def __init__(self, inner):
            self.exact = inner.exact

        def exact_law(self, data, queries):
            return bad

    got = score_exact(Garbage(L), [_pair_trial(S, S2, q)], claim=claim_of(L),
                      confirm_runs=200_000, confidence=0.95, tests=3)[0]
    assert got.value == -math.inf and reason in got.detail["exact"], got.detail


@pytest.mark.parametrize("seed, delta", [(0, 0.0), (1, 0.05), (2, 0.2), (3, 0.05)])
def test_law_bounds_equal_the_best_event_over_every_set_of_codes(seed, delta):
    """The prefix sets by likelihood ratio, both ways, hold the optimal events: the exact
    (epsilon at delta, delta at epsilon) over whole outputs equal brute force over all 2^6
    sets of six codes, in both directions (S over S' and S' over S)."""
    rng = np.random.default_rng(seed)
    codes = [bytes([i]) for i in range(6)]
    a, b = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
    if seed == 3:
        a, b = b, a     # the leak the other way round
    claim = Claim(0.5, delta)
    eps, dlt = law_bounds(dict(zip(codes, a)), dict(zip(codes, b)), claim)
    best_e, best_d = 0.0, 0.0
    for r in range(1, 7):
        for E in itertools.combinations(range(6), r):
            pa, pb = a[list(E)].sum(), b[list(E)].sum()
            for x, y in ((pa, pb), (pb, pa)):
                if x - delta > 0:
                    best_e = max(best_e, math.log((x - delta) / y))
                best_d = max(best_d, x - math.exp(claim.epsilon) * y)
    assert eps == pytest.approx(best_e, rel=1e-9, abs=1e-12)
    assert dlt == pytest.approx(best_d, rel=1e-9, abs=1e-12)
