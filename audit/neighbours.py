"""Checking that two datasets (or two mechanism inputs) are neighbours under a claim's relation.

An audit of a non-neighbouring pair would report a "violation" of a promise nobody made, so the
auditor refuses such pairs.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

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


# ---------------------------------------------------------------------------------------------
# mechanism inputs
# ---------------------------------------------------------------------------------------------
INPUT_NORMS = ("hamming", "l1", "l2", "linf", "add-remove")


@dataclass(frozen=True)
class InputDistance:
    """The neighbour relation of a mechanism's inputs: ``distance(a, b) <= bound``.

    `norm` is ``hamming`` (same shape; the number of entries that differ -- "replace one record"
    is ``hamming`` with bound 1), ``l1``, ``l2`` or ``linf`` (same shape; the norm of ``a - b``,
    e.g. a query of sensitivity Δ under l1) or ``add-remove`` (the input is a dataset whose records
    are its entries, or its rows; the number of records added or removed to turn one input into
    the other, so the shapes differ -- a library's bounded sum or count under "add or remove one
    record" is ``add-remove`` with bound 1). A mechanism declares it as its ``input_distance``
    attribute; `--input-distance l1:1` (CLI) or ``input_distance = "l1:1"`` (CI) declare one for a
    user's black box.
    """

    norm: str
    bound: float = 1.0

    def __post_init__(self) -> None:
        if self.norm not in INPUT_NORMS:
            raise PrivauditError(f"input distance norm must be one of {', '.join(INPUT_NORMS)}, "
                                 f"got {self.norm!r}")
        b = self.bound
        if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(b)) or float(b) < 0:
            raise PrivauditError(f"input distance bound must be a finite number >= 0, got {b!r}")
        object.__setattr__(self, "bound", float(b))

    def describe(self) -> str:
        return f"{self.norm} distance <= {self.bound:g}"

    def to_text(self) -> str:
        return f"{self.norm}:{self.bound:g}"


def parse_input_distance(spec: Any) -> InputDistance | None:
    """``"l1:1"``, ``{"norm": "l1", "bound": 1}``, an `InputDistance` or None."""
    if spec is None or isinstance(spec, InputDistance):
        return spec
    if isinstance(spec, str):
        norm, sep, bound = spec.strip().partition(":")
        try:
            value = float(bound) if sep else 1.0
        except ValueError:
            raise PrivauditError(f"input distance expects NORM:BOUND (e.g. l1:1, hamming:1), "
                                 f"got {spec!r}") from None
        return InputDistance(norm.strip().lower(), value)
    if isinstance(spec, dict) and set(spec) <= {"norm", "bound"} and "norm" in spec:
        return InputDistance(str(spec["norm"]).lower(), spec.get("bound", 1.0))
    raise PrivauditError(f"input distance expects NORM:BOUND (e.g. l1:1, hamming:1) or "
                         f"{{norm, bound}}, got {spec!r}")


def _records(x: np.ndarray) -> list:
    """The records of a dataset input as hashable items (its entries, or its rows)."""
    if x.ndim <= 1:
        return x.reshape(-1).tolist()
    return [r.tobytes() for r in np.ascontiguousarray(x.reshape(x.shape[0], -1))]


def records_distance(a: Any, b: Any) -> float:
    """Records to add or remove to turn dataset `a` into `b`: the size of their multiset
    symmetric difference (inf when the records' shapes differ).

    ``[1, 2]`` and ``[2, 1, 5]`` are at distance 1 (5 added); ``[1]`` and ``[2]`` at 2 (a
    replacement is a removal and an addition)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape[1:] != b.shape[1:] and min(a.size, b.size) > 0:
        return math.inf
    left, right = Counter(_records(a)), Counter(_records(b))
    return float(sum(((left - right) + (right - left)).values()))


def input_distance(a: Any, b: Any, norm: str) -> float:
    """The `norm` distance between two mechanism inputs (inf when their shapes differ, except
    under ``add-remove``, which compares them as multisets of records)."""
    if norm == "add-remove":
        return records_distance(a, b)
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return math.inf
    if a.dtype.kind not in "biuf" or b.dtype.kind not in "biuf":
        ne = np.asarray(a != b)
        return float(np.count_nonzero(ne)) if norm == "hamming" else math.inf
    if norm == "hamming":
        return float(np.count_nonzero(a != b))
    d = np.abs(a.astype(np.float64) - b.astype(np.float64)).ravel()
    if norm == "l1":
        return float(d.sum())
    if norm == "l2":
        return float(np.sqrt((d * d).sum()))
    return float(d.max()) if d.size else 0.0


def check_input_neighbours(a: Any, b: Any, rel: InputDistance, where: str = "pair") -> float:
    """Raise `PrivauditError` unless ``rel.norm``-distance(a, b) <= ``rel.bound``; return it."""
    a_arr, b_arr = np.asarray(a), np.asarray(b)
    if a_arr.shape != b_arr.shape and rel.norm != "add-remove":
        raise PrivauditError(f"{where}: inputs have shapes {a_arr.shape} and {b_arr.shape}; "
                             f"neighbours under {rel.describe()} have the same shape")
    dist = input_distance(a_arr, b_arr, rel.norm)
    # a relative tolerance for float round-off in sums (0.1 + 0.2 vs 0.3)
    if not dist <= rel.bound * (1 + 1e-9) + 1e-12:
        raise PrivauditError(f"{where}: the inputs are not neighbours: {rel.norm} distance {dist:g} "
                             f"> {rel.bound:g} (the mechanism's neighbour relation is "
                             f"{rel.describe()})")
    return dist


NOT_CHECKED_NOTE = ("neighbourhood not checked: the mechanism declares no input_distance, so the "
                    "pairs were audited as given (declare one: an `input_distance` attribute, "
                    "--input-distance l1:1, or input_distance = \"l1:1\" in CI)")
