"""Planted bugs are flagged with NO pairs supplied (the search finds the witness), and correct
learners are not flagged more often than 1 - confidence.

Why these tests cannot flake: seeds are fixed, so each outcome is deterministic. Why they are
meaningful: (a) a flagged bug is a *confirmed* violation -- the search only proposes pairs on its
own samples (spawn keys starting with SEARCH = 3), the core re-explores and confirms on fresh
samples, so a false flag has probability <= 1 - confidence = 5 % per audit; (b) the
false-violation test counts flags over seeded repetitions on correct learners and compares them
with the binomial tail of that 5 % rate (a correct auditor exceeds the threshold with probability
< 1e-3).
"""

import pytest
from scipy.stats import binom

import algorithms
from audit import audit_learner
from audit.runners.local import LocalRunner

CONF = 0.95
SMALL = dict(explore_runs=5_000, confirm_runs=50_000)
SEARCH = {"search_runs": 200_000, "candidates": 32}

# (learner, params, bug): a fast, representative set for the default run -- every design
# family is needed somewhere: label flip at the query (EM bugs), gap inclusion / stable-not-private
# (subsampling + flip bugs), unanimous votes (aggregators).
FAST_BUGS = [
    ("df-em", {"grid": 16}, "bv-em-1"),
    ("df-em", {"grid": 16}, "bv-em-3"),
    ("df-b2", {}, "bv-b2-2"),
    ("df-cor1", {}, "bv-cor-1"),
    ("df-real", {}, "bv-real-4"),
]


def _audit(name, params, variant, seed=0, budget=SMALL, search=SEARCH):
    learner = algorithms.get(name, variant=variant, **params)
    return audit_learner(learner, seed=seed, runner=LocalRunner(), confidence=CONF,
                         search_options=dict(search), **budget)


@pytest.mark.parametrize("name, params, bug", FAST_BUGS, ids=[f"{n}:{b}" for n, _, b in FAST_BUGS])
def test_planted_bug_is_found_without_pairs(name, params, bug):
    r = _audit(name, params, bug)
    assert r.violation, (r.epsilon_lower, r.witness.found_by)
    # these learners have exact oracles: the default search is guided by them (auto), and its
    # black-box half still spends runs -- the oracle describes the intended algorithm, not the bug
    assert r.witness.found_by.startswith("search (guided)")
    assert r.search["strategy"] == "guided" and r.search["search_runs"] > 0


def _max_false_flags(reps: int, tail: float = 1e-3) -> int:
    return int(binom.isf(tail, reps, 1 - CONF))


def test_false_violation_rate_on_a_tight_correct_learner():
    """DF-EM at eps = 1 is tight (its worst case approaches eps), so the search does find pairs
    near the claim: the hardest case for false flags. 12 seeded repetitions, small budgets."""
    reps = 12
    flags = sum(_audit("df-em", {"grid": 16}, "correct", seed=s,
                       budget=dict(explore_runs=3_000, confirm_runs=30_000),
                       search={"search_runs": 30_000, "candidates": 16}).violation
                for s in range(reps))
    assert flags <= _max_false_flags(reps)


# Slow set: one bug per mechanism of leakage not covered by FAST_BUGS, at a moderate budget
# (explore 2e4, confirm 2e5, search 2e5 runs). The full table over every DF bug is produced by
# benchmarks/bench_search.py. Known misses of the generic search (they need knowledge no
# black-box family has; see the module notes below) are not listed here:
#   df-real bv-real-2  data-dependent partition: caught only by data whose period equals the
#                      learner's (unknown) block size;
#   bv-api-3           the fit is cached per dataset, so the audit sees one draw of I and h per
#                      dataset: flagged on the learners' replicated D7 tie pairs (several
#                      independent draws), which the generic families do not replicate;
#   df-pp2 bv-pp2-1/3  at the default n'/n the final flip caps the loss below the claim (0.61 < 1);
#                      flagged at their audit instance subsample = 0.5 on the built-in pairs;
#   df-cor1 bv-cor-2   flagged only at the CLI's default budget (1e6 confirmation runs;
#                      measured: epsilon_lower 1.058 > 1, 375 s).
SLOW_BUGS = [
    ("df-b3", "bv-em-1"), ("df-b2", "bv-b2-1"), ("df-real", "bv-real-3"), ("df-real", "bv-real-5"),
    ("df-sta", "bv-sta-1"), ("df-sta", "bv-sta-2"), ("df-cor1", "bv-cor-3"), ("df-cor1", "bv-cor-4"),
    ("df-sta", "bv-api-2"),
]


@pytest.mark.slow
@pytest.mark.parametrize("name, bug", SLOW_BUGS, ids=[f"{n}:{b}" for n, b in SLOW_BUGS])
def test_df_planted_bugs_are_found_without_pairs(name, bug):
    r = _audit(name, {}, bug, budget=dict(explore_runs=20_000, confirm_runs=200_000),
               search={"search_runs": 200_000, "candidates": 48})
    assert r.violation, (r.epsilon_lower, r.delta_lower, r.witness.found_by)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["df-b2", "df-sta"])   # df-b2 is near-tight (0.99 of its claim)
def test_false_violation_rate_on_correct_learners(name):
    reps = 10
    flags = sum(_audit(name, {}, "correct", seed=s, budget=dict(explore_runs=5_000, confirm_runs=50_000),
                       search={"search_runs": 50_000, "candidates": 24}).violation
                for s in range(reps))
    assert flags <= _max_false_flags(reps)
