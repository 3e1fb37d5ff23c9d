"""The CI gate's configuration file (DESIGN.md section 6): read, validate, build.

A config is TOML with an optional ``[defaults]`` table and a list of ``[[audit]]`` tables::

    [defaults]
    confidence = 0.95        # suite-wide: P[any audit of a correct algorithm fails] <= 0.05
    seed = 0
    runner = "local"         # or "ray" (with address = "auto" / "ray://host:port")
    explore_runs = 100000
    confirm_runs = 1000000

    [[audit]]
    name = "Corollary 1, correct"
    algorithm = "df-cor1"            # or blackbox = "pkg.module:attr"
    params = { variant = "correct" }
    claim = { epsilon = 1.0 }        # optional; merged into the algorithm's own claim
    expect = "pass"                  # or "violation"

Every problem is reported before anything runs, all at once, each as
``FILE:LINE: where: key: reason`` (a `ConfigError`, which the CLI turns into exit code 2).
Line numbers come from scanning the text for the table header and the key, since the standard
library's TOML reader does not keep positions; when a key cannot be found the table's header
line is named instead.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import algorithms as registry
from audit import sequential, stats
from audit.budget import (
    DEFAULT_CONFIDENCE,
    DEFAULT_CONFIRM_RUNS,
    DEFAULT_EXPLORE_RUNS,
    Budget,
)
from audit.errors import PrivauditError
from audit.interfaces import declared_input_distance, is_learner
from audit.neighbours import check_input_neighbours, parse_input_distance
from audit.packing import DEFAULT_PACKING_RUNS, check_packable
from audit.request import AuditRequest, resolve_claim
from audit.types import Claim
from privaudit import input_search
from privaudit.loading import read_inputs
from privaudit.packing_family import resolve_family
from privaudit.resolve import build_target

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

RUNNERS = ("local", "ray")
EXPECTATIONS = ("pass", "violation")

TOP_KEYS = ("defaults", "audit")
DEFAULT_KEYS = ("confidence", "seed", "runner", "address", "explore_runs", "confirm_runs",
                "tests", "num_cpus", "chunk_runs", "sequential")
AUDIT_KEYS = ("name", "algorithm", "blackbox", "params", "claim", "expect", "explore_runs",
              "confirm_runs", "tests", "seed", "against", "pairs", "data", "queries",
              "input_distance", "input_length", "group", "packing", "packing_params",
              "sequential")
CLAIM_KEYS = ("epsilon", "delta", "neighbours", "scope")


class ConfigError(PrivauditError):
    """A CI config that cannot be run; the message lists every problem, one per line."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        n = len(problems)
        head = "invalid CI config" + (f" ({n} problems)" if n > 1 else "")
        super().__init__(head + ":\n  " + "\n  ".join(problems))


@dataclass
class AuditSpec:
    """One ``[[audit]]`` entry, validated, with its black box built.

    `obj` is the learner or mechanism to audit; `claim` the resolved claim (the object's own
    with the config's overrides applied); `pairs`, `data`, `queries` what to audit it on
    (None: the object's own attributes or, for a learner, the adversarial search).
    """

    name: str
    algorithm: str                       # registered name or "module:attr"
    expect: str
    params: dict
    claim: Claim
    explore_runs: int
    confirm_runs: int
    tests: int
    seed: int
    against: str = "claim"
    sequential: bool = False
    obj: Any = field(default=None, repr=False, compare=False)
    pairs: Any = field(default=None, repr=False, compare=False)
    data: Any = field(default=None, repr=False, compare=False)
    queries: Any = field(default=None, repr=False, compare=False)
    line: int | None = None
    warnings: list = field(default_factory=list)
    input_distance: Any = None
    group: int = 1                       # group distance of the pairs (audit.group)
    packing: Any = field(default=None, repr=False, compare=False)   # a PackingFamily, or None
    input_length: int | None = None      # a mechanism without pairs: search inputs of this length

    def request(self, confidence: float) -> AuditRequest:
        """This entry as the core's request model, at the per-audit `confidence`."""
        return AuditRequest(self.obj, claim=self.claim, against=self.against, pairs=self.pairs,
                            data=self.data, queries=self.queries, label=self.algorithm,
                            params=dict(self.params), input_distance=self.input_distance,
                            group=self.group, packing=self.packing,
                            budget=Budget(explore_runs=self.explore_runs,
                                          confirm_runs=self.confirm_runs, confidence=confidence,
                                          seed=self.seed, tests=self.tests,
                                          sequential=self.sequential))


