"""Candidate query points for a pair ``(S, S')`` (Dagan & Feldman 2020, Sec. 5.4 principles 1-3).

Where a single record moves a prediction most: at the differing record itself, right next to it,
on the boundary between background regions of opposite labels, and in the emptiest gap of the
background (a subsampling learner's representative there changes when the record enters the
subsample). For model-scope learners the core forms joint events over all of a pair's query
points (audit/events.py), so several points per pair cost nothing extra in confirmation.
"""

from __future__ import annotations

import numpy as np

from .domain import Domain

MAX_QUERIES = 6


def boundary_points(domain: Domain, loc: np.ndarray, y: np.ndarray, near: int | None = None,
                    k: int = 2) -> list[int]:
    """Locations closest to the midpoints of the nearest opposite-label background pairs
    (closest to `near` first when given)."""
    loc, y = np.asarray(loc, int), np.asarray(y, int)
    u = np.unique(loc)
    if u.size < 2:
        return []
    ones_at = np.bincount(loc, weights=y, minlength=domain.N)[u]
    maj = (2 * ones_at >= np.bincount(loc, minlength=domain.N)[u]).astype(int)
    ones, zeros = u[maj == 1], u[maj == 0]
    if not ones.size or not zeros.size:
        return []
    D = domain._dist[np.ix_(ones, zeros)]
    if near is not None:   # pairs whose midpoint is close to the anchor first
        mid = 0.5 * (domain.points[ones][:, None, :] + domain.points[zeros][None, :, :])
        score = D + np.sqrt(((mid - domain.points[near]) ** 2).sum(-1))
    else:
        score = D
    out: list[int] = []
    for flat in np.argsort(score, axis=None, kind="stable")[: 4 * k]:
        i, j = np.unravel_index(flat, D.shape)
        m = 0.5 * (domain.points[ones[i]] + domain.points[zeros[j]])
        c = int(domain.nearest(m)[0])
        if c not in out:
            out.append(c)
        if len(out) == k:
            break
    return out


def gap_point(domain: Domain, loc: np.ndarray) -> int | None:
    """The location farthest from every background location (the middle of the widest gap)."""
    u = np.unique(np.asarray(loc, int))
    if u.size == 0:
        return None
    dmin = domain._dist[:, u].min(axis=1)
    if dmin.max() <= 0:
        return None
    return int(np.argmax(dmin))


def query_locations(domain: Domain, records: list[int], bg_loc: np.ndarray, bg_y: np.ndarray,
                    max_queries: int = MAX_QUERIES) -> list[int]:
    """Candidate query locations for one pair, most promising first.

    Parameters
    ----------
    records : list of int
        Locations of the differing record(s) (both sides).
    bg_loc, bg_y : arrays
        Locations and labels of the shared background.
    """
    out: list[int] = []

    def put(j):
        if j is not None and int(j) not in out and len(out) < max_queries:
            out.append(int(j))

    for r in records:
        put(r)
    anchor = records[0] if records else None
    if anchor is not None:
        for j in domain.near(anchor, 2):
            put(j)
    for j in boundary_points(domain, bg_loc, bg_y, anchor, k=2):
        put(j)
    put(gap_point(domain, bg_loc))
    return out


__all__ = ["query_locations", "boundary_points", "gap_point", "MAX_QUERIES"]
