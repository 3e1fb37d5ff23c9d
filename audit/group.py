"""Group privacy: what a claim promises for datasets k records apart, and how far apart two are.

If A is (epsilon, delta)-DP for one neighbour step, then for datasets S, S' joined by a chain of
k steps (S = S_0, S_1, ..., S_k = S') and every event E, applying the one-step inequality along
the chain gives

    P[A(S) in E] <= e^{k eps} P[A(S') in E] + delta_k,
    delta_k = delta * (1 + e^eps + ... + e^{(k-1) eps}) = delta * (e^{k eps} - 1) / (e^eps - 1)

(``k delta`` when eps = 0). This is the standard group-privacy bound (Dwork & Roth 2014,
Theorem 2.2 for delta = 0; Vadhan 2017, "The Complexity of Differential Privacy", Lemma 2.2 for
delta > 0, which states the looser ``k e^{k eps} delta``); note ``delta_k <= k e^{(k-1) eps} delta``
since every term is at most ``e^{(k-1) eps}``. Chaudhuri & Hsu (COLT 2011) Lemma 22 is the pure
case (``delta = 0``) under their substitution and label relations.

Per individual: a k-group bound ``eps_k`` found at distance k means that no single record's
loss can be below ``eps_k / k`` when delta = 0 (and, with delta > 0, that no per-record epsilon
at or below the claimed one is compatible with the counts unless it is at least ``eps_k / k``).

Distances (the least number of one-step moves of the relation):

* ``replace-one``: rows that differ between equal-size datasets (aligned positions: A may depend
  on the order, so a permutation is not free);
* ``label``: labels that differ, features identical and aligned;
* ``add-remove``: size of the multiset symmetric difference (records compared as wholes).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace

import numpy as np

from .errors import PrivauditError
from .types import Claim, Dataset

MAX_GROUP = 10_000


def check_group(k: object) -> int:
    """`k` as a group distance (an integer >= 1), or a one-line `PrivauditError`."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= int(k) <= MAX_GROUP:
        raise PrivauditError(f"group distance must be an integer in [1, {MAX_GROUP}], got {k!r}")
    return int(k)


def group_delta(epsilon: float, delta: float, k: int) -> float:
    """``delta_k = delta (e^{k eps} - 1) / (e^eps - 1)`` (``k delta`` at eps = 0), capped at 1."""
    k = check_group(k)
    if delta == 0.0:
        return 0.0
    if epsilon == 0.0:
        return min(1.0, k * delta)
    # expm1 keeps the ratio accurate for small eps; overflow means the bound is vacuous anyway
    try:
        return min(1.0, delta * math.expm1(k * epsilon) / math.expm1(epsilon))
    except OverflowError:
        return 1.0


def group_claim(claim: Claim, k: int) -> Claim:
    """What `claim` promises for datasets at distance `k`: ``(k eps, delta_k)``, same relation
    and scope. ``delta_k`` is capped just below 1 (a `Claim` needs delta < 1)."""
    k = check_group(k)
    if k == 1:
        return claim
    d = min(group_delta(claim.epsilon, claim.delta, k), math.nextafter(1.0, 0.0))
    return replace(claim, epsilon=k * claim.epsilon, delta=d)


def _rows(d: Dataset) -> list[tuple]:
    return [tuple(x.tolist()) + (int(y),) for x, y in zip(d.X, d.y)]


def distance(a: Dataset, b: Dataset, relation: str) -> int:
    """The least number of one-step moves of `relation` turning `a` into `b`.

    Raises
    ------
    PrivauditError
        When no chain exists (different sizes under replace-one/label, different features under
        label, different dimensions) or the relation is unknown.
    """
    if a.d != b.d:
        raise PrivauditError(f"datasets have {a.d} and {b.d} features")
    if relation in ("replace-one", "label"):
        if a.n != b.n:
            raise PrivauditError(f"{relation} moves keep the size; the datasets have {a.n} and {b.n} "
                                 f"records")
        if relation == "label":
            if not np.array_equal(a.X, b.X):
                raise PrivauditError("label moves keep the features: the datasets' features differ")
            return int(np.count_nonzero(a.y != b.y))
        return int(np.count_nonzero(np.any(a.X != b.X, axis=1) | (a.y != b.y)))
    if relation == "add-remove":
        ca, cb = Counter(_rows(a)), Counter(_rows(b))
        return int(sum((ca - cb).values()) + sum((cb - ca).values()))
    raise PrivauditError(f"unknown neighbour relation {relation!r}")


def check_within(a: Dataset, b: Dataset, relation: str, k: int, where: str = "pair") -> int:
    """The distance of `a` and `b`; a `PrivauditError` when it exceeds the declared `k` (an audit
    of a farther pair would test a promise nobody made)."""
    try:
        dist = distance(a, b, relation)
    except PrivauditError as exc:
        raise PrivauditError(f"{where}: {exc}") from None
    if dist > k:
        raise PrivauditError(f"{where}: the datasets are {dist} {relation} moves apart, more than "
                             f"the declared group distance {k}")
    return dist


def copies(a: Dataset, b: Dataset, relation: str, k: int) -> tuple[Dataset, Dataset]:
    """A distance-1 pair grown to distance `k` by repeating its differing record (the k-copies
    design of Chaudhuri & Hsu spec 7.4): both sides get the same k - 1 extra copies of their own
    version of the record, appended at the end, so the pair is exactly k moves apart."""
    k = check_group(k)
    if k == 1:
        return a, b
    if relation in ("replace-one", "label"):
        diff = np.flatnonzero(np.any(a.X != b.X, axis=1) | (a.y != b.y)) if a.n == b.n else []
        if len(diff) != 1:
            raise PrivauditError("only a pair differing in exactly one record can be grown to a group")
        i = int(diff[0])
        for _ in range(k - 1):
            a, b = a.add(a.X[i], a.y[i]), b.add(b.X[i], b.y[i])
        return a, b
    if relation == "add-remove":
        big, small = (a, b) if a.n > b.n else (b, a)
        extra = Counter(_rows(big)) - Counter(_rows(small))
        if a.n == b.n or sum(extra.values()) != 1:
            raise PrivauditError("only a pair differing by one added record can be grown to a group")
        rec = next(iter(extra))
        x, y = np.asarray(rec[:-1], dtype=np.float64), rec[-1]
        for _ in range(k - 1):
            big = big.add(x, y)
        return (big, small) if a.n > b.n else (small, big)
    raise PrivauditError(f"unknown neighbour relation {relation!r}")


def per_individual(epsilon_k: float, k: int) -> float:
    """The per-record epsilon lower bound implied by a group bound at distance k (``eps_k / k``)."""
    return float(epsilon_k) / check_group(k) if math.isfinite(epsilon_k) else float(epsilon_k)


__all__ = ["check_group", "group_delta", "group_claim", "distance", "check_within", "copies",
           "per_individual", "MAX_GROUP"]
