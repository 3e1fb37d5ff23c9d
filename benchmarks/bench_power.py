"""Power of the generic path on black boxes without designs (issue 12): the README table.

Rows: Lyu–Su–Li 2017 sparse vector Algorithms 6, 3 (three encodings of "no answer") and 1 on
StatDP's patterns; DP-Sniper's benchmark SVT1 (Alg. 1, eps = 0.1, c = 1, T = 0.5, the parameters
of DP-Sniper's evaluation script; also c = 2, T = 1) on its witness pair under DP-Sniper's
convention (one pair, confidence 0.9: alpha 0.05 per one-sided bound); the two-sided geometric mechanism (numpy, and diffprivlib's `Geometric` when installed).
Beside each bound: the exact worst-case loss on the pairs used (quadrature over the threshold
noise), and the best bound a confirmation of the same size could certify with the exactly best
event (the "oracle"; expected counts plugged into the Clopper–Pearson bounds).

    python benchmarks/bench_power.py [--quick] [--rows svt6,svt3,svt1,sniper,geo,dpl]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time

import numpy as np

sys.path[:0] = [os.path.join(os.path.dirname(__file__), ".."),
                os.path.join(os.path.dirname(__file__), "..", "tests")]

from audit import Claim, audit  # noqa: E402
from audit.stats import cp_lower, cp_upper, epsilon_lower, per_bound_alpha  # noqa: E402
from power_mechanisms import SVT1, SVT3, SVT6, Geometric, statdp_pairs  # noqa: E402


def _lap_cdf(x, b):
    return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / b), 1 - 0.5 * np.exp(-np.maximum(x, 0) / b))


def _lap_pdf(x, b):
    return np.exp(-np.abs(x) / b) / (2 * b)


def svt6_distribution(q, eps=1.0, T=0.5):
    """Exact P(answers) of Alg. 6 for every ⊤/⊥ vector (quadrature over rho)."""
    r = np.linspace(-80, 80, 64001)
    dr = r[1] - r[0]
    fr = _lap_pdf(r, 2 / eps)
    outs = np.array(list(itertools.product([0, 1], repeat=len(q))))
    below = np.array([_lap_cdf(T + r - qi, 2 / eps) for qi in q])
    lf, ls = np.log(np.maximum(below, 1e-300)), np.log(np.maximum(1 - below, 1e-300))
    return np.array([(fr * np.exp(np.where(o[:, None] == 1, ls, lf).sum(0))).sum() * dr for o in outs])


def svt3_cells(q, eps=1.0, T=0.5, c=1):
    """P of (first ⊤ at k, released value in a 0.01-cell) and of "no ⊤" for Alg. 3 with c = 1."""
    r = np.linspace(-60, 60, 24001)
    dr = r[1] - r[0]
    fr = _lap_pdf(r, 2 / eps)
    v = np.linspace(-40, 40, 8001)
    dv = v[1] - v[0]
    below = np.array([_lap_cdf(T + r - qj, 2 * c / eps) for qj in q])
    prefix = np.cumprod(np.vstack([np.ones_like(r), below]), axis=0)
    cells = []
    for k in range(len(q)):
        w = np.cumsum(fr * prefix[k]) * dr
        cells.append(_lap_pdf(v - q[k], 2 * c / eps) * np.interp(v - T, r, w) * dv)
    return np.concatenate(cells + [[(fr * prefix[len(q)]).sum() * dr]])


def svt1_distribution(q, eps=0.1, c=1, T=0.5):
    """Exact P(answers) of Alg. 1 with cutoff c for every answer vector (⊤ 1 / ⊥ 0 / aborted -1;
    quadrature over rho), in the order of `svt1_codes`."""
    b_rho, b_nu = 2 / eps, 4 * c / eps
    r = np.linspace(-60 * b_rho, 60 * b_rho, 400001)
    dr = r[1] - r[0]
    fr = _lap_pdf(r, b_rho)
    up = np.array([1 - _lap_cdf(T + r - qi, b_nu) for qi in q])
    out = []
    for code in svt1_codes(len(q), c):
        w = fr.copy()
        for i, v in enumerate(code):
            if v >= 0:
                w = w * (up[i] if v == 1 else 1 - up[i])
        out.append(w.sum() * dr)
    return np.array(out)


def svt1_codes(m, c):
    """Every answer vector of Alg. 1 with m queries and cutoff c."""
    out = []

    def grow(prefix, tops):
        if len(prefix) == m:
            out.append(tuple(prefix))
        elif tops == c:
            out.append(tuple(prefix + [-1] * (m - len(prefix))))
        else:
            grow(prefix + [1], tops + 1)
            grow(prefix + [0], tops)
    grow([], 0)
    return out


def oracle(pa, pb, n, alpha):
    """Worst-case loss over outcomes and the best bound n runs could certify with the best
    likelihood-ratio prefix event (expected counts)."""
    m = (pa > 1e-15) & (pb > 1e-15)
    lr = np.log(pa[m] / pb[m])
    best = 0.0
    for p, q, sgn in ((pa[m], pb[m], 1), (pb[m], pa[m], -1)):
        o = np.argsort(-(sgn * lr))
        e = epsilon_lower(cp_lower(np.cumsum(p[o]) * n, n, alpha), cp_upper(np.cumsum(q[o]) * n, n, alpha))
        best = max(best, float(e.max()))
    return float(np.abs(lr).max()), best


def row(label, mech, pairs, explore, confirm, truth="", seed=0):
    t = time.perf_counter()
    r = audit(mech, pairs, explore_runs=explore, confirm_runs=confirm, seed=seed)
    s = time.perf_counter() - t
    print(f"| {label} | {truth} | {r.epsilon_lower:.4f} | {'yes' if r.violation else 'no'} | "
          f"{explore:.0e} / {confirm:.0e} | {s:.0f} | {r.witness.event_text[:60]} |", flush=True)
    return r


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="1/10 of the budgets")
    ap.add_argument("--rows", default="svt6,svt3,svt1,sniper,geo,dpl")
    args = ap.parse_args()
    rows = set(args.rows.split(","))
    f = 10 if args.quick else 1
    n = 10**6 // f
    a1 = per_bound_alpha(0.95, 1)
    pairs = statdp_pairs(10)
    print("| black box (claim) | exact loss on the pairs · oracle at this budget | privaudit ε_lower | "
          "violation | explore / confirm runs per input | s | event |")
    print("|---|---|---|---|---|---|---|")
    if "svt6" in rows:
        res = [oracle(svt6_distribution(a), svt6_distribution(b), n, a1) for a, b in pairs]
        loss, orc = max(r[0] for r in res), max(r[1] for r in res)
        row("SVT Alg. 6, 10 queries, ε = 1 (∞-DP)", SVT6(), pairs, n, n, f"{loss:.3f} · {orc:.3f}")
    if "svt3" in rows:
        res = [oracle(svt3_cells(a), svt3_cells(b), n, a1) for a, b in pairs]
        loss, orc = max(r[0] for r in res), max(r[1] for r in res)
        for miss in (np.nan, -100.0, 100.0):
            row(f"SVT Alg. 3, no answer = {miss}, ε = 1 (∞-DP)", SVT3(missing=miss), pairs, n, n,
                f"sup {loss:.2f} · {orc:.3f}")
    if "svt1" in rows:
        row("SVT Alg. 1, ε = 1 (correct)", SVT1(), pairs, n // 10, n, "≤ 1")
    if "sniper" in rows:
        # DP-Sniper's SparseVectorTechnique1 as its evaluation runs it (eth-sri/dp-sniper,
        # dpsniper/experiments/exp_default.py: eps0 = 0.1, c = 1, t = 0.5), on its witness pair,
        # under its convention for the final bound: one pair, alpha = 0.05 per side (confidence 0.9)
        a, b = np.ones(10), np.r_[2.0 * np.ones(5), np.zeros(5)]
        nf = 2 * 10**7 // f
        for c, t in ((1, 0.5), (2, 1.0)):
            loss, orc = oracle(svt1_distribution(a, 0.1, c, t), svt1_distribution(b, 0.1, c, t),
                               nf, per_bound_alpha(0.90, 1))
            tt = time.perf_counter()
            r = audit(SVT1(epsilon=0.1, c=c, threshold=t), [(a, b)], explore_runs=nf // 10,
                      confirm_runs=nf, seed=0, confidence=0.90)
            print(f"| DP-Sniper SVT1 (Alg. 1, ε = 0.1, c = {c}, T = {t}), witness pair, confidence 0.9 | "
                  f"{loss:.4f} · {orc:.4f} | {r.epsilon_lower:.4f} | {'yes' if r.violation else 'no'} | "
                  f"{nf // 10:.0e} / {nf:.0e} | {time.perf_counter() - tt:.0f} | "
                  f"{r.witness.event_text[:60]} |", flush=True)
    if "geo" in rows:
        row("two-sided geometric, ε = 1 (numpy)", Geometric(), [(np.array([0]), np.array([1]))],
            n // 10, n, "1")
    if "dpl" in rows:
        try:
            from diffprivlib.mechanisms import Geometric as DPL
        except ImportError:
            print("| diffprivlib Geometric | 1 | (diffprivlib not installed) | | | | |")
        else:
            class DPLGeometric:
                name = "diffprivlib-geometric"
                claim = Claim(1.0)

                def sample(self, inp, runs, rng):
                    m = DPL(epsilon=1.0, sensitivity=1, random_state=int(rng.integers(2**31)))
                    x = int(np.asarray(inp).reshape(-1)[0])
                    return np.array([m.randomise(x) for _ in range(runs)], dtype=np.int64)

            row("diffprivlib `Geometric`, ε = 1", DPLGeometric(), [(np.array([0]), np.array([1]))],
                n // 10, n, "1")


if __name__ == "__main__":
    main()
