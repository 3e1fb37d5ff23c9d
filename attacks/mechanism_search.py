"""Inputs for a vector-input mechanism given no pairs: standard patterns, then local search.

Starts from the patterns of the literature for the declared neighbour relation
(`attacks.mechanisms.mechanism_pairs`: StatDP's one above / one below / half-half / all above /
X-shape for "statdp", the l1 and l-infinity worst cases otherwise), scores each pair on fresh
*search* samples by the bound its best event is expected to certify (the core's own `explore`),
keeps the best few (successive halving: the budget goes to the finalists), and improves them by
local moves — one coordinate of the second input set to another value the relation allows; under
add-remove, the added record's value scaled, negated or shifted, or the base's records moved — as
long as the expected bound grows.

Soundness: the search draws its own samples (spawn keys ``(SEARCH, 1000 + round, ...)``); the
returned pairs are explored again and confirmed on fresh samples by `audit.audit`, with the
Bonferroni split over the tests confirmed. Searching harder never makes a false alarm likelier.

References: D. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer, "Detecting violations of differential
privacy", ACM CCS 2018, Section 5 (input patterns); K. Jamieson and A. Talwalkar, AISTATS 2016
(successive halving).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from audit.auditor import SEARCH, Pair, explore
from audit.errors import PrivauditError
from audit.neighbours import InputDistance, input_distance, parse_input_distance
from audit.runners.local import LocalRunner
from audit.types import Claim

from .mechanisms import mechanism_pairs

ROUND_OFFSET = 1000  # spawn keys (SEARCH, 1000 + round): disjoint from the learner search's rounds


@dataclass
class MechanismSearch:
    """The pairs found, best first, and what the search saw."""

    pairs: list[tuple[np.ndarray, np.ndarray]]
    history: list[dict] = field(default_factory=list)


def _score(mech: Any, pairs: list[tuple[np.ndarray, np.ndarray]], *, claim: Claim, runs: int,
           confirm_runs: int, confidence: float, seed: int, runner: Any, round_index: int) -> np.ndarray:
    """Best expected epsilon per pair on fresh search samples."""
    plist = [Pair(np.asarray(a, float), np.asarray(b, float)) for a, b in pairs]
    cands = explore(mech, plist, claim=claim, explore_runs=runs, confirm_runs=confirm_runs,
                    confidence=confidence, tests=1, seed=seed, runner=runner,
                    key_prefix=(SEARCH, ROUND_OFFSET + round_index))
    best = np.zeros(len(pairs))
    for c in cands:
        best[c.pair_index] = max(best[c.pair_index], c.expected_epsilon)
    return best


def _moves(a: np.ndarray, b: np.ndarray, norm: str, d: float, rng: np.random.Generator,
           count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Neighbours of the pair (a, b) under the relation: one coordinate of b moved."""
    out = []
    for i in rng.permutation(a.size):
        values = (a[i] - d, a[i], a[i] + d) if norm in ("statdp", "linf") else (a[i] - d, a[i] + d)
        for v in values:
            if v == b[i]:
                continue
            nb = b.copy()
            nb[i] = v
            if norm == "l1" and np.abs(nb - a).sum() > d + 1e-12:
                continue
            if not np.array_equal(nb, a):
                out.append((a.copy(), nb))
        if len(out) >= count:
            break
    return out[:count]


