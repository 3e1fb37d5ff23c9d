"""Sizes where a learner's behaviour steps: found by bisection on its exact oracle.

A learner may use the dataset size n for more than counting: a parameter computed from n (a
cover scale, a number of batches, a noise scale), or a numeric regime that n records reach (a
float32 weight that underflows once a count passes a threshold). Under add-remove such a
parameter changes between the two datasets of a pair; under any relation the numeric regime
may separate them. Either shows only at particular sizes, which a geometric ladder of sizes
hits by luck.

The probe uses the *balanced pile*: n records at one location x0, ``(n - 1) / 2`` labelled 0
and ``(n + 1) / 2`` labelled 1 (n odd). Whatever n is, it carries one record's worth of
evidence about the label at x0 (every hypothesis's mistake count differs from another's by 0
or 1), so an ε-DP learner whose output depends on the data only through such evidence gives
the same output law at every odd n. A change of the exact ``Pr[label = 1]`` at the queries
between two sizes therefore means something in the learner depends on n; bisection on the
odd sizes between two ladder points where the law differs finds a size n* where it changes
from one odd size to the next (if the law is constant on both halves of an interval, it is
constant on the interval). Steps are isolated: when the law changes across more than a quarter
of the ladder's gaps (and more than three), n enters the learner everywhere (a subsample of
ceil(eps n) records, say) and the probe reports nothing -- the search's size sweep covers that. The search then scores neighbouring pairs of piles around n*
(relation-valid: a label flip at x0, or one record more) like any other candidate.

The probe spends oracle calls only, no runs; its candidates are confirmed black-box like
every other one.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from audit.errors import PrivauditError
from audit.types import Dataset, as_queries

from .domain import Domain
from .queries import MAX_QUERIES, query_locations
from .trial import Trial

STEP_TOL = 1e-7          # exact probabilities equal up to round-off: no step
LADDER_RATIO = math.sqrt(2.0)
MAX_STEPS = 3            # more ladder gaps with a change than this (and than a quarter of them):
                         # no isolated steps


def pile(domain: Domain, n: int, anchor: int) -> tuple[np.ndarray, np.ndarray]:
    """Locations and labels of the balanced pile of n records at `anchor`: n // 2 zeros, the
    rest ones."""
    y = np.zeros(n, np.int8)
    y[n // 2:] = 1
    return np.full(n, anchor, int), y


def pile_queries(domain: Domain, anchor: int) -> np.ndarray:
    """The pile's queries: the anchor, its neighbours and the farthest point."""
    L, Y = pile(domain, 2, anchor)
    return domain.points[query_locations(domain, [anchor], L, Y, MAX_QUERIES)]


def pile_trials(domain: Domain, relation: str, n: int, anchor: int,
                queries: np.ndarray | None = None) -> list[Trial]:
    """Neighbouring pairs of balanced piles with n records in the larger dataset.

    replace-one / label: the background is the pile of n - 1, the record at the anchor is
    labelled 1 in S and 0 in S' (a label flip). add-remove: S is the pile of n (its last record,
    label 1 for odd n, 0 for even), S' the pile of n - 1. With `queries` (the user's), the
    pairs are at them and pinned there (`Trial.pinned`).
    """
    if n < 2:
        return []
    q = pile_queries(domain, anchor)
    P = domain.points
    L, Y = pile(domain, n - 1, anchor)
    x = P[anchor].copy()
    params = {"n": n, "m": n - 1, "variant": "balanced pile", "anchor": x.round(6).tolist()}
    if relation == "add-remove":
        last = int(pile(domain, n, anchor)[1][-1])
        t = Trial(P[L], Y, (x, last), None, n - 1, q, "size-step", dict(params, record_label=last))
    else:
        t = Trial(P[L], Y, (x, 1), (x.copy(), 0), n - 1, q, "size-step", params)
    return [t.pinned(queries)]


def _odd(n: float) -> int:
    k = int(round(n))
    return k if k % 2 else k + 1


def find_steps(exact: Callable[[Dataset, np.ndarray], np.ndarray], domain: Domain, anchor: int,
               lo: int, hi: int, calls: int, queries: np.ndarray | None = None
               ) -> tuple[list[tuple[int, int]], int]:
    """Odd sizes ``(n1, n1 + 2)`` between which the pile's exact law changes.

    Parameters
    ----------
    exact : callable
        The learner's oracle ``exact(data, queries) -> Pr[label = 1]``.
    lo, hi : int
        Size range (the oracle refusing a size ends the range there).
    calls : int
        Oracle evaluations allowed in all.
    queries : array (q, d), optional
        The queries the user fixed: the law is compared there (a step that shows only at
        other points is not one the audit can use); the pile's own queries otherwise.

    Returns
    -------
    (steps, used) : the steps found (largest change first) and the evaluations spent.
    """
    q = as_queries(pile_queries(domain, anchor) if queries is None else queries, domain.d)
    P = domain.points
    law: dict[int, np.ndarray | None] = {}
    used = 0

    def at(n: int) -> np.ndarray | None:
        nonlocal used
        if n not in law:
            if used >= calls:
                return None
            used += 1
            L, Y = pile(domain, n, anchor)
            try:
                law[n] = np.asarray(exact(Dataset(P[L], Y), q), np.float64).reshape(-1)
            except (ValueError, PrivauditError, RecursionError):   # too large for the oracle
                law[n] = None
        return law[n]

    def change(a: int, b: int) -> float:
        pa, pb = at(a), at(b)
        if pa is None or pb is None or pa.shape != pb.shape:
            return 0.0
        return float(np.max(np.abs(pa - pb)))

    ladder: list[int] = []
    v = float(max(lo, 3))
    while v <= hi:
        if not ladder or _odd(v) > ladder[-1]:
            ladder.append(_odd(v))
        v *= LADDER_RATIO
    ladder = [n for n in ladder if n <= hi]
    gaps = [(change(a, b), a, b) for a, b in zip(ladder, ladder[1:])]
    if sum(d > STEP_TOL for d, _, _ in gaps) > max(MAX_STEPS, len(gaps) // 4):
        # the law moves across most gaps: n enters the learner throughout (e.g. a subsample
        # of ceil(eps n) records), not at isolated steps -- the size sweep covers that
        return [], used
    steps: list[tuple[float, int, int]] = []
    for d, a, b in sorted(gaps, reverse=True):
        if d <= STEP_TOL:
            break
        while b - a > 2 and used < calls:
            mid = a + 2 * ((b - a) // 4)
            mid = mid if mid > a else a + 2
            left, right = change(a, mid), change(mid, b)
            if left <= STEP_TOL and right <= STEP_TOL:   # round-off only: no step after all
                break
            a, b = (a, mid) if left >= right else (mid, b)
        if b - a <= 2:
            steps.append((change(a, b), a, b))
        if used >= calls:
            break
    return [(a, b) for _, a, b in sorted(steps, reverse=True)], used


def step_candidates(domain: Domain, relation: str, steps: list[tuple[int, int]], anchor: int,
                    lo: int, hi: int, queries: np.ndarray | None = None) -> list[Trial]:
    """Pile pairs at every size from one below to one above each step (at the user's
    `queries`, pinned, when they fixed them)."""
    out: list[Trial] = []
    seen: set[int] = set()
    for a, b in steps:
        for n in range(a - 1, b + 2):
            if lo <= n <= hi and n not in seen:
                seen.add(n)
                out += pile_trials(domain, relation, n, anchor, queries)
    return out


__all__ = ["pile", "pile_trials", "find_steps", "step_candidates", "STEP_TOL"]
