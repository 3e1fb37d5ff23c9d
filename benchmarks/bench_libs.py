"""Audit every `lib-` adapter (real DP libraries) on its documented claim.

    python benchmarks/bench_libs.py [--runs 100000 1000000] [--max-seconds 900] [NAME ...]
    python benchmarks/bench_libs.py --ray-ratio lib-pydp-bounded-sum --ratio-runs 200000

For each adapter: the library and version, the claim and neighbour relation, the calls per second
of its sampling API (measured on 3000 runs), and for each budget (confirmation runs per side,
exploration runs/10 per side and pair, seed 0 for the schedule — the libraries' own noise is not
seedable) epsilon_lower, the verdict and the wall time. A budget whose estimated time exceeds
--max-seconds is not run; its estimate (calls needed / calls per second) is printed instead.

``--ray-ratio NAME`` audits NAME at --ratio-runs locally (one process) and on a local Ray
instance (all cores) and prints the two wall times and their ratio: the speed-up a cluster gives
(per core) for library black boxes, which are slow per call but embarrassingly parallel.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import algorithms
from audit import audit
from audit.runners import LocalRunner, RayRunner

PILOT = 2_000


def calls_needed(pairs: int, runs: int) -> int:
    """Pilot and exploration of every pair, the replication of a chosen threshold (one pair; at
    most — code-set outputs draw none) and the confirmation, both inputs."""
    explore = max(runs // 10, 10_000)
    return pairs * 2 * (min(PILOT, explore) + explore) + 2 * explore + 2 * runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*")
    ap.add_argument("--runs", type=float, nargs="+", default=[1e5, 1e6])
    ap.add_argument("--max-seconds", type=float, default=900)
    ap.add_argument("--ray-ratio", default=None)
    ap.add_argument("--ratio-runs", type=float, default=2e5)
    args = ap.parse_args()
    if args.ray_ratio:
        m = algorithms.get(args.ray_ratio)
        n = int(args.ratio_runs)
        out = {}
        for label, runner in (("local", LocalRunner()), ("ray", RayRunner())):
            t = time.perf_counter()
            r = audit(m, m.pairs[:1], explore_runs=max(n // 10, 10_000), confirm_runs=n, seed=0, runner=runner)
            out[label] = time.perf_counter() - t
            print(f"{label}: {out[label]:.1f} s, epsilon_lower {r.epsilon_lower:.4f} ({r.verdict})", flush=True)
        print(f"local / ray = {out['local'] / out['ray']:.2f}")
        return
    names = args.names or [n for n in algorithms.names() if n.startswith("lib-")]
    budgets = [int(b) for b in args.runs]
    print("| adapter | library | claim | calls/s | " + " | ".join(f"{b:.0e}: ε_lower, verdict, s" for b in budgets) + " |")
    print("|" + "---|" * (4 + len(budgets)))
    for name in names:
        reason = algorithms.spec(name).unavailable()
        if reason:
            print(f"| `{name}` | unavailable: {reason} |")
            continue
        m = algorithms.get(name)
        t = time.perf_counter()
        m.sample(m.pairs[0][0], 3000, np.random.default_rng(0))
        rate = 3000 / (time.perf_counter() - t)
        cells = []
        for b in budgets:
            est = calls_needed(len(m.pairs), b) / rate
            if est > args.max_seconds:
                cells.append(f"not run (est. {est / 3600:.1f} h local)")
                continue
            t = time.perf_counter()
            r = audit(m, m.pairs, explore_runs=max(b // 10, 10_000), confirm_runs=b, seed=0)
            cells.append(f"{r.epsilon_lower:.3f}, {r.verdict}, {time.perf_counter() - t:.0f}")
        c = m.claim
        print(f"| `{name}` | {m.library} {m.library_version} | ε={c.epsilon:.4g}, {c.neighbours} | "
              f"{rate:.2g} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
