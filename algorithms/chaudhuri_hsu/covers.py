"""Covers, reference distributions and the cover scale of Chaudhuri & Hsu (2011), on finite grids.

The learners of the paper release one hypothesis out of a finite candidate list ``G``. Here every
hypothesis class is a `HypothesisClass` (a prediction matrix over a finite domain grid, see
``algorithms/hypotheses.py``), and the candidate lists are sets of its rows:

* ``COVER-U`` (`cover_u`): a greedy maximal ``eps0``-packing of ``(H, rho_U)`` -- by Lemma 13
  (constructive form, spec 5.6) also an ``eps0``-cover -- where ``rho_U(h, h') = U{h != h'}`` for a
  public reference distribution ``U`` given as weights on the domain grid (`reference_weights`).
* ``COVER-X`` (`cover_x`): the same greedy packing under the empirical metric
  ``rho_X(h, h') = |{x in X : h(x) != h'(x)}| / |X|`` of the unlabeled sample (Figure 3, step 1).
  Rows are scanned in their fixed order, so each chosen row is the first member of its
  behaviour class on X: a representative chosen by a rule depending only on X (spec 3.3).
* ``KAPPA`` (`kappa_hat`): step 1 of Figures 1 and 2, solving eq. (4) (agnostic) or eq. (5)
  (realizable) for ``kappa_hat`` given the public sample size ``m``; ``eps0 = epsilon/(4 kappa_hat)``.

Only the public inputs (class, U, m, alpha, epsilon, delta, d_U, C) enter `cover_u` and `kappa_hat`;
that is the whole privacy argument of Theorem 7 (the cover is data-independent).

Classes: ``thr`` thresholds ``1[x >= x_t]`` on a grid of [0, 1] (Definition 4, d_U = 1), ``int``
intervals (extension of spec 5.3; doubling dimension infinite, so KAPPA uses the covering-number
form ``ln|G|``), ``sep2`` homogeneous linear separators ``1[w . x >= 0]`` of the plane, with ``w``
on a grid of directions and the domain a grid of points on the unit circle (Section 5.2 with
n = 2; d_U = 2 taken for the paper's O(n)).

References
----------
K. Chaudhuri and D. Hsu, "Sample complexity bounds for differentially private learning",
COLT 2011 (JMLR W&CP 19): Definitions 4 and 6, Lemma 13 (packings that are covers), Lemma 14
(packing size), Lemma 19 (covers of U vs D), Figures 1-3 (step 1: kappa_hat, step 2: the cover).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from audit.errors import PrivauditError

from ..common.hypotheses import HypothesisClass, make_class

CLASSES = ("thr", "int", "sep2")
REFERENCES = ("uniform", "left", "right")
D_U = {"thr": 1.0, "sep2": 2.0, "int": math.inf}


def circle_points(k: int) -> np.ndarray:
    """``k`` points on the unit circle at angles ``2 pi (j + 1/2) / k``: (k, 2) float64."""
    phi = 2.0 * math.pi * (np.arange(k) + 0.5) / k
    return np.column_stack([np.cos(phi), np.sin(phi)])


def separators2(grid: int = 64) -> HypothesisClass:
    """SEP2: ``h_w(x) = 1[w . x >= 0]`` for ``w`` at the ``grid`` angles ``2 pi j / grid`` and ``x``
    on `circle_points` (grid). The half-step offset keeps every ``w . x`` away from 0 when
    ``grid`` is a multiple of 4, so the tie rule of Section 5.2 never matters. VC 2 (in R^2)."""
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or not 4 <= grid <= 4096:
        raise PrivauditError(f"grid must be an integer in [4, 4096] for sep2, got {grid!r}")
    th = 2.0 * math.pi * np.arange(grid) / grid
    W = np.column_stack([np.cos(th), np.sin(th)])
    P = circle_points(int(grid))
    M = (W @ P.T >= 0).astype(np.int8)
    return HypothesisClass(M, P, "sep2", 2)


@lru_cache(maxsize=32)
def ch_class(cls: str, grid: int) -> HypothesisClass:
    """The hypothesis class ``cls`` (``thr``, ``int``, ``sep2``) on a grid of ``grid`` points."""
    if cls not in CLASSES:
        raise PrivauditError(f"unknown hypothesis class {cls!r} for the Chaudhuri-Hsu learners; "
                             f"valid: {', '.join(CLASSES)}")
    if cls == "sep2":
        return separators2(grid)
    if cls == "int" and not (isinstance(grid, (int, np.integer)) and 1 <= grid <= 200):
        raise PrivauditError(f"grid must be an integer in [1, 200] for intervals (|H| ~ grid^2/2), got {grid!r}")
    return make_class(cls, grid)


def reference_weights(H: HypothesisClass, reference: str = "uniform") -> np.ndarray:
    """The public reference distribution ``U`` as probabilities on the domain grid, (N,) float64.

    ``uniform``: equal mass on every grid point (for ``sep2``: uniform on the circle grid);
    ``left`` / ``right``: linear densities ``2(1 - u)`` / ``2u`` in the grid rank ``u`` (public
    choices that are kappa-smooth for D only up to large kappa; they exist to show that privacy
    never depends on the choice of U, spec FP-2).
    """
    if reference not in REFERENCES:
        raise PrivauditError(f"unknown reference distribution {reference!r}; valid: {', '.join(REFERENCES)}")
    N = H.N
    u = (np.arange(N) + 0.5) / N
    w = {"uniform": np.ones(N), "left": 2.0 * (1.0 - u), "right": 2.0 * u}[reference]
    return w / w.sum()


def disagreement(M: np.ndarray, w: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``rho_w(h, g) = sum_j w_j 1[h(x_j) != g(x_j)]`` for every row h of M and every g in rows:
    (|H|, len(rows)) float64."""
    Mf = M.astype(np.float64)
    a = Mf @ w
    G = Mf[rows]
    return a[:, None] + a[rows][None, :] - 2.0 * (Mf * w) @ G.T


