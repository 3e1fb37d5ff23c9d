"""Search quality and time per registered learner: does the search, with no pairs supplied, find a
witness that the core confirms?

For every learner (and each planted-bug variant) this runs
``audit_learner(learner, search_options={...})`` -- the learner's built-in ``pairs`` are ignored --
and prints: whether a violation was confirmed, the confirmed ``epsilon_lower`` (or
``delta_lower`` for stability claims), the design that produced the witness, the search's runs
and time, and, where the learner has an exact oracle, the exact epsilon (or delta) of the found
pair next to the best exact value over the whole adversarial design family (white-box scoring of
every design: the "best exhaustive" column).

    python benchmarks/bench_search.py                      # every learner, every variant
    python benchmarks/bench_search.py df-em df-cor1 --variants bv-em-1,correct
    python benchmarks/bench_search.py --explore-runs 100000 --confirm-runs 1000000   # CLI defaults
    python benchmarks/bench_search.py blm-t1 --variants b14 --hide-oracle --sizes 25443

``--hide-oracle`` audits each learner with its exact oracle hidden (``exact``, ``exact_law``
and every other attribute but ``predict``, the claim, the declared batches, sizes, domain and
queries): what a user's own learner without an oracle gets from the search. A learner that
accepts one size only (BLM's M) then needs ``--sizes``, which an oracle-less search cannot
discover below 4,096 records.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import sys

import numpy as np

import algorithms
from attacks.domain import learner_domain
from attacks.families import adversarial_family
from attacks.search import discover_sizes, exact_bounds
from audit import audit_learner
from audit.auditor import SEARCH
from audit.errors import PrivauditError
from audit.events import objective
from audit.runners.local import LocalRunner
from audit.types import Dataset

search_module = sys.modules["attacks.search"]   # the package re-exports `search`, the function


def best_exhaustive(learner, claim, seed: int) -> float | None:
    """Best exact epsilon (delta for stability claims) over every design of the family."""
    if not callable(getattr(learner, "exact", None)):
        return None
    dom = learner_domain(learner)
    sizes = discover_sizes(learner, dom, claim.neighbours, seed)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(SEARCH, 7)))
    best = None
    for t in adversarial_family(dom, claim.neighbours, sizes, rng, n_anchors=3):
        try:
            pa, pb = learner.exact(t.a, t.queries), learner.exact(t.b, t.queries)
        except ValueError:
            continue
        e, d = exact_bounds(np.asarray(pa), np.asarray(pb), claim)
        v = d if objective(claim) == "delta" else e
        best = v if best is None else max(best, v)
    return best


class HiddenOracle:
    """`learner` with its exact oracle hidden: only ``predict`` and what a user's learner would
    declare (claim, batches, sizes, domain or hypothesis class, default queries)."""

    KEEP = ("claim", "batches", "search_sizes", "domain", "H", "hypotheses", "hclass",
            "hypothesis_class", "cls", "queries", "chunk_runs")

    def __init__(self, learner) -> None:
        self._learner = learner
        self.name = f"{getattr(learner, 'name', type(learner).__name__)}[oracle hidden]"
        for a in self.KEEP:
            if getattr(learner, a, None) is not None:
                setattr(self, a, getattr(learner, a))

    def predict(self, data, queries, runs, rng):
        return self._learner.predict(data, queries, runs, rng)


def fmt(x: float | None) -> str:
    """A bound for the tables: '-' when absent, 'inf', else four decimals."""
    return "-" if x is None else ("inf" if x == math.inf else f"{x:.4f}")


def exact_of_witness(learner, result) -> float | None:
    """Exact epsilon (delta for stability claims) of the confirmed witness; None when the
    learner has no oracle or it refuses the pair (PrivauditError is a ValueError)."""
    if not callable(getattr(learner, "exact", None)) or result.witness is None:
        return None
    w = result.witness
    try:
        a, b = Dataset.from_dict(w.a), Dataset.from_dict(w.b)
        q = np.asarray(w.queries if w.queries is not None else [], float).reshape(-1, a.d)
        if q.size == 0:
            return None
        e, d = exact_bounds(np.asarray(learner.exact(a, q)), np.asarray(learner.exact(b, q)), result.claim)
    except ValueError:
        return None
    return d if objective(result.claim) == "delta" else e


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="learners (default: every registered learner)")
    ap.add_argument("--variants", help="comma-separated variants (default: correct + every bug)")
    ap.add_argument("--strategy", default="adaptive")
    ap.add_argument("--explore-runs", type=int, default=20_000)
    ap.add_argument("--confirm-runs", type=int, default=200_000)
    ap.add_argument("--search-runs", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-exact", action="store_true", help="skip the exact-oracle columns")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    ap.add_argument("--hide-oracle", action="store_true",
                    help="audit each learner with its exact oracle hidden (a user's learner)")
    ap.add_argument("--sizes", type=int, nargs="+", help="dataset sizes for the search")
    ap.add_argument("--blind-share", type=float, default=None,
                    help="share of the search runs for the batch family on black-box runs "
                         "(attacks.search.BLIND_SHARE; 0 switches that step off, an ablation)")
    args = ap.parse_args()
    if args.blind_share is not None:
        search_module.BLIND_SHARE = args.blind_share
    names = args.names or [n for n in algorithms.names() if algorithms.info(n)["kind"] == "learner"]
    rows = []
    print(f"{'learner':<9} {'variant':<10} {'flag':<5} {'bound':>8} {'exact':>8} {'best-exh':>8} "
          f"{'runs':>9} {'search s':>8} {'total s':>8}  witness")
    for name in names:
        info = algorithms.info(name)
        variants = args.variants.split(",") if args.variants else list(info["variants"])
        for v in variants:
            if v not in info["variants"]:
                continue
            try:
                learner = algorithms.get(name, variant=v) if v != "correct" else algorithms.get(name)
            except Exception as exc:  # noqa: BLE001 - a learner that cannot be built is reported
                print(f"{name:<9} {v:<10} cannot build: {exc}", flush=True)
                continue
            t0 = time.perf_counter()
            opts = {"strategy": args.strategy}
            if args.search_runs:
                opts["search_runs"] = args.search_runs
            if args.sizes:
                opts["sizes"] = args.sizes
            if args.hide_oracle:
                learner = HiddenOracle(learner)
            try:
                r = audit_learner(learner, explore_runs=args.explore_runs,
                                  confirm_runs=args.confirm_runs, seed=args.seed,
                                  runner=LocalRunner(), search_options=opts)
            except PrivauditError as exc:  # e.g. a variant that refuses every size searched
                print(f"{name:<9} {v:<10} not audited: {exc}", flush=True)
                rows.append({"learner": name, "variant": v, "error": str(exc)})
                continue
            total = time.perf_counter() - t0
            obj = objective(r.claim)
            bound = r.delta_lower if obj == "delta" else r.epsilon_lower
            ex = None if args.no_exact else exact_of_witness(learner, r)
            best = None if args.no_exact else best_exhaustive(learner, r.claim, args.seed)
            row = {"learner": name, "variant": v, "violation": r.violation, "objective": obj,
                   "bound": bound, "exact_of_witness": ex, "best_exhaustive": best,
                   "search_runs": r.search.get("search_runs"), "search_s": r.search.get("time_s"),
                   "total_s": round(total, 2), "found_by": r.witness.found_by,
                   "batch_screen_runs": r.search.get("batch_screen_runs")}
            rows.append(row)
            print(f"{name:<9} {v:<10} {'YES' if r.violation else 'no':<5} {fmt(bound):>8} {fmt(ex):>8} "
                  f"{fmt(best):>8} {row['search_runs'] or 0:>9} {row['search_s'] or 0:>8.1f} {total:>8.1f}  "
                  f"{r.witness.found_by}"
                  f"{' [batch family on the black box]' if row['batch_screen_runs'] else ''}", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2, default=str)


if __name__ == "__main__":
    main()
