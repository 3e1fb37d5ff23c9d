"""`privaudit list` and `privaudit audit`."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import algorithms
from algorithms.registry import CONTROL_PREFIXES
from attacks.search import STRATEGIES
from audit import jsonnum
from audit.budget import DEFAULT_CONFIRM_RUNS, Budget
from audit.errors import PrivauditError
from audit.files import atomic_write_text, ensure_dir, refuse_symlink
from audit.interfaces import is_learner
from audit.journal import Journal
from audit.packing import DEFAULT_PACKING_RUNS
from audit.request import AuditRequest, run_request
from audit.runners import LocalRunner
from audit.runners.factory import make_runner
from privaudit import input_search
from privaudit.loading import read_inputs, read_json
from privaudit.options import add_timeout, planned_runs, runner_choice
from privaudit.packing_family import coerce, resolve_family
from privaudit.progress import ProgressRunner
from privaudit.resolve import Target, build_target, parse_params
from reports import write_reports


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
                   help=f"confirmation runs per input (default {DEFAULT_CONFIRM_RUNS:,})")
    p.add_argument("--explore-runs", type=int, default=None,
                   help="exploration runs per input (default runs/10, at least 10,000)")
    p.add_argument("--tests", type=int, default=1,
                   help="candidates to confirm (Bonferroni over them; default 1)")
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--sequential", action="store_true",
                   help="anytime-valid confirmation: peek after every chunk and stop as soon as a "
                        "violation is certified or the claim cannot be shown violated within --runs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data", metavar="FILE.csv", help="a learner's dataset: features..., label")
    p.add_argument("--pairs", metavar="FILE.json", help="[[a, b], ...] inputs or {X, y} datasets")
    p.add_argument("--queries", metavar="FILE.json", help="query points [[x...], ...]")
    p.add_argument("--input-distance", metavar="NORM:BOUND",
                   help="a mechanism's input neighbour relation (hamming|l1|l2|linf|add-remove, "
                        "e.g. l1:1): pairs farther apart are refused (default: the mechanism's own "
                        "input_distance; none: pairs are audited unchecked)")
    p.add_argument("--input-length", type=int, metavar="K",
                   help="mechanisms without pairs: the length of one input; with an input "
                        "distance, privaudit searches for pairs (StatDP's patterns, then local "
                        "moves; default: the mechanism's own input_length)")
    p.add_argument("--search", action="store_true",
                   help="learners: find neighbouring datasets and queries by search (attacks/), "
                        "ignoring the learner's built-in pairs")
    p.add_argument("--search-runs", type=int, metavar="N",
                   help="total runs the search may spend (implies --search; default 8x explore runs)")
    p.add_argument("--candidates", type=int, metavar="K",
                   help="candidate (S, S', queries) triples the search starts from (implies --search)")
    p.add_argument("--strategy", choices=STRATEGIES,
                   help="search strategy (implies --search; default auto: guided by the learner's "
                        "exact oracle when it has one, else adaptive; white-box scores with the "
                        "oracle only)")
    p.add_argument("--group", type=int, default=1, metavar="K",
                   help="group distance: pairs may be up to K moves apart (found pairs are grown "
                        "to K by repeating the changed record); tested against (K eps, delta_K)")
    p.add_argument("--packing", metavar="FAMILY",
                   help="packing audit (success probabilities only): lb5, lemma11, sphere-packing, "
                        "FILE.json or module:attr; --runs is per dataset (default "
                        f"{DEFAULT_PACKING_RUNS:,})")
    p.add_argument("--family-param", action="append", default=[], metavar="K=V",
                   help="packing family parameter (repeatable), e.g. M=50, design=paper")
    p.add_argument("--runner", choices=("auto", "ray", "local"), default="auto",
                   help="auto (default: in-process for small jobs, a private local Ray instance "
                        "when it pays), ray or local")
    p.add_argument("--address", help="join an existing Ray cluster: auto, HOST:PORT or "
                                     "ray://HOST:PORT (the ray:// client needs privaudit[cluster])")
    p.add_argument("--num-cpus", type=int, help="CPUs for the embedded Ray instance")
    p.add_argument("--chunk-runs", type=int, help="runs per chunk (per Ray task)")
    p.add_argument("--out", metavar="DIR", help="write result.json, report.html, report.md here")
    p.add_argument("--resume", metavar="DIR", help="resume an interrupted audit from its --out DIR")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_timeout(p)
    p.set_defaults(func=run_audit)
    _DEFAULTS.update({k: p.get_default(k) for k in _RESUMABLE})


# ---------------------------------------------------------------------------------------------
# list
# ---------------------------------------------------------------------------------------------
def _short(x: object) -> str:
    """A number as people read it (4 significant digits: 0.954459 -> 0.9545); others as they are."""
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def run_list(args: argparse.Namespace) -> int:


    rows = [algorithms.info(n) for n in algorithms.names()]
    if args.json:
        print(jsonnum.dumps(rows, indent=2))
        return 0
    for r in rows:
        c = r["claim"] or {}
        claim = (f"eps={_short(c.get('epsilon'))}, delta={_short(c.get('delta'))}, "
                 f"{c.get('neighbours')}, {c.get('scope')}")
        print(f"{r['name']:<14} {r['kind']:<9} {claim}")
        print(f"{'':<14} {r['paper']} — {r['section']}")
        if r.get("unavailable"):
            print(f"{'':<14} unavailable: {r['unavailable']}")
        if r["expect"].get("correct") == "violation":
            print(f"{'':<14} expected verdict: violation (not private as published)")
        bugs = [v for v in r["variants"] if v != "correct"]
        if bugs:
            print(f"{'':<14} variants: {', '.join(bugs)}")
        for v, p in r["instances"].items():
            print(f"{'':<14} {v} audit instance: {', '.join(f'{k}={_short(x)}' for k, x in p.items())}")
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
def make_runner_from_args(args: argparse.Namespace, planned_runs: int = 0):
    """The runner the flags ask for; ``--runner auto`` picks by `runner_choice`."""
    kind = args.runner
    if kind == "local" and args.address:
        raise PrivauditError(f"--address {args.address} joins a Ray cluster; it cannot be used "
                             f"with --runner local (drop one of them)")
    if kind == "auto":
        kind, why = runner_choice(planned_runs, args.address, args.num_cpus)
        args.runner_note = f"runner: {kind} ({why})"
    if kind == "local":
        if args.num_cpus is not None:
            raise PrivauditError("--num-cpus applies to the Ray runner, not --runner local")
        return LocalRunner(chunk_runs=args.chunk_runs)
    return make_runner("ray", address=args.address, num_cpus=args.num_cpus, chunk_runs=args.chunk_runs)


def _target(args: argparse.Namespace) -> Target:
    raw = parse_params(args.param)
    if args.variant:
        if "variant" in raw and raw["variant"] != args.variant:
            raise PrivauditError(f"--variant {args.variant} conflicts with --param "
                                 f"variant={raw['variant']}; give one of them")
        raw["variant"] = args.variant
    if args.blackbox and args.algorithm:
        raise PrivauditError("give either ALGORITHM or --blackbox, not both")
    if args.blackbox and raw:
        raise PrivauditError("--param/--variant apply to registered algorithms, not --blackbox")
    if not (args.blackbox or args.algorithm):
        raise PrivauditError("name an ALGORITHM (see `privaudit list`) or --blackbox module:attr")
    return build_target(args.algorithm, args.blackbox, raw_params=raw,
                        base_dir=getattr(args, "blackbox_dir", None))


def _budget(args: argparse.Namespace) -> Budget:
    default = DEFAULT_PACKING_RUNS if getattr(args, "packing", None) else DEFAULT_CONFIRM_RUNS
    runs = default if args.runs is None else args.runs
    if runs < 1:
        raise PrivauditError(f"--runs must be >= 1, got {runs}")
    if args.explore_runs is not None and args.explore_runs < 1:
        raise PrivauditError(f"--explore-runs must be >= 1, got {args.explore_runs}")
    return Budget.for_runs(runs, args.explore_runs, confidence=args.confidence, seed=args.seed,
                           tests=args.tests, sequential=bool(getattr(args, "sequential", False)))


def _request(args: argparse.Namespace) -> tuple[AuditRequest, Target]:
    """The command line's words as an `AuditRequest`; every check before anything runs."""
    target = _target(args)
    claim = {k: v for k, v in (("epsilon", args.epsilon), ("delta", args.delta)) if v is not None}
    learner = is_learner(target.obj)
    search_options = _search_options(args)
    if not learner and search_options is not None:
        raise PrivauditError("--search/--search-runs/--candidates/--strategy apply to learners")
    inputs = read_inputs(learner, pairs=args.pairs, data=args.data, queries=args.queries)
    fparams = parse_params(getattr(args, "family_param", []) or [])
    if fparams and not getattr(args, "packing", None):
        raise PrivauditError("--family-param applies to --packing")
    packing = resolve_family(args.packing, target.obj, coerce(fparams)) \
        if getattr(args, "packing", None) else None
    req = AuditRequest(target.obj, claim=claim or None, against=args.against, budget=_budget(args),
                       search_options=search_options, label=target.label,
                       params=target.params, input_distance=args.input_distance,
                       group=getattr(args, "group", 1), packing=packing, **inputs)
    req.resolved_claim()   # a missing or invalid claim is bad input, reported before any run
    args.input_search = input_search.plan(req, getattr(args, "input_length", None))
    return req, target


