"""One move shifts every block of the sorted data (attacks.families.sorted_shift).

Before this design the search flagged DF-REAL's planted bug BV-REAL-2 (contiguous blocks of the
x-sorted data instead of a fixed partition) at 5 of seeds 0-7 only (10^4 / 10^5 runs, confirmed
0.86-1.89 against the claim 1; the designs 5.79): its hand-made design
(`algorithms.dagan_feldman.real.pair_sorted_shift`) needs a background periodic in the learner's
k = 12 blocks, which no generic kind encoded, so the search found the leak only when a
move-to-query pair happened to land on a helpful size and anchor.
"""

import numpy as np
import pytest

import algorithms
from attacks.domain import learner_domain
from attacks.families import adversarial_family, shift_family, shift_sizes, sorted_shift
from audit import audit_learner
from audit.runners.local import LocalRunner


def _bug():
    return algorithms.get("df-real", variant="bv-real-2")


def _exact_epsilon(L, a, b, queries) -> float:
    pa, pb = L.exact(a, queries), L.exact(b, queries)
    return float(np.max(np.abs(np.concatenate([np.log(pa / pb), np.log((1 - pa) / (1 - pb))]))))


def test_shift_sizes_are_twos_and_threes_times_powers_of_two_within_the_domain():
    dom = learner_domain(_bug(), None, None)
    assert dom.N == 64
    assert shift_sizes(dom, 16) == [16, 24, 32, 48]
    assert shift_sizes(dom, 2) == [4, 6, 8, 12, 16, 24, 32, 48]
    assert shift_sizes(dom, 64) == []


def test_s_prime_is_s_shifted_by_one_place_in_sorted_order():
    dom = learner_domain(_bug(), None, None)
    key = dom.key()
    for end in (0, 1):
        for phase in (0, 1):
            t = sorted_shift(dom, 24, end, phase)
            assert t.design == "sorted-shift" and t.n == 24 and t.bg_y.size == 23
            # the record: same label, from the far end of the domain (S) to the anchor (S')
            assert t.ra[1] == t.rb[1] == 1 - phase == t.params["record_label"]
            assert t.ra[0][0] == (key.max() if end == 0 else key.min())
            assert t.rb[0][0] == (key.min() if end == 0 else key.max())
            ya = t.a.y[np.argsort(t.a.X[:, 0], kind="stable")]
            yb = t.b.y[np.argsort(t.b.X[:, 0], kind="stable")]
            if end == 1:           # sorted from the anchor inward
                ya, yb = ya[::-1], yb[::-1]
            # one record apart (replace-one), and at every sorted position the other label
            assert np.sum(np.any(t.a.X != t.b.X, axis=1) | (t.a.y != t.b.y)) == 1
            assert np.all(ya != yb)
            assert len(np.unique(t.a.X[:, 0])) == 24    # one record per location
    assert sorted_shift(dom, 64, 0, 0) is None          # no room for the far end


def test_only_replace_one_gets_the_shifts_and_they_stay_out_of_the_designs():
    dom = learner_domain(_bug(), None, None)
    for relation in ("replace-one", "add-remove", "label"):
        fam = adversarial_family(dom, relation, [24], np.random.default_rng(0), n_anchors=1)
        assert not any(t.design == "sorted-shift" for t in fam), relation
        assert (len(shift_family(dom, relation, 16)) > 0) is (relation == "replace-one")
    fam = shift_family(dom, "replace-one", 16)
    assert len(fam) == 4 * 4 and {t.n for t in fam} == {16, 24, 32, 48}


@pytest.mark.parametrize("n, want", [(16, 2.0), (24, 6.0), (32, 2.0), (48, 6.0)])
def test_exact_loss_of_the_shift_on_bv_real_2_and_on_the_fixed_partition(n, want):
    bug = _bug()
    fixed = algorithms.get("df-real", variant="nc-5")      # data-independent blocks: eps-private
    dom = learner_domain(bug, None, None)
    design = _exact_epsilon(bug, *bug.pairs[2], bug.queries)   # pair_sorted_shift
    for t in shift_family(dom, "replace-one", 16):
        if t.n == n:
            # even blocks (n a multiple of 2k = 24): every one of the k = 12 votes moves, as in
            # the hand-made design; otherwise only the blocks starting at even positions do
            assert _exact_epsilon(bug, t.a, t.b, t.queries) == pytest.approx(want)
            assert _exact_epsilon(fixed, t.a, t.b, t.queries) <= fixed.claim.epsilon + 1e-9
    assert design == pytest.approx(6.0)


def test_search_alone_flags_bv_real_2_on_a_sorted_shift():
    r = audit_learner(_bug(), explore_runs=5_000, confirm_runs=50_000, seed=0,
                      runner=LocalRunner(), search_options={})
    # measured at 10^4 / 10^5, seeds 0-3: 5.84-5.94 (the designs: 5.79; before: 0.86-1.89)
    assert r.violation and r.epsilon_lower > 4.0, r.epsilon_lower
    assert "sorted-shift" in r.witness.found_by


def test_search_does_not_flag_the_fixed_partition_that_the_shift_cannot_move():
    # nc-5 is eps-private (negative control): a violation would be a false alarm, which the
    # audit's 95 % confidence allows at 5 % of seeds; seed 0 is fixed and measured not to be one
    r = audit_learner(algorithms.get("df-real", variant="nc-5"), explore_runs=5_000,
                      confirm_runs=50_000, seed=0, runner=LocalRunner(), search_options={})
    assert not r.violation, r.epsilon_lower


def test_guided_scores_every_shift_on_its_own_allowance_and_counts_them_as_candidates():
    from attacks.search import search
    L = _bug()
    kw = dict(claim=L.claim, seed=0, explore_runs=2_000, confirm_runs=20_000,
              search_runs=20_000, hill_steps=1)
    guided = search(L, strategy="guided", **kw).info
    white = search(L, strategy="white-box", **kw).info
    shifts = [h for h in guided["history"] if h["phase"] == "exact sorted shifts"]
    assert len(shifts) == 16 and {h["design"] for h in shifts} == {"sorted-shift"}
    assert guided["candidates_proposed"] == white["candidates_proposed"]


def test_a_pair_scored_by_the_oracle_names_the_oracle_event_and_keeps_the_black_box_apart():
    # measured at seed 0: the third short-listed pair's black-box event is at query 4, the
    # oracle's best at query 0; before, the entry read "query 0" beside "prediction at query 4"
    from attacks.search import search
    L = _bug()
    info = search(L, claim=L.claim, seed=0, explore_runs=2_000, confirm_runs=20_000,
                  search_runs=20_000, hill_steps=1, strategy="guided").info
    exact = [s for s in info["shortlist"] if s.get("scored_by") == "exact"]
    assert exact
    for s in exact:
        assert "p_hat" not in s and "direction" not in s and "black_box_p_hat" in s
        q = np.array(s["queries"], dtype=np.float64)
        assert s["black_box_event"].startswith(f"prediction at query {s['black_box_query']} ")
        assert 0 <= s["query"] < len(q)
    assert any(s["query"] != s["black_box_query"] for s in exact)
