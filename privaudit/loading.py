"""Loading what the user names: their black box (``module:attr``) and their input files.

Shared by the command line, the CI config and the pytest marker, so a file or a module is read
the same way, with the same messages, whichever front end names it.
"""

from __future__ import annotations

import csv
import importlib
import inspect
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from audit import interrupts
from audit.errors import BlackBoxError, PrivauditError
from audit.interfaces import is_learner, is_mechanism
from audit.types import Dataset

_MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_ATTR = _MODULE
_OWN_PACKAGES = ("audit", "algorithms", "attacks", "reports", "privaudit")


def _user_code_error(spec: str, what: str, exc: BaseException) -> PrivauditError:
    """A `BlackBoxError` for the user's module or class failing while privaudit loads it."""
    if isinstance(exc, SystemExit):
        why = f"called sys.exit({exc.code!r})"
    elif isinstance(exc, interrupts.BlackBoxExit):
        why = f"called os._exit({exc.code!r})"
    elif isinstance(exc, SyntaxError):
        why = f"has a syntax error: {exc.filename}:{exc.lineno}: {exc.msg}"
    else:
        why = f"raised {type(exc).__name__}: {exc}"
    return BlackBoxError(f"--blackbox {spec}: {what} {why}")


def user_dirs() -> tuple[str, ...]:
    """Folders `load_blackbox` added to the import path (kept for Ray workers and diagnostics)."""
    return tuple(_USER_DIRS)


_USER_DIRS: list[str] = []


def load_blackbox(spec: str, base_dir: str | os.PathLike | None = None) -> Any:
    """Import ``module:attr`` (attr may be dotted); a class is instantiated without arguments.

    `base_dir` (default: the working directory) is where the user's modules are looked for. It
    is appended to the import path, *after* privaudit's own packages: a ``reports/`` or
    ``audit/`` folder next to the user's module can never replace privaudit's. Whatever the
    user's module does while it is imported or instantiated (raise, have a syntax error, call
    ``sys.exit``) is a `BlackBoxError` (bad input, exit 2), never an exit code of its own.
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise PrivauditError(f"--blackbox expects module:attr, got {spec!r}")
    mod_name, attr = spec.split(":", 1)
    if not _MODULE.fullmatch(mod_name) or not _ATTR.fullmatch(attr):
        raise PrivauditError(f"--blackbox expects module:attr (dotted Python names), got {spec!r}")
    where = str(Path(base_dir if base_dir is not None else os.getcwd()).resolve())
    if where not in sys.path:
        sys.path.append(where)
    if where not in _USER_DIRS:
        _USER_DIRS.append(where)
    top = mod_name.split(".")[0]
    if top in _OWN_PACKAGES:
        raise PrivauditError(f"--blackbox {spec}: {top!r} is one of privaudit's own packages "
                             f"({', '.join(_OWN_PACKAGES)}); rename your module")
    try:
        with interrupts.guard_exit():
            obj: Any = importlib.import_module(mod_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (mod_name == exc.name or mod_name.startswith(exc.name + ".")):
            raise PrivauditError(f"cannot import module {mod_name!r}: {exc} (looked in {where} "
                                 f"and the installed packages)") from None
        raise _user_code_error(spec, "importing the module", exc) from None
    except KeyboardInterrupt as exc:
        if interrupts.requested():
            raise
        raise _user_code_error(spec, "importing the module", exc) from None
    except (Exception, SystemExit, interrupts.BlackBoxExit) as exc:
        raise _user_code_error(spec, "importing the module", exc) from None
    for part in attr.split("."):
        try:
            found = hasattr(obj, part)
        except Exception as exc:
            raise _user_code_error(spec, f"reading attribute {part!r}", exc) from None
        if not found:
            raise PrivauditError(f"module {mod_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if isinstance(obj, type):
        try:
            inspect.signature(obj).bind()
        except TypeError:
            raise PrivauditError(f"--blackbox {spec} is a class whose constructor needs arguments; "
                                 f"name an instance instead (module:obj, with obj = {attr}(...))") from None
        except ValueError:
            pass  # no signature available (a builtin): just try it
        try:
            with interrupts.guard_exit():
                obj = obj()
        except KeyboardInterrupt as exc:
            if interrupts.requested():
                raise
            raise _user_code_error(spec, "instantiating the class", exc) from None
        except (Exception, SystemExit, interrupts.BlackBoxExit) as exc:
            raise _user_code_error(spec, "instantiating the class", exc) from None
    try:
        ok = is_learner(obj) or is_mechanism(obj)
    except Exception as exc:
        raise _user_code_error(spec, "inspecting the object", exc) from None
    if not ok:
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
    except UnicodeDecodeError as exc:
        raise PrivauditError(f"{what} file {str(path)!r} is not UTF-8 text (byte {exc.start})") from None
    except RecursionError:
        raise PrivauditError(f"{what} file {str(path)!r} is nested too deeply") from None


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
    except UnicodeDecodeError as exc:
        raise PrivauditError(f"data file {str(path)!r} is not UTF-8 text (byte {exc.start})") from None
    except csv.Error as exc:
        raise PrivauditError(f"data file {str(path)!r} is not CSV: {exc}") from None
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


__all__ = ["load_blackbox", "user_dirs", "read_json", "read_csv_dataset", "read_pairs", "read_inputs"]
