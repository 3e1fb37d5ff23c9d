"""Resume journal, progress callbacks and the CLI's --resume path (no Ray needed).

All checks are exact (counts, calls and lines compared for equality) on fixed seeds: nothing here
is statistical, so nothing can flake on randomness.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import algorithms
from audit import audit
from audit.determinism import CHECK_RUNS
from audit.journal import Journal, fingerprint
from privaudit.progress import ProgressRunner, make_progress, progress_enabled
from audit.reducers import (CodeCounter, CodeCounts, CodeSet, EventCounter, EventCounts,
                            HistogramCounts)
from audit.runners import Job, LocalRunner
from audit.types import Claim

REPO = Path(__file__).resolve().parents[2]


class Counting:
    """Randomized response that counts its calls (private attributes are not fingerprinted)."""

    name = "counting-rr"
    claim = Claim(1.0)

    def __init__(self, p_keep: float = 0.73) -> None:
        self.p_keep = p_keep
        self._calls: list[int] = []

    def sample(self, inp, runs, rng):
        self._calls.append(runs)
        x = int(np.asarray(inp).ravel()[0])
        return np.where(rng.random(runs) < self.p_keep, x, 1 - x).astype(np.int8)


def _job(bb=None, runs=100_000, key=(0, 0), inp=(0,), reducer=None) -> Job:
    return Job(bb or Counting(), np.array(inp), runs, reducer or CodeCounter(), key=key)


def _equal(a, b) -> bool:
    if hasattr(a, "table"):
        return a.runs == b.runs and a.table == b.table and list(a.table) == list(b.table)
    return a.runs == b.runs and np.array_equal(a.counts, b.counts)


# ---------------------------------------------------------------------------------------------
# the journal file
# ---------------------------------------------------------------------------------------------
def test_put_get_round_trip_every_reduction(tmp_path):
    job = _job()
    reds = [CodeCounts(10, {0: 3, 1: 7}), CodeCounts(10, {(0, 1): 4, (1, 1): 6}),
            EventCounts(10, np.array([2, 8], dtype=np.int64)),
            HistogramCounts(10, np.array([[1, 9], [5, 5]], dtype=np.int64))]
    with Journal(tmp_path / "j.jsonl") as j:
        for i, r in enumerate(reds):
            assert j.get(job, i, 10, seed=1) is None
            j.put(job, i, 10, r, seed=1)
    j2 = Journal(tmp_path / "j.jsonl")
    assert j2.loaded == 4 and j2.torn == 0
    for i, r in enumerate(reds):
        assert _equal(j2.get(job, i, 10, seed=1), r)
    j2.close()


def test_fingerprint_changes_with_everything_counts_depend_on():
    bb = Counting()
    base = _job(bb)
    fp = fingerprint(base, 1000, seed=0)
    assert fp == fingerprint(_job(bb), 1000, seed=0)  # same description, same fingerprint
    assert fp == fingerprint(_job(Counting()), 1000, seed=0)  # an equal black box too
    others = [
        fingerprint(base, 1000, seed=1),                                   # seed
        fingerprint(base, 999, seed=0),                                    # chunk size
        fingerprint(_job(bb, runs=100_001), 1000, seed=0),                 # runs
        fingerprint(_job(bb, key=(0, 1)), 1000, seed=0),                   # job key
        fingerprint(_job(bb, inp=(1,)), 1000, seed=0),                     # input bytes
        fingerprint(_job(Counting(p_keep=0.5)), 1000, seed=0),            # black-box parameter
        fingerprint(_job(bb, reducer=CodeCounter(encoding="bits")), 1000, seed=0),  # reducer
        fingerprint(_job(bb, reducer=EventCounter((CodeSet((1,)),))), 1000, seed=0),
    ]
    assert fp not in others and len(set(others)) == len(others)


def test_torn_last_line_is_ignored_and_cut(tmp_path):
    job = _job()
    path = tmp_path / "j.jsonl"
    with Journal(path) as j:
        for i in range(3):
            j.put(job, i, 10, CodeCounts(10, {0: i, 1: 10 - i}))
    with open(path, "ab") as fh:  # a crash in the middle of writing chunk 3
        fh.write(b'{"v":1,"job":"abc","chunk":3,"si')
    j = Journal(path)
    assert j.loaded == 3 and j.torn == 1
    assert path.read_bytes().endswith(b"}\n")  # the torn tail was cut before appending
    j.put(job, 3, 10, CodeCounts(10, {0: 3, 1: 7}))
    j.close()
    j = Journal(path)
    assert j.loaded == 4 and j.torn == 0
    assert j.get(job, 3, 10).table == {0: 3, 1: 7}
    assert all(json.loads(line) for line in path.read_text().splitlines())
    j.close()


def test_corrupt_middle_line_warns_and_is_skipped(tmp_path):
    job = _job()
    path = tmp_path / "j.jsonl"
    with Journal(path) as j:
        j.put(job, 0, 10, CodeCounts(10, {0: 10}))
    with open(path, "a") as fh:
        fh.write("not json\n")
    with pytest.warns(RuntimeWarning, match="line 2"), Journal(path) as j:
        j.put(job, 1, 10, CodeCounts(10, {1: 10}))
    with pytest.warns(RuntimeWarning, match="line 2"):
        j = Journal(path)
    assert j.loaded == 2 and j.torn == 1 and j.get(job, 1, 10).table == {1: 10}
    j.close()


def test_a_chunk_is_recorded_once(tmp_path):
    job = _job()
    with Journal(tmp_path) as j:  # a directory means DIR/journal.jsonl
        for _ in range(3):
            j.put(job, 0, 10, CodeCounts(10, {0: 10}))
        assert j.written == 1
    assert len((tmp_path / "journal.jsonl").read_text().splitlines()) == 1


# ---------------------------------------------------------------------------------------------
# resuming runs
# ---------------------------------------------------------------------------------------------
def test_interrupted_local_run_resumes_only_missing_chunks(tmp_path):
    def jobs(bb):
        return [_job(bb, runs=95_000, key=(1, s), inp=(s,)) for s in (0, 1)]

    expected = LocalRunner(chunk_runs=10_000).run(jobs(Counting()), seed=8)
    seen = []

    def interrupt_after_7(k):
        seen.append(k)
        if len(seen) == 7:
            raise KeyboardInterrupt

    with Journal(tmp_path) as j, pytest.raises(KeyboardInterrupt):
        LocalRunner(chunk_runs=10_000).run(jobs(Counting()), seed=8, journal=j, progress=interrupt_after_7)
    bb = Counting()
    with Journal(tmp_path) as j:
        assert j.loaded == 7
        got = LocalRunner(chunk_runs=10_000).run(jobs(bb), seed=8, journal=j)
        assert j.hits == 7
    assert all(_equal(g, e) for g, e in zip(got, expected))
    assert len(bb._calls) == 20 - 7  # 2 jobs x 10 chunks, 7 of them journaled
    # a different seed reuses nothing
    bb2 = Counting()
    with Journal(tmp_path) as j:
        LocalRunner(chunk_runs=10_000).run(jobs(bb2), seed=9, journal=j)
    assert len(bb2._calls) == 20


def test_auditor_passes_journal_through(tmp_path):
    rr = algorithms.get("dp-rr", epsilon=1.0)
    pairs = rr.pairs
    kw = dict(explore_runs=20_000, confirm_runs=60_000, seed=2, runner=LocalRunner(chunk_runs=10_000))
    plain = audit(rr, pairs, **kw)
    with Journal(tmp_path) as j:
        first = audit(rr, pairs, journal=j, **kw)
        written = j.written
    with Journal(tmp_path) as j:
        again = audit(rr, pairs, journal=j, **kw)
        assert j.written == 0 and j.hits == written > 0  # every chunk came from the journal
    for r in (first, again):
        assert r.epsilon_lower == plain.epsilon_lower
        assert [t.to_dict() for t in r.confirmed] == [t.to_dict() for t in plain.confirmed]


class CountingVector:
    """Two independent randomized-response bits (a discrete vector output: it gets a learning
    sample of code counts as large as exploration) that counts the runs it draws."""

    name = "counting-rr2"
    claim = Claim(1.0)

    def __init__(self) -> None:
        self._runs: list[int] = []

    def sample(self, inp, runs, rng):
        self._runs.append(runs)
        x = np.asarray(inp).astype(np.int8).ravel()[:2]
        flip = rng.random((runs, 2)) >= 0.73
        return np.where(flip, 1 - x, x).astype(np.int8)


def test_learning_sample_of_discrete_vectors_is_journaled(tmp_path):
    """The learning sample (as many runs as exploration) is kept by the journal: a resumed audit
    draws only the few pilot / reproducibility-check runs again, not 2 x 20,000 learning runs."""
    pairs = [(np.array([0, 0]), np.array([1, 0]))]
    kw = dict(explore_runs=20_000, confirm_runs=20_000, seed=3)
    plain = audit(CountingVector(), pairs, **kw)
    bb = CountingVector()
    with Journal(tmp_path) as j:
        first = audit(bb, pairs, journal=j, **kw)
    assert sum(bb._runs) >= 2 * 20_000 * 3           # learning, exploration and confirmation
    bb2 = CountingVector()
    with Journal(tmp_path) as j:
        again = audit(bb2, pairs, journal=j, **kw)
        assert j.written == 0
    assert sum(bb2._runs) < 20_000                    # nothing of the three phases re-drawn
    assert first.search["top_explored"][0]["learning_counts"][2] == 20_000
    for r in (first, again):
        assert [t.to_dict() for t in r.confirmed] == [t.to_dict() for t in plain.confirmed]


# ---------------------------------------------------------------------------------------------
# progress
# ---------------------------------------------------------------------------------------------
def test_progress_quiet_without_tty_and_counts_runs():
    stream = io.StringIO()  # not a TTY, as in CI
    assert not progress_enabled(stream)
    with make_progress(total=100, stream=stream) as fn:
        fn(40)
        fn(60)
    assert fn.done == 100 and stream.getvalue() == ""
    forced = io.StringIO()
    bar = make_progress(total=100, desc="confirm", stream=forced, enabled=True)
    bar(50)
    assert bar._bar.n == 50 and bar._bar.total == 100
    bar.close()
    assert "confirm" in forced.getvalue() and bar._bar is None


def test_progress_runner_reports_every_run_per_phase():
    stream = io.StringIO()
    calls = []
    runner = ProgressRunner(LocalRunner(chunk_runs=10_000), stream=stream, enabled=True)
    jobs = [_job(runs=25_000, key=(1, 0))]
    out = runner.run(jobs, seed=0, progress=calls.append)
    assert calls == [10_000, 10_000, 5_000] and out[0].runs == 25_000
    assert "confirm" in stream.getvalue()  # phase 1 of the auditor's keys
    assert runner.describe()["runner"] == "local"


# ---------------------------------------------------------------------------------------------
# the CLI: SIGTERM mid-audit, then --resume
# ---------------------------------------------------------------------------------------------
_SLOW_MODULE = textwrap.dedent('''
    import os, time
    import numpy as np
    from audit.types import Claim

    class SlowRR:
        """Randomized response; sleeps SLOWBB_SLEEP s per call and logs each call's runs."""
        name = "slow-rr"
        def __init__(self):
            self.claim = Claim(1.0)
            self.pairs = [(np.array([0]), np.array([1]))]
        def sample(self, inp, runs, rng):
            log = os.environ.get("SLOWBB_LOG")
            if log:
                with open(log, "a") as fh:
                    fh.write(f"{runs}\\n")
            time.sleep(float(os.environ.get("SLOWBB_SLEEP", "0")))
            x = int(np.asarray(inp).ravel()[0])
            return np.where(rng.random(runs) < 0.73, x, 1 - x).astype(np.int8)

    MECH = SlowRR()
