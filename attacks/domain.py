"""Where records and query points may be placed: a learner's finite domain.

The search only moves records and queries between *locations*: the domain points of the
learner's hypothesis class (Dagan & Feldman, Sec. 2.1: a finite class is a prediction matrix over
a finite domain), or, for a user's black box audited on its own data, the data's x-values plus
points between them (where gaps and class boundaries are).

Resolution order in `learner_domain`: ``learner.domain`` (a `HypothesisClass` or an (N, d) array),
then a `HypothesisClass` kept in one of the attributes ``hypotheses``, ``H``, ``hclass``,
``hypothesis_class``, ``cls``; then the data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from audit.errors import PrivauditError
from audit.interfaces import (
    CLASS_ATTRIBUTES,
    declared_domain,
    is_hypothesis_class,
    name_of,
)
from audit.types import Dataset

_is_class = is_hypothesis_class


@dataclass(frozen=True, eq=False)
class Domain:
    """A finite set of locations (N, d), sorted lexicographically, with an optional class.

    Parameters
    ----------
    points : ndarray (N, d)
        Distinct locations.
    hypotheses : HypothesisClass or None
        The learner's class, when known: its rows label realizable backgrounds.
    source : str
        Where the locations came from (recorded in the search result).
    """

    points: np.ndarray
    hypotheses: Any = None
    source: str = "given"
    _sorted: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        P = np.asarray(self.points, dtype=np.float64)
        if P.ndim == 1:
            P = P.reshape(-1, 1)
        if P.ndim != 2 or P.shape[0] < 2:
            raise PrivauditError(f"a search domain needs at least 2 points of shape (N, d); got {P.shape}")
        if not np.all(np.isfinite(P)):
            raise PrivauditError("search domain points must be finite")
        P = np.unique(P, axis=0)          # sorted lexicographically, distinct
        P.setflags(write=False)
        object.__setattr__(self, "points", P)

    @property
    def N(self) -> int:
        return int(self.points.shape[0])

    @property
    def d(self) -> int:
        return int(self.points.shape[1])

    @cached_property
    def _dist(self) -> np.ndarray:
        diff = self.points[:, None, :] - self.points[None, :, :]
        return np.sqrt((diff ** 2).sum(-1))

    def nearest(self, X: Any) -> np.ndarray:
        """Index of the location nearest to each row of X."""
        X = np.asarray(X, dtype=np.float64).reshape(-1, self.d)
        d2 = ((X[:, None, :] - self.points[None, :, :]) ** 2).sum(-1)
        return np.argmin(d2, axis=1)

    def near(self, j: int, k: int) -> np.ndarray:
        """The `k` locations nearest to location j, j excluded, nearest first."""
        order = np.argsort(self._dist[j], kind="stable")
        return order[order != j][:k]

    def far(self, j: int) -> int:
        """The location farthest from j."""
        return int(np.argmax(self._dist[j]))

    def spread(self, k: int) -> np.ndarray:
        """About `k` locations spread over the domain (evenly in sort order)."""
        k = max(1, min(int(k), self.N))
        return np.unique(np.linspace(0, self.N - 1, k).round().astype(int))

    def key(self) -> np.ndarray:
        """A 1-D ordering statistic: the first coordinate (1-D domains: the points themselves)."""
        return self.points[:, 0]

    def labelings(self, rng: np.random.Generator, count: int, anchor: int | None = None) -> list[np.ndarray]:
        """Background labelings f: locations -> {0, 1}.

        From the hypothesis class when known (realizable: class rows, preferring ones whose label
        changes near the anchor), else threshold-like labelings along the first coordinate and
        their complements.
        """
        out: list[np.ndarray] = []
        key = self.key()
        if anchor is not None:
            t = key[anchor]
            # one side 0, the other 1: the boundary runs through the anchor (the label AT the
            # anchor never matters: designs put explicit records there or leave a gap)
            out += [(key > t).astype(np.int8), (key < t).astype(np.int8)]
        if self.hypotheses is not None:
            M = self._class_matrix
            if M is not None and M.shape[0]:
                rows = rng.choice(M.shape[0], size=min(count, M.shape[0]), replace=False)
                out += [M[r].astype(np.int8) for r in rows]
        while len(out) < count + (2 if anchor is not None else 0):
            t = rng.choice(key)
            f = (key >= t).astype(np.int8)
            out.append(f if rng.random() < 0.5 else 1 - f)
        uniq, seen = [], set()
        for f in out:
            b = f.tobytes()
            if b not in seen:
                seen.add(b)
                uniq.append(f)
        return uniq

    @cached_property
    def _class_matrix(self) -> np.ndarray | None:
        """The class's rows re-indexed to this domain's sorted points (None if they disagree)."""
        H = self.hypotheses
        try:
            idx = H.index(self.points)
        except Exception:
            return None
        return np.unique(np.asarray(H.matrix)[:, idx], axis=0)


def _midpoints(P: np.ndarray) -> np.ndarray:
    if P.shape[1] == 1:
        s = np.unique(P[:, 0])
        return ((s[1:] + s[:-1]) / 2).reshape(-1, 1)
    diff = P[:, None, :] - P[None, :, :]
    d2 = (diff ** 2).sum(-1)
    np.fill_diagonal(d2, np.inf)
    nn = np.argmin(d2, axis=1)
    return (P + P[nn]) / 2


def data_domain(data: Dataset, max_points: int = 256) -> Domain:
    """Locations for a black box audited on its own data: x-values plus points between them."""
    P = np.unique(data.X, axis=0)
    if P.shape[0] < 2:
        lo = P[0]
        P = np.vstack([P, lo + 1.0])
    pts = np.vstack([P, _midpoints(P)])
    pts = np.unique(pts, axis=0)
    if pts.shape[0] > max_points:   # keep every data point, thin the midpoints
        mids = _midpoints(P)
        keep = max(0, max_points - P.shape[0])
        sel = np.linspace(0, len(mids) - 1, keep).round().astype(int) if keep else np.zeros(0, int)
        pts = np.vstack([P, mids[np.unique(sel)]]) if keep else P
    return Domain(pts, None, "data x-values and midpoints")


def learner_domain(learner: Any, data: Dataset | None = None, domain: Any = None) -> Domain:
    """The locations the search may use for `learner` (see the module docstring).

    Raises
    ------
    PrivauditError
        When neither the learner nor the data nor `domain` say where records may lie.
    """
    if domain is not None:
        if isinstance(domain, Domain):
            return domain
        if _is_class(domain):
            return Domain(domain.domain, domain, f"hypothesis class {getattr(domain, 'name', '')}")
        return Domain(domain, None, "search option domain")
    declared = declared_domain(learner)
    if declared is not None:
        attr, obj = declared
        if _is_class(obj):
            return Domain(obj.domain, obj, f"learner.{attr} ({getattr(obj, 'name', 'class')})")
        return Domain(obj, None, "learner.domain")
    if data is not None:
        return data_domain(data)
    raise PrivauditError(
        f"the search cannot tell where records of {name_of(learner)!r} may lie: "
        f"give the learner a `domain` attribute (a HypothesisClass or an (N, d) array of points), "
        f"pass data=, or search_options={{'domain': points}}")


__all__ = ["Domain", "learner_domain", "data_domain", "CLASS_ATTRIBUTES"]
