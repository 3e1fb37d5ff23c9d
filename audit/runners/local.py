"""In-process runner: chunks run one after another in this process, vectorised inside."""

from __future__ import annotations

from typing import Any, Sequence

from ..reducers import Reduction
from .base import Job, ProgressFn, Runner, journaled_chunk, plan


class LocalRunner(Runner):
    """Run every chunk in this process.

    Parameters
    ----------
    chunk_runs : int, optional
        Runs per chunk (memory is bounded by one chunk's outputs). Default: the black box's
        ``chunk_runs`` attribute, else 2**13 runs for learners and 2**18 for mechanisms.
    """

    def __init__(self, chunk_runs: int | None = None) -> None:
        self.chunk_runs = chunk_runs

    def run(self, jobs: Sequence[Job], seed: int, *, journal: Any = None,
            progress: ProgressFn | None = None) -> list[Reduction]:
        totals: list[Reduction | None] = [None] * len(jobs)
        for j, i, size in plan(jobs, self.chunk_runs):
            red = journaled_chunk(jobs[j], seed, i, size, journal)
            totals[j] = red if totals[j] is None else totals[j] + red
            if progress is not None:
                progress(size)
        return [t if t is not None else job.reducer.empty() for t, job in zip(totals, jobs)]

    def describe(self) -> dict:
        return {"runner": "local", "workers": 1, "chunk_runs": self.chunk_runs}
