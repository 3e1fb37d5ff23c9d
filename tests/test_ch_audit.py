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

import numpy as np
import pytest

import algorithms
from audit import audit_learner
from audit.errors import PrivauditError

BUDGET = dict(explore_runs=20_000, confirm_runs=200_000, seed=2011)

# (learner, variant, extra params); brk-5 needs epsilon_acc > alpha to be a bug at all
FLAGGED = [("ch-a1", v, {}) for v in ("brk-1", "brk-2", "brk-3", "brk-4", "brk-6", "brk-7", "brk-8",
                                      "brk-9", "brk-10", "brk-11", "brk-12", "brk-14")] + [
    ("ch-a1", "brk-5", {"alpha": 0.1, "epsilon_acc": 0.5}),
    ("ch-a1r", "brk-1", {}), ("ch-a1r", "brk-6", {}),
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
