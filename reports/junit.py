"""JUnit XML for a suite of audits: one ``<testcase>`` per audit, for CI test-report widgets.

A failed expectation is a ``<failure>`` whose message names epsilon_lower, the claim and the
witness; an audit that could not run is an ``<error>``. Regressions against a baseline are
failures only when asked (``fail_on_regression``), otherwise a line in ``<system-out>``.
Text is escaped by `xml.etree`; characters XML 1.0 cannot carry at all (control characters) are
replaced, so a black box's odd exception message cannot break the file.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from audit.errors import PrivauditError
from audit.files import atomic_write_text, ensure_dir
from audit.suite import SuiteEntry, SuiteResult

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: object) -> str:
    return _INVALID_XML.sub("\ufffd", str(text))


def _num(x: float) -> str:
    return f"{x:.4f}" if isinstance(x, float) else str(x)


def _witness_text(entry: SuiteEntry) -> str:
    r = entry.result
    if r is None or r.witness is None:
        return "no witness"
    w = r.witness
    return f"pair #{w.pair_index}, {w.direction}, event {w.event_text}"


def failure_message(entry: SuiteEntry) -> str:
    """One line saying why the entry's expectation failed (empty when it held)."""
    if entry.ok:
        return ""
    if entry.result is None:
        return f"{entry.name}: audit could not run: {entry.error or 'unknown error'}"
    r = entry.result
    claim = r.claim.describe()
    if r.violation:
        return (f"{entry.name}: privacy violation: epsilon_lower = {_num(r.epsilon_lower)} "
                f"(delta_lower = {r.delta_lower:.3g}) refutes the claim {claim} at confidence "
                f"{r.confidence:.6g}; witness: {_witness_text(entry)}")
    return (f"{entry.name}: expected a violation of {claim} but none was confirmed: "
            f"epsilon_lower = {_num(r.epsilon_lower)} (certifiable ceiling "
            f"{_num(r.max_certifiable_epsilon)}) at confidence {r.confidence:.6g}; best "
            f"witness: {_witness_text(entry)}")


def _details(entry: SuiteEntry) -> str:
    r = entry.result
    if r is None:
        return entry.error or ""
    lines = [r.summary()]
    t = max(r.confirmed, key=lambda b: (b.epsilon_lower, b.delta_lower)) if r.confirmed else None
    if t is not None:
        lines.append(f"  counts: p side {t.k_p}/{t.n_p}, q side {t.k_q}/{t.n_q}; "
                     f"p_lo = {t.p_lo:.6g}, q_hi = {t.q_hi:.6g}")
    w = r.witness
    if w is not None:
        lines.append(f"  inputs: a = {_short(w.a)}, b = {_short(w.b)}")
        if w.queries is not None:
            lines.append(f"  queries: {_short(w.queries)}")
    lines.append(f"  seed {r.seed}, runs explore/confirm {r.explore_runs}/{r.confirm_runs}, "
                 f"params {r.params}")
    lines += [f"  note: {n}" for n in r.notes]
    return "\n".join(lines)


def _short(v: object, limit: int = 300) -> str:
    s = str(v)
    return s if len(s) <= limit else s[:limit] + "…"


def render_junit(suite: SuiteResult, fail_on_regression: bool = False) -> str:
    """The suite as a JUnit XML document (a string, with XML declaration)."""
    if not isinstance(suite, SuiteResult):
        raise PrivauditError(f"JUnit output needs a SuiteResult, got {type(suite).__name__}")
    classname = "privaudit." + re.sub(r"[^A-Za-z0-9_.-]+", "_", suite.name or "suite")
    failures = errors = 0
    cases = []
    total = 0.0
    for e in suite.entries:
        t = float((e.result.timings or {}).get("total_s", 0.0)) if e.result is not None else 0.0
        total += t
        case = ET.Element("testcase", {"classname": classname, "name": _clean(e.name),
                                       "time": f"{t:.3f}"})
        props = ET.SubElement(case, "properties")
        prop = {"algorithm": e.algorithm, "expect": e.expect, "found": e.status}
        if e.result is not None:
            r = e.result
            prop.update({"epsilon_lower": _num(r.epsilon_lower), "delta_lower": f"{r.delta_lower:.6g}",
                         "claim": r.claim.describe(), "confidence": f"{r.confidence:.6g}",
                         "max_certifiable_epsilon": _num(r.max_certifiable_epsilon),
                         "seed": str(r.seed)})
        if e.baseline_epsilon is not None:
            prop["baseline_epsilon_lower"] = _num(e.baseline_epsilon)
            prop["regression"] = str(bool(e.regression)).lower()
        for k, v in prop.items():
            ET.SubElement(props, "property", {"name": k, "value": _clean(v)})
        out = []
        if e.result is None:
            errors += 1
            el = ET.SubElement(case, "error", {"type": "AuditError", "message": _clean(failure_message(e))})
            el.text = _clean(e.error or "")
        elif not e.ok:
            failures += 1
            kind = "PrivacyViolation" if e.result.violation else "MissedViolation"
            el = ET.SubElement(case, "failure", {"type": kind, "message": _clean(failure_message(e))})
            el.text = _clean(_details(e))
        elif e.regression and fail_on_regression:
            failures += 1
            msg = (f"{e.name}: regression: epsilon_lower {_num(e.result.epsilon_lower)} rose above "
                   f"the baseline's {_num(e.baseline_epsilon)} beyond statistical noise")
            el = ET.SubElement(case, "failure", {"type": "Regression", "message": _clean(msg)})
            el.text = _clean(_details(e))
        if e.result is not None:
            out.append(_details(e))
        if e.regression:
            out.append(f"regression against baseline (baseline epsilon_lower "
                       f"{_num(e.baseline_epsilon)})")
        if out:
            ET.SubElement(case, "system-out").text = _clean("\n".join(out))
        cases.append(case)
    root = ET.Element("testsuites", {"name": "privaudit", "tests": str(len(cases)),
                                     "failures": str(failures), "errors": str(errors),
                                     "time": f"{total:.3f}"})
    ts = ET.SubElement(root, "testsuite", {
        "name": _clean(suite.name), "tests": str(len(cases)), "failures": str(failures),
        "errors": str(errors), "skipped": "0", "time": f"{total:.3f}"})
    props = ET.SubElement(ts, "properties")
    for k, v in (("confidence", f"{suite.confidence:.6g}"), ("correction", suite.correction),
                 ("seed", str(suite.seed))):
        ET.SubElement(props, "property", {"name": k, "value": _clean(v)})
    ts.extend(cases)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(suite: SuiteResult, path: str | os.PathLike, fail_on_regression: bool = False) -> Path:
    """Write `render_junit(suite)` to `path` (parent directories are created)."""
    text = render_junit(suite, fail_on_regression)
    p = Path(path)
    if str(p.parent) and not p.parent.exists():
        ensure_dir(p.parent, "JUnit file's directory")
    return atomic_write_text(p, text, "JUnit file")


__all__ = ["render_junit", "write_junit", "failure_message"]
