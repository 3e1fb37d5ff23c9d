"""Generic search dimensions that planted bugs hide in: sizes where a learner's behaviour steps
(found by bisection on the exact oracle over balanced piles) and the differing record's
position (order-dependent learners).

The unit tests are exact (oracle values, no sampling). The audits use fixed seeds; a flag is a
violation confirmed by the core on fresh samples, which a correct learner produces with
probability <= 1 - confidence = 5 % per audit, so a passing bug test cannot be a lucky false
alarm of a correct learner more often than that, and the correct learners' step probe is
checked to find nothing at all (exactly).
"""

import numpy as np
import pytest

import algorithms
from attacks.domain import learner_domain
from attacks.families import adversarial_family, anchors, record_first
from attacks.search import exact_bounds
from attacks.search import search as search_fn
from attacks.sizesteps import find_steps, pile_queries, pile_trials, step_candidates
from audit import audit_learner
from audit.neighbours import check_neighbours
from audit.runners.local import LocalRunner


def _probe(learner, calls=48):
    dom = learner_domain(learner, None, None)
    a = int(anchors(dom, 1)[0])
    return dom, a, find_steps(learner.exact, dom, a, 8, 4096, calls)


def _exact(learner, t):
    return exact_bounds(np.asarray(learner.exact(t.a, t.queries)),
                        np.asarray(learner.exact(t.b, t.queries)), learner.claim)[0]


def test_pile_pairs_are_neighbours_under_every_relation():
    dom = learner_domain(algorithms.get("ch-em"), None, None)
    for relation in ("replace-one", "add-remove", "label"):
        for n in (2, 7, 8):
            for t in pile_trials(dom, relation, n, 5):
                check_neighbours(t.a, t.b, relation)
                assert t.n == n and np.all(t.a.X == dom.points[5])


@pytest.mark.parametrize("name", ["ch-em", "ch-a1", "df-em", "lwy-n1"])
def test_correct_learners_have_no_size_steps(name):
    """Their output law on the balanced pile does not depend on n (EM over mistake counts
    that differ by one whatever n is): the probe must find nothing."""
    _, _, (steps, used) = _probe(algorithms.get(name))
    assert steps == [] and used <= 48


def test_a_law_that_moves_with_n_everywhere_has_no_isolated_steps():
    """lwy-n2 subsamples ceil(eps n) records: its pile law changes across 16 of 17 ladder
    gaps. Such n-dependence is not a step; the probe reports none."""
    _, _, (steps, used) = _probe(algorithms.get("lwy-n2", variant="v2"))
    assert steps == [] and used <= 20


@pytest.mark.parametrize("name, variant, where", [
    ("ch-a1", "brk-14", 635),    # add-remove claim, KAPPA(m)'s cover changes between 634 and 635
    ("ch-a1r", "brk-14", 58),    # the realizable KAPPA: between 57 and 58
    ("ch-em", "brk-15", 414),    # float32 weights underflow: counts 207 / 208 at alpha = 1
])
def test_the_probe_finds_the_size_where_a_planted_bug_leaks(name, variant, where):
    learner = algorithms.get(name, variant=variant)
    dom, a, (steps, used) = _probe(learner)
    assert steps and used <= 48
    cands = step_candidates(dom, learner.claim.neighbours, steps[:2], a, 3, 4096)
    assert where in {t.n for t in cands}
    best = max(cands, key=lambda t: _exact(learner, t))
    assert best.n == where
    if variant == "brk-15":
        assert _exact(learner, best) == np.inf       # support mismatch


