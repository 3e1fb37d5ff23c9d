"""Scoring exploration's events on an independent sample (cross-fitting; DESIGN.md section 4).

Exploration picks each pair's events on its own counts — a prefix of codes ranked by likelihood
ratio, a threshold on a learned score — and the same counts then predict what each event will
certify. The prediction of the event picked is biased upwards (the winner's curse), and the
choice *across* pairs compares those biased predictions: the pair whose best event looked best
by chance wins. Measured on Lyu–Su–Li's sparse vector Alg. 6 (seven StatDP pairs, 10⁶ runs):
at seed 0 a half-half pair's three-code event whose rare-side count came out at 14 (26.8 expected
exactly) was predicted 3.467 and chosen over the X-shape's answer vector (3.442 predicted; 3.715
expected from its exact rates), and confirmed 3.486.

Discrete vector outputs already draw a *learning* sample of code counts per pair
(`audit.learned.learning_codes`, independent of exploration). Each candidate event is counted on
it, and its prediction is recomputed from those counts alone, with the same Clopper–Pearson-safe
planning rates as exploration's: an unbiased view of an event chosen elsewhere. A learned score's
weights were fitted on the learning sample itself, so there neither prediction is clean (its
threshold was chosen on exploration, its weights on learning) and it keeps the smaller of the two
— measured on sparse vector Alg. 2 (`lit-svt2`, seed 1, 2x10^6): a logistic score predicted
0.0347 on the learning counts it was fitted to (0.0214 on exploration's) beat the best code set
(0.0325 on the learning counts) and confirmed 0.0369, where the code set confirms 0.0576. The
event itself is unchanged; only the ranking that chooses which events to confirm uses the new
predictions. Validity is untouched either way: whatever is chosen is confirmed on fresh runs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .events import Candidate, _tail_safe_rates
from .stats import expected_bounds
from .types import Claim


@dataclass(frozen=True)
class LearningCodes:
    """Code counts of a pair's two inputs over `runs` learning runs each (keys: output rows as
    tuples, as in exploration's `CodeCounts`)."""

    a: dict
    b: dict
    runs: int

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Distinct rows (int64, one per code) and their counts under each input."""
        codes = sorted(set(self.a) | set(self.b))
        rows = np.asarray(codes, dtype=np.int64).reshape(len(codes), -1)
        ka = np.array([self.a.get(c, 0) for c in codes], dtype=np.int64)
        kb = np.array([self.b.get(c, 0) for c in codes], dtype=np.int64)
        return rows, ka, kb


def rescore(cands: Sequence[Candidate], learning: LearningCodes, *, n_confirm: int,
            alpha: float, claim: Claim) -> list[Candidate]:
    """Copies of `cands` whose expected bounds come from their events' counts on `learning`.

    The exploration prediction is kept in ``extra["explore_expected_epsilon"]`` and the learning
    counts in ``extra["learning_counts"]`` (``[k_p, k_q, runs]``), so `top_explored` shows both.
    """
    if not cands or learning.runs < 1:
        return list(cands)
    rows, ka, kb = learning.arrays()
    if rows.shape[0] == 0:
        return list(cands)
    # events of one learned score differ only in threshold: score the rows once per score
    stat_cache: dict = {}
    kp = np.empty(len(cands), dtype=np.int64)
    kq = np.empty(len(cands), dtype=np.int64)
    for i, c in enumerate(cands):
        ev = c.event
        if hasattr(ev, "statistic") and hasattr(ev, "weights"):
            key = (id(getattr(ev, "featurizer", None)), getattr(ev, "feature", None), ev.weights)
            if key not in stat_cache:
                stat_cache[key] = ev.statistic(rows)
            s = stat_cache[key]
            hit = s >= ev.threshold if ev.side == "ge" else s < ev.threshold
        else:
            hit = np.asarray(ev.contains(rows), dtype=bool)
        in_a, in_b = int(ka[hit].sum()), int(kb[hit].sum())
        kp[i], kq[i] = (in_a, in_b) if c.direction == "a>b" else (in_b, in_a)
    n = learning.runs
    p_hat, q_hat = _tail_safe_rates(kp, kq, n, n)
    eps, delta = expected_bounds(p_hat, q_hat, n_confirm, alpha, claim.epsilon, claim.delta)
    eps = np.where(np.isfinite(eps), eps, 0.0)
    out = []
    for i, c in enumerate(cands):
        e, d = float(eps[i]), float(delta[i])
        if _fitted_on_learning(c.event):
            e, d = min(e, float(c.expected_epsilon)), min(d, float(c.expected_delta))
        extra = {**c.extra, "explore_expected_epsilon": float(c.expected_epsilon),
                 "learning_counts": [int(kp[i]), int(kq[i]), int(n)]}
        out.append(dataclasses.replace(c, expected_epsilon=e, expected_delta=d, extra=extra))
    return out


def _fitted_on_learning(event) -> bool:
    """A learned score's event (`audit.learned.ScoreEvent`): its weights come from the learning
    sample, so counts on that sample flatter it."""
    return hasattr(event, "featurizer") and hasattr(event, "weights")


__all__ = ["LearningCodes", "rescore"]
