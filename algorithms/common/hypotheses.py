"""Hypothesis classes as prediction matrices over a finite domain (Dagan & Feldman, Sec. 2.1).

A `HypothesisClass` holds

* ``matrix`` -- int8 array of shape ``(|H|, N)``: ``matrix[h, j] = h(domain[j])``; rows are in a
  fixed order, and that order is what "first index" means below;
* ``domain`` -- float64 array of shape ``(N, d)``: the finite domain ``X``.

A record or query ``x`` is mapped to its domain index with `index` (a `PrivauditError` when ``x`` is
not a domain point, up to a relative tolerance of 1e-9 per coordinate).

API (all vectorised numpy)::

    H = thresholds(grid=64)                 # or make_class("thr", 64); see CONSTRUCTORS
    idx = H.index(data.X)                   # (n,) domain indices of the records
    err = H.errors(data)                    # (|H|,) err_S(h) for every h, once per dataset
    H.erm(data), H.consistent(data)         # row indices (first index breaks ties)
    H.predict(h, X)                         # labels of row(s) h at points X
    H.patterns(T_idx)                       # DF-HT: first-index representative rows of H_T
    H.rep_mask(hit)                         # the same, vectorised over runs: hit (r, N) bool
    H.vc_dim, H.growth(m)                   # VC dimension, growth function tau_m(H)

Canonical representatives (spec R-HT-1/R-HT-2): the representative of each pattern class on ``T``
is the class member with the smallest row index. It depends only on ``(H, set of x in T)``,
never on labels, the rest of ``S`` or the query, which the stability proof of Lemma 7 needs.

Constructors (`CONSTRUCTORS`, by short name for `make_class`): ``thr`` thresholds, ``thr2`` signed
stumps, ``int`` intervals (empty first), ``point`` point functions (all-zero first), ``allfun``
all ``2^d`` functions on ``d`` points, ``rect2`` axis-aligned rectangles on a ``G x G`` grid (empty
first), ``half2`` halfspaces on a ``G x G`` grid, and `from_matrix` for any finite class.

References
----------
Y. Dagan and V. Feldman, "PAC learning with stable and private predictions", COLT 2020,
Section 2.1 (the class ``H_T``, growth function, Sauer-Shelah lemma).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

import numpy as np

from audit import validate
from audit.errors import PrivauditError
from audit.types import Dataset

_HASH_SEED = 0x5EED_DF20  # fixed: pattern hashes must not depend on any run's randomness


@dataclass(frozen=True, eq=False)
class HypothesisClass:
    """A finite hypothesis class ``H`` as a prediction matrix over a finite domain.

    Parameters
    ----------
    matrix : ndarray, shape (|H|, N), int8
        ``matrix[h, j] = h(domain[j])`` in {0, 1}; rows in a fixed order.
    domain : ndarray, shape (N, d), float64
        Distinct domain points.
    name : str
        Short name (``"thr"``, ...), shown in reports.
    vc : int or None
        VC dimension if known (computed by brute force otherwise, small classes only).
    growth_fn : callable or None
        Exact growth function ``m -> tau_m(H)`` if known in closed form.
    """

    matrix: np.ndarray
    domain: np.ndarray
    name: str = "finite"
    vc: int | None = None
    growth_fn: Callable[[int], int] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        M = np.asarray(self.matrix)
        if M.ndim != 2 or M.shape[0] < 1 or M.shape[1] < 1:
            raise PrivauditError(f"hypothesis matrix must have shape (|H|, N) with |H|, N >= 1; got {M.shape}")
        if not np.all((M == 0) | (M == 1)):
            raise PrivauditError("hypothesis matrix entries must be 0 or 1")
        D = np.asarray(self.domain, dtype=np.float64)
        if D.ndim == 1:
            D = D.reshape(-1, 1)
        if D.ndim != 2 or D.shape[0] != M.shape[1]:
            raise PrivauditError(f"domain must have shape (N, d) with N = {M.shape[1]} columns of the "
                                 f"matrix; got {D.shape}")
        if not np.all(np.isfinite(D)):
            raise PrivauditError("domain points must be finite")
        if np.unique(D, axis=0).shape[0] != D.shape[0]:
            raise PrivauditError("domain points must be distinct")
        M = M.astype(np.int8)
        M.setflags(write=False)
        D.setflags(write=False)
        object.__setattr__(self, "matrix", M)
        object.__setattr__(self, "domain", D)

    # -- sizes ---------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        """``|H|``."""
        return int(self.matrix.shape[0])

    @property
    def N(self) -> int:
        """Number of domain points."""
        return int(self.matrix.shape[1])

    @property
    def d(self) -> int:
        """Feature dimension of the domain points."""
        return int(self.domain.shape[1])

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"HypothesisClass({self.name}, |H|={self.size}, N={self.N}, d={self.d})"

    # -- domain lookup ---------------------------------------------------------------------------
    @cached_property
    def _lookup(self) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, tuple[int, ...]]:
        coords = [np.unique(self.domain[:, k]) for k in range(self.d)]
        sub = np.stack([np.searchsorted(coords[k], self.domain[:, k]) for k in range(self.d)])
        radix = tuple(len(c) for c in coords)
        keys = np.ravel_multi_index(tuple(sub), radix)
        order = np.argsort(keys)
        return coords, keys[order], order, radix

    def index(self, X: Any) -> np.ndarray:
        """Domain indices of points ``X`` (shape (n, d) or (n,) when d = 1).

        Raises
        ------
        PrivauditError
            If a point is not (within relative tolerance 1e-9) a domain point.
        """
        arr = np.asarray(X, dtype=np.float64)
        if arr.ndim == 1 and self.d == 1:
            arr = arr.reshape(-1, 1)
        if arr.ndim == 1 and arr.shape[0] == self.d:
            arr = arr.reshape(1, -1)
        if arr.ndim != 2 or arr.shape[1] != self.d:
            raise PrivauditError(f"points must have shape (n, {self.d}) for class {self.name}; got {arr.shape}")
        coords, skeys, order, radix = self._lookup
        sub = []
        ok = np.ones(arr.shape[0], dtype=bool)
        for k, c in enumerate(coords):
            v = arr[:, k]
            j = np.clip(np.searchsorted(c, v), 1, max(len(c) - 1, 1)) if len(c) > 1 else np.zeros(len(v), int)
            if len(c) > 1:
                j = np.where(np.abs(c[j - 1] - v) <= np.abs(c[j] - v), j - 1, j)
            ok &= np.abs(c[j] - v) <= 1e-9 * np.maximum(1.0, np.abs(v))
            sub.append(j)
        keys = np.ravel_multi_index(tuple(sub), radix) if arr.shape[0] else np.zeros(0, int)
        pos = np.clip(np.searchsorted(skeys, keys), 0, len(skeys) - 1)
        ok &= skeys[pos] == keys
        if not np.all(ok):
            bad = arr[~ok][0]
            raise PrivauditError(f"point {bad.tolist()} is not on the domain grid of hypothesis class "
                                 f"{self.name} (N={self.N} points, e.g. {self.domain[0].tolist()} .. "
                                 f"{self.domain[-1].tolist()})")
        return order[pos].astype(np.int64)

    # -- empirical error, ERM -------------------------------------------------------------------
    @cached_property
    def _Mf(self) -> np.ndarray:
        return self.matrix.astype(np.float64)

    def label_counts(self, data: Dataset) -> tuple[np.ndarray, np.ndarray]:
        """Per domain point, the number of records labelled 0 and labelled 1: two (N,) arrays."""
        idx = self.index(data.X)
        c0 = np.bincount(idx[data.y == 0], minlength=self.N)
        c1 = np.bincount(idx[data.y == 1], minlength=self.N)
        return c0, c1

    def errors_from_counts(self, c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
        """``err(h) = sum_j [h(j)=1] c0_j + [h(j)=0] c1_j`` for counts of shape (N,) or (r, N)."""
        c0 = np.asarray(c0, dtype=np.float64)
        c1 = np.asarray(c1, dtype=np.float64)
        err = (c0 - c1) @ self._Mf.T + c1.sum(axis=-1, keepdims=c1.ndim > 1)
        return np.rint(err).astype(np.int64)

    def errors(self, data: Dataset) -> np.ndarray:
        """``err_S(h)`` (a count) for every row h: int64 array (|H|,)."""
        return self.errors_from_counts(*self.label_counts(data))

    def erm(self, data: Dataset) -> int:
        """Agnostic ERM: the first row with minimum ``err_S``."""
        return int(np.argmin(self.errors(data)))

    def consistent(self, data: Dataset) -> int:
        """Realizable learner: the first row with ``err_S = 0``, else `erm`."""
        err = self.errors(data)
        zero = np.flatnonzero(err == 0)
        return int(zero[0]) if zero.size else int(np.argmin(err))

    def predict(self, h: Any, X: Any) -> np.ndarray:
        """Labels of row(s) ``h`` (int or (k,)) at points ``X``: int8 (len X,) or (k, len X)."""
        h = np.asarray(h)
        if np.any((h < 0) | (h >= self.size)):
            raise PrivauditError(f"hypothesis index out of range for |H| = {self.size}")
        return self.matrix[np.ix_(np.atleast_1d(h), self.index(X))][0 if h.ndim == 0 else slice(None)]

    # -- DF-HT: patterns and canonical representatives --------------------------------------------
    def patterns(self, T_idx: Any) -> np.ndarray:
        """DF-HT for one subsample: the representative rows of ``H_T`` (sorted).

        Parameters
        ----------
        T_idx : array_like of int
            Domain indices of the subsample's points (duplicates and order are irrelevant).

        Returns
        -------
        int64 array: for every pattern class of ``H`` on ``set(T_idx)``, its first row index.
        """
        U = np.unique(np.asarray(T_idx, dtype=np.int64))
        if U.size and (U[0] < 0 or U[-1] >= self.N):
            raise PrivauditError(f"domain index out of range for N = {self.N}")
        if U.size == 0:
            return np.zeros(1, dtype=np.int64)
        _, first = np.unique(self.matrix[:, U], axis=0, return_index=True)
        return np.sort(first).astype(np.int64)

    @cached_property
    def _hash_weights(self) -> np.ndarray:
        w = np.random.default_rng(_HASH_SEED).integers(1, 2**63, size=self.N, dtype=np.uint64)
        return self.matrix.T.astype(np.uint64) * w[:, None]          # (N, |H|)

    def pattern_hash(self, hit: np.ndarray) -> np.ndarray:
        """64-bit hash of each row's pattern on each run's hit set: (r, |H|) uint64.

        Equal patterns give equal hashes; different patterns collide with probability about
        2^-63 per pair (fixed random 64-bit weight per domain point, wrapping sum).
        """
        with np.errstate(over="ignore"):
            return np.asarray(hit, dtype=np.uint64) @ self._hash_weights

    @cached_property
    def witness(self) -> np.ndarray | None:
        """Single-point witnesses: ``w[h] = j`` iff "h is a representative" <=> "j in T".

        ``w[h] = -1``: h is always a representative (h = 0); ``-2``: never (duplicate row).
        None when some row has no single witness (then `rep_mask` hashes patterns). THR and POINT
        have witnesses (``h_t`` is a representative iff ``t - 1 in T``), which makes DF-HT one
        gather per run.
        """
        H, N = self.size, self.N
        if H * H * N > 6e7:
            return None
        M = self.matrix.astype(bool)
        w = np.full(H, -1, dtype=np.int64)
        for h in range(1, H):
            D = M[:h] != M[h]                       # (h, N): where earlier rows differ from h
            sizes = D.sum(1)
            if np.any(sizes == 0):
                w[h] = -2
                continue
            all_differ = np.flatnonzero(D.all(0))   # T containing j separates h from every g < h
            singles = np.flatnonzero(sizes == 1)
            cand = np.intersect1d(all_differ, np.flatnonzero(D[singles].any(0)))
            if cand.size != 1:
                return None
            w[h] = cand[0]
        return w

    def rep_mask(self, hit: np.ndarray, rule: str = "first") -> np.ndarray:
        """Representatives of ``H_T`` for many runs at once.

        Parameters
        ----------
        hit : bool array (r, N)
            ``hit[k, j]``: domain point j is in run k's subsample T.
        rule : {"first", "last"}
            Canonical member of each pattern class: smallest ("first", the project's default) or
            largest ("last", negative control NC-6) row index.

        Returns
        -------
        bool array (r, |H|): row h is its pattern class's representative in run k.
        """
        hit = np.asarray(hit, dtype=bool)
        if rule == "first" and self.witness is not None:
            w = self.witness
            out = hit[:, np.maximum(w, 0)]
            out[:, w == -1] = True
            out[:, w == -2] = False
            return out
        hashes = self.pattern_hash(hit)
        if rule == "last":
            hashes = hashes[:, ::-1]
        elif rule != "first":
            raise PrivauditError(f"unknown representative rule {rule!r}; valid: first, last")
        order = np.argsort(hashes, axis=1, kind="stable")
        sh = np.take_along_axis(hashes, order, axis=1)
        first = np.ones(sh.shape, dtype=bool)
        first[:, 1:] = sh[:, 1:] != sh[:, :-1]
        out = np.zeros(sh.shape, dtype=bool)
        np.put_along_axis(out, order, first, axis=1)
        return out[:, ::-1] if rule == "last" else out

    def class_ids(self, hit: np.ndarray) -> np.ndarray:
        """Pattern-class label of every row in every run, (r, |H|) int64 (labels are row indices
        of the class's first member, so equal labels <=> equal patterns on T)."""
        hashes = self.pattern_hash(np.asarray(hit, dtype=bool))
        order = np.argsort(hashes, axis=1, kind="stable")
        sh = np.take_along_axis(hashes, order, axis=1)
        new = np.ones(sh.shape, dtype=bool)
        new[:, 1:] = sh[:, 1:] != sh[:, :-1]
        # the first member of each group (stable sort) is the minimum row index of that class
        leader = np.maximum.accumulate(np.where(new, np.arange(sh.shape[1]), 0), axis=1)
        first_row = np.take_along_axis(order, leader, axis=1)
        out = np.empty_like(first_row)
        np.put_along_axis(out, order, first_row, axis=1)
        return out

    # -- combinatorics ---------------------------------------------------------------------------
    @cached_property
    def vc_dim(self) -> int:
        """VC dimension (known in closed form for the presets; brute force otherwise)."""
        if self.vc is not None:
            return int(self.vc)
        M = np.unique(self.matrix, axis=0)
        best = 0
        for k in range(1, min(self.N, int(math.log2(M.shape[0])) if M.shape[0] > 1 else 0) + 1):
            if math.comb(self.N, k) > 200_000:
                raise PrivauditError(f"VC dimension of {self.name} too costly to brute-force (N={self.N})")
            if any(np.unique(M[:, list(c)], axis=0).shape[0] == 2**k
                   for c in itertools.combinations(range(self.N), k)):
                best = k
            else:
                break
        return best

    def growth(self, m: int) -> int:
        """Growth function ``tau_m(H) = max_{|A| = m} |H_A|`` over the domain.

        Exact for the presets and for small domains (brute force); otherwise the Sauer-Shelah
        upper bound ``min(|H|, sum_{i <= d} C(m, i))`` (Lemma 2), which is what parameter setting
        needs anyway.
        """
        m = int(m)
        if m < 0:
            raise PrivauditError(f"growth function needs m >= 0, got {m}")
        m = min(m, self.N)
        if self.growth_fn is not None:
            return int(min(self.growth_fn(m), self.size))
        if math.comb(self.N, m) <= 20_000:
            return max(np.unique(self.matrix[:, list(c)], axis=0).shape[0]
                       for c in itertools.combinations(range(self.N), m)) if m else 1
        return int(min(self.size, sum(math.comb(m, i) for i in range(self.vc_dim + 1))))


# -- constructors -----------------------------------------------------------------------------------
def _check_grid(grid: int, lo: int = 1, hi: int = 100_000, what: str = "grid") -> int:
    return validate.integer(what, grid, lo=lo, hi=hi)


def _line(grid: int, lo: float, hi: float) -> np.ndarray:
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise PrivauditError(f"domain bounds must satisfy lo < hi, got lo={lo}, hi={hi}")
    return np.linspace(lo, hi, grid) if grid > 1 else np.array([lo], dtype=np.float64)


def thresholds(grid: int = 64, lo: float = 0.0, hi: float = 1.0) -> HypothesisClass:
    """THR: ``h_t(x) = 1[x >= x_t]``, ``t = 0..N`` (row t; row N is all-zero). VC 1, tau_m = m + 1."""
    N = _check_grid(grid)
    M = (np.arange(N)[None, :] >= np.arange(N + 1)[:, None]).astype(np.int8)
    return HypothesisClass(M, _line(N, lo, hi), "thr", 1, lambda m: m + 1)


def signed_stumps(grid: int = 64, lo: float = 0.0, hi: float = 1.0) -> HypothesisClass:
    """THR2: ``1[x >= x_t]`` (rows first) then ``1[x < x_t]``, duplicate rows removed (first kept).

    VC 2, tau_m = 2m (m >= 1)."""
    N = _check_grid(grid)
    up = (np.arange(N)[None, :] >= np.arange(N + 1)[:, None]).astype(np.int8)
    M = np.vstack([up, 1 - up])
    _, first = np.unique(M, axis=0, return_index=True)
    return HypothesisClass(M[np.sort(first)], _line(N, lo, hi), "thr2", 2 if N >= 2 else 1,
                           lambda m: max(2 * m, 1) if N >= 2 else m + 1)


def intervals(grid: int = 64, lo: float = 0.0, hi: float = 1.0) -> HypothesisClass:
    """INT: the empty interval (row 0), then ``1[x_a <= x <= x_b]`` for ``a <= b`` in lexicographic
    order. VC 2, tau_m = 1 + m + C(m, 2)."""
    N = _check_grid(grid, hi=2000)
    a, b = np.triu_indices(N)
    j = np.arange(N)
    M = ((j[None, :] >= a[:, None]) & (j[None, :] <= b[:, None])).astype(np.int8)
    M = np.vstack([np.zeros((1, N), np.int8), M])
    return HypothesisClass(M, _line(N, lo, hi), "int", 2 if N >= 2 else 1,
                           lambda m: 1 + m + math.comb(m, 2))


def points(grid: int = 64, lo: float = 0.0, hi: float = 1.0) -> HypothesisClass:
    """POINT: the all-zero function (row 0), then ``1[x = x_j]`` (row j + 1). VC 1, tau_m = m + 1."""
    N = _check_grid(grid)
    M = np.vstack([np.zeros((1, N), np.int8), np.eye(N, dtype=np.int8)])
    return HypothesisClass(M, _line(N, lo, hi), "point", 1, lambda m: m + 1)


def allfun(d: int = 4) -> HypothesisClass:
    """ALLFUN_d: all ``2^d`` functions on the points ``0, 1, .., d-1`` (row i: the bits of i, point
    k gets bit k). VC d; the class of Theorem 4's lower-bound construction."""
    d = _check_grid(d, 1, 14, "d")
    i = np.arange(2**d)
    M = ((i[:, None] >> np.arange(d)[None, :]) & 1).astype(np.int8)
    return HypothesisClass(M, np.arange(d, dtype=np.float64), "allfun", d, lambda m: 2 ** min(m, d))


def _grid2(G: int) -> np.ndarray:
    g = _line(G, 0.0, 1.0)
    xx, yy = np.meshgrid(g, g, indexing="ij")
    return np.column_stack([xx.ravel(), yy.ravel()])     # point (i, j) has index i * G + j


def rectangles(grid: int = 6) -> HypothesisClass:
    """RECT2: the empty rectangle (row 0), then ``[a1, b1] x [a2, b2]`` on a ``G x G`` grid of
    [0, 1]^2 (lexicographic in ``(a1, b1, a2, b2)``). VC 4."""
    G = _check_grid(grid, 1, 12, "grid (G)")
    a, b = np.triu_indices(G)
    j = np.arange(G)
    one = (j[None, :] >= a[:, None]) & (j[None, :] <= b[:, None])          # (R, G) 1-D intervals
    M = (one[:, None, :, None] & one[None, :, None, :]).reshape(len(a) ** 2, G * G)
    M = np.vstack([np.zeros((1, G * G), bool), M]).astype(np.int8)
    return HypothesisClass(M, _grid2(G), "rect2", min(4, G * G) if G >= 2 else 1)


def halfspaces(grid: int = 5) -> HypothesisClass:
    """HALF2: every dichotomy of a ``G x G`` grid of [0, 1]^2 cut out by a halfplane
    ``1[<w, x> >= b]``, including all-zero and all-one; rows sorted lexicographically by pattern
    (all-zero first). VC 3.

    The dichotomies are enumerated exactly: between consecutive critical directions (normals of
    lines through two points) the order of the projections is constant, so one direction per
    arc and every prefix cut of the sorted projections gives every halfplane dichotomy.
    """
    G = _check_grid(grid, 1, 9, "grid (G)")
    P = _grid2(G)
    n = len(P)
    i, j = np.triu_indices(n, 1)
    d = P[j] - P[i]
    crit = np.mod(np.arctan2(d[:, 1], d[:, 0]) + np.pi / 2, np.pi)
    crit = np.unique(np.round(np.concatenate([crit, crit + np.pi, [0.0]]), 12))
    mids = (crit + np.roll(crit, -1) + np.where(np.arange(len(crit)) == len(crit) - 1, 2 * np.pi, 0)) / 2
    pats = [np.zeros((1, n), np.int8), np.ones((1, n), np.int8)]
    for th in mids:
        proj = P @ np.array([math.cos(th), math.sin(th)])
        order = np.argsort(proj)
        ranks = np.empty(n, np.int64)
        ranks[order] = np.arange(n)
        pats.append((ranks[None, :] >= np.arange(1, n)[:, None]).astype(np.int8))
    M = np.unique(np.vstack(pats), axis=0)
    return HypothesisClass(M, P, "half2", min(3, n) if G >= 2 else 1)


def from_matrix(matrix: Any, domain: Any = None, name: str = "finite") -> HypothesisClass:
    """A finite class from any 0/1 matrix; the default domain is ``0, 1, .., N-1`` (1-D)."""
    M = np.asarray(matrix)
    if M.ndim != 2:
        raise PrivauditError(f"hypothesis matrix must be 2-D (|H|, N); got shape {M.shape}")
    D = np.arange(M.shape[1], dtype=np.float64) if domain is None else domain
    return HypothesisClass(M, D, name)


CONSTRUCTORS: dict[str, Callable[[int], HypothesisClass]] = {
    "thr": thresholds, "thr2": signed_stumps, "int": intervals, "point": points,
    "allfun": allfun, "rect2": rectangles, "half2": halfspaces,
}

_CACHE: dict[tuple[str, int], HypothesisClass] = {}


def make_class(cls: str = "thr", grid: int = 64) -> HypothesisClass:
    """The preset class ``cls`` (see `CONSTRUCTORS`) of size parameter ``grid`` (cached).

    ``grid`` is N for the 1-D classes, d for ``allfun`` and G for ``rect2``/``half2``.
    """
    if cls not in CONSTRUCTORS:
        raise PrivauditError(f"unknown hypothesis class {cls!r}; valid: {', '.join(CONSTRUCTORS)}")
    key = (cls, int(grid) if isinstance(grid, (int, np.integer)) else grid)
    if key not in _CACHE:
        _CACHE[key] = CONSTRUCTORS[cls](grid)
    return _CACHE[key]


__all__ = ["HypothesisClass", "thresholds", "signed_stumps", "intervals", "points", "allfun",
           "rectangles", "halfspaces", "from_matrix", "make_class", "CONSTRUCTORS"]
