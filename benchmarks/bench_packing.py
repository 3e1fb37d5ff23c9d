"""Packing audits (spec 7.5): the ERM-on-LB5 figure and which planted bugs each audit kind catches.

    python benchmarks/bench_packing.py            # bug table (~1 min on 2 cores)
    python benchmarks/bench_packing.py --full     # + ERM on LB5 at the spec's alpha = 0.1, M = 50
                                                  #   (K = 598, 10^4 runs each; ~6 min)

The table audits `ch-a1` with a fine public cover (alpha = 1, grid = 512, eps0 = 0.002) and every
variant: "pairs" is the registry's expectation for the pair audit on the learner's own designs
(checked by tests/algorithms/chaudhuri_hsu), "lb5" and "lemma11" the packing audits measured here
(1,000 runs per dataset, seed 0, confidence 0.95).
"""

from __future__ import annotations

import argparse
import math
import time

import algorithms
from attacks.packings import build_family, lb5
from audit.packing import audit_packing


def erm_lb5_full() -> None:
    L = algorithms.get("ch-erm", alpha=0.1, grid=4096)
    fam = lb5(L, M=50)
    t = time.time()
    r = audit_packing(L, fam, claim=L.claim, runs=10_000, seed=0)
    pk = r.search["packing"]
    K, n = fam.size, 10_000
    print(f"ch-erm on lb5 (alpha 0.1, M 50, K {K}, small-k design, {n} runs each): "
          f"epsilon_lower = {r.epsilon_lower:.3f}  ({time.time() - t:.0f} s)")
    print(f"  successes {sum(pk['successes'])}/{K * n}; 1 - p_i <= {pk['one_minus_p_pivot_hi']:.3g} "
          f"(= ln({K}/0.05)/n), sum_j p_j >= {pk['sum_other_p_lo']:.1f}")
    print(f"  spec 7.5's 7.2 uses 1 - p_i <= ln(2/0.05)/n = {math.log(40) / n:.3g}: "
          f"(1/2) ln({K - 1} / {math.log(40) / n:.3g}) = {0.5 * math.log((K - 1) * n / math.log(40)):.3f}")


def bug_table() -> None:
    kw = dict(alpha=1.0, grid=512, eps0=0.002)
    spec = algorithms.spec("ch-a1")
    base = algorithms.get("ch-a1", **kw)
    fams = {"lb5": lb5(base, M=3), "lemma11": build_family("lemma11", base)}
    print(f"{'variant':<8} {'pairs':<10} {'lb5 eps_lo':>11} {'lemma11 eps_lo':>15}   planted bug")
    for v, what in spec.variants.items():
        L = algorithms.get("ch-a1", variant=v, **kw)
        cells = []
        for f in fams.values():
            r = audit_packing(L, f, claim=L.claim, runs=1_000, seed=0)
            cells.append(f"{r.epsilon_lower:.2f}{' FLAG' if r.violation else ''}")
        print(f"{v:<8} {spec.expectation(v):<10} {cells[0]:>11} {cells[1]:>15}   {what[:70]}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true")
    args = ap.parse_args()
    bug_table()
    if args.full:
        erm_lb5_full()


if __name__ == "__main__":
    main()
