"""Throughput of Li, Wang & Ye's black boxes: complete runs (fit + predict) per second.

Usage: ``python benchmarks/bench_lwy.py [--runs R]``. Data: THR-1 (thresholds on 32 grid points,
target c_13, label noise 0.4 -- realizable for P1) at n = 1,000 and 10,000; one query per run for
the prediction-scope learners, 8 queries (one model) for the others.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import algorithms
from audit.types import Dataset


def thr1(n: int, eta: float, rng: np.random.Generator) -> Dataset:
    x = rng.integers(0, 32, n).astype(np.float64)
    return Dataset(x.reshape(-1, 1), ((x >= 13) ^ (rng.random(n) < eta)).astype(np.int8))


CASES = [
    ("lwy-n2", dict(epsilon=0.1), 0.4),
    ("lwy-n2", dict(epsilon=0.1, base="locprobe"), 0.4),
    ("lwy-b1", dict(), 0.4),
    ("lwy-b3", dict(epsilon=0.5), 0.4),
    ("lwy-m4", dict(m=100), 0.4),
    ("lwy-p1", dict(), 0.0),
    ("lwy-p2", dict(epsilon=0.1), 0.4),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20_000)
    args = ap.parse_args()
    print(f"{'learner':32s} {'n':>7s} {'runs/s':>12s}")
    for name, params, eta in CASES:
        for n in (1_000, 10_000):
            # lwy-m4's claim is for datasets of exactly its n records: build it for this n
            L = algorithms.get(name, grid=32, **({"n": n} if name == "lwy-m4" else {}), **params)
            rng = np.random.default_rng(0)
            S = thr1(n, eta, rng)
            q = np.array([[12.0]]) if getattr(L, "per_query", False) else np.arange(0.0, 32.0, 4.0).reshape(-1, 1)
            runs = args.runs // (5 if name == "lwy-p2" else 1)
            L.predict(S, q, 100, rng)                                  # warm caches
            t = time.perf_counter()
            L.predict(S, q, runs, rng)
            dt = time.perf_counter() - t
            label = name + ("" if not params else " " + ",".join(f"{k}={v}" for k, v in params.items()))
            print(f"{label:32s} {n:7d} {runs / dt:12,.0f}", flush=True)


if __name__ == "__main__":
    main()
