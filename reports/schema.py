"""The JSON Schemas of privaudit's result files, and a small validator for them.

The schemas (``reports/schema/result-v1.json``, ``suite-v1.json``) are the documentation of the
formats; `validate` enforces them without the ``jsonschema`` dependency. It implements exactly
the keywords those schemas use: ``type``, ``const``, ``enum``, ``properties``, ``required``,
``additionalProperties``, ``items``, ``anyOf``, ``minimum``/``maximum`` (and the exclusive forms)
and ``$ref`` (``#/$defs/...`` within a schema, ``other-v1.json`` across the two files).
Annotation keywords (``title``, ``description``, ``$id``, ``$schema``) are ignored.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from audit.errors import PrivauditError

RESULT_SCHEMA = "result-v1.json"
SUITE_SCHEMA = "suite-v1.json"

_SUPPORTED = {"type", "const", "enum", "properties", "required", "additionalProperties", "items",
              "anyOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "$ref",
              "$defs", "title", "description", "$id", "$schema"}


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict:
    """The schema file `name` shipped in ``reports/schema/`` (parsed JSON)."""
    try:
        text = resources.files("reports").joinpath("schema", name).read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        raise PrivauditError(f"unknown schema {name!r}") from None
    return json.loads(text)


def _type_ok(value: Any, t: str) -> bool:
    if t == "object":
        return isinstance(value, dict)
    if t == "array":
        return isinstance(value, list)
    if t == "string":
        return isinstance(value, str)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "null":
        return value is None
    if t == "integer":   # JSON booleans are not numbers
        return isinstance(value, int) and not isinstance(value, bool) or (
            isinstance(value, float) and value.is_integer())
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    raise PrivauditError(f"schema uses unsupported type {t!r}")


def _resolve(ref: str, root: dict) -> tuple[dict, dict]:
    doc, _, frag = ref.partition("#")
    if doc:
        root = load_schema(doc)
    node: Any = root
    for part in [p for p in frag.split("/") if p]:
        node = node[part]
    return node, root


def _errors(value: Any, schema: dict, root: dict, path: str) -> list[str]:
    unknown = set(schema) - _SUPPORTED
    if unknown:  # a schema edit that this validator would silently ignore
        raise PrivauditError(f"schema keyword(s) {sorted(unknown)} are not supported by the validator")
    if "$ref" in schema:
        target, troot = _resolve(schema["$ref"], root)
        errs = _errors(value, target, troot, path)
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        return errs + (_errors(value, rest, root, path) if rest else [])
    where = path or "the top level"
    if "anyOf" in schema:
        if not any(not _errors(value, s, root, path) for s in schema["anyOf"]):
            return [f"{where}: {_short(value)} matches none of the allowed forms"]
    if "const" in schema and not (value == schema["const"] and type(value) is type(schema["const"])):
        return [f"{where} must be {json.dumps(schema['const'])}, got {_short(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{where} must be one of {', '.join(json.dumps(e) for e in schema['enum'])}, "
                f"got {_short(value)}"]
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_type_ok(value, t) for t in types):
            return [f"{where} must be {' or '.join(types)}, got {_short(value)}"]
    errs: list[str] = []
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errs.append(f"{where} must be >= {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            errs.append(f"{where} must be <= {schema['maximum']}, got {value}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            errs.append(f"{where} must be > {schema['exclusiveMinimum']}, got {value}")
        if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
            errs.append(f"{where} must be < {schema['exclusiveMaximum']}, got {value}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errs.append(f"{where} is missing the field {key!r}")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, v in value.items():
            sub = f"{path}.{key}" if path else key
            if key in props:
                errs += _errors(v, props[key], root, sub)
            elif extra is False:
                errs.append(f"{where} has an unknown field {key!r}")
            elif isinstance(extra, dict):
                errs += _errors(v, extra, root, sub)
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            errs += _errors(v, schema["items"], root, f"{path}[{i}]")
    return errs


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def validate(obj: Any, schema: str = RESULT_SCHEMA) -> list[str]:
    """Check the JSON object `obj` against the shipped schema `schema`.

    Returns
    -------
    list of str
        One readable message per problem (empty when `obj` conforms).
    """
    root = load_schema(schema)
    return _errors(obj, root, root, "")


def check(obj: Any, schema: str = RESULT_SCHEMA, what: str = "audit result") -> None:
    """Raise `PrivauditError` naming the first few problems when `obj` does not conform."""
    errs = validate(obj, schema)
    if errs:
        more = f" (and {len(errs) - 3} more)" if len(errs) > 3 else ""
        raise PrivauditError(f"invalid {what}: {'; '.join(errs[:3])}{more}")


__all__ = ["validate", "check", "load_schema", "RESULT_SCHEMA", "SUITE_SCHEMA"]
