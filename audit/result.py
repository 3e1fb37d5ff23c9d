"""The result of an audit, and its JSON round-trip.

`AuditResult.to_dict()` gives plain JSON types only (never pickle); `AuditResult.from_dict()` reads
it back, checking `schema_version`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .errors import PrivauditError
from .jsonnum import decode_number, encode
from .types import Claim

SCHEMA_VERSION = 1


# one JSON encoding of numbers for results, suites and search histories (audit.jsonnum)
_num = encode
_unnum = decode_number


def _unnum_deep(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _unnum_deep(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_unnum_deep(v) for v in x]
    return _unnum(x)


@dataclass
class BoundTest:
    """One confirmed bound: event E, ordered pair (a, b), fresh counts on both sides.

    ``direction == "a>b"`` tests ``P[A(a) in E] <= e^eps P[A(b) in E] + delta`` with
    ``p = P[A(a) in E]``; ``"b>a"`` swaps the roles.
    """

    pair_index: int
    direction: str
    event: dict
    event_text: str
    k_p: int
    n_p: int
    k_q: int
    n_q: int
    p_lo: float
    q_hi: float
    epsilon_lower: float
    delta_lower: float
    expected_epsilon: float = 0.0
    query_indices: list | None = None

    def to_dict(self) -> dict:
        return {k: _num(v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: dict) -> "BoundTest":
        return cls(**{k: _unnum(d[k]) for k in (f.name for f in fields(cls)) if k in d})


@dataclass
class Witness:
    """What shows the leak: the pair, the query point(s), the event and the direction."""

    pair_index: int
    a: Any                      # input or dataset (as JSON: list, or {"X":..., "y":...})
    b: Any
    direction: str
    event: dict
    event_text: str
    queries: list | None = None         # the query points the event looks at (learners)
    differing: list | None = None       # indices of records that differ between a and b
    p_hat: float = 0.0                  # confirmed frequencies, p side and q side
    q_hat: float = 0.0
    found_by: str = "given pairs"

    def to_dict(self) -> dict:
        return {k: _num(v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: dict) -> "Witness":
        return cls(**{k: _unnum(d[k]) for k in (f.name for f in fields(cls)) if k in d})


@dataclass
class AuditResult:
    """Everything an audit found, and everything needed to check or reproduce it.

    Attributes
    ----------
    epsilon_lower : float
        Lower bound on the realized epsilon at the claimed delta, valid with probability
        >= `confidence` (0 when nothing was shown). Always finite: even a support mismatch
        certifies no more than `max_certifiable_epsilon` with a finite budget.
    delta_lower : float
        Lower bound on delta at the claimed epsilon.
    violation : bool
        True iff some confirmed test has ``p_lo > e^eps q_hi + delta`` for the claim.
    max_certifiable_epsilon : float
        The largest epsilon the confirmation budget could certify at this confidence and
        correction (a "pass" says no more than that bugs above it would have been seen).
    """

    algorithm: str
    kind: str
    claim: Claim
    epsilon_lower: float
    delta_lower: float
    violation: bool
    confidence: float
    correction: str
    tests: int
    alpha_per_bound: float
    max_certifiable_epsilon: float
    witness: Witness | None
    confirmed: list = field(default_factory=list)       # list[BoundTest]
    explore_runs: int = 0
    confirm_runs: int = 0
    seed: int = 0
    params: dict = field(default_factory=dict)
    certified: Claim | None = None
    against: str = "claim"
    search: dict = field(default_factory=dict)
    runner: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    versions: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    group: int = 1                  # group distance k of the pairs (audit.group); 1 = neighbours;
                                    # with k > 1 `claim` is the group claim (k eps, delta_k) tested
    sequential: dict | None = None      # audit.sequential's record when confirmed sequentially
    schema_version: int = SCHEMA_VERSION

    @property
    def verdict(self) -> str:
        return "VIOLATION" if self.violation else "PASS"

    @property
    def display_name(self) -> str:
        """The algorithm's name with its variant when that is not in the name already
        (``df-cor1 [bv-cor-1]``): what headlines, titles and reports show."""
        variant = self.params.get("variant") if isinstance(self.params, dict) else None
        if isinstance(variant, str) and variant not in ("", "correct") and variant not in self.algorithm:
            return f"{self.algorithm} [{variant}]"
        return self.algorithm

    def summary(self) -> str:
        c = self.claim
        line = (f"{self.display_name}: {self.verdict} — epsilon_lower = {self.epsilon_lower:.4f} "
                f"(claim {c.describe()}), delta_lower = {self.delta_lower:.3g} at epsilon = {c.epsilon:g}, "
                f"confidence {self.confidence:g}; budget can certify up to {self.max_certifiable_epsilon:.3f}")
        if self.group > 1:
            line += (f"\n  group distance k = {self.group}: the claim shown is the group claim (k eps, "
                     f"delta_k); per individual epsilon >= {self.epsilon_lower / self.group:.4f}")
        pk = self.search.get("packing") if isinstance(self.search, dict) else None
        if isinstance(pk, dict):
            line += (f"\n  packing family {pk.get('name')}: {pk.get('datasets')} datasets up to "
                     f"{pk.get('k_max')} {pk.get('relation')} moves apart; through dataset "
                     f"{pk.get('pivot')}: sum of other p_j >= {pk.get('sum_other_p_lo', 0):.4g}, "
                     f"1 - p_i <= {pk.get('one_minus_p_pivot_hi', 1):.3g}")
        if self.sequential is not None:
            how = ("anytime-valid" if self.sequential.get("anytime_valid", True) else
                   "final fixed-n analysis at the planned budget")
            line += (f"\n  sequential ({how}): stopped at {self.sequential['runs_per_side']:,} of "
                     f"{self.confirm_runs:,} runs per side ({self.sequential['stopped']})")
        if self.witness is not None:
            line += f"\n  witness: pair {self.witness.pair_index}, {self.witness.direction}, {self.witness.event_text}"
        return line

    def to_dict(self) -> dict:
        return {
            "schema_version": self.schema_version,
            "algorithm": self.algorithm,
            "kind": self.kind,
            "claim": self.claim.to_dict(),
            "certified": None if self.certified is None else self.certified.to_dict(),
            "against": self.against,
            "verdict": self.verdict,
            "violation": bool(self.violation),
            "epsilon_lower": _num(float(self.epsilon_lower)),
            "delta_lower": _num(float(self.delta_lower)),
            "confidence": self.confidence,
            "correction": self.correction,
            "tests": self.tests,
            "alpha_per_bound": self.alpha_per_bound,
            "max_certifiable_epsilon": _num(float(self.max_certifiable_epsilon)),
            "witness": None if self.witness is None else self.witness.to_dict(),
            "confirmed": [t.to_dict() for t in self.confirmed],
            "explore_runs": self.explore_runs,
            "confirm_runs": self.confirm_runs,
            "seed": self.seed,
            "params": self.params,
            "search": self.search,
            "runner": self.runner,
            "timings": self.timings,
            "versions": self.versions,
            "notes": list(self.notes),
            "group": int(self.group),
            **({} if self.sequential is None else {"sequential": _num(self.sequential)}),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "AuditResult":
        if not isinstance(d, dict):
            raise PrivauditError("an audit result must be a JSON object")
        version = d.get("schema_version")
        if version != SCHEMA_VERSION:
            raise PrivauditError(f"audit result has schema_version {version!r}; this privaudit reads "
                                 f"version {SCHEMA_VERSION}")
        try:
            return cls(
                algorithm=d["algorithm"],
                kind=d["kind"],
                claim=Claim.from_dict(d["claim"]),
                epsilon_lower=float(_unnum(d["epsilon_lower"])),
                delta_lower=float(_unnum(d["delta_lower"])),
                violation=bool(d["violation"]),
                confidence=float(d["confidence"]),
                correction=d["correction"],
                tests=int(d["tests"]),
                alpha_per_bound=float(d["alpha_per_bound"]),
                max_certifiable_epsilon=float(_unnum(d["max_certifiable_epsilon"])),
                witness=None if d.get("witness") is None else Witness.from_dict(d["witness"]),
                confirmed=[BoundTest.from_dict(t) for t in d.get("confirmed", [])],
                explore_runs=int(d.get("explore_runs", 0)),
                confirm_runs=int(d.get("confirm_runs", 0)),
                seed=int(d.get("seed", 0)),
                params=dict(d.get("params", {})),
                certified=None if d.get("certified") is None else Claim.from_dict(d["certified"]),
                against=d.get("against", "claim"),
                search=dict(d.get("search", {})),
                runner=dict(d.get("runner", {})),
                timings=dict(d.get("timings", {})),
                versions=dict(d.get("versions", {})),
                notes=list(d.get("notes", [])),
                group=int(d.get("group", 1)),
                sequential=None if d.get("sequential") is None else _unnum_deep(d["sequential"]),
            )
        except KeyError as exc:
            raise PrivauditError(f"audit result is missing the field {exc.args[0]!r}") from None
