"""Reports for audit results and suites: versioned JSON, Markdown, self-contained HTML.

    >>> from reports import to_json, load, render_html, render_markdown, write_reports
    >>> paths = write_reports(result, "out/")     # result.json, report.html, report.md

JSON follows the schemas shipped in ``reports/schema/`` (``result-v1.json``, ``suite-v1.json``);
`load` reads either kind back and rejects other schema versions with a `PrivauditError`.
HTML reports are one file each, with inline CSS and inline SVG plots, no scripts and no network.
matplotlib is imported only when HTML is rendered.
"""

from __future__ import annotations

import os
from pathlib import Path

from audit.errors import PrivauditError

from .html import (
    render_html,  # matplotlib and jinja2 are imported when a page is rendered
)
from .jsonio import from_obj, load, loads, to_json
from .markdown import render_markdown
from .schema import validate


def write_reports(obj, out_dir: str | os.PathLike) -> dict:
    """Write ``result.json``, ``report.html`` and ``report.md`` for `obj` into `out_dir`.

    The directory is created if needed. Every report is rendered before anything is written,
    so a failure leaves no partial set of files.

    Returns
    -------
    dict
        ``{"json": Path, "html": Path, "markdown": Path}``.
    """
    texts = {"json": to_json(obj), "html": render_html(obj), "markdown": render_markdown(obj)}
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PrivauditError(f"cannot create the report directory {out}: {exc.strerror or exc}") from None
    names = {"json": "result.json", "html": "report.html", "markdown": "report.md"}
    paths = {}
    for key, name in names.items():
        path = out / name
        try:
            path.write_text(texts[key], encoding="utf-8")
        except OSError as exc:
            raise PrivauditError(f"cannot write {path}: {exc.strerror or exc}") from None
        paths[key] = path
    return paths


__all__ = ["to_json", "load", "loads", "from_obj", "render_html", "render_markdown",
           "write_reports", "validate"]
