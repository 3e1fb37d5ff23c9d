"""Replicating a chosen threshold or label event on fresh runs before confirming it (DESIGN.md §4).

A threshold event is the best of a few hundred thresholds of a statistic, each planned on its
exploration counts with one-sided Clopper–Pearson-safe rates at 5 % (`audit.events`). Against
~430 thresholds per statistic that is not enough: now and then a threshold far in a tail is
chosen whose counts are a chance excess, and confirmation certifies nothing. Measured on
DP-Sniper's witness pairs (its convention, seeds 0-19): ``lit-histogram`` at 2x10^7 confirmed
0.0963-0.0997 on 19 seeds and 0.0 on seed 6 (``discriminant statistic >= 71.8``, 212 against 132
exploration counts, equal rates on fresh runs); ``lit-laplace`` at 2x10^6 confirmed 0.0 on seed 13.

A stricter plan (5 % split over the thresholds scanned) mends those seeds but cannot tell a lucky
tail from a real thin one: it cost ``lit-rnm-exp-value``, whose leak lives in thin tails, half its
bound. Fresh runs can tell them apart. So before confirming, the chosen threshold events and the
next best threshold events of the same pair (a shortlist of `SHORTLIST` distinct events) are
counted again on ``explore_runs`` fresh runs per input of that pair (spawn keys ``(REPLICATE,
pair, side)``; a tenth of the confirmation's runs at the default split),
and each gets a *replicated* prediction: the expected confirmed bound planned on those counts
alone, with the same rates as exploration. A chosen event is replaced by the shortlisted event
with the best replicated prediction only when its own replicated prediction is below
`REPLACE_BELOW` of that best — an event whose leak does not show again — and that best is at
least `REPLACE_BELOW` of what exploration promised for the chosen one (a real alternative, not
noise). Otherwise exploration's choice stands, so a seeded audit's result changes only where the
replication overrules it.

Measured with it, same convention, 2x10^6, seeds 0-19: ``lit-histogram`` mean 0.0883 -> 0.0965
(no seed below 0.0917), ``lit-laplace`` 0.0922 -> 0.0971; ``lit-histogram`` at 2x10^7 seed 6
0.0 -> 0.0989; ``lit-rnm-exp-value``, ``lit-rnm-laplace-value``, ``lit-gaussian``,
``lit-laplace-float``, ``lit-snapping`` and ``lit-histogram-bug`` unchanged on every seed.

Learners' label events (`audit.events.label_candidates`: a label at one query, or a set of
label vectors over the model's queries) are replicated too. They are planned on rates about one
standard error toward "no leak" (`audit.events._planning_rates`), milder than the thresholds'
5 %, which a real rare label needs (``df-real``'s designs, seed 0 at 2x10^4 / 2x10^5: a label
seen 133 against 47 times confirms 0.886, a plan at 5 % picks a common one, 0.799); on a
searched pair a label can still be rare by chance (``lwy-n3``'s search at seed 1, in a variant of
the search not kept whose exact scoring was drawn over dataset sizes: 29 against 12, then 19
against 18 on fresh runs; it confirmed 0.056 where a common label replicates and confirms
0.503). Other discrete code sets are not replicated: they are ranked by a conservative ratio,
and vectors of codes on a learning sample already (`audit.crossfit`).

A sequential audit replicates when its staged exploration ran to
its budget; one that stopped early has counted its choice again on fresh runs already
(`audit.staged`). Sequential ``lit-histogram``, same convention, 2x10^6, seeds 0-19: mean 0.0835
-> 0.0899 (seed 16: a pairwise learned score's far tail, 0.0 -> 0.0885).

Validity is untouched: whatever is chosen is confirmed on fresh runs; the replication only
decides *what* is confirmed, on runs confirmation never sees.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from .events import Candidate, _tail_safe_rates
from .stats import expected_bounds
from .types import Claim

REPLICATE = 8        # spawn-key phase of replication runs (0-7 are used elsewhere)
SHORTLIST = 8        # threshold events counted again: the chosen ones and the next best
REPLACE_BELOW = 0.5  # replaced below this share of the best replicated prediction


def replicable(c: Candidate) -> bool:
    """A threshold event (on a statistic or a learned score) not already ranked on a learning
    sample, or a learner's label event (`audit.events.label_candidates`)."""
    if c.extra.get("family") == "labels":
        return True
    return hasattr(c.event, "threshold") and hasattr(c.event, "side") \
        and "learning_counts" not in c.extra


