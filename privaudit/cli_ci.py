"""`privaudit ci CONFIG.toml`: the privacy regression gate.

Exit codes: 0 every expectation held; 1 at least one did not (a violation of a claim expected to
hold, a planted bug no longer caught, an audit that crashed, or -- with ``--fail-on-regression``
-- a regression against the baseline); 2 bad input (the config, a file, a flag).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from audit import jsonnum
from audit.errors import PrivauditError
from audit.files import atomic_write_text, ensure_dir
from audit.suite import SuiteEntry, SuiteResult
from privaudit.ci_config import load_config
from privaudit.ci_run import make_suite_runner, run_suite
from privaudit.options import add_timeout
from reports import load, render_markdown, to_json, write_reports
from reports.junit import failure_message, write_junit


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ci", help="run a suite of audits as a CI gate (exit 0 ok, 1 failed, 2 bad input)",
        description="Run every [[audit]] of CONFIG.toml with the suite's false-alarm rate bounded "
                    "by 1 - confidence (Bonferroni across audits; fixed seeds). Exit 0 when every "
                    "expectation holds, 1 when one does not, 2 on bad input.")
    p.add_argument("config", metavar="CONFIG.toml", help="the suite (see the README's config reference)")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML (one testcase per audit)")
    p.add_argument("--summary", metavar="FILE",
                   help="write a Markdown summary (e.g. \"$GITHUB_STEP_SUMMARY\")")
    p.add_argument("--baseline", metavar="FILE",
                   help="compare epsilon_lower with this stored suite; written when it does not exist")
    p.add_argument("--update-baseline", action="store_true",
                   help="overwrite --baseline FILE with this run")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 also when an epsilon_lower regressed against the baseline")
    p.add_argument("--out", metavar="DIR", help="also write result.json, report.html, report.md")
    p.add_argument("--runner", choices=("ray", "local"), help="override the config's runner")
    p.add_argument("--address", help="override the config's Ray address (implies --runner ray)")
    p.add_argument("--check", action="store_true", help="validate the config and exit")
    p.add_argument("--json", action="store_true", help="print the suite result as JSON")
    p.add_argument("--quiet", action="store_true", help="no per-audit progress lines")
    add_timeout(p)
    p.set_defaults(func=run)


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return "inf" if x == float("inf") else f"{x:.4f}"


def table(suite) -> str:
    """A plain-text table of the suite (one row per audit)."""
    head = ("", "name", "expect", "found", "eps_lower", "delta_lower", "claim", "ceiling", "baseline")
    rows = []
    for e in suite.entries:
        r = e.result
        mark = "ok" if e.ok else "FAIL"
        if e.regression:
            mark += " (regressed)"
        rows.append((mark, e.name, e.expect, e.status,
                     _fmt(r.epsilon_lower) if r else "-",
                     f"{r.delta_lower:.3g}" if r else "-",
                     r.claim.describe().split(" [")[0] if r else "-",
                     _fmt(r.max_certifiable_epsilon) if r else "-",
                     _fmt(e.baseline_epsilon)))
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    out = [line(head), line(["-" * w for w in widths])] + [line(r) for r in rows]
    for e in suite.entries:
        if not e.ok:
            out.append(f"FAIL {failure_message(e)}")
    return "\n".join(out)


def _load_baseline(path: Path):

    obj = load(path)
    if not isinstance(obj, SuiteResult):
        raise PrivauditError(f"baseline {path} holds a single audit result, not a suite "
                             f"(write one with privaudit ci --baseline)")
    return obj


def markdown_summary(suite, guarantee: str, baseline_note: str | None) -> str:
    """The reports package's suite summary plus the guarantee and the regressions."""

    text = render_markdown(suite)
    extra = ["", f"_{guarantee}_"]
    regressed = [e for e in suite.entries if e.regression]
    if baseline_note:
        extra += ["", baseline_note]
    if regressed:
        extra += ["", "**Regressions against the baseline** (epsilon_lower rose beyond statistical noise):"]
        extra += [f"- {e.name}: {_fmt(e.baseline_epsilon)} → {_fmt(e.result.epsilon_lower)}"
                  for e in regressed]
    warn = [(e.name, n) for e in suite.entries if e.result is not None for n in e.result.notes
            if "vacuous" in n]
    if warn:
        extra += ["", "**Warnings:**"] + [f"- {name}: {n}" for name, n in warn]
    return text + "\n".join(extra) + "\n"


