"""Validating a journal line before its counts are trusted.

A journal is a file on disk: it may be edited, truncated or corrupted. A chunk whose counts do
not add up to its run count would silently change a bound (an edited line once turned an
epsilon_lower of 0.0311 into 0), so every record is checked when read: its shape against a JSON
schema (`jsonschema`), then its counts against its chunk size -- code counts and each histogram
row add up to the chunk's runs, every event count lies in ``[0, runs]``.
"""

from __future__ import annotations

import functools
from typing import Any

_COUNT = {"type": "integer", "minimum": 0}
_INT_LIST = {"type": "array", "items": _COUNT}

RECORD_SCHEMA = {
    "type": "object",
    "required": ["v", "job", "chunk", "size", "red"],
    "properties": {
        "v": {"const": 1},
        "job": {"type": "string", "pattern": "^[0-9a-f]{8,64}$"},
        "chunk": _COUNT,
        "size": {"type": "integer", "minimum": 1},
        "red": {
            "type": "object",
            "required": ["type", "runs", "counts"],
            "properties": {
                "type": {"enum": ["codes", "events", "hist"]},
                "runs": _COUNT,
                "counts": {"type": "array"},
                "codes": {"type": "array"},
            },
        },
    },
}


@functools.cache
def _schema_error() -> Any:
    """``rec -> the most relevant schema error of rec, or None``. jsonschema is imported on the
    first journal read, not at start-up (~0.1 s of every command; most never read a journal)."""
    import jsonschema
    validator = jsonschema.Draft202012Validator(RECORD_SCHEMA)
    return lambda rec: jsonschema.exceptions.best_match(validator.iter_errors(rec))


def record_problem(rec: Any) -> str | None:
    """Why journal record `rec` cannot be trusted, or None when it is consistent."""
    err = _schema_error()(rec)
    if err is not None:
        where = "/".join(str(p) for p in err.absolute_path) or "record"
        return f"{where}: {err.message[:160]}"
    red, size = rec["red"], rec["size"]
    runs = red["runs"]
    if runs != size:
        return f"the chunk has {size} runs but its counts are for {runs}"
    counts = red["counts"]
    kind = red["type"]
    if kind == "codes":
        codes = red.get("codes")
        if not isinstance(codes, list) or len(codes) != len(counts):
            return "codes and counts differ in length"
        if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts):
            return "code counts must be integers >= 0"
        if sum(counts) != runs:
            return f"code counts add up to {sum(counts)}, not the chunk's {runs} runs"
        return None
    rows = counts if kind == "hist" else [counts]
    for row in rows:
        if not isinstance(row, list) or not all(
                isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= runs for c in row):
            return f"{kind} counts must be integers in [0, {runs}]"
        if kind == "hist" and sum(row) != runs:
            return f"a histogram row adds up to {sum(row)}, not the chunk's {runs} runs"
    return None


__all__ = ["RECORD_SCHEMA", "record_problem"]
