"""Ray runner: the chunks of a sampling job run as Ray tasks on a local instance or a cluster.

Counts are identical to `LocalRunner`'s for the same seed: chunk ``i`` of a job is seeded by
``SeedSequence(seed, spawn_key=job.key + (i,))`` whichever worker runs it (`run_chunk`), tasks
return one reduction per chunk, and the driver adds the reductions of each job in chunk order.

Ray's per-task overhead (~1.3 ms) dwarfs a small chunk (2**18 runs of randomized response take
~5 ms), so one task runs a *batch* of consecutive chunks and returns one reduction per chunk; the
batch size adapts to the measured time per run so that a task computes for about
``task_seconds``. Batching never changes the counts: it only groups chunks, each keeps its seed.

Black boxes, inputs, queries and reducers are put into the object store once per `run` and passed
by reference. A task lost with its worker or node is resubmitted by Ray (``max_retries``); the
driver keeps one result per chunk, so a chunk is counted exactly once whatever the retries. An
exception raised by the black box is not retried: it surfaces as `BlackBoxError`.
"""

from __future__ import annotations

import logging
import math
import os
import re
import signal
import sys
import threading
import time
import warnings
from collections import deque
from typing import Any, Callable, Iterable, Iterator, Sequence

from .. import interrupts
from ..errors import BlackBoxError, PrivauditError
from ..reducers import Reduction
from .base import Job, ProgressFn, Runner, plan, round_sizes, run_chunk

# Ray is imported at the first connection, not with this module: `import ray` costs ~1-2 s,
# which a CLI run that fails on bad input (or uses the local runner) should not pay.
ray: Any = None
rex: Any = None


def _import_ray() -> None:
    global ray, rex
    if ray is None:
        try:
            import ray as _ray
            import ray.exceptions as _rex
        except ImportError as exc:
            raise PrivauditError(f"the Ray runner needs the 'ray' package, which failed to import "
                                 f"({exc}); install it or use the local runner") from exc
        ray, rex = _ray, _rex


_LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def _loopback_only() -> None:
    """Ray's single-machine mode: the node IP is 127.0.0.1, so nothing listens on the network.

    Ray reads the switch (`_LOOPBACK_ENV`) when it is imported; when Ray was imported before
    (by the user's code, a test), its constant is set too.
    """
    os.environ[_LOOPBACK_ENV] = "0"
    try:
        from ray._private import ray_constants  # private, but the one switch Ray offers
        ray_constants.ENABLE_RAY_CLUSTER = False
    except (ImportError, AttributeError):  # another Ray version: the environment variable serves
        pass


# Upper bound on chunks per task, so that one task's result (a list of reductions) stays small.
_MAX_CHUNKS_PER_TASK = 256


def _run_batch(seed: int, specs: list, items: list, *objs: Any) -> tuple[float, list[Reduction]]:
    """Ray task body: run the chunks `items` = [(spec, chunk index, size), ...].

    `specs[s]` = (blackbox slot, input slot, queries slot, reducer slot, key, runs): slots index
    `objs`, which Ray resolves from the object store (each object is shipped once per node).
    """
    t0 = time.perf_counter()
    # On a worker, a black box calling os._exit kills only the worker: Ray retries the task, and
    # one that keeps dying fails the audit as a black-box error (see RayRunner._fetch).
    interrupts.set_guard_os_exit(False)
    jobs = [Job(blackbox=objs[b], inp=objs[i], runs=runs, reducer=objs[r], key=key,
                queries=None if q < 0 else objs[q])
            for b, i, q, r, key, runs in specs]
    out = [run_chunk(jobs[s], seed, index, size) for s, index, size in items]
    return time.perf_counter() - t0, out


