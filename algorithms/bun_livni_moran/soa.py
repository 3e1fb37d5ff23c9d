"""Littlestone dimension (BLM-0), the Standard Optimal Algorithm (BLM-1) and its extension to
non-realizable sequences (BLM-2, Def. 8) over a finite hypothesis class.

Labels are {0, 1} (the paper's -1 is 0). A class is a `HypothesisClass` prediction matrix; duplicate
rows are removed (hypotheses are truth tables: equal tables are the same hypothesis). A *version
space* is a Python-int bitmask over the distinct rows; `Ldim` is memoised per class and shared by
every SOA run on that class.

SOA state (extended SOA, Def. 8) is a hashable tuple:

* ``("R", V)``: realizable mode, version space ``V`` (non-empty bitmask);
* ``("P", h)``: patch mode, ``h`` the predictor's truth table as ``bytes`` (absorbing).

``SOA(S)`` (batch use) is the truth table of the predictor after processing all of ``S``: in
realizable mode ``h(x) = argmax_b Ldim(V_x^b)`` with a fixed tie label, in patch mode ``h`` itself.
Everything is deterministic given the sample (global stability of G needs that).

References
----------
M. Bun, R. Livni and S. Moran, "An equivalence between private classification and online
prediction", FOCS 2020: Sec. III-B (Littlestone dimension, SOA), Definition 8 (extended SOA).
N. Littlestone, "Learning quickly when irrelevant attributes abound", Machine Learning 2 (1988).
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from audit.errors import PrivauditError

from ..common.hypotheses import HypothesisClass

State = tuple  # ("R", int) | ("P", bytes)

MAX_ROWS = 4096       # bitmask version spaces stay cheap well beyond this, Ldim search does not


def _popcount(v: int) -> int:
    return v.bit_count()


class SOA:
    """Littlestone dimension and the (extended) Standard Optimal Algorithm for one finite class.

    Parameters
    ----------
    H : HypothesisClass
        The class; duplicate rows are merged (first occurrence kept).
    tie : {0, 1}
        The fixed label predicted when ``Ldim(V_x^1) == Ldim(V_x^0)`` (spec 3.1; default 1, the
        paper's "+1").
    """

    def __init__(self, H: HypothesisClass, tie: int = 1) -> None:
        if tie not in (0, 1):
            raise PrivauditError(f"SOA tie label must be 0 or 1, got {tie!r}")
        _, first = np.unique(H.matrix, axis=0, return_index=True)
        rows = H.matrix[np.sort(first)]
        if rows.shape[0] > MAX_ROWS:
            raise PrivauditError(f"SOA supports classes of at most {MAX_ROWS} distinct hypotheses, "
                                 f"got {rows.shape[0]}")
        self.H = H
        self.tie = int(tie)
        self.rows = rows                              # (|H|, N) distinct truth tables
        self.N = int(rows.shape[1])
        self.all = (1 << rows.shape[0]) - 1
        # pos[x]: rows with h(x) = 1; neg[x]: rows with h(x) = 0
        self.pos = [sum(1 << int(i) for i in np.flatnonzero(rows[:, x])) for x in range(self.N)]
        self.neg = [self.all & ~p for p in self.pos]
        self._ldim: dict[int, int] = {0: -1}
        self._tt: dict[State, bytes] = {}
        self.init: State = ("R", self.all)

    # -- BLM-0 ------------------------------------------------------------------------------------
    def ldim(self, V: int | None = None) -> int:
        """``Ldim(V)`` (``-1`` for the empty set) of a version space (default: the whole class).

        Memoised branch and bound (spec 3.0): a split point is skipped when even a perfect
        subtree under its smaller side could not beat the best found, and the search stops at
        the ``floor(log2 |V|)`` upper bound.
        """
        V = self.all if V is None else int(V)
        memo = self._ldim
        if V in memo:
            return memo[V]
        c = _popcount(V)
        if c == 1:
            memo[V] = 0
            return 0
        ub = c.bit_length() - 1
        best = 0
        for x in range(self.N):
            Vp, Vm = V & self.pos[x], V & self.neg[x]
            if not Vp or not Vm:
                continue
            if min(_popcount(Vp), _popcount(Vm)).bit_length() <= best:   # floor(log2 min) + 1 <= best
                continue
            lp = self.ldim(Vp)
            if lp + 1 <= best:
                continue
            lm = self.ldim(Vm)
            best = max(best, 1 + min(lp, lm))
            if best == ub:
                break
        memo[V] = best
        return best

    # -- BLM-1 / BLM-2 --------------------------------------------------------------------------
    def predictor(self, V: int) -> np.ndarray:
        """SOA's truth table for version space ``V``: ``argmax_b Ldim(V_x^b)``, ties -> `tie`."""
        lp = np.array([self.ldim(V & p) for p in self.pos])
        lm = np.array([self.ldim(V & m) for m in self.neg])
        return np.where(lp > lm, 1, np.where(lp < lm, 0, self.tie)).astype(np.int8)

    def hyp(self, state: State) -> bytes:
        """Truth table (bytes of an int8 (N,) array) of the predictor in `state` (cached)."""
        tt = self._tt.get(state)
        if tt is None:
            tt = state[1] if state[0] == "P" else self.predictor(state[1]).tobytes()
            self._tt[state] = tt
        return tt

    def step(self, state: State, x: int, y: int) -> State:
        """One trial of the extended SOA (Def. 8): version-space update on every trial; the first
        non-realizable example switches to patch mode, which is absorbing."""
        if state[0] == "R":
            Vy = state[1] & (self.pos[x] if y else self.neg[x])
            if Vy:
                return ("R", Vy)
        h = bytearray(self.hyp(state))
        h[x] = y
        return ("P", bytes(h))

    def feed(self, state: State, xs: Iterable[int], ys: Iterable[int]) -> State:
        """Process the examples ``(xs[i], ys[i])`` in order."""
        for x, y in zip(xs, ys):
            state = self.step(state, int(x), int(y))
        return state

    def run(self, xs: Any, ys: Any) -> np.ndarray:
        """``SOA(S)``: the predictor's truth table (int8 (N,)) after processing the whole sample."""
        return np.frombuffer(self.hyp(self.feed(self.init, xs, ys)), dtype=np.int8).copy()

    def mistakes(self, xs: Any, ys: Any) -> int:
        """Online mistakes of SOA on the sequence (prediction before each label is revealed)."""
        state, k = self.init, 0
        for x, y in zip(xs, ys):
            k += int(self.hyp(state)[int(x)] != int(y))
            state = self.step(state, int(x), int(y))
        return k


_SOA_CACHE: dict[tuple[int, int], SOA] = {}


def soa_for(H: HypothesisClass, tie: int = 1) -> SOA:
    """The shared `SOA` (and Ldim memo) of class `H` (one per class object and tie rule)."""
    key = (id(H), int(tie))
    s = _SOA_CACHE.get(key)
    if s is None or s.H is not H:
        s = SOA(H, tie)
        _SOA_CACHE[key] = s
    return s


def littlestone_dimension(H: HypothesisClass) -> int:
    """``Ldim(H)`` of a finite class (BLM-0)."""
    return soa_for(H).ldim()


__all__ = ["SOA", "soa_for", "littlestone_dimension", "State"]
