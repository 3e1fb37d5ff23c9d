"""Throughput of the Dagan & Feldman learners (runs per second), THR class.

Each run is one complete, independent fit + predict at one query point. Datasets are the
learners' own D3-style audit datasets (two clusters, one record elsewhere) scaled to n records.

Usage: python benchmarks/bench_df_learners.py [--runs 200000] [--grid 64]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import algorithms
from algorithms.dagan_feldman.designs import d3_stable_not_private

CASES = [("df-em", {}), ("df-em", {"eta": 0.1}), ("df-b3", {}), ("df-sta", {}),
         ("df-sta", {"mode": "formal"}), ("df-cor1", {})]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=200_000)
    ap.add_argument("--grid", type=int, default=64)
    args = ap.parse_args()
    print(f"{'learner':<28} {'n':>7} {'runs/s':>12} {'runs/min':>12}")
    for name, params in CASES:
        L = algorithms.get(name, grid=args.grid, **params)
        for n in (1_000, 10_000):
            S, _, q = d3_stable_not_private(L.H, n)
            rng = np.random.default_rng(0)
            L.predict(S, q, 1000, rng)                               # warm-up
            t = time.perf_counter()
            L.predict(S, q, args.runs, rng)
            rate = args.runs / (time.perf_counter() - t)
            label = name + ("" if not params else " " + ",".join(f"{k}={v}" for k, v in params.items()))
            print(f"{label:<28} {n:>7} {rate:>12,.0f} {60 * rate:>12,.0f}")


if __name__ == "__main__":
    main()
