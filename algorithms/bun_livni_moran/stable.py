"""The Monte-Carlo tournament sampler (BLM-5) and the globally-stable learner G (BLM-6).

``G(batch)`` with ``batch`` of ``m = N + n`` examples (Sec. IV-C2, Theorem 10):

1. ``k`` uniform on ``{0, .., d}`` with ``d = Ldim(H)``;
2. ``S ~ D~_k`` from the *stream* ``batch[0:N]`` (budget ``N``, global over the recursion and all
   repeats; drawing past it is ``FAIL``);
3. output ``SOA(S o T)`` with ``T = batch[N:N+n]`` (never part of the stream), or ``FAIL``.

``D~_k`` (Sec. IV-C1): draw ``S0, S1 ~ D~_{k-1}`` (recursively), then ``T0, T1`` (n examples each,
in this order: S0, S1, T0, T1 -- audit gadgets rely on it); ``f_b = SOA(S_b o T_b)``; if
``f0 == f1`` start again from the top (everything is redrawn); else ``x`` = the first point where
they differ (``pick="first"``, default) or a uniform one (``pick="random"``), ``y`` uniform, and the
winner is the branch whose prediction at ``x`` is *wrong*: output ``S_w o T_w o (x, y)``.

Two engines compute the same law:

* `GlobalStableLearner.run` simulates G literally with an `rng` (one run per call);
* `GlobalStableLearner.law` enumerates G's exact output distribution by dynamic programming over
  (level ``k``, stream position): the stream is fixed, so ``D~_k`` started at position ``p`` has a
  law over (end position, SOA state) that depends only on ``(k, p)``. The coins are ``k``, the
  tournament labels ``y`` and (optionally) the pick; positions advance in steps of ``n``, so the
  table has at most ``(d + 1) (N / n + 1)`` entries. Learners sample G's outputs from this exact
  law, vectorised over runs (spec 5: caching G is allowed only as its exact output distribution).
  Keyed by the records left rather than the position, the table's entries hold for any stream
  with the same last records: `SharedSuffix` lends them to the next stream (B16's batch streams
  each end with the next batch's).

G is **not private** (spec 6.1: eps = infinity): it is only globally stable, i.e. some ``f`` has
``Pr[G(S) = f] >= 1/((d+1) 2^(d+1))`` with ``loss_D(f) <= alpha_G`` when ``S ~ D^m`` is realizable.

References
----------
M. Bun, R. Livni and S. Moran, FOCS 2020: Sec. IV-B (tournament distributions D_k), Sec. IV-C1
(Monte-Carlo approximation), Sec. IV-C2 and Theorem 10 (globally-stable learner), Observation 11,
Lemmas 12-14.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from audit.errors import PrivauditError

from .soa import SOA, State

FAIL = b"FAIL"            # G's non-hypothesis output (a sentinel key, never a truth table)
MAX_LAW_WORK = 2_000_000  # pair evaluations allowed in one exact-law computation


class _Fail(Exception):
    pass


@dataclass(frozen=True)
class GParams:
    """Public parameters of G: auxiliary size ``n``, budget ``N`` and the pick rule."""

    n: int
    N: int
    pick: str = "first"

    @property
    def m(self) -> int:
        return self.N + self.n


def paper_params(d: int, alpha_G: float) -> GParams:
    """Theorem 10's parameters: ``n = ceil(d / alpha_G)``, ``N = 8^(d+1) n``."""
    n = max(1, math.ceil(d / alpha_G))
    return GParams(n, 8 ** (d + 1) * n)


