"""Parameter checks of the learners' factories: the core's `audit.validate`, written once.

Every check takes the parameter's name first, then the value, and raises a one-line
`PrivauditError` naming the parameter (`audit.validate`). Learners call `audit.validate`
directly; the two names here are the ones the algorithms share.
"""

from __future__ import annotations

from typing import Any

from audit import validate

#: A finite number > 0 (>= 0 with ``allow_zero``), at most ``upper`` (below it with ``upper_open``).
check_positive = validate.positive


def check_runs(runs: Any) -> int:
    """The Learner contract's ``runs``: an integer >= 0."""
    return validate.count("runs", runs, minimum=0)


__all__ = ["check_positive", "check_runs"]