def _moves_add_remove(a: np.ndarray, b: np.ndarray, rng: np.random.Generator,
                      count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Neighbours of an add-remove pair (a, a + record v): v scaled, negated or shifted by one,
    and the base's records all set to v or to -v (same base size)."""
    small, big = (a, b) if a.size < b.size else (b, a)
    v = float(big[-1])
    values = {10.0 * v, v / 10.0, -v, v + 1.0, v - 1.0} - {v}
    out = [(small.copy(), np.r_[small, w]) for w in sorted(values)]
    if small.size:
        out += [(np.full(small.size, w), np.r_[np.full(small.size, w), v]) for w in (v, -v)
                if not np.array_equal(np.full(small.size, w), small)]
    order = rng.permutation(len(out))
    return [out[i] for i in order[:count]]


# the literature's patterns for each declared input relation: StatDP's seven are l-infinity
# neighbours; the l1 worst cases are also l2 neighbours; "replace one record" is hamming; "add or
# remove one record" starts from the empty dataset and a full one, the added record on a ladder
# of magnitudes
PATTERNS = {"linf": "statdp", "l1": "l1", "l2": "l1", "hamming": "replace-one",
            "add-remove": "add-remove"}


def _within(pairs: list, relation: InputDistance | None) -> list:
    if relation is None:
        return pairs
    tol = relation.bound * (1 + 1e-9) + 1e-12
    return [(a, b) for a, b in pairs if input_distance(a, b, relation.norm) <= tol]


def search_mechanism_inputs(mech: Any, k: int, *, claim: Claim | None = None,
                            norm: str | None = None, sensitivity: float | None = None,
                            relation: Any = None, seed: int = 0, runner: Any = None,
                            search_runs: int = 50_000, confirm_runs: int = 1_000_000,
                            confidence: float = 0.95, keep: int = 3, rounds: int = 2,
                            moves: int = 8) -> MechanismSearch:
    """Pairs of length-`k` inputs where `mech` leaks most, for `audit.audit(mech, pairs)`.

    Parameters
    ----------
    mech : Mechanism
    k : int
        Input length.
    relation : InputDistance or "NORM:BOUND", optional
        The mechanism's input neighbour relation (`audit.neighbours.InputDistance`): it picks the
        starting patterns (`PATTERNS`) and the move size, and every pair tried or returned lies
        within it, so `audit.audit` never refuses what the search proposes.
    norm, sensitivity
        Without `relation`: the pattern family (`attacks.mechanisms.NORMS`, default "statdp")
        and its Delta (default 1).
    search_runs : int
        Runs per input per scored pair (finalists are scored again, at twice that, each round).
    keep, rounds, moves
        Finalists kept, local-search rounds, moves tried per finalist per round.
    """
    if claim is None:
        claim = getattr(mech, "claim", None)
    if not isinstance(claim, Claim):
        raise PrivauditError("search_mechanism_inputs needs a claim (mech.claim or claim=)")
    relation = parse_input_distance(relation)
    if relation is not None:
        if norm is not None or sensitivity is not None:
            raise PrivauditError("give either relation= or norm=/sensitivity=, not both")
        if relation.bound <= 0:
            raise PrivauditError(f"no pairs lie within {relation.describe()}")
        norm, sensitivity = PATTERNS[relation.norm], relation.bound
        if relation.norm in ("hamming", "add-remove") and relation.bound < 1:
            raise PrivauditError(f"no pairs lie within {relation.describe()}")
        if relation.norm in ("hamming", "add-remove"):
            sensitivity = 1.0
    norm = "statdp" if norm is None else norm
    sensitivity = 1.0 if sensitivity is None else sensitivity
    runner = runner if runner is not None else LocalRunner()
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(SEARCH, ROUND_OFFSET)))
    pool = _within(mechanism_pairs(k, norm=norm, sensitivity=sensitivity), relation)
    if not pool:
        raise PrivauditError(f"none of the {norm} patterns of length {k} lies within "
                             f"{relation.describe() if relation else norm}")
    kw = dict(claim=claim, confirm_runs=confirm_runs, confidence=confidence, seed=seed, runner=runner)
    scores = _score(mech, pool, runs=search_runs, round_index=0, **kw)
    history = [{"round": 0, "pair": i, "expected_epsilon": float(s)} for i, s in enumerate(scores)]
    order = np.argsort(-scores, kind="stable")[:keep]
    best = [(pool[i], float(scores[i])) for i in order]
    for r in range(1, rounds + 1):
        proposals = _within([m for (a, b), _ in best
                             for m in (_moves_add_remove(a, b, rng, moves) if norm == "add-remove"
                                       else _moves(a, b, norm, float(sensitivity), rng, moves))],
                            relation)
        if not proposals:
            break
        # finalists are re-scored on fresh samples beside the proposals (no winner's curse)
        trial = [p for p, _ in best] + proposals
        s = _score(mech, trial, runs=2 * search_runs, round_index=r, **kw)
        history += [{"round": r, "expected_epsilon": float(v)} for v in s]
        order = np.argsort(-s, kind="stable")[:keep]
        best = [(trial[i], float(s[i])) for i in order]
    return MechanismSearch([p for p, _ in best], history)


__all__ = ["search_mechanism_inputs", "MechanismSearch", "PATTERNS"]
