"""BLM-0/1/2: Littlestone dimension and the (extended) SOA, spec 3.0-3.2 and 3.13.

All checks are exact (no sampling), on seeded random classes and sequences.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.bun_livni_moran.soa import SOA, littlestone_dimension
from algorithms.common.hypotheses import from_matrix, make_class
from audit.errors import PrivauditError


@pytest.mark.parametrize("N", [1, 2, 3, 4, 6, 7, 8, 15, 16, 31, 63])
def test_ldim_of_thresholds_is_floor_log2_n_plus_1(N):
    # hypotheses.thresholds has N+1 rows (including the all-zero threshold)
    assert littlestone_dimension(make_class("thr", N)) == int(math.floor(math.log2(N + 1)))


def test_ldim_of_intervals_matches_the_spec_table():
    table = [1, 2, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5]
    assert [littlestone_dimension(make_class("int", N)) for N in range(1, 13)] == table


def test_ldim_of_points_and_all_functions():
    assert littlestone_dimension(make_class("point", 12)) == 1
    for d in (1, 2, 3, 5):
        assert littlestone_dimension(make_class("allfun", d)) == d
    assert SOA(from_matrix(np.array([[0, 1, 1]]))).ldim() == 0       # one hypothesis
    assert SOA(make_class("thr", 4)).ldim(0) == -1                     # empty version space


def test_ldim_between_vc_and_log2_size_on_random_classes():
    rng = np.random.default_rng(5)
    for _ in range(25):
        H = from_matrix(rng.integers(0, 2, size=(int(rng.integers(2, 40)), int(rng.integers(2, 9)))))
        s = SOA(H)
        assert H.vc_dim <= s.ldim() <= math.log2(s.rows.shape[0])


def _realizable(H, rng, T):
    h = int(rng.integers(H.size))
    xs = rng.integers(0, H.N, T)
    return h, xs, H.matrix[h, xs]


@pytest.mark.parametrize("cls,grid", [("thr", 15), ("int", 8), ("point", 10), ("allfun", 4), ("thr2", 9)])
def test_soa_mistake_bound_and_consistency(cls, grid):
    H = make_class(cls, grid)
    s = SOA(H)
    d = s.ldim()
    rng = np.random.default_rng(11)
    for _ in range(40):
        h, xs, ys = _realizable(H, rng, 30)
        assert s.mistakes(xs, ys) <= d
        f = s.run(xs, ys)
        assert np.array_equal(f[xs], ys)          # consistent with the realizable sample
    # Ldim(V) = 0 => the output is the target
    h, xs, ys = 3 % H.size, np.arange(H.N), H.matrix[3 % H.size]
    assert np.array_equal(s.run(xs, ys), H.matrix[h])


def test_extended_soa_last_occurrence_and_patch_mode():
    H = make_class("thr", 7)
    s = SOA(H)
    rng = np.random.default_rng(2)
    for _ in range(30):
        xs = rng.integers(0, 7, 20)
        ys = rng.integers(0, 2, 20)               # arbitrary (usually non-realizable) labels
        T = rng.permutation(7)
        yT = rng.integers(0, 2, 7)
        f = s.run(np.r_[xs, T], np.r_[ys, yT])
        assert np.array_equal(f[T], yT)           # agrees with the last occurrence in T
    st = s.feed(s.init, [0, 0], [1, 0])           # contradiction: patch mode, absorbing
    assert st[0] == "P" and s.step(st, 3, 1)[0] == "P"


def test_soa_is_deterministic_and_tie_rule_is_fixed():
    H = make_class("point", 5)
    a, b = SOA(H, tie=1), SOA(H, tie=0)
    # no example seen: points are predicted 0 (|C| >= 2), the tie rule never matters there
    assert np.array_equal(a.run([], []), np.zeros(5)) and np.array_equal(b.run([], []), np.zeros(5))
    xs = [0, 1, 2, 3]
    ys = [0, 0, 0, 0]                             # one candidate point left: V = {p_4, p_empty}: tie
    assert a.run(xs, ys)[4] == 1 and b.run(xs, ys)[4] == 0
    with pytest.raises(PrivauditError):
        SOA(H, tie=2)
