"""Progress of long runs: a tqdm bar (runs done / total, runs/s, ETA) on a terminal, silence elsewhere.

Runners call ``progress(k)`` as k more runs finish (`Runner.run(..., progress=fn)`). This module
makes such callbacks:

    >>> with make_progress(total=10**8, desc="confirm") as fn:
    ...     runner.run(jobs, seed, progress=fn)

and `ProgressRunner` wraps a runner so that every `run` call (exploration, confirmation, ...)
shows its own bar without the caller passing anything. Bars are drawn only when the stream is a
TTY and ``CI`` is not set, so logs of CI jobs and of piped runs stay clean.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Sequence, TextIO

from audit.replicate import REPLICATE
from audit.runners.base import Job, Runner, total_runs
from audit.staged import EXPLORE_STAGE, EXPLORE_VALIDATE

ProgressFn = Callable[[int], None]


def progress_enabled(stream: TextIO | None = None) -> bool:
    """True when a progress bar should be drawn on `stream` (default stderr)."""
    stream = sys.stderr if stream is None else stream
    if os.environ.get("CI") or os.environ.get("PRIVAUDIT_NO_PROGRESS"):
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or fake streams
        return False


class _Bar:
    """Callable progress sink; a no-op unless enabled."""

    def __init__(self, total: int | None, desc: str, stream: TextIO | None, enabled: bool | None) -> None:
        stream = sys.stderr if stream is None else stream
        self.done = 0
        self.total = None if total is None else int(total)
        self._bar = None
        if progress_enabled(stream) if enabled is None else enabled:
            from tqdm import tqdm
            self._bar = tqdm(total=self.total, desc=desc, unit="run", unit_scale=True,
                             dynamic_ncols=True, file=stream, leave=False, smoothing=0.1,
                             mininterval=0.25)

    def __call__(self, k: int) -> None:
        self.done += int(k)
        if self._bar is not None:
            self._bar.update(int(k))

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "_Bar":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress_bar(total: int, desc: str = "runs", *, stream: TextIO | None = None,
                 enabled: bool | None = None) -> _Bar:
    """A progress callback ``fn(k)`` for `total` runs; use as a context manager (or `.close()`).

    Parameters
    ----------
    total : int
        Runs expected.
    desc : str
        Label in front of the bar.
    stream : file, optional
        Where to draw (default stderr).
    enabled : bool, optional
        Force the bar on or off; default: only on a TTY and outside CI.
    """
    return _Bar(total, desc, stream, enabled)


def make_progress(total: int | None = None, desc: str = "runs", *, stream: TextIO | None = None,
                  enabled: bool | None = None) -> _Bar:
    """The progress-callback factory: like `progress_bar`, and `total` may be unknown (None),
    in which case the bar shows runs done and runs/s but no ETA."""
    return _Bar(total, desc, stream, enabled)


def _phase(jobs: Sequence[Job]) -> str:
    # The auditor's phases are the first element of every job key (audit/auditor.py).
    names = {0: "explore", 1: "confirm", 2: "pilot", 3: "search",
             EXPLORE_STAGE: "explore (stage)", EXPLORE_VALIDATE: "explore (validation)",
             REPLICATE: "replicate"}
    kinds = {names.get(int(j.key[0]), "runs") if len(j.key) else "runs" for j in jobs}
    return kinds.pop() if len(kinds) == 1 else "runs"


class ProgressRunner(Runner):
    """A runner that shows a progress bar for each `run` call of the runner it wraps.

    Forwards everything else (``describe``, ``close``, ``chunk_runs``) to the wrapped runner.
    A `progress` callback passed to `run` is still called.
    """

    def __init__(self, runner: Runner, *, desc: str | None = None, stream: TextIO | None = None,
                 enabled: bool | None = None) -> None:
        self.runner = runner
        self.desc = desc
        self.stream = stream
        self.enabled = enabled
        self.calls = 0

    @property
    def chunk_runs(self) -> int | None:  # type: ignore[override]
        return self.runner.chunk_runs

    def run(self, jobs: Sequence[Job], seed: int, *, journal: Any = None,
            progress: ProgressFn | None = None) -> list:
        self.calls += 1
        desc = self.desc if self.desc is not None else _phase(jobs)
        with progress_bar(total_runs(jobs), desc, stream=self.stream,
                          enabled=self.enabled) as bar:
            def both(k: int) -> None:
                bar(k)
                if progress is not None:
                    progress(k)
            return self.runner.run(jobs, seed, journal=journal, progress=both)

    def iter_rounds(self, jobs: Sequence[Job], seed: int, *, journal: Any = None,
                    progress: ProgressFn | None = None):
        """The wrapped runner's rounds, with a bar over the whole budget (it may stop early)."""
        self.calls += 1
        desc = self.desc if self.desc is not None else _phase(jobs) + " (sequential)"
        with progress_bar(total_runs(jobs), desc, stream=self.stream,
                          enabled=self.enabled) as bar:
            def both(k: int) -> None:
                bar(k)
                if progress is not None:
                    progress(k)
            rounds = self.runner.iter_rounds(jobs, seed, journal=journal, progress=both)
            try:
                yield from rounds
            finally:
                rounds.close()

    def describe(self) -> dict:
        return self.runner.describe()

    def close(self) -> None:
        self.runner.close()

    def __getattr__(self, name: str) -> Any:
        # Runner-specific extras (RayRunner.stats, .connect, ...) stay reachable.
        if name == "runner":
            raise AttributeError(name)
        return getattr(self.runner, name)


__all__ = ["make_progress", "progress_bar", "progress_enabled", "ProgressRunner", "ProgressFn"]