def _key(c: Candidate) -> tuple:
    return (c.pair_index, c.direction, repr(c.event))


def shortlist(cands: Sequence[Candidate], chosen: Sequence[Candidate],
              size: int = SHORTLIST) -> list[Candidate]:
    """The chosen replicable events, then the best other replicable events *of the same pairs*
    by exploration's prediction (distinct events), `size` in all or every chosen one if more;
    empty when no chosen event is replicable. Other pairs' events would cost their pairs' runs."""
    out = [c for c in chosen if replicable(c)]
    if not out:
        return []
    seen = {_key(c) for c in chosen}
    pairs = {c.pair_index for c in out}
    for c in sorted(cands, key=lambda c: c.score, reverse=True):
        if len(out) >= size:
            break
        if c.pair_index in pairs and replicable(c) and _key(c) not in seen:
            seen.add(_key(c))
            out.append(c)
    return out


def with_replication(cands: Sequence[Candidate], counts: Sequence[tuple[int, int]], runs: int, *,
                     n_confirm: int, alpha: float, claim: Claim) -> list[Candidate]:
    """Copies of `cands` carrying their replicated counts and prediction in ``extra``
    (``replicated``: ``[k_p, k_q, runs]``; ``replicated_expected_epsilon`` / ``_delta``);
    `counts` are each event's counts under input a and b. Exploration's prediction stays the
    candidate's own."""
    if not cands:
        return []
    kp = np.array([ka if c.direction == "a>b" else kb for c, (ka, kb) in zip(cands, counts)])
    kq = np.array([kb if c.direction == "a>b" else ka for c, (ka, kb) in zip(cands, counts)])
    p_hat, q_hat = _tail_safe_rates(kp, kq, runs, runs)
    eps, delta = expected_bounds(p_hat, q_hat, n_confirm, alpha, claim.epsilon, claim.delta)
    eps = np.where(np.isfinite(eps), eps, 0.0)
    return [dataclasses.replace(c, extra={**c.extra,
                                          "replicated": [int(kp[i]), int(kq[i]), int(runs)],
                                          "replicated_expected_epsilon": float(eps[i]),
                                          "replicated_expected_delta": float(delta[i])})
            for i, c in enumerate(cands)]


def _replicated_score(c: Candidate) -> float:
    if c.objective == "delta":
        return float(c.extra["replicated_expected_delta"])
    return float(c.extra["replicated_expected_epsilon"])


def reconcile(chosen: Sequence[Candidate], replicated: Sequence[Candidate],
              below: float = REPLACE_BELOW) -> tuple[list[Candidate], list[dict]]:
    """The candidates to confirm: each chosen event, or the shortlisted event best on the
    replication if the chosen one's replicated prediction is below ``below`` times that best
    *and* that best is at least ``below`` times what exploration predicted for the chosen one.

    The second condition keeps exploration's choice when everything replicates at the noise
    level: a small real leak whose fresh counts plan to 0 is not traded for another at 0.007
    (measured: `lit-numerical-svt`, default pairs, 2x10^6, seed 0: the chosen event, predicted
    0.0157 by exploration and 0.0 on fresh runs, confirms 0.0203; the shortlist's best on fresh
    runs, 0.0073, confirmed 0.0112).

    `replicated` is the shortlist with replication counts (`with_replication`). Returns the new
    choice (same order and length) and one record per replacement."""
    by_key = {_key(c): c for c in replicated}
    taken = {_key(c) for c in chosen}
    out, replaced = [], []
    for c in chosen:
        r = by_key.get(_key(c))
        if r is None:
            out.append(c)
            continue
        others = [s for s in replicated if _key(s) not in taken]
        best = max(others, key=_replicated_score, default=None)
        if best is not None and _replicated_score(r) < below * _replicated_score(best) \
                and _replicated_score(best) >= below * c.score[0]:
            taken.add(_key(best))
            out.append(dataclasses.replace(best, extra={**best.extra,
                                                        "replaces": c.event.describe()}))
            replaced.append({"chosen": c.event.describe(), "direction": c.direction,
                             "pair_index": c.pair_index,
                             "replicated_expected": _replicated_score(r),
                             "by": best.event.describe(), "by_direction": best.direction,
                             "by_pair_index": best.pair_index,
                             "by_replicated_expected": _replicated_score(best)})
        else:
            out.append(r)
    return out, replaced


__all__ = ["REPLICATE", "SHORTLIST", "REPLACE_BELOW", "replicable", "shortlist",
           "with_replication", "reconcile"]
