"""Chaudhuri & Hsu utility contrast on the paper's own scenarios (spec 4.1-4.4, 9.8).

    python benchmarks/bench_ch_utility.py      # ~1-2 min on 2 cores

Table 1 (Theorem 5 / Example 1): excess population error (exact, `LB5.error`, minus the best
threshold on the grid) of the released threshold,
mean over runs and 3 datasets, on P_z with alpha = 1, M = 3 (eta = 0.0115, K = 85, z = 43 eta), on a
2048-point grid: A1 with a fine public cover (eps0 = eps eta / 3, eps = 0.1), A1 with a coarse cover
(eps0 = 0.12 > eta), and non-private ERM.

Table 2 (Lemma 11 as a utility scenario): on the Lemma 11 label packing (thresholds, X = m grid
points, s = 1/16), the probability that the label-private A2 and ERM land in the success ball
B_X(h, s/2), against the lemma's bound m < ln(|P|/2 - 1)/(8 alpha s) under which some member must
fail with probability > 1/2.

Table 3 (Examples 2 and 3): exact U(W) from the Beta law and kappa, against the paper's bounds.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

import algorithms
from algorithms.chaudhuri_hsu.scenarios import LB5, LabelPacking, SphereBand

GRID = 2048


def _errors(L, sc: LB5, m: int, runs: int, seeds: int = 3) -> float:
    """Mean excess error over the best threshold ON THE GRID (the grid's own floor, ~0.017 here,
    is what any learner restricted to domain thresholds pays)."""
    H = L.H
    tau_of = np.append(H.domain[:, 0], 1.0)          # row N (all zeros) ~ threshold above 1
    floor = float(sc.error(tau_of).min())
    out = []
    for s in range(seeds):
        rng = np.random.default_rng(1000 * m + s)
        S = sc.sample(m, rng)
        rows = L.sample_rows(L.summarize(S), runs, rng)
        out.append(sc.error(tau_of[rows]).mean() - floor)
    return float(np.mean(out))


def table_lb5() -> None:
    base = LB5(1.0, 3.0, j=43)
    fine = algorithms.get("ch-a1", alpha=1.0, grid=GRID, eps0=0.1 * base.eta / 3, max_cover=5000)
    coarse = algorithms.get("ch-a1", alpha=1.0, grid=GRID, eps0=0.12)
    erm = algorithms.get("ch-erm", alpha=1.0, grid=GRID)
    sc = base.on_grid(fine.H.domain[:, 0])
    print(f"LB5 / Example 1: alpha = 1, M = 3, eta = {base.eta:.4f}, K = {base.K}, z = {base.z:.4f}, "
          f"kappa = {base.kappa:.1f}; fine cover {fine.public_cover(10).size} thresholds, coarse "
          f"{coarse.public_cover(10).size}")
    print("excess population error over the best grid threshold (exact err_z), mean of 3 datasets x 200 runs")
    print(f"{'m':>6} {'A1 fine':>9} {'A1 coarse':>10} {'ERM':>8}")
    for m in (3, 10, 30, 100, 300, 1000, 3000):
        row = [_errors(L, sc, m, 200) for L in (fine, coarse, erm)]
        print(f"{m:>6} {row[0]:>9.4f} {row[1]:>10.4f} {row[2]:>8.4f}")


def table_lemma11() -> None:
    print("\nLemma 11 label packing (thresholds, s = 1/16, ball 4s): P[output in B_X(h, s/2)], "
          "worst member")
    print(f"{'m':>5} {'|P|':>4} {'lemma bound on m':>17} {'A2 (alpha 1)':>13} {'ERM':>6}")
    for m in (16, 32, 64, 128):
        a2 = algorithms.get("ch-a2", alpha=1.0, grid=256)
        erm = algorithms.get("ch-erm", alpha=1.0, grid=256)
        sc = LabelPacking.from_class(a2.H.matrix, a2.H.domain, m, 1 / 16)
        K = sc.P.shape[0]
        bound = math.log(K / 2 - 1) / (8 * 1.0 * sc.s) if K > 4 else 0.0
        res = []
        for L in (a2, erm):
            worst = 1.0
            for j, S in enumerate(sc.datasets):
                pred = L.predict(S, sc.X, 500, np.random.default_rng(j))
                worst = min(worst, float(sc.success(j, pred).mean()))
            res.append(worst)
        print(f"{sc.X.shape[0]:>5} {K:>4} {bound:>17.2f} {res[0]:>13.3f} {res[1]:>6.3f}")


def table_sphere() -> None:
    print("\nExamples 2/3: exact U(W) (Beta law) and kappa vs the paper's Lemma 20/21 bounds")
    print(f"{'n':>4} {'gamma':>6} {'U(W)':>8} {'kappa band':>11} {'Lemma 20':>9} {'kappa caps':>11} {'Lemma 21':>10}")
    for n, g in ((3, 0.3), (10, 0.5), (50, 0.2), (50, 0.5)):
        b, c = SphereBand(n, g, "band"), SphereBand(n, g, "caps")
        print(f"{n:>4} {g:>6.2f} {b.U_W:>8.4f} {b.kappa:>11.3f} {b.kappa_paper:>9.3f} "
              f"{c.kappa:>11.3g} {c.kappa_paper:>10.3g}")


def main() -> None:
    # no options: the parser gives `--help` (the docstring) instead of a 1-2 minute run
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
                            ).parse_args()
    table_lb5()
    table_lemma11()
    table_sphere()


if __name__ == "__main__":
    main()