@dataclass
class CIConfig:
    """A validated CI config: suite-wide settings and the audits."""

    path: str
    name: str
    confidence: float = DEFAULT_CONFIDENCE
    seed: int = 0
    runner: str = "local"
    address: str | None = None
    num_cpus: int | None = None
    chunk_runs: int | None = None
    audits: list = field(default_factory=list)      # list[AuditSpec]

    @property
    def audit_confidence(self) -> float:
        """Per-audit confidence after the suite-level Bonferroni split."""
        return per_audit_confidence(self.confidence, len(self.audits))

    @property
    def correction(self) -> str:
        m = len(self.audits)
        return f"bonferroni over {m} audit{'s' if m != 1 else ''}"


def per_audit_confidence(confidence: float, audits: int) -> float:
    """Bonferroni across a suite: each of `audits` audits runs at ``1 - (1 - confidence)/audits``.

    By the union bound the probability that *any* audit of a correct algorithm reports a
    violation is then at most ``1 - confidence``, whatever the dependence between audits.
    """
    return 1.0 - (1.0 - float(confidence)) / max(int(audits), 1)


# ---------------------------------------------------------------------------------------------
# locating keys in the text (for FILE:LINE messages)
# ---------------------------------------------------------------------------------------------
_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


class _Locator:
    """Finds the line of ``[defaults]``, of the i-th ``[[audit]]`` and of keys inside them."""

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.headers: list[tuple[int, str, bool]] = []   # (line index, table name, is array)
        for i, line in enumerate(self.lines):
            m = _HEADER.match(line)
            if m and not line.lstrip().startswith("#"):
                self.headers.append((i, m.group(1).strip(), line.lstrip().startswith("[[")))

    def _table(self, table: str, index: int | None) -> tuple[int, int] | None:
        """(header line index, end line index) of a table, or (-1, end) for the root table."""
        if table == "":
            end = self.headers[0][0] if self.headers else len(self.lines)
            return -1, end
        k = -1
        for h, (i, name, is_array) in enumerate(self.headers):
            if name != table:
                continue
            k += 1
            if index is None or k == index:
                # the table runs to the next header that is not one of its own sub-tables
                end = len(self.lines)
                for j, sub, _ in self.headers[h + 1:]:
                    if not sub.startswith(table + "."):
                        end = j
                        break
                return i, end
        return None

    def line(self, table: str, index: int | None = None, key: str | None = None) -> int | None:
        span = self._table(table, index)
        if span is None:
            return None
        start, end = span
        if key is not None:
            first = key.split(".")[0]
            pat = re.compile(r"^\s*(" + re.escape(first) + r"|\"" + re.escape(first) + r"\"|'"
                             + re.escape(first) + r"')\s*[.=]")
            sub = re.compile(r"^\s*\[\s*" + re.escape(f"{table}.{first}") + r"\s*\]")
            for i in range(start + 1, end):
                if pat.match(self.lines[i]) or sub.match(self.lines[i]):
                    return i + 1
        return start + 1 if start >= 0 else None


# ---------------------------------------------------------------------------------------------
# value checks
# ---------------------------------------------------------------------------------------------
class _Problems:
    def __init__(self, path: str, locator: _Locator):
        self.path, self.loc, self.items = path, locator, []

    def add(self, where: str, key: str | None, reason: str, table: str = "",
            index: int | None = None) -> None:
        line = self.loc.line(table, index, key)
        pos = f"{self.path}:{line}" if line else self.path
        self.items.append(f"{pos}: {where}{': ' + key if key else ''}: {reason}")


