"""Adversarial neighbouring datasets of spec 4.3 for Li, Wang & Ye's learners (integer grids).

Every design returns ``(S1, S2)`` differing in record 0 (so a deterministic split "T = the first
k records", bug V5, always holds the differing record). Points are integer domain values.

* `d1_label` -- D1, label flip in a single cell at x = 2: the EM channel of Algorithm 1 (tight
  audit of the label-flip claim eps). Counts are chosen so the two W-majority margins differ by
  about ``1.6/eps`` records, which keeps the minority event near probability 0.2 (best power).
* `d2_membership` -- D2, the differing record sits at a fresh location u = 2 in S1 and duplicates
  location 1 in S2 (LocProbe channel; realized ``ln(1 + (k/n)(e^eps_A - 1))``).
* `d3_split` -- the V7 design of spec 4.4 (a fresh point inside the gap (1, 6)).
* `d5_votes` -- D5 for P1: ``j`` copies of (5, 0) make their portions vote 0 at query 4.
"""

from __future__ import annotations

import math

import numpy as np

from audit.types import Dataset


def _ds(records: list[tuple[float, int, int]]) -> Dataset:
    xs, ys = [], []
    for x, y, c in records:
        xs += [x] * c
        ys += [y] * c
    return Dataset(np.asarray(xs, dtype=np.float64).reshape(-1, 1), np.asarray(ys))


def d1_sizes(eps: float, min_k: int = 1, balanced: bool = False, tail: bool = False,
             margin: float | None = None) -> tuple[int, int]:
    """(n, c1) of D1: n >= 20/eps (so |T| >= 20 and EMLearner reveals h(x) almost surely) and
    eps n >= min_k; c1 - c0 ~ 1.6/eps (1 when balanced; ~5.8/eps with ``tail``; ``margin``/eps
    when given: 3.4 suits bug V2, expected bound 0.152 vs 0.1 at 1e6 runs, 0.13 at 1.6).

    The ``tail`` margin puts the minority pattern at probability ~0.02, where a loss paid only
    when the flipped record lands in T (k/n of the runs, e.g. bug V4: up to ``eps |W| / k`` in
    log-odds there) reaches most of its ceiling while 1e6 runs still resolve it: exact V4 loss
    0.162 at eps = 0.1 (n = 200, c1 = 129), expected confirmed bound 0.134 at 1e6 runs per side
    (0.08 with the 1.6/eps margin); the correct learner's exact loss there is 0.084 < eps."""
    n = max(int(math.ceil(20.0 / eps - 1e-9)), int(math.ceil(min_k / eps - 1e-9)), 8)
    if balanced:
        n += 1 - n % 2
        return n, (n + 1) // 2
    d = max(2, int(round((margin if margin is not None else 5.8 if tail else 1.6) / eps)))
    return n, min(n - 1, (n + d) // 2)


def d1_label(n: int, c1: int, x: float = 2.0) -> tuple[Dataset, Dataset]:
    """D1: S1 = {(x,1) x c1, (x,0) x (n - c1)}; S2 relabels record 0 from 1 to 0."""
    S1 = _ds([(x, 1, c1), (x, 0, n - c1)])
    return S1, S1.relabel(0, 0)


def d2_membership(n: int, u: float = 2.0) -> tuple[Dataset, Dataset]:
    """D2: record 0 is (u, 0) in S1 and (1, 0) in S2; the rest (1, 0) and (4, 1) in halves."""
    a = (n - 1) // 2
    S1 = _ds([(u, 0, 1), (1.0, 0, a), (4.0, 1, n - 1 - a)])
    return S1, S1.replace(0, [1.0], 0)


def d3_split(n: int) -> tuple[Dataset, Dataset]:
    """Spec 4.4 V7 design (n = 2001 gives S1 = {(1,1):560, (1,0):440, (6,1):1000, (3,0):1})."""
    c11, c10 = int(round(0.28 * (n - 1))), int(round(0.22 * (n - 1)))
    S1 = _ds([(3.0, 0, 1), (1.0, 1, c11), (1.0, 0, c10), (6.0, 1, n - 1 - c11 - c10)])
    return S1, S1.replace(0, [1.0], 0)


def d5_votes(k: int, j: int) -> tuple[Dataset, Dataset]:
    """D5 (realizable by any threshold t in (5, 7]): S2 has j copies of (5, 0), S1 one more
    (record 0 is (5, 0) in S1 and (1, 0) in S2); the rest alternate (1, 0) and (7, 1)."""
    rest = k - 1 - j
    S1 = _ds([(5.0, 0, 1), (5.0, 0, j), (1.0, 0, rest // 2), (7.0, 1, rest - rest // 2)])
    return S1, S1.replace(0, [1.0], 0)


__all__ = ["d1_sizes", "d1_label", "d2_membership", "d3_split", "d5_votes"]
