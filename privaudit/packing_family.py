"""Names to packing families: ``lb5`` / ``lemma11`` / ``sphere-packing``, a JSON file, or the
user's Python object (``module:attr``: a `PackingFamily`, or a callable ``f(learner, **params)``
returning one). Used by ``privaudit audit --packing`` and the CI config's ``packing`` key."""

from __future__ import annotations

import ast
import importlib
import os
import sys
from pathlib import Path
from typing import Any

from attacks.packings import FAMILIES, build_family, family_from_dict
from audit.errors import PrivauditError
from audit.packing import PackingFamily

from .loading import read_json


def coerce(raw: dict[str, str]) -> dict[str, Any]:
    """``--family-param K=V`` strings as Python values (numbers, booleans, strings)."""
    out: dict[str, Any] = {}
    for k, v in raw.items():
        try:
            out[k] = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            out[k] = v
    return out


def _python_family(spec: str, learner: Any, params: dict, base_dir: str | os.PathLike | None) -> PackingFamily:
    mod_name, attr = spec.split(":", 1)
    where = str(Path(base_dir if base_dir is not None else os.getcwd()).resolve())
    if where not in sys.path:
        sys.path.insert(0, where)
    try:
        obj: Any = importlib.import_module(mod_name)
    except ImportError as exc:
        raise PrivauditError(f"cannot import packing family module {mod_name!r}: {exc}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise PrivauditError(f"module {mod_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if callable(obj) and not isinstance(obj, PackingFamily):
        try:
            obj = obj(learner, **params)
        except PrivauditError:
            raise
        except Exception as exc:
            raise PrivauditError(f"packing family {spec} raised {type(exc).__name__}: {exc}") from None
    elif params:
        raise PrivauditError(f"family params apply to shipped families or callables, not to {spec}")
    if not isinstance(obj, PackingFamily):
        raise PrivauditError(f"{spec} is not an audit.packing.PackingFamily (got {type(obj).__name__})")
    return obj


def resolve_family(spec: Any, learner: Any, params: dict | None = None,
                   base_dir: str | os.PathLike | None = None) -> PackingFamily:
    """The family named by `spec` for `learner` (see the module docstring)."""
    params = dict(params or {})
    if isinstance(spec, PackingFamily):
        return spec
    if not isinstance(spec, str) or not spec:
        raise PrivauditError(f"packing must name a family ({', '.join(FAMILIES)}), a JSON file or "
                             f"module:attr; got {spec!r}")
    if spec in FAMILIES:
        return build_family(spec, learner, **params)
    if spec.endswith(".json"):
        if params:
            raise PrivauditError("family params apply to shipped families, not to a JSON family file")
        path = Path(spec) if base_dir is None or Path(spec).is_absolute() else Path(base_dir) / spec
        return family_from_dict(read_json(path, "packing family"), name=Path(spec).stem)
    if ":" in spec:
        return _python_family(spec, learner, params, base_dir)
    raise PrivauditError(f"unknown packing family {spec!r}; valid: {', '.join(FAMILIES)}, a .json "
                         f"file, or module:attr")


__all__ = ["resolve_family", "coerce"]
