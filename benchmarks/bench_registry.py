"""Audit every registered algorithm and every variant on its own adversarial pairs.

    python benchmarks/bench_registry.py [--explore 20000] [--confirm 200000] [NAME ...]

Prints one row per (algorithm, variant): verdict, epsilon_lower (delta_lower for stability
claims), the claim, and seconds. A planted bug ("bv-…", "brk-…", "b…", "v…") should read
VIOLATION, a correct variant, negative control or white-box/utility-only bug PASS (the registry's
expectation column); rows that do not are listed at the end.
"""

from __future__ import annotations

import argparse
import time

import algorithms
from audit import PrivauditError, audit
from audit.runners import LocalRunner

def expected_violation(name: str, variant: str) -> bool:
    """Planted privacy bugs and positive controls must be flagged; the algorithm itself,
    negative controls and the bugs the registry marks white-box or utility must pass
    (`algorithms.registry.Spec.expectation`)."""
    return algorithms.spec(name).expectation(variant) == "violation"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*")
    ap.add_argument("--explore", type=int, default=20_000)
    ap.add_argument("--confirm", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    # real-library adapters are slow per call and not seedable: benchmarks/bench_libs.py has them
    names = a.names or [n for n in algorithms.names() if not n.startswith("lib-")]
    surprises = []
    print(f"{'algorithm':<12}{'variant':<18}{'expect':<10}{'verdict':<11}{'eps_lower':>10}{'delta_lower':>12}  "
          f"{'claim':<40}{'s':>7}")
    for name in names:
        for variant in algorithms.info(name)["variants"]:
            expect = algorithms.spec(name).expectation(variant)
            t = time.perf_counter()
            try:
                obj = algorithms.get(name, variant=variant) if variant != "correct" else algorithms.get(name)
                if not getattr(obj, "pairs", None):
                    print(f"{name:<12}{variant:<18}{expect:<10}{'no pairs':<11}")
                    continue
                r = audit(obj, explore_runs=a.explore, confirm_runs=a.confirm, seed=a.seed,
                          runner=LocalRunner())
            except PrivauditError as exc:
                print(f"{name:<12}{variant:<18}{expect:<10}{'error':<11} {exc}")
                continue
            dt = time.perf_counter() - t
            print(f"{name:<12}{variant:<18}{expect:<10}{r.verdict:<11}{r.epsilon_lower:>10.3f}{r.delta_lower:>12.3g}  "
                  f"{r.claim.describe():<40}{dt:>7.1f}", flush=True)
            if r.violation != expected_violation(name, variant):
                surprises.append((name, variant, r.verdict))
    print("\nnot as expected (planted bug passed, or control flagged):")
    for s in surprises:
        print("  ", *s)


if __name__ == "__main__":
    main()
