"""Throughput of LocalRunner vs RayRunner (1 and 2 workers), in runs per second.

    python benchmarks/bench_ray.py                   # 1e7 runs of dp-rr, dp-laplace, ch-a1
    python benchmarks/bench_ray.py --runs 2e7 --repeat 5 --algorithms dp-rr

Each Ray configuration starts its own local instance (not timed), does one warm-up run (worker
processes start and import numpy: timed separately as "first run"), then `--repeat` timed runs;
the median is reported. Counts are checked equal to LocalRunner's on every run.
The jobs are what an audit's confirmation phase runs: both inputs of the mechanism's worst pair,
`runs/2` each, reduced to counts (dp-rr: output codes; dp-laplace: a 64-bin histogram; a learner
such as ch-a1: joint label codes at its query points).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

import algorithms
from audit.reducers import CodeCounter, HistogramCounter
from audit.runners import Job, LocalRunner
from audit.runners.ray_runner import RayRunner
from audit.interfaces import is_learner


def make_jobs(name: str, runs: int) -> list[Job]:
    mech = algorithms.get(name)
    a, b = mech.pairs[0]
    if is_learner(mech):  # predictions at the learner's own query points, as joint label codes
        q = np.asarray(mech.queries, dtype=np.float64)
        return [Job(mech, a, runs // 2, CodeCounter(encoding="bits"), key=(1, 0, 0), queries=q),
                Job(mech, b, runs - runs // 2, CodeCounter(encoding="bits"), key=(1, 0, 1), queries=q)]
    if name == "dp-laplace":
        edges = tuple(float(x) for x in np.linspace(-4, 5, 63))
        reducer = HistogramCounter(((1.0,),), (edges,))
    else:
        reducer = CodeCounter()
    return [Job(mech, a, runs // 2, reducer, key=(1, 0, 0)),
            Job(mech, b, runs - runs // 2, reducer, key=(1, 0, 1))]


def same(xs, ys) -> bool:
    for x, y in zip(xs, ys):
        if hasattr(x, "table"):
            if x.table != y.table:
                return False
        elif not np.array_equal(x.counts, y.counts):
            return False
    return True


def timed(runner, jobs, repeat: int, reference=None) -> tuple[float, list[float]]:
    times = []
    for r in range(repeat):
        t0 = time.perf_counter()
        out = runner.run(jobs, seed=r)
        times.append(time.perf_counter() - t0)
        if reference is not None and not same(out, reference[r]):
            raise SystemExit("counts differ from LocalRunner's: determinism is broken")
    return statistics.median(times), times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=float, default=1e7)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--algorithms", nargs="+", default=["dp-rr", "dp-laplace", "ch-a1"],
                    help="registered mechanisms or learners (learners: at their own pairs/queries)")
    ap.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    args = ap.parse_args()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    runs = int(args.runs)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# {runs:,} runs per measurement, median of {args.repeat}; {os.cpu_count()} CPUs, "
          f"load average {load:.1f} at start")

    rows = []
    local_rate, refs = {}, {}
    for name in args.algorithms:
        jobs = make_jobs(name, runs)
        runner = LocalRunner()
        runner.run(make_jobs(name, 100_000), seed=0)  # warm caches, import paths
        refs[name] = [runner.run(jobs, seed=r) for r in range(args.repeat)]
        med, _ = timed(runner, jobs, args.repeat)
        local_rate[name] = runs / med
        rows.append((name, "local", "-", med, runs / med, 1.0))

    for w in args.workers:
        t0 = time.perf_counter()
        ray_runner = RayRunner(num_cpus=w)
        ray_runner.connect()
        start = time.perf_counter() - t0
        for name in args.algorithms:
            jobs = make_jobs(name, runs)
            t0 = time.perf_counter()
            ray_runner.run(jobs, seed=0)
            first = time.perf_counter() - t0
            med, _ = timed(ray_runner, jobs, args.repeat, refs[name])
            rows.append((name, f"ray x{w}", f"{start:.1f}s start, {first:.2f}s first run",
                         med, runs / med, local_rate[name] / (runs / med)))
            print(f"  ray x{w} {name}: {ray_runner.stats}", file=sys.stderr)
        ray_runner.close()

    print(f"{'algorithm':<11} {'runner':<8} {'runs/s':>12} {'seconds':>8} {'local/ray':>9}  notes")
    for name, kind, note, med, rate, ratio in rows:
        print(f"{name:<11} {kind:<8} {rate:>12,.0f} {med:>8.3f} {ratio:>9.2f}  {note}")


if __name__ == "__main__":
    main()
