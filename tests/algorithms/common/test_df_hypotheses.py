"""Hypothesis classes (algorithms/hypotheses.py): DF-HT representatives, sizes, ERM, lookups.

All checks are exact (no sampling noise): a failure is a real bug, never a flake.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from algorithms.common.hypotheses import (CONSTRUCTORS, allfun, from_matrix, halfspaces, intervals,
                                          make_class, points, rectangles, signed_stumps, thresholds)
from audit.errors import PrivauditError
from audit.types import Dataset

SMALL = {"thr": 9, "thr2": 9, "int": 9, "point": 9, "allfun": 5, "rect2": 4, "half2": 4}


def _brute_reps(M: np.ndarray, U: np.ndarray, rule: str = "first") -> np.ndarray:
    pats = [tuple(M[h, U]) for h in range(M.shape[0])]
    out = np.zeros(M.shape[0], bool)
    seen: dict = {}
    rows = range(M.shape[0]) if rule == "first" else reversed(range(M.shape[0]))
    for h in rows:
        if pats[h] not in seen:
            seen[pats[h]] = h
            out[h] = True
    return out


@pytest.mark.parametrize("name", list(CONSTRUCTORS))
def test_rep_mask_matches_brute_force(name):
    H = make_class(name, SMALL[name])
    rng = np.random.default_rng(0)
    hit = rng.random((30, H.N)) < rng.uniform(0.05, 0.8, (30, 1))
    first, last = H.rep_mask(hit), H.rep_mask(hit, "last")
    ids = H.class_ids(hit)
    for k in range(hit.shape[0]):
        U = np.flatnonzero(hit[k])
        ref = _brute_reps(H.matrix, U)
        assert np.array_equal(first[k], ref)
        assert np.array_equal(np.flatnonzero(ref), H.patterns(U))
        assert np.array_equal(last[k], _brute_reps(H.matrix, U, "last"))
        # class ids: first member of each pattern class
        pat = H.matrix[:, U]
        same = (pat[:, None, :] == pat[None, :, :]).all(2)
        assert np.array_equal(ids[k], same.argmax(1))


def test_generic_hash_path_equals_witness_path():
    H = thresholds(40)
    assert H.witness is not None
    G = from_matrix(H.matrix, H.domain)
    object.__setattr__(G, "__dict__", {**G.__dict__, "witness": None})   # force hashing path
    hit = np.random.default_rng(1).random((200, 40)) < 0.2
    assert np.array_equal(H.rep_mask(hit), G.rep_mask(hit))


def test_ht_sizes_r_ht_3():
    # spec R-HT-3: |H_T| = m + 1 for THR and POINT, 1 + m + C(m, 2) for INT
    rng = np.random.default_rng(2)
    for _ in range(20):
        m = int(rng.integers(0, 12))
        U = rng.choice(12, m, replace=False)
        assert len(thresholds(12).patterns(U)) == m + 1
        assert len(points(12).patterns(U)) == m + 1
        assert len(intervals(12).patterns(U)) == 1 + m + math.comb(m, 2)


def test_growth_and_vc():
    for name, g in SMALL.items():
        H = make_class(name, g)
        for m in range(0, min(H.N, 5 if H.N <= 9 else 3) + 1):
            brute = max(np.unique(H.matrix[:, list(c)], axis=0).shape[0]
                        for c in itertools.combinations(range(H.N), m)) if m else 1
            assert H.growth(m) == brute, (name, m)
            assert brute <= sum(math.comb(m, i) for i in range(H.vc_dim + 1))   # Sauer-Shelah
    assert [make_class(n, SMALL[n]).vc_dim for n in CONSTRUCTORS] == [1, 2, 2, 1, 5, 4, 3]
    assert from_matrix(intervals(6).matrix).vc_dim == 2                 # brute-force path


def test_halfspaces_enumeration_complete():
    H = halfspaces(5)
    known = {bytes(r) for r in H.matrix}
    rng = np.random.default_rng(3)
    P = H.domain
    for _ in range(5000):
        w = rng.normal(size=2)
        proj = P @ w
        b = rng.choice(proj) + rng.normal() * 0.1
        assert bytes((proj >= b).astype(np.int8)) in known
    assert H.size == len(known)                                          # rows are distinct


def test_errors_erm_consistent_predict():
    H = thresholds(16)
    x = H.domain[[2, 5, 5, 9, 12]]
    S = Dataset(x, [0, 0, 1, 1, 1])
    direct = np.array([(H.predict(h, x) != S.y).sum() for h in range(H.size)])
    assert np.array_equal(H.errors(S), direct)
    assert H.erm(S) == int(np.argmin(direct)) == 3
    assert H.consistent(S) == 3                                          # no consistent h: ERM
    R = Dataset(x[[0, 3, 4]], [0, 1, 1])
    assert H.consistent(R) == 3 and H.errors(R)[3] == 0
    assert H.predict([0, 16], x).tolist() == [[1] * 5, [0] * 5]


def test_index_lookup_and_errors():
    H = rectangles(4)
    assert H.index(H.domain[[5, 0, 15]] + 1e-13).tolist() == [5, 0, 15]
    with pytest.raises(PrivauditError, match="not on the domain grid"):
        H.index([[0.5, 0.5]])
    with pytest.raises(PrivauditError, match="shape"):
        H.index(np.zeros((2, 3)))
    with pytest.raises(PrivauditError, match="unknown hypothesis class"):
        make_class("nope", 3)
    with pytest.raises(PrivauditError, match="0 or 1"):
        from_matrix([[0, 2]])
    with pytest.raises(PrivauditError, match="distinct"):
        from_matrix([[0, 1]], domain=[0.0, 0.0])
    with pytest.raises(PrivauditError, match="grid"):
        thresholds(0)


def test_preset_shapes():
    assert thresholds(8).size == 9 and signed_stumps(8).size == 16
    assert intervals(8).size == 8 * 9 // 2 + 1 and points(8).size == 9
    assert allfun(4).size == 16 and rectangles(3).size == 37
    assert not points(8).matrix[0].any() and not intervals(8).matrix[0].any()