class GlobalStableLearner:
    """G of Theorem 10 over the class of `soa`, with parameters `params`.

    Parameters
    ----------
    soa : SOA
        The (extended) SOA of the class; ``d = soa.ldim()``.
    params : GParams
        Auxiliary sample size ``n``, budget ``N`` (a multiple of ``n`` is natural but not needed)
        and pick rule ``"first"`` | ``"random"``.
    """

    def __init__(self, soa: SOA, params: GParams) -> None:
        if params.n < 1 or params.N < 0:
            raise PrivauditError(f"G needs n >= 1 and N >= 0, got n={params.n}, N={params.N}")
        if params.pick not in ("first", "random"):
            raise PrivauditError(f"unknown pick rule {params.pick!r}; valid: first, random")
        self.soa = soa
        self.p = params
        self.d = soa.ldim()

    # -- literal simulation (BLM-5 / BLM-6) -----------------------------------------------------
    def run(self, xs: np.ndarray, ys: np.ndarray, rng: np.random.Generator,
            k: int | None = None, with_sample: bool = False) -> Any:
        """One run of G on the batch ``(xs, ys)`` (domain indices, labels); returns the output
        truth table (bytes) or `FAIL`; with ``with_sample`` also ``(S, k)`` (S = list of (x, y),
        None on FAIL)."""
        self._check_batch(xs)
        if self.d == 0:
            out = self.soa.hyp(self.soa.init)
            return (out, [], 0) if with_sample else out
        n, N = self.p.n, self.p.N
        pos = [0]
        soa = self.soa

        def draw() -> tuple[np.ndarray, np.ndarray]:
            if pos[0] + n > N:
                raise _Fail
            a = pos[0]
            pos[0] += n
            return xs[a:a + n], ys[a:a + n]

        def sample(level: int) -> tuple[list, State]:
            if level == 0:
                return [], soa.init
            while True:
                S0, st0 = sample(level - 1)
                S1, st1 = sample(level - 1)
                (x0, y0), (x1, y1) = draw(), draw()
                st0, st1 = soa.feed(st0, x0, y0), soa.feed(st1, x1, y1)
                f0 = np.frombuffer(soa.hyp(st0), np.int8)
                f1 = np.frombuffer(soa.hyp(st1), np.int8)
                dis = np.flatnonzero(f0 != f1)
                if dis.size == 0:
                    continue
                x = int(dis[0]) if self.p.pick == "first" else int(dis[rng.integers(dis.size)])
                y = int(rng.integers(2))
                if f0[x] != y:
                    return S0 + list(zip(x0.tolist(), y0.tolist())) + [(x, y)], soa.step(st0, x, y)
                return S1 + list(zip(x1.tolist(), y1.tolist())) + [(x, y)], soa.step(st1, x, y)

        kk = int(rng.integers(self.d + 1)) if k is None else int(k)
        try:
            S, st = sample(kk)
        except _Fail:
            return (FAIL, None, kk) if with_sample else FAIL
        out = soa.hyp(soa.feed(st, xs[N:N + n], ys[N:N + n]))
        return (out, S, kk) if with_sample else out

    # -- exact law ---------------------------------------------------------------------------------
    def law(self, xs: np.ndarray, ys: np.ndarray, k: int | None = None,
            shared: "SharedSuffix | None" = None) -> dict:
        """G's exact output distribution on the batch: ``{truth-table bytes or FAIL: prob}``.

        ``k`` fixes the level (default: uniform on ``{0..d}``, as G does). ``shared`` lends the
        laws of ``D~_level`` computed on earlier streams with a common suffix (`SharedSuffix`);
        the result is the same to the bit with or without it. Raises `PrivauditError` when the
        enumeration would exceed `MAX_LAW_WORK` new pair evaluations.
        """
        self._check_batch(xs)
        soa = self.soa
        n, N = self.p.n, self.p.N
        if self.d == 0:
            return {soa.hyp(soa.init): 1.0}
        shared = SharedSuffix() if shared is None else shared
        shared.align(xs[:N], ys[:N], (id(soa), n, self.p.pick))
        # positions are counted as the records left in the stream (r = N - position): a law of
        # D~_level depends only on the stream from where it starts, so streams that end alike
        # share it under the same key
        feeds, memo = shared.feeds, shared.memo
        work = [0]

        def fed(st: State, r: int) -> State:
            key = (st, r)
            out = feeds.get(key)
            if out is None:
                a = N - r
                out = soa.feed(st, xs[a:a + n], ys[a:a + n])
                feeds[key] = out
            return out

        def lower(level: int, r: int) -> dict:
            """The law of D~_level with r records left at a level below the one computed: there
            first (`dist`), or level 0."""
            if level == 0:
                return {(r, soa.init): 1.0}
            return memo[(level, r)]

        def body(level: int, r: int) -> dict | list:
            """Law of (records left at the end, state) of D~_level started with r records left;
            FAIL key. Needs the level-1 laws it reads in `memo`. Where it also needs a law of
            its own level further on that `memo` lacks, it returns instead the sums made so far
            and, in order, every addition from there on -- a later law's as ``(None, key, w)``
            -- for `replay` once those laws are there: the recursion's sums in the recursion's
            order, with the tournament itself evaluated once."""
            out: dict = {}
            ops: list | None = None          # after the first missing law: additions in order
            pairs = 0

            def put(o, v: float) -> None:
                if ops is None:
                    out[o] = out.get(o, 0.0) + v
                else:
                    ops.append((o, v))

            for o0, w0 in lower(level - 1, r).items():
                if o0 == FAIL:
                    put(FAIL, w0)
                    continue
                for o1, w1 in lower(level - 1, o0[0]).items():
                    w = w0 * w1
                    if o1 == FAIL:
                        put(FAIL, w)
                        continue
                    pairs += 1
                    if work[0] + pairs > MAX_LAW_WORK:
                        raise PrivauditError("G's exact law is too costly to enumerate on this batch "
                                             f"(more than {MAX_LAW_WORK} branch pairs); use run()")
                    a = o1[0]
                    if a < 2 * n:
                        put(FAIL, w)
                        continue
                    st0, st1 = fed(o0[1], a), fed(o1[1], a - n)
                    f0 = np.frombuffer(soa.hyp(st0), np.int8)
                    f1 = np.frombuffer(soa.hyp(st1), np.int8)
                    dis = np.flatnonzero(f0 != f1)
                    if dis.size == 0:                      # (iii): redraw everything, further on
                        later = (level, a - 2 * n)
                        if ops is None and later not in memo:
                            ops = [dict(out)]
                        if ops is None:
                            for o, v in memo[later].items():
                                out[o] = out.get(o, 0.0) + w * v
                        else:
                            ops.append((None, later, w))
                        continue
                    picks = dis[:1] if self.p.pick == "first" else dis
                    for x in picks.tolist():
                        for y in (0, 1):
                            st = soa.step(st0, x, y) if f0[x] != y else soa.step(st1, x, y)
                            put((a - 2 * n, st), w * 0.5 / picks.size)
            work[0] += pairs
            return out if ops is None else ops

        def replay(ops: list) -> dict:
            out = dict(ops[0])
            for op in ops[1:]:
                if op[0] is None:
                    _, later, w = op
                    for o, v in memo[later].items():
                        out[o] = out.get(o, 0.0) + w * v
                else:
                    out[op[0]] = out.get(op[0], 0.0) + op[1]
            return out

        def dist(level: int, r: int) -> dict:
            """`body` with its dependencies first, on a stack of its own: a stream that keeps
            agreeing redraws N / 2n times at one level (BLM's M with a shared stream, B16: N is
            the rest of the batch region), deeper than Python's recursion allows. A law is
            computed once and depends only on laws further on or a level down (no cycles), so
            the result is the recursion's, sum for sum."""
            if level == 0:
                return lower(0, r)
            pending: dict = {}               # key -> its additions, waiting for later laws
            stack = [(level, r)]
            while stack:
                key = stack[-1]
                if key in memo:
                    stack.pop()
                    continue
                lv, at = key
                if key in pending:           # every later law it waited for is there now
                    memo[key] = replay(pending.pop(key))
                    stack.pop()
                    continue
                if lv > 1:      # the level below first: where this law starts, then each end
                    if (lv - 1, at) not in memo:
                        stack.append((lv - 1, at))
                        continue
                    ends = {o[0] for o in memo[(lv - 1, at)] if o != FAIL}
                    below = [(lv - 1, e) for e in sorted(ends) if (lv - 1, e) not in memo]
                    if below:
                        stack += below
                        continue
                got = body(lv, at)
                if isinstance(got, dict):
                    memo[key] = got
                    stack.pop()
                else:
                    pending[key] = got
                    stack += [op[1] for op in reversed(got[1:])
                              if op[0] is None and op[1] not in memo]
            return memo[(level, r)]

        levels = range(self.d + 1) if k is None else [int(k)]
        tail: dict[State, bytes] = {}        # SOA(S o T): T is this batch's, never shared
        result: dict = {}
        for level in levels:
            for o, w in dist(level, N).items():
                if o == FAIL:
                    h = FAIL
                else:
                    h = tail.get(o[1])
                    if h is None:
                        h = tail[o[1]] = soa.hyp(soa.feed(o[1], xs[N:N + n], ys[N:N + n]))
                result[h] = result.get(h, 0.0) + w / len(levels)
        return result

    def _check_batch(self, xs: np.ndarray) -> None:
        if len(xs) < self.p.m:
            raise PrivauditError(f"G needs a batch of m = N + n = {self.p.m} examples, got {len(xs)}")


