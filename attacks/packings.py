"""Packing families for `audit.packing`: datasets with disjoint success regions of released models.

Each builder takes the learner (for its finite domain, `attacks.domain.learner_domain`: records
and queries must be points it accepts) and returns an `audit.packing.PackingFamily`. Datasets are
built deterministically from public parameters (a fixed public seed where randomness is needed),
never from anything the audit observes.

* ``lb5`` -- Chaudhuri & Hsu (COLT 2011) Theorem 5 (spec 4.1 / 7.5): thresholds on [0, 1],
  ``eta = 1/(6 + 4 e^{alpha M})``, ``K = floor(1/eta) - 1`` targets ``z = eta, 2 eta, .., K eta``,
  success region ``R_z`` = thresholds inside ``G_z = [z - eta/3, z + eta/3]`` (read on the
  released model at the two grid points bounding G_z, for every z). ``design="small-k"`` (the
  default; spec 7.5): ``S_z = {(z - eta/6, 0), (z + eta/6, 1)}``, two records, so any two datasets
  are 2 moves apart; ``design="paper"``: the proof's own datasets, ``m`` i.i.d. draws from ``P_z``
  (half uniform on [0, 1], half uniform on G_z; label ``1[x >= z]``), k_max <= m.
* ``lemma11`` -- Lemma 11 / Theorem 12 (spec 4.4): a fixed unlabeled X of m domain points, a
  hypothesis h0 of the learner's class, a greedy ``s``-packing P of the ball ``B_X(h0, 4 s)``
  (rho_X = fraction of X where two hypotheses disagree), datasets ``S_{X,h}`` = X labelled by h,
  regions ``B_X(h, s/2)``: label moves only (``k <= 8 s m``).
* ``sphere-packing`` -- Long's random packing of homogeneous separators (Lemma 25, spec 4.4):
  draw ``2^{n-1}`` directions uniformly from the cap ``{v : arccos(u.v)/pi <= r}``, drop one of
  every close pair (rho <= r/2), label a fixed X on the learner's domain (points of R^n) by each
  survivor; regions are Hamming balls on X that are disjoint by construction.
* `family_from_dict` -- the user's own family from a JSON object (datasets, queries, centres,
  radius); `FAMILIES` maps names to builders.

References
----------
K. Chaudhuri and D. Hsu, "Sample complexity bounds for differentially private learning", COLT
2011: Theorem 5, Lemma 11, Theorem 12, Lemma 25 (P. M. Long, "On the sample complexity of PAC
learning half-spaces against the uniform distribution", IEEE TNN 1995).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Callable

import numpy as np

from audit.errors import PrivauditError
from audit.interfaces import claim_of, name_of
from audit.packing import PackingFamily, min_separation
from audit.types import Dataset

from .domain import learner_domain

PUBLIC_SEED = 0x1AC5_0011          # fixed: family datasets must not depend on any audit's seed
MAX_K = 5_000
MIN_DRAWS = 64                     # Lemma 25 draws 2^{n-1} directions: only 2 in the plane


def _pad(datasets: list[Dataset], size: int | None, points: np.ndarray, family: str) -> list[Dataset]:
    """Every dataset grown to `size` records with the SAME public background (alternately the
    lowest domain point labelled 0 and the highest labelled 1, consistent with every threshold
    family here), so pairwise distances do not change: for learners that take a fixed n."""
    if size is None:
        return datasets
    n0 = max(S.n for S in datasets)
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < n0:
        raise PrivauditError(f"{family} size must be an integer >= {n0} (the family's own records), "
                             f"got {size!r}")
    extra = int(size) - n0
    if extra == 0 and all(S.n == n0 for S in datasets):
        return datasets
    lo, hi = points[0], points[-1]
    out = []
    for S in datasets:
        k = int(size) - S.n
        Xb = np.array([lo if i % 2 == 0 else hi for i in range(k)]).reshape(k, -1)
        yb = np.array([i % 2 for i in range(k)], dtype=np.int8)
        out.append(Dataset(np.vstack([S.X, Xb]), np.concatenate([S.y, yb])))
    return out


# ---------------------------------------------------------------------------------------------
# Theorem 5 (LB5)
# ---------------------------------------------------------------------------------------------
def lb5_eta(alpha: float, M: float) -> float:
    """``eta = 1 / (6 + 4 e^{alpha M})`` (Theorem 5)."""
    return 1.0 / (6.0 + 4.0 * math.exp(alpha * M))


def lb5_K(alpha: float, M: float) -> int:
    """``K = floor(1/eta) - 1`` distributions (Theorem 5; at least 9)."""
    return int(math.floor(1.0 / lb5_eta(alpha, M))) - 1


def _positive(name: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not v > 0 \
            or not math.isfinite(float(v)):
        raise PrivauditError(f"{name} must be a positive number, got {v!r}")
    return float(v)


def _domain(learner: Any, family: str):
    """The learner's finite domain, or a one-line refusal naming the family."""
    try:
        return learner_domain(learner)
    except PrivauditError:
        raise PrivauditError(f"{family} builds its datasets on the learner's domain, and "
                             f"{name_of(learner)!r} declares none: give it a `domain` attribute (a "
                             f"HypothesisClass or an (N, d) array of points), or pass your own "
                             f"family (a JSON file or module:attr)") from None


