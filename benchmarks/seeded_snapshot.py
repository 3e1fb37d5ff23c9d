"""Every registered (algorithm, variant) audited at a small seeded budget, as one JSON file.

A refactor must change no draw: run this before and after, then compare the two files with
``--compare``. Only the public API is used (``algorithms.names/get/spec``, ``audit.audit`` and
``audit.audit_learner``, ``LocalRunner``), so the same script runs on any version of main.

    python benchmarks/seeded_snapshot.py --out before.json
    python benchmarks/seeded_snapshot.py --out after.json
    python benchmarks/seeded_snapshot.py --compare before.json after.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time


def _row(result) -> dict:
    d = result.to_dict()
    w = d.get("witness") or {}
    return {"epsilon_lower": d.get("epsilon_lower"), "delta_lower": d.get("delta_lower"),
            "violation": d.get("violation"),
            "counts": [[t.get(k) for k in ("k_p", "n_p", "k_q", "n_q")] for t in d.get("confirmed") or []],
            "event": w.get("event"), "direction": w.get("direction"),
            "pair": [w.get("a"), w.get("b")] if w else None,
            "search": d.get("search", {}).get("pairs_found") if isinstance(d.get("search"), dict) else None}


def snapshot(explore: int, confirm: int, only: str | None, search: bool = False) -> dict:
    import algorithms
    from audit import audit, audit_learner
    from audit.runners import LocalRunner

    out = {}
    for name in algorithms.names():
        if only and not name.startswith(only):
            continue
        if name.startswith("lib-"):  # real libraries draw their own noise: nothing to snapshot
            continue
        spec = algorithms.spec(name)
        if search and spec.kind != "learner":
            continue
        for variant in (["correct"] if search else spec.variants):
            key = f"{name}/{variant}" + ("/search" if search else "")
            t0 = time.perf_counter()
            try:
                obj = algorithms.get(name, **({} if variant == "correct" else {"variant": variant}))
                common = dict(explore_runs=explore, confirm_runs=confirm, seed=0, runner=LocalRunner())
                if search:   # the generic search (attacks/) with no pairs, at a small budget
                    res = audit_learner(obj, search_options={"search_runs": 4 * explore,
                                                             "candidates": 8}, **common)
                elif callable(getattr(obj, "predict", None)):
                    res = audit_learner(obj, **common)
                else:
                    res = audit(obj, None, **common)
                row = _row(res)
            except Exception as exc:  # recorded: a refactor must fail the same way
                row = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            row["seconds"] = round(time.perf_counter() - t0, 2)
            out[key] = row
            print(key, {k: v for k, v in row.items() if k != "event"}, file=sys.stderr, flush=True)
    return out


def compare(a: dict, b: dict) -> int:
    bad = 0
    for key in sorted(set(a) | set(b)):
        ra, rb = a.get(key), b.get(key)
        if ra is None or rb is None:
            print(f"{key}: only in {'after' if ra is None else 'before'}")
            bad += 1
            continue
        fa = {k: v for k, v in ra.items() if k != "seconds"}
        fb = {k: v for k, v in rb.items() if k != "seconds"}
        if json.dumps(fa, sort_keys=True) != json.dumps(fb, sort_keys=True):
            print(f"{key}: before {fa}\n{' ' * len(key)}  after  {fb}")
            bad += 1
    print(f"{len(set(a) | set(b))} (algorithm, variant) rows, {bad} differ")
    return 1 if bad else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out")
    p.add_argument("--explore", type=int, default=2_000)
    p.add_argument("--confirm", type=int, default=20_000)
    p.add_argument("--only", help="only names starting with this prefix")
    p.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    p.add_argument("--search", action="store_true",
                   help="audit each learner's correct variant through the search instead")
    args = p.parse_args()
    if args.compare:
        with open(args.compare[0]) as fa, open(args.compare[1]) as fb:
            return compare(json.load(fa), json.load(fb))
    snap = snapshot(args.explore, args.confirm, args.only, args.search)
    text = json.dumps(snap, indent=1, sort_keys=True, default=lambda x: None if isinstance(x, float) and math.isnan(x) else str(x))
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
