"""G's exact laws under BLM's shared stream (B16): shared suffixes against each batch alone.

    python benchmarks/bench_blm_laws.py [blm-t1|blm-m ...]

Under B16 batch i's stream is its own N records followed by batches i+1 .. k-1 whole, so a
dataset's k streams end alike, and a stream that keeps agreeing is enumerated to its end.
`PrivateLearnerM.laws` computes a dataset's laws from the last batch back with one
`stable.SharedSuffix` (each law reuses the laws of the stream it ends with); the reference
(``share_suffixes = False``) computes every batch's law alone. Both run here on the same
datasets, alternately, the law cache cleared before each call: the variant's default pairs and
the sorted batch runs (`attacks.batches.sorted_runs_family`, the datasets a guided search scores,
half of them deep). Prints the seconds of each and whether the laws agree bit for bit.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import algorithms
from attacks.batches import sorted_runs_family
from attacks.domain import learner_domain


def timed_laws(L, data, share: bool):
    L.share_suffixes = share
    L._law_cache.clear()
    t = time.perf_counter()
    got = L.laws(data)
    return time.perf_counter() - t, got


def same(a, b) -> bool:
    return a[0] == b[0] and np.array_equal(a[1], b[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=["blm-t1", "blm-m"])
    args = ap.parse_args()
    print(f"{'learner':<8}{'datasets':<22}{'count':>6}{'alone s':>10}{'shared s':>10}{'ratio':>8}  bit for bit")
    for name in args.names:
        L = algorithms.get(name, variant="b16")
        k, m = L.batches
        runs = sorted_runs_family(learner_domain(L), "replace-one", k, m, L.n_total)
        groups = [("default pairs", [d for p in L.default_pairs() for d in p]),
                  ("sorted batch runs", [d for t in runs for d in (t.a, t.b)])]
        for label, datasets in groups:
            alone = shared = 0.0
            agree = True
            for d in datasets:
                ta, a = timed_laws(L, d, False)
                ts, s = timed_laws(L, d, True)
                alone, shared = alone + ta, shared + ts
                agree &= same(a, s)
            print(f"{name:<8}{label:<22}{len(datasets):>6}{alone:>10.2f}{shared:>10.2f}"
                  f"{alone / shared:>8.1f}  {'yes' if agree else 'NO'}", flush=True)


if __name__ == "__main__":
    main()
