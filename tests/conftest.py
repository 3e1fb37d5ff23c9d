"""Shared fixtures: one Ray instance for the whole session (starting one costs ~7 s)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def ray_instance():
    """A local 2-CPU Ray instance, started once; yields its GCS address ("HOST:PORT").

    Started through `RayRunner.connect`, so workers see the same import path as this process
    (the test modules' black boxes must unpickle there). Shut down at the end of the session
    only if this fixture started it.
    """
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    import ray

    from audit.runners.ray_runner import RayRunner

    runner = RayRunner(num_cpus=2)
    runner.connect()
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        runner.close()
