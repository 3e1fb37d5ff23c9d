"""Checks of user-supplied numbers and choices, written once for every layer.

Every check takes the parameter's *name first*, then the value, and raises `PrivauditError` (a
`ValueError`) with a one-line message naming the parameter, the valid range and what was given.
Booleans are never accepted as numbers (``True`` is an ``int`` to Python, not to a user).

    >>> from audit.validate import positive, probability, count
    >>> positive("epsilon", 1.0)
    1.0
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from .errors import PrivauditError

_REALS = (int, float, np.integer, np.floating)
_INTS = (int, np.integer)


def number(name: str, v: Any, *, lo: float | None = None, hi: float | None = None,
           lo_open: bool = False, hi_open: bool = False) -> float:
    """A finite real number in the interval given by `lo`/`hi` (closed unless ``*_open``)."""
    if isinstance(v, bool) or not isinstance(v, _REALS) or not math.isfinite(float(v)):
        raise PrivauditError(f"{name} must be a finite number, got {v!r}")
    x = float(v)
    low_bad = lo is not None and (x < lo or (lo_open and x == lo))
    high_bad = hi is not None and (x > hi or (hi_open and x == hi))
    if low_bad or high_bad:
        left = "(" if lo_open or lo is None else "["
        right = ")" if hi_open or hi is None else "]"
        raise PrivauditError(f"{name} must be in {left}{'-inf' if lo is None else f'{lo:g}'}, "
                             f"{'inf' if hi is None else f'{hi:g}'}{right}, got {v!r}")
    return x


def positive(name: str, v: Any, *, upper: float | None = None, upper_open: bool = False,
             allow_zero: bool = False) -> float:
    """A finite number > 0 (≥ 0 with `allow_zero`), at most `upper` (below it if `upper_open`)."""
    return number(name, v, lo=0.0, lo_open=not allow_zero, hi=upper, hi_open=upper_open)


def probability(name: str, v: Any, *, allow_one: bool = False, allow_zero: bool = True) -> float:
    """A number in [0, 1) (closed at 1 with `allow_one`, open at 0 without `allow_zero`)."""
    return number(name, v, lo=0.0, lo_open=not allow_zero, hi=1.0, hi_open=not allow_one)


def integer(name: str, v: Any, *, lo: int | None = None, hi: int | None = None) -> int:
    """A Python or numpy integer (not a bool, not a float) in ``[lo, hi]``."""
    if isinstance(v, bool) or not isinstance(v, _INTS):
        raise PrivauditError(f"{name} must be an integer, got {v!r}")
    x = int(v)
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        raise PrivauditError(f"{name} must be an integer in [{'-inf' if lo is None else lo}, "
                             f"{'inf' if hi is None else hi}], got {v!r}")
    return x


def count(name: str, v: Any, *, minimum: int = 1, maximum: int | None = None) -> int:
    """A number of runs, records or candidates: an integer ≥ `minimum` (default 1)."""
    return integer(name, v, lo=minimum, hi=maximum)


def choice(name: str, v: Any, choices: Iterable[str]) -> str:
    """One of `choices`; the message lists them."""
    choices = tuple(choices)
    if not isinstance(v, str) or v not in choices:
        raise PrivauditError(f"{name} must be one of {', '.join(map(repr, choices))}, got {v!r}")
    return v


__all__ = ["number", "positive", "probability", "integer", "count", "choice"]
