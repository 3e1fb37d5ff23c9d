"""audit.testing.assert_private and the pytest plugin (markers, session budget, summary).

False alarms: every call expected to pass runs at confidence >= 0.999 on an algorithm that
satisfies its claim, so it fails with probability <= 1e-3 over seeds (DESIGN section 4; the seed
is fixed, so the outcome is the same on every run). Planted bugs are expected to be caught: at
these budgets their epsilon_lower lands near twice the claim (~1.8-2.0 against 1.0), while the
Clopper-Pearson half-width of a log-ratio at 200,000 runs is a few hundredths, so a miss would
take a many-sigma deviation.
"""

from __future__ import annotations

import numpy as np
import pytest

import algorithms
from audit import AuditResult, Claim, PrivauditError
from audit.testing import assert_private

pytest_plugins = ["pytester"]

SAFE = dict(confidence=0.999, explore_runs=20_000, confirm_runs=200_000, seed=3)


@pytest.mark.parametrize("name", ["dp-rr", "dp-laplace", "dp-em"])
def test_correct_mechanisms_pass(name):
    mech = algorithms.get(name, epsilon=1.0)
    result = assert_private(mech, **SAFE)
    assert isinstance(result, AuditResult) and not result.violation
    assert result.epsilon_lower <= 1.0
    # not vacuous: some loss is certified (true loss 1.0; an audit at this budget lands at
    # 0.4-1.0 depending on the event found) and the budget could have certified far more
    assert result.epsilon_lower > 0.2 and result.max_certifiable_epsilon > 5


@pytest.mark.parametrize("name,variant", [("dp-rr", "bv-rr-eps"), ("dp-laplace", "bv-laplace-scale"),
                                          ("dp-em", "bv-em-half")])
def test_planted_bugs_fail_with_witness(name, variant):
    mech = algorithms.get(name, variant=variant)
    with pytest.raises(AssertionError) as info:
        assert_private(mech, **SAFE)
    msg = str(info.value)
    assert msg.startswith(f"privacy violation: {name} does not satisfy 1-DP")
    assert "epsilon_lower = " in msg and "witness: pair #0" in msg and "event output" in msg
    assert "a = " in msg and "b = " in msg and "reproduce: assert_private(" in msg
    eps = float(msg.split("epsilon_lower = ")[1].split()[0])
    assert eps > 1.3                       # the bug doubles the loss; see the module docstring


def test_reproduce_line_reproduces():
    """The message's parameters give the same verdict and bound when re-run."""
    mech = algorithms.get("dp-rr", variant="bv-rr-eps")
    with pytest.raises(AssertionError) as a:
        assert_private(mech, **SAFE)
    with pytest.raises(AssertionError) as b:
        assert_private(algorithms.get("dp-rr", variant="bv-rr-eps"), **SAFE)
    assert str(a.value) == str(b.value)


def test_claim_forms():
    rr = algorithms.get("dp-rr", epsilon=1.0)
    # a number replaces epsilon only; a partial dict is merged into the object's claim
    with pytest.raises(AssertionError, match=r"does not satisfy 0\.5-DP \[replace-one, model scope\]"):
        assert_private(rr, claim=0.5, **SAFE)
    with pytest.raises(AssertionError, match=r"0\.5-DP"):
        assert_private(rr, claim={"epsilon": 0.5}, **SAFE)
    r = assert_private(rr, claim=Claim(1.5), **SAFE)
    assert r.claim.epsilon == 1.5 and not r.violation
    with pytest.raises(PrivauditError, match="unknown claim keys"):
        assert_private(rr, claim={"eps": 1.0})


def test_explicit_pairs_for_user_mechanism():
    class Coin:                      # a user's object: no subclassing, no own pairs
        name = "coin"
        claim = Claim(0.1)

        def sample(self, inp, runs, rng):   # leaks the bit with prob 0.9 / 0.1: loss ln 9
            p = 0.9 if int(np.asarray(inp).ravel()[0]) else 0.1
            return (rng.random(runs) < p).astype(np.int8)

    with pytest.raises(AssertionError, match="coin does not satisfy 0.1-DP"):
        assert_private(Coin(), pairs=[([0], [1])], **SAFE)
    assert_private(Coin(), pairs=[([0], [1])], claim=2.5, **SAFE)   # ln 9 = 2.197 < 2.5


