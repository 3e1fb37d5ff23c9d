"""Pairs for a mechanism audited without pairs: when to search, and the search itself.

A vector-input mechanism with no pairs (none given, none of its own) is audited on pairs found by
`attacks.mechanism_search` when it declares its input neighbour relation (``input_distance``
attribute, ``--input-distance``, CI ``input_distance``) and its input length (``input_length``
attribute, ``--input-length``, CI ``input_length``). The command line and the CI gate both decide
it here, so the two never disagree.
"""

from __future__ import annotations

import dataclasses

from attacks.mechanism_search import search_mechanism_inputs
from audit.errors import PrivauditError
from audit.interfaces import declared_input_distance, declared_input_length, own_pairs
from audit.neighbours import InputDistance, parse_input_distance
from audit.request import AuditRequest

MIN_SEARCH_RUNS = 10_000   # runs per input for each scored pattern, at the least


def plan(req: AuditRequest, length: int | None = None) -> tuple[InputDistance, int] | None:
    """(relation, k) when `req` is a mechanism without pairs that privaudit must search for.

    Raises `PrivauditError` naming what is missing (relation, length) when there are no pairs
    and the search cannot run, and when `length` is given where no search happens.
    """
    if req.is_learner or req.packing is not None:
        if length is not None:
            raise PrivauditError("input length applies to mechanisms without pairs")
        return None
    if req.pairs is not None or own_pairs(req.target):
        if length is not None:
            raise PrivauditError("input length applies only when no pairs are given (the search "
                                 "finds them); drop it or the pairs")
        return None
    if length is not None and (isinstance(length, bool) or not isinstance(length, int)
                               or length < 1):
        raise PrivauditError(f"input length must be an integer >= 1, got {length!r}")
    relation = parse_input_distance(req.input_distance) or declared_input_distance(req.target)
    k = length if length is not None else declared_input_length(req.target)
    if relation is None or k is None:
        missing = [w for w, v in (("an input neighbour relation (--input-distance NORM:BOUND, "
                                   "input_distance = \"NORM:BOUND\" in CI, or an input_distance "
                                   "attribute)", relation),
                                  ("the input length (--input-length K, input_length = K in CI, "
                                   "or an input_length attribute)", k)) if v is None]
        raise PrivauditError(f"no pairs: give pairs, or declare {' and '.join(missing)} so "
                             f"privaudit searches for them")
    return relation, int(k)


def search(req: AuditRequest, found_plan: tuple[InputDistance, int]) -> tuple[AuditRequest, str]:
    """Run the input search; `req` with the pairs found, and the note the result carries."""
    relation, k = found_plan
    b = req.budget
    found = search_mechanism_inputs(req.target, k, claim=req.resolved_claim(), relation=relation,
                                    seed=b.seed, search_runs=max(MIN_SEARCH_RUNS, b.explore_runs // 2),
                                    confirm_runs=b.confirm_runs, confidence=b.confidence)
    note = (f"pairs found by the input search: the literature's patterns of length {k} within "
            f"{relation.describe()}, then local moves ({len(found.history)} candidates scored on "
            f"separate search samples); the bound is confirmed on fresh runs")
    return dataclasses.replace(req, pairs=[(a, c) for a, c in found.pairs]), note


__all__ = ["plan", "search", "MIN_SEARCH_RUNS"]
