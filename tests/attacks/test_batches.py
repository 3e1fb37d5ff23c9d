"""Batch-structured pairs for learners that declare positional batches (attacks.batches).

Exact checks on the construction, and one seeded audit: a planted bug of BLM's M (b1, a
noiseless release threshold in the histogram over the k batch outputs) flagged by the search
alone. A flag is a violation the core confirmed on fresh samples (false-alarm probability
<= 1 - confidence = 5 % for a correct learner); the seed is fixed, so the test is deterministic.
"""

import numpy as np
import pytest

import algorithms
from attacks.batches import batch_trial
from attacks.domain import learner_domain
from attacks.families import adversarial_family
from audit import audit_learner
from audit.errors import PrivauditError
from audit.interfaces import declared_batches
from audit.neighbours import check_neighbours
from audit.runners.local import LocalRunner


def test_batch_pairs_replicate_the_two_sides_and_stay_neighbours():
    M = algorithms.get("blm-m")
    k, m = declared_batches(M)
    assert (k, m) == (M.k, M.m)
    dom = learner_domain(M, None, None)
    block = adversarial_family(dom, "replace-one", [m], np.random.default_rng(0), n_anchors=1)[0]
    fill = block.a
    for j, jb, tail in ((0, None, "a"), (5, None, "b"), (k - 1, None, "ra"), (3, 3, "rb")):
        t = batch_trial(block, k, m, M.n_total, j, tail, dom.points, j_b=jb,
                        filler=fill if jb is not None else None)
        check_neighbours(t.a, t.b, "replace-one")
        assert t.a.n == M.n_total
        X = t.a.X[: k * m].reshape(k, m, -1)
        assert np.array_equal(X[0], block.a.X)                         # batch 0 = C in S
        assert np.array_equal(t.b.X[:m], block.b.X)                    # and C' in S'
        n_c = sum(np.array_equal(X[i], block.a.X) and np.array_equal(t.a.y[i * m:(i + 1) * m], block.a.y)
                  for i in range(1, k))
        assert n_c >= j
    # sizes that do not fit are refused, not built
    assert batch_trial(block, k, m, k * m - 1, 0, "a", dom.points) is None
    assert batch_trial(block, k, m, M.n_total, 40, "a", dom.points, j_b=40, filler=fill) is None


def test_m_with_a_noiseless_release_threshold_is_flagged_by_the_search_alone():
    M = algorithms.get("blm-m", variant="b1")
    r = audit_learner(M, seed=0, runner=LocalRunner(), explore_runs=10_000, confirm_runs=100_000,
                      search_options={"strategy": "auto"})
    assert r.violation, (r.epsilon_lower, r.witness.found_by)
    assert "batches/" in r.witness.found_by


@pytest.mark.parametrize("bad", [(0, 5), (3,), (2.5, 4), "ab", (True, 3), 7])
def test_malformed_batch_declarations_are_refused(bad):
    """A learner whose `batches` is not (k, m) positive integers gets a one-line error naming it,
    not a search that silently drops the batch family."""
    class Learner:
        name = "mine"
        batches = bad
    with pytest.raises(PrivauditError, match=r"mine\.batches must be \(k, m\)"):
        declared_batches(Learner())
