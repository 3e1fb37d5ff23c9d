"""Deterministic gadget batches and end-to-end neighbour designs for M (spec 6.4).

A *gadget batch* of ``m = N + n`` examples (needs ``n >= |X|``): the stream ``batch[0:N]`` is
alternating chunks A, B, A, ... of ``n`` examples that cover ``X`` once (in domain order, padded by
repeating the last point), labelled by ``g_A`` resp. ``g_B`` (``g_A != g_B``); the final part ``T``
covers ``X`` labelled by ``g_T``. Every tournament round then finds ``f0 = g_A != f1 = g_B`` at once
(no redraw, no FAIL when ``N >= 2n(2^d - 1)``), and SOA agrees with the last occurrence of every
point of ``T``, so ``G(batch) = g_T`` deterministically for every ``k``, ``y`` and pick.

Hypotheses here are truth tables (int8 arrays of length ``|X|``), not necessarily in the class.
Every design returns ``(S, S', queries)`` with ``S, S'`` replace-one neighbours.

References
----------
M. Bun, R. Livni and S. Moran, FOCS 2020, Theorem 17; the designs follow the project's notes 6.4.
"""

from __future__ import annotations

import math

import numpy as np

from audit.errors import PrivauditError
from audit.types import Dataset

from .stable import GParams


