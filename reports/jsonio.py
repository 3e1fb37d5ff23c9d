"""Versioned JSON for audit and suite results: write, read back, reject what cannot be read.

Results are plain JSON (never pickle). A single audit follows ``schema/result-v1.json``; a suite
follows ``schema/suite-v1.json`` and is recognised by ``"format": "privaudit-suite"``.
"""

from __future__ import annotations

import json
import os
from typing import Any

from audit.errors import PrivauditError
from audit.jsonnum import encode
from audit.result import SCHEMA_VERSION, AuditResult
from audit.suite import SUITE_FORMAT, SUITE_SCHEMA_VERSION, SuiteResult

from .schema import RESULT_SCHEMA, SUITE_SCHEMA, check

jsonable = encode     # the one JSON encoding of numbers (audit.jsonnum), kept under its old name


def to_dict(obj: AuditResult | SuiteResult) -> dict:
    """The JSON object of a result or suite, checked against its schema."""
    if isinstance(obj, AuditResult):
        d, schema, what = jsonable(obj.to_dict()), RESULT_SCHEMA, "audit result"
    elif isinstance(obj, SuiteResult):
        d, schema, what = jsonable(obj.to_dict()), SUITE_SCHEMA, "suite result"
    else:
        raise PrivauditError(f"expected an AuditResult or a SuiteResult, got {type(obj).__name__}")
    check(d, schema, what)
    return d


def to_json(obj: AuditResult | SuiteResult, indent: int | None = 2) -> str:
    """Strict JSON text (no NaN/Infinity literals) of an audit result or a suite."""
    return json.dumps(to_dict(obj), indent=indent, allow_nan=False, ensure_ascii=False) + "\n"


def _version_error(found: Any, reads: int, what: str) -> PrivauditError:
    if isinstance(found, int) and not isinstance(found, bool) and found > reads:
        hint = "it was written by a newer privaudit; upgrade privaudit to read it"
    elif found is None:
        hint = "the file has no schema_version, so it is not a privaudit result"
    else:
        hint = "it was written by an older privaudit; re-run the audit to regenerate it"
    return PrivauditError(f"cannot read {what} with schema_version {found!r}: this privaudit reads "
                          f"version {reads} only ({hint})")


def _no_constant(name: str) -> Any:
    raise PrivauditError(f"not strict JSON: the literal {name} (privaudit writes non-finite "
                         f"numbers as the strings \"nan\", \"inf\")")


_FINITE_KEYS = ("epsilon_lower", "delta_lower", "confidence", "max_certifiable_epsilon")


def check_result_values(d: dict, where: str = "result") -> None:
    """What a schema cannot say: the numbers behind a verdict are consistent.

    No NaN where a bound or the confidence stands; every confirmed test has ``n >= 1`` runs per
    side and ``0 <= k <= n`` runs in its event; bounds that are probabilities lie in [0, 1].
    """
    for k in _FINITE_KEYS:
        v = d.get(k)
        if v == "nan" or (isinstance(v, float) and v != v):
            raise PrivauditError(f"{where}: {k} is NaN")
    for i, t in enumerate(d.get("confirmed") or []):
        if not isinstance(t, dict):
            continue
        for side in ("p", "q"):
            k, n = t.get(f"k_{side}"), t.get(f"n_{side}")
            if isinstance(n, (int, float)) and not isinstance(n, bool) and n < 1:
                raise PrivauditError(f"{where}: confirmed[{i}].n_{side} = {n}: a bound needs at "
                                     f"least one run")
            if isinstance(k, (int, float)) and isinstance(n, (int, float)) and not 0 <= k <= n:
                raise PrivauditError(f"{where}: confirmed[{i}].k_{side} = {k} is not in "
                                     f"[0, n_{side} = {n}]")
        for b in ("p_lo", "q_hi"):
            v = t.get(b)
            if v == "nan" or (isinstance(v, (int, float)) and not 0 <= v <= 1):
                raise PrivauditError(f"{where}: confirmed[{i}].{b} = {v} is not a probability")


def from_obj(d: Any) -> AuditResult | SuiteResult:
    """An `AuditResult` or `SuiteResult` from its parsed JSON, after a schema check."""
    if not isinstance(d, dict):
        raise PrivauditError(f"a privaudit result must be a JSON object, got {type(d).__name__}")
    if d.get("format") == SUITE_FORMAT:
        if d.get("schema_version") != SUITE_SCHEMA_VERSION:
            raise _version_error(d.get("schema_version"), SUITE_SCHEMA_VERSION, "a suite result")
        check(d, SUITE_SCHEMA, "suite result")
        for i, e in enumerate(d.get("entries") or []):
            if isinstance(e, dict) and isinstance(e.get("result"), dict):
                check_result_values(e["result"], f"entries[{i}].result")
        return SuiteResult.from_dict(d)
    if "format" in d:
        raise PrivauditError(f"unknown result format {d['format']!r}; expected an audit result or "
                             f"{SUITE_FORMAT!r}")
    if d.get("schema_version") != SCHEMA_VERSION:
        raise _version_error(d.get("schema_version"), SCHEMA_VERSION, "an audit result")
    check(d, RESULT_SCHEMA, "audit result")
    check_result_values(d)
    return AuditResult.from_dict(d)


def loads(text: str) -> AuditResult | SuiteResult:
    """Parse JSON text written by `to_json`."""
    try:
        d = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise PrivauditError(f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    return from_obj(d)


def load(path: str | os.PathLike) -> AuditResult | SuiteResult:
    """Read a stored result: an `AuditResult` or a `SuiteResult`, whichever the file holds.

    Raises
    ------
    PrivauditError
        The file is missing or unreadable, is not JSON, has another schema version, or does not
        follow the schema; the message names the problem.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise PrivauditError(f"cannot read {os.fspath(path)}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise PrivauditError(f"{os.fspath(path)} is not a text (UTF-8 JSON) file") from None
    try:
        return loads(text)
    except PrivauditError as exc:
        raise PrivauditError(f"{os.fspath(path)}: {exc}") from None
    except RecursionError:
        raise PrivauditError(f"{os.fspath(path)}: nested too deeply to be a result") from None


__all__ = ["to_json", "to_dict", "load", "loads", "from_obj", "jsonable"]
