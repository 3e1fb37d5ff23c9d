"""``privaudit report RESULT.json [--html FILE] [--md FILE] [--json FILE]``: re-render a stored
single-audit or suite result (DESIGN.md section 6).

With no output option the Markdown summary is printed. ``-`` as a FILE means standard output.
Bad input (unreadable file, not JSON, another schema version) exits 2 with one readable line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from audit.errors import PrivauditError
from audit.files import atomic_write_text, ensure_dir
from reports import load, render_html, render_markdown, to_json


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="re-render a stored result (result.json) as HTML, Markdown or JSON",
                       description="Re-render a stored audit or suite result. With no output option "
                                   "the Markdown summary is printed.")
    p.add_argument("result", metavar="RESULT.json", help="a result.json written by `privaudit audit "
                   "--out` or `privaudit ci` (single audit or suite)")
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    p.add_argument("--md", metavar="FILE", help="write a Markdown summary ('-': standard output)")
    p.add_argument("--json", metavar="FILE", help="write the result again as JSON of the current "
                   "schema ('-': standard output)")
    p.set_defaults(func=run)


def _write(target: str, text: str) -> None:
    if target == "-":
        sys.stdout.write(text)
        return
    path = Path(target)
    if str(path.parent) and not path.parent.exists():
        ensure_dir(path.parent, "output directory")
    atomic_write_text(path, text, "report")


def run(args: argparse.Namespace) -> int:
    """Render the stored result; 0 on success, 2 (one line on stderr) on bad input."""

    try:
        obj = load(args.result)
        outputs = []
        if args.json:
            outputs.append((args.json, to_json(obj)))
        if args.md:
            outputs.append((args.md, render_markdown(obj)))
        if args.html:
            if args.html == "-":
                raise PrivauditError("--html needs a file name")
            outputs.append((args.html, render_html(obj)))
        if not outputs:
            outputs.append(("-", render_markdown(obj)))
        for target, text in outputs:
            _write(target, text)
    except PrivauditError as exc:
        # Handled here too, so the module works under any driver, not only privaudit.cli.main.
        print(f"privaudit: error: {exc}", file=sys.stderr)
        return 2
    return 0


__all__ = ["add_parser", "run"]