def _user_pythonpath() -> str:
    """The driver's own import directories (not the interpreter's), for local Ray workers.

    Workers start with the driver's working directory on their path, but not directories the
    driver added (a test directory, a ``--blackbox`` module's folder); without them a user's
    black box cannot be unpickled on a worker.
    """
    system = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    # privaudit's own root first (a source checkout): a user's folder holding e.g. `reports/`
    # must not shadow privaudit's packages on a worker either.
    own = os.path.realpath(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    keep = [] if "site-packages" in own or any(own.startswith(s + os.sep) for s in system) else [own]
    for p in sys.path:
        if not p or not os.path.isdir(p):
            continue
        rp = os.path.realpath(p)
        if any(rp == s or rp.startswith(s + os.sep) for s in system) or "site-packages" in rp:
            continue
        if rp not in keep:
            keep.append(rp)
    extra = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join(keep + ([extra] if extra else []))


def _task_args(specs: dict, used: Iterable[int]) -> tuple[list, list]:
    """Task specs of the jobs `used`, each object ref passed once as a task argument (-1: none)."""
    slots: dict[Any, int] = {}
    args: list = []

    def slot(ref: Any) -> int:
        if ref is None:
            return -1
        if id(ref) not in slots:
            slots[id(ref)] = len(args)
            args.append(ref)
        return slots[id(ref)]

    specs_out = [(slot(specs[j][0]), slot(specs[j][1]), slot(specs[j][2]), slot(specs[j][3]),
                  specs[j][4], specs[j][5]) for j in used]
    return specs_out, args


class RayRunner(Runner):
    """Run chunks as Ray tasks: on a local Ray instance, or on an existing cluster.

    Parameters
    ----------
    address : str, optional
        None starts a local Ray instance (no dashboard, worker logs not forwarded) unless Ray is
        already initialised in this process, in which case that instance is used. ``"auto"`` or
        ``"HOST:PORT"`` joins a cluster started with ``ray start``; ``"ray://HOST:PORT"`` joins
        through the Ray client.
    num_cpus : int, optional
        CPUs of the local instance (default: all). Only for a local instance.
    chunk_runs : int, optional
        Runs per chunk (the same default as `LocalRunner`; equal chunk sizes give equal counts).
    max_retries : int
        Resubmissions of a task whose worker or node died (default 3).
    task_seconds : float
        Target compute time of one task; consecutive chunks are batched to reach it.

    Ray is connected lazily, at the first `run` (or `connect`), so building a runner is free and
    bad input is reported before Ray starts. `close()` shuts down only an instance this runner
    started (connecting, or joining a cluster, makes this process a Ray driver).
    """

    def __init__(self, address: str | None = None, num_cpus: int | None = None,
                 chunk_runs: int | None = None, *, max_retries: int = 3,
                 task_seconds: float = 0.25) -> None:
        if num_cpus is not None:
            if isinstance(num_cpus, bool) or int(num_cpus) != num_cpus or int(num_cpus) < 1:
                raise PrivauditError(f"num_cpus must be a positive integer, got {num_cpus!r}")
            num_cpus = int(num_cpus)
        if num_cpus is not None and address is not None:
            raise PrivauditError("num_cpus sets the size of a local Ray instance; it cannot be used "
                                 f"with address={address!r} (the cluster's nodes set their own CPUs)")
        if chunk_runs is not None and (isinstance(chunk_runs, bool) or int(chunk_runs) < 1):
            raise PrivauditError(f"chunk_runs must be a positive integer, got {chunk_runs!r}")
        if address is not None and (not isinstance(address, str) or not address.strip()):
            raise PrivauditError(f"address must be 'auto', 'HOST:PORT' or 'ray://HOST:PORT', got {address!r}")
        if int(max_retries) < 0:
            raise PrivauditError(f"max_retries must be >= 0, got {max_retries}")
        if not float(task_seconds) > 0:
            raise PrivauditError(f"task_seconds must be > 0, got {task_seconds}")
        self.address = address
        self.num_cpus = num_cpus
        self.chunk_runs = None if chunk_runs is None else int(chunk_runs)
        self.max_retries = int(max_retries)
        self.task_seconds = float(task_seconds)
        self._started = False
        self._connected = False
        self._remote = None
        self.stats: dict = {}

    # -- connection ------------------------------------------------------------------------
    def connect(self) -> None:
        """Start or join Ray now (otherwise done by the first `run`)."""
        if self.address is None:
            # Read by Ray when it is imported: with it, a local instance takes the loopback
            # address as its node IP and every server (GCS, raylet, workers, object manager)
            # listens on 127.0.0.1 only. Spawned Ray processes inherit it.
            os.environ[_LOOPBACK_ENV] = "0"
        _import_ray()
        if not ray.is_initialized():
            opts: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
            if self.address is None:
                # Local instances need no authentication; a token would be written to ~/.ray.
                os.environ.setdefault("RAY_AUTH_MODE", "disabled")
                # Workers of a local instance import what this process imports. On a cluster
                # the nodes' own environment decides (their PYTHONPATH is left alone).
                # A private instance: address="local" never joins a `ray start` cluster of this
                # machine nor one named by RAY_ADDRESS; with Ray's single-machine mode (as on
                # macOS/Windows) its servers listen on the loopback interface only.
                _loopback_only()
                opts.update(address="local", include_dashboard=False, num_cpus=self.num_cpus,
                            runtime_env={"env_vars": {"PYTHONPATH": _user_pythonpath()}})
            else:
                opts["address"] = self.address
            # ray.init replaces the SIGTERM handler with sys.exit; keep one the caller installed
            # (the CLI turns SIGTERM into KeyboardInterrupt, see audit.journal).
            sigterm = signal.getsignal(signal.SIGTERM)
            saved_address = os.environ.pop("RAY_ADDRESS", None) if self.address is None else None
            try:
                ray.init(**opts)
            except Exception as exc:
                if self.address is None:
                    raise
                if str(self.address).startswith("ray://") and isinstance(exc, ImportError):
                    raise PrivauditError(
                        f"--address {self.address} uses the Ray client, which needs "
                        f"`pip install 'privaudit[cluster]'` (ray[client]): {exc}") from exc
                raise PrivauditError(
                    f"cannot join the Ray cluster at {self.address!r}: {type(exc).__name__}: {exc}. "
                    f"Is `ray start --head` running there, and does this shell set the same "
                    f"RAY_AUTH_MODE as the cluster (currently "
                    f"{os.environ.get('RAY_AUTH_MODE', 'unset')!r})?") from exc
            finally:
                if saved_address is not None:
                    os.environ["RAY_ADDRESS"] = saved_address
                if (callable(sigterm) and threading.current_thread() is threading.main_thread()
                        and signal.getsignal(signal.SIGTERM) is not sigterm):
                    signal.signal(signal.SIGTERM, sigterm)
            self._started = True
        self._connected = True
        if self._remote is None:
            # SPREAD: CPU-bound batches go to every node rather than packing the first ones.
            # retry_exceptions=False: only system failures (dead worker or node) are retried;
            # the black box's own exceptions are errors to report, not to repeat.
            self._remote = ray.remote(_run_batch).options(
                num_cpus=1, max_retries=self.max_retries, retry_exceptions=False,
                scheduling_strategy="SPREAD")

    def workers(self) -> int:
        """CPUs currently in the cluster (the number of tasks that can run at once)."""
        self.connect()
        return max(1, int(ray.cluster_resources().get("CPU", 1)))

    def close(self) -> None:
        if self._started and ray is not None and ray.is_initialized():
            ray.shutdown()
        self._started = False
        self._connected = False
        self._remote = None

    def describe(self) -> dict:
        d = {"runner": "ray", "address": self.address, "chunk_runs": self.chunk_runs,
             "max_retries": self.max_retries}
        if self._connected and ray is not None and ray.is_initialized():
            res = ray.cluster_resources()
            d.update(workers=int(res.get("CPU", 0)),
                     nodes=sum(1 for n in ray.nodes() if n.get("Alive")),
                     ray_version=ray.__version__)
        else:
            d.update(workers=self.num_cpus)
        return d

    # -- running ---------------------------------------------------------------------------
    def run(self, jobs: Sequence[Job], seed: int, *, journal: Any = None,
            progress: ProgressFn | None = None) -> list[Reduction]:
        tasks = plan(jobs, self.chunk_runs)
        seed = int(seed)
        merger = _OrderedMerge(jobs, tasks)
        todo = []
        for j, i, size in tasks:
            red = journal.get(jobs[j], i, size, seed=seed) if journal is not None else None
            if red is None:
                todo.append((j, i, size))
            else:
                merger.add(j, i, red)
                if progress is not None:
                    progress(size)
        self.stats = {"chunks": len(tasks), "from_journal": len(tasks) - len(todo),
                      "computed": 0, "tasks": 0, "abandoned": 0}
        if todo:
            self._execute(jobs, seed, todo, journal, progress, merger)
        return merger.totals()

    def _execute(self, jobs: Sequence[Job], seed: int, todo: list, journal: Any,
                 progress: ProgressFn | None, merger: "_OrderedMerge") -> None:
        self.connect()
        specs, objs = self._put_objects(jobs, {j for j, _, _ in todo})
        workers = self.workers()
        window = 2 * workers  # enough queued tasks to keep every CPU busy between round trips
        queue = deque(todo)
        inflight: dict[Any, list] = {}
        sec_per_run: float | None = None  # measured compute time per run, drives batch size

        def submit() -> None:
            n = 1
            if sec_per_run is not None:
                n = int(self.task_seconds / max(sec_per_run * queue[0][2], 1e-9))
            # Near the end, smaller batches keep every worker busy until the last chunk.
            n = max(1, min(n, _MAX_CHUNKS_PER_TASK, math.ceil(len(queue) / workers)))
            batch = [queue.popleft() for _ in range(min(n, len(queue)))]
            used = sorted({j for j, _, _ in batch})
            local = {j: s for s, j in enumerate(used)}
            task_specs, args = _task_args(specs, used)
            items = [(local[j], i, size) for j, i, size in batch]
            ref = self._remote.remote(seed, task_specs, items, *args)
            inflight[ref] = batch
            self.stats["tasks"] += 1

        try:
            while queue or inflight:
                while queue and len(inflight) < window:
                    submit()
                # A timeout keeps the loop responsive to Ctrl-C / SIGTERM.
                ready, _ = ray.wait(list(inflight), num_returns=1, timeout=1.0)
                for ref in ready:
                    _, sec_per_run = self._absorb(ref, inflight, jobs, seed, journal, progress,
                                                  sec_per_run, merger.add)
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM -> SystemExit) or failed: stop submitting and drop the
            # tasks in flight (at most two per CPU, each about `task_seconds`). They are not
            # ray.cancel'ed: in Ray 2.60 cancelling a task whose reply is arriving aborts this
            # driver process (RAY_CHECK "Tried to complete task that was not pending", exit code
            # 1 -- privaudit's code for a violation). Every chunk already journaled stays valid.
            self.stats["abandoned"] = len(inflight)
            inflight.clear()
            raise

    def _absorb(self, ref: Any, inflight: dict, jobs: Sequence[Job], seed: int, journal: Any,
                progress: ProgressFn | None, sec_per_run: float | None,
                sink: Callable[[int, int, Reduction], None]) -> tuple[list, float]:
        """Take a finished task's chunks: journal each, hand it to `sink(job, chunk, red)`,
        and update the measured seconds per run that sizes the next batches."""
        batch = inflight.pop(ref)
        elapsed, reds = self._fetch(ref, batch, jobs)
        runs = sum(size for _, _, size in batch)
        rate = elapsed / max(runs, 1)
        sec_per_run = rate if sec_per_run is None else 0.7 * sec_per_run + 0.3 * rate
        for (j, i, size), red in zip(batch, reds):
            if journal is not None:
                journal.put(jobs[j], i, size, red, seed=seed)
            sink(j, i, red)
            self.stats["computed"] += 1
            if progress is not None:
                progress(size)
        return batch, sec_per_run

    def iter_rounds(self, jobs: Sequence[Job], seed: int, *, journal: Any = None,
                    progress: ProgressFn | None = None) -> Iterator[tuple[int, list[Reduction]]]:
        """Stream rounds (chunk ``r`` of every job) as Ray tasks; see `Runner.iter_rounds`.

        A task runs one or more consecutive rounds (batched, like `run`, to about
        ``task_seconds``); at most two tasks per CPU are in flight. Rounds are yielded in order,
        whatever order tasks finish in. Closing the generator drops the tasks still queued or
        running without waiting for them (at most two per CPU, each about ``task_seconds``; not
        ``ray.cancel``'ed, see `_execute`): a sequential audit that has decided does not wait for
        the slowest worker.
        """
        sizes = round_sizes(jobs, self.chunk_runs)
        seed = int(seed)
        n_jobs = len(jobs)
        done: dict[int, list] = {}                # round -> reductions (index by job)
        todo_rounds: list[int] = []
        for r, size in enumerate(sizes):
            got = [journal.get(job, r, size, seed=seed) if journal is not None else None
                   for job in jobs]
            if all(g is not None for g in got):
                done[r] = got
            else:
                todo_rounds.append(r)
        self.stats = {"chunks": len(sizes) * n_jobs, "from_journal": len(done) * n_jobs,
                      "computed": 0, "tasks": 0, "abandoned": 0, "streamed": True}
        computed_rounds = set(todo_rounds)
        totals: list[Reduction | None] = [None] * n_jobs
        queue = deque(todo_rounds)
        inflight: dict[Any, list] = {}
        pending: dict[int, list] = {}             # round -> reductions received so far
        specs: dict = {}
        objs: list = []
        workers = 1
        sec_per_run: float | None = None
        if todo_rounds:
            self.connect()
            specs, objs = self._put_objects(jobs, set(range(n_jobs)))
            workers = self.workers()
        window = 2 * workers

        def submit() -> None:
            n = 1
            if sec_per_run is not None:
                per_round = sec_per_run * sizes[queue[0]] * n_jobs
                n = int(self.task_seconds / max(per_round, 1e-9))
            n = max(1, min(n, _MAX_CHUNKS_PER_TASK // max(n_jobs, 1), math.ceil(len(queue) / workers)))
            rounds = [queue.popleft() for _ in range(min(n, len(queue)))]
            batch = [(j, r, sizes[r]) for r in rounds for j in range(n_jobs)]
            task_specs, args = _task_args(specs, range(n_jobs))
            ref = self._remote.remote(seed, task_specs, batch, *args)
            inflight[ref] = batch
            self.stats["tasks"] += 1

        def keep(j: int, rr: int, red: Reduction) -> None:
            pending.setdefault(rr, [None] * n_jobs)[j] = red

        finished = False
        try:
            for r in range(len(sizes)):
                while r not in done:
                    while queue and len(inflight) < window:
                        submit()
                    ready, _ = ray.wait(list(inflight), num_returns=1, timeout=1.0)
                    for ref in ready:
                        batch, sec_per_run = self._absorb(ref, inflight, jobs, seed, journal,
                                                          progress, sec_per_run, keep)
                        for rr in {rr for _, rr, _ in batch}:
                            if all(x is not None for x in pending[rr]):
                                done[rr] = pending.pop(rr)
                for j, red in enumerate(done.pop(r)):
                    totals[j] = red if totals[j] is None else totals[j] + red
                    if progress is not None and r not in computed_rounds:
                        progress(sizes[r])
                yield r, list(totals)  # type: ignore[arg-type]
            finished = True
        finally:
            if not finished:
                # Stopped early (the generator was closed) or failed: drop what is queued or
                # running without waiting; Ray discards their results. Not ray.cancel'ed (see
                # `_execute`: the cancel/reply race aborts the driver). Journaled chunks stay valid.
                self.stats["abandoned"] = len(inflight)
                inflight.clear()

    def _put_objects(self, jobs: Sequence[Job], needed: set[int]) -> tuple[dict, list]:
        """ray.put each distinct black box, input, queries array and reducer once."""
        refs: dict[int, Any] = {}
        keep: list = []  # hold the originals so id() stays unique while refs are alive

        def put(obj: Any) -> Any:
            if obj is None:
                return None
            if id(obj) not in refs:
                refs[id(obj)] = ray.put(obj)
                keep.append(obj)
            return refs[id(obj)]

        specs = {}
        for j in sorted(needed):
            job = jobs[j]
            specs[j] = (put(job.blackbox), put(job.inp), put(job.queries), put(job.reducer),
                        tuple(int(k) for k in job.key), int(job.runs))
        return specs, keep

    def _fetch(self, ref: Any, batch: list, jobs: Sequence[Job]) -> tuple[float, list]:
        """ray.get one task's result, turning Ray's wrappers into clear errors."""
        j0, i0, _ = batch[0]
        name = getattr(jobs[j0].blackbox, "name", type(jobs[j0].blackbox).__name__)
        where = f"chunk {i0} of job {j0}" if len(batch) == 1 else f"chunks from {i0} of job {j0}"
        try:
            return ray.get(ref)
        except rex.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, BlackBoxError):
                raise BlackBoxError(str(cause.args[0] if cause.args else cause)) from None
            if isinstance(cause, PrivauditError):
                raise type(cause)(str(cause.args[0] if cause.args else cause)) from None
            text = str(exc)
            if (isinstance(cause, (ImportError, AttributeError, rex.RaySystemError))
                    or "No module named" in text or "deserializ" in text.lower()):
                found = re.search(r"(No module named [^\n]+|Can't get attribute [^\n]+)", text)
                why = found.group(1) if found else f"{type(cause).__name__}: {cause}"
                raise BlackBoxError(
                    f"black box {name!r} could not be loaded on a Ray worker ({why}); privaudit and "
                    f"the module defining the black box must be importable on every node (install "
                    f"them there, or set PYTHONPATH before `ray start`), or use the local runner") from exc
            raise
        except (rex.WorkerCrashedError, rex.NodeDiedError, rex.ObjectLostError,
                rex.OutOfMemoryError) as exc:
            raise BlackBoxError(
                f"Ray could not run {where} ({name!r}): {type(exc).__name__} after "
                f"{self.max_retries} retries. A worker process kept dying: the black box may "
                f"crash its process (os._exit, a segfault) or run out of memory; try a smaller "
                f"chunk_runs. Finished chunks are journaled if a journal was given.") from exc

    def __repr__(self) -> str:
        return (f"RayRunner(address={self.address!r}, num_cpus={self.num_cpus!r}, "
                f"chunk_runs={self.chunk_runs!r})")


class _OrderedMerge:
    """Adds each job's chunk reductions in chunk order, whatever order they arrive in.

    The same addition order as `LocalRunner` makes even the key order of code tables identical;
    only out-of-order chunks are held, so memory stays bounded by the tasks in flight.
    """

    def __init__(self, jobs: Sequence[Job], tasks: list[tuple[int, int, int]]) -> None:
        self.jobs = jobs
        self.n_chunks = [0] * len(jobs)
        for j, _, _ in tasks:
            self.n_chunks[j] += 1
        self.next = [0] * len(jobs)
        self.held: list[dict[int, Reduction]] = [{} for _ in jobs]
        self.total: list[Reduction | None] = [None] * len(jobs)

    def add(self, j: int, i: int, red: Reduction) -> None:
        if i < self.next[j] or i in self.held[j]:
            warnings.warn(f"chunk {i} of job {j} reported twice; counted once", RuntimeWarning)
            return
        self.held[j][i] = red
        while self.next[j] in self.held[j]:
            r = self.held[j].pop(self.next[j])
            self.total[j] = r if self.total[j] is None else self.total[j] + r
            self.next[j] += 1

    def totals(self) -> list[Reduction]:
        for j, n in enumerate(self.n_chunks):
            if self.next[j] != n:
                raise RuntimeError(f"job {j}: {self.next[j]} of {n} chunks finished")
        return [t if t is not None else job.reducer.empty() for t, job in zip(self.total, self.jobs)]


__all__ = ["RayRunner"]
