"""Rows of small integers are counted and matched through a packed int64 code: the same counts
and memberships as the row-wise path (exact equality, no randomness involved beyond the fixed
test data)."""

import numpy as np

from audit.reducers import CodeCounter, CodeSet, _count_codes, distinct_rows


def _rowwise_counts(x):
    rows, c = np.unique(x, axis=0, return_counts=True)
    return {tuple(int(v) for v in r): int(k) for r, k in zip(rows, c)}


def test_packed_counts_and_membership_equal_the_rowwise_ones():
    rng = np.random.default_rng(0)
    for lo, hi, width in ((-1, 2, 10), (0, 2, 8), (-32, 32, 3)):
        x = rng.integers(lo, hi, size=(5000, width))
        assert _count_codes(x) == _rowwise_counts(x)
        ev = CodeSet(tuple(list(_rowwise_counts(x))[:7]), None, "rows")
        expected = np.zeros(len(x), dtype=bool)
        for r in np.asarray(ev.codes):
            expected |= np.all(x == r, axis=1)
        assert np.array_equal(ev.contains(x), expected)


def test_rows_out_of_the_packable_range_use_the_rowwise_path():
    x = np.array([[0, 100], [0, 100], [-50, 1]])
    assert CodeCounter(None, "rows")(x).table == {(0, 100): 2, (-50, 1): 1}
    assert CodeSet(((0, 100),), None, "rows").contains(x).tolist() == [True, True, False]


def test_distinct_rows_rebuild_every_row_packed_or_not():
    rng = np.random.default_rng(1)
    for x in (rng.integers(-1, 2, size=(4000, 10)).astype(np.int8),   # packed
              rng.integers(0, 3, size=(300, 40))):                    # too wide to pack
        rows, inv = distinct_rows(x)
        assert np.array_equal(rows[inv], x)
        assert len(rows) == len(np.unique(x, axis=0)) and inv.shape == (len(x),)
