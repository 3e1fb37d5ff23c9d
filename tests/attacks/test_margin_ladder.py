"""Label-flip designs at every vote margin (attacks.families.margin_ladder).

Under the label relation a flip at the query is the only move; what it costs a learner that
privatises the vote depends on the background's margin at the query. Before the ladder the
family held only the tie and the unanimous extremes, and the search missed `lwy-n2` bug V2 (the
exponential mechanism's exponent without its 1/2), whose hand-made design D1 sits at a margin of
3.4/eps: at 10^4 / 10^5 runs it confirmed 0.0 against the claim 0.1 (designs: 0.114).
"""

import numpy as np
import pytest

import algorithms
from attacks.domain import learner_domain
from attacks.families import adversarial_family, margin_ladder, margins
from audit import PrivauditError, audit_learner
from audit.runners.local import LocalRunner


def test_margins_are_a_doubling_ladder_strictly_between_tie_and_unanimous():
    assert margins(2) == []
    assert margins(3) == [2]
    assert margins(200) == [2, 4, 8, 16, 32, 64, 128]


def test_ladder_refuses_a_size_below_two():
    dom = learner_domain(algorithms.get("lwy-n2", variant="v2"), None, None)
    with pytest.raises(PrivauditError, match="size must be >= 2"):
        margin_ladder(dom, 1, 0, np.zeros(dom.N, np.int8))
    assert margin_ladder(dom, 3, 0, np.zeros(dom.N, np.int8)) == []     # 2 records: tie or unanimous
    assert len(margin_ladder(dom, 4, 0, np.zeros(dom.N, np.int8))) == 2  # margin 2, either label


def test_label_family_holds_every_margin_both_ways_and_only_flips():
    L = algorithms.get("lwy-n2", variant="v2")
    dom = learner_domain(L, None, None)
    fam = adversarial_family(dom, "label", [65], np.random.default_rng(0), n_anchors=1)
    ladder = [t for t in fam if t.params["variant"].startswith("margin")]
    got = {t.params["variant"] for t in ladder}
    assert got == {f"margin {d} to {a}" for d in margins(64) for a in (0, 1)}
    for t in ladder:
        d, ahead = int(t.params["variant"].split()[1]), int(t.params["variant"].split()[-1])
        # the whole background at the record's point, `d` more votes for `ahead`
        assert np.all(t.bg_X == t.ra[0]) and t.bg_y.size == 64
        ones = int(t.bg_y.sum())
        assert (ones - (64 - ones)) * (1 if ahead == 1 else -1) == d
        assert t.ra[1] == 0 and t.rb[1] == 1 and np.array_equal(t.ra[0], t.rb[0])
    # replace-one families are unchanged (the ladder is the label relation's)
    fam_r = adversarial_family(dom, "replace-one", [65], np.random.default_rng(0), n_anchors=1)
    assert not any(t.params["variant"].startswith("margin") for t in fam_r)


def test_search_alone_flags_lwy_n2_bug_v2():
    L = algorithms.get("lwy-n2", variant="v2")
    assert L.claim.neighbours == "label" and L.claim.epsilon == 0.1
    r = audit_learner(L, explore_runs=10_000, confirm_runs=100_000, seed=0, runner=LocalRunner(),
                      search_options={})
    assert r.violation and r.epsilon_lower > 0.1, r.epsilon_lower
    assert "margin" in r.witness.found_by
