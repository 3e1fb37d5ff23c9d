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

from audit.files import atomic_write_text, ensure_dir, refuse_symlink

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
    out = ensure_dir(out_dir, "report directory")
    names = {"json": "result.json", "html": "report.html", "markdown": "report.md"}
    for name in names.values():   # refuse before writing any, so no partial set is left
        refuse_symlink(out / name, "report")
    # each file is replaced atomically (audit.files): a reader never sees half a report
    return {key: atomic_write_text(out / name, texts[key], "report") for key, name in names.items()}


__all__ = ["to_json", "load", "loads", "from_obj", "render_html", "render_markdown",
           "write_reports", "validate"]