_DEFAULTS: dict = {}   # the audit parser's defaults, to tell options given again on --resume

_RESUMABLE = ("algorithm", "blackbox", "param", "variant", "epsilon", "delta", "against", "runs",
              "explore_runs", "tests", "confidence", "seed", "data", "pairs", "queries",
              "chunk_runs", "search", "search_runs", "candidates", "strategy", "input_distance",
              "group", "packing", "family_param", "input_length",
              "sequential")  # chunk_runs: a resumed run must cut chunks the same way


_TYPES = {int: ("runs", "explore_runs", "tests", "seed", "chunk_runs", "search_runs", "candidates",
                "input_length"),
          float: ("epsilon", "delta", "confidence"),
          str: ("algorithm", "blackbox", "variant", "against", "data", "pairs", "queries",
                "strategy", "input_distance", "blackbox_dir"),
          bool: ("search",)}
_PATHS = ("data", "pairs", "queries")


def _check_saved(saved: object, path: Path) -> dict:
    """DIR/command.json, validated: a table of the resumable options with their types."""
    if not isinstance(saved, dict):
        raise PrivauditError(f"{path} must hold a JSON object (the recorded command)")
    unknown = sorted(set(saved) - set(_RESUMABLE) - {"blackbox_dir"})
    if unknown:
        raise PrivauditError(f"{path}: unknown keys {unknown}; was it written by privaudit audit?")
    for typ, keys in _TYPES.items():
        for k in keys:
            v = saved.get(k)
            ok = v is None or (isinstance(v, typ) and not (typ is not bool and isinstance(v, bool))) \
                or (typ is float and isinstance(v, int) and not isinstance(v, bool))
            if not ok:
                raise PrivauditError(f"{path}: {k} must be {typ.__name__} or null, got {v!r}")
    p = saved.get("param")
    if p is not None and not (isinstance(p, list) and all(isinstance(x, str) for x in p)):
        raise PrivauditError(f"{path}: param must be a list of K=V strings, got {p!r}")
    return saved


