"""attacks/: neighbour generators, dataset families and query points produce valid inputs."""

import numpy as np
import pytest

from algorithms.common.hypotheses import intervals, rectangles, thresholds
from attacks import neighbours as nb
from attacks.domain import Domain, data_domain, learner_domain
from attacks.families import adversarial_family, data_family, design_trials, random_family
from attacks.queries import gap_point, query_locations
from audit import Dataset, PrivauditError
from audit.neighbours import check_neighbours, differing

S = Dataset(np.array([[0.0], [0.25], [0.25], [0.5], [1.0]]), np.array([0, 0, 1, 1, 1]))


def test_replace_one_generator_yields_valid_distinct_neighbours():
    out = list(nb.replace_one(S))
    # 5 indices x (4 locations x 2 labels) records, minus the record already there
    assert len(out) == 5 * 8 - 5
    for n in out:
        assert check_neighbours(n.a, n.b, "replace-one") == list(n.changed)
        assert n.a == S and n.a != n.b


def test_add_remove_generator():
    out = list(nb.add_remove(S, records=[([0.75], 1)]))
    assert len(out) == S.n + 1
    for n in out:
        idx = check_neighbours(n.a, n.b, "add-remove")
        assert abs(n.a.n - n.b.n) == 1 and idx == list(n.changed)


def test_label_generator_moves_no_feature():
    out = list(nb.label(S))
    assert len(out) == S.n
    for n in out:
        check_neighbours(n.a, n.b, "label")
        assert np.array_equal(n.a.X, n.b.X)
        assert differing(n.a, n.b) == list(n.changed)


def test_k_group_differs_in_exactly_k_records():
    rng = np.random.default_rng(0)
    out = list(nb.k_group(S, 3, rng=rng, limit=10))
    assert len(out) == 10
    for n in out:
        assert len(differing(n.a, n.b)) == 3
        with pytest.raises(PrivauditError):        # not a replace-one pair: the core refuses it
            check_neighbours(n.a, n.b, "replace-one")
    assert list(nb.neighbours("k-group", S, k=1, groups=[(0,)]))[0].changed == (0,)


def test_generators_reject_bad_input():
    with pytest.raises(PrivauditError, match="out of range"):
        list(nb.replace_one(S, indices=[9]))
    with pytest.raises(PrivauditError, match="group size"):
        list(nb.k_group(S, 7, rng=np.random.default_rng(0)))
    with pytest.raises(PrivauditError, match="unknown neighbour relation"):
        nb.neighbours("swap", S)


@pytest.mark.parametrize("relation", ["replace-one", "add-remove", "label"])
@pytest.mark.parametrize("H", [thresholds(16), intervals(9), rectangles(4)], ids=lambda H: H.name)
def test_families_give_valid_pairs_on_the_domain(relation, H):
    dom = Domain(H.domain, H)
    rng = np.random.default_rng(1)
    trials = adversarial_family(dom, relation, [9, 40], rng, n_anchors=1)
    trials += random_family(dom, relation, [9, 40], rng, 20)
    assert len(trials) > 10
    designs = {t.design for t in trials}
    assert "flip-at-query" in designs and "random" in designs
    if relation == "replace-one":
        assert {"gap-inclusion", "move-to-query"} <= designs
    # every design kind is checked, plus a random sample of the rest (keeps the test fast)
    firsts = {t.design: t for t in reversed(trials)}
    sample = [trials[i] for i in rng.choice(len(trials), size=min(40, len(trials)), replace=False)]
    for t in list(firsts.values()) + sample:
        check_neighbours(t.a, t.b, relation)
        assert t.a.n != t.b.n or differing(t.a, t.b)       # never the same dataset twice
        assert 9 <= t.n <= 40 and (t.design == "random" or t.n in (9, 40))
        H.index(t.a.X), H.index(t.b.X), H.index(t.queries)   # every point is on the class's grid
        assert 1 <= len(t.queries) <= 6
        assert np.unique(t.queries, axis=0).shape[0] == len(t.queries)


def test_design_sizes_multiplicities_and_anchor_query():
    H = thresholds(32)
    dom = Domain(H.domain, H)
    f = (np.arange(32) >= 20).astype(np.int8)
    ts = design_trials(dom, "replace-one", 101, 10, 12, f)
    for t in ts:
        assert t.n == 101
    flip = [t for t in ts if t.design == "flip-at-query"]
    tie = [t for t in flip if t.params["variant"] == "tie"][0]
    xq = H.domain[12]
    # D7: m copies of each label at the query location in the background, the query at x_q first
    at_q = np.all(tie.bg_X == xq, axis=1)
    assert (tie.bg_y[at_q] == 0).sum() == 10 and (tie.bg_y[at_q] == 1).sum() == 10
    assert np.array_equal(tie.queries[0], xq)
    gap = [t for t in ts if t.design == "gap-inclusion" and "gap 3" in t.params["variant"]][0]
    d = np.abs(gap.bg_X[:, 0] - xq[0])
    assert d.min() > 3 * (H.domain[1, 0] - H.domain[0, 0]) - 1e-12      # the gap is empty


def test_interleaved_layout_spreads_copies_over_index_blocks():
    H = thresholds(16)
    dom = Domain(H.domain, H)
    f = np.zeros(16, np.int8)
    t = [t for t in design_trials(dom, "replace-one", 41, 5, 8, f, layout="interleaved")
         if t.params["variant"] == "zeros"][0]
    idx = np.flatnonzero(np.all(t.bg_X == H.domain[8], axis=1))
    assert idx.size == 5 and np.all(np.diff(idx) > 1)   # not contiguous


def test_data_family_keeps_the_users_data_and_queries_nearby():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 1, 15), rng.normal(4, 1, 15)]
    data = Dataset(X, (X > 2).astype(int))
    dom = data_domain(data)
    assert dom.N == 2 * 30 - 1          # 30 x-values and 29 midpoints
    for relation in ("replace-one", "add-remove", "label"):
        ts = data_family(data, dom, relation, rng, 12)
        assert ts
        for t in ts:
            assert t.a == data                       # S is exactly the user's data
            check_neighbours(t.a, t.b, relation)
            assert len(t.queries) >= 1
            i = t.params["index"]
            assert any(np.allclose(q, data.X[i]) for q in t.queries)


def test_query_locations_include_record_boundary_and_gap():
    H = thresholds(21)
    dom = Domain(H.domain, H)
    loc = np.array([0, 1, 2, 3, 14, 15, 16])
    y = np.array([0, 0, 0, 0, 1, 1, 1])
    assert gap_point(dom, loc) in (8, 9)
    q = query_locations(dom, [5], loc, y, 6)
    assert q[0] == 5 and {4, 6} <= set(q)
    assert any(8 <= j <= 9 for j in q)                   # boundary midpoint / gap


def test_learner_domain_resolution():
    class L:
        name = "x"
        H = thresholds(8)

        def predict(self, data, queries, runs, rng):
            return np.zeros((runs, len(queries)), np.int8)

    assert learner_domain(L()).N == 8 and learner_domain(L()).hypotheses is not None

    class Bare:
        name = "bare"

        def predict(self, data, queries, runs, rng):
            return np.zeros((runs, len(queries)), np.int8)

    with pytest.raises(PrivauditError, match="domain"):
        learner_domain(Bare())
    assert learner_domain(Bare(), S).source.startswith("data")
    assert learner_domain(Bare(), domain=np.linspace(0, 1, 5)).N == 5