def greedy_packing(M: np.ndarray, w: np.ndarray, r: float, order: np.ndarray | None = None,
                   limit: int | None = None) -> np.ndarray | None:
    """A maximal ``r``-packing of the rows of ``M`` under ``rho_w`` (spec 5.6, Lemma 13).

    Rows are scanned in ``order`` (default: row order); a row joins when its distance to every
    row already chosen is ``> r``. Maximality makes the packing an ``r``-cover of the rows.

    Parameters
    ----------
    M : (|H|, N) 0/1 matrix
    w : (N,) nonnegative weights (a probability vector: U, or the empirical X)
    r : float
        Scale (strict inequality: ``rho > r`` for distinct members).
    order : int array, optional
        Public scanning order of the rows.
    limit : int, optional
        Stop and return None as soon as the packing would exceed ``limit`` rows.

    Returns
    -------
    int64 array of the chosen row indices, in the order chosen (or None past ``limit``).
    """
    nrows = M.shape[0]
    order = np.arange(nrows) if order is None else np.asarray(order, dtype=np.int64)
    keep = np.flatnonzero(w > 0)
    Mf = M[:, keep].astype(np.float64)
    wk = w[keep].astype(np.float64)
    a = Mf @ wk
    Mw = Mf * wk
    mind = np.full(nrows, np.inf)
    chosen: list[int] = []
    pos = 0
    tol = 1e-12                                   # rho is a sum of weights: guard float noise
    while True:
        cand = mind[order[pos:]] > r + tol
        if not cand.any():
            break
        pos += int(np.argmax(cand))
        g = int(order[pos])
        chosen.append(g)
        if limit is not None and len(chosen) > limit:
            return None
        d = a + a[g] - 2.0 * (Mw @ Mf[g])
        np.minimum(mind, d, out=mind)
        pos += 1
        if pos >= order.size:
            break
    return np.asarray(chosen, dtype=np.int64)


def cover_u(H: HypothesisClass, reference: str, eps0: float, max_cover: int = 5000,
            offset: int = 0) -> tuple[np.ndarray, float]:
    """COVER-U: an ``eps0``-packing of ``(H, rho_U)`` that is an ``eps0``-cover (Lemma 13).

    When the packing would have more than ``max_cover`` rows, ``eps0`` is raised by factors of
    1.25 until it fits (spec 3.1: a public cap on the cover size; privacy is unaffected).
    ``offset`` rotates the public scanning order (used by negative control FP-5, covers drawn
    fresh from public randomness).

    Returns
    -------
    (rows, eps0 actually used)
    """
    if not (eps0 > 0 and math.isfinite(eps0)):
        raise PrivauditError(f"cover scale eps0 must be finite and > 0, got {eps0}")
    w = reference_weights(H, reference)
    order = np.roll(np.arange(H.size), -int(offset))
    r = float(eps0)
    for _ in range(200):
        G = greedy_packing(H.matrix, w, r, order, limit=max_cover)
        if G is not None:
            return np.sort(G), r
        r *= 1.25
    raise PrivauditError(f"no cover of at most {max_cover} rows found")  # pragma: no cover


