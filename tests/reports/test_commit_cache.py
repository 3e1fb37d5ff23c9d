"""audit.provenance.commit_cache: one git lookup per checkout while a CI suite runs."""

from __future__ import annotations

import subprocess

import pytest

from audit import provenance
from audit.provenance import commit_cache, git_commit
from privaudit.ci_config import parse_config
from privaudit.ci_run import run_suite


def _repo(tmp_path):
    repo = tmp_path / "code"
    (repo / "sub").mkdir(parents=True)
    (repo / "m.py").write_text("x = 1\n")
    (repo / "sub" / "n.py").write_text("y = 1\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    try:
        subprocess.run(git[:3] + ["init", "-q"], check=True, capture_output=True)
        subprocess.run(git + ["add", "m.py", "sub/n.py"], check=True, capture_output=True)
        subprocess.run(git + ["commit", "-q", "-m", "c"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git is not available")
    sha = subprocess.run(git[:3] + ["rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    return repo, sha


def test_one_lookup_per_checkout_inside_the_block_and_fresh_outside(tmp_path, monkeypatch):
    repo, sha = _repo(tmp_path)
    calls = []
    ask = provenance._ask_git
    monkeypatch.setattr(provenance, "_ask_git", lambda d: calls.append(d) or ask(d))
    with commit_cache():
        assert git_commit(repo / "m.py") == sha
        assert git_commit(repo / "sub" / "n.py") == sha       # same checkout: cached
        with commit_cache():                                   # re-entrant: same cache
            assert git_commit(repo) == sha
        (repo / "m.py").write_text("x = 2\n")
        assert git_commit(repo) == sha                         # as at the first lookup
    assert len(calls) == 1
    assert git_commit(repo) == sha + "-dirty"                  # outside: asks git again
    assert len(calls) == 2 and provenance._COMMITS is None
    assert git_commit(tmp_path / "nowhere" / "x.py") is None


def test_a_suite_runs_inside_the_cache(monkeypatch):
    calls = []
    ask = provenance._ask_git
    monkeypatch.setattr(provenance, "_ask_git", lambda d: calls.append(d) or ask(d))
    cfg = parse_config("""
[defaults]
explore_runs = 2000
confirm_runs = 2000
[[audit]]
name = "a"
algorithm = "dp-rr"
expect = "pass"
[[audit]]
name = "b"
algorithm = "dp-rr"
params = { variant = "bv-rr-eps" }
expect = "violation"
""")
    suite = run_suite(cfg)
    commits = {e.result.versions["git_commit"] for e in suite.entries} | {suite.versions["git_commit"]}
    assert len(commits) == 1
    assert len(calls) <= 2     # the algorithms' checkout and the current directory's, once each
