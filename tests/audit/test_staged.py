"""Sequential audits' exploration in doubling stages with successive elimination (audit.staged)."""

from __future__ import annotations

import numpy as np
import pytest

import algorithms
from audit import audit, staged
from audit.events import label_candidates
from audit.reducers import CodeCounts
from audit.stats import per_bound_alpha
from audit.types import Claim


def test_stage_sizes_double_up_to_the_budget():
    assert staged.stage_sizes(20_000) == [2_500, 5_000, 10_000, 20_000]
    assert staged.stage_sizes(100_000) == [6_250, 12_500, 25_000, 50_000, 100_000]
    assert staged.stage_sizes(3_000) == [3_000]          # too small to split
    assert staged.stage_sizes(10**7)[-1] == 10**7 and len(staged.stage_sizes(10**7)) == staged.MAX_STAGES


def _coin_pairs(rates):
    """Pair i: one query whose label is 1 with probability rates[i] = (p_a, p_b). `run_stage`
    draws binomial counts (seeded per stage and pair, as the auditor's stages are)."""
    seen = []

    def run_stage(stage, alive, runs):
        seen.append((stage, tuple(alive), runs))
        out = {}
        for i in alive:
            rng = np.random.default_rng([stage, i])
            ka, kb = (int(rng.binomial(runs, r)) for r in rates[i])
            out[i] = (CodeCounts(runs, {1: ka, 0: runs - ka}), CodeCounts(runs, {1: kb, 0: runs - kb}))
        return out

    return run_stage, seen


def _score(claim, n_confirm, alpha):
    return lambda i, ra, rb: label_candidates(ra, rb, 1, pair_index=i, n_confirm=n_confirm,
                                              alpha=alpha, claim=claim)


def test_a_clear_leak_ends_exploration_at_the_first_stage():
    claim, alpha = Claim(1.0), per_bound_alpha(0.95, 1)
    run_stage, seen = _coin_pairs([(0.5, 0.5), (0.9, 0.1), (0.5, 0.5)])
    cands, info = staged.explore_staged(3, 20_000, run_stage, _score(claim, 10**6, alpha),
                                        claim=claim, n_confirm=10**6, alpha=alpha)
    assert info["stopped"] == "violation expected" and len(seen) == 1
    assert info["runs_per_side"] == 2_500 and info["input_runs"] == 3 * 2 * 2_500
    best = max(cands, key=lambda c: c.score)
    assert best.pair_index == 1 and best.expected_epsilon > 1.0


def test_a_single_pair_is_explored_in_two_stages():
    """One pair has nothing to eliminate: the first stage (which still stops on a clear leak) and
    then the rest of the budget, scored once each."""
    claim, alpha = Claim(1.0), per_bound_alpha(0.95, 1)
    run_stage, seen = _coin_pairs([(0.7311, 0.2689)])   # ratio e: at the claim
    _, info = staged.explore_staged(1, 20_000, run_stage, _score(claim, 10**6, alpha),
                                    claim=claim, n_confirm=10**6, alpha=alpha)
    assert seen == [(0, (0,), 2_500), (1, (0,), 17_500)] and info["runs_per_side"] == 20_000
    run_stage, seen = _coin_pairs([(0.9, 0.1)])
    _, info = staged.explore_staged(1, 20_000, run_stage, _score(claim, 10**6, alpha),
                                    claim=claim, n_confirm=10**6, alpha=alpha)
    assert info["stopped"] == "violation expected" and len(seen) == 1


def test_pairs_that_cannot_compete_are_eliminated():
    """A leak just above the claim (e^1.2 against a claim of 1) on pair 0, nothing on pairs
    1-3: the null pairs' optimistic bounds fall below the leader's pessimistic one and below the
    claim, so they are dropped after the first stage and pair 0 alone is explored to the end."""
    claim, alpha = Claim(1.0), per_bound_alpha(0.95, 1)
    q = 0.2
    p = q * np.exp(1.2)
    run_stage, seen = _coin_pairs([(p, q), (0.3, 0.3), (0.5, 0.5), (0.1, 0.1)])
    cands, info = staged.explore_staged(4, 40_000, run_stage, _score(claim, 2_000, alpha),
                                        claim=claim, n_confirm=2_000, alpha=alpha)
    assert [s["pairs"] for s in info["stages"]][:2] == [4, 1]
    assert all(alive == (0,) for _, alive, _ in seen[1:])
    assert info["pair_runs"][1:] == [2_500] * 3 and info["pair_runs"][0] > 2_500
    assert {c.pair_index for c in cands} == {0, 1, 2, 3}    # eliminated pairs keep their candidates


