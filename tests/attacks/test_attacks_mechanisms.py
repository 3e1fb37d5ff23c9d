"""attacks.mechanism_pairs: neighbouring inputs for vector-input mechanisms."""

import numpy as np
import pytest

import algorithms
from attacks.mechanisms import mechanism_pairs
from audit import PrivauditError, audit


@pytest.mark.parametrize("norm", ["l1", "linf", "replace-one", "statdp"])
def test_pairs_respect_the_neighbour_notion(norm):
    pairs = mechanism_pairs(6, norm=norm, sensitivity=2.0, values=[0, 1, 5])
    assert len(pairs) >= 3
    for a, b in pairs:
        assert a.shape == b.shape == (6,) and not np.array_equal(a, b)
        d = b - a
        if norm == "l1":
            assert np.abs(d).sum() <= 2.0 + 1e-12
        elif norm in ("linf", "statdp"):
            assert np.abs(d).max() <= 2.0 + 1e-12
        else:
            assert np.count_nonzero(d) == 1


def test_bad_arguments_are_refused():
    with pytest.raises(PrivauditError, match="norm"):
        mechanism_pairs(3, norm="l2")
    with pytest.raises(PrivauditError, match="sensitivity"):
        mechanism_pairs(3, sensitivity=0)
    with pytest.raises(PrivauditError, match="k must"):
        mechanism_pairs(0)


def test_generated_pairs_catch_a_planted_bug_and_pass_the_correct_mechanism():
    # fixed seed; a false flag of the correct EM has probability <= 5 % (core soundness), and
    # the bug's true loss (2 eps at k = 20) is far above what 2e5 confirmation runs need
    bad, good = algorithms.get("dp-em", variant="bv-em-half"), algorithms.get("dp-em")
    kw = dict(explore_runs=20_000, confirm_runs=200_000, seed=0)
    r = audit(bad, mechanism_pairs(bad.k, norm="linf"), **kw)
    assert r.violation and r.epsilon_lower > 1.0
    assert not audit(good, mechanism_pairs(good.k, norm="linf"), **kw).violation