@pytest.mark.parametrize("name, variant, where", [("ch-a1r", "brk-14", 58), ("ch-em", "brk-15", 414)])
def test_size_steps_at_fixed_queries_are_found_and_built_there(name, variant, where):
    """Queries the user fixed: the probe compares the pile's law at them, and every pile pair
    is built there, pinned (the version before probed and built at the pile's own queries,
    and only the search's safety net moved the pairs onto the fixed ones)."""
    learner = algorithms.get(name, variant=variant)
    dom = learner_domain(learner, None, None)
    a = int(anchors(dom, 1)[0])
    q = dom.points[[0]]
    assert not np.array_equal(pile_queries(dom, a)[:1], q)      # other points than the pile's
    steps, used = find_steps(learner.exact, dom, a, 8, 4096, 48, queries=q)
    assert steps and used <= 48
    cands = step_candidates(dom, learner.claim.neighbours, steps[:2], a, 3, 4096, q)
    assert cands and all(t.fixed_queries and np.array_equal(t.queries, q) for t in cands)
    assert where in {t.n for t in cands}
    if name == "ch-a1r":
        assert max(cands, key=lambda t: _exact(learner, t)).n == where
        out = search_fn(learner, queries=q, claim=learner.claim, seed=0, explore_runs=2_000,
                        confirm_runs=20_000, search_runs=40_000, strategy="guided")
        piles = [h for h in out.info["history"] if h["design"] == "size-step"]
        assert {"exact size steps"} <= {h["phase"] for h in piles}
        assert {where - 1, where, where + 1} <= {h["n"] for h in piles}
        for h in out.info["history"]:
            assert np.allclose(np.asarray(h["queries"], float).reshape(q.shape), q), h["queries"]


def test_record_first_moves_the_record_and_keeps_the_pair():
    learner = algorithms.get("lwy-n2", variant="v5")
    dom = learner_domain(learner, None, None)
    for t in adversarial_family(dom, "replace-one", [128], np.random.default_rng(0), n_anchors=1)[:20]:
        f = record_first(t)
        assert f.pos == 0 and f.params["position"] == "first"
        check_neighbours(f.a, f.b, "replace-one")
        assert np.array_equal(f.a.X[0], t.ra[0]) and f.a.y[0] == t.ra[1]
        assert np.array_equal(np.sort(f.a.X, axis=0), np.sort(t.a.X, axis=0))


def test_a_deterministic_first_records_split_leaks_only_with_the_record_first():
    """lwy-n2 v5 (T = the first ceil(eps n) records): exact epsilon 0 with the record last,
    1 (= the base learner's eps_A) with it first, on the same gap-inclusion pair."""
    learner = algorithms.get("lwy-n2", variant="v5")
    dom = learner_domain(learner, None, None)
    fam = [t for t in adversarial_family(dom, "replace-one", [128], np.random.default_rng(0),
                                         n_anchors=dom.N) if t.design == "gap-inclusion"]
    last = max(_exact(learner, t) for t in fam)
    first = max(_exact(learner, record_first(t)) for t in fam)
    assert last < 1e-9 and first > 0.99


@pytest.mark.parametrize("name, variant", [("ch-a1r", "brk-14"), ("ch-em", "brk-15"),
                                           ("lwy-n2", "v5")])
def test_bugs_in_sizes_and_positions_are_flagged_by_the_search_alone(name, variant):
    learner = algorithms.get(name, variant=variant)
    r = audit_learner(learner, seed=0, runner=LocalRunner(), explore_runs=10_000,
                      confirm_runs=100_000, search_options={"strategy": "auto"})
    assert r.violation, (r.epsilon_lower, r.witness.found_by)
    assert r.witness.found_by.startswith("search (guided)")


def test_an_oracle_that_recurses_too_deep_counts_as_refusing():
    """An exact oracle may fail on large inputs by recursing too deep (BLM's shared-stream G
    on a 25,443-record batch design did): the probe treats that as a refusal, not a crash."""
    inner = algorithms.get("ch-em", variant="brk-15")

    def exact(data, queries):
        if data.n > 300:
            raise RecursionError("maximum recursion depth exceeded")
        return inner.exact(data, queries)

    dom = learner_domain(inner, None, None)
    steps, used = find_steps(exact, dom, int(anchors(dom, 1)[0]), 8, 4096, 48)
    # the underflow step (n = 413-414) lies beyond what it accepts; no crash, no step there
    assert all(b <= 300 for _, b in steps) and used <= 48
