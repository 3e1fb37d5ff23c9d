"""Throughput of the Bun, Livni & Moran black boxes (runs per second).

    python benchmarks/bench_blm.py [--runs R] [--quick]

One run of a learner = one complete run of the algorithm on the dataset (for M: every batch's G
output drawn from G's exact law, Hist, pruning, GenericLearner) and the prediction at the default
queries. Two datasets per learner: its first default (gadget) dataset, and a random dataset of
the same size (x uniform, random labels: G is genuinely random there). ``setup`` is the first
call's cost (G's exact laws; memoised per batch afterwards), ``predict`` the steady-state rate.
Also: G simulated literally (one Python run at a time) vs sampled from its exact law.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import algorithms
from audit.types import Dataset

CASES = [("blm-gl", {}), ("blm-sub", {}), ("blm-m", {}), ("blm-m", {"split": "paper"}),
         ("blm-m", {"cls": "thr", "grid": 3}), ("blm-t1", {}), ("blm-g", {}), ("blm-soa", {})]


def random_like(L, data: Dataset, rng: np.random.Generator) -> Dataset:
    H = L.H
    xs = rng.integers(0, H.N, data.n)
    return Dataset(H.domain[xs], rng.integers(0, 2, data.n))


def rate(fn, runs: int) -> float:
    t = time.perf_counter()
    fn(runs)
    return runs / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200_000)
    ap.add_argument("--quick", action="store_true", help="20,000 runs")
    args = ap.parse_args()
    runs = 20_000 if args.quick else args.runs
    rng = np.random.default_rng(0)
    print(f"{'learner':<9}{'params':<28}{'data':<8}{'n':>8}{'setup s':>9}{'predict runs/s':>16}")
    for name, kw in CASES:
        L = algorithms.get(name, **kw)
        base = L.pairs[0][0]
        for label, data in (("design", base), ("random", random_like(L, base, rng))):
            t = time.perf_counter()
            L.predict(data, L.queries, 1, rng)
            setup = time.perf_counter() - t
            r = rate(lambda k: L.predict(data, L.queries, k, rng), runs)
            print(f"{name:<9}{str(kw or ''):<28}{label:<8}{data.n:>8}{setup:>9.3f}{r:>16,.0f}", flush=True)
    # G: literal simulation vs exact law
    G = algorithms.get("blm-g", cls="thr", grid=7, alpha_G=1.0, budget_factor=16)
    xs = rng.integers(0, G.H.N, G.gp.m)
    data = Dataset(G.H.domain[xs], rng.integers(0, 2, G.gp.m))
    idx = G.H.index(data.X)
    sim_runs = 300
    t = time.perf_counter()
    for _ in range(sim_runs):
        G.G.run(idx, data.y, rng)
    sim = sim_runs / (time.perf_counter() - t)
    t = time.perf_counter()
    G.predict(data, G.queries, runs, rng)
    ex = runs / (time.perf_counter() - t)
    print(f"\nG on thresholds/7 (d=3), m={G.gp.m}, random labels: literal simulation {sim:,.0f} runs/s; "
          f"exact law + sampling {ex:,.0f} runs/s (law included)")


if __name__ == "__main__":
    main()