def run(args: argparse.Namespace) -> int:

    cfg = load_config(args.config)
    if args.address and args.runner == "local":
        raise PrivauditError(f"--address {args.address} joins a Ray cluster; it cannot be used "
                             f"with --runner local (drop one of them)")
    kind = "ray" if args.address else args.runner
    # a pass that no outcome could have turned into a failure is worth a word on the console
    for spec in cfg.audits:
        for w in spec.warnings:
            print(f"privaudit: warning: {spec.name}: {w}", file=sys.stderr)
    if args.check:
        print(f"{args.config}: {len(cfg.audits)} audits, suite confidence {cfg.confidence:g} "
              f"(per audit {cfg.audit_confidence:.6g}, {cfg.correction})")
        return 0
    baseline, baseline_path = None, Path(args.baseline) if args.baseline else None
    if args.update_baseline and baseline_path is None:
        raise PrivauditError("--update-baseline needs --baseline FILE")
    if baseline_path is not None and baseline_path.exists():
        baseline = _load_baseline(baseline_path)
    runner = make_suite_runner(cfg, kind, args.address)

    done: list = []

    def progress(entry) -> None:
        # JUnit is rewritten (atomically) after every audit: a run that dies mid-suite (a
        # segfault, SIGKILL, a runner crash) still leaves every finished audit in the JUnit file.
        done.append(entry)
        if args.junit:
            pending = [SuiteEntry(spec.name, spec.algorithm, spec.expect, False, None,
                                  "did not finish: privaudit stopped before this audit completed")
                       for spec in cfg.audits[len(done):]]
            partial = SuiteResult(name=cfg.name, confidence=cfg.confidence,
                                  correction=cfg.correction, entries=done + pending, seed=cfg.seed)
            write_junit(partial, args.junit, fail_on_regression=args.fail_on_regression)
        if not args.quiet:
            r = entry.result
            found = f"{entry.status}, eps_lower {_fmt(r.epsilon_lower)}" if r else f"ERROR: {entry.error}"
            print(f"[{'ok' if entry.ok else 'FAIL'}] {entry.name}: {found} "
                  f"(expected {entry.expect})", file=sys.stderr, flush=True)

    try:
        suite = run_suite(cfg, runner=runner, baseline=baseline, on_entry=progress)
    finally:
        runner.close()

    guarantee = (f"Suite-wide confidence {cfg.confidence:g}: each of {len(cfg.audits)} audits ran at "
                 f"{cfg.audit_confidence:.6g} ({cfg.correction}), so the probability that any audit "
                 f"of a correct algorithm fails is at most {1 - cfg.confidence:.3g}; seeds are "
                 f"fixed, so a re-run gives the same verdicts.")
    note = None
    if baseline_path is not None:
        if baseline is None or args.update_baseline:
            ensure_dir(baseline_path.parent, "baseline's directory")
            atomic_write_text(baseline_path, to_json(suite), "baseline")
            note = f"Baseline written to {baseline_path}."
        else:
            n = sum(e.baseline_epsilon is not None for e in suite.entries)
            k = sum(e.regression for e in suite.entries)
            note = f"Compared {n} audit(s) with the baseline {baseline_path}: {k} regression(s)."
    if args.junit:
        write_junit(suite, args.junit, fail_on_regression=args.fail_on_regression)
    if args.summary:
        atomic_write_text(args.summary, markdown_summary(suite, guarantee, note), "summary")
    if args.out:
        write_reports(suite, args.out)
    if args.json:
        print(jsonnum.dumps(suite.to_dict(), indent=2))
    else:
        print(table(suite))
        print(guarantee)
        if note:
            print(note)
    failed = not suite.ok or (args.fail_on_regression and any(e.regression for e in suite.entries))
    return 1 if failed else 0
