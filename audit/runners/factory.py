"""Build a runner from the CLI's or a CI config's words: ``make_runner("ray", address=...)``."""

from __future__ import annotations

from ..errors import PrivauditError
from .base import Runner
from .local import LocalRunner
from .ray_runner import RayRunner

RUNNER_KINDS = ("ray", "local")


def make_runner(kind: str = "ray", address: str | None = None, num_cpus: int | None = None,
                chunk_runs: int | None = None) -> Runner:
    """A `LocalRunner` or a `RayRunner`.

    Parameters
    ----------
    kind : {"ray", "local"}
        "ray" (the default) starts a local Ray instance at the first run, or joins the cluster
        at `address` ("auto", "HOST:PORT", "ray://HOST:PORT"); "local" runs in this process and
        needs no Ray.
    address : str, optional
        Ray cluster to join; only with ``kind="ray"``.
    num_cpus : int, optional
        CPUs of a local Ray instance; only with ``kind="ray"`` and no `address`.
    chunk_runs : int, optional
        Runs per chunk. Equal chunk sizes give equal counts on either runner.

    Returns
    -------
    Runner
        Close it (or use it as a context manager) to stop a Ray instance it started.
    """
    k = str(kind).strip().lower()
    if k not in RUNNER_KINDS:
        raise PrivauditError(f"unknown runner {kind!r}; choose one of {', '.join(RUNNER_KINDS)}")
    if chunk_runs is not None:
        try:
            ok = not isinstance(chunk_runs, bool) and int(chunk_runs) == chunk_runs and int(chunk_runs) >= 1
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise PrivauditError(f"chunk_runs must be a positive integer, got {chunk_runs!r}")
        chunk_runs = int(chunk_runs)
    if k == "local":
        if address is not None:
            raise PrivauditError(f"address={address!r} needs the Ray runner; the local runner "
                                 f"runs in this process")
        if num_cpus is not None:
            raise PrivauditError("num_cpus needs the Ray runner; the local runner uses one process")
        return LocalRunner(chunk_runs=chunk_runs)
    return RayRunner(address=address, num_cpus=num_cpus, chunk_runs=chunk_runs)


__all__ = ["make_runner", "RUNNER_KINDS"]
