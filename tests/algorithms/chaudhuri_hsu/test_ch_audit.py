"""Black-box audits of the Chaudhuri & Hsu learners with their own adversarial pairs and queries.

Correct learners and negative controls must pass; every planted bug the spec calls detectable
(spec 7.7) must be flagged. Budget: explore 20,000 and confirm 200,000 runs per dataset.

Why these cannot flake: every audit uses a fixed seed, so its outcome is reproducible. Beyond
that, the auditor's bounds hold at confidence 0.95, so a correct learner (true loss <= alpha,
computed exactly below where an oracle exists) is flagged with probability <= 0.05 for a random
seed; and each flagged bug has an exact loss far above its claim on the default pairs
(e.g. BRK-1 1.75, BRK-3 5.0, BRK-12 2.5 vs alpha = 1; support mismatches for BRK-6/7/8/10/11/13/14),
where 200,000 runs certify about 0.9 * the true loss (the expected bound, checked on the oracle).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import algorithms
from algorithms.chaudhuri_hsu.learners import underflow_count
from audit import audit_learner
from audit.errors import PrivauditError
from test_ch_learners import _max_loss

BUDGET = dict(explore_runs=20_000, confirm_runs=200_000, seed=2011)

# (learner, variant, extra params); brk-5 needs epsilon_acc > alpha to be a bug at all
FLAGGED = [("ch-a1", v, {}) for v in ("brk-1", "brk-2", "brk-3", "brk-4", "brk-6", "brk-7", "brk-8",
                                      "brk-9", "brk-10", "brk-11", "brk-12", "brk-14")] + [
    ("ch-a1", "brk-5", {"alpha": 0.1, "epsilon_acc": 0.5}),
    ("ch-a1r", "brk-1", {}), ("ch-a1r", "brk-6", {}), ("ch-a1r", "brk-14", {}),
    ("ch-em", "brk-1", {}), ("ch-em", "brk-9", {}), ("ch-em", "brk-12", {}),
    ("ch-a2", "brk-1", {}), ("ch-a2", "brk-3", {}), ("ch-a2", "brk-6", {}), ("ch-a2", "brk-13", {}),
    ("ch-a2", "brk-12", {}),
    ("ch-a1", "brk-1", {"cls": "sep2"}), ("ch-a1", "brk-6", {"cls": "int", "grid": 24}),
]
PASSING = [("ch-em", "correct", {}), ("ch-a1", "correct", {}), ("ch-a1r", "correct", {}),
           ("ch-a2", "correct", {}),
           ("ch-a1", "correct", {"cls": "sep2"}), ("ch-a2", "correct", {"cls": "sep2"}),
           ("ch-a1", "correct", {"reference": "left", "eps0": 0.05, "alpha": 0.5}),   # FP-2
           ("ch-a1", "fp-1", {}), ("ch-a1", "fp-4", {}), ("ch-a1", "fp-5", {}),
           ("ch-a2", "fp-4", {})]


@pytest.mark.parametrize("name,variant,kw", PASSING, ids=[f"{n}-{v}-{i}" for i, (n, v, _) in enumerate(PASSING)])
def test_correct_learners_and_negative_controls_pass(name, variant, kw):
    L = algorithms.get(name, variant=variant, **kw)
    r = audit_learner(L, **BUDGET)
    assert not r.violation, r.witness
    assert r.epsilon_lower <= L.claim.epsilon
    assert r.max_certifiable_epsilon > 5 * L.claim.epsilon   # the pass is informative
    if variant == "correct" and not kw:
        # tight: the default designs reach most of the worst-case loss alpha (exact 0.89-0.92)
        assert r.epsilon_lower > 0.75 * L.claim.epsilon


@pytest.mark.parametrize("name,variant,kw", FLAGGED, ids=[f"{n}-{v}-{i}" for i, (n, v, _) in enumerate(FLAGGED)])
def test_planted_bugs_are_flagged(name, variant, kw):
    L = algorithms.get(name, variant=variant, **kw)
    r = audit_learner(L, **BUDGET)
    assert r.violation, (name, variant, r.epsilon_lower)
    assert r.epsilon_lower > L.claim.epsilon


def test_non_private_erm_negative_control_is_flagged():
    L = algorithms.get("ch-erm")
    r = audit_learner(L, **BUDGET)
    assert r.violation and r.epsilon_lower > 5.0      # support mismatch: capped by the budget only


def test_label_private_a2_outside_claim_is_refused_not_flagged():
    """FP-6: x-moves are outside A2's label-privacy claim: the harness refuses the pair (a clear
    PrivauditError), it does not report a violation; under label pairs A2 passes (above)."""
    A2 = algorithms.get("ch-a2")
    A1 = algorithms.get("ch-a1")
    x_move = A1.pairs[2]
    with pytest.raises(PrivauditError, match="label neighbours"):
        audit_learner(A2, pairs=[x_move], queries=A2.queries, **BUDGET)
    # label pairs built with Dataset.relabel are accepted and pass
    S = x_move[0]
    r = audit_learner(A2, pairs=[(S, S.relabel(0, 0))], queries=A1.queries, **BUDGET)
    assert not r.violation


def test_group_privacy_k_flips():
    """Spec 7.4 / Lemma 22: k = 10 label flips on 10 copies of x0 cost at most k alpha, and at
    alpha = 0.1 the exact group loss is close to k alpha (so per-unit bounds are informative)."""
    L = algorithms.get("ch-a1", alpha=0.1)
    S0, _ = L.pairs[0]
    y0 = int(S0.y[0])
    S = type(S0)(np.repeat(S0.X, 10, axis=0), np.repeat(S0.y, 10))
    Sb = type(S0)(S.X, np.full(10, 1 - y0))
    (r1, p1), (r2, p2) = L.output_distribution(S), L.output_distribution(Sb)
    assert np.array_equal(r1, r2)
    loss = np.max(np.abs(np.log(p1) - np.log(p2)))
    assert 0.7 * 10 * 0.1 < loss <= 10 * 0.1 + 1e-12


# ------------------------------------------------------------------------------------------------
# Issue 5: every planted bug flagged by `audit_learner(L)` with NO pairs given (the learner's own
# pairs and audit instance, as `privaudit audit NAME --variant V` uses them), and the correct
# learner at the same instance passing on the same pairs.
# ------------------------------------------------------------------------------------------------
EM_LEARNERS = ("ch-em", "ch-a1", "ch-a1r", "ch-a2")


@pytest.mark.parametrize("name", EM_LEARNERS)
def test_brk5_flagged_at_its_audit_instance_where_correct_passes(name):
    """BRK-5 (EM run at epsilon_acc instead of alpha) is over-private at the defaults (alpha 1,
    epsilon_acc 0.1), so the registry builds it at the spec's instance alpha = 0.1, epsilon_acc =
    0.5. Cannot flake: fixed seed; the exact loss on the default pairs is 0.39-0.44 (checked
    below), and 200,000 runs per side on events of mass ~0.1 put the Clopper-Pearson bound within
    ~0.05 of it (measured 0.43, ch-a2 0.37; the same at 1e6), far above 0.25; the correct
    learner's exact loss on the same pairs is <= 0.1, so a violation would contradict the 0.95
    confidence of the bound (and with this fixed seed it reads <= 0.1)."""
    L = algorithms.get(name, variant="brk-5")            # no parameters: the audit instance
    assert (L.alpha, L.epsilon_acc, L.claim.epsilon) == (0.1, 0.5, 0.1)
    assert algorithms.info(name)["instances"]["brk-5"] == {"alpha": 0.1, "epsilon_acc": 0.5}
    C = algorithms.get(name, alpha=0.1, epsilon_acc=0.5)
    exact_bug = max(_max_loss(L, S, Sb) for S, Sb in L.pairs)
    exact_ok = max(_max_loss(C, S, Sb) for S, Sb in L.pairs)
    assert 0.3 < exact_bug <= 0.5 + 1e-12 and exact_ok <= 0.1 + 1e-12
    r = audit_learner(L, **BUDGET)
    assert r.violation and r.epsilon_lower > 2.5 * L.claim.epsilon, r.epsilon_lower
    rc = audit_learner(C, pairs=L.pairs, queries=L.queries, **BUDGET)
    assert not rc.violation and rc.epsilon_lower <= 0.1
    # at the defaults the mutation is a no-op privacy-wise (EM at 0.1 <= alpha = 1)
    D = algorithms.get(name, variant="brk-5", alpha=1.0, epsilon_acc=0.1)
    assert max(_max_loss(D, S, Sb) for S, Sb in D.pairs) <= 0.1 + 1e-12


@pytest.mark.parametrize("name", EM_LEARNERS)
def test_brk15_flagged_on_the_underflow_pile_where_correct_passes(name):
    """BRK-15 (unshifted float32 exp): the variant's own design `underflow_pair` puts 2c* - 1
    records at one point (c* = 208 at alpha = 1, the count where float32 exp(-c/2) is exactly 0);
    one label flip moves a whole group of candidates from weight 0 to a positive weight. Exact:
    the event h(x0) = 0 has probability 0 under S and 0.44-1 under S' (support mismatch), while
    the correct EM's loss on the same pair is <= alpha. Cannot flake: fixed seed, and an event of
    mass >= 0.4 that never occurs under S is certified at ~ln(n p / ln(2/beta)) >> 1 (measured
    10.9 at 2e5 runs, 12.5 at 1e6); the correct learner's loss on it is <= alpha = 1 (exact
    0.50-0.55; its audit reads 0.87-0.89, from the default pairs)."""
    assert underflow_count(1.0) == 208 and underflow_count(0.1) == 2080
    assert underflow_count(1.0, np.float64) > 1400
    L = algorithms.get(name, variant="brk-15")
    C = algorithms.get(name)
    S, Sb = L.pairs[-1]
    assert S.n == 415 and np.unique(S.X).size == 1 and len(L.pairs) == len(C.pairs) + 1
    assert _max_loss(L, S, Sb) == math.inf
    assert _max_loss(C, S, Sb) <= C.claim.epsilon + 1e-12
    r = audit_learner(L, **BUDGET)
    assert r.violation and r.epsilon_lower > 5.0, r.epsilon_lower
    rc = audit_learner(C, pairs=L.pairs, queries=L.queries, **BUDGET)
    assert not rc.violation and rc.epsilon_lower <= C.claim.epsilon
