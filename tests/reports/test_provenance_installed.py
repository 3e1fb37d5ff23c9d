"""Provenance when the audited code is installed (no git checkout): a hash of its sources."""

from __future__ import annotations

import algorithms
import audit.auditor
from audit import audit as run
from audit.provenance import code_digest, source_digest
from reports import render_html, render_markdown


def test_installed_code_is_identified_by_its_source_hash(monkeypatch):
    monkeypatch.setattr(audit.auditor, "git_commit", lambda *_: None)   # as after `pip install .`
    m = algorithms.get("dp-rr")
    r = run(m, explore_runs=1000, confirm_runs=1000)
    assert r.versions["git_commit"] is None
    assert r.versions["code_sha256"] == code_digest(m) and len(code_digest(m)) == 16
    assert r.versions["privaudit_source_sha256"] == source_digest()
    assert f"not a git checkout; source sha256 {code_digest(m)}" in render_html(r)
    assert f"source sha256 {code_digest(m)}" in render_markdown(r)


def test_source_hash_changes_with_the_code(tmp_path, monkeypatch):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("class M:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import mypkg
    before = code_digest(mypkg.M())
    (pkg / "extra.py").write_text("x = 1\n")
    from audit.provenance import _tree_digest
    _tree_digest.cache_clear()
    assert before is not None and code_digest(mypkg.M()) != before
