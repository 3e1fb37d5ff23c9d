"""A short-listed pair keeps every query when dropping some changes the law at the others
(attacks.search._faithful_queries).

Under prediction scope the search hands a pair to the core with two of its queries (the best
event's and one more: `_kept_queries`). A correct learner's prediction at x does not depend on
which other points are queried; DF-STA's planted bug BV-API-2 (its one run seeded from a hash of
S, drawn over the queries asked) does. At 10^4 / 10^5 runs and seed 1 the search's three pairs
had exact delta 1 at their six queries and 0 at the two kept, and the audit confirmed 0 (the
designs, at the learner's own queries: 0.9999).
"""

import numpy as np

import algorithms
from attacks.domain import learner_domain
from attacks.families import design_trials
from attacks.search import Scored, _faithful_queries
from audit import PrivauditError, audit_learner
from audit.runners.local import LocalRunner


def _scored():
    L = algorithms.get("df-sta")
    dom = learner_domain(L, None, None)
    t = design_trials(dom, "replace-one", 64, 1, 10, np.zeros(dom.N, np.int8))[0]
    q = np.asarray(t.queries, float).reshape(-1, 1)
    assert len(q) > 2
    return Scored(t, 0.5, 0.5, {"query": 1}), q


def test_a_query_independent_oracle_keeps_the_reduction():
    s, q = _scored()
    kept = q[[1, 0]]
    calls = []

    def oracle(data, queries):        # the law at x is a function of x alone
        calls.append(len(queries))
        return 0.2 + 0.5 * np.asarray(queries, float)[:, 0]

    assert np.array_equal(_faithful_queries(s, kept, oracle), kept)
    assert calls == [len(q), 2, len(q), 2]       # both sides, full and kept
    assert np.array_equal(_faithful_queries(s, kept, None), kept)   # no oracle: nothing to check
    assert np.array_equal(_faithful_queries(s, q, oracle), q)       # nothing was dropped


def test_an_oracle_whose_law_moves_with_the_query_set_gets_every_query():
    s, q = _scored()
    kept = q[[1, 0]]

    def oracle(data, queries):        # as a run drawn over the queries asked
        return np.full(len(queries), 1.0 / len(queries))

    assert np.array_equal(_faithful_queries(s, kept, oracle), q)


def test_a_refusing_or_misshapen_oracle_leaves_the_reduction_alone():
    s, q = _scored()
    kept = q[[1, 0]]

    def refuses(data, queries):
        raise PrivauditError("no closed form here")

    def scalar(data, queries):
        return 0.5

    assert np.array_equal(_faithful_queries(s, kept, refuses), kept)
    assert np.array_equal(_faithful_queries(s, kept, scalar), kept)


def test_search_alone_flags_bv_api_2_at_the_seed_that_lost_it():
    L = algorithms.get("df-sta", variant="bv-api-2")
    r = audit_learner(L, explore_runs=10_000, confirm_runs=100_000, seed=1, runner=LocalRunner(),
                      search_options={})
    # seeds 0-3: 0.99993 each, 2-3 pairs with every query (before: 0 at seed 1)
    assert r.violation and r.delta_lower > 0.99, r.delta_lower
    assert r.search["queries_kept_whole"] >= 1


def test_the_correct_learner_keeps_the_reduced_queries():
    r = audit_learner(algorithms.get("df-sta"), explore_runs=10_000, confirm_runs=100_000,
                      seed=1, runner=LocalRunner(), search_options={})
    assert r.search["queries_kept_whole"] == 0 and not r.violation
