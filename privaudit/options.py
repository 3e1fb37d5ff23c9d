"""Command-line options shared by several subcommands, with their validation."""

from __future__ import annotations

import argparse
import math
import os

from audit.interfaces import own_pairs


def positive_seconds(text: str) -> float:
    """argparse type: a finite number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds (a number > 0), got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected seconds (a finite number > 0), got {text!r}")
    return value


def add_timeout(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=positive_seconds, metavar="SECONDS",
                   help="stop a run that takes longer (a hanging black box): exit 2; finished "
                        "chunks stay in the journal")




# `--runner auto`: Ray pays only when a job is long enough to amortise starting it (~7 s and
# ~400 MB) and there are enough cores; on 2 cores the in-process runner was 3-4x faster for the
# Quick start's audit.
AUTO_RAY_MIN_CPUS = 4
AUTO_RAY_MIN_RUNS = 2 * 10**7


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def planned_runs(req) -> int:
    """Rough number of black-box runs a request will make (both sides of every pair; one pair's
    replication of a chosen threshold, which code-set outputs do not draw, counted in)."""
    b = req.budget
    if getattr(req, "packing", None) is not None:          # a packing audit: runs per dataset
        return int(req.packing.size) * int(b.confirm_runs)
    pairs = req.pairs if req.pairs is not None else own_pairs(req.target)
    try:
        n = max(1, len(pairs)) if pairs is not None else 1
    except TypeError:
        n = 1
    return 2 * n * (int(b.explore_runs) + int(b.confirm_runs) * max(1, int(b.tests))) \
        + 2 * int(b.explore_runs)


def runner_choice(runs: int, address: str | None, num_cpus: int | None) -> tuple[str, str]:
    """("ray" | "local", why) for `--runner auto`."""
    if address:
        return "ray", f"--address {address}"
    cpus = num_cpus if num_cpus is not None else available_cpus()
    if num_cpus is not None:
        return "ray", f"--num-cpus {num_cpus}"
    if cpus >= AUTO_RAY_MIN_CPUS and runs >= AUTO_RAY_MIN_RUNS:
        return "ray", f"~{runs:.2g} runs on {cpus} CPUs; --runner local to stay in-process"
    return "local", (f"in-process: ~{runs:.2g} runs on {cpus} CPUs; Ray pays from "
                     f"{AUTO_RAY_MIN_CPUS} CPUs and {AUTO_RAY_MIN_RUNS:.0e} runs; --runner ray to force it")


__all__ = ["positive_seconds", "add_timeout", "planned_runs", "runner_choice", "available_cpus"]
