"""Bin indices on a fixed grid: ``np.searchsorted(edges, values, side="right")``, exactly, faster.

Exploration counts every statistic of every run into a histogram over a grid of a few hundred
edges (quantiles of a pilot or learning sample, plus far-tail points). A binary search over
random values mispredicts a branch at almost every level; on this machine's cores it costs about
60 ns per value for 430 edges. Most values fall between the grid's dense inner edges, so a
lookup table over uniform cells there gives each value's bin up to a few edges, and a few
vectorised comparisons finish the count; values outside that window (and NaN) take the binary
search. The result is the same array, element for element (3.4x faster on 2^18 Laplace values
and a 429-edge score grid, measured here).
"""

from __future__ import annotations

import numpy as np

_MIN_VALUES = 1 << 14   # below this a binary search is cheap enough
_MIN_EDGES = 32
_CELLS_PER_EDGE = 8
_MAX_STEPS = 6          # more edges per cell than this (a grid with a pile of edges): binary search


def bin_index(edges: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``np.searchsorted(edges, values, side="right")`` for sorted, finite `edges`.

    The window is the edges between the 1/16 and 15/16 positions, cut into uniform cells. A value
    whose computed cell is c lies, whatever the rounding of c (at most one cell either way), above
    the start of cell c - 2 and below the start of cell c + 3; the edge count at the first is where
    the count starts, and the most edges between the two over all cells is how many comparisons
    finish it.
    """
    e = np.asarray(edges, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    n = e.size
    if v.size < _MIN_VALUES or n < _MIN_EDGES or v.ndim != 1:
        return np.searchsorted(e, v, side="right")
    lo, hi = float(e[n // 16]), float(e[n - 1 - n // 16])
    cells = _CELLS_PER_EDGE * n
    h = (hi - lo) / cells
    # cells far wider than the rounding of lo + k h (else the slack above would not hold)
    if not (np.isfinite(lo) and np.isfinite(hi) and h > 1e-9 * max(abs(lo), abs(hi))):
        return np.searchsorted(e, v, side="right")
    # below[k + 2]: the edges <= the start of cell k, for k = -2 .. cells + 2
    below = np.searchsorted(e, lo + h * np.arange(-2, cells + 3), side="right")
    first, last = below[:cells], below[5:]
    steps = int((last - first).max())
    if steps > _MAX_STEPS:
        return np.searchsorted(e, v, side="right")
    # every value gets a cell (clipped; NaN -> 0 through fmax) in whole-array passes, and only
    # the few outside the window are searched again: cheaper than compressing to the window
    t = v * (1.0 / h)
    t -= lo / h
    np.fmax(t, 0.0, out=t)
    np.fmin(t, cells - 1, out=t)
    b = first[t.astype(np.intp)]
    padded = np.append(e, np.inf)                       # padded[n] = inf stops the count at n
    for _ in range(steps):
        b += padded[b] <= v
    outside = np.flatnonzero(~((v >= lo) & (v < hi)))
    b[outside] = np.searchsorted(e, v[outside], side="right")
    return b

__all__ = ["bin_index"]
