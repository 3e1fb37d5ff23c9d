"""What a runner executes: jobs cut into seeded chunks, each reduced to counts.

A `Job` is "run this black box `runs` times on this input and reduce the outputs with this
reducer". It is cut into chunks of `chunk_runs` runs; chunk ``i`` of a job with key ``k`` draws its
randomness from ``SeedSequence(seed, spawn_key=k + (i,))`` — the ``i``-th child of
``SeedSequence(seed, spawn_key=k).spawn(...)`` — so the counts depend only on (seed, job, chunk
size), never on which process or machine ran a chunk, nor in which order.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from .. import interrupts
from ..errors import BlackBoxError, PrivauditError
from ..interfaces import is_learner
from ..reducers import Reducer, Reduction
from ..types import Dataset

DEFAULT_CHUNK_RUNS_MECHANISM = 1 << 18
DEFAULT_CHUNK_RUNS_LEARNER = 1 << 13


@dataclass(frozen=True, eq=False)
class Job:
    """Run `blackbox` `runs` times on `inp` (and `queries`, for a learner); reduce with `reducer`.

    `key` identifies the job within an audit (it is the job's spawn key); `chunk_runs` fixes the
    chunking, which together with the seed fixes the counts; `schedule`, when given, lists the
    chunk sizes explicitly (they must add up to `runs`; a sequential confirmation grows them).
    """

    blackbox: Any
    inp: Any
    runs: int
    reducer: Reducer
    key: tuple[int, ...]
    queries: np.ndarray | None = None
    chunk_runs: int | None = None
    schedule: tuple[int, ...] | None = None

    def chunk_sizes(self, chunk_runs: int | None = None) -> list[int]:
        if self.schedule is not None:
            if sum(self.schedule) != int(self.runs) or min(self.schedule, default=0) < 1:
                raise PrivauditError(f"a chunk schedule must be positive sizes adding up to runs "
                                     f"({self.runs}), got {sum(self.schedule)}")
            return list(self.schedule)
        size = resolve_chunk_runs(self, chunk_runs)
        full, rest = divmod(int(self.runs), size)
        return [size] * full + ([rest] if rest else [])


def resolve_chunk_runs(job: Job, runner_chunk_runs: int | None = None) -> int:
    """The chunk size of a job: the job's own, else the runner's, else the black box's hint."""
    for c in (job.chunk_runs, runner_chunk_runs, getattr(job.blackbox, "chunk_runs", None)):
        if c is not None:
            if int(c) < 1:
                raise PrivauditError(f"chunk_runs must be >= 1, got {c}")
            return int(c)
    return DEFAULT_CHUNK_RUNS_LEARNER if is_learner(job.blackbox) else DEFAULT_CHUNK_RUNS_MECHANISM


def chunk_rng(seed: int, key: tuple[int, ...], index: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=tuple(key) + (int(index),)))


def call_blackbox(blackbox: Any, inp: Any, queries: np.ndarray | None, runs: int,
                  rng: np.random.Generator) -> np.ndarray:
    """Call a learner's `predict` or a mechanism's `sample` and check what comes back.

    Raises `BlackBoxError` naming the black box when it raises or returns anything but a finite
    array with one row per run (and, for a learner, labels in {0, 1} for every query).
    """
    name = getattr(blackbox, "name", type(blackbox).__name__)
    learner = is_learner(blackbox)
    try:
        with interrupts.guard_exit():
            out = blackbox.predict(inp, queries, runs, rng) if learner else blackbox.sample(inp, runs, rng)
    except BlackBoxError:
        raise
    except KeyboardInterrupt as exc:
        if interrupts.requested():  # Ctrl-C, SIGTERM or a time limit: stop the run
            raise
        raise BlackBoxError(f"black box {name!r} raised KeyboardInterrupt itself") from exc
    except SystemExit as exc:  # the user's code must not decide privaudit's exit code
        raise BlackBoxError(f"black box {name!r} called sys.exit({exc.code!r})") from exc
    except interrupts.BlackBoxExit as exc:
        raise BlackBoxError(f"black box {name!r} called os._exit({exc.code!r})") from exc
    except Exception as exc:  # the user's code: report it, do not hide it
        raise BlackBoxError(f"black box {name!r} raised {type(exc).__name__}: {exc}") from exc
    try:
        out = np.asarray(out)
    except Exception as exc:
        raise BlackBoxError(f"black box {name!r} returned {type(out).__name__}, not an array") from exc
    if out.dtype.kind not in "biuf":
        raise BlackBoxError(f"black box {name!r} returned dtype {out.dtype}; outputs must be integers or floats")
    if out.ndim == 0 or out.shape[0] != runs:
        raise BlackBoxError(f"black box {name!r} returned shape {out.shape} for runs={runs}; "
                            f"the first axis must have one entry per run")
    if learner:
        q = 0 if queries is None else len(queries)
        if out.shape != (runs, q):
            raise BlackBoxError(f"learner {name!r} returned shape {out.shape}; expected (runs, queries) = ({runs}, {q})")
        ok = (out == 0) | (out == 1)
        if not np.all(ok):
            bad = out[~ok].ravel()[:3].tolist()
            raise BlackBoxError(f"learner {name!r} returned non-label values {bad}; predictions must be "
                                f"sampled labels in {{0, 1}} (wrap a confidence-valued model as a Mechanism)")
        return out.astype(np.int8, copy=False)
    if out.ndim > 2:
        raise BlackBoxError(f"mechanism {name!r} returned shape {out.shape}; outputs must be (runs,) or (runs, k)")
    if out.dtype.kind == "f" and np.any(np.isinf(out)):
        # NaN is allowed: it means "no value" (audit.mixed); an infinity is a bug
        raise BlackBoxError(f"mechanism {name!r} returned infinite outputs (use NaN for \"no value\")")
    return out