def x_weights(H: HypothesisClass, X: np.ndarray) -> np.ndarray:
    """The empirical distribution of the unlabeled sample X on the domain grid, (N,)."""
    idx = H.index(X)
    return np.bincount(idx, minlength=H.N).astype(np.float64) / max(idx.size, 1)


def cover_x(H: HypothesisClass, w: np.ndarray, scale: float) -> np.ndarray:
    """COVER-X (Figure 3, step 1): a greedy ``scale``-packing of ``(H, rho_X)``, sorted rows.

    ``w`` is `x_weights` of X (or, for planted bugs, any other data-derived weights)."""
    G = greedy_packing(H.matrix, w, float(scale))
    return np.sort(G)


def _ln(v: float) -> float:
    return math.log(v)


def kappa_hat(m: int, alpha: float, epsilon: float, delta: float, d_u: float, C: float = 1.0,
              realizable: bool = False, clip: bool = True) -> tuple[float, float]:
    """KAPPA: ``kappa_hat`` and ``eps0 = epsilon / (4 kappa_hat)`` from the public size ``m``.

    Agnostic (Figure 1, eq. (4)): ``m = C (1/(alpha eps) + 1/eps^2)(d_U ln(kappa/eps) + ln(1/delta))``;
    realizable (Figure 2, eq. (5)): ``m = C (1/(alpha eps))(d_U ln(kappa/eps) + ln(1/delta))``.
    Solved in log space (kappa_hat is exponential in m) and, with ``clip`` (the default, used by
    the learners), clipped to ``kappa_hat >= 1`` (Definition 6), so ``eps0 <= epsilon / 4``;
    ``clip=False`` gives the raw formula (the spec's reference numbers).

    Returns
    -------
    (kappa_hat, eps0); kappa_hat may be ``inf`` for large m (then eps0 = 0 and the cover cap
    decides the cover).
    """
    if not (math.isfinite(d_u) and d_u > 0):
        raise PrivauditError(f"d_U must be finite and > 0 for the doubling-dimension form of KAPPA, got {d_u}")
    f = C / (alpha * epsilon) if realizable else C * (1.0 / (alpha * epsilon) + 1.0 / epsilon ** 2)
    ln_kh = _ln(epsilon) + (m / f - _ln(1.0 / delta)) / d_u
    if clip:
        ln_kh = max(ln_kh, 0.0)
    kh = math.exp(ln_kh) if ln_kh < 700 else math.inf
    eps0 = 0.25 * epsilon * math.exp(-ln_kh)
    return kh, eps0


def eps0_covering(H: HypothesisClass, reference: str, m: int, alpha: float, epsilon: float,
                  delta: float, C: float = 1.0, realizable: bool = False,
                  max_cover: int = 5000) -> float:
    """Covering-number form of KAPPA (spec 3.1 / errata 14, for d_U = inf, e.g. intervals):
    the smallest ``eps0`` on the public ladder ``epsilon/4 * 2^-k`` whose cover ``G`` satisfies
    ``m >= f (ln|G| + ln(1/delta))``; ``epsilon/4`` when none does."""
    f = C / (alpha * epsilon) if realizable else C * (1.0 / (alpha * epsilon) + 1.0 / epsilon ** 2)
    best = epsilon / 4.0
    r = epsilon / 4.0
    for _ in range(40):
        G, used = cover_u(H, reference, r, max_cover)
        if used > r or f * (_ln(len(G)) + _ln(1.0 / delta)) > m:
            break
        best = r
        r /= 2.0
    return best


__all__ = ["CLASSES", "REFERENCES", "D_U", "circle_points", "separators2", "ch_class",
           "reference_weights", "disagreement", "greedy_packing", "cover_u", "x_weights", "cover_x",
           "kappa_hat", "eps0_covering"]