def _type_name(v: Any) -> str:
    return {bool: "boolean", int: "integer", float: "float", str: "string", dict: "table",
            list: "array"}.get(type(v), type(v).__name__)


def _pos_int(v: Any) -> str | None:
    if isinstance(v, bool) or not isinstance(v, int):
        return f"must be a positive integer, got {_type_name(v)} {v!r}"
    if v < 1:
        return f"must be a positive integer, got {v}"
    return None


def _seed(v: Any) -> str | None:
    if isinstance(v, bool) or not isinstance(v, int):
        return f"must be a non-negative integer, got {_type_name(v)} {v!r}"
    if v < 0:
        return f"must be a non-negative integer, got {v}"
    return None


def _confidence(v: Any) -> str | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return f"must be a number in (0, 1), got {_type_name(v)} {v!r}"
    if not (0.0 < float(v) < 1.0):
        return f"must be in (0, 1) (e.g. 0.95), got {v}"
    return None


def _boolean(v: Any) -> str | None:
    if not isinstance(v, bool):
        return f"must be true or false, got {_type_name(v)} {v!r}"
    return None


def _string(v: Any, choices: tuple | None = None) -> str | None:
    if not isinstance(v, str):
        return f"must be a string, got {_type_name(v)} {v!r}"
    if choices is not None and v not in choices:
        return f"must be one of {', '.join(repr(c) for c in choices)}, got {v!r}"
    if not v.strip():
        return "must not be empty"
    return None


def _param_type_error(value: Any, default: Any) -> str | None:
    """The registry's defaults give each parameter its type; TOML values are already typed."""
    if default is None:
        return None
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif isinstance(default, str):
        ok = isinstance(value, str)
    elif isinstance(default, (list, tuple)):
        ok = isinstance(value, list)
    else:
        ok = True
    if ok:
        return None
    return f"must be {_type_name(default)} like its default {default!r}, got {_type_name(value)} {value!r}"


