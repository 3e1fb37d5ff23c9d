"""Loading what the user names: their black box (``module:attr``) and their input files.

Shared by the command line, the CI config and the pytest marker, so a file or a module is read
the same way, with the same messages, whichever front end names it.
"""

from __future__ import annotations

import csv
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from audit.errors import PrivauditError
from audit.interfaces import is_learner, is_mechanism
from audit.types import Dataset


def load_blackbox(spec: str, base_dir: str | os.PathLike | None = None) -> Any:
    """Import ``module:attr`` (attr may be dotted); a class is instantiated without arguments.

    `base_dir` (default: the working directory) is where the user's modules are looked for.
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise PrivauditError(f"--blackbox expects module:attr, got {spec!r}")
    mod_name, attr = spec.split(":", 1)
    where = str(Path(base_dir if base_dir is not None else os.getcwd()).resolve())
    if where not in sys.path:
        sys.path.insert(0, where)
    try:
        obj: Any = importlib.import_module(mod_name)
    except ImportError as exc:
        raise PrivauditError(f"cannot import module {mod_name!r}: {exc}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise PrivauditError(f"module {mod_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if isinstance(obj, type):
        obj = obj()
    if not (is_learner(obj) or is_mechanism(obj)):
        raise PrivauditError(f"{spec} is neither a Learner (predict) nor a Mechanism (sample)")
    return obj


def read_json(path: str | os.PathLike, what: str) -> Any:
    """A JSON file, or a `PrivauditError` naming `what` it was meant to hold."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as exc:
        raise PrivauditError(f"cannot read {what} file {str(path)!r}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise PrivauditError(f"{what} file {str(path)!r} is not valid JSON: line {exc.lineno}: "
                             f"{exc.msg}") from None


def _is_number(c: str) -> bool:
    try:
        float(c)
        return True
    except ValueError:
        return False


def read_csv_dataset(path: str | os.PathLike) -> Dataset:
    """features..., label per row; a first row with no numeric cell is a header and skipped."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = [r for r in csv.reader(f) if r and any(c.strip() for c in r)]
    except OSError as exc:
        raise PrivauditError(f"cannot read data file {str(path)!r}: {exc.strerror}") from None
    if rows and not any(_is_number(c) for c in rows[0]):  # a header: no cell is a number
        rows = rows[1:]
    if not rows:
        raise PrivauditError(f"data file {str(path)!r} has no rows")
    widths = {len(r) for r in rows}
    if len(widths) != 1 or widths.pop() < 2:
        raise PrivauditError(f"data file {str(path)!r}: every row needs the same number (>= 2) of "
                             f"columns: features..., label")
    try:
        arr = np.array([[float(c) for c in r] for r in rows])
    except ValueError as exc:
        raise PrivauditError(f"data file {str(path)!r}: non-numeric cell ({exc})") from None
    return Dataset(arr[:, :-1], arr[:, -1])


def read_pairs(path: str | os.PathLike, learner: bool, what: str = "pairs") -> list:
    """``[[a, b], ...]``: input arrays for a mechanism, ``{"X": ..., "y": ...}`` datasets for a learner."""
    value = read_json(path, what)
    if not isinstance(value, list):
        raise PrivauditError(f"{what} file {str(path)!r} must hold a JSON list of [a, b] pairs")
    if not learner:
        return value
    out = []
    for i, item in enumerate(value):
        if not (isinstance(item, list) and len(item) == 2):
            raise PrivauditError(f"{what}: item {i} must be a pair [S, S'] of datasets "
                                 f'[{{"X": ..., "y": ...}}, {{...}}]')
        out.append((Dataset.from_dict(item[0]), Dataset.from_dict(item[1])))
    return out


def read_inputs(learner: bool, *, pairs: Any = None, data: Any = None, queries: Any = None,
                base_dir: str | os.PathLike | None = None) -> dict:
    """The input files a front end names, read: ``{"pairs": ..., "data": ..., "queries": ...}``.

    Relative paths are taken from `base_dir` (the CI config's folder), else the working directory.
    """
    def where(p: Any) -> Path:
        p = Path(p)
        return p if base_dir is None or p.is_absolute() else Path(base_dir) / p

    if not learner and (data is not None or queries is not None):
        raise PrivauditError("--data/--queries apply to learners; a mechanism takes --pairs")
    return {"pairs": None if pairs is None else read_pairs(where(pairs), learner),
            "data": None if data is None else read_csv_dataset(where(data)),
            "queries": None if queries is None else read_json(where(queries), "queries")}


__all__ = ["load_blackbox", "read_json", "read_csv_dataset", "read_pairs", "read_inputs"]
