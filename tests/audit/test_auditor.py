"""The auditor end to end on mechanisms whose true epsilon is known exactly.

Soundness: over many seeded repetitions, epsilon_lower must exceed the true epsilon in at most a
(1 - confidence) fraction of them. Tightness and power at fixed seeds.
"""

import math

import numpy as np
import pytest
from scipy.stats import binom

import algorithms
from audit import Claim, Dataset, PrivauditError, audit, audit_learner
from audit.runners import LocalRunner

CONF = 0.95


def true_epsilon_discrete(mech, a, b):
    pa, pb = mech.exact(a), mech.exact(b)
    codes = set(pa) | set(pb)
    return max(abs(math.log(pa.get(c, 0) / pb.get(c, 0))) if pa.get(c, 0) and pb.get(c, 0)
               else math.inf for c in codes)


def _max_failures(reps, level=1 - CONF, tail=1e-3):
    """Largest failure count still consistent with a failure rate <= level: a correct auditor
    exceeds it with probability < `tail` (binomial upper tail), so this test flakes with
    probability < 1e-3 per mechanism — and never, since seeds are fixed."""
    return int(binom.isf(tail, reps, level))


@pytest.mark.parametrize("name, params", [
    ("dp-rr", {"epsilon": 1.0}),
    ("dp-laplace", {"epsilon": 1.0}),
    ("dp-em", {"epsilon": 1.0, "k": 8}),
])
def test_soundness_over_seeded_repetitions(name, params):
    mech = algorithms.get(name, **params)
    a, b = mech.pairs[0]
    truth = true_epsilon_discrete(mech, a, b) if hasattr(mech, "exact") else mech.epsilon
    reps, above, flagged = 200, 0, 0
    for seed in range(reps):
        r = audit(mech, [(a, b)], claim=Claim(truth), explore_runs=1_000, confirm_runs=20_000,
                  seed=seed, confidence=CONF)
        above += r.epsilon_lower > truth
        flagged += r.violation
    assert above <= _max_failures(reps)
    assert flagged == above  # a violation is exactly epsilon_lower > claim (claim = truth here)


def test_tightness_randomized_response():
    mech = algorithms.get("dp-rr", epsilon=1.0)
    r = audit(mech, mech.pairs, explore_runs=100_000, confirm_runs=1_000_000, seed=0)
    assert not r.violation
    assert 0.98 <= r.epsilon_lower <= 1.0
    assert r.max_certifiable_epsilon == pytest.approx(12.5, abs=0.1)


@pytest.mark.parametrize("name, variant", [
    ("dp-rr", "bv-rr-eps"), ("dp-rr", "bv-rr-det"),
    ("dp-laplace", "bv-laplace-scale"), ("dp-laplace", "bv-laplace-sensitivity"),
    ("dp-gaussian", "bv-gauss-sigma"),
    ("dp-em", "bv-em-half"), ("dp-em", "bv-em-argmax"),
])
def test_planted_bugs_are_flagged_with_witness(name, variant):
    mech = algorithms.get(name, variant=variant)
    r = audit(mech, mech.pairs, explore_runs=20_000, confirm_runs=200_000, seed=3)
    assert r.violation and r.epsilon_lower > mech.claim.epsilon
    w = r.witness
    assert w is not None and w.direction in ("a>b", "b>a") and w.event_text
    assert r.confirmed and r.confirmed[0].k_p > 0


@pytest.mark.parametrize("name", ["dp-rr", "dp-laplace", "dp-gaussian", "dp-em"])
def test_correct_mechanisms_pass_at_default_seed(name):
    mech = algorithms.get(name)
    r = audit(mech, mech.pairs, explore_runs=20_000, confirm_runs=200_000, seed=3)
    assert not r.violation


def test_vector_continuous_output_uses_learned_statistic():
    class TwoLaplace:
        """Two Laplace(1/eps) releases of one bit: 2*eps-DP by composition, claimed eps."""
        name, claim = "two-laplace", Claim(1.0)

        def sample(self, inp, runs, rng):
            return float(inp[0]) + rng.laplace(0, 1.0, size=(runs, 2))

    r = audit(TwoLaplace(), [(np.array([0.0]), np.array([1.0]))], explore_runs=20_000,
              confirm_runs=200_000, seed=1)
    assert r.violation and r.epsilon_lower > 1.0


def test_result_json_roundtrip():
    mech = algorithms.get("dp-rr", variant="bv-rr-det")
    r = audit(mech, mech.pairs, explore_runs=5_000, confirm_runs=50_000, seed=0)
    from audit import AuditResult
    back = AuditResult.from_dict(r.to_dict())
    assert back.to_dict() == r.to_dict()


class ThresholdLearner:
    """ERM over thresholds, then randomized response on the label (eps-private prediction)."""
    name = "rr-threshold"

    def __init__(self, eps=1.0, leak=False):
        self.claim = Claim(eps, 0.0, "replace-one", "prediction")
        self.keep = math.exp(eps) / (1 + math.exp(eps))
        self.leak = leak

    def predict(self, data, queries, runs, rng):
        # majority label of the records at or left of the query (a deterministic fit)
        lab = np.array([int(data.y[data.X[:, 0] <= q[0]].mean() >= 0.5) if np.any(data.X[:, 0] <= q[0])
                        else 0 for q in queries], dtype=np.int8)
        keep = self.keep if not self.leak else 0.99
        flip = rng.random((runs, len(queries))) >= keep
        return (lab[None, :] ^ flip).astype(np.int8)