def run_chunk(job: Job, seed: int, index: int, size: int) -> Reduction:
    """Run chunk `index` (of `size` runs) of `job` and reduce it. Pure: same arguments, same counts."""
    rng = chunk_rng(seed, job.key, index)
    return job.reducer(call_blackbox(job.blackbox, job.inp, job.queries, size, rng))


def journaled_chunk(job: Job, seed: int, index: int, size: int, journal: Any) -> Reduction:
    """Chunk `index` of `job` from the journal when it holds it; else run it and journal it."""
    red = journal.get(job, index, size, seed=seed) if journal is not None else None
    if red is None:
        red = run_chunk(job, seed, index, size)
        if journal is not None:
            journal.put(job, index, size, red, seed=seed)
    return red


ProgressFn = Callable[[int], None]


class Runner(ABC):
    """Executes jobs and returns one merged reduction per job, in order.

    Implementations must give counts that depend only on (seed, jobs, chunk sizes).
    """

    chunk_runs: int | None = None

    @abstractmethod
    def run(self, jobs: Sequence[Job], seed: int, *, journal: Any = None,
            progress: ProgressFn | None = None) -> list[Reduction]:
        """Run every job; `journal` (optional) records finished chunks and supplies those already
        done; `progress(k)` is called as k more runs finish."""

    def iter_rounds(self, jobs: Sequence[Job], seed: int, *, journal: Any = None,
                    progress: ProgressFn | None = None) -> Iterator[tuple[int, list[Reduction]]]:
        """Stream the jobs round by round: round ``r`` is chunk ``r`` of every job.

        Yields ``(r, totals)`` with each job's reduction of chunks ``0..r`` (cumulative), in
        round order whatever order the chunks finished in, so a caller that stops after some
        round stops at the same point on every runner and after a resume. Closing the generator
        (or breaking out of a ``for`` loop over it, then closing it) stops the work still
        queued. All jobs must be cut into the same chunk sizes. This default runs the chunks in
        this process, one after another; runners with workers override it.
        """
        sizes = round_sizes(jobs, self.chunk_runs)
        totals: list[Reduction | None] = [None] * len(jobs)
        for r, size in enumerate(sizes):
            for j, job in enumerate(jobs):
                red = journaled_chunk(job, seed, r, size, journal)
                totals[j] = red if totals[j] is None else totals[j] + red
                if progress is not None:
                    progress(size)
            yield r, list(totals)  # type: ignore[arg-type]

    def describe(self) -> dict:
        return {"runner": type(self).__name__, "workers": 1}

    def close(self) -> None:
        """Release resources (a Ray instance this runner started, ...)."""

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def plan(jobs: Sequence[Job], chunk_runs: int | None) -> list[tuple[int, int, int]]:
    """Every (job index, chunk index, chunk size) to execute."""
    tasks = []
    for j, job in enumerate(jobs):
        if int(job.runs) < 1:
            raise PrivauditError(f"runs must be >= 1, got {job.runs}")
        for i, size in enumerate(job.chunk_sizes(chunk_runs)):
            tasks.append((j, i, size))
    return tasks


def round_sizes(jobs: Sequence[Job], chunk_runs: int | None) -> list[int]:
    """The common chunk sizes of jobs streamed in rounds (`Runner.iter_rounds`)."""
    if not jobs:
        return []
    sizes = [job.chunk_sizes(chunk_runs) for job in jobs]
    if any(s != sizes[0] for s in sizes[1:]):
        raise PrivauditError("jobs streamed in rounds must have the same runs and chunk size")
    if int(jobs[0].runs) < 1:
        raise PrivauditError(f"runs must be >= 1, got {jobs[0].runs}")
    return sizes[0]


def total_runs(jobs: Iterable[Job]) -> int:
    return int(sum(int(j.runs) for j in jobs))


def check_jobs_inputs(jobs: Sequence[Job]) -> None:
    for job in jobs:
        if is_learner(job.blackbox) and not isinstance(job.inp, Dataset):
            raise PrivauditError("a learner's input must be a Dataset")


__all__ = ["Job", "Runner", "run_chunk", "call_blackbox", "chunk_rng", "plan", "total_runs",
           "resolve_chunk_runs", "round_sizes"]