def cover(N: int, n: int, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``n`` examples covering the domain ``0..N-1`` once, padded with the last point."""
    if n < N:
        raise PrivauditError(f"gadget batches need n_aux >= |X| = {N}, got n_aux = {n}")
    xs = np.concatenate([np.arange(N), np.full(n - N, N - 1)]).astype(np.int64)
    return xs, np.asarray(labels, dtype=np.int8)[xs]


def gadget_batch(gT: np.ndarray, gA: np.ndarray, gB: np.ndarray, gp: GParams) -> tuple[np.ndarray, np.ndarray]:
    """Domain indices and labels of one gadget batch (length ``gp.m``) with ``G(batch) = gT``."""
    N = len(gT)
    chunks = -(-gp.N // gp.n)
    parts = [cover(N, gp.n, gA if i % 2 == 0 else gB) for i in range(chunks)]
    xs = np.concatenate([p[0] for p in parts])[: gp.N] if parts else np.zeros(0, np.int64)
    ys = np.concatenate([p[1] for p in parts])[: gp.N] if parts else np.zeros(0, np.int8)
    tx, ty = cover(N, gp.n, gT)
    return np.concatenate([xs, tx]), np.concatenate([ys, ty])


def gadget_budget_ok(d: int, gp: GParams) -> bool:
    """``N >= 2n(2^d - 1)``: the gadget's tournament never runs out of stream."""
    return gp.N >= 2 * gp.n * (2 ** d - 1)


def tables(N: int) -> dict[str, np.ndarray]:
    """The named truth tables the designs use (``x0 = 0``, ``x1 = 1``)."""
    z = np.zeros(N, np.int8)
    a = z.copy()
    a[0] = 1
    u = z.copy()
    u[min(1, N - 1)] = 1
    gA = z.copy()
    gA[N - 1] = 1
    return {"b": z, "a": a, "u": u, "c": np.ones(N, np.int8), "gA": gA, "gB": z if N > 1 else 1 - gA}


class Layout:
    """Builds datasets for M: a list of batch outputs (truth tables) plus ``S'``."""

    def __init__(self, domain: np.ndarray, gp: GParams, k: int, n_prime: int) -> None:
        self.domain = domain
        self.N = domain.shape[0]
        self.gp, self.k, self.n_prime = gp, k, n_prime
        t = tables(self.N)
        self.gA, self.gB = t["gA"], t["b"].copy()
        if self.N > 1:
            self.gB[0] = 1 if t["gA"][0] == 0 else 0
        if np.array_equal(self.gA, self.gB):
            self.gB = 1 - self.gA

    def dataset(self, outputs: list[np.ndarray], sx: list[int], sy: list[int]) -> tuple[np.ndarray, np.ndarray]:
        if len(outputs) != self.k:
            raise PrivauditError(f"design needs exactly k = {self.k} batch outputs, got {len(outputs)}")
        if len(sx) != self.n_prime:
            raise PrivauditError(f"design needs exactly n' = {self.n_prime} examples in S', got {len(sx)}")
        parts = [gadget_batch(o, self.gA, self.gB, self.gp) for o in outputs]
        xs = np.concatenate([p[0] for p in parts] + [np.asarray(sx, np.int64)])
        ys = np.concatenate([p[1] for p in parts] + [np.asarray(sy, np.int8)])
        return xs, ys

    def to_data(self, xs: np.ndarray, ys: np.ndarray) -> Dataset:
        return Dataset(self.domain[xs], ys)

    def t_position(self, batch: int, x: int) -> int:
        """Index in the dataset of point ``x``'s (single) occurrence in batch ``batch``'s T."""
        if x == self.N - 1 and self.gp.n > self.N:
            raise PrivauditError("the last domain point is T's padding point; pick another")
        return batch * self.gp.m + self.gp.N + x


def _pair(L: Layout, outputs: list[np.ndarray], sx: list[int], sy: list[int], pos: int,
          x_new: int, y_new: int) -> tuple[Dataset, Dataset]:
    xs, ys = L.dataset(outputs, sx, sy)
    S = L.to_data(xs, ys)
    return S, S.replace(pos, L.domain[x_new], y_new)


def crossing_two_bucket(L: Layout, tau_eff: float) -> tuple[Dataset, Dataset]:
    """``floor(tau_eff)+1`` batches output ``a``, ``floor(tau_eff)`` output ``b``, the rest the
    filler ``c``; ``S'`` = ``n'`` copies of ``(x0, b(x0))`` (GL prefers b over a and c).
    The neighbour flips the label of ``x0`` in batch 0's T: that batch outputs ``b``.
    A noiseless threshold flips ``{out = a}`` deterministically (B1); with noise the ratio is
    about ``e^(0.9 eps_H)``."""
    t = tables(L.N)
    f = int(math.floor(tau_eff))
    if 2 * f + 1 > L.k:
        raise PrivauditError(f"crossing design needs k >= {2 * f + 1}, got k = {L.k}")
    outs = [t["a"]] * (f + 1) + [t["b"]] * f + [t["c"]] * (L.k - 2 * f - 1)
    return _pair(L, outs, [0] * L.n_prime, [0] * L.n_prime, L.t_position(0, 0), 0, 0)


def tight_two_bucket(L: Layout, tau_eff: float) -> tuple[Dataset, Dataset]:
    """``floor(tau_eff)`` batches output ``a``, ``ceil(tau_eff)`` output ``b`` (spec 6.4):
    ratio of ``{out = a}`` exactly ``e^eps_H`` in the tails."""
    t = tables(L.N)
    f, c = int(math.floor(tau_eff)), int(math.ceil(tau_eff))
    if f + c > L.k:
        raise PrivauditError(f"two-bucket design needs k >= {f + c}, got k = {L.k}")
    outs = [t["a"]] * f + [t["b"]] * c + [t["c"]] * (L.k - f - c)
    return _pair(L, outs, [0] * L.n_prime, [0] * L.n_prime, L.t_position(0, 0), 0, 0)


def singleton(L: Layout) -> tuple[Dataset, Dataset]:
    """Batch 0 outputs the unique ``u``, all others ``b``; ``S'`` = ``n'`` copies of ``(x1, 1)``
    (favours u). The neighbour turns batch 0's output into ``b``: ``P[out = u] ~ delta/2`` vs 0."""
    t = tables(L.N)
    outs = [t["u"]] + [t["b"]] * (L.k - 1)
    x1 = min(1, L.N - 1)
    return _pair(L, outs, [x1] * L.n_prime, [1] * L.n_prime, L.t_position(0, x1), x1, 0)


def new_item(L: Layout, tau_eff: float, margin: float) -> tuple[Dataset, Dataset]:
    """Low-count design whose batch-0 output differs from the all-ones ``v`` at one point ``x0``,
    so one substitution (the label of ``x0`` in batch 0's T) makes batch 0 output ``v``."""
    N = L.N
    cap = int(math.floor(tau_eff - margin))
    if cap < 1:
        raise PrivauditError("new-item design needs tau_eff > margin + 1")
    need = -(-L.k // cap)
    first = np.ones(N, np.int8)
    first[0] = 0
    pool = [first] + [np.array([(i >> j) & 1 for j in range(N)], np.int8)
                      for i in range(1, 2 ** min(N, 12) - 1) if i != 2 ** N - 2]
    if need > len(pool):
        raise PrivauditError(f"new-item design needs {need} distinct truth tables, the domain has {len(pool)}")
    outs = [pool[i % need] for i in range(L.k)]
    sx = [i % N for i in range(L.n_prime)]
    return _pair(L, outs, sx, [1] * L.n_prime, L.t_position(0, 0), 0, 1)


def gl_gap(L: Layout, gap: int) -> tuple[Dataset, Dataset]:
    """``L'`` forced to ``{a, b}`` by large counts (half the batches each); ``S'`` has ``gap + 1``
    copies of ``(x0, 0)`` and one ``(x0, 1)`` (err_a - err_b = gap), padded with ``(x1, 0)``; the
    neighbour relabels the ``(x0, 1)``: gap + 2 (spec 6.3 inside M)."""
    t = tables(L.N)
    if gap + 2 > L.n_prime:
        raise PrivauditError(f"GL-gap design needs n' >= {gap + 2}, got {L.n_prime}")
    h = L.k // 2
    outs = [t["a"]] * h + [t["b"]] * (L.k - h)
    x1 = min(1, L.N - 1)
    pad = L.n_prime - gap - 2
    sx = [0] * (gap + 1) + [0] + [x1] * pad
    sy = [0] * (gap + 1) + [1] + [0] * pad
    pos = L.k * L.gp.m + gap + 1
    return _pair(L, outs, sx, sy, pos, 0, 0)


def block_doubled_two_bucket(L: Layout) -> tuple[Dataset, Dataset]:
    """B6 design: blocks 0..6 output ``a``, 7..14 ``b``, the rest the filler ``c``; the neighbour
    turns block 0 into ``b``. Correctly, counts move by 1; when batch i reads block i // 2 (B6)
    they move by 2 (14/16 -> 12/18), so ``{out = a}`` changes by about ``e^(2 eps_H)``."""
    t = tables(L.N)
    if L.k < 15:
        raise PrivauditError(f"block-doubled design needs k >= 15, got k = {L.k}")
    outs = [t["a"]] * 7 + [t["b"]] * 8 + [t["c"]] * (L.k - 15)
    return _pair(L, outs, [0] * L.n_prime, [0] * L.n_prime, L.t_position(0, 0), 0, 0)


def shared_stream(L: Layout, j: int) -> tuple[Dataset, Dataset]:
    """B16 design: the first ``k - j - 1`` batches output the filler ``c``; the last ``j + 1``
    have streams realizable by ``u`` (SOA agrees on every pair of draws, so G's level-1 tournament
    runs out of budget: ``u`` or FAIL, 1/2 each) and T = ``u``; ``S'`` alternates ``(x1, 1)`` and
    ``(x0, 0)`` (favours ``u`` over ``c``). The neighbour flips the label of the last batch's
    first stream example: a disagreement that only the last batch's G sees -- unless the stream
    is shared (B16), when every spilling batch reaches it and outputs ``u``."""
    t = tables(L.N)
    if not 1 <= j < L.k or L.N < 2:
        raise PrivauditError(f"shared-stream design needs 1 <= j < k = {L.k} and |X| >= 2")
    k, m, N = L.k, L.gp.m, L.gp.N
    outs = [t["c"]] * (k - j - 1) + [t["u"]] * (j + 1)
    half = L.n_prime // 2
    sx = [1, 0] * half + [1] * (L.n_prime - 2 * half)
    xs, ys = L.dataset(outs, sx, [1, 0] * half + [1] * (L.n_prime - 2 * half))
    for i in range(k - j - 1, k):
        ys[i * m: i * m + N] = t["u"][xs[i * m: i * m + N]]
    S = L.to_data(xs, ys)
    pos = (k - 1) * m
    return S, S.replace(pos, S.X[pos], 1 - int(S.y[pos]))


def _tail_score(p: float, q: float, runs: float = 1e5) -> float:
    """ln(p/q) minus a rough 3-sigma allowance for estimating both at `runs` runs."""
    if p <= 0 or q <= 0:
        return -math.inf
    return math.log(p / q) - 3.0 * math.sqrt(1.0 / (p * runs) + 1.0 / (q * runs))


def _upper_tail(c: float, t: float, b: float) -> float:
    """``P(c + Lap(b) >= t)``."""
    z = (t - c) / b
    return 0.5 * math.exp(-z) if z >= 0 else 1.0 - 0.5 * math.exp(z)


def block_repeated_two_bucket(L: Layout, r: int, tau_eff: float, b: float) -> tuple[Dataset, Dataset]:
    """B6 design for ``r`` overlapping batches per block (batch i reads block ``i // r``).

    Blocks ``0..A-1`` output ``a``, blocks ``A..A+B-1`` output ``b``, every later block the filler
    ``c``; the neighbour turns block 0 into ``b`` (one label in its T). Under the bug the counts
    are ``rA, rB`` -> ``r(A-1), r(B+1)`` and the filler's ``r(k/r - A - B)`` stays below the
    threshold; correctly they move by 1. ``A, B`` maximise the tail ratio of
    ``{a released, b not}`` (about ``e^(r eps_H)``, Laplace scale ``b``) at threshold ``tau_eff``.
    ``S'`` = ``n'`` copies of ``(x0, b(x0))``: GL prefers b over a and c."""
    t = tables(L.N)
    r = int(r)
    blocks = L.k // r
    best, arg = -math.inf, None
    for A in range(1, blocks):
        for B in range(1, blocks - A + 1):
            pa, qa = _upper_tail(r * A, tau_eff, b), _upper_tail(r * (A - 1), tau_eff, b)
            pb, qb = 1 - _upper_tail(r * B, tau_eff, b), 1 - _upper_tail(r * (B + 1), tau_eff, b)
            score = _tail_score(pa * pb, qa * qb)
            if score > best:
                best, arg = score, (A, B)
    if arg is None:
        raise PrivauditError(f"block-repeated design needs k >= 2 r = {2 * r}, got k = {L.k}")
    A, B = arg
    outs = [t["a"]] * A + [t["b"]] * B + [t["c"]] * (L.k - A - B)
    return _pair(L, outs, [0] * L.n_prime, [0] * L.n_prime, L.t_position(0, 0), 0, 0)


def overlap_tail(L: Layout, tau_eff: float, b: float, eps_G: float, d: int) -> tuple[Dataset, Dataset]:
    """B15 design: ``S'`` overlaps the last batch (``S' = S[km - n' : km]``).

    ``ceil(tau_eff)`` batches (the last one among them) output ``a``, the others ``b`` (released
    always); the neighbour flips ``x0``'s label in the last batch's T, so that batch outputs ``b``.
    The last batch's stream past the part its tournament consumes (``2 n (2^d - 1)`` examples) is
    free: inside the overlap it holds copies of ``(x0, 0)`` padded with ``(x1, 0)``, so that, if
    ``S'`` is the overlap, ``err_a - err_b`` is ``g`` (about ``5 / eps_G``) and the neighbour makes
    it ``g + 2``.
    Event ``{out = a}``: the Hist tail moves by ``e^(eps_H / 2)`` and -- only when ``S'`` overlaps
    -- the GL choice by up to ``e^(eps_G)`` (``g`` about ``5 / eps_G``). A correct M reads ``S'`` =
    ``n'`` copies of ``(x0, 0)`` after the batches, untouched by the neighbour."""
    t = tables(L.N)
    k, m, N, n = L.k, L.gp.m, L.gp.N, L.gp.n
    ca = int(math.ceil(tau_eff))
    if ca >= k or L.N < 2:
        raise PrivauditError(f"overlap design needs k > tau_eff = {tau_eff:.1f} and |X| >= 2")
    lo = max(m - L.n_prime, 2 * n * (2 ** d - 1))
    free = np.arange((k - 1) * m + lo, (k - 1) * m + N)
    if free.size == 0:
        raise PrivauditError("overlap design needs S' to reach the unused stream of the last batch")
    outs = [t["b"]] * (k - ca) + [t["a"]] * ca
    xs, ys = L.dataset(outs, [0] * L.n_prime, [0] * L.n_prime)
    xs[free], ys[free] = 1, 0
    # err_a - err_b over the overlap = #(x0, 0) - #(x0, 1) there (a, b differ only at x0): fill
    # the free part so that it is about 5 / eps_G (wider overlaps carry other batches' x0 labels)
    region = np.arange(max(k * m - L.n_prime, 0), k * m)
    at0 = xs[region] == 0
    base = int(np.sum(at0 & (ys[region] == 0)) - np.sum(at0 & (ys[region] == 1)))
    g = int(np.clip(round(5.0 / eps_G) - base, 0, free.size))
    xs[free[:g]] = 0
    S = L.to_data(xs, ys)
    pos = L.t_position(k - 1, 0)
    return S, S.replace(pos, L.domain[0], 0)


def sorted_shift(L: Layout) -> tuple[Dataset, Dataset]:
    """B8 design: one substitution that shifts every run boundary of the sorted batch region.

    The batch region is runs of ``(x, 1)`` for ``x = 0..R-1`` (``R = min(|X|, k)``), each run
    boundary placed exactly where a batch's T starts (batch ``i_r = r floor(k / R)``), so in
    that batch ``T = (x_r, 1)^n`` and G outputs the point function ``p_(x_r)`` (or FAIL). The
    neighbour replaces the region's last example ``(x_(R-1), 1)`` by ``(x_0, 1)``: for a
    partition that sorts the region (B8) every boundary moves one place right, so each of the
    ``R - 1`` boundary batches now ends with ``T = (x_(r-1), 1) (x_r, 1)^(n-1)`` and outputs the
    two-point function ``p_(x_(r-1)) + p_(x_r)`` -- an item that S never produces. Each such new
    item is released with probability about ``delta / 2`` (half of G's runs FAIL), so
    ``P[out is a two-point function]`` is about ``(R - 1) delta / 4`` against exactly 0 on S: a
    delta far above the claim once ``R > 5``. A positional partition changes one batch only
    (at most ``delta / 2``). ``S'`` holds positives at every point (two-point functions fit best)."""
    k, m, n = L.k, L.gp.m, L.gp.n
    R = min(L.N, k)
    if R < 2 or n > m:
        raise PrivauditError("sorted-shift design needs |X| >= 2 and k >= 2")
    step = k // R
    starts = [0] + [r * step * m + (m - n) for r in range(1, R)] + [k * m]
    xs = np.concatenate([np.full(starts[r + 1] - starts[r], r) for r in range(R)]).astype(np.int64)
    ys = np.ones(k * m, np.int8)
    sx = np.arange(L.n_prime) % L.N
    xs = np.concatenate([xs, sx])
    ys = np.concatenate([ys, np.ones(L.n_prime, np.int8)])
    S = L.to_data(xs, ys)
    return S, S.replace(k * m - 1, L.domain[0], 1)


def sorted_chain(L: Layout, tau_eff: float, b: float) -> tuple[Dataset, Dataset]:
    """B8 design where pruning (not tau) decides the release: a chain of boundary batches that
    all lose the same item ``h0`` (all-zero) when one substitution shifts the sorted region.

    The batch region, in sorted order, is ``C = |X| - 1`` chain batches, then ``B`` constant
    ``(X_last, 0)`` batches, then constant ``(X_last, 1)`` batches. Chain batch ``j`` is
    ``(j, 0)^n (j, 1)^(N-n) | T = (j+1, 0)^n``: for points G outputs ``h0`` w.p. 3/4 and
    ``p_j`` w.p. 1/4 (the tournament finds ``h0 != p_j`` in its first stream chunks, so it never
    FAILs). The neighbour replaces the region's last example ``(X_last, 1)`` by ``(0, 0)``: a
    partition that sorts the region (B8) shifts every position by one, so chain batch ``j``
    becomes ``(j, 0)^(n+1) (j, 1)^(N-n-1) | (j, 1) (j+1, 0)^(n-1)`` and outputs ``p_j`` w.p. 1:
    the count of ``h0`` drops by Bin(C, 3/4) (mean 11.25 at |X| = 16), not by one.
    Constant batches output their SOA hypothesis w.p. 1/2 (FAIL otherwise); ``B = 2 ceil(tau_eff
    + 5 b)`` puts ``h0``'s count just above the threshold, so ``h0`` is pruned away rarely on S
    and ~e^(11/b) times more often on the neighbour; the last block makes ``p_last`` survive
    pruning always (L' is never empty, so ``out = p_last`` <=> ``h0`` pruned: ``h_default`` is
    the all-zero table too). ``S'`` is ``n'`` negatives at ``X_last`` (GL prefers ``h0`` over
    ``p_last`` by an error gap of ``n'``). A positional partition changes only the last batch.

    Needs ``k >= C + 2 B`` (two items near the pruning threshold: with half the constant
    batches FAILing, ``k`` must be about ``3 eta k / 4 * 4`` batches, i.e. ``eta <~ 1/3``)."""
    k, m, n, N = L.k, L.gp.m, L.gp.n, L.gp.N
    C = L.N - 1
    B = 2 * math.ceil(tau_eff + 5.0 * b)
    if C < 2 or N <= n:
        raise PrivauditError("sorted-chain design needs |X| >= 3 and N > n_aux")
    if k < C + 2 * B:
        raise PrivauditError(f"sorted-chain design needs k >= {C + 2 * B} batches, got {k}")
    x0, x1 = [], []
    for j in range(C):  # chain batch j: (j,0)^n (j,1)^(N-n) | (j+1,0)^n
        x0 += [j] * n + [j] * (N - n) + [j + 1] * n
        x1 += [0] * n + [1] * (N - n) + [0] * n
    last = L.N - 1
    x0 += [last] * (B * m) + [last] * ((k - C - B) * m)
    x1 += [0] * (B * m) + [1] * ((k - C - B) * m)
    xs = np.concatenate([np.asarray(x0, np.int64), np.full(L.n_prime, last, np.int64)])
    ys = np.concatenate([np.asarray(x1, np.int8), np.zeros(L.n_prime, np.int8)])
    S = L.to_data(xs, ys)
    return S, S.replace(k * m - 1, L.domain[0], 0)


__all__ = ["shared_stream", "gadget_batch", "gadget_budget_ok", "Layout", "tables", "crossing_two_bucket",
           "tight_two_bucket", "singleton", "new_item", "gl_gap", "cover",
           "block_repeated_two_bucket", "overlap_tail", "sorted_shift", "sorted_chain"]
