"""What every `lib-` adapter shares: a real library's mechanism as a privaudit black box."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from audit.errors import PrivauditError
from audit.neighbours import parse_input_distance
from audit.types import Claim

from .loader import version

# Records beyond the clamping bounds: the inputs a library must clamp (the "extreme values").
FAR = 1e6


class LibraryMechanism:
    """A mechanism of a real DP library, audited as it is deployed.

    The library draws from its own entropy (an OS source) and cannot be seeded, so
    ``reproducible = False``: the auditor says so in the result, counts still journal (an
    interrupted audit resumes from its finished chunks), and nothing claims bit-identical reruns.
    `rng` is accepted and ignored.

    Attributes: `claim` (what the library documents for these parameters), `domain` (the input
    domain in words), `relation` (the library's neighbour relation), `input_distance` (the same as
    an `audit.neighbours.InputDistance`: ``add-remove:1`` for datasets under add-remove, the
    library's input metric otherwise), `pairs` (default adversarial
    inputs), `library` and `library_version`.
    """

    reproducible = False

    def __init__(self, name: str, dist: str, claim: Claim, domain: str, pairs: list,
                 params: dict, build: Callable[[], Callable[[np.ndarray, int], Any]], *, integer: bool = False,
                 input_distance: str | None = None) -> None:
        self.name = name
        self.library = dist
        self.library_version = version(dist)
        self.claim = claim
        self.domain = domain
        self.relation = claim.neighbours
        self.pairs = [(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)) for a, b in pairs]
        self.params = {**params, "library": f"{dist} {self.library_version}"}
        # `build()` makes the library's objects and returns ``draw(x, runs)``; library objects
        # often cannot be pickled, so a copy sent to a Ray worker rebuilds them there
        self._build = build
        self._draw = build()
        self._dtype = np.int64 if integer else np.float64
        if input_distance is not None:
            self.input_distance = parse_input_distance(input_distance)

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_draw"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._draw = None

    def sample(self, inp, runs: int, rng: np.random.Generator) -> np.ndarray:
        if self._draw is None:
            self._draw = self._build()
        try:
            x = np.asarray(inp, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise PrivauditError(f"{self.name}: input must be numeric, got {type(inp).__name__}") from None
        if np.isnan(x).any():
            raise PrivauditError(f"{self.name}: input must not contain NaN")
        with warnings.catch_warnings():  # libraries warn about bounds and budgets on every call
            warnings.simplefilter("ignore")
            out = self._draw(x, int(runs))
        return np.asarray(out, dtype=self._dtype).reshape(int(runs))


def repeat(call: Callable[[], Any], runs: int) -> np.ndarray:
    """`runs` independent calls of a scalar library API."""
    return np.array([call() for _ in range(runs)])
