"""Throughput of the Chaudhuri & Hsu learners (runs per second) at n = 1,000 and 10,000 records.

    python benchmarks/bench_ch.py [--runs R] [--quick]

One run = one complete fit (candidate list, mistake counts, one hypothesis drawn) and the
prediction of that hypothesis at the learner's default queries (<= 8). Two figures per learner:
``predict`` (the black box alone, one call for all runs) and ``pipeline`` (LocalRunner with the
auditor's joint-label reducer, i.e. what an audit pays per run, chunked by ``chunk_runs``).
Datasets: x uniform on the class's grid, labels from a fixed target with 10% label noise.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import algorithms
from algorithms.chaudhuri_hsu.learners import _ds
from audit.reducers import CodeCounter
from audit.runners import Job, LocalRunner

CASES = [("ch-em", {}), ("ch-a1", {}), ("ch-a1", {"eps0": 0.0}), ("ch-a1r", {}),
         ("ch-a1", {"cls": "sep2"}), ("ch-a1", {"cls": "int", "grid": 32}), ("ch-a2", {}),
         ("ch-a2", {"cls": "sep2"}), ("ch-erm", {}),
         ("ch-a1", {"variant": "brk-2"}), ("ch-a1", {"variant": "brk-4"}),
         ("ch-a1", {"variant": "fp-5"})]


def dataset(L, n: int, rng: np.random.Generator):
    H = L.H
    target = H.matrix[H.size // 2]
    idx = rng.integers(0, H.N, size=n)
    y = np.where(rng.random(n) < 0.1, 1 - target[idx], target[idx])
    return _ds(H, idx.tolist(), y.tolist())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200_000)
    ap.add_argument("--quick", action="store_true", help="20,000 runs")
    args = ap.parse_args()
    runs = 20_000 if args.quick else args.runs
    rng = np.random.default_rng(0)
    print(f"{'learner':<10}{'params':<26}{'n':>7}{'|G|':>6}{'predict runs/s':>16}{'pipeline runs/s':>17}")
    for name, kw in CASES:
        L = algorithms.get(name, **kw)
        for n in (1_000, 10_000):
            S = dataset(L, n, rng)
            G = L.cover(S).size
            t = time.perf_counter()
            L.predict(S, L.queries, runs, rng)
            t_pred = time.perf_counter() - t
            t = time.perf_counter()
            LocalRunner().run([Job(L, S, runs, CodeCounter(None, "bits"), (0, 0, 0), L.queries)], seed=0)
            t_pipe = time.perf_counter() - t
            label = ",".join(f"{k}={v}" for k, v in kw.items()) or "-"
            print(f"{name:<10}{label:<26}{n:>7,}{G:>6}{runs / t_pred:>16.3g}{runs / t_pipe:>17.3g}", flush=True)


if __name__ == "__main__":
    main()
