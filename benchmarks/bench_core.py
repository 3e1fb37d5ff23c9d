"""Throughput of the building-block mechanisms and tightness of the auditor.

    python benchmarks/bench_core.py [--quick]

Prints (1) runs/second of each mechanism through LocalRunner (sampling + reduction to counts),
(2) epsilon_lower achieved on randomized response (eps = 1) at several confirmation budgets next to
the Clopper–Pearson limit (the bound the expected counts would give).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import algorithms
from audit import audit, stats
from audit.reducers import CodeCounter, CodeSet, EventCounter, HistogramCounter
from audit.runners import Job, LocalRunner


def throughput(runs: int) -> None:
    print(f"{'mechanism':<14}{'reducer':<18}{'runs':>12}{'runs/s':>14}")
    cases = [
        ("dp-rr", {}, np.array([0]), CodeCounter()),
        ("dp-rr", {}, np.array([0]), EventCounter((CodeSet((1,)),))),
        ("dp-laplace", {}, np.array([0.0]), HistogramCounter(((1.0,),), (tuple(np.linspace(-5, 5, 200)),))),
        ("dp-gaussian", {}, np.array([0.0]), HistogramCounter(((1.0,),), (tuple(np.linspace(-5, 5, 200)),))),
        ("dp-em", {"k": 20}, algorithms.building_blocks.mechanisms.em_worst_pair(20)[0], CodeCounter()),
    ]
    for name, params, inp, red in cases:
        mech = algorithms.get(name, **params)
        n = runs if name != "dp-em" else runs // 10
        job = Job(mech, inp, n, red, (0, 0, 0))
        t = time.perf_counter()
        LocalRunner().run([job], seed=0)
        dt = time.perf_counter() - t
        print(f"{name:<14}{type(red).__name__:<18}{n:>12,}{n / dt:>14.3g}")


def tightness(budgets: list[int]) -> None:
    eps = 1.0
    mech = algorithms.get("dp-rr", epsilon=eps)
    p = math.exp(eps) / (1 + math.exp(eps))
    print(f"\nrandomized response, eps = {eps}: epsilon_lower vs the Clopper–Pearson limit (confidence 0.95)")
    print(f"{'confirm runs':>14}{'eps_lower':>12}{'CP limit':>12}{'ceiling':>10}{'seconds':>10}")
    for n in budgets:
        t = time.perf_counter()
        r = audit(mech, mech.pairs, explore_runs=max(10_000, n // 10), confirm_runs=n, seed=0)
        dt = time.perf_counter() - t
        limit, _ = stats.expected_bounds(p, 1 - p, n, stats.per_bound_alpha(0.95, 1), eps, 0.0)
        print(f"{n:>14,}{r.epsilon_lower:>12.4f}{float(limit):>12.4f}{r.max_certifiable_epsilon:>10.2f}{dt:>10.2f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    throughput(10**7 if a.quick else 10**8)
    tightness([10**4, 10**5, 10**6] if a.quick else [10**4, 10**5, 10**6, 10**7, 10**8])
