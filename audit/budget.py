"""How many runs an audit spends, and at what confidence: one `Budget`, its defaults defined once.

Every front end (Python API, command line, CI config, `assert_private`, the pytest marker) starts
from these defaults or from a named preset, and overrides single fields.

    >>> from audit.budget import Budget, preset
    >>> preset("quick")
    Budget(explore_runs=20000, confirm_runs=200000, confidence=0.95, seed=0, tests=1, sequential=False)
    >>> Budget.for_runs(10**7).explore_runs        # the CLI's --runs rule: explore a tenth
    1000000
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from . import validate
from .errors import PrivauditError

DEFAULT_EXPLORE_RUNS = 100_000
DEFAULT_CONFIRM_RUNS = 1_000_000
DEFAULT_CONFIDENCE = 0.95
MIN_EXPLORE_RUNS = 10_000          # --runs N explores max(MIN_EXPLORE_RUNS, N // 10)


# Runs per input and phase: 10^12 already takes days at 10^7 runs/s; beyond it the chunk plan
# alone would not fit in memory (10^15 runs are ~4 x 10^9 chunks), so it is refused up front.
MAX_RUNS = 10**12

@dataclass(frozen=True)
class Budget:
    """Runs per input in each phase, the confidence of the whole audit, its seed, how many
    events are confirmed per candidate (`tests`, each paying its Bonferroni share), and whether
    the confirmation is `sequential` (anytime-valid, stopping early; `audit.sequential`)."""

    explore_runs: int = DEFAULT_EXPLORE_RUNS
    confirm_runs: int = DEFAULT_CONFIRM_RUNS
    confidence: float = DEFAULT_CONFIDENCE
    seed: int = 0
    tests: int = 1
    sequential: bool = False

    def __post_init__(self) -> None:
        validate.count("explore_runs", self.explore_runs, maximum=MAX_RUNS)
        validate.count("confirm_runs", self.confirm_runs, maximum=MAX_RUNS)
        validate.number("confidence", self.confidence, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        validate.integer("seed", self.seed, lo=0)
        validate.count("tests", self.tests)
        if not isinstance(self.sequential, (bool, np.bool_)):
            raise PrivauditError(f"sequential must be true or false, got {self.sequential!r}")

    @classmethod
    def for_runs(cls, confirm_runs: int, explore_runs: int | None = None, **kw: Any) -> "Budget":
        """`confirm_runs` per input, exploring a tenth of it (at least 10,000) unless given."""
        confirm_runs = validate.count("runs", confirm_runs, maximum=MAX_RUNS)
        if explore_runs is None:
            explore_runs = max(MIN_EXPLORE_RUNS, confirm_runs // 10)
        return cls(explore_runs=explore_runs, confirm_runs=confirm_runs, **kw)

    def updated(self, **changes: Any) -> "Budget":
        """A copy with the fields in `changes` replaced; ``None`` values are ignored."""
        unknown = sorted(set(changes) - set(asdict(self)))
        if unknown:
            raise PrivauditError(f"unknown budget key(s) {unknown}; valid: {', '.join(asdict(self))}")
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def to_dict(self) -> dict:
        return asdict(self)


PRESETS: dict[str, Budget] = {
    # assert_private and the pytest marker: fast enough for a unit test, still certifies pure-DP
    # bugs up to ln(n / ln(2/alpha)) ~ 10 with 200,000 confirmation runs.
    "quick": Budget(explore_runs=20_000, confirm_runs=200_000),
    "default": Budget(),
    "thorough": Budget(explore_runs=1_000_000, confirm_runs=10_000_000),
}


def preset(name: str) -> Budget:
    """The named preset: ``quick``, ``default`` or ``thorough``."""
    validate.choice("budget preset", name, PRESETS)
    return PRESETS[name]


__all__ = ["Budget", "PRESETS", "preset", "DEFAULT_EXPLORE_RUNS", "DEFAULT_CONFIRM_RUNS",
           "DEFAULT_CONFIDENCE"]
