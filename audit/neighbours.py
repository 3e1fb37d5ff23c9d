"""Checking that two datasets are neighbours under a claim's relation.

An audit of a non-neighbouring pair would report a "violation" of a promise nobody made, so the
auditor refuses such pairs.
"""

from __future__ import annotations

import numpy as np

from .errors import PrivauditError
from .types import Dataset


def differing(a: Dataset, b: Dataset) -> list[int]:
    """Indices of records that differ between two equal-size datasets."""
    if a.n != b.n:
        raise PrivauditError(f"datasets have different sizes ({a.n} and {b.n})")
    rows = np.any(a.X != b.X, axis=1) | (a.y != b.y)
    return np.flatnonzero(rows).astype(int).tolist()


def _sorted_records(d: Dataset) -> np.ndarray:
    rec = np.column_stack([d.X, d.y.astype(np.float64)])
    return rec[np.lexsort(rec.T[::-1])]


def removed_index(big: Dataset, small: Dataset) -> int | None:
    """An index i with ``big.remove(i)`` equal to `small` as a multiset of records, else None."""
    if big.n != small.n + 1 or big.d != small.d:
        return None
    rb, rs = _sorted_records(big), _sorted_records(small)
    # the first row where the sorted multisets disagree is the extra record
    diff = np.flatnonzero(np.any(rb[:-1] != rs, axis=1)) if small.n else np.array([], int)
    k = int(diff[0]) if diff.size else small.n
    if not np.array_equal(np.delete(rb, k, axis=0), rs):
        return None
    extra = rb[k]
    full = np.column_stack([big.X, big.y.astype(np.float64)])
    return int(np.flatnonzero(np.all(full == extra, axis=1))[0])


def check_neighbours(a: Dataset, b: Dataset, relation: str, where: str = "pair") -> list[int]:
    """Raise `PrivauditError` unless a and b are neighbours; return the differing indices
    (for add-remove: the index of the extra record in the larger dataset)."""
    if a.d != b.d:
        raise PrivauditError(f"{where}: datasets have {a.d} and {b.d} features")
    if relation in ("replace-one", "label"):
        if a.n != b.n:
            raise PrivauditError(f"{where}: {relation} neighbours must have the same size; got {a.n} and {b.n}"
                                 + (" (use the add-remove relation?)" if abs(a.n - b.n) == 1 else ""))
        diff = differing(a, b)
        if len(diff) > 1:
            raise PrivauditError(f"{where}: datasets differ in {len(diff)} records ({diff[:5]}...); "
                                 f"{relation} neighbours differ in at most one")
        if relation == "label" and diff and not np.array_equal(a.X, b.X):
            raise PrivauditError(f"{where}: label neighbours may differ only in one label, "
                                 f"but record {diff[0]}'s features differ")
        return diff
    if relation == "add-remove":
        big, small = (a, b) if a.n > b.n else (b, a)
        i = removed_index(big, small)
        if i is None:
            raise PrivauditError(f"{where}: add-remove neighbours must differ by exactly one record "
                                 f"(sizes {a.n} and {b.n})")
        return [i]
    raise PrivauditError(f"unknown neighbour relation {relation!r}")
