"""Runners execute sampling jobs and return counts: `LocalRunner` (in-process) and `RayRunner`."""

from .base import Job, Runner, call_blackbox, chunk_rng, run_chunk
from .factory import make_runner
from .local import LocalRunner


def __getattr__(name: str):
    # Ray is imported only when a RayRunner is asked for: `import ray` costs seconds.
    if name == "RayRunner":
        from .ray_runner import RayRunner
        return RayRunner
    raise AttributeError(name)


__all__ = ["Job", "Runner", "LocalRunner", "RayRunner", "make_runner", "call_blackbox", "chunk_rng", "run_chunk"]