def test_bad_input_is_privaudit_error():
    rr = algorithms.get("dp-rr")
    with pytest.raises(PrivauditError, match="unknown budget key.*runs"):
        assert_private(rr, runs=10)
    with pytest.raises(PrivauditError, match="data= and queries= apply to learners"):
        assert_private(rr, data=[[0.0]])
    with pytest.raises(PrivauditError, match="confidence"):
        assert_private(rr, confidence=1.5)


def _df_learner_available(name: str) -> bool:
    return name in algorithms.names()


@pytest.mark.skipif(not _df_learner_available("df-b2"), reason="df-b2 not registered yet")
def test_df_learner_correct_and_planted_bug():
    """DF-B2 (Dagan & Feldman 2020, RR over subsampled ERM): eps-private prediction."""
    budget = dict(confidence=0.999, explore_runs=20_000, confirm_runs=100_000, seed=1)
    r = assert_private(algorithms.get("df-b2", epsilon=1.0), **budget)
    assert r.kind == "learner" and r.epsilon_lower <= 1.0
    with pytest.raises(AssertionError) as info:
        assert_private(algorithms.get("df-b2", variant="bv-b2-1"), **budget)
    msg = str(info.value)
    # the witness names the query point and the records where the datasets differ
    assert "query point(s):" in msg and "differing record(s):" in msg


# ---------------------------------------------------------------------------------------------
# pytest plugin (runs pytest in-process on generated test files)
# ---------------------------------------------------------------------------------------------
PLUGIN_TESTS = '''
import pytest, algorithms
from audit.testing import assert_private

BUDGET = dict(explore_runs=5_000, confirm_runs=50_000)

@pytest.mark.privacy
def test_rr():
    r = assert_private(algorithms.get("dp-rr", epsilon=1.0), **BUDGET)
    # two marked tests declare 1 + 2 audits: each runs at 1 - 0.01/3
    assert r.confidence == pytest.approx(1 - 0.01 / 3)

@pytest.mark.privacy(audits=2, seed=7)
def test_two_calls():
    r = assert_private(algorithms.get("dp-laplace"), **BUDGET)
    assert r.seed == 7
    assert_private(algorithms.get("dp-em"), confidence=0.9999, **BUDGET)

def test_unmarked():
    r = assert_private(algorithms.get("dp-rr"), **BUDGET)
    assert r.confidence == 0.95
'''


def test_plugin_session_budget(pytester):
    pytester.makepyfile(PLUGIN_TESTS)
    res = pytester.runpytest_inprocess("--privaudit-confidence", "0.99", "-p", "no:cacheprovider")
    res.assert_outcomes(passed=3)
    out = res.stdout.str()
    assert "privaudit" in out and "4 privacy audit(s), 0 violation(s) confirmed" in out
    # sum of 1 - confidence: 0.01/3 + 0.01/3 + 0.0001 + 0.05
    assert f"<= {0.01 / 3 * 2 + 1e-4 + 0.05:.3g}" in out


MARKER_TESTS = '''
import pytest, algorithms

@pytest.mark.privacy("dp-rr", params={"variant": "bv-rr-eps"}, explore_runs=5_000,
                     confirm_runs=50_000)
def test_marker_buggy():
    pass

@pytest.mark.privacy("dp-rr", params={"epsilon": 2.0}, explore_runs=5_000, confirm_runs=50_000)
def test_marker_correct():
    pass

@pytest.mark.privacy(audits=1)
def test_too_many_calls():
    from audit.testing import assert_private
    for _ in range(2):
        assert_private(algorithms.get("dp-rr"), explore_runs=2_000, confirm_runs=2_000)
'''


def test_plugin_marker_audits_object(pytester):
    pytester.makepyfile(MARKER_TESTS)
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    res.assert_outcomes(passed=1, failed=2)
    out = res.stdout.str()
    assert "privacy violation: dp-rr does not satisfy 1-DP" in out and "witness: pair #0" in out
    assert "marked privacy(audits=1) but calls assert_private more often" in out
