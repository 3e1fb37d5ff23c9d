"""Dataset families: random draws and crafted adversarial designs, as search `Trial`s.

Adversarial designs generalise Dagan & Feldman (2020), Sec. 5.4 (D1-D7) to any finite domain,
parameterised by the dataset size ``n`` and the background multiplicity ``m`` (copies per
background location). ``B`` is the background, shared by S and S'; ``q`` the anchor location;
``f`` a background labeling (a class row, or threshold-like through ``q``):

* ``flip-at-query`` (D1 label flip at the query; with ``m`` extra copies of ``(q, 0)`` it is D5
  unanimous votes, with ``m`` of each label D7 tie-break; with no copy at ``q`` and a class
  labeling it is D6 shattered-set flip): ``S = B + (q, 0)``, ``S' = B + (q, 1)``;
* ``gap-inclusion`` (D2; one-sided background: D3): B avoids the neighbourhood of q;
  ``S = B + (q, y)``, ``S' = B + (x_far, f(x_far))``;
* ``move-to-query`` (D4): ``S = B + (x_far, y)``, ``S' = B + (q, y)``;
* ``pile-split`` (replace-one; spec 5.6's split-class design generalised): the whole background
  at q with a margin of the ladder (`margins`), ``S = B + (x_next, y)``, ``S' = B + (q, y)`` with
  ``y`` the leading label and ``x_next`` beside q (`pile_split`);
* ``sorted-shift`` (replace-one; D4 against data-dependent partitions): q at one end of the
  domain order, B alternating labels on the next locations, ``S = B + (x_far, y)``,
  ``S' = B + (q, y)`` (`sorted_shift`).

Under add-remove the record is present in S only; under the label relation only label flips
are generated, and also at every vote margin of a doubling ladder (`margin_ladder`). Random
families: n i.i.d. draws (uniform over the domain, or clustered) labelled by a class row
(realizable) or with label noise (noisy), with a random neighbour.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from audit.errors import PrivauditError
from audit.types import Dataset

from .domain import Domain
from .queries import MAX_QUERIES, gap_point, query_locations
from .trial import Trial

DESIGNS = ("flip-at-query", "gap-inclusion", "move-to-query", "pile-split", "sorted-shift")
EXTRAS = ("none", "zeros", "ones", "tie", "all-zeros", "all-ones", "all-tie")


def _layout(loc: np.ndarray, y: np.ndarray, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """Order background records: grouped by location ("sorted") or round-robin across
    locations ("interleaved": copies of one location spread over any fixed index partition)."""
    order = np.lexsort((y, loc))
    loc, y = loc[order], y[order]
    if layout == "interleaved" and loc.size:
        rank = np.zeros(loc.size, int)
        for j in np.unique(loc):   # k-th copy of each location goes to round k
            sel = np.flatnonzero(loc == j)
            rank[sel] = np.arange(sel.size)
        order = np.lexsort((loc, rank))
        loc, y = loc[order], y[order]
    return loc, y


def background(domain: Domain, f: np.ndarray, support: np.ndarray, size: int,
               extra: list[tuple[int, int, int]] = (), layout: str = "sorted"
               ) -> tuple[np.ndarray, np.ndarray]:
    """Background locations and labels: `extra` records ``(loc, label, count)`` first, the rest of
    `size` spread as evenly as possible over `support` (labelled by f).

    Returns (loc int array, y int8 array), both of length `size`.
    """
    loc: list[int] = []
    y: list[int] = []
    for j, lab, c in extra:
        c = min(int(c), size - len(loc))
        loc += [j] * c
        y += [lab] * c
    rest = size - len(loc)
    support = np.asarray(support, int)
    if rest > 0:
        if support.size == 0:
            support = np.array([extra[0][0]] if extra else [0])
        base, rem = divmod(rest, support.size)
        counts = np.full(support.size, base)
        counts[:rem] += 1
        for j, c in zip(support, counts):
            loc += [int(j)] * int(c)
            y += [int(f[j])] * int(c)
    L, Y = _layout(np.asarray(loc, int), np.asarray(y, np.int8), layout)
    return L, Y.astype(np.int8)


def _trial(domain: Domain, L: np.ndarray, Y: np.ndarray, ra, rb, design: str, params: dict,
           queries: np.ndarray | None, pos: int | None = None) -> Trial:
    recs = [r[0] for r in (ra, rb) if r is not None]
    if queries is None:
        ql = query_locations(domain, recs, L, Y, MAX_QUERIES)
        queries = domain.points[ql]
    P = domain.points

    def rec(r):
        return None if r is None else (P[r[0]].copy(), int(r[1]))

    return Trial(P[L], Y, rec(ra), rec(rb), L.size if pos is None else pos, np.asarray(queries, float),
                 design, params)


def design_trials(domain: Domain, relation: str, n: int, m: int, anchor: int, f: np.ndarray,
                  *, layout: str = "sorted", queries: np.ndarray | None = None,
                  labeling: str = "") -> list[Trial]:
    """Every adversarial design at one (size, multiplicity, anchor, labeling).

    Parameters
    ----------
    relation : {"replace-one", "add-remove", "label"}
    n : int
        Size of the larger dataset (>= 2).
    m : int
        Copies per background location (and of the anchor's extra records).
    anchor : int
        Location index of the query / differing record.
    f : int array (N,)
        Background labeling.
    """
    if n < 2:
        raise PrivauditError(f"dataset size must be >= 2 for a design, got {n}")
    m = max(1, int(m))
    size = n - 1
    key = domain.key()
    out: list[Trial] = []
    base = {"n": n, "m": m, "layout": layout, "anchor": domain.points[anchor].round(6).tolist(),
            "labeling": labeling}
    others = np.setdiff1d(np.arange(domain.N), [anchor])
    n_sup = max(1, min(others.size, size // m))

    def spread(cands: np.ndarray, k: int) -> np.ndarray:
        if cands.size == 0:
            return cands
        return cands[np.unique(np.linspace(0, cands.size - 1, max(1, min(k, cands.size))).round().astype(int))]

    # D1 / D5 / D7 / D6: label flip at the query
    sup = spread(others, n_sup)
    for extra in EXTRAS:
        ex = {"none": [], "zeros": [(anchor, 0, m)], "ones": [(anchor, 1, m)],
              "tie": [(anchor, 0, m), (anchor, 1, m)],
              # D5 at its extreme: the whole background sits at the query with one label
              "all-zeros": [(anchor, 0, size)], "all-ones": [(anchor, 1, size)],
              # D7 at its extreme: only the record breaks an exact tie at the query (an odd
              # background puts its spare record at the far end)
              "all-tie": [(anchor, 0, size // 2), (anchor, 1, size // 2)]}[extra]
        if extra in ("zeros", "ones", "tie") and sum(c for _, _, c in ex) >= size:
            continue
        L, Y = background(domain, f, np.array([domain.far(anchor)]) if extra == "all-tie" else sup,
                          size, ex, layout)
        p = dict(base, variant=extra)
        if relation == "add-remove":
            for yv in (0, 1):
                out.append(_trial(domain, L, Y, (anchor, yv), None, "flip-at-query", dict(p, record_label=yv), queries))
        else:
            out.append(_trial(domain, L, Y, (anchor, 0), (anchor, 1), "flip-at-query", p, queries))
    if relation == "label":
        return out
    # D2 / D3: gap inclusion (two gap widths, two-sided and one-sided backgrounds)
    for gap in (1, 3):
        near = set(domain.near(anchor, gap).tolist()) | {anchor}
        cands = np.array([j for j in range(domain.N) if j not in near], int)
        sides = {"two-sided": cands, "below": cands[key[cands] < key[anchor]],
                 "above": cands[key[cands] > key[anchor]]}
        for side, c in sides.items():
            if c.size == 0:
                continue
            sup = spread(c, max(1, min(c.size, size // m)))
            L, Y = background(domain, f, sup, size, [], layout)
            far = int(sup[np.argmax(domain._dist[anchor, sup])])
            for yv in (0, 1):
                p = dict(base, variant=f"{side}, gap {gap}", record_label=yv)
                rb = None if relation == "add-remove" else (far, int(f[far]))
                out.append(_trial(domain, L, Y, (anchor, yv), rb, "gap-inclusion", p, queries))
    # D4: move to query -- from the far end onto an empty query location, and from a location
    # of its own onto m background copies (the move creates a duplicate: the set of distinct
    # x-values shrinks, which is what data-dependent covers and grids react to)
    if relation == "replace-one":
        L, Y = background(domain, f, spread(others, n_sup), size, [], layout)
        far = domain.far(anchor)
        for yv in (0, 1):
            p = dict(base, variant="far -> query", record_label=yv)
            out.append(_trial(domain, L, Y, (far, yv), (anchor, yv), "move-to-query", p, queries))
        fresh = [j for j in domain.near(anchor, domain.N - 1)[::-1] if j not in set(sup.tolist())]
        if fresh and m < size:
            L, Y = background(domain, f, spread(others, max(1, (size - m) // m)), size,
                              [(anchor, int(f[anchor]), m)], layout)
            src = int(fresh[0])
            for yv in (0, 1):
                p = dict(base, variant="new -> duplicate", record_label=yv)
                out.append(_trial(domain, L, Y, (src, yv), (anchor, yv), "move-to-query", p, queries))
    return out


def margins(size: int) -> list[int]:
    """Vote margins of the ladder: 2, 4, 8, ... below `size` (0/1 and `size` are the tie and
    unanimous extremes `design_trials` already has)."""
    out, d = [], 2
    while d < size:
        out.append(d)
        d *= 2
    return out


def _pile_base(domain: Domain, n: int, anchor: int, labeling: str, min_n: int,
               what: str) -> tuple[int, dict]:
    """The background size and the design parameters of a pile at `anchor` (`n` >= `min_n`)."""
    if n < min_n:
        raise PrivauditError(f"dataset size must be >= {min_n} for {what}, got {n}")
    return n - 1, {"n": n, "m": 1, "layout": "sorted",
                   "anchor": domain.points[anchor].round(6).tolist(), "labeling": labeling}


def _margin_piles(domain: Domain, f: np.ndarray, anchor: int, size: int, support: np.ndarray):
    """``(d, ahead, L, Y)`` for every margin ``d`` of the ladder and either label ahead: `size`
    background records all at `anchor`, ``d`` (or ``d - 1``, by parity) more of ``ahead``."""
    for d in margins(size):
        lead = (size + d) // 2
        for ahead in (1, 0):
            ex = [(anchor, ahead, lead), (anchor, 1 - ahead, size - lead)]
            yield (d, ahead) + background(domain, f, support, size, ex)


def margin_ladder(domain: Domain, n: int, anchor: int, f: np.ndarray,
                  queries: np.ndarray | None = None, labeling: str = "") -> list[Trial]:
    """D1 at every margin: the whole background at the query, ``d`` more records of one label
    than of the other (``d`` on `margins`, ``d - 1`` when the background's size and ``d``
    differ in parity; either label ahead), the record flipped 0 -> 1.

    Under the label relation a flip at the query is the only move, and the background's vote
    margin there decides what it costs: between the exact tie (``all-tie``) and a unanimous
    background (``all-zeros`` / ``all-ones``) lies the margin where a learner that privatises
    the vote (an exponential mechanism over labels, a noisy count) is still undecided but
    already leaning — Li, Wang & Ye's D1 puts ``c1 - c0 ~ 1.6/eps`` to ``3.4/eps`` there
    (``algorithms.li_wang_ye.designs.d1_sizes``). A geometric ladder reaches any such margin
    within a factor of 2 without knowing eps. The whole background sits at the query, so the
    trials do not depend on the labeling `f` or on a multiplicity (`adversarial_family` builds
    them once per anchor and size under the label relation).
    """
    size, base = _pile_base(domain, n, anchor, labeling, 2, "a design")
    out: list[Trial] = []
    for d, ahead, L, Y in _margin_piles(domain, f, anchor, size, np.array([domain.far(anchor)])):
        p = dict(base, variant=f"margin {d} to {ahead}")
        out.append(_trial(domain, L, Y, (anchor, 0), (anchor, 1), "flip-at-query", p, queries))
    return out


def pile_split(domain: Domain, n: int, anchor: int, f: np.ndarray,
               queries: np.ndarray | None = None, labeling: str = "") -> list[Trial]:
    """The record leaves a pile for a fresh location beside it, at every margin of the ladder.

    The whole background sits at the anchor, ``d`` more records of one label than of the other
    (``d`` on `margins`, either label ahead); the record carries the leading label and sits on
    the pile in S' and at one of the anchor's two nearest locations in S. The move changes no
    label count at the pile, only the set of distinct x-values: a new location splits the
    hypotheses that agreed on the data into two patterns. A learner that samples from one
    representative per pattern of its data (an exponential mechanism over ``H_S`` rather than
    ``H``: Dagan & Feldman's DF-PP2 without its subsample, BV-PP2-2) doubles the mass of the
    class the split falls in, and the margin decides how much that class weighs -- its error is
    the minority count, so it matters most when ``eps d`` is about one (the design of
    `algorithms.dagan_feldman.pp2.pair_split_class`). The geometric ladder reaches that margin
    within a factor of 2 without knowing eps. Replace-one only: no label changes.
    """
    size, base = _pile_base(domain, n, anchor, labeling, 3, "a pile split")
    out: list[Trial] = []
    for side, fresh in enumerate(domain.near(anchor, 2).tolist()):
        for d, ahead, L, Y in _margin_piles(domain, f, anchor, size, np.array([anchor])):
            p = dict(base, variant=f"pile split, margin {d} to {ahead}, side {side}",
                     record_label=ahead)
            out.append(_trial(domain, L, Y, (int(fresh), ahead), (anchor, ahead), "pile-split",
                              p, queries))
    return out


def pile_family(domain: Domain, relation: str, sizes: list[int], *, n_anchors: int = 3,
                queries: np.ndarray | None = None) -> list[Trial]:
    """Every `pile_split` over sizes x anchors (replace-one; empty for the other relations).

    Kept apart from `adversarial_family`: the search draws its own share of them (a stream of
    their own), so the designs it drew before, and the batch family's block pairs, stay as
    they were. The trials depend on neither a labeling nor a multiplicity.
    """
    if relation != "replace-one":
        return []
    zero = np.zeros(domain.N, np.int8)      # unused: the background is the pile
    return [t for q in anchors(domain, n_anchors) for n in sizes if n >= 3
            for t in pile_split(domain, n, int(q), zero, queries=queries)]


def shift_sizes(domain: Domain, min_size: int) -> list[int]:
    """Sizes of the `sorted_shift` designs: ``2^j`` and ``3 * 2^j`` from `min_size` (at least 4)
    up to the largest the domain holds (N - 1). An alternating background flips every block's
    vote only when every block boundary falls on an even position -- block sizes a multiple of
    2 -- and the learner's number of blocks k is unknown: for every k of the form 2^a or
    3 * 2^a some of these sizes are multiples of 2k (k = 12: 24 and 48; for k = 9 none)."""
    lo, hi = max(4, int(min_size)), domain.N - 1
    out = {b * 2 ** j for b in (2, 3) for j in range(1, 13)}
    return sorted(v for v in out if lo <= v <= hi)


def sorted_shift(domain: Domain, n: int, end: int, phase: int,
                 queries: np.ndarray | None = None) -> Trial | None:
    """D4 against a partition of the *sorted* data: one move shifts every block by one record.

    The anchor q is one end of the domain order (`end` 0: the first location, 1: the last);
    the background is ``n - 1`` records on the next ``n - 1`` locations inward, one each, their
    labels alternating from `phase`; the record ``(x_far, 1 - phase)`` sits at the other end of
    the domain in S and at q in S'. Sorted by x, S' is S shifted by one place: each record of
    S' at a fixed sorted position carries the other label than in S, so every contiguous block
    of the sorted data (subsample-and-aggregate with a data-dependent split:
    `algorithms.dagan_feldman.real` BV-REAL-2) starts with the other label and trains on
    a differently-ordered sample; a threshold ERM with a one-sided tie-break then changes its
    vote at q in every block at once, while a data-independent partition sees one changed
    record. The design does not depend on the number of blocks when their sizes are even (see
    `shift_sizes`), and the two ends mirror each other for the two tie-break directions (by
    symmetry; measured on BV-REAL-2 only, a leftmost tie-break, where all four variants give
    exact 6.0 at n = 24). Returns None when the domain has fewer than ``n + 1`` locations.
    Dagan & Feldman (2020), Sec. 5.4, D4 (move to query), with the background of
    `algorithms.dagan_feldman.real.pair_sorted_shift` made block-size-free.
    """
    if n < 2 or n + 1 > domain.N:
        return None
    order = np.argsort(domain.key(), kind="stable")
    if end:
        order = order[::-1]
    q, far = int(order[0]), int(order[-1])
    L = order[1:n].astype(int)
    Y = ((np.arange(n - 1) + phase) % 2).astype(np.int8)
    if end:    # the records in ascending order of location, as `background` lays them out
        L, Y = L[::-1], Y[::-1]
    y = 1 - int(phase)
    p = {"n": n, "m": 1, "layout": "sorted", "anchor": domain.points[q].round(6).tolist(),
         "labeling": "alternating", "variant": f"end {end}, phase {phase}", "record_label": y}
    return _trial(domain, L, Y, (far, y), (q, y), "sorted-shift", p, queries)


def shift_family(domain: Domain, relation: str, min_size: int, *,
                 queries: np.ndarray | None = None) -> list[Trial]:
    """Every `sorted_shift` over `shift_sizes` x both ends x both phases (replace-one; empty for
    the other relations). Kept apart from `adversarial_family`, as `pile_family` is: the
    search gives them a stream and an allowance of their own."""
    if relation != "replace-one":
        return []
    return [t for n in shift_sizes(domain, min_size) for end in (0, 1) for phase in (0, 1)
            if (t := sorted_shift(domain, n, end, phase, queries)) is not None]


def anchors(domain: Domain, count: int) -> np.ndarray:
    """Anchor locations: `count` spread over the interior, then the two ends of the domain
    order (for threshold-like classes the ends are where one label is rarest)."""
    sp = domain.spread(count + 2)
    inner = sp[1:-1] if sp.size > 2 else sp
    ends = np.array([0, domain.N - 1])
    return np.concatenate([inner, np.setdiff1d(ends, inner)]).astype(int)


def record_first(t: Trial) -> Trial:
    """The same pair with the differing record at index 0 instead of last: learners that treat
    records by position (a deterministic split into "the first k records", blocks by index)
    see the record on the other side of the split."""
    return replace(t, pos=0, params={**t.params, "position": "first"})


def adversarial_family(domain: Domain, relation: str, sizes: list[int], rng: np.random.Generator,
                       *, n_anchors: int = 3, n_labelings: int = 2,
                       queries: np.ndarray | None = None,
                       positions: tuple[str, ...] = ("last",)) -> list[Trial]:
    """All designs over sizes x multiplicities (1, n/8, n/2 copies per location) x anchors x
    labelings x layouts x record positions (`positions`: "last" and/or "first", see
    `record_first`)."""
    out: list[Trial] = []
    for q in anchors(domain, n_anchors):
        fs = domain.labelings(rng, n_labelings, anchor=int(q))
        for fi, f in enumerate(fs):
            for n in sizes:
                # one copy per location; about 8 locations (D7's k_query = n/8); two heavy
                # clusters (D3: every record but one at two locations)
                mults = sorted({1, max(1, (n - 1) // 8), max(1, (n - 1) // 2)})
                for m in mults:
                    for layout in (("sorted", "interleaved") if m > 1 else ("sorted",)):
                        out += design_trials(domain, relation, n, m, int(q), f, layout=layout,
                                             queries=queries, labeling=f"f{fi}")
                        if relation == "label" and fi == 0 and m == mults[0]:
                            # the ladder depends on neither the labeling nor m: built once
                            out += margin_ladder(domain, n, int(q), f, queries=queries,
                                                 labeling=f"f{fi}")
    if "first" in positions:
        out = (out if "last" in positions else []) + [record_first(t) for t in out]
    return out


def random_family(domain: Domain, relation: str, sizes: list[int], rng: np.random.Generator,
                  count: int, *, noise: float = 0.1, queries: np.ndarray | None = None) -> list[Trial]:
    """`count` random datasets with a random neighbour each.

    Draws: n i.i.d. locations, uniform over the domain or clustered (a few centres, geometric
    spread in sort order); labels from a random labeling (class row when known: realizable),
    each flipped with probability `noise` in the noisy half of the draws.
    """
    out: list[Trial] = []
    lo, hi = min(sizes), max(sizes)
    for t in range(count):
        # log-uniform sizes between the smallest and largest: behaviour that changes only at
        # particular n (data-size-dependent parameters) gets a chance to show
        n = int(rng.choice(sizes)) if t % 2 == 0 or lo == hi else \
            int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
        f = domain.labelings(rng, 1)[-1]
        if rng.random() < 0.5:
            loc = rng.integers(0, domain.N, size=n)
            dist = "uniform"
        else:
            centres = rng.integers(0, domain.N, size=int(rng.integers(1, 4)))
            off = rng.geometric(0.3, size=n) * rng.choice([-1, 1], size=n)
            loc = np.clip(centres[rng.integers(0, centres.size, size=n)] + off, 0, domain.N - 1)
            dist = "clustered"
        y = f[loc].astype(np.int8)
        noisy = rng.random() < 0.5
        if noisy:
            y = np.where(rng.random(n) < noise, 1 - y, y).astype(np.int8)
        i = int(rng.integers(0, n))
        L, Y = np.delete(loc, i), np.delete(y, i)
        ra = (int(loc[i]), int(y[i]))
        if relation == "label":
            rb = (ra[0], 1 - ra[1])
        elif relation == "add-remove":
            rb = None
        else:
            new = int(rng.integers(0, domain.N)) if rng.random() < 0.7 else ra[0]
            rb = (new, int(rng.integers(0, 2)) if new != ra[0] else 1 - ra[1])
        params = {"n": n, "draw": dist, "labels": "noisy" if noisy else "realizable", "index": i}
        out.append(_trial(domain, L, Y, ra, rb, "random", params, queries, pos=i))
    return out


def data_family(data: Dataset, domain: Domain, relation: str, rng: np.random.Generator,
                count: int, *, queries: np.ndarray | None = None) -> list[Trial]:
    """Neighbours of the user's own dataset (the background is fixed: it is their data).

    Records chosen first where one record matters most: alone at its location, next to a record
    of the other label (a class boundary), then at random. Each gets the relation's edits: a
    label flip, a move into the widest gap or far away, or a removal.
    """
    loc = domain.nearest(data.X)
    y = data.y.astype(int)
    uniq, counts = np.unique(loc, return_counts=True)
    mult = dict(zip(uniq.tolist(), counts.tolist()))
    # opposite-label neighbour distance per record
    dmin = np.full(data.n, np.inf)
    for lab in (0, 1):
        other = loc[y != lab]
        if other.size:
            sel = y == lab
            dmin[sel] = domain._dist[np.ix_(loc[sel], other)].min(axis=1)
    score = np.array([mult[int(j)] for j in loc]) + dmin / (dmin[np.isfinite(dmin)].max() + 1e-12
                                                            if np.isfinite(dmin).any() else 1.0)
    order = np.argsort(score, kind="stable")
    k_pick = max(1, min(data.n, count // 2))
    picked = list(order[: (k_pick + 1) // 2]) + list(rng.permutation(data.n)[: k_pick])
    idx = list(dict.fromkeys(int(i) for i in picked))[:k_pick]
    gap = gap_point(domain, loc)
    out: list[Trial] = []
    for i in idx:
        L, Y = np.delete(loc, i), np.delete(y, i).astype(np.int8)
        ra = (int(loc[i]), int(y[i]))
        edits: list[tuple[Any, str]] = []
        if relation in ("replace-one", "label"):
            edits.append(((ra[0], 1 - ra[1]), "flip label"))
        if relation == "replace-one":
            for tgt, what in ((gap, "move to gap"), (domain.far(ra[0]), "move far")):
                if tgt is not None and tgt != ra[0]:
                    edits += [((int(tgt), lab), f"{what}, label {lab}") for lab in (0, 1)]
        if relation == "add-remove":
            edits.append((None, "remove"))
        for rb, what in edits:
            t = Trial(data.X[np.arange(data.n) != i], Y, (data.X[i].copy(), int(y[i])),
                      None if rb is None else (domain.points[rb[0]].copy(), int(rb[1])), i,
                      np.zeros((0, data.d)), "data-neighbour", {"n": data.n, "index": i, "edit": what},
                      fixed_background=True)
            if queries is None:
                recs = [ra[0]] + ([rb[0]] if rb is not None else [])
                ql = query_locations(domain, recs, L, Y, MAX_QUERIES)
                t = Trial(t.bg_X, t.bg_y, t.ra, t.rb, t.pos, domain.points[ql], t.design, t.params, True)
            else:
                t = Trial(t.bg_X, t.bg_y, t.ra, t.rb, t.pos, np.asarray(queries, float), t.design,
                          t.params, True)
            out.append(t)
    return out[: max(count, 1)]


__all__ = ["DESIGNS", "background", "design_trials", "adversarial_family", "record_first", "random_family",
           "data_family", "anchors", "pile_split", "pile_family", "shift_family",
           "shift_sizes", "sorted_shift"]
