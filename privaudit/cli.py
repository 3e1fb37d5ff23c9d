"""The `privaudit` command line (DESIGN.md section 6).

Each subcommand lives in its own module exposing ``add_parser(subparsers)`` and ``run(args)``.
Exit codes: 0 success (audit passed), 1 a violation / failed expectation, 2 bad input or a
failing black box, 3 internal error, 130 interrupted (see `privaudit.supervise`).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from audit import __version__
from privaudit import launch
from privaudit.supervise import (EXIT_BROKEN_PIPE, EXIT_OK, EXIT_VIOLATION, silence_stdout,
                                 supervise)

SUBCOMMANDS = ("privaudit.cli_audit", "privaudit.cli_report", "privaudit.cli_ci")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors: one line, exit code 2
        # (the full usage of `audit` runs to a dozen lines; --help shows it on request)
        print(f"privaudit: error: {message} (see `{self.prog} --help`)", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="privaudit",
                     description="Empirical differential-privacy auditing of learners and mechanisms.")
    parser.add_argument("--version", action="version", version=f"privaudit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for mod in SUBCOMMANDS:
        importlib.import_module(mod).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse `argv` and run the command under the supervisor (`privaudit.supervise`).

    Exit codes: 0 all claims held; 1 a violation confirmed / a CI expectation failed; 2 bad input
    or a failing black box; 3 an internal error (the trace is written to a file); 130 interrupted.
    """
    parser = build_parser()
    args = parser.parse_args(argv)   # argparse's own errors and --help/--version exit here
    trace_dir = getattr(args, "out", None)
    if trace_dir is not None and not Path(trace_dir).is_dir():
        trace_dir = None
    return supervise(lambda: args.func(args), timeout=getattr(args, "timeout", None),
                     trace_dir=trace_dir)


def child_main() -> None:
    """The command in `privaudit.launch`'s child: run it, report the decided code, exit with it."""
    launch.take_verdict_fd()
    try:
        code = main()
    except SystemExit as exc:   # argparse: --help / --version (0) and usage errors (2)
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError, OSError):
        # the reader went away (`privaudit ... | head`): as `supervise` reports it
        silence_stdout()
        if code in (EXIT_OK, EXIT_VIOLATION):
            code = EXIT_BROKEN_PIPE
    launch.report(code)
    sys.exit(code)


def entry() -> None:  # pragma: no cover - the console script is privaudit.launch:entry
    launch.entry()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