def _apply_resume(args: argparse.Namespace) -> None:
    """`--resume DIR`: rerun the command recorded in DIR with DIR's journal.

    The recorded command may name a ``--blackbox`` module: resuming imports and runs it, from
    the folder recorded with it (README, "Security"). Options given again must agree with the
    recorded ones (a different ``--runs`` would silently be ignored otherwise).
    """
    d = Path(args.resume)
    if not d.is_dir():
        raise PrivauditError(f"--resume {args.resume}: no such directory")
    path = d / "command.json"
    saved = _check_saved(read_json(path, "resume"), path)
    for k in _RESUMABLE:
        given, default = getattr(args, k, None), _DEFAULTS.get(k)
        if k in saved and given != default and given != saved[k]:
            flag = "--" + k.replace("_", "-")
            raise PrivauditError(f"--resume {args.resume}: {flag} {given!r} conflicts with the "
                                 f"recorded {k} = {saved[k]!r} (drop {flag} to resume, or start "
                                 f"a new --out DIR)")
    if args.out is not None and Path(args.out).resolve() != d.resolve():
        raise PrivauditError(f"--resume writes into {args.resume}; drop --out {args.out}")
    for k in _RESUMABLE:
        if k in saved:
            setattr(args, k, saved[k])
    args.blackbox_dir = saved.get("blackbox_dir")
    args.out = args.resume
    if args.blackbox and not args.quiet and not args.json:
        print(f"privaudit: resuming imports {args.blackbox} (recorded in {path}) from "
              f"{args.blackbox_dir or 'the working directory'}", file=sys.stderr)


