"""Neighbour relations as generators of neighbouring datasets.

Every generator yields `Neighbour` values ``(a, b, changed, relation, text)`` with ``a`` and ``b``
neighbours under ``relation`` (checked by `audit.neighbours.check_neighbours` in the tests):

* `replace_one`: record i of S replaced by a new record (x, y) — Dagan & Feldman (2020), Sec. 2
  ("S, S' differ in one example", fixed n);
* `add_remove`: S and S with record i removed, and S and S with a record added;
* `label`: only the label of record i changes, every unlabeled point fixed (label privacy,
  Chaudhuri & Hsu 2011);
* `k_group`: k records replaced at once (group privacy: an epsilon-DP algorithm is k-epsilon-DP
  for such pairs, Dwork & Roth 2014, Thm 2.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from audit.errors import PrivauditError
from audit.types import Dataset

RELATIONS = ("replace-one", "add-remove", "label", "k-group")


@dataclass(frozen=True, eq=False)
class Neighbour:
    """Two neighbouring datasets; ``changed`` are the record indices that differ (for add-remove:
    the index of the extra record in the larger dataset)."""

    a: Dataset
    b: Dataset
    changed: tuple[int, ...]
    relation: str
    text: str = ""


def _indices(S: Dataset, indices: Iterable[int] | None) -> list[int]:
    idx = list(range(S.n)) if indices is None else [int(i) for i in indices]
    for i in idx:
        if not 0 <= i < S.n:
            raise PrivauditError(f"record index {i} out of range for a dataset of {S.n} records")
    return idx


def _records(S: Dataset, records: Iterable[Any] | None) -> list[tuple[np.ndarray, int]]:
    if records is None:   # default: every distinct location of S, with both labels
        locs = np.unique(S.X, axis=0)
        return [(x, y) for x in locs for y in (0, 1)]
    out = []
    for r in records:
        try:
            x, y = r
        except (TypeError, ValueError):
            raise PrivauditError(f"a record must be a pair (x, y), got {r!r}") from None
        out.append((np.asarray(x, dtype=np.float64).reshape(-1), int(y)))
    return out


def replace_one(S: Dataset, *, indices: Iterable[int] | None = None,
                records: Iterable[Any] | None = None) -> Iterator[Neighbour]:
    """``(S, S with record i replaced by (x, y))`` for every index and new record that differs."""
    recs = _records(S, records)
    for i in _indices(S, indices):
        for x, y in recs:
            if np.array_equal(S.X[i], x) and int(S.y[i]) == y:
                continue
            yield Neighbour(S, S.replace(i, x, y), (i,), "replace-one",
                            f"record {i} -> ({_fmt(x)}, {y})")


def add_remove(S: Dataset, *, indices: Iterable[int] | None = None,
               records: Iterable[Any] | None = None) -> Iterator[Neighbour]:
    """``(S, S minus record i)`` for every index, then ``(S plus (x, y), S)`` for every record."""
    if S.n >= 2:
        for i in _indices(S, indices):
            yield Neighbour(S, S.remove(i), (i,), "add-remove", f"remove record {i}")
    for x, y in _records(S, records) if records is not None else []:
        yield Neighbour(S.add(x, y), S, (S.n,), "add-remove", f"add ({_fmt(x)}, {y})")


def label(S: Dataset, *, indices: Iterable[int] | None = None) -> Iterator[Neighbour]:
    """``(S, S with the label of record i flipped)``: unlabeled points never move."""
    for i in _indices(S, indices):
        yield Neighbour(S, S.relabel(i, 1 - int(S.y[i])), (i,), "label", f"flip label of record {i}")


def k_group(S: Dataset, k: int, *, groups: Iterable[Sequence[int]] | None = None,
            records: Iterable[Any] | None = None, rng: np.random.Generator | None = None,
            limit: int = 64) -> Iterator[Neighbour]:
    """``(S, S with k records replaced)``: each group of k indices gets k new records.

    Parameters
    ----------
    k : int
        Group size (>= 1; k = 1 is replace-one).
    groups : iterable of k-tuples of indices, optional
        Default: `limit` random groups drawn with `rng` (required then).
    records : iterable of (x, y), optional
        The replacement records, cycled over the group (default: S's locations, both labels).
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= S.n:
        raise PrivauditError(f"group size k must be an integer in [1, {S.n}], got {k!r}")
    recs = _records(S, records)
    if groups is None:
        if rng is None:
            raise PrivauditError("k_group needs groups= or rng= to draw groups")
        groups = [tuple(sorted(rng.choice(S.n, size=k, replace=False).tolist())) for _ in range(limit)]
    for g in groups:
        g = tuple(int(i) for i in g)
        if len(set(g)) != k:
            raise PrivauditError(f"a group must hold {k} distinct indices, got {g}")
        _indices(S, g)
        for start in range(len(recs)):
            X, Y = S.X.copy(), S.y.copy()
            changed = []
            for j, i in enumerate(g):
                x, y = recs[(start + j) % len(recs)]
                if not (np.array_equal(X[i], x) and int(Y[i]) == y):
                    changed.append(i)
                X[i], Y[i] = x, y
            if len(changed) == k:
                yield Neighbour(S, Dataset(X, Y), g, "k-group", f"replace records {list(g)}")
                break


def neighbours(relation: str, S: Dataset, **kw: Any) -> Iterator[Neighbour]:
    """Dispatch on the relation name (`RELATIONS`)."""
    if relation == "replace-one":
        return replace_one(S, **kw)
    if relation == "add-remove":
        return add_remove(S, **kw)
    if relation == "label":
        return label(S, **{k: v for k, v in kw.items() if k == "indices"})
    if relation == "k-group":
        return k_group(S, **kw)
    raise PrivauditError(f"unknown neighbour relation {relation!r}; valid: {', '.join(RELATIONS)}")


def _fmt(x: np.ndarray) -> str:
    x = np.asarray(x).reshape(-1)
    return f"{x[0]:.4g}" if x.size == 1 else "(" + ", ".join(f"{v:.4g}" for v in x) + ")"


__all__ = ["Neighbour", "RELATIONS", "replace_one", "add_remove", "label", "k_group", "neighbours"]
