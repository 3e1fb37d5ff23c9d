"""Batch-structured datasets for learners that declare positional batches ``(k, m)``.

Subsample-and-aggregate learners (Bun, Livni & Moran's M, Theorem 17: a sub-learner on each
of k batches of m records, a stable histogram over the k outputs, then a selection on the rest
S') hide one record's influence inside one batch: it decides at most that batch's output,
and that moves one count of the histogram by one. Where the counts sit decides how much that
shows -- at a release threshold, or where an item is new. A generic dataset of k m records
puts different, mostly unrelated contents into the batches, so neither the counts nor (for a
randomised sub-learner) the batch outputs are controlled.

The family here takes any neighbouring pair ``(C, C')`` of *batch-sized* datasets (a design
or random draw of the search's own families at size m) and builds, for a count j:

    batch 0 = C (in S) or C' (in S'),  batches 1..j = copies of C,  batches j+1..k-1 = copies
    of C',  then the rest (S') = C's or C''s records, or the differing record, repeated,

so the histogram over batch outputs holds ``G(C)`` j + 1 times in S and j times in S' (and
``G(C')`` the other way round), at every split j of the k batches. j = 0 is a new item; j near
the release threshold a crossing. A third content F (another block) can fill all but j copies
of C and j of C', so that both counts sit at the threshold together; several different contents
cycled through batches 1..k-1 keep every count low, so that nothing is released and batch 0
alone differs (what a fallback on an empty release reads). The pair is a neighbouring pair of
the declared relation because only batch 0 differs, by the pair's own record.

Which (C, C') and j matter is left to the search: the exact oracle screens block pairs (it
accepts an assembly or refuses it, e.g. when the sub-learner's law on a block is not
available), then the count j is swept; black-box runs confirm as for every candidate.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from audit.types import Dataset

from .domain import Domain
from .trial import Trial

# a batch trial's queries: its block's and points spread over the domain. 16 holds a 16-point
# domain whole: BLM's M at grid = 16 releases a hypothesis table over 16 points, and at 8 of
# them a two-point function p_(x-1) + p_x reads as a point function that S also produces
# (B8's sorted-runs leak confirmed 0 at 8 spread queries, 3.88 at all 16, 10^4 / 10^5 runs)
MAX_BATCH_QUERIES = 16
TAILS = ("a", "b", "ra", "rb")


def batch_trial(block: Trial, k: int, m: int, n_total: int, j: int, tail: str,
                domain_points: np.ndarray, j_b: int | None = None,
                filler: Dataset | Sequence[Dataset] | None = None,
                queries: np.ndarray | None = None) -> Trial | None:
    """The batch-structured pair of `block` (a pair of size-m datasets) at count `j`.

    Parameters
    ----------
    block : Trial
        A neighbouring pair whose two datasets both have m records (replace-one or label).
    k, m : int
        The declared batches.
    n_total : int
        Size of the assembled datasets (>= k m; the rest is S').
    j : int
        How many of batches 1..k-1 copy C (the others copy C').
    tail : {"a", "b", "ra", "rb"}
        What fills S': C's or C''s records repeated, or the differing record of S ("ra") or of
        S' ("rb") repeated.
    j_b : int, optional
        How many copy C' (default: all of batches 1..k-1 that do not copy C); the rest copy
        `filler` (m records: a third batch content, so both sides' counts can sit low at once).
        A sequence of contents is cycled through instead: with many different ones every count
        of the histogram sits low (no batch output is released), where a learner's fallback
        shows (BLM's M, bug B11: h_1, batch 0's output, when nothing is released).
    queries : array (q, d), optional
        The queries the user fixed: the pair's queries exactly (`Trial.pinned`). Default: the
        block's queries and up to `MAX_BATCH_QUERIES` points spread over `domain_points`.
    """
    if block.ra is None or block.rb is None or block.a.n != m or block.b.n != m:
        return None
    j_b = k - 1 - j if j_b is None else j_b
    n_fill = k - 1 - j - j_b
    if not 0 <= j <= k - 1 or j_b < 0 or n_fill < 0 or n_total < k * m:
        return None
    fills = [] if filler is None else [filler] if isinstance(filler, Dataset) else list(filler)
    if n_fill and (not fills or any(f.n != m for f in fills)):
        return None
    A, B = block.a, block.b
    rest = n_total - k * m
    if tail in ("ra", "rb"):   # S' repeats the differing record (its S or its S' version)
        x, lab = block.ra if tail == "ra" else block.rb
        src = Dataset(np.asarray(x, np.float64).reshape(1, -1), np.array([lab], np.int8))
    else:
        src = A if tail == "a" else B
    reps = -(-rest // src.n) if rest else 0
    parts_X = [block.bg_X] + [A.X] * j + [B.X] * j_b
    parts_y = [block.bg_y] + [A.y] * j + [B.y] * j_b
    if n_fill:
        parts_X += [fills[i % len(fills)].X for i in range(n_fill)]
        parts_y += [fills[i % len(fills)].y for i in range(n_fill)]
    if rest:
        parts_X.append(np.tile(src.X, (reps, 1))[:rest])
        parts_y.append(np.tile(src.y, reps)[:rest])
    X = np.concatenate(parts_X, axis=0)
    y = np.concatenate(parts_y).astype(np.int8)
    params = {**block.params, "n": n_total, "batches": [k, m], "count": j, "tail": tail}
    if n_fill:
        params.update(count_b=j_b, filler=n_fill)
        if len(fills) > 1:
            params["fillers"] = len(fills)
    return Trial(X, y, block.ra, block.rb, block.pos, _batch_queries(block.queries, domain_points),
                 f"batches/{block.design}", params).pinned(queries)


def _batch_queries(q: np.ndarray, domain_points: np.ndarray) -> np.ndarray:
    """`q` and points spread over the domain, at most `MAX_BATCH_QUERIES` (or len(q))."""
    q = np.asarray(q, np.float64)
    extra = domain_points[np.unique(np.linspace(0, len(domain_points) - 1,
                                                MAX_BATCH_QUERIES).round().astype(int))]
    return np.unique(np.concatenate([q, extra], axis=0), axis=0)[: max(MAX_BATCH_QUERIES, len(q))]


def tail_trial(block: Trial, k: int, m: int, j: int, rest: Trial,
               domain_points: np.ndarray, queries: np.ndarray | None = None) -> Trial | None:
    """The pair whose k batches are the same on both sides -- `j` copies of C, then C' (the
    two datasets of `block`) -- and whose rest S' is the neighbouring pair `rest`.

    The record then moves inside S', which a subsample-and-aggregate learner reads after the
    histogram (BLM's M: GenericLearner picks among the released batch outputs by their errors
    on S'), while the batches fix which outputs are candidates. A neighbouring pair of the
    declared relation because `rest` is one. `queries`: the user's fixed queries, as for
    `batch_trial`.
    """
    if block.a.n != m or block.b.n != m or not 0 <= j <= k or rest.ra is None or rest.rb is None:
        return None
    A, B = block.a, block.b
    X = np.concatenate([A.X] * j + [B.X] * (k - j) + [rest.bg_X], axis=0)
    y = np.concatenate([A.y] * j + [B.y] * (k - j) + [rest.bg_y]).astype(np.int8)
    q = np.concatenate([np.asarray(block.queries, np.float64), np.asarray(rest.queries, np.float64)])
    params = {**rest.params, "n": k * m + rest.n, "batches": [k, m], "count": j,
              "block": block.design}
    return Trial(X, y, rest.ra, rest.rb, k * m + rest.pos, _batch_queries(q, domain_points),
                 f"batches+rest/{rest.design}", params).pinned(queries)


def run_offsets(m: int) -> list[int]:
    """Offsets inside a batch where `sorted_runs` puts its run boundaries: ``m - 2^j`` for every
    ``2^j < m`` (the last record of the batch, the last two, four, ...). A sub-learner that
    reads the end of its batch differently (BLM's M: G's sample T is the batch's last n
    records) sees a boundary only at the offsets that fall there; the geometric grid meets any
    such tail of power-of-two length exactly, and every other within a factor 2."""
    return [m - 2 ** j for j in range(m.bit_length()) if 2 ** j < m]


def sorted_runs(domain: Domain, k: int, m: int, n_total: int, offset: int, label: int,
                queries: np.ndarray | None = None) -> Trial | None:
    """A replace-one pair against a partition of the *sorted* batch region: one move shifts
    every batch boundary of it by one record.

    The batch region (k m records) is ``R = min(N, k)`` runs of one `label` at the domain's
    points in their order, run r starting at position `offset` of batch ``r floor(k / R)``;
    the rest (``n_total - k m`` records) cycles through the points with the same label. S'
    moves the region's last record (at the last run's point) to the first point. In positional batches
    that changes one record of the last batch; sorted before it is split (BLM's M, bug B8),
    every run after the first starts one position later, so each of the R - 1 batches a
    boundary falls in trains on another mix of two points -- an output S never produces, at
    R - 1 batches at once. The batch analogue of `attacks.families.sorted_shift`; with
    ``offset = m - n`` for BLM's G sample size n it is the hand-made design record for record
    (`algorithms.bun_livni_moran.designs.sorted_shift`). Queries: up to `MAX_BATCH_QUERIES`
    points spread over the domain (all of a domain that small), or the user's `queries`.
    Returns None when there are fewer than 2 runs or the sizes do not fit."""
    R = min(domain.N, k)
    if R < 2 or not 0 <= offset < m or n_total < k * m:
        return None
    order = np.argsort(domain.key(), kind="stable")
    step = k // R
    starts = [0] + [r * step * m + offset for r in range(1, R)] + [k * m]
    loc = np.repeat(order[:R], np.diff(starts))
    loc = np.concatenate([loc, order[np.arange(n_total - k * m) % domain.N]])
    X = domain.points[loc]
    y = np.full(loc.size, int(label), np.int8)
    pos = k * m - 1
    q = domain.points[domain.spread(MAX_BATCH_QUERIES)]
    params = {"n": n_total, "batches": [k, m], "runs": R, "offset": int(offset),
              "label": int(label)}
    return Trial(np.delete(X, pos, axis=0), np.delete(y, pos), (X[pos], int(label)),
                 (domain.points[order[0]], int(label)), pos, q, "batch-sorted-runs",
                 params).pinned(queries)


def sorted_runs_family(domain: Domain, relation: str, k: int, m: int, n_total: int,
                       queries: np.ndarray | None = None) -> list[Trial]:
    """Every `sorted_runs` pair over `run_offsets` x both labels (replace-one only: the move
    changes a record's location)."""
    if relation != "replace-one":
        return []
    return [t for label in (1, 0) for off in run_offsets(m)
            if (t := sorted_runs(domain, k, m, n_total, off, label, queries)) is not None]


def count_grid(k: int, points: int = 16) -> list[int]:
    """Counts j to try first: 0, 1, 2 (new items) and `points` spread over 0..k-1."""
    g = set(np.linspace(0, k - 1, min(points, k)).round().astype(int).tolist()) | {0, 1, 2}
    return sorted(j for j in g if 0 <= j <= k - 1)


__all__ = ["batch_trial", "tail_trial", "count_grid", "TAILS", "run_offsets", "sorted_runs",
           "sorted_runs_family"]