def _command_record(args: argparse.Namespace) -> dict:
    """The options to store in command.json, file paths made absolute (resume from anywhere)."""
    rec = {k: getattr(args, k) for k in _RESUMABLE}
    for k in _PATHS:
        if rec.get(k) is not None:
            rec[k] = str(Path(rec[k]).resolve())
    if args.blackbox:
        rec["blackbox_dir"] = getattr(args, "blackbox_dir", None) or str(Path.cwd().resolve())
    return rec


def run_audit(args: argparse.Namespace) -> int:
    if args.resume:
        _apply_resume(args)
    # every check of the input comes before anything is started or written
    req, target = _request(args)

    out = Path(args.out) if args.out else None
    # Long runs lose no finished work: without --out the journal goes to a scratch directory
    # that is removed on success and kept (with a resume hint) if the run stops early.
    workdir = ensure_dir(out, "--out directory") if out is not None else \
        Path(tempfile.mkdtemp(prefix="privaudit-"))
    if out is not None:   # refuse before anything is written into it
        for name in ("result.json", "report.html", "report.md", "command.json", "journal.jsonl"):
            refuse_symlink(out / name, "output file")
    atomic_write_text(workdir / "command.json", json.dumps(_command_record(args), indent=2),
                      "command record")
    journal = Journal(workdir / "journal.jsonl")

    runner = None
    search_note = None
    try:
        if getattr(args, "input_search", None) is not None:
            req, search_note = input_search.search(req, args.input_search)
        runner = make_runner_from_args(args, planned_runs(req))
        if getattr(args, "runner_note", None) and not args.json:
            print(f"privaudit: {args.runner_note}", file=sys.stderr)
        # SIGTERM stops like Ctrl-C (the supervisor's handler), leaving the journal valid;
        # progress bars are per phase, with totals and ETA, and only on a terminal.
        if not args.quiet:
            runner = ProgressRunner(runner)
        result = run_request(req, runner=runner, journal=journal)
        if search_note:
            result.notes = list(result.notes) + [search_note]
    except BaseException:
        if len(journal):
            print(f"privaudit: {len(journal)} finished chunks are kept in {workdir}; continue with: "
                  f"privaudit audit --resume {workdir}", file=sys.stderr)
        elif out is None:
            shutil.rmtree(workdir, ignore_errors=True)
        raise  # the supervisor (privaudit.supervise) decides the exit code
    finally:
        if runner is not None:
            runner.close()
        journal.close()
    if out is None:
        shutil.rmtree(workdir, ignore_errors=True)
    if out is not None:
        write_reports(result, out)
    if args.json:
        print(jsonnum.dumps(result.to_dict(), indent=2))
    else:
        print(result.summary())
        for n in result.notes:
            print(f"  note: {n}")
        note = target.expectation_note()
        if note:
            print("  " + note)
        if out is not None:
            print(f"  reports: {out / 'result.json'}, {out / 'report.html'}, {out / 'report.md'}")
    return 1 if result.violation else 0


def _search_options(args: argparse.Namespace) -> dict | None:
    """The search flags as `audit_learner(search_options=...)`; None when no flag was given."""
    opts = {k: getattr(args, k, None) for k in ("search_runs", "candidates", "strategy")}
    opts = {k: v for k, v in opts.items() if v is not None}
    for k in ("search_runs", "candidates"):
        if k in opts and opts[k] < 1:
            raise PrivauditError(f"--{k.replace('_', '-')} must be >= 1, got {opts[k]}")
    return opts if opts or getattr(args, "search", False) else None
