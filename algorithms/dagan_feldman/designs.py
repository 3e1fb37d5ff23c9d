"""Adversarial neighbour designs of the Dagan & Feldman audit notes (spec section 5.4).

Every design returns ``(S, S', x_q)``: two replace-one neighbours (same n, the differing record at
the same index, the last one) and the query point, built on the domain of a `HypothesisClass`.
Locations are chosen by position along the domain order, which for the 1-D classes (THR, INT,
POINT, ...) is the left-to-right order the designs are about; on other classes they are still
valid neighbour pairs, only not tuned.

References
----------
Y. Dagan and V. Feldman, COLT 2020; design rationale in the project's implementation notes, 5.4.
"""

from __future__ import annotations

import numpy as np

from audit.errors import PrivauditError
from audit.types import Dataset

from ..common.hypotheses import HypothesisClass


def _at(H: HypothesisClass, frac: float) -> int:
    return int(min(H.N - 1, max(0, round(frac * (H.N - 1)))))


def _build(H: HypothesisClass, parts: list[tuple[int, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    locs = np.concatenate([np.full(c, j, dtype=np.int64) for j, _, c in parts if c > 0])
    ys = np.concatenate([np.full(c, y, dtype=np.int8) for _, y, c in parts if c > 0])
    return H.domain[locs], ys


def _pair(H: HypothesisClass, background: list[tuple[int, int, int]], rec: tuple[int, int],
          rec2: tuple[int, int]) -> tuple[Dataset, Dataset]:
    X, y = _build(H, background)
    S = Dataset(np.vstack([X, H.domain[[rec[0]]]]), np.concatenate([y, [rec[1]]]))
    S2 = Dataset(np.vstack([X, H.domain[[rec2[0]]]]), np.concatenate([y, [rec2[1]]]))
    return S, S2


def _need(H: HypothesisClass, k: int) -> None:
    if H.N < k:
        raise PrivauditError(f"design needs a domain of at least {k} points; class {H.name} has {H.N}")


def d1_label_flip(H: HypothesisClass, n: int = 300, k_query: int = 8) -> tuple[Dataset, Dataset, np.ndarray]:
    """D1 LabelFlipAtQuery: ``S = B + (x_q, 0)``, ``S' = B + (x_q, 1)``.

    ``B``: two boundary clusters (label 0 at 1/4, label 1 at 7/8 of the domain) and ``k_query``
    copies of ``(x_q, 0)`` with ``x_q`` at 5/8, which make label 1 at ``x_q`` the rare label under
    an exponential mechanism (the EM's worst case, spec 3.2).
    """
    _need(H, 4)
    a, q, b = _at(H, 0.25), _at(H, 0.625), _at(H, 0.875)
    m = max(1, (n - 1 - k_query) // 2)
    S, S2 = _pair(H, [(a, 0, m), (q, 0, k_query), (b, 1, n - 1 - k_query - m)], (q, 0), (q, 1))
    return S, S2, H.domain[[q]]


def d2_gap(H: HypothesisClass, n: int = 2000) -> tuple[Dataset, Dataset, np.ndarray]:
    """D2 GapInclusion: clusters of opposite labels around an empty gap holding ``x_q``.

    ``S = B + (x_q, y_r)`` with ``y_r`` the label the gap's canonical representative (the first
    consistent hypothesis of ``B``) does not predict at ``x_q``; ``S' = B + (x_a, 0)``, a harmless
    record inside the left cluster. Entering ``T`` (probability ``n'/n``) the record splits the
    gap class and makes label ``y_r`` competitive at ``x_q``.
    """
    _need(H, 4)
    a, q, b = _at(H, 0.25), _at(H, 0.5), _at(H, 0.75)
    m = (n - 1) // 2
    X, y = _build(H, [(a, 0, m), (b, 1, n - 1 - m)])
    h0 = H.consistent(Dataset(X, y))
    y_r = 1 - int(H.matrix[h0, q])
    S, S2 = _pair(H, [(a, 0, m), (b, 1, n - 1 - m)], (q, y_r), (a, 0))
    return S, S2, H.domain[[q]]


def d3_stable_not_private(H: HypothesisClass, n: int = 2000) -> tuple[Dataset, Dataset, np.ndarray]:
    """D3 StableNotPrivate: every background point lies below ``x_q`` and is labelled 0.

    For thresholds with first-index representatives every hypothesis of ``H_T`` predicts 1 at
    ``x_q`` unless ``x_q`` is in ``T``, so ``Pr_{S'}[0] = 0`` exactly, while under
    ``S = B + (x_q, 0)`` label 0 has probability about ``n'/(2n)`` (spec instance Z).
    """
    _need(H, 4)
    a, c, q = _at(H, 0.25), _at(H, 0.4), _at(H, 0.625)
    m = (n - 1) // 2
    S, S2 = _pair(H, [(a, 0, m), (c, 0, n - 1 - m)], (q, 0), (c, 0))
    return S, S2, H.domain[[q]]


def d7_tie_break(H: HypothesisClass, n: int = 400, k_query: int = 100) -> tuple[Dataset, Dataset, np.ndarray]:
    """D7 TieBreak: ``k_query`` copies each of ``(x_q, 0)`` and ``(x_q, 1)`` (so ``x_q`` is in ``T``
    almost surely) plus two boundary clusters; ``S = B + (x_q, 0)``, ``S' = B + (x_q, 1)``. The two
    classes ``t <= x_q`` and ``t > x_q`` differ by exactly the record: the EM's additive leak
    ``tanh(eps_EM/4)`` (spec instance T)."""
    _need(H, 4)
    a, q, b = _at(H, 0.25), _at(H, 0.5), _at(H, 0.75)
    m = max(0, (n - 1 - 2 * k_query) // 2)
    S, S2 = _pair(H, [(a, 0, m), (q, 0, k_query), (q, 1, k_query), (b, 1, n - 1 - 2 * k_query - m)],
                  (q, 0), (q, 1))
    return S, S2, H.domain[[q]]


def d7_replicas(H: HypothesisClass, n: int = 2000, m: int = 7) -> list[tuple[Dataset, Dataset, np.ndarray]]:
    """``m`` further D7 TieBreak pairs with distinct backgrounds (``k_query = n//8 - 1, ...,
    n//8 - m``), each with ``Pr[1] ~ 1/2`` at ``x_q`` under both datasets.

    A correct learner draws ``I`` and ``h`` afresh on every run, so these pairs show nothing new.
    A learner that keeps state from one fit to the next (the subsample or hypothesis cached per
    dataset and reused across the auditor's re-fits, BV-API-3) answers every run on a dataset
    with the same ``h``: on each pair the two cached draws disagree at ``x_q`` with probability
    about 1/2, independently across pairs (distinct datasets, distinct cache entries), so with
    the original D7 pair all ``m + 1`` agree with probability about ``2^-(m+1)``.
    """
    base = n // 8
    if base - m < 1:
        raise PrivauditError(f"d7_replicas: n = {n} is too small for {m} replicas (need n // 8 > m)")
    return [d7_tie_break(H, n, k_query=base - i) for i in range(1, m + 1)]


__all__ = ["d1_label_flip", "d2_gap", "d3_stable_not_private", "d7_tie_break", "d7_replicas"]
