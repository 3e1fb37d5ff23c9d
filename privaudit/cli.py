"""The `privaudit` command line (DESIGN.md section 6).

Each subcommand lives in its own module exposing ``add_parser(subparsers)`` and ``run(args)``.
Exit codes: 0 success (audit passed), 1 a violation / failed expectation, 2 bad input.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from audit import __version__
from audit.errors import PrivauditError

SUBCOMMANDS = ("privaudit.cli_audit", "privaudit.cli_report", "privaudit.cli_ci")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors: one line, exit code 2
        self.print_usage(sys.stderr)
        print(f"privaudit: error: {message}", file=sys.stderr)
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
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except PrivauditError as exc:
        print(f"privaudit: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("privaudit: interrupted; finished chunks are kept in the journal "
              "(re-run with --resume DIR to continue)", file=sys.stderr)
        return 130


def entry() -> None:  # pragma: no cover - console script
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
