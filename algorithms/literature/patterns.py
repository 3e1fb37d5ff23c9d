"""The input patterns of StatDP and DP-Sniper: the default neighbouring inputs of `lit-` mechanisms.

StatDP (Ding, Wang, Wang, Zhang & Kifer, "Detecting violations of differential privacy", ACM CCS
2018, Sec. 5.1, "database generation") starts every search from these query-answer vectors;
DP-Sniper (Bichsel, Steffen, Bogunovic & Vechev, IEEE S&P 2021, Sec. 6.1) reuses them. Each is a
pair of answer vectors that differ by at most 1 in every coordinate (sensitivity 1 in the
l-infinity sense: the neighbour relation of report-noisy-max and sparse vector); the first two are
also l1-neighbours (one record added to one bin: the relation of a histogram).
"""

from __future__ import annotations

import numpy as np


def statdp_patterns(n: int, *, l1: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
    """The StatDP patterns for `n` queries: ``[(a, b), ...]`` float64 vectors.

    `l1=True` keeps only the patterns whose vectors differ in one coordinate by 1 (one above,
    one below), the ones valid for an l1-sensitivity-1 query such as a histogram.
    """
    one = np.ones(n)
    h = n // 2
    rows = [
        ("one above", one, np.r_[2.0, np.ones(n - 1)]),
        ("one below", one, np.r_[0.0, np.ones(n - 1)]),
        ("one above rest below", one, np.r_[2.0, np.zeros(n - 1)]),
        ("one below rest above", one, np.r_[0.0, np.full(n - 1, 2.0)]),
        ("half half", one, np.r_[np.zeros(h), np.full(n - h, 2.0)]),
        ("all above", one, np.full(n, 2.0)),
        ("all below", one, np.zeros(n)),
        ("x shape", np.r_[np.ones(h), np.zeros(n - h)], np.r_[np.zeros(h), np.ones(n - h)]),
    ]
    if l1:
        rows = rows[:2]
    return [(a, b) for _, a, b in rows]


def with_witness(witness: tuple, patterns: list) -> list[tuple[np.ndarray, np.ndarray]]:
    """DP-Sniper's witness pair (Table 2 of its paper) first, then the patterns not equal to it."""
    a, b = (np.asarray(x, dtype=np.float64) for x in witness)
    out = [(a, b)]
    for p, q in patterns:
        if not ({(tuple(p), tuple(q)), (tuple(q), tuple(p))} & {(tuple(a), tuple(b))}):
            out.append((p, q))
    return out
