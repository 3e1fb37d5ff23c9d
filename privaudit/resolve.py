"""Names to objects: the one place a registered algorithm or ``module:attr`` becomes a black box.

The command line, the CI config and the pytest marker all call `build_target`; what they then
audit is an `audit.request.AuditRequest` (the core's request model), run by
`audit.request.run_request`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import algorithms
from algorithms.registry import CONTROL_PREFIXES
from audit.errors import PrivauditError

from .loading import load_blackbox


@dataclass(frozen=True)
class Target:
    """A built black box and how it was named.

    `label` is the registered name or ``module:attr``; `params` what it was built with, a
    variant's audit instance included (`algorithms.registry.Spec.instance`); `algorithm` the
    registered name (None for a user's object).
    """

    obj: Any
    label: str
    params: dict = field(default_factory=dict)
    algorithm: str | None = None

    def expectation_note(self) -> str:
        """A line saying that a registered variant is not meant to be flagged black-box, and why."""
        if self.algorithm is None:
            return ""
        variant = self.params.get("variant", "correct")
        expect = algorithms.spec(self.algorithm).expectation(variant)
        if variant == "correct" or variant.startswith(CONTROL_PREFIXES) or expect == "violation":
            return ""
        if expect == "pass":
            return (f"note: {self.algorithm} {variant}: the algorithm's wiring masks this bug, so a "
                    f"pass is expected (see `privaudit list --json`, its description)")
        why = ("no feasible black-box audit sees it; the white-box tests named in its docstring do"
               if expect == "white-box" else "privacy is intact; utility tests catch it")
        return f"note: {self.algorithm} {variant} is a {expect}-only bug ({why})"


def parse_params(items: list[str]) -> dict[str, str]:
    """``["k=v", ...]`` (the CLI's repeated ``--param``) as a dict of strings."""
    out = {}
    for item in items:
        if "=" not in item:
            raise PrivauditError(f"--param expects K=V, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def build_target(algorithm: str | None = None, blackbox: str | None = None, *,
                 params: dict | None = None, raw_params: dict[str, str] | None = None,
                 base_dir: str | os.PathLike | None = None) -> Target:
    """Build a registered `algorithm` with `params` (typed) or `raw_params` (strings, as typed on
    the command line), or load the user's `blackbox` (``module:attr``, looked up in `base_dir`)."""
    if (algorithm is None) == (blackbox is None):
        raise PrivauditError("name an ALGORITHM (see `privaudit list`) or a blackbox module:attr, "
                             "not both and not neither")
    given = dict(params or {})
    if raw_params:
        if algorithm is None:
            raise PrivauditError("--param/--variant apply to registered algorithms, not --blackbox")
        given.update(algorithms.coerce_params(algorithm, raw_params))
    if blackbox is not None:
        if given:
            raise PrivauditError("params apply to registered algorithms; a blackbox object is used "
                                 "as it is")
        return Target(load_blackbox(blackbox, base_dir), blackbox)
    obj = algorithms.get(algorithm, **given)
    instance = algorithms.spec(algorithm).instance(given.get("variant", "correct"))
    return Target(obj, algorithm, {**instance, **given}, algorithm)


__all__ = ["Target", "build_target", "parse_params"]
