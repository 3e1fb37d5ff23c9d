"""Parameter checks of the learners' factories (PrivauditError naming the parameter).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from audit.errors import PrivauditError


# -- learner plumbing ---------------------------------------------------------------------------
def check_positive(name: str, v: Any, *, upper: float | None = None, allow_zero: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
        raise PrivauditError(f"{name} must be a finite number, got {v!r}")
    v = float(v)
    if v < 0 or (v == 0 and not allow_zero) or (upper is not None and v > upper):
        rng = f"(0, {upper}]" if upper is not None else "> 0"
        raise PrivauditError(f"{name} must be in {rng}, got {v}")
    return v


def check_runs(runs: Any) -> int:
    if isinstance(runs, bool) or not isinstance(runs, (int, np.integer)) or runs < 0:
        raise PrivauditError(f"runs must be a non-negative integer, got {runs!r}")
    return int(runs)
