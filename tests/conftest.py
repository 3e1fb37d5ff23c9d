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


@pytest.fixture
def ray_cancel_calls(monkeypatch):
    """Every ``ray.cancel`` call made during the test (none are expected).

    In Ray 2.60 a ``ray.cancel`` that races the task's own reply aborts the driver process
    (RAY_CHECK "Tried to complete task that was not pending", exit code 1 -- privaudit's code for
    a violation); CI died so once, in a sequential audit interrupted on Ray. The Ray runner
    therefore drops the tasks in flight instead of cancelling them.
    """
    import ray

    calls: list = []
    monkeypatch.setattr(ray, "cancel", lambda *a, **k: calls.append((a, k)))
    return calls
