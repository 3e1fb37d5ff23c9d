"""Does the search, with no pairs, reach what each learner's hand-made designs reach?

For every registered learner (or those named) and each variant asked for, two audits with the
same seed and budgets: one on the learner's own adversarial pairs (its designs), one with
``search_options={"strategy": STRATEGY}`` (the designs ignored). Prints both confirmed bounds
(epsilon, or delta for stability claims), their ratio, both verdicts, the black-box runs each
spent in all (search + exploration + confirmation, both sides) and wall times; where the
learner's exact oracle accepts the pairs, also the exact epsilon (delta) of the best design and
of the best pair the search handed to the core -- a comparison free of sampling noise, which at
small bounds decides more than the confirmed figures do.

    python benchmarks/bench_search_vs_designs.py                       # correct variants, CLI budgets
    python benchmarks/bench_search_vs_designs.py df-cor1 lwy-n2 --variants all
    python benchmarks/bench_search_vs_designs.py --explore-runs 20000 --confirm-runs 200000
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings

import numpy as np
from bench_search import exact_of_witness, fmt

import algorithms
from attacks.search import exact_bounds
from audit import audit_learner
from audit.errors import PrivauditError
from audit.events import objective
from audit.interfaces import own_pairs
from audit.runners.local import LocalRunner


def exact_value(learner, a, b, q, claim) -> float | None:
    if not callable(getattr(learner, "exact", None)) or q is None or len(q) == 0:
        return None
    try:
        e, d = exact_bounds(np.asarray(learner.exact(a, q)), np.asarray(learner.exact(b, q)), claim)
    except (PrivauditError, ValueError):
        return None
    return d if objective(claim) == "delta" else e


def best_design_exact(learner, claim) -> float | None:
    q = getattr(learner, "queries", None)
    vals = [exact_value(learner, a, b, q, claim) for a, b in (own_pairs(learner) or [])]
    vals = [v for v in vals if v is not None]
    return max(vals) if vals else None


def best_found_exact(learner, result) -> float | None:
    """The largest exact value over the pairs the search handed to the core (its short list)
    and the confirmed witness."""
    key = "epsilon_exact" if objective(result.claim) == "epsilon" else "delta_exact"
    vals = [float(s[key]) for s in result.search.get("shortlist", []) if s.get(key) is not None]
    vals.append(exact_of_witness(learner, result))     # floats: the JSON encoding spells inf
    vals = [v for v in vals if v is not None and not math.isnan(v)]
    return max(vals) if vals else None


def runs_spent(result, n_pairs: int) -> int:
    """Black-box runs in all, both sides: search + exploration of every pair + replication of a
    chosen threshold (mechanisms only) + confirmation."""
    tests = max(1, len(result.confirmed or []))
    rep = result.search.get("replication") or {}
    return int(result.search.get("search_runs", 0) or 0) + 2 * result.explore_runs * n_pairs \
        + 2 * int(rep.get("pairs", 0)) * int(rep.get("runs_per_side", 0)) \
        + 2 * result.confirm_runs * tests


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="learners (default: every registered learner)")
    ap.add_argument("--variants", default="correct",
                    help="comma-separated variants, or 'all' (default: correct)")
    ap.add_argument("--strategy", default="auto")
    ap.add_argument("--explore-runs", type=int, default=100_000)
    ap.add_argument("--confirm-runs", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="also write the rows to this JSON file")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    names = args.names or [n for n in algorithms.names() if algorithms.info(n)["kind"] == "learner"]
    rows = []
    print(f"{'learner':<9} {'variant':<8} {'designs':>9} {'search':>9} {'ratio':>6} {'verdicts':>9} "
          f"{'exact d':>8} {'exact s':>8} {'runs d':>9} {'runs s':>9} {'time d':>7} {'time s':>7}  found by")

    for name in names:
        info = algorithms.info(name)
        variants = list(info["variants"]) if args.variants == "all" else args.variants.split(",")
        for v in variants:
            if v not in info["variants"]:
                continue
            learner = algorithms.get(name) if v == "correct" else algorithms.get(name, variant=v)
            pairs = own_pairs(learner) or []
            out = {}
            for mode in ("designs", "search"):
                t0 = time.perf_counter()
                kw = {} if mode == "designs" else {"search_options": {"strategy": args.strategy}}
                r = audit_learner(learner, explore_runs=args.explore_runs, confirm_runs=args.confirm_runs,
                                  seed=args.seed, runner=LocalRunner(), **kw)
                out[mode] = (r, time.perf_counter() - t0)
            (rd, td), (rs, ts) = out["designs"], out["search"]
            obj = objective(rd.claim)
            bd = rd.delta_lower if obj == "delta" else rd.epsilon_lower
            bs = rs.delta_lower if obj == "delta" else rs.epsilon_lower
            ratio = bs / bd if bd > 0 else None
            row = {"learner": name, "variant": v, "objective": obj, "designs": bd, "search": bs,
                   "ratio": ratio, "violation_designs": rd.violation, "violation_search": rs.violation,
                   "exact_designs": best_design_exact(learner, rd.claim),
                   "exact_search": best_found_exact(learner, rs),
                   "runs_designs": runs_spent(rd, len(pairs)),
                   "runs_search": runs_spent(rs, len(rs.search.get("shortlist", [])) or 3),
                   "time_designs": round(td, 1), "time_search": round(ts, 1),
                   "found_by": rs.witness.found_by if rs.witness else None}
            rows.append(row)
            verdicts = f"{'V' if rd.violation else '-'}/{'V' if rs.violation else '-'}"
            print(f"{name:<9} {v:<8} {fmt(bd):>9} {fmt(bs):>9} {fmt(ratio):>6} {verdicts:>9} "
                  f"{fmt(row['exact_designs']):>8} {fmt(row['exact_search']):>8} {row['runs_designs']:>9.3g} "
                  f"{row['runs_search']:>9.3g} {td:>7.1f} {ts:>7.1f}  {row['found_by']}", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2, default=str)


if __name__ == "__main__":
    main()
