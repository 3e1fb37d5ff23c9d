"""One request model: what to audit, against which claim, on which inputs, with which budget.

Every front end — the Python API's `assert_private`, the command line, the CI config and the
pytest marker — describes an audit as an `AuditRequest` and runs it with `run_request`. The
claim rules (`resolve_claim`) and the learner-or-mechanism dispatch live here and nowhere else.
Turning *names* into objects (a registry name, ``module:attr``) is a front-end job
(`privaudit.resolve`): the core takes objects only.

    >>> req = AuditRequest(target=my_mechanism, claim={"epsilon": 0.5},
    ...                    budget=preset("quick"), pairs=[([0], [1])])
    >>> result = run_request(req)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .auditor import audit, audit_learner
from .budget import Budget
from .errors import PrivauditError
from .group import check_group
from .interfaces import certified_of, claim_of, is_learner, is_mechanism, name_of
from .neighbours import parse_input_distance
from .packing import PackingFamily, audit_packing, check_packable
from .result import AuditResult
from .types import CLAIM_KEYS, Claim

AGAINST = ("claim", "certified")


def resolve_claim(obj: Any, claim: Any = None, *, against: str = "claim") -> Claim:
    """The claim to test `obj` against.

    Parameters
    ----------
    obj : Learner or Mechanism
    claim : Claim, float, dict or None
        A `Claim` is used as it is. A number replaces epsilon, and a partial table such as
        ``{"epsilon": 1.0, "delta": 0.0}`` replaces those fields, of the object's base claim
        (neighbours and scope kept). None: the base claim itself.
    against : {"claim", "certified"}
        The base claim: the object's nominal ``claim``, or its ``certified`` claim (the tightest
        known bound for its parameters; the nominal one when it declares none).

    Raises
    ------
    PrivauditError
        An unknown `against`, claim key or type, or no claim at all (an object that declares none
        needs at least an epsilon).
    """
    if against not in AGAINST:
        raise PrivauditError(f"against must be 'claim' or 'certified', got {against!r}")
    if isinstance(claim, Claim):
        return claim
    base = (certified_of(obj) if against == "certified" else None) or claim_of(obj)
    if base is not None and not isinstance(base, Claim):
        raise PrivauditError(f"{name_of(obj)}.claim must be an audit.Claim, got {type(base).__name__}")
    if claim is None:
        if base is None:
            raise PrivauditError(f"{name_of(obj)!r} has no claim of its own: give one "
                                 f"(--epsilon, claim = {{ epsilon = ... }}, or claim=Claim(...))")
        return base
    if isinstance(claim, bool):
        raise PrivauditError(f"claim must be a Claim, a number or a table, got {claim!r}")
    if isinstance(claim, (int, float)):
        claim = {"epsilon": float(claim)}
    if not isinstance(claim, dict):
        raise PrivauditError(f"claim must be a Claim, a number or a table, got {type(claim).__name__}")
    unknown = sorted(set(claim) - set(CLAIM_KEYS))
    if unknown:
        raise PrivauditError(f"unknown claim keys {unknown}; valid: {', '.join(CLAIM_KEYS)}")
    if base is None:
        return Claim.from_dict(claim)
    return replace(base, **claim) if claim else base


@dataclass
class AuditRequest:
    """Everything one audit needs, with objects already built.

    `target` is the learner or mechanism; `claim` what `resolve_claim` accepts; `pairs`, `data`,
    `queries` the inputs (None: the object's own, or for a learner the search); `budget` the runs
    and confidence; `search_options` forces and tunes a learner's search; `label` and `params`
    are recorded in the result (the registered name or ``module:attr``, and what it was built with).
    `group` is the group distance k of the pairs (`audit.group`); `packing` a
    `audit.packing.PackingFamily`: a packing audit (spec 7.5) instead of pairs, with
    ``budget.confirm_runs`` runs per dataset.
    """

    target: Any
    claim: Any = None
    against: str = "claim"
    pairs: Any = None
    data: Any = None
    queries: Any = None
    budget: Budget = field(default_factory=Budget)
    search_options: dict | None = None
    label: str = ""
    params: dict = field(default_factory=dict)
    input_distance: Any = None   # a mechanism's input neighbour relation, e.g. "l1:1"
    group: int = 1
    packing: Any = None

    def __post_init__(self) -> None:
        self.group = check_group(self.group)
        if self.packing is not None:
            if not isinstance(self.packing, PackingFamily):
                raise PrivauditError(f"packing must be an audit.packing.PackingFamily, got "
                                     f"{type(self.packing).__name__}")
            given = [k for k in ("pairs", "data", "queries", "search_options")
                     if getattr(self, k) is not None]
            if given or self.group != 1:
                raise PrivauditError(f"a packing audit takes its datasets from the family; drop "
                                     f"{', '.join(given + (['group'] if self.group != 1 else []))}")
            check_packable(self.target, self.resolved_claim())
        if not (is_learner(self.target) or is_mechanism(self.target)):
            raise PrivauditError(f"{name_of(self.target)!r} is neither a Learner (predict) nor a "
                                 f"Mechanism (sample)")
        if not isinstance(self.budget, Budget):
            raise PrivauditError(f"budget must be an audit.Budget, got {type(self.budget).__name__}")
        if not is_learner(self.target):
            if self.data is not None or self.queries is not None:
                raise PrivauditError(f"data= and queries= apply to learners; {name_of(self.target)} is "
                                     f"a mechanism (give pairs=)")
            if self.search_options is not None:
                raise PrivauditError("search options apply to learners, not mechanisms")
            if self.against != "claim":
                raise PrivauditError("against='certified' applies to learners")
            if self.group != 1:
                raise PrivauditError("group distances apply to learners (datasets); for a mechanism "
                                     "give the group claim itself")
        elif self.input_distance is not None:
            raise PrivauditError("input distance applies to mechanisms; a learner's neighbours are "
                                 "its claim's dataset relation")
        self.input_distance = parse_input_distance(self.input_distance)

    @property
    def is_learner(self) -> bool:
        return is_learner(self.target)

    def resolved_claim(self) -> Claim:
        return resolve_claim(self.target, self.claim, against=self.against)


def run_request(request: AuditRequest, *, runner: Any = None, journal: Any = None,
                progress: Any = None, search: Any = None) -> AuditResult:
    """Run `request` (the one learner-or-mechanism dispatch of every front end)."""
    b = request.budget
    if request.packing is not None:
        result = audit_packing(request.target, request.packing, claim=request.resolved_claim(),
                               confidence=b.confidence, runs=b.confirm_runs, seed=b.seed,
                               runner=runner, journal=journal, progress=progress,
                               against=request.against, params=request.params or None)
        return result
    common = dict(claim=request.resolved_claim(), confidence=b.confidence,
                  explore_runs=b.explore_runs, confirm_runs=b.confirm_runs, seed=b.seed,
                  runner=runner, tests=b.tests, journal=journal, progress=progress,
                  sequential=b.sequential)
    if request.is_learner:
        result = audit_learner(request.target, data=request.data, pairs=request.pairs,
                               queries=request.queries, against=request.against,
                               search_options=request.search_options, search=search,
                               group=request.group, **common)
    else:
        result = audit(request.target, request.pairs, input_distance=request.input_distance,
                       **common)
    result.against = request.against
    if request.params:
        result.params = dict(request.params)
    return result


__all__ = ["AuditRequest", "run_request", "resolve_claim", "AGAINST"]
