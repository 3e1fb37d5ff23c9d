"""Neighbouring inputs for vector-input mechanisms: candidate pairs for `audit.audit(mech, pairs)`.

Three notions of neighbouring vectors, each with the classic worst cases:

* ``"l1"`` -- query answers of sensitivity Delta in l1 (Laplace mechanism, Dwork et al. 2006):
  one coordinate moved by +-Delta, and the move spread over all coordinates;
* ``"linf"`` -- score vectors where every score moves by at most Delta (exponential mechanism,
  report-noisy-max; McSherry & Talwar 2007): all scores up, one down (the candidate whose
  probability changes most), ``(0, 1, .., 1)`` against ``(1, 0, .., 0)`` (``em_worst_pair``),
  and random sign patterns;
* ``"replace-one"`` -- a dataset of values (histograms, counts, sums): one entry replaced by
  another value from `values`, at the first, a middle and the last position;
* ``"add-remove"`` -- a dataset of values (bounded sums, means, counts of a DP library): one record
  added to a base dataset (empty, and `k` - 1 copies of ``values[0]``), the added record taking
  each value of a ladder of magnitudes (default ``0, +-1, +-10, +-10^3, +-10^6``) so that a
  clamping bound of any scale is reached or crossed;
* ``"statdp"`` -- StatDP's input patterns (Ding et al., CCS 2018, Section 5; also DP-Sniper's):
  every coordinate moves by at most Delta (l-infinity) around ``base`` (default all Delta): one
  above, one below, one above and the rest below, one below and the rest above, half-half, all
  above, and the X-shape ``(Delta..Delta, 0..0)`` against ``(0..0, Delta..Delta)``.

The core explores every pair and confirms the best (Bonferroni over the tests confirmed), so
proposing several costs exploration runs only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from audit.errors import PrivauditError

NORMS = ("l1", "linf", "replace-one", "add-remove", "statdp")

# the added record of "add-remove" pairs: magnitudes from zero to far beyond any clamping bound
ADD_REMOVE_VALUES = (0.0, 1.0, -1.0, 10.0, -10.0, 1e3, -1e3, 1e6, -1e6)


def mechanism_pairs(k: int, *, norm: str = "linf", sensitivity: float = 1.0,
                    base: Any = None, values: Any = None, random: int = 2,
                    rng: np.random.Generator | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Candidate neighbouring inputs of length `k`.

    Parameters
    ----------
    k : int
        Input length (number of scores / answers / records).
    norm : {"l1", "linf", "replace-one", "add-remove", "statdp"}
    sensitivity : float
        Delta: the largest move the neighbour relation allows.
    base : array (k,), optional
        The input the moves start from (default zeros; "replace-one": ``values[0]`` everywhere;
        "add-remove": the larger base, of `k` - 1 records).
    values : array, optional
        "replace-one": the values a record may take (default ``(0, 1)``); "add-remove": the
        values of the added record (default `ADD_REMOVE_VALUES`).
    random : int
        Extra random sign patterns ("linf") drawn with `rng` (default generator seeded 0).

    Returns
    -------
    list of (a, b) float64 arrays.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise PrivauditError(f"k must be a positive integer, got {k!r}")
    if norm not in NORMS:
        raise PrivauditError(f"unknown norm {norm!r}; valid: {', '.join(NORMS)}")
    d = float(sensitivity)
    if not np.isfinite(d) or d <= 0:
        raise PrivauditError(f"sensitivity must be finite and > 0, got {sensitivity!r}")
    rng = rng if rng is not None else np.random.default_rng(0)
    out: list[tuple[np.ndarray, np.ndarray]] = []
    if norm == "replace-one":
        vals = np.asarray((0.0, 1.0) if values is None else values, dtype=np.float64).reshape(-1)
        if vals.size < 2:
            raise PrivauditError("replace-one pairs need at least two distinct values")
        a0 = np.full(k, vals[0]) if base is None else np.asarray(base, dtype=np.float64).reshape(-1)
        if a0.size != k:
            raise PrivauditError(f"base has {a0.size} entries, expected {k}")
        for i in sorted({0, k // 2, k - 1}):
            for v in vals:
                if v != a0[i]:
                    b = a0.copy()
                    b[i] = v
                    out.append((a0.copy(), b))
        return out
    if norm == "add-remove":
        return add_remove_pairs(k, base, values)
    if norm == "statdp":
        return statdp_pairs(k, d, base)
    a0 = np.zeros(k) if base is None else np.asarray(base, dtype=np.float64).reshape(-1)
    if a0.size != k:
        raise PrivauditError(f"base has {a0.size} entries, expected {k}")
    e0 = np.eye(k)[0]
    if norm == "l1":
        out.append((a0, a0 + d * e0))
        out.append((a0, a0 - d * e0))
        if k > 1:
            out.append((a0, a0 + d * np.ones(k) / k))
        return out
    ones = np.ones(k)
    out.append((a0, a0 + d * e0))                               # one score up
    if k > 1:
        out.append((a0 + d * (ones - e0), a0 + d * e0))         # (0,1,..,1) vs (1,0,..,0)
        out.append((a0, a0 + d * (ones - e0)))                  # all others up
    for _ in range(random):
        s = rng.choice([-1.0, 1.0], size=k)
        out.append((a0, a0 + d * s))
    return out


def add_remove_pairs(k: int, base: Any = None,
                     values: Any = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """(base, base + one record) for the empty base and a base of `k` - 1 records, the added
    record taking each of `values` (see the module docstring)."""
    vals = np.asarray(ADD_REMOVE_VALUES if values is None else values, dtype=np.float64).reshape(-1)
    if vals.size < 1 or not np.isfinite(vals).all():
        raise PrivauditError("add-remove pairs need at least one finite record value")
    full = np.full(k - 1, vals[0]) if base is None else np.asarray(base, dtype=np.float64).reshape(-1)
    if full.size != k - 1:
        raise PrivauditError(f"base has {full.size} records, expected k - 1 = {k - 1}")
    bases = [np.zeros(0)] + ([full] if k > 1 else [])
    return [(x.copy(), np.r_[x, v]) for x in bases for v in vals]


def statdp_pairs(k: int, sensitivity: float = 1.0,
                 base: Any = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """StatDP's seven patterns for `k` answers of sensitivity Delta (see the module docstring)."""
    d = float(sensitivity)
    a0 = np.full(k, d) if base is None else np.asarray(base, dtype=np.float64).reshape(-1)
    if a0.size != k:
        raise PrivauditError(f"base has {a0.size} entries, expected {k}")
    h = k // 2
    up, down = a0 + d, a0 - d
    pats = [np.r_[up[:1], a0[1:]], np.r_[down[:1], a0[1:]], np.r_[up[:1], down[1:]],
            np.r_[down[:1], up[1:]], np.r_[down[:h], up[h:]], up]
    out = [(a0.copy(), b) for b in pats if k > 1 or b.size == 1]
    if k > 1:
        x = np.r_[a0[:h], down[h:]]
        out.append((x, np.r_[down[:h], a0[h:]]))
    return out


__all__ = ["mechanism_pairs", "statdp_pairs", "add_remove_pairs", "NORMS", "ADD_REMOVE_VALUES"]
