"""RayRunner: same counts as LocalRunner, batching-invariant, fault tolerant, resumable.

Every test here is exact (counts compared for equality, calls counted), not statistical: with a
fixed seed the counts are a deterministic function of (seed, jobs, chunk sizes), so none of these
checks can flake on randomness. They fail only if determinism, exactly-once counting or the
journal is broken.
"""

from __future__ import annotations

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
from audit.errors import BlackBoxError, PrivauditError
from audit.journal import Journal
from audit.reducers import CodeCounter, CodeSet, EventCounter, HistogramCounter, Threshold
from audit.runners import Job, LocalRunner, make_runner
from audit.types import Claim, Dataset

pytestmark = pytest.mark.ray

REPO = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------------------------------------
# test black boxes (module level, so Ray workers can unpickle them)
# ---------------------------------------------------------------------------------------------
class Flips:
    """Randomized response on one bit; `_log` (private: not part of the job fingerprint) is a
    file that gets one line per `sample` call, so calls can be counted across processes."""

    name = "test-flips"
    claim = Claim(1.0)

    def __init__(self, p_keep: float = 0.73, log: str | None = None) -> None:
        self.p_keep = p_keep
        self._log = log

    def sample(self, inp, runs, rng):
        if self._log:
            with open(self._log, "a") as fh:
                fh.write(f"{runs}\n")
        x = int(np.asarray(inp).ravel()[0])
        keep = rng.random(runs) < self.p_keep
        return np.where(keep, x, 1 - x).astype(np.int8)