class SharedSuffix:
    """The laws of ``D~_level`` that `GlobalStableLearner.law` computed, for streams to come.

    A law keyed by (level, records left) depends only on the stream's last records, so a later
    stream may reuse every law whose records it ends with: BLM's M with a shared stream (B16)
    gives batch ``i`` the stream ``S_i[0:N]`` followed by batches ``i+1 .. k-1`` whole, which ends
    with batch ``i+1``'s stream from ``N`` on -- computed from the last batch back, each batch
    adds the laws of its own first ``N + m`` records only, instead of its whole stream. `align`
    keeps what the new stream's common suffix with the last one covers and drops the rest.
    """

    def __init__(self) -> None:
        self.memo: dict = {}
        self.feeds: dict = {}
        self._xs = np.empty(0, np.int64)
        self._ys = np.empty(0, np.int8)
        self._rule: tuple | None = None

    def align(self, xs: np.ndarray, ys: np.ndarray, rule: tuple = ()) -> None:
        """Make the laws held valid for the stream ``(xs, ys)`` read under ``rule`` (the SOA,
        chunk size n and pick rule of the G reading it: a law under another rule is another law,
        so a change of rule drops everything)."""
        if rule != self._rule:
            self.memo, self.feeds, self._rule = {}, {}, rule
            self._xs = np.empty(0, np.int64)
            self._ys = np.empty(0, np.int8)
        c = min(len(xs), len(self._xs))
        if c:
            same = (xs[len(xs) - c:] == self._xs[len(self._xs) - c:]) & \
                   (ys[len(ys) - c:] == self._ys[len(self._ys) - c:])
            bad = np.flatnonzero(~same)
            if bad.size:
                c -= int(bad[-1]) + 1
        if c < len(self._xs):
            # a law with r records left reads the stream's last r (a feed: r down to r - n)
            self.memo = {key: v for key, v in self.memo.items() if key[1] <= c}
            self.feeds = {key: v for key, v in self.feeds.items() if key[1] <= c}
        self._xs, self._ys = np.array(xs, copy=True), np.array(ys, copy=True)


__all__ = ["GlobalStableLearner", "GParams", "paper_params", "FAIL", "SharedSuffix"]