# ---------------------------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------------------------
def load_config(path: str | Path) -> CIConfig:
    """Read and validate the CI config at `path`.

    Parameters
    ----------
    path : str or Path
        A TOML file. Every audit's black box is built (registry `get` or ``module:attr``
        import) and its ``pairs``/``data``/``queries`` files are read here, so that problems
        surface before any audit runs.

    Raises
    ------
    ConfigError
        Listing every problem as ``FILE:LINE: where: key: reason``.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError([f"{p}: cannot read the CI config: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError:
        raise ConfigError([f"{p}: the CI config is not UTF-8 text"]) from None
    return parse_config(text, str(p), base_dir=p.parent)


def parse_config(text: str, path: str = "<config>", base_dir: str | Path = ".") -> CIConfig:
    """Validate CI config `text` (see `load_config`); `base_dir` resolves relative file paths."""
    try:
        raw = tomllib.loads(text)
    except RecursionError:
        raise ConfigError([f"{path}: the CI config is nested too deeply"]) from None
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message already ends with "(at line L, column C)"
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        where = f"{path}:{m.group(1)}" if m else path
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise ConfigError([f"{where}: not valid TOML: {msg}" + (f" (column {m.group(2)})" if m else "")]) from None
    loc = _Locator(text)
    probs = _Problems(path, loc)
    for k in raw:
        if k not in TOP_KEYS:
            probs.add("top level", k, "unknown key; valid top-level tables: [defaults], [[audit]]")

    cfg = CIConfig(path=path, name=Path(path).stem if path != "<config>" else "privacy-ci")
    defaults = raw.get("defaults", {})
    d_budget = {"explore_runs": DEFAULT_EXPLORE_RUNS, "confirm_runs": DEFAULT_CONFIRM_RUNS,
                "tests": 1, "sequential": False}
    if not isinstance(defaults, dict):
        probs.add("top level", "defaults", "must be a table: [defaults]")
        defaults = {}
    for k, v in defaults.items():
        err = None
        if k not in DEFAULT_KEYS:
            err = f"unknown key; valid: {', '.join(DEFAULT_KEYS)}"
        elif k == "confidence":
            err = _confidence(v)
            if not err:
                cfg.confidence = float(v)
        elif k == "seed":
            err = _seed(v)
            if not err:
                cfg.seed = int(v)
        elif k == "runner":
            err = _string(v, RUNNERS)
            if not err:
                cfg.runner = v
        elif k == "address":
            err = _string(v)
            if not err:
                cfg.address = v
        elif k == "sequential":
            err = _boolean(v)
            if not err:
                d_budget[k] = bool(v)
        elif k in ("num_cpus", "chunk_runs"):
            err = _pos_int(v)
            if not err:
                setattr(cfg, k, int(v))
        else:  # explore_runs, confirm_runs, tests
            err = _pos_int(v)
            if not err:
                d_budget[k] = int(v)
        if err:
            probs.add("[defaults]", k, err, "defaults")
    if cfg.runner == "local" and cfg.address is not None:
        probs.add("[defaults]", "address", 'needs runner = "ray" (the local runner joins no cluster)',
                  "defaults")
    if cfg.runner == "local" and cfg.num_cpus is not None:
        probs.add("[defaults]", "num_cpus", 'applies to runner = "ray" only', "defaults")

    audits = raw.get("audit", [])
    if not isinstance(audits, list) or not all(isinstance(a, dict) for a in audits):
        probs.add("top level", "audit", "must be an array of tables: [[audit]] ...")
        audits = []
    if not audits and "audit" not in raw:
        probs.add("top level", None, "no audits: add at least one [[audit]] table")
    m = max(len(audits), 1)
    confidence_i = per_audit_confidence(cfg.confidence, m)
    names: dict[str, int] = {}
    for i, a in enumerate(audits):
        spec = _audit_spec(a, i, d_budget, cfg, confidence_i, probs, Path(base_dir))
        if spec is None:
            continue
        if spec.name in names:
            probs.add(f"[[audit]] #{i + 1} ({spec.name!r})", "name",
                      f"duplicate name {spec.name!r} (also audit #{names[spec.name] + 1}); names "
                      f"identify audits in JUnit and baselines: give each a distinct name",
                      "audit", i)
            continue
        names[spec.name] = i
        cfg.audits.append(spec)
    if probs.items:
        raise ConfigError(probs.items)
    return cfg


def _default_name(a: dict) -> str:
    base = a.get("algorithm") or a.get("blackbox") or "audit"
    params = a.get("params") if isinstance(a.get("params"), dict) else {}
    variant = params.get("variant")
    return f"{base}[{variant}]" if isinstance(variant, str) and variant != "correct" else str(base)


def _audit_spec(a: dict, i: int, d_budget: dict, cfg: CIConfig, confidence_i: float,
                probs: _Problems, base_dir: Path) -> AuditSpec | None:
    n0 = len(probs.items)
    label = a.get("name") if isinstance(a.get("name"), str) else _default_name(a)
    where = f"[[audit]] #{i + 1} ({label!r})"

    def bad(key: str | None, reason: str) -> None:
        probs.add(where, key, reason, "audit", i)

    for k in a:
        if k not in AUDIT_KEYS:
            bad(k, f"unknown key; valid: {', '.join(AUDIT_KEYS)}")
    if "name" in a and (err := _string(a["name"])):
        bad("name", err)
    algorithm, blackbox = a.get("algorithm"), a.get("blackbox")
    if (algorithm is None) == (blackbox is None):
        bad(None, 'give exactly one of algorithm = "registered-name" or blackbox = "module:attr"')
    for key, v in (("algorithm", algorithm), ("blackbox", blackbox)):
        if v is not None and (err := _string(v)):
            bad(key, err)
    if isinstance(blackbox, str) and ":" not in blackbox:
        bad("blackbox", f'must be "module:attr", got {blackbox!r}')
    expect = a.get("expect", "pass")
    if err := _string(expect, EXPECTATIONS):
        bad("expect", err)
    against = a.get("against", "claim")
    if err := _string(against, ("claim", "certified")):
        bad("against", err)
    budget = dict(d_budget)
    for k in ("explore_runs", "confirm_runs", "tests"):
        if k in a:
            if err := _pos_int(a[k]):
                bad(k, err)
            else:
                budget[k] = int(a[k])
    if "sequential" in a:
        if err := _boolean(a["sequential"]):
            bad("sequential", err)
        else:
            budget["sequential"] = bool(a["sequential"])
    seed = cfg.seed
    if "seed" in a:
        if err := _seed(a["seed"]):
            bad("seed", err)
        else:
            seed = int(a["seed"])
    params = a.get("params", {})
    if not isinstance(params, dict):
        bad("params", f"must be a table like {{ variant = \"correct\" }}, got {_type_name(params)}")
        params = {}
    if blackbox is not None and params:
        bad("params", "applies to registered algorithms; a blackbox object is used as it is")
    claim_over = a.get("claim", {})
    if not isinstance(claim_over, dict):
        bad("claim", f"must be a table like {{ epsilon = 1.0, delta = 0.0 }}, got {_type_name(claim_over)}")
        claim_over = {}
    for k in claim_over:
        if k not in CLAIM_KEYS:
            bad(f"claim.{k}", f"unknown claim key; valid: {', '.join(CLAIM_KEYS)}")
    if len(probs.items) > n0:
        return None

    # registry checks before building, so that each parameter gets its own message
    if algorithm is not None:

        try:
            s = registry.spec(algorithm)
        except PrivauditError as exc:
            bad("algorithm", str(exc))
            return None
        valid = s.params
        for k, v in params.items():
            if k not in valid:
                bad(f"params.{k}", f"unknown parameter of {algorithm}; valid: "
                                   f"{', '.join(sorted(valid)) or '(none)'}")
            elif k == "variant" and v not in s.variants:
                bad("params.variant", f"unknown variant {v!r} of {algorithm}; valid: "
                                      f"{', '.join(s.variants)}")
            elif err := _param_type_error(v, valid[k]):
                bad(f"params.{k}", err)
        if len(probs.items) > n0:
            return None
    try:
        # a blackbox's module is looked up next to the config
        target = build_target(algorithm, blackbox, params=params or None, base_dir=base_dir)
    except PrivauditError as exc:
        bad("params" if algorithm is not None and params else ("algorithm" if algorithm else "blackbox"),
            str(exc))
        return None
    except Exception as exc:  # a user's module failing at import is their bad input too
        bad("blackbox", f"importing it raised {type(exc).__name__}: {exc}")
        return None

    obj = target.obj
    try:
        claim = resolve_claim(obj, claim_over or None, against=against)
    except PrivauditError as exc:
        bad("claim", str(exc))
        return None

    learner = is_learner(obj)
    files: dict[str, Any] = {}
    for key in ("pairs", "data", "queries"):
        if key not in a:
            continue
        if err := _string(a[key]):
            bad(key, err)
            continue
        if key in ("data", "queries") and not learner:
            bad(key, f"applies to learners; {label} is a mechanism (give pairs = \"FILE.json\")")
            continue
        try:
            files[key] = read_inputs(learner, base_dir=base_dir, **{key: a[key]})[key]
        except PrivauditError as exc:
            bad(key, str(exc))
    relation = None
    if "input_distance" in a:
        if learner:
            bad("input_distance", f"applies to mechanisms; {label} is a learner (its neighbours "
                                  f"are its claim's dataset relation)")
        else:
            try:
                relation = parse_input_distance(a["input_distance"])
            except PrivauditError as exc:
                bad("input_distance", str(exc))
    input_length = a.get("input_length")
    if input_length is not None and (isinstance(input_length, bool)
                                     or not isinstance(input_length, int) or input_length < 1):
        bad("input_length", f"must be an integer >= 1, got {input_length!r}")
        input_length = None
    if not learner and len(probs.items) == n0:
        rel = relation or declared_input_distance(obj)
        given = files.get("pairs")
        if rel is not None and given is not None:
            for j, pair in enumerate(given):
                try:
                    a_in, b_in = pair
                    check_input_neighbours(a_in, b_in, rel, f"pair {j}")
                except (TypeError, ValueError) as exc:
                    bad("pairs", str(exc) if isinstance(exc, PrivauditError) else
                        f"pair {j} must be [a, b]")
                    break
    group, packing = _group_packing(a, obj, claim, files, bad, base_dir)
    if packing is not None and "confirm_runs" not in a:
        budget["confirm_runs"] = DEFAULT_PACKING_RUNS      # runs per dataset of the family
    if len(probs.items) > n0:
        return None

    spec = AuditSpec(label, algorithm or blackbox, expect, dict(params), claim,
                     budget["explore_runs"], budget["confirm_runs"], budget["tests"], seed,
                     against, obj=obj, line=probs.loc.line("audit", i),
                     input_distance=relation, group=group, packing=packing,
                     sequential=budget["sequential"], input_length=input_length,
                     **files)
    try:
        request = spec.request(confidence_i)
    except PrivauditError:
        request = None         # reported by the audit itself, as any run-time refusal
    if request is not None:
        try:   # a mechanism without pairs: can its inputs be searched for? (said before any run)
            input_search.plan(request, input_length)
        except PrivauditError as exc:
            bad("input_length" if input_length is not None else "pairs", str(exc))
            return None
    if packing is not None:
        return spec
    # An expectation that no outcome can meet is an impossible value: reject it now rather than
    # fail every build. A violation needs p_lo > e^eps q_hi + delta, and the most extreme
    # counts (n of n against 0 of n) give the largest possible margin.
    n, t = spec.confirm_runs, spec.tests
    alpha = stats.per_bound_alpha(confidence_i, t)
    if spec.sequential:   # the final analysis spends part of alpha: a little wider
        best_p, best_q = sequential.extreme_bounds(n, confidence_i, t)
    else:
        best_p, best_q = float(stats.cp_lower(n, n, alpha)), float(stats.cp_upper(0, n, alpha))
    detectable = best_p > math.exp(claim.epsilon) * best_q + claim.delta
    if not detectable:
        ceiling = (sequential.max_certifiable_epsilon if spec.sequential else
                   stats.max_certifiable_epsilon)(n, confidence_i, t, claim.delta)
        text = (f"with confirm_runs = {n} at the per-audit confidence {confidence_i:.6g} no "
                f"violation of {claim.describe()} can ever be confirmed (largest certifiable "
                f"epsilon {ceiling:.3f})")
        if expect == "violation":
            bad("expect", "a violation is expected but " + text + "; raise confirm_runs")
            return None
        spec.warnings.append(text + ": this pass is vacuous; raise confirm_runs")
    return spec


def _group_packing(a: dict, obj: Any, claim: Claim, files: dict, bad: Any,
                   base_dir: Any) -> tuple[int, Any]:
    """The entry's ``group`` (int >= 1) and ``packing`` family (with ``packing_params``)."""
    group = a.get("group", 1)
    if isinstance(group, bool) or not isinstance(group, int) or group < 1:
        bad("group", f"must be an integer >= 1, got {group!r}")
        group = 1
    if "packing_params" in a and "packing" not in a:
        bad("packing_params", "applies to packing")
    if "packing" not in a:
        return group, None
    if err := _string(a["packing"]):
        bad("packing", err)
        return group, None
    fparams = a.get("packing_params", {})
    if not isinstance(fparams, dict):
        bad("packing_params", f"must be a table like {{ M = 50 }}, got {_type_name(fparams)}")
        return group, None
    clash = [k for k in ("pairs", "data", "queries") if k in files] + (["group"] if group != 1 else [])
    if clash:
        bad("packing", f"a packing audit takes its datasets from the family; drop {', '.join(clash)}")
        return group, None
    try:
        check_packable(obj, claim)
        return group, resolve_family(a["packing"], obj, fparams, base_dir=base_dir)
    except PrivauditError as exc:
        bad("packing", str(exc))
        return group, None


__all__ = ["AuditSpec", "CIConfig", "ConfigError", "load_config", "parse_config",
           "per_audit_confidence"]
