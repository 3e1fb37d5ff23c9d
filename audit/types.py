"""Core value types: datasets, privacy claims and the black-box protocols (DESIGN.md section 3).

`Dataset` and `Claim` validate themselves on construction, so every later stage can trust them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import PrivauditError

NEIGHBOURS = ("replace-one", "add-remove", "label")
SCOPES = ("model", "prediction")
CLAIM_KEYS = ("epsilon", "delta", "neighbours", "scope")


def _as_features(X: Any, what: str = "X") -> np.ndarray:
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise PrivauditError(f"{what} must be numeric features, got {type(X).__name__}: {exc}") from None
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise PrivauditError(f"{what} must have shape (n, d); got an array with shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise PrivauditError(f"{what} contains NaN or infinite values")
    return arr


def _as_labels(y: Any, n: int | None = None, what: str = "y") -> np.ndarray:
    try:
        arr = np.asarray(y)
    except (TypeError, ValueError) as exc:  # pragma: no cover - numpy accepts almost anything
        raise PrivauditError(f"{what} must be labels in {{0, 1}}: {exc}") from None
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise PrivauditError(f"{what} must have shape (n,); got an array with shape {arr.shape}")
    if arr.dtype.kind not in "biuf":
        raise PrivauditError(f"{what} must hold labels in {{0, 1}}; got dtype {arr.dtype}")
    if arr.size and not np.all((arr == 0) | (arr == 1)):
        bad = arr[~((arr == 0) | (arr == 1))][:3]
        raise PrivauditError(f"{what} must hold labels in {{0, 1}}; found {bad.tolist()}")
    if n is not None and arr.shape[0] != n:
        raise PrivauditError(f"{what} has {arr.shape[0]} labels but X has {n} rows")
    return arr.astype(np.int8)


@dataclass(frozen=True, eq=False)
class Dataset:
    """A labelled dataset ``S = ((x_1, y_1), ..., (x_n, y_n))``; ordered, immutable, validated.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Features, converted to float64 (a 1-D array is read as ``d = 1``).
    y : array_like, shape (n,)
        Labels in {0, 1}, converted to int8.
    """

    X: np.ndarray
    y: np.ndarray

    def __post_init__(self) -> None:
        X = _as_features(self.X)
        y = _as_labels(self.y, X.shape[0])
        X.setflags(write=False)
        y.setflags(write=False)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)

    # -- basic protocol -------------------------------------------------------------------
    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    def __len__(self) -> int:
        return self.n

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Dataset):
            return NotImplemented
        return np.array_equal(self.X, other.X) and np.array_equal(self.y, other.y)

    def __hash__(self) -> int:
        return hash((self.X.shape, self.X.tobytes(), self.y.tobytes()))

    def __repr__(self) -> str:
        return f"Dataset(n={self.n}, d={self.d}, positives={int(self.y.sum())})"

    # -- neighbour constructors -------------------------------------------------------------
    def _index(self, i: int) -> int:
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise PrivauditError(f"record index must be an integer, got {i!r}")
        if not -self.n <= i < self.n:
            raise PrivauditError(f"record index {i} is out of range for a dataset of {self.n} records")
        return int(i) % self.n

    def _record(self, x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        xr = _as_features(np.asarray(x, dtype=np.float64).reshape(1, -1), "x")
        if xr.shape[1] != self.d:
            raise PrivauditError(f"record x has {xr.shape[1]} features but the dataset has {self.d}")
        return xr, _as_labels(np.asarray(y).reshape(1), 1, "record label")

    def replace(self, i: int, x: Any, y: Any) -> "Dataset":
        """Replace record ``i`` by ``(x, y)`` (the replace-one neighbour relation)."""
        i = self._index(i)
        xr, yr = self._record(x, y)
        X, Y = self.X.copy(), self.y.copy()
        X[i], Y[i] = xr[0], yr[0]
        return Dataset(X, Y)

    def remove(self, i: int) -> "Dataset":
        """Delete record ``i`` (add-remove relation)."""
        i = self._index(i)
        return Dataset(np.delete(self.X, i, axis=0), np.delete(self.y, i))

    def add(self, x: Any, y: Any) -> "Dataset":
        """Append the record ``(x, y)`` (add-remove relation)."""
        xr, yr = self._record(x, y)
        return Dataset(np.vstack([self.X, xr]), np.concatenate([self.y, yr]))

    def relabel(self, i: int, y: Any) -> "Dataset":
        """Change the label of record ``i`` only (label-privacy relation)."""
        i = self._index(i)
        _, yr = self._record(self.X[i], y)
        Y = self.y.copy()
        Y[i] = yr[0]
        return Dataset(self.X, Y)

    # -- serialisation ----------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"X": self.X.tolist(), "y": self.y.astype(int).tolist()}

    @classmethod
    def from_dict(cls, d: dict) -> "Dataset":
        if not isinstance(d, dict) or "X" not in d or "y" not in d:
            raise PrivauditError('a dataset must be an object with keys "X" and "y"')
        try:
            X, y = np.asarray(d["X"], dtype=np.float64), np.asarray(d["y"])
        except (TypeError, ValueError, OverflowError, RecursionError) as exc:
            raise PrivauditError(f"a dataset's X must be numbers in rows of equal length, and y "
                                 f"labels ({type(exc).__name__}: {str(exc)[:80]})") from None
        return cls(X, y)


# e^epsilon must stay a finite double (exp overflows above ~709.78); 700 leaves room for the
# products the bounds take, and is far beyond any certifiable epsilon (~ln of the run count).
MAX_EPSILON = 700.0

@dataclass(frozen=True)
class Claim:
    """What an algorithm promises: ``P[A(S) in E] <= e^epsilon P[A(S') in E] + delta``.

    Parameters
    ----------
    epsilon : float
        Multiplicative bound, finite and >= 0 (0 together with ``delta = gamma`` expresses
        gamma-uniform stability).
    delta : float
        Additive slack in [0, 1).
    neighbours : {"replace-one", "add-remove", "label"}
        Which datasets S, S' count as neighbours.
    scope : {"model", "prediction"}
        "model": the whole trained predictor is released; "prediction": only one prediction per
        query is (private prediction, Dwork & Feldman 2018).
    """

    epsilon: float
    delta: float = 0.0
    neighbours: str = "replace-one"
    scope: str = "model"

    def __post_init__(self) -> None:
        for name in ("epsilon", "delta"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise PrivauditError(f"claim {name} must be a number, got {v!r}")
            object.__setattr__(self, name, float(v))
        if math.isnan(self.epsilon) or self.epsilon < 0 or math.isinf(self.epsilon):
            raise PrivauditError(f"claim epsilon must be finite and >= 0, got {self.epsilon}")
        if self.epsilon > MAX_EPSILON:
            raise PrivauditError(f"claim epsilon must be <= {MAX_EPSILON:g} (e^epsilon overflows "
                                 f"a double near 709, and no budget certifies such a bound), "
                                 f"got {self.epsilon:g}")
        if math.isnan(self.delta) or not 0.0 <= self.delta < 1.0:
            raise PrivauditError(f"claim delta must be in [0, 1), got {self.delta}")
        if self.neighbours not in NEIGHBOURS:
            raise PrivauditError(
                f"unknown neighbour relation {self.neighbours!r}; valid: {', '.join(NEIGHBOURS)}")
        if self.scope not in SCOPES:
            raise PrivauditError(f"unknown scope {self.scope!r}; valid: {', '.join(SCOPES)}")

    def to_dict(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta,
                "neighbours": self.neighbours, "scope": self.scope}

    @classmethod
    def from_dict(cls, d: dict) -> "Claim":
        if not isinstance(d, dict):
            raise PrivauditError(f"a claim must be a table/object, got {d!r}")
        unknown = set(d) - set(CLAIM_KEYS)
        if unknown:
            raise PrivauditError(f"unknown claim keys {sorted(unknown)}; valid: {', '.join(CLAIM_KEYS)}")
        if "epsilon" not in d:
            raise PrivauditError("a claim needs an epsilon")
        return cls(**d)

    def describe(self) -> str:
        if self.epsilon == 0 and self.delta > 0:
            core = f"{self.delta:g}-uniformly stable"
        elif self.delta:
            core = f"({self.epsilon:g}, {self.delta:g})-DP"
        else:
            core = f"{self.epsilon:g}-DP"
        return f"{core} [{self.neighbours}, {self.scope} scope]"


def as_queries(queries: Any, d: int) -> np.ndarray:
    """Validate query points: shape (q, d) float64, finite, q >= 1."""
    q = _as_features(queries, "queries")
    if d == 1 and q.shape[1] != 1 and q.shape[0] == 1:
        q = q.reshape(-1, 1)
    if q.shape[1] != d:
        raise PrivauditError(f"queries have {q.shape[1]} features but the dataset has {d}")
    if q.shape[0] == 0:
        raise PrivauditError("at least one query point is needed")
    return q


def as_dataset(obj: Any, what: str = "dataset") -> Dataset:
    if isinstance(obj, Dataset):
        return obj
    if isinstance(obj, dict):
        return Dataset.from_dict(obj)
    if isinstance(obj, (tuple, list)) and len(obj) == 2:
        return Dataset(*obj)
    raise PrivauditError(f"{what} must be a Dataset, a dict with X and y, or a pair (X, y); "
                         f"got {type(obj).__name__}")


__all__ = ["Dataset", "Claim", "NEIGHBOURS", "SCOPES", "CLAIM_KEYS", "as_queries", "as_dataset"]
