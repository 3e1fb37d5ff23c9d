"""`privaudit list` and `privaudit audit`."""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from .errors import PrivauditError

DEFAULT_RUNS = 1_000_000


# ---------------------------------------------------------------------------------------------
# parsers
# ---------------------------------------------------------------------------------------------
def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list", help="every algorithm with paper, claim, variants")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run_list)

    p = sub.add_parser("audit", help="audit a registered algorithm or your own black box",
                       description="Audit ALGORITHM (see `privaudit list`) or --blackbox module:attr. "
                                   "Exit 0: no violation; 1: violation confirmed; 2: bad input.")
    p.add_argument("algorithm", nargs="?", help="registered algorithm name")
    p.add_argument("--blackbox", metavar="MODULE:ATTR", help="your own Learner or Mechanism object")
    p.add_argument("--param", action="append", default=[], metavar="K=V",
                   help="algorithm parameter (repeatable)")
    p.add_argument("--variant", help="short for --param variant=V (planted bugs: bv-...)")
    p.add_argument("--epsilon", type=float, help="override the claimed epsilon")
    p.add_argument("--delta", type=float, help="override the claimed delta")
    p.add_argument("--against", choices=("claim", "certified"), default="claim",
                   help="audit against the paper's claim or the certified bound for these parameters")
    p.add_argument("--runs", type=int, default=None,
                   help=f"confirmation runs per input (default {DEFAULT_RUNS:,})")
    p.add_argument("--explore-runs", type=int, default=None,
                   help="exploration runs per input (default runs/10, at least 10,000)")
    p.add_argument("--tests", type=int, default=1,
                   help="candidates to confirm (Bonferroni over them; default 1)")
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data", metavar="FILE.csv", help="a learner's dataset: features..., label")
    p.add_argument("--pairs", metavar="FILE.json", help="[[a, b], ...] inputs or {X, y} datasets")
    p.add_argument("--queries", metavar="FILE.json", help="query points [[x...], ...]")
    p.add_argument("--search", action="store_true",
                   help="learners: find neighbouring datasets and queries by search (attacks/), "
                        "ignoring the learner's built-in pairs")
    p.add_argument("--search-runs", type=int, metavar="N",
                   help="total runs the search may spend (implies --search; default 8x explore runs)")
    p.add_argument("--candidates", type=int, metavar="K",
                   help="candidate (S, S', queries) triples the search starts from (implies --search)")
    p.add_argument("--strategy", choices=("exhaustive", "random", "adaptive", "white-box"),
                   help="search strategy (implies --search; default adaptive; white-box uses the "
                        "learner's exact oracle)")
    p.add_argument("--runner", choices=("ray", "local"), default="ray",
                   help="ray (default: a local Ray instance started automatically) or local")
    p.add_argument("--address", help="join an existing Ray cluster: auto or ray://HOST:PORT")
    p.add_argument("--num-cpus", type=int, help="CPUs for the embedded Ray instance")
    p.add_argument("--chunk-runs", type=int, help="runs per chunk (per Ray task)")
    p.add_argument("--out", metavar="DIR", help="write result.json, report.html, report.md here")
    p.add_argument("--resume", metavar="DIR", help="resume an interrupted audit from its --out DIR")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run_audit)