def test_no_pair_can_exceed_a_loose_claim():
    claim, alpha = Claim(3.0), per_bound_alpha(0.95, 1)
    run_stage, seen = _coin_pairs([(0.6, 0.4), (0.5, 0.5)])
    _, info = staged.explore_staged(2, 20_000, run_stage, _score(claim, 10**6, alpha),
                                    claim=claim, n_confirm=10**6, alpha=alpha)
    assert info["stopped"] == "no pair can exceed the claim" and len(seen) == 1


def test_through_the_auditor_a_learner_with_many_pairs():
    """df-cor1 (10 adversarial pairs): its planted bug is flagged after two of the four
    exploration stages (the leader's event validated on fresh runs), the correct variant passes
    without exploring to the budget; the fixed audit's verdicts agree (they are covered by the
    registry tests). Same seed, same stages: deterministic."""
    bug = algorithms.get("df-cor1", variant="bv-cor-1")
    r = audit(bug, seed=0, explore_runs=20_000, confirm_runs=100_000, sequential=True)
    ex = r.sequential["explore"]
    assert r.violation and ex["stopped"] == "violation expected" and ex["runs_per_side"] <= 5_000
    assert ex["validated"] and ex["stages"][-1]["validated"]["exceeds"]
    assert ex["input_runs"] < 10 * 2 * 20_000 / 3
    assert len(ex["pair_runs"]) == 10 and "exploration in stages" in " ".join(r.notes)
    again = audit(bug, seed=0, explore_runs=20_000, confirm_runs=100_000, sequential=True)
    assert again.sequential == r.sequential
    ok = audit(algorithms.get("df-cor1"), seed=0, explore_runs=20_000, confirm_runs=100_000,
               sequential=True)
    assert not ok.violation and ok.sequential["explore"]["input_runs"] < 10 * 2 * 20_000


@pytest.mark.parametrize("name,params", [("dp-rr", {"epsilon": 1.0}), ("dp-laplace", {"epsilon": 1.0})])
def test_fixed_audits_do_not_explore_in_stages(name, params):
    m = algorithms.get(name, **params)
    r = audit(m, m.pairs, seed=0, explore_runs=5_000, confirm_runs=20_000)
    assert r.sequential is None and r.confirmed[0].n_p == 20_000


def test_an_early_stop_needs_the_event_to_hold_on_fresh_runs():
    """The leader's event is counted again on fresh runs before exploration stops: when those
    show no leak (as for an event that only the stage's own counts flatter) exploration goes on;
    when they do, the validated event is confirmed first."""
    claim, alpha = Claim(1.0), per_bound_alpha(0.95, 1)
    run_stage, seen = _coin_pairs([(0.5, 0.5), (0.9, 0.1)])
    calls = []

    def no_leak(stage, pair, event, runs):
        calls.append((stage, pair, runs))
        return runs // 2, runs // 2

    _, info = staged.explore_staged(2, 20_000, run_stage, _score(claim, 10**6, alpha), claim=claim,
                                    n_confirm=10**6, alpha=alpha, validate=no_leak)
    assert info["stopped"] == "budget" and not info["validated"] and len(calls) == 3
    assert all(p == 1 for _, p, _ in calls) and info["stages"][0]["validated"]["exceeds"] is False

    def leak(stage, pair, event, runs):
        return (int(0.9 * runs), int(0.1 * runs)) if event.codes == (1,) else (int(0.1 * runs), int(0.9 * runs))

    run_stage, seen = _coin_pairs([(0.5, 0.5), (0.9, 0.1)])
    cands, info = staged.explore_staged(2, 20_000, run_stage, _score(claim, 10**6, alpha),
                                        claim=claim, n_confirm=10**6, alpha=alpha, validate=leak)
    assert info["stopped"] == "violation expected" and info["validated"] and len(seen) == 1
    assert info["input_runs"] == 2 * 2 * 2_500 + 2 * 2_500
    first = staged.choose(cands, 2, info)
    assert first[0] is cands[0] and first[0].pair_index == 1 and first[0].n_p == 2_500
    assert len(first) == 2 and first[1] is not cands[0]