def _line_domain(learner: Any, family: str) -> np.ndarray:
    dom = _domain(learner, family)
    if dom.d != 1:
        raise PrivauditError(f"{family} is a family of thresholds on [0, 1]; {name_of(learner)} works "
                             f"in dimension {dom.d}")
    return dom.points[:, 0]


def _snap(P: np.ndarray, v: np.ndarray) -> np.ndarray:
    j = np.clip(np.searchsorted(P, v), 1, len(P) - 1)
    return np.where(np.abs(P[j - 1] - v) <= np.abs(P[j] - v), j - 1, j)


def lb5(learner: Any, *, alpha: float | None = None, M: float | None = None, design: str = "small-k",
        m: int | None = None, K: int | None = None, size: int | None = None) -> PackingFamily:
    """The Theorem 5 family on `learner`'s 1-D domain (see the module docstring).

    Parameters
    ----------
    alpha : float, optional
        The paper's privacy parameter in eta (default: the learner's claimed epsilon).
    M : float, optional
        The sample-size bound of Theorem 5 (default ``5 / alpha``: alpha M = 5, K = 598, the
        spec's example alpha = 0.1, M = 50).
    design : {"small-k", "paper"}
        Two records per dataset (spec 7.5), or m i.i.d. draws from P_z (the proof's datasets).
    m : int, optional
        Records per dataset for the paper design (default M).
    K : int, optional
        Use only the first K targets (default: all ``floor(1/eta) - 1``).
    size : int, optional
        Pad every dataset to this many records with one common public background (`_pad`), for
        learners that take a fixed n; distances are unchanged.
    """
    if alpha is None:
        c = claim_of(learner)
        if c is None or c.epsilon <= 0:
            raise PrivauditError("lb5 needs alpha (the learner declares no positive epsilon)")
        alpha = c.epsilon
    alpha = _positive("alpha", alpha)
    M = _positive("M", 5.0 / alpha if M is None else M)
    if design not in ("small-k", "paper"):
        raise PrivauditError(f"lb5 design must be 'small-k' or 'paper', got {design!r}")
    eta = lb5_eta(alpha, M)
    K_all = lb5_K(alpha, M)
    if K is not None:
        if isinstance(K, bool) or not isinstance(K, (int, np.integer)) or not 2 <= K <= K_all:
            raise PrivauditError(f"lb5 K must be an integer in [2, {K_all}], got {K!r}")
        K_all = int(K)
    if K_all > MAX_K:
        raise PrivauditError(f"lb5 with alpha*M = {alpha * M:g} has {K_all} distributions (more than "
                             f"{MAX_K}); lower M or pass K")
    P = np.unique(_line_domain(learner, "lb5"))
    z = eta * np.arange(1, K_all + 1)
    lo, hi = _snap(P, z - eta / 3), _snap(P, z + eta / 3)       # bound G_z on the grid
    a, b = _snap(P, z - eta / 6), _snap(P, z + eta / 6)         # the two records (small-k)
    ok = (lo < a) & (a < b) & (b <= hi) & np.concatenate([hi[:-1] < lo[1:], [True]])
    if not np.all(ok):
        need = int(math.ceil(6.0 / eta)) + 1
        raise PrivauditError(f"lb5 (alpha = {alpha:g}, M = {M:g}: eta = {eta:.4g}, K = {K_all}) needs "
                             f"grid spacing below eta/6; {name_of(learner)}'s domain has {len(P)} "
                             f"points: use a grid of at least {need} points (e.g. --param grid={need}) "
                             f"or smaller alpha*M")
    Q = np.column_stack([P[lo], P[hi]]).ravel()                  # c_1 < d_1 < c_2 < ...
    # R_z: thresholds in (P[lo], P[hi]]: 0 at every query <= P[lo], 1 at every query >= P[hi]
    centres = (Q[None, :] >= P[hi][:, None]).astype(np.int8)
    if design == "small-k":
        datasets = [Dataset(np.array([[P[a[j]]], [P[b[j]]]]), np.array([0, 1])) for j in range(K_all)]
        mm = 2
    else:
        mm = int(M) if m is None else m
        if isinstance(mm, bool) or not isinstance(mm, (int, np.integer)) or mm < 1:
            raise PrivauditError(f"lb5 m must be a positive integer, got {m!r}")
        rng = np.random.default_rng(PUBLIC_SEED)
        datasets = []
        for j in range(K_all):
            u = rng.random(mm)
            inside = rng.random(mm) < 0.5
            x = np.where(inside, z[j] - eta / 3 + (2 * eta / 3) * u, u)
            xi = P[_snap(P, x)]
            datasets.append(Dataset(xi.reshape(-1, 1), (xi >= z[j]).astype(np.int8)))
    datasets = _pad(datasets, size, P.reshape(-1, 1), "lb5")
    return PackingFamily(datasets, Q.reshape(-1, 1), centres, 0, name="lb5",
                         description=f"Chaudhuri & Hsu Theorem 5 ({design} design): thresholds, "
                                     f"{K_all} targets z = j*eta, regions G_z = [z - eta/3, z + eta/3]",
                         relation="replace-one",
                         params={"alpha": alpha, "M": M, "eta": eta, "K": K_all, "design": design,
                                 "m": mm, "size": datasets[0].n})


