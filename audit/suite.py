"""The result of a suite of audits (the CI gate, ``privaudit ci``), and its JSON round-trip.

A suite runs several audits, each with an expectation ("pass" or "violation"); `SuiteEntry.ok`
says whether the expectation held and `SuiteResult.ok` whether all of them did. Like
`AuditResult`, a suite serialises to plain JSON types only (never pickle), tagged with
``"format": "privaudit-suite"`` and a ``schema_version`` (documented in
``reports/schema/suite-v1.json``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import PrivauditError
from .result import AuditResult, _num, _unnum

SUITE_SCHEMA_VERSION = 1
SUITE_FORMAT = "privaudit-suite"
EXPECTATIONS = ("pass", "violation")


@dataclass
class SuiteEntry:
    """One audit of a suite.

    Attributes
    ----------
    name : str
        The label shown in reports and JUnit (the config's ``name``, else the algorithm).
    algorithm : str
        Registered name or ``module:attr`` of the audited black box.
    expect : {"pass", "violation"}
        What the config expects the audit to find.
    ok : bool
        Whether the expectation held (a violation found iff one was expected, and no error).
    result : AuditResult or None
        The audit's result; None when the audit could not run (see `error`).
    error : str or None
        One readable line saying why the audit could not run.
    baseline_epsilon : float or None
        epsilon_lower of the same entry in a stored baseline run, when compared against one.
    regression : bool
        True when this run is worse than the baseline (set by the CI gate).
    """

    name: str
    algorithm: str
    expect: str
    ok: bool
    result: AuditResult | None = None
    error: str | None = None
    baseline_epsilon: float | None = None
    regression: bool = False

    def __post_init__(self) -> None:
        if self.expect not in EXPECTATIONS:
            raise PrivauditError(f"suite entry {self.name!r}: expect must be one of "
                                 f"{', '.join(EXPECTATIONS)}, got {self.expect!r}")

    @property
    def status(self) -> str:
        """"ERROR", "VIOLATION" or "PASS" (what the audit found, not whether that was expected)."""
        if self.result is None:
            return "ERROR"
        return self.result.verdict

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "algorithm": self.algorithm,
            "expect": self.expect,
            "ok": bool(self.ok),
            "status": self.status,
            "result": None if self.result is None else self.result.to_dict(),
            "error": self.error,
            "baseline_epsilon": None if self.baseline_epsilon is None
            else _num(float(self.baseline_epsilon)),
            "regression": bool(self.regression),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "SuiteEntry":
        if not isinstance(d, dict):
            raise PrivauditError("a suite entry must be a JSON object")
        try:
            base = d.get("baseline_epsilon")
            return cls(
                name=str(d["name"]),
                algorithm=str(d["algorithm"]),
                expect=d["expect"],
                ok=bool(d["ok"]),
                result=None if d.get("result") is None else AuditResult.from_dict(d["result"]),
                error=d.get("error"),
                baseline_epsilon=None if base is None else float(_unnum(base)),
                regression=bool(d.get("regression", False)),
            )
        except KeyError as exc:
            raise PrivauditError(f"suite entry is missing the field {exc.args[0]!r}") from None


@dataclass
class SuiteResult:
    """Every audit of a suite, with the settings and provenance shared by all of them.

    Attributes
    ----------
    name : str
        The suite's label (e.g. the config file's name).
    confidence : float
        Suite-wide confidence: the whole suite's false-alarm rate is at most ``1 - confidence``.
    correction : str
        How the error budget was split over entries (e.g. ``"bonferroni over 4 audits"``).
    entries : list of SuiteEntry
    seed : int
    timings, versions, runner : dict
        Wall-clock seconds, software versions (see `audit.provenance.versions`), runner description.
    """

    name: str
    confidence: float
    correction: str
    entries: list = field(default_factory=list)        # list[SuiteEntry]
    seed: int = 0
    timings: dict = field(default_factory=dict)
    versions: dict = field(default_factory=dict)
    runner: dict = field(default_factory=dict)
    schema_version: int = SUITE_SCHEMA_VERSION

    @property
    def ok(self) -> bool:
        """True iff every entry's expectation held (an empty suite is ok)."""
        return all(e.ok for e in self.entries)

    def summary(self) -> str:
        failed = [e.name for e in self.entries if not e.ok]
        head = f"{self.name}: {'OK' if self.ok else 'FAILED'} — {len(self.entries)} audits"
        return head + (f", failed: {', '.join(failed)}" if failed else "")

    def to_dict(self) -> dict:
        return {
            "format": SUITE_FORMAT,
            "schema_version": self.schema_version,
            "name": self.name,
            "ok": self.ok,
            "confidence": self.confidence,
            "correction": self.correction,
            "seed": self.seed,
            "entries": [e.to_dict() for e in self.entries],
            "timings": self.timings,
            "versions": self.versions,
            "runner": self.runner,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "SuiteResult":
        if not isinstance(d, dict):
            raise PrivauditError("a suite result must be a JSON object")
        if d.get("format") != SUITE_FORMAT:
            raise PrivauditError(f"not a privaudit suite result (format {d.get('format')!r}, "
                                 f"expected {SUITE_FORMAT!r})")
        version = d.get("schema_version")
        if version != SUITE_SCHEMA_VERSION:
            raise PrivauditError(f"suite result has schema_version {version!r}; this privaudit "
                                 f"reads version {SUITE_SCHEMA_VERSION}")
        if not isinstance(d.get("entries", []), list):
            raise PrivauditError("suite result field 'entries' must be a list")
        try:
            return cls(
                name=str(d["name"]),
                confidence=float(d["confidence"]),
                correction=str(d["correction"]),
                entries=[SuiteEntry.from_dict(e) for e in d.get("entries", [])],
                seed=int(d.get("seed", 0)),
                timings=dict(d.get("timings", {})),
                versions=dict(d.get("versions", {})),
                runner=dict(d.get("runner", {})),
            )
        except KeyError as exc:
            raise PrivauditError(f"suite result is missing the field {exc.args[0]!r}") from None


__all__ = ["SuiteEntry", "SuiteResult", "SUITE_SCHEMA_VERSION", "SUITE_FORMAT"]
