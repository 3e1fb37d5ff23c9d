"""Sequential (anytime-valid) audits against fixed-budget ones.

    python benchmarks/bench_sequential.py tightness            # RR at 10^6: the price in tightness
    python benchmarks/bench_sequential.py ci                   # examples/privacy-ci.toml with/without
    python benchmarks/bench_sequential.py bugs [--fixed] [--names dp-rr lit-...] [--json out.json]

* ``tightness``: the epsilon lower bound of randomized response (epsilon = 1) at n = 10^6 runs per
  side from the same counts, Clopper–Pearson (fixed n) against what a sequential audit reports
  when it runs to the end (the final analysis at its share of the level, intersected with the
  confidence sequences) and against the confidence sequence alone, over 200 exact binomial
  draws; and one real audit each way at seed 0.
* ``ci``: the example CI suite, as written and with ``sequential = true`` for every audit: wall
  time (``--repeats`` repetitions back to back, alternating) and verdicts (local runner).
* ``bugs``: every planted privacy bug of the registry (expectation "violation") audited
  sequentially on its own pairs at the CLI's default budget (10^5 exploration / 10^6
  confirmation runs per side, seed 0): the verdict, the confirmation runs spent per side, the
  ratio budget / spent (the fixed audit always spends the budget), and the same ratio counting
  every run of every input, exploration (in stages) included. ``--fixed`` also runs the
  fixed-budget audit of each, to compare verdicts and time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from dataclasses import replace

import numpy as np

import algorithms
from audit import Claim, audit, sequential as S, stats
from audit.runners import LocalRunner
from privaudit.ci_config import load_config
from privaudit.ci_run import run_suite


def tightness(n: int = 10**6, draws: int = 200, confidence: float = 0.95) -> None:
    eps = 1.0
    p, q = math.exp(eps) / (1 + math.exp(eps)), 1 / (1 + math.exp(eps))
    alpha = stats.per_bound_alpha(confidence, 1)
    st = S.SequentialState.start(Claim(eps), 1, n, confidence)
    comps_all = S.components_for(n, alpha)
    rng = np.random.default_rng(0)
    kp, kq = rng.binomial(n, p, draws), rng.binomial(n, q, draws)
    fixed = stats.epsilon_lower(stats.cp_lower(kp, n, alpha), stats.cp_upper(kq, n, alpha))
    # what a sequential audit reports when it runs to the end: the confidence sequences at
    # their share of the level intersected with the final analysis (the rest of it)
    seq = stats.epsilon_lower(*st.final_bounds(kp.astype(float), kq.astype(float)))
    cs_only = stats.epsilon_lower(S.cs_lower(kp, n, alpha, comps_all), S.cs_upper(kq, n, alpha, comps_all))
    print(f"randomized response, epsilon = {eps}, n = {n:,} per side, {draws} draws, "
          f"confidence {confidence}:")
    print(f"  fixed (Clopper–Pearson) epsilon_lower       : mean {fixed.mean():.4f}  "
          f"(gap to the truth {eps - fixed.mean():.4f})")
    print(f"  sequential at the budget (final analysis)   : mean {seq.mean():.4f}  "
          f"(gap to the truth {eps - seq.mean():.4f}; {(eps - seq.mean()) / (eps - fixed.mean()):.2f}x "
          f"the fixed gap; anytime share {S.ANYTIME_SHARE})")
    print(f"  confidence sequence alone, all of the level : mean {cs_only.mean():.4f}  "
          f"({(eps - cs_only.mean()) / (eps - fixed.mean()):.2f}x the fixed gap)")
    print(f"  certifiable ceiling at n: fixed {stats.max_certifiable_epsilon(n, confidence):.3f}, "
          f"sequential {S.max_certifiable_epsilon(n, confidence, 1):.3f}")
    rr = algorithms.get("dp-rr", epsilon=eps)
    for seqflag in (False, True):
        r = audit(rr, rr.pairs, seed=0, confirm_runs=n, sequential=seqflag)
        extra = "" if not seqflag else (f" (stopped: {r.sequential['stopped']} after "
                                        f"{r.sequential['runs_per_side']:,} runs per side, decided "
                                        f"by the {r.sequential['decided_by']} rule)")
        print(f"  real audit, seed 0, {'sequential' if seqflag else 'fixed     '}: epsilon_lower "
              f"{r.epsilon_lower:.4f}{extra}")


def ci(path: str = "examples/privacy-ci.toml", repeats: int = 5) -> None:
    cfg = load_config(path)
    seq_cfg = replace(cfg, audits=[replace(a, sequential=True) for a in cfg.audits])
    times: dict[str, list[float]] = {"fixed": [], "sequential": []}
    cpu: dict[str, list[float]] = {"fixed": [], "sequential": []}   # this process's CPU time
    per_audit: dict[str, list[list[float]]] = {"fixed": [], "sequential": []}
    runs: dict[str, int] = {}
    verdicts = {}
    for _ in range(repeats):
        for label, c in (("fixed", cfg), ("sequential", seq_cfg)):
            t, tc = time.perf_counter(), time.process_time()
            suite = run_suite(c, runner=LocalRunner())
            times[label].append(time.perf_counter() - t)
            cpu[label].append(time.process_time() - tc)
            verdicts[label] = [(e.name, e.result.verdict if e.result else e.error, e.ok)
                               for e in suite.entries]
            per_audit[label].append([e.result.timings["total_s"] for e in suite.entries])
            runs[label] = sum(_runs_spent(e.result) for e in suite.entries)
            if label == "sequential":
                spent = [(e.name, e.result.sequential["runs_per_side"], e.result.sequential["stopped"])
                         for e in suite.entries if e.result is not None]
    f, s = min(times["fixed"]), min(times["sequential"])
    fm, sm = statistics.median(times["fixed"]), statistics.median(times["sequential"])
    ratios = [a / b for a, b in zip(times["fixed"], times["sequential"])]
    print(f"{path}: {len(cfg.audits)} audits, explore/confirm per the config, local runner, "
          f"{repeats} repetitions back to back (fixed, sequential, fixed, ...)")
    print(f"  fixed      best {f:7.2f} s   median {fm:7.2f} s")
    print(f"  sequential best {s:7.2f} s   median {sm:7.2f} s")
    print(f"  speed-up: best/best {f / s:.2f}x, median/median {fm / sm:.2f}x, per repetition "
          f"{min(ratios):.2f}x .. {max(ratios):.2f}x")
    cf, cs = min(cpu["fixed"]), min(cpu["sequential"])
    cfm, csm = statistics.median(cpu["fixed"]), statistics.median(cpu["sequential"])
    print(f"  CPU time of this process (less sensitive to other load): fixed best {cf:.2f} s, median "
          f"{cfm:.2f} s; sequential best {cs:.2f} s, median {csm:.2f} s: {cf / cs:.2f}x best, "
          f"{cfm / csm:.2f}x median")
    print(f"  load average (1, 5, 15 min) at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    same = [a[:2] == b[:2] for a, b in zip(verdicts["fixed"], verdicts["sequential"])]
    print(f"  same verdicts: {all(same)}; all expectations met: "
          f"{all(v[2] for v in verdicts['fixed'])} / {all(v[2] for v in verdicts['sequential'])}")
    best = {k: np.min(np.array(v), axis=0) for k, v in per_audit.items()}
    print(f"  runs of all inputs (exploration + confirmation): fixed {runs['fixed']:,}, "
          f"sequential {runs['sequential']:,} ({runs['fixed'] / runs['sequential']:.1f}x fewer)")
    print(f"  audits' own time (explore + confirm, best per audit): fixed {best['fixed'].sum():.2f} s, "
          f"sequential {best['sequential'].sum():.2f} s (the rest of the wall time — reproducibility "
          f"check, provenance, suite bookkeeping — is the same work in both)")
    for (name, verdict, _), (_, n, why), tf, ts in zip(verdicts["sequential"], spent,
                                                        best["fixed"], best["sequential"]):
        print(f"    {name:<45} {verdict:<10} confirmation runs per side {n:>9,}  ({why:<9}) "
              f"{tf:6.3f} s -> {ts:6.3f} s")


def _runs_spent(r) -> int:
    """Every run of every input an audit made: exploration (in stages when sequential), the
    replication of a chosen threshold, and confirmation (pilot and learning runs, the same in
    both modes, left out)."""
    pairs = r.search.get("pairs", 1) if isinstance(r.search, dict) else 1
    rep = r.search.get("replication") if isinstance(r.search, dict) else None
    replicated = 2 * rep["pairs"] * rep["runs_per_side"] if rep else 0
    if r.sequential is None:
        return 2 * pairs * r.explore_runs + replicated \
            + 2 * len({t.pair_index for t in r.confirmed}) * r.confirm_runs
    ex = r.sequential.get("explore") or {}
    confirmed = 2 * len({t.pair_index for t in r.confirmed}) * r.sequential["runs_per_side"]
    return int(ex.get("input_runs", 2 * pairs * r.explore_runs)) + replicated + confirmed


def bugs(names: list[str], fixed: bool, explore: int, confirm: int, out: str | None) -> None:
    rows = []
    pool = names or algorithms.names()
    # mechanisms first (fast), then learners
    pool = sorted(pool, key=lambda n: algorithms.info(n)["kind"] != "mechanism")
    todo = [(n, v) for n in pool for v in algorithms.info(n)["variants"]
            if algorithms.spec(n).expectation(v) == "violation"]
    print(f"{len(todo)} planted privacy bugs; explore {explore:,}, budget {confirm:,} per side, seed 0")
    print(f"{'algorithm':<12}{'variant':<16}{'seq':<10}{'stopped':<10}{'runs/side':>10}{'ratio':>8}"
          f"{'s':>7}" + (f"{'fixed':>11}{'s':>7}" if fixed else ""))
    for name, variant in todo:
        t = time.perf_counter()
        try:
            obj = algorithms.get(name, variant=variant) if variant != "correct" else algorithms.get(name)
            if not getattr(obj, "pairs", None):
                continue
            r = audit(obj, explore_runs=explore, confirm_runs=confirm, seed=0, runner=LocalRunner(),
                      sequential=True)
        except Exception as exc:   # a broken registry entry is reported, not fatal
            print(f"{name:<12}{variant:<16}error: {type(exc).__name__}: {str(exc)[:120]}", flush=True)
            rows.append({"algorithm": name, "variant": variant, "verdict": "error",
                         "error": str(exc)[:300]})
            continue
        ts = time.perf_counter() - t
        spent = r.sequential["runs_per_side"]
        ex = r.sequential.get("explore") or {}
        row = {"algorithm": name, "variant": variant, "verdict": r.verdict,
               "stopped": r.sequential["stopped"], "decided_by": r.sequential.get("decided_by"),
               "runs_per_side": spent, "ratio": confirm / spent, "seconds": round(ts, 2),
               "pairs": len(ex.get("pair_runs", [])) or 1,
               "explore_input_runs": ex.get("input_runs"), "explore_stopped": ex.get("stopped")}
        line = (f"{name:<12}{variant:<16}{r.verdict:<10}{r.sequential['stopped']:<10}{spent:>10,}"
                f"{confirm / spent:>8.1f}{ts:>7.1f}")
        if fixed:
            t = time.perf_counter()
            rf = audit(obj, explore_runs=explore, confirm_runs=confirm, seed=0, runner=LocalRunner())
            row.update(fixed_verdict=rf.verdict, fixed_seconds=round(time.perf_counter() - t, 2))
            line += f"{rf.verdict:>11}{row['fixed_seconds']:>7.1f}"
        print(line, flush=True)
        rows.append(row)
        if out:
            with open(out, "w") as fh:
                json.dump(rows, fh, indent=1)
    flagged = [r for r in rows if r["verdict"] == "VIOLATION"]
    if flagged:
        ratios = [r["ratio"] for r in flagged]
        # every run of every input: a fixed audit spends explore_runs on both inputs of every
        # pair and confirm_runs on both inputs of each confirmed test's pair
        tot = [(2 * r["pairs"] * explore + 2 * confirm) /
               ((r["explore_input_runs"] or 2 * r["pairs"] * explore) + 2 * r["runs_per_side"])
               for r in flagged]
        print(f"\nflagged {len(flagged)} of {len(rows)}; confirmation runs ratio (budget / spent): "
              f"median {statistics.median(ratios):.1f}x, worst {min(ratios):.2f}x, "
              f"{sum(x >= 5 for x in ratios)} of {len(ratios)} >= 5x; with exploration counted "
              f"(all runs of all inputs): median {statistics.median(tot):.1f}x, worst {min(tot):.2f}x, "
              f"{sum(x >= 5 for x in tot)} >= 5x")
        print("decided by the final analysis:", [(r["algorithm"], r["variant"]) for r in flagged
                                                 if r.get("decided_by") == "final"] or "none")
    missed = [(r["algorithm"], r["variant"], r["verdict"]) for r in rows if r["verdict"] != "VIOLATION"]
    if missed:
        print("not flagged sequentially:", missed)
    if fixed:
        differ = [(r["algorithm"], r["variant"]) for r in rows
                  if "fixed_verdict" in r and r["verdict"] != r["fixed_verdict"]]
        print("verdicts differing from the fixed audit:", differ or "none")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("tightness", "ci", "bugs"))
    ap.add_argument("--names", nargs="*", default=[])
    ap.add_argument("--fixed", action="store_true")
    ap.add_argument("--explore", type=int, default=100_000)
    ap.add_argument("--confirm", type=int, default=1_000_000)
    ap.add_argument("--json")
    ap.add_argument("--config", default="examples/privacy-ci.toml")
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args(argv)
    if a.what == "tightness":
        tightness(n=a.confirm)
    elif a.what == "ci":
        ci(a.config, a.repeats)
    else:
        bugs(a.names, a.fixed, a.explore, a.confirm, a.json)


if __name__ == "__main__":
    sys.exit(main())