# ---------------------------------------------------------------------------------------------
# Lemma 11 / Theorem 12 (label packing)
# ---------------------------------------------------------------------------------------------
def _class_patterns(learner: Any, X_idx: np.ndarray, family: str) -> tuple[np.ndarray, np.ndarray]:
    dom = _domain(learner, family)
    H = dom.hypotheses
    if H is None or not hasattr(H, "matrix"):
        raise PrivauditError(f"{family} needs the learner's hypothesis class (a finite class with a "
                             f"prediction matrix); {name_of(learner)} declares none")
    idx = H.index(dom.points[X_idx])
    return dom.points, np.unique(np.asarray(H.matrix)[:, idx].astype(np.int8), axis=0)


def _greedy(patterns: np.ndarray, centre: np.ndarray, ball: int, sep: int) -> np.ndarray:
    """A greedy maximal packing (pairwise Hamming > sep) of the Hamming ball B(centre, ball)."""
    inside = patterns[np.count_nonzero(patterns != centre, axis=1) <= ball]
    # a deterministic public order: by distance from the centre, then lexicographically
    order = np.lexsort(inside.T[::-1])
    inside = inside[order]
    dist = np.count_nonzero(inside != centre, axis=1)
    inside = inside[np.argsort(dist, kind="stable")]
    chosen: list[np.ndarray] = []
    for row in inside:
        if not chosen or np.count_nonzero(np.asarray(chosen) != row, axis=1).min() > sep:
            chosen.append(row)
    return np.asarray(chosen, dtype=np.int8)


def _label_family(X: np.ndarray, P: np.ndarray, sep: int, name: str, description: str,
                  params: dict, size: int | None = None, points: np.ndarray | None = None) -> PackingFamily:
    if P.shape[0] < 2:
        raise PrivauditError(f"{name}: the packing has only {P.shape[0]} member(s); use a larger "
                             f"ball or a smaller s")
    radius = sep // 2                        # 2 radius <= sep < separation: disjoint balls
    datasets = [Dataset(X, row) for row in P]
    if size is not None:
        datasets = _pad(datasets, size, X if points is None else points, name)
    return PackingFamily(datasets, X, P, radius, name=name, description=description,
                         relation="label", params={**params, "packing_size": int(P.shape[0]),
                                                   "radius": radius})