class CrashOnce(Flips):
    """Kills the worker process running it the first time any worker calls it (marker file)."""

    name = "test-flips"

    def __init__(self, marker: str) -> None:
        super().__init__()
        self._marker = marker

    def sample(self, inp, runs, rng):
        try:
            fd = os.open(self._marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            pass
        else:  # first call anywhere: die like a segfaulting extension would
            os.close(fd)
            os._exit(1)
        return super().sample(inp, runs, rng)


class Raises:
    name = "test-raises"
    claim = Claim(1.0)

    def __init__(self, log: str) -> None:
        self._log = log

    def sample(self, inp, runs, rng):
        with open(self._log, "a") as fh:
            fh.write("call\n")
        raise ValueError("boom in the black box")


class NoisyThreshold:
    """A tiny learner: predicts 1 at queries above mean(y) + Laplace noise."""

    name = "test-noisy-threshold"
    claim = Claim(1.0)

    def predict(self, data, queries, runs, rng):
        thr = data.y.mean() + rng.laplace(0.0, 0.5, size=(runs, 1))
        return (np.asarray(queries)[:, 0][None, :] > thr).astype(np.int8)


def _jobs() -> list[Job]:
    """Jobs of every reduction kind, with ragged last chunks (chunk_runs 10_000 below)."""
    rr = algorithms.get("dp-rr", epsilon=1.0)
    lap = algorithms.get("dp-laplace", epsilon=1.0)
    data = Dataset(np.linspace(0, 1, 8).reshape(-1, 1), np.array([0, 1] * 4))
    queries = np.array([[0.1], [0.6], [0.9]])
    return [
        Job(rr, np.array([0]), 123_457, CodeCounter(), key=(0, 0)),
        Job(rr, np.array([1]), 50_001, EventCounter((CodeSet((1,)), CodeSet((0,)))), key=(0, 1)),
        Job(lap, np.array([0.0]), 61_234, HistogramCounter(((1.0,),), ((-1.0, 0.0, 0.5, 1.0),)), key=(1, 0)),
        Job(lap, np.array([1.0]), 40_000, EventCounter((Threshold((1.0,), 0.5),)), key=(1, 1)),
        Job(NoisyThreshold(), data, 20_003, CodeCounter(encoding="bits"), key=(2, 0), queries=queries),
    ]


def _same(a, b) -> bool:
    """Bit-identical reductions (for code tables, also the same key order)."""
    if type(a) is not type(b) or a.runs != b.runs:
        return False
    if hasattr(a, "table"):
        return a.table == b.table and list(a.table) == list(b.table)
    return a.counts.dtype == b.counts.dtype and np.array_equal(a.counts, b.counts)


def _all_same(xs, ys) -> bool:
    return len(xs) == len(ys) and all(_same(x, y) for x, y in zip(xs, ys))


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


# ---------------------------------------------------------------------------------------------
# determinism
# ---------------------------------------------------------------------------------------------
def test_counts_identical_to_local_runner(ray_instance):
    from audit.runners.ray_runner import RayRunner

    jobs = _jobs()
    local = LocalRunner(chunk_runs=10_000).run(jobs, seed=11)
    # one chunk per task, and many chunks per task: batching must not change a single count
    for task_seconds in (1e-9, 10.0):
        with RayRunner(chunk_runs=10_000, task_seconds=task_seconds) as runner:
            got = runner.run(jobs, seed=11)
            assert _all_same(got, local)
            assert runner.stats["computed"] == sum(len(j.chunk_sizes(10_000)) for j in jobs)
    fine = RayRunner(chunk_runs=10_000, task_seconds=1e-9)
    fine.run(jobs, seed=11)
    coarse = RayRunner(chunk_runs=10_000, task_seconds=10.0)
    coarse.run(jobs, seed=11)
    assert fine.stats["tasks"] > coarse.stats["tasks"]  # batching really happened
    # another seed gives other counts (the seed really reaches the workers)
    other = RayRunner(chunk_runs=10_000).run(jobs, seed=12)
    assert not _same(other[0], local[0])


def test_joins_existing_instance_and_leaves_it_running(ray_instance):
    import ray

    from audit.runners.ray_runner import RayRunner

    runner = make_runner("ray", chunk_runs=50_000)
    assert isinstance(runner, RayRunner)
    runner.run(_jobs()[:1], seed=0)
    assert runner.describe()["workers"] == 2
    runner.close()
    assert ray.is_initialized()  # not started by this runner, so not shut down by it
    # joining by address while connected also uses the existing connection
    with RayRunner(address=ray_instance, chunk_runs=50_000) as joined:
        assert _all_same(joined.run(_jobs()[:1], seed=0), LocalRunner(chunk_runs=50_000).run(_jobs()[:1], seed=0))
    assert ray.is_initialized()


def test_bad_arguments_are_clear():
    from audit.runners.ray_runner import RayRunner

    with pytest.raises(PrivauditError, match="num_cpus"):
        RayRunner(num_cpus=0)
    with pytest.raises(PrivauditError, match="num_cpus"):
        RayRunner(address="auto", num_cpus=2)
    with pytest.raises(PrivauditError, match="chunk_runs"):
        make_runner("ray", chunk_runs=0)
    with pytest.raises(PrivauditError, match="unknown runner"):
        make_runner("spark")
    with pytest.raises(PrivauditError, match="address"):
        make_runner("local", address="auto")
    assert isinstance(make_runner("local", chunk_runs=7), LocalRunner)


# ---------------------------------------------------------------------------------------------
# failures
# ---------------------------------------------------------------------------------------------
def test_killed_worker_changes_nothing(ray_instance, tmp_path):
    from audit.runners.ray_runner import RayRunner

    marker = tmp_path / "crashed"
    inputs = (np.array([0]), np.array([1]))
    crashing = CrashOnce(str(marker))
    jobs = [Job(crashing, x, 200_000, CodeCounter(), key=(0, s)) for s, x in enumerate(inputs)]
    reference = [Job(Flips(), x, 200_000, CodeCounter(), key=(0, s)) for s, x in enumerate(inputs)]
    runner = RayRunner(chunk_runs=20_000)
    got = runner.run(jobs, seed=5)
    assert marker.exists()  # a worker really died mid-audit
    assert _all_same(got, LocalRunner(chunk_runs=20_000).run(reference, seed=5))
    assert sum(r.runs for r in got) == 400_000  # every chunk counted exactly once


def test_blackbox_exception_surfaces_and_is_not_retried(ray_instance, tmp_path):
    from audit.runners.ray_runner import RayRunner

    log = tmp_path / "calls"
    job = Job(Raises(str(log)), np.array([0]), 1000, CodeCounter(), key=(0,))
    with pytest.raises(BlackBoxError, match="boom in the black box") as info:
        RayRunner(chunk_runs=1000).run([job], seed=0)
    assert "RayTaskError" not in str(info.value)
    assert info.value.__class__ is BlackBoxError
    assert _lines(log) == 1  # the user's exception was not retried (max_retries is for crashes)


def test_unimportable_blackbox_module_is_a_clear_error(ray_instance, tmp_path, monkeypatch):
    from audit.runners.ray_runner import RayRunner

    # Added to this process's path after the workers started: the driver can import it, the
    # workers cannot, as on a cluster where the user's module was not installed.
    (tmp_path / "late_bb_module.py").write_text(
        "import numpy as np\n"
        "class BB:\n"
        "    name = 'late'\n"
        "    def sample(self, inp, runs, rng):\n"
        "        return np.zeros(runs, dtype=np.int8)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import late_bb_module

    job = Job(late_bb_module.BB(), np.array([0]), 1000, CodeCounter(), key=(0,))
    with pytest.raises(BlackBoxError, match=r"could not be loaded on a Ray worker \(No module named 'late_bb_module'"):
        RayRunner(chunk_runs=1000).run([job], seed=0)


# ---------------------------------------------------------------------------------------------
# journal and progress on Ray
# ---------------------------------------------------------------------------------------------
def test_interrupted_ray_run_resumes_with_only_missing_chunks(ray_instance, tmp_path, ray_cancel_calls):
    from audit.runners.ray_runner import RayRunner

    inputs = (np.array([0]), np.array([1]))

    def jobs(log):
        bb = Flips(log=str(log))
        return [Job(bb, x, 300_000, CodeCounter(), key=(1, s)) for s, x in enumerate(inputs)]

    n_chunks = 2 * 15
    expected = LocalRunner(chunk_runs=20_000).run(jobs(tmp_path / "unused"), seed=3)

    seen = []

    def stop_after_five(k):
        seen.append(k)
        if len(seen) == 5:
            raise KeyboardInterrupt

    journal = Journal(tmp_path / "out")
    with pytest.raises(KeyboardInterrupt):
        RayRunner(chunk_runs=20_000).run(jobs(tmp_path / "log1"), seed=3, journal=journal,
                                         progress=stop_after_five)
    journal.close()
    done = _lines(tmp_path / "out" / "journal.jsonl")
    assert 5 <= done < n_chunks
    assert ray_cancel_calls == []  # the tasks in flight were dropped, not ray.cancel'ed

    resumed = Journal(tmp_path / "out")  # as a new process would
    assert resumed.loaded == done
    progress = []
    runner = RayRunner(chunk_runs=20_000)
    got = runner.run(jobs(tmp_path / "log2"), seed=3, journal=resumed, progress=progress.append)
    assert _all_same(got, expected)
    assert _lines(tmp_path / "log2") == n_chunks - done  # only the missing chunks were computed
    assert runner.stats["from_journal"] == done
    assert sum(progress) == 600_000  # progress reports every run, journaled ones included
    resumed.close()
    assert _lines(tmp_path / "out" / "journal.jsonl") == n_chunks


# ---------------------------------------------------------------------------------------------
# CLI on Ray
# ---------------------------------------------------------------------------------------------
def _comparable(result_json: Path) -> dict:
    d = json.loads(result_json.read_text())
    for k in ("timings", "runner", "versions", "provenance"):
        d.pop(k, None)
    return d


def test_cli_on_ray_cluster_matches_local_runner(ray_instance, tmp_path):
    env = dict(os.environ, RAY_AUTH_MODE=os.environ.get("RAY_AUTH_MODE", "disabled"))
    common = [sys.executable, "-m", "privaudit.cli", "audit", "dp-rr", "--runs", "300000",
              "--chunk-runs", "50000", "--seed", "4", "--quiet"]
    ray_run = subprocess.run(common + ["--address", ray_instance, "--out", str(tmp_path / "ray")],
                             cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert ray_run.returncode == 0, ray_run.stderr
    # the local run in this process (saves an interpreter start); the CLI's SIGTERM handler
    # is restored afterwards
    from privaudit.cli import main

    before = signal.getsignal(signal.SIGTERM)
    try:
        assert main(common[3:] + ["--runner", "local", "--out", str(tmp_path / "local")]) == 0
    finally:
        signal.signal(signal.SIGTERM, before)
    r, l = _comparable(tmp_path / "ray" / "result.json"), _comparable(tmp_path / "local" / "result.json")
    assert r["confirmed"] and r == l
    # the journal of the Ray run could resume a local run (and vice versa): same fingerprints,
    # same chunks, same counts; only the order of the lines (completion order) may differ
    ray_lines = (tmp_path / "ray" / "journal.jsonl").read_text().splitlines()
    local_lines = (tmp_path / "local" / "journal.jsonl").read_text().splitlines()
    assert len(ray_lines) > 2 and sorted(ray_lines) == sorted(local_lines)


# ---------------------------------------------------------------------------------------------
# a real multi-node cluster (own process: a Cluster cannot share a process with ray.init)
# ---------------------------------------------------------------------------------------------
_CLUSTER_SCRIPT = textwrap.dedent('''
    import json, os, time
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    import numpy as np
    import ray
    from ray.cluster_utils import Cluster
    from audit.reducers import CodeCounter
    from audit.runners import Job, LocalRunner
    from audit.runners.ray_runner import RayRunner

    class SlowFlips:  # defined in __main__: Ray ships it by value
        name = "slow-flips"
        def __init__(self, log):
            self._log = log
        def sample(self, inp, runs, rng):
            if self._log:
                with open(self._log, "a") as fh:
                    fh.write(ray.get_runtime_context().get_node_id() + "\\n")
                time.sleep(0.02)  # long enough that a node dies with work in flight
            x = int(inp[0])
            return np.where(rng.random(runs) < 0.73, x, 1 - x).astype(np.int8)

    def jobs(log):
        bb = SlowFlips(log)
        return [Job(bb, np.array([s]), 200_000, CodeCounter(), key=(0, s)) for s in (0, 1)]

    def same(a, b):
        return all(x.runs == y.runs and x.table == y.table for x, y in zip(a, b))

    out = {}
    local = LocalRunner(chunk_runs=5_000).run(jobs(None), seed=9)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    n1 = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    runner = RayRunner(address=cluster.address, chunk_runs=5_000)
    out["one_worker"] = same(runner.run(jobs(None), seed=9), local)
    out["workers_1"] = runner.describe()["workers"]
    n2 = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    out["two_nodes"] = same(runner.run(jobs(None), seed=9), local)
    out["workers_2"] = runner.describe()["workers"]

    log = os.path.join(os.environ["CLUSTER_TMP"], "calls")
    open(log, "w").close()
    state = {"seen": 0, "after": 0}
    def kill_node(k):
        # Kill node 2 (at once, no graceful drain) as soon as it has run some chunks of this
        # run, so that it dies with work in flight.
        state["seen"] += 1
        if "killed" in state:
            state["after"] += 1
        elif n2.node_id in open(log).read():
            state["killed"] = n2.node_id
            state["killed_at"] = state["seen"]
            cluster.remove_node(n2, allow_graceful=False)
    got = runner.run(jobs(log), seed=9, progress=kill_node)
    out["node_removed"] = same(got, local)
    out["runs"] = sum(r.runs for r in got)
    calls = open(log).read().split()
    out["calls"] = len(calls)
    out["chunks"] = 80
    out["calls_on_removed_node"] = calls.count(state.get("killed", "none"))
    out["chunks_after_removal"] = state["after"]
    out["killed_at"] = state.get("killed_at")
    runner.close()
    cluster.shutdown()
    print("RESULT " + json.dumps(out))
''')


def test_two_node_cluster_and_removed_node(tmp_path):
    env = dict(os.environ, RAY_AUTH_MODE="disabled", CLUSTER_TMP=str(tmp_path))
    t0 = time.time()
    proc = subprocess.run([sys.executable, "-c", _CLUSTER_SCRIPT], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    out = json.loads(line[len("RESULT "):])
    assert out["one_worker"] and out["workers_1"] == 1
    assert out["two_nodes"] and out["workers_2"] == 2
    assert out["calls_on_removed_node"] > 0  # the removed node really worked on this run
    assert out["chunks_after_removal"] > 0  # ... and the run went on after it died
    assert out["node_removed"] and out["runs"] == 400_000  # identical counts, each chunk once
    assert out["calls"] >= out["chunks"]
    print(f"cluster test {time.time() - t0:.1f}s; {out}")


def test_cached_fit_bug_gives_the_same_counts_on_ray_as_locally(ray_instance):
    # BV-API-3 keeps state from one fit to the next; its one fit per dataset is seeded by the
    # data's content, so Ray workers (each with its own memo) reuse the same fit as the driver
    from audit import audit_learner
    from audit.runners.ray_runner import RayRunner

    bug = algorithms.get("df-cor1", variant="bv-api-3")
    budget = dict(explore_runs=20_000, confirm_runs=60_000, seed=3)
    with RayRunner(address=ray_instance, chunk_runs=10_000) as ray_runner:
        on_ray = audit_learner(bug, runner=ray_runner, **budget)
    local = audit_learner(algorithms.get("df-cor1", variant="bv-api-3"),
                          runner=LocalRunner(chunk_runs=10_000), **budget)
    assert on_ray.violation and local.violation
    assert [(t.k_p, t.k_q) for t in on_ray.confirmed] == [(t.k_p, t.k_q) for t in local.confirmed]
