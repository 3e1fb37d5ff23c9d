"""Runners execute sampling jobs and return counts: `LocalRunner` (in-process) and `RayRunner`."""

from .base import Job, Runner, call_blackbox, chunk_rng, run_chunk
from .factory import make_runner
from .local import LocalRunner
from .ray_runner import (
    RayRunner,  # cheap: `ray` itself is imported at the first connection
)

__all__ = ["Job", "Runner", "LocalRunner", "RayRunner", "make_runner", "call_blackbox", "chunk_rng", "run_chunk"]
