"""Is the black box a function of its ``rng``? Run one small chunk twice with the same seed.

Every count privaudit reports is meant to be reproducible: the same seed gives the same result
on one machine or fifty. A black box that draws from ``np.random``, ``random`` or the clock
instead of the ``rng`` it is given breaks that silently -- its audit still gives valid bounds
(its runs are still independent samples), but a rerun gives other numbers and a regression
baseline compares noise. The check calls the black box twice on one input with two generators
built from the same seed (a stream of its own, so the audit's counts are unchanged) and compares
the outputs exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .runners.base import call_blackbox

CHECK_RUNS = 256
_SPAWN_KEY = (0xD7, 0)   # a stream no audit phase uses


def nondeterminism(blackbox: Any, inp: Any, queries: Any, seed: int,
                   runs: int = CHECK_RUNS) -> str | None:
    """None when two calls with identically seeded generators agree, else a note saying so."""
    outs = []
    for _ in range(2):
        rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=_SPAWN_KEY))
        outs.append(np.asarray(call_blackbox(blackbox, inp, queries, runs, rng)))
    a, b = outs
    if a.shape == b.shape and np.array_equal(a, b):
        return None
    differ = int(np.count_nonzero(np.asarray(a != b).reshape(len(a), -1).any(axis=1))) \
        if a.shape == b.shape else runs
    return (f"nondeterministic: the same chunk run twice with the same seed differed in {differ} "
            f"of {runs} runs -- the black box draws randomness outside the rng it is given "
            f"(np.random, random, time?), so this result is not reproducible from its seed (its "
            f"bounds are still valid); use only rng, or declare reproducible = False")


__all__ = ["nondeterminism", "CHECK_RUNS"]