def test_audit_learner_with_pairs_and_queries():
    S = Dataset([[0.0], [1.0], [2.0]], [0, 0, 1])
    S2 = S.relabel(1, 1)
    q = np.array([[1.0]])
    good = audit_learner(ThresholdLearner(), pairs=[(S, S2)], queries=q, explore_runs=10_000,
                         confirm_runs=100_000, seed=0)
    assert not good.violation and good.epsilon_lower > 0.8
    bad = audit_learner(ThresholdLearner(leak=True), pairs=[(S, S2)], queries=q,
                        explore_runs=10_000, confirm_runs=100_000, seed=0)
    assert bad.violation and bad.witness.queries == [[1.0]]


def test_bad_arguments_have_clear_messages():
    mech = algorithms.get("dp-rr")
    S = Dataset([[0.0], [1.0]], [0, 1])
    with pytest.raises(PrivauditError, match="confidence"):
        audit(mech, mech.pairs, confidence=1.5)
    with pytest.raises(PrivauditError, match="confirm_runs"):
        audit(mech, mech.pairs, confirm_runs=0)
    with pytest.raises(PrivauditError, match="seed"):
        audit(mech, mech.pairs, seed=-1)
    with pytest.raises(PrivauditError, match="pairs"):
        audit(mech, [])
    with pytest.raises(PrivauditError, match="differ in 2 records"):
        audit_learner(ThresholdLearner(), pairs=[(S, Dataset([[5.0], [6.0]], [1, 0]))],
                      queries=[[0.0]])
    with pytest.raises(PrivauditError, match="query points"):
        audit_learner(ThresholdLearner(), pairs=[(S, S.relabel(0, 1))])
    with pytest.raises(PrivauditError, match="neither a Mechanism"):
        audit(object(), mech.pairs)
    with pytest.raises(PrivauditError, match="claim"):
        audit(mech, mech.pairs, claim="eps=1")


def test_threshold_events_are_planned_with_tail_safe_rates():
    # Laplace at eps = 1, (0, 1): P[X < t] ratios reach e exactly for every t <= 0, so a central
    # threshold certifies close to 1 at 1e6 runs. Planning with raw exploration rates once chose
    # a far tail (`output < -9.2`, 46 vs 22 hits) and confirmed only 0.011. Fixed seed; the bound
    # the core confirms cannot exceed 1 except with probability 0.05, and 0.95 sits ~5 standard
    # errors of the central-event estimate below it.
    mech = algorithms.get("dp-laplace")
    r = audit(mech, mech.pairs, explore_runs=100_000, confirm_runs=1_000_000, seed=0,
              runner=LocalRunner())
    assert not r.violation and 0.95 < r.epsilon_lower <= 1.0
    assert abs(r.witness.event["threshold"]) < 2.0


def test_a_pass_no_budget_of_its_size_could_fail_says_so():
    # 10 runs per side certify at most 0.807 at 95 %: a violation of eps = 1 cannot be shown,
    # even of bv-rr-det (a debug path reveals the bit in a share of runs: eps = inf); the PASS
    # carries a note saying so and the runs that would make one possible (12: ceiling(12) > 1
    # >= ceiling(11))
    from audit import stats
    mech = algorithms.get("dp-rr", variant="bv-rr-det")
    r = audit(mech, mech.pairs, explore_runs=10, confirm_runs=10, seed=0)
    assert not r.violation and r.max_certifiable_epsilon < 1.0
    note = [n for n in r.notes if n.startswith("powerless")]
    assert len(note) == 1 and "0.807" in note[0] and "at 12 confirmation runs" in note[0], r.notes
    ceiling = lambda n: stats.max_certifiable_epsilon(n, CONF, 1, 0.0)   # noqa: E731
    assert ceiling(12) > 1.0 >= ceiling(11)
    # a budget that can show the violation shows it, and says nothing of the kind
    r = audit(mech, mech.pairs, explore_runs=2_000, confirm_runs=20_000, seed=0)
    assert r.violation and not any(n.startswith("powerless") for n in r.notes)


def test_runs_to_certify_is_the_first_budget_above_epsilon():
    from audit import stats
    for eps, conf, tests, delta in [(1.0, 0.95, 1, 0.0), (0.1, 0.99, 3, 0.0), (5.0, 0.95, 10, 0.0),
                                    (1.0, 0.95, 1, 0.5), (0.0, 0.95, 1, 0.999)]:
        def ceiling(n):
            return stats.max_certifiable_epsilon(n, conf, tests, delta)
        n = stats.runs_to_certify(eps, ceiling)
        assert ceiling(n) > eps and not ceiling(n - 1) > eps, (eps, n)
    assert stats.runs_to_certify(1.0, lambda n: 0.5, limit=1_000) is None