''')


def _cli(tmp_path, args, **env):
    e = dict(os.environ, PYTHONPATH=str(tmp_path), **env)
    e.pop("CI", None)
    return [sys.executable, "-m", "privaudit.cli", "audit", *args], e


def _result(path: Path) -> dict:
    d = json.loads((path / "result.json").read_text())
    return {k: d[k] for k in ("epsilon_lower", "delta_lower", "violation", "confirmed", "witness")}


def _main_in_process(args, monkeypatch) -> int:
    """`privaudit audit ...` in this process (saves an interpreter start); restores SIGTERM."""
    from privaudit.cli import main

    before = signal.getsignal(signal.SIGTERM)
    try:
        return main(["audit", *args])
    finally:
        signal.signal(signal.SIGTERM, before)


def test_cli_sigterm_then_resume_gives_identical_result(tmp_path, monkeypatch, capsys):
    (tmp_path / "slowbb.py").write_text(_SLOW_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("CI", raising=False)
    # 2 sides x (30_000/10_000 explore + 120_000/10_000 confirm) = 30 chunks; pilots are 2_000 runs
    args = ["--blackbox", "slowbb:MECH", "--runner", "local", "--runs", "120000",
            "--explore-runs", "30000", "--chunk-runs", "10000", "--seed", "1", "--quiet"]
    assert _main_in_process(args + ["--out", str(tmp_path / "full")], monkeypatch) == 0

    out = tmp_path / "cut"
    journal = out / "journal.jsonl"
    cmd, env = _cli(tmp_path, args + ["--out", str(out)], SLOWBB_SLEEP="0.1")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and (not journal.exists() or len(journal.read_text().splitlines()) < 10):
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err  # stopped like Ctrl-C, not killed
    assert "resume" in err
    lines = journal.read_text().splitlines()
    assert 10 <= len(lines) < 30 and all(json.loads(x)["v"] == 1 for x in lines)
    assert not (out / "result.json").exists()

    log = tmp_path / "calls.log"
    monkeypatch.setenv("SLOWBB_LOG", str(log))
    assert _main_in_process(["--resume", str(out), "--runner", "local", "--quiet"], monkeypatch) == 0
    # not the pilots (2,000 runs) nor the determinism check's two calls (audit.determinism)
    chunk_calls = [int(x) for x in log.read_text().split() if int(x) not in (2000, CHECK_RUNS)]
    assert len(chunk_calls) == 30 - len(lines)  # only the missing chunks were recomputed
    assert len(journal.read_text().splitlines()) == 30
    assert _result(out) == _result(tmp_path / "full")


def test_cli_without_out_keeps_an_interrupted_runs_chunks_and_cleans_up_a_finished_one(
        tmp_path, monkeypatch):
    (tmp_path / "slowbb.py").write_text(_SLOW_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    args = ["--blackbox", "slowbb:MECH", "--runner", "local", "--runs", "120000",
            "--explore-runs", "30000", "--chunk-runs", "10000", "--seed", "1", "--quiet"]
    cmd, env = _cli(tmp_path, args, SLOWBB_SLEEP="0.1", TMPDIR=str(scratch))
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    journals = []
    while time.time() < deadline and not (journals and len(journals[0].read_text().splitlines()) >= 5):
        journals = list(scratch.glob("privaudit-*/journal.jsonl"))
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    kept = journals[0].parent
    assert f"privaudit audit --resume {kept}" in err and kept.exists()
    done = len(journals[0].read_text().splitlines())

    # the printed command finishes the audit, recomputing only what is missing
    log = tmp_path / "calls.log"
    monkeypatch.setenv("SLOWBB_LOG", str(log))
    assert _main_in_process(["--resume", str(kept), "--runner", "local", "--quiet"], monkeypatch) == 0
    assert len([x for x in log.read_text().split() if int(x) not in (2000, CHECK_RUNS)]) == 30 - done
    assert (kept / "result.json").exists()

    # a run that finishes leaves no scratch directory behind
    monkeypatch.setenv("TMPDIR", str(scratch))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    before = set(scratch.iterdir())
    assert _main_in_process(args, monkeypatch) == 0
    assert set(scratch.iterdir()) == before


def test_fingerprint_changes_when_the_black_box_source_changes(tmp_path, monkeypatch):
    import importlib

    from audit import journal as journal_mod

    src = "import numpy as np\nclass BB:\n    name = 'bb'\n    def sample(self, inp, runs, rng):\n" \
          "        return np.zeros(runs, dtype=np.int8)\n"
    (tmp_path / "bbsrc.py").write_text(src)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("bbsrc")
    fp = fingerprint(_job(mod.BB()), 1000, seed=0)
    journal_mod._source_digest.cache_clear()
    assert fingerprint(_job(mod.BB()), 1000, seed=0) == fp  # same file, same fingerprint
    (tmp_path / "bbsrc.py").write_text(src.replace("zeros", "ones"))
    journal_mod._source_digest.cache_clear()
    mod = importlib.reload(mod)
    assert fingerprint(_job(mod.BB()), 1000, seed=0) != fp
