"""A search candidate: a shared background, the differing record on each side, query points.

Representing ``(S, S')`` as *background + record on each side* makes every neighbour relation
one shape: replace-one has a record on both sides, add-remove on one side only, label a record
on both sides at the same x. Mutations (hill-climbing) edit the background identically on both
sides, so every mutant is again a valid neighbour pair.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from audit.types import Dataset

Record = tuple  # (x: ndarray (d,), y: int)


@dataclass(frozen=True, eq=False)
class Trial:
    """One candidate ``(S, S', queries)`` for the search.

    Parameters
    ----------
    bg_X, bg_y : arrays (m, d), (m,)
        The records S and S' share, in order.
    ra, rb : (x, y) or None
        The differing record of S (``ra``) and of S' (``rb``); None: that side has no record
        (add-remove).
    pos : int
        Where the differing record sits (index in S and S'): the same index on both sides.
    queries : array (q, d)
        Query points.
    design : str
        The family/design that produced it (recorded in the search history).
    params : dict
        JSON-able design parameters (size, multiplicity, anchor, ...).
    fixed_background : bool
        The background is the user's data: mutations never touch it.
    fixed_queries : bool
        The queries are the user's: mutations never touch them (`pinned`).
    """

    bg_X: np.ndarray
    bg_y: np.ndarray
    ra: Record | None
    rb: Record | None
    pos: int
    queries: np.ndarray
    design: str
    params: dict = field(default_factory=dict)
    fixed_background: bool = False
    fixed_queries: bool = False
    steps: int = 0

    def _with(self, rec: Record | None) -> Dataset:
        if rec is None:
            return Dataset(self.bg_X, self.bg_y)
        x, y = rec
        X = np.insert(self.bg_X, self.pos, np.asarray(x, dtype=np.float64).reshape(1, -1), axis=0)
        Y = np.insert(self.bg_y, self.pos, int(y))
        return Dataset(X, Y)

    @cached_property
    def a(self) -> Dataset:
        return self._with(self.ra)

    @cached_property
    def b(self) -> Dataset:
        return self._with(self.rb)

    @property
    def n(self) -> int:
        return max(self.a.n, self.b.n)

    def key(self) -> bytes:
        """Identity for de-duplication."""
        parts = [self.bg_X.tobytes(), self.bg_y.tobytes(), np.int64(self.pos).tobytes(),
                 np.asarray(self.queries, np.float64).tobytes()]
        for r in (self.ra, self.rb):
            parts.append(b"-" if r is None else np.asarray(r[0], np.float64).tobytes() + bytes([int(r[1])]))
        return b"|".join(parts)

    def evolve(self, **changes: Any) -> "Trial":
        return replace(self, steps=self.steps + 1, **changes)

    def pinned(self, queries: np.ndarray | None) -> "Trial":
        """This trial at the queries the user fixed (itself when there are none, or when it
        is pinned to them already): every mutant keeps them."""
        if queries is None or (self.fixed_queries and np.array_equal(self.queries, queries)):
            return self
        return replace(self, queries=np.asarray(queries, np.float64), fixed_queries=True)

    def describe(self) -> dict:
        """JSON-able summary for the search history."""
        def rec(r):
            return None if r is None else [np.asarray(r[0]).round(6).tolist(), int(r[1])]
        return {"design": self.design, **self.params, "n": self.n, "record_a": rec(self.ra),
                "record_b": rec(self.rb), "queries": np.asarray(self.queries).round(6).tolist(),
                "mutations": self.steps}

    def found_by(self, strategy: str) -> str:
        p = ", ".join([f"n={self.n}"] + [f"{k}={v}" for k, v in self.params.items()
                                         if k in ("m", "variant", "layout", "edit", "position",
                                                   "inner")])
        hill = f" + {self.steps} hill-climbing step(s)" if self.steps else ""
        return f"search ({strategy}): {self.design}({p}){hill}"


__all__ = ["Trial", "Record"]
