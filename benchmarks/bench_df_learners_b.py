"""Throughput of DF-REAL, DF-PP2 and the baselines DF-B1/DF-B2 (runs per second), THR class.

Each run is one complete, independent fit + predict at one query point (fresh partition, subsample,
EM draw and coins). Two datasets per size n: the learner's adversarial design scaled to n records
(few distinct points), and n points drawn uniformly on the 64-point grid with a threshold label
(every grid point used: the expensive case for random partitions).

Usage: python benchmarks/bench_df_learners_b.py [--runs 40000] [--sizes 1000,10000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import algorithms
from algorithms.dagan_feldman.baselines import pair_gap_inclusion
from algorithms.dagan_feldman.real import pair_unanimous
from audit.types import Dataset

CASES = [("df-real", {}), ("df-real", {"variant": "nc-5"}), ("df-pp2", {}),
         ("df-pp2", {"variant": "nc-5"}), ("df-b1", {}), ("df-b1", {"mode": "avg"}), ("df-b2", {})]


def datasets(name: str, learner, n: int, rng: np.random.Generator) -> dict:
    H = learner.H
    design = (pair_unanimous(H, n, H.N // 2) if name == "df-real" else pair_gap_inclusion(H, n, H.N // 2))[0]
    x = rng.integers(0, H.N, n)
    uniform = Dataset(H.domain[x], (x >= H.N // 3).astype(int))
    return {"design": design, "uniform": uniform}


def rate(learner, data: Dataset, runs: int, rng: np.random.Generator) -> float:
    chunk = int(getattr(learner, "chunk_runs", 4096))
    learner.predict(data, learner.queries[:1], min(runs, 256), rng)        # warm caches
    t = time.perf_counter()
    done = 0
    while done < runs:
        r = min(chunk, runs - done)
        learner.predict(data, learner.queries[:1], r, rng)
        done += r
    return runs / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40_000)
    ap.add_argument("--sizes", default="1000,10000")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'learner':<26}{'n':>7}{'data':>9}{'runs/s':>13}{'runs/min':>12}")
    for n in (int(s) for s in args.sizes.split(",")):
        for name, params in CASES:
            learner = algorithms.get(name, **params)
            for label, data in datasets(name, learner, n, rng).items():
                r = rate(learner, data, args.runs, rng)
                tag = name + "".join(f" {k}={v}" for k, v in params.items())
                print(f"{tag:<26}{n:>7}{label:>9}{r:>13,.0f}{r * 60:>12.2e}")


if __name__ == "__main__":
    main()