def lemma11(learner: Any, *, m: int | None = None, s: float = 0.0625, ball: float = 4.0,
            h0: int | None = None, size: int | None = None) -> PackingFamily:
    """Lemma 11's family on `learner`'s class: X = m evenly spread domain points, an s-packing
    of ``B_X(h0, ball * s)`` (ball = 4 in the lemma), datasets ``S_{X,h}``, regions
    ``B_X(h, s/2)``.

    Parameters
    ----------
    m : int, optional
        Unlabeled points (the fixed X; default min(16, domain size)).
    s : float
        Packing scale in rho_X (fraction of X): members differ in more than ``s m`` points.
    ball : float
        Ball radius in units of s (4 in Lemma 11; Theorem 12 uses a 2 eps-packing of B(h0, 4 eps),
        i.e. ball = 2 with s = 2 eps).
    h0 : int, optional
        Row of the pattern list used as the centre (default: the middle pattern).
    size : int, optional
        Pad every dataset to this many records (one common background, labels fixed): for
        learners that take a fixed n.
    """
    dom = _domain(learner, "lemma11")
    m = min(16, dom.N) if m is None else m
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 2:
        raise PrivauditError(f"lemma11 m must be an integer >= 2, got {m!r}")
    s, ball = _positive("s", s), _positive("ball", ball)
    if m > dom.N:
        raise PrivauditError(f"lemma11 m = {m} exceeds the {dom.N} points of {name_of(learner)}'s domain")
    X_idx = np.unique(np.linspace(0, dom.N - 1, m).round().astype(int))
    points, pats = _class_patterns(learner, X_idx, "lemma11")
    sep = int(math.floor(s * len(X_idx)))
    c = pats[len(pats) // 2] if h0 is None else pats[int(h0) % len(pats)]
    P = _greedy(pats, c, int(math.floor(ball * s * len(X_idx))), sep)
    return _label_family(points[X_idx], P, sep, "lemma11",
                         "Chaudhuri & Hsu Lemma 11 / Theorem 12: s-packing of B_X(h0, 4s), "
                         "datasets S_{X,h}, regions B_X(h, s/2) (label moves only)",
                         {"m": int(len(X_idx)), "s": s, "ball": ball}, size, points)


# ---------------------------------------------------------------------------------------------
# Lemma 25 (Long's random packing of homogeneous separators)
# ---------------------------------------------------------------------------------------------
def long_packing(u: np.ndarray, r: float, rng: np.random.Generator, N: int | None = None) -> np.ndarray:
    """Long (1995) / Lemma 25: N = 2^{n-1} directions (at least `MIN_DRAWS`) uniform in the cap
    ``arccos(u.v)/pi <= r``, then one of every close pair (``arccos(v.w)/pi <= r/2``) removed.
    Returns (k, n) unit rows."""
    n = u.size
    N = max(2 ** (n - 1), MIN_DRAWS) if N is None else N
    theta_max = math.pi * r
    V = []
    while sum(len(v) for v in V) < N:                 # rejection from the sphere into the cap
        g = rng.standard_normal((4 * N + 16, n))
        g /= np.linalg.norm(g, axis=1, keepdims=True)
        V.append(g[np.arccos(np.clip(g @ u, -1, 1)) <= theta_max])
    V = np.vstack(V)[:N]
    keep = np.ones(N, dtype=bool)
    ang = np.arccos(np.clip(V @ V.T, -1, 1)) / math.pi
    for i in range(N):
        if keep[i]:
            close = (ang[i] <= r / 2) & keep
            close[: i + 1] = False
            keep[close] = False
    return V[keep]


def sphere_packing(learner: Any, *, m: int = 32, r: float = 0.25, N: int | None = None,
                   size: int | None = None) -> PackingFamily:
    """Lemma 25's family on `learner`'s domain in R^n (n = the domain's dimension, >= 2): a fixed
    X of m domain points (public seed), Long's packing of separators around a public u, datasets
    X labelled by ``1[w . x >= 0]``; the labellings are thinned so that the Hamming balls on X
    of the largest common radius are disjoint (Lemma 23's rho_X-vs-rho_D step done exactly)."""
    dom = _domain(learner, "sphere-packing")
    n = dom.d
    if n < 2:
        raise PrivauditError(f"sphere-packing needs a learner on R^n with n >= 2; {name_of(learner)} "
                             f"works in dimension 1 (use lb5 or lemma11)")
    r = _positive("r", r)
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 2 <= m <= dom.N:
        raise PrivauditError(f"sphere-packing m must be an integer in [2, {dom.N}], got {m!r}")
    rng = np.random.default_rng(PUBLIC_SEED)
    X = dom.points[np.sort(rng.choice(dom.N, size=m, replace=False))]
    u = rng.standard_normal(n)
    u /= np.linalg.norm(u)
    W = long_packing(u, r, rng, N)
    # distinct labellings of X by the survivors; Hamming balls of the largest common radius
    # that keeps them disjoint (Lemma 23's rho_X-vs-rho_D step, done exactly on this X)
    P = np.unique((X @ W.T >= 0).T.astype(np.int8), axis=0)
    if P.shape[0] < 2:
        raise PrivauditError("sphere-packing: every separator labels X the same way; raise m or r")
    return _label_family(X, P, min_separation(P) - 1, "sphere-packing",
                         "Chaudhuri & Hsu Lemma 25 (Long 1995): random packing of homogeneous "
                         "separators in a cap, datasets X labelled by each (label moves only)",
                         {"m": int(m), "r": r, "n": n, "drawn": int(max(2 ** (n - 1), MIN_DRAWS) if N is None else N),
                          "survivors": int(W.shape[0])}, size, dom.points)


# ---------------------------------------------------------------------------------------------
# the user's own family
# ---------------------------------------------------------------------------------------------
def family_from_dict(d: Any, name: str = "user") -> PackingFamily:
    """A family from JSON: ``{"datasets": [{"X", "y"}, ...], "queries": [[...], ...],
    "centres": [[0/1 per query], ...], "radius": 0, "name": "...", "relation": "..."}``."""
    if not isinstance(d, dict):
        raise PrivauditError("a packing family file must hold a JSON object")
    missing = [k for k in ("datasets", "queries", "centres") if k not in d]
    if missing:
        raise PrivauditError(f"packing family {name!r} lacks {', '.join(missing)}")
    unknown = sorted(set(d) - {"datasets", "queries", "centres", "radius", "name", "relation",
                               "description", "pivot"})
    if unknown:
        raise PrivauditError(f"packing family {name!r}: unknown keys {unknown}")
    return PackingFamily(d["datasets"], d["queries"], d["centres"], d.get("radius", 0),
                         name=str(d.get("name", name)), description=str(d.get("description", "")),
                         relation=str(d.get("relation", "replace-one")), pivot=d.get("pivot"))


FAMILIES: dict[str, Callable[..., PackingFamily]] = {
    "lb5": lb5,
    "lemma11": lemma11,
    "sphere-packing": sphere_packing,
}


def build_family(name: str, learner: Any, **params: Any) -> PackingFamily:
    """The shipped family `name` for `learner` (see `FAMILIES`); ``pivot=i`` (any family) names
    the dataset the bound goes through before any run (`audit.packing.PackingFamily`)."""
    if name not in FAMILIES:
        raise PrivauditError(f"unknown packing family {name!r}; valid: {', '.join(FAMILIES)} (or a "
                             f"JSON file / module:attr of your own)")
    pivot = params.pop("pivot", None)
    try:
        fam = FAMILIES[name](learner, **params)
    except TypeError as exc:
        raise PrivauditError(f"packing family {name!r}: {exc}") from None
    return fam if pivot is None else replace(fam, pivot=pivot)


__all__ = ["lb5", "lb5_eta", "lb5_K", "lemma11", "sphere_packing", "long_packing",
           "family_from_dict", "FAMILIES", "build_family", "PUBLIC_SEED"]