# ---------------------------------------------------------------------------------------------
# list
# ---------------------------------------------------------------------------------------------
def run_list(args: argparse.Namespace) -> int:
    import algorithms

    from algorithms.registry import CONTROL_PREFIXES

    rows = [algorithms.info(n) for n in algorithms.names()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        c = r["claim"] or {}
        claim = f"eps={c.get('epsilon')}, delta={c.get('delta')}, {c.get('neighbours')}, {c.get('scope')}"
        print(f"{r['name']:<14} {r['kind']:<9} {claim}")
        print(f"{'':<14} {r['paper']} — {r['section']}")
        bugs = [v for v in r["variants"] if v != "correct"]
        if bugs:
            print(f"{'':<14} variants: {', '.join(bugs)}")
        for v, p in r["instances"].items():
            print(f"{'':<14} {v} audit instance: {', '.join(f'{k}={x}' for k, x in p.items())}")
        for kind, what in (("white-box", "white-box-only bugs"), ("utility", "utility-only bugs"),
                           ("pass", "bugs masked by the wiring")):
            only = [v for v, e in r["expect"].items()
                    if e == kind and v != "correct" and not v.startswith(CONTROL_PREFIXES)]
            if only:
                print(f"{'':<14} {what} (a black-box audit passes them): {', '.join(only)}")
    return 0


# ---------------------------------------------------------------------------------------------
# audit
# ---------------------------------------------------------------------------------------------
def _parse_params(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise PrivauditError(f"--param expects K=V, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def load_blackbox(spec: str) -> Any:
    """Import ``module:attr`` (attr may be dotted); a class is instantiated without arguments."""
    if ":" not in spec:
        raise PrivauditError(f"--blackbox expects module:attr, got {spec!r}")
    mod_name, attr = spec.split(":", 1)
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
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
    if not (callable(getattr(obj, "predict", None)) or callable(getattr(obj, "sample", None))):
        raise PrivauditError(f"{spec} is neither a Learner (predict) nor a Mechanism (sample)")
    return obj


def _read_json(path: str, what: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as exc:
        raise PrivauditError(f"cannot read {what} file {path!r}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise PrivauditError(f"{what} file {path!r} is not valid JSON: line {exc.lineno}: {exc.msg}") from None


def read_csv_dataset(path: str):
    """features..., label per row; a first row with no numeric cell is a header and skipped."""
    from .types import Dataset

    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = [r for r in csv.reader(f) if r and any(c.strip() for c in r)]
    except OSError as exc:
        raise PrivauditError(f"cannot read data file {path!r}: {exc.strerror}") from None
    def _is_number(c: str) -> bool:
        try:
            float(c)
            return True
        except ValueError:
            return False

    if rows and not any(_is_number(c) for c in rows[0]):  # a header: no cell is a number
        rows = rows[1:]
    if not rows:
        raise PrivauditError(f"data file {path!r} has no rows")
    widths = {len(r) for r in rows}
    if len(widths) != 1 or widths.pop() < 2:
        raise PrivauditError(f"data file {path!r}: every row needs the same number (>= 2) of columns: "
                             f"features..., label")
    try:
        arr = np.array([[float(c) for c in r] for r in rows])
    except ValueError as exc:
        raise PrivauditError(f"data file {path!r}: non-numeric cell ({exc})") from None
    return Dataset(arr[:, :-1], arr[:, -1])


def _build(args: argparse.Namespace) -> Any:
    raw = _parse_params(args.param)
    if args.variant:
        raw["variant"] = args.variant
    if args.blackbox:
        if args.algorithm:
            raise PrivauditError("give either ALGORITHM or --blackbox, not both")
        if raw:
            raise PrivauditError("--param/--variant apply to registered algorithms, not --blackbox")
        return load_blackbox(args.blackbox), {}
    if not args.algorithm:
        raise PrivauditError("name an ALGORITHM (see `privaudit list`) or --blackbox module:attr")
    import algorithms

    params = algorithms.coerce_params(args.algorithm, raw)
    obj = algorithms.get(args.algorithm, **params)
    # Record what was built, a variant's audit instance included (registry.Spec.instance).
    instance = algorithms.spec(args.algorithm).instance(params.get("variant", "correct"))
    return obj, {**instance, **params}


def _claim(obj: Any, args: argparse.Namespace):
    from dataclasses import replace

    from .types import Claim

    base = getattr(obj, "certified", None) if args.against == "certified" else None
    base = base or getattr(obj, "claim", None)
    if base is None:
        if args.epsilon is None:
            raise PrivauditError(f"{getattr(obj, 'name', obj)!r} has no claim: pass --epsilon")
        base = Claim(0.0)
    changes = {k: v for k, v in (("epsilon", args.epsilon), ("delta", args.delta)) if v is not None}
    return replace(base, **changes) if changes else base


def make_runner_from_args(args: argparse.Namespace):
    from .runners import LocalRunner

    if args.runner == "local" and not args.address:
        if args.num_cpus is not None:
            raise PrivauditError("--num-cpus applies to the Ray runner, not --runner local")
        return LocalRunner(chunk_runs=args.chunk_runs)
    from .runners.factory import make_runner

    return make_runner("ray", address=args.address, num_cpus=args.num_cpus, chunk_runs=args.chunk_runs)


def _budgets(args: argparse.Namespace) -> tuple[int, int]:
    runs = DEFAULT_RUNS if args.runs is None else args.runs
    if runs < 1:
        raise PrivauditError(f"--runs must be >= 1, got {runs}")
    explore = args.explore_runs if args.explore_runs is not None else max(10_000, runs // 10)
    if explore < 1:
        raise PrivauditError(f"--explore-runs must be >= 1, got {explore}")
    return runs, explore


_RESUMABLE = ("algorithm", "blackbox", "param", "variant", "epsilon", "delta", "against", "runs",
              "explore_runs", "tests", "confidence", "seed", "data", "pairs", "queries",
              "chunk_runs", "search", "search_runs", "candidates", "strategy")  # chunk_runs: a resumed run must cut chunks the same way


def _apply_resume(args: argparse.Namespace) -> None:
    """`--resume DIR`: rerun the command recorded in DIR with DIR's journal."""
    path = Path(args.resume) / "command.json"
    saved = _read_json(str(path), "resume")
    for k in _RESUMABLE:
        if k in saved:
            setattr(args, k, saved[k])
    args.out = args.resume


def _learner_pairs_from_json(pairs: list) -> list:
    from .types import Dataset

    out = []
    for i, item in enumerate(pairs):
        if not (isinstance(item, list) and len(item) == 2):
            raise PrivauditError(f"--pairs: item {i} must be a pair [S, S'] of datasets")
        out.append((Dataset.from_dict(item[0]), Dataset.from_dict(item[1])))
    return out


def run_audit(args: argparse.Namespace) -> int:
    from .auditor import audit, audit_learner
    from .journal import Journal, interrupt_on_sigterm
    from .progress import ProgressRunner
    from .interfaces import is_learner

    if args.resume:
        _apply_resume(args)
    # every check of the input comes before anything is started or written
    obj, params = _build(args)
    claim = _claim(obj, args)
    runs, explore = _budgets(args)
    search_options = _search_options(args)
    pairs = _read_json(args.pairs, "pairs") if args.pairs else None
    queries = _read_json(args.queries, "queries") if args.queries else None
    data = read_csv_dataset(args.data) if args.data else None
    if pairs is not None and not isinstance(pairs, list):
        raise PrivauditError("--pairs must hold a JSON list of [a, b] pairs")
    learner = is_learner(obj)
    if learner and pairs is not None:
        pairs = _learner_pairs_from_json(pairs)
    if not learner:
        if search_options is not None:
            raise PrivauditError("--search/--search-runs/--candidates/--strategy apply to learners")
        if data is not None or queries is not None:
            raise PrivauditError("--data/--queries apply to learners; a mechanism takes --pairs")

    out = Path(args.out) if args.out else None
    # Long runs lose no finished work: without --out the journal goes to a scratch directory
    # that is removed on success and kept (with a resume hint) if the run stops early.
    workdir = out if out is not None else Path(tempfile.mkdtemp(prefix="privaudit-"))
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "command.json").write_text(json.dumps({k: getattr(args, k) for k in _RESUMABLE}, indent=2))
    journal = Journal(workdir / "journal.jsonl")

    runner = None
    try:
        runner = make_runner_from_args(args)
        # SIGTERM stops like Ctrl-C, leaving the journal valid; progress bars are per phase, with
        # totals and ETA, and only on a terminal.
        interrupt_on_sigterm()
        if not args.quiet:
            runner = ProgressRunner(runner)
        common = dict(claim=claim, confidence=args.confidence, explore_runs=explore, confirm_runs=runs,
                      seed=args.seed, runner=runner, tests=args.tests, journal=journal)
        if learner:
            result = audit_learner(obj, data=data, pairs=pairs, queries=queries, against=args.against,
                                   search_options=search_options, **common)
        else:
            result = audit(obj, pairs, **common)
    except BaseException as exc:
        if len(journal):
            print(f"privaudit: {len(journal)} finished chunks are kept in {workdir}; continue with: "
                  f"privaudit audit --resume {workdir}", file=sys.stderr)
        elif out is None:
            shutil.rmtree(workdir, ignore_errors=True)
        if isinstance(exc, KeyboardInterrupt):
            print("privaudit: interrupted", file=sys.stderr)
            return 130
        raise
    finally:
        if runner is not None:
            runner.close()
        journal.close()
    if out is None:
        shutil.rmtree(workdir, ignore_errors=True)
    result.params = dict(params) or result.params
    result.against = args.against
    if out is not None:
        from reports import write_reports

        write_reports(result, out)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(result.summary())
        note = _expectation_note(args, params)
        if note:
            print(note)
        if out is not None:
            print(f"  reports: {out / 'result.json'}, {out / 'report.html'}, {out / 'report.md'}")
    return 1 if result.violation else 0


def _expectation_note(args: argparse.Namespace, params: dict) -> str:
    """A line saying that a registered variant is not meant to be flagged black-box, and why."""
    if not args.algorithm:
        return ""
    import algorithms

    from algorithms.registry import CONTROL_PREFIXES

    variant = params.get("variant", "correct")
    expect = algorithms.spec(args.algorithm).expectation(variant)
    if variant == "correct" or variant.startswith(CONTROL_PREFIXES) or expect == "violation":
        return ""
    if expect == "pass":
        return (f"  note: {args.algorithm} {variant}: the algorithm's wiring masks this bug, so a "
                f"pass is expected (see `privaudit list --json`, its description)")
    why = ("no feasible black-box audit sees it; the white-box tests named in its docstring do"
           if expect == "white-box" else "privacy is intact; utility tests catch it")
    return f"  note: {args.algorithm} {variant} is a {expect}-only bug ({why})"


def _search_options(args: argparse.Namespace) -> dict | None:
    """The search flags as `audit_learner(search_options=...)`; None when no flag was given."""
    opts = {k: getattr(args, k, None) for k in ("search_runs", "candidates", "strategy")}
    opts = {k: v for k, v in opts.items() if v is not None}
    for k in ("search_runs", "candidates"):
        if k in opts and opts[k] < 1:
            raise PrivauditError(f"--{k.replace('_', '-')} must be >= 1, got {opts[k]}")
    return opts if opts or getattr(args, "search", False) else None
