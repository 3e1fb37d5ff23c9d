"""Privacy assertions for test suites: ``assert_private(obj, claim=..., pairs=...)``.

    >>> from audit.testing import assert_private
    >>> assert_private(algorithms.get("dp-rr", epsilon=1.0))           # passes
    >>> assert_private(algorithms.get("dp-rr", variant="bv-rr-eps"))   # AssertionError + witness

`assert_private` runs one audit (DESIGN.md section 3) and raises `AssertionError` when a
violation of the claim is confirmed; the message names epsilon_lower, the claim, the witness
(pair, event, direction, counts) and the call that reproduces it. Seeds are fixed (``seed=0``
unless given), so a test gives the same verdict on every run.

Error control across a test session: the pytest plugin (`privaudit.pytest_plugin`) gives tests marked
``@pytest.mark.privacy`` a share ``(1 - session confidence) / M`` of the session's false-alarm
budget, M being the number of assert_private calls all marked tests declare, and reports the
session's total in the terminal summary.
"""

from __future__ import annotations

import contextvars
from typing import Any

from .budget import Budget, preset
from .errors import PrivauditError
from .request import AuditRequest, run_request
from .result import AuditResult

# Smaller than the CLI's defaults: test suites should stay fast. Pure-DP bugs of loss
# ln(n / ln(2/alpha)) ~ 10 and below are still in reach with 200,000 confirmation runs.
DEFAULT_BUDGET = {**preset("quick").to_dict(), "runner": None}
BUDGET_KEYS = tuple(DEFAULT_BUDGET) + ("against",)

# Set by the pytest plugin while a marked test runs: {"defaults": {...}, "calls": [...],
# "limit": int | None}. None outside marked tests.
_CONTEXT: contextvars.ContextVar[dict | None] = contextvars.ContextVar("privaudit_testing", default=None)
# Every call's (test id or "", confidence, verdict) in this process, for the session summary.
CALLS: list[dict] = []


def _short(v: Any, limit: int = 200) -> str:
    s = str(v)
    return s if len(s) <= limit else s[:limit] + "…"


def violation_message(result: AuditResult, call: str = "") -> str:
    """A readable explanation of a confirmed violation, witness included."""
    c = result.claim
    lines = [f"privacy violation: {result.algorithm} does not satisfy {c.describe()}",
             f"  epsilon_lower = {result.epsilon_lower:.4f} (claimed {c.epsilon:g}), delta_lower = "
             f"{result.delta_lower:.4g} at epsilon = {c.epsilon:g}; confidence {result.confidence:.6g}, "
             f"{result.confirm_runs:,} confirmation runs per input, seed {result.seed}"]
    w = result.witness
    if w is not None:
        lines.append(f"  witness: pair #{w.pair_index}, direction {w.direction}, event {w.event_text}")
        lines.append(f"    a = {_short(w.a)}")
        lines.append(f"    b = {_short(w.b)}")
        if w.differing:
            lines.append(f"    differing record(s): {w.differing}")
        if w.queries is not None:
            lines.append(f"    query point(s): {_short(w.queries)}")
        t = max(result.confirmed, key=lambda b: (b.epsilon_lower, b.delta_lower)) if result.confirmed else None
        if t is not None:
            lines.append(f"    P[A(p side) in E] = {t.k_p}/{t.n_p} (lower bound {t.p_lo:.5g}), "
                         f"P[A(q side) in E] = {t.k_q}/{t.n_q} (upper bound {t.q_hi:.5g})")
    lines += [f"  note: {n}" for n in result.notes]
    if call:
        lines.append(f"  reproduce: {call}")
    return "\n".join(lines)


def assert_private(obj: Any, *, pairs: Any = None, data: Any = None, queries: Any = None,
                   claim: Any = None, **budget: Any) -> AuditResult:
    """Audit `obj` and raise `AssertionError` (with the witness) when a violation is confirmed.

    Parameters
    ----------
    obj : Learner or Mechanism
        The black box (anything with ``predict`` or ``sample``, a ``name`` and usually a ``claim``).
    pairs : list of (a, b), optional
        Neighbouring inputs (mechanism) or datasets (learner); default the object's ``pairs``.
    data : Dataset, optional
        A learner's dataset whose neighbours are searched (when no `pairs`).
    queries : array, optional
        A learner's query points.
    claim : Claim, float or dict, optional
        The promise to test: a `Claim`, a number (epsilon; neighbours and scope from the object's
        claim), or a partial ``{"epsilon": ..., "delta": ...}`` merged into the object's claim.
    **budget
        ``confidence`` (0.95), ``explore_runs`` (20,000), ``confirm_runs`` (200,000), ``seed`` (0),
        ``tests`` (1), ``sequential`` (False: True confirms with anytime-valid bounds and stops
        as soon as the evidence is enough), ``runner`` (local), ``against`` (learners: "claim"
        or "certified").
        Inside a test marked ``@pytest.mark.privacy(...)`` the marker's values and the
        session's share of the false-alarm budget are the defaults.

    Returns
    -------
    AuditResult
        When no violation is confirmed (for further checks, e.g. on ``epsilon_lower``).

    Raises
    ------
    AssertionError
        A violation of the claim is confirmed at the stated confidence.
    PrivauditError
        Bad input (unknown budget key, malformed pairs, ...).
    """
    unknown = sorted(set(budget) - set(BUDGET_KEYS))
    if unknown:
        raise PrivauditError(f"assert_private: unknown budget key(s) {', '.join(unknown)}; "
                             f"valid: {', '.join(BUDGET_KEYS)}")
    ctx = _CONTEXT.get()
    opts = dict(DEFAULT_BUDGET)
    if ctx is not None:
        opts.update(ctx["defaults"])
        limit = ctx.get("limit")
        if limit is not None and len(ctx["calls"]) >= limit:
            raise PrivauditError(
                f"this test is marked privacy(audits={limit}) but calls assert_private more often: "
                f"raise audits= so the session's false-alarm budget stays valid")
    opts.update(budget)
    against = opts.pop("against", "claim")
    runner = opts.pop("runner")
    try:
        request = AuditRequest(obj, claim=claim, against=against, pairs=pairs, data=data,
                               queries=queries, budget=Budget(**opts))
    except PrivauditError as exc:
        raise PrivauditError(f"assert_private: {exc}") from None
    result = run_request(request, runner=runner)

    record = {"test": ctx.get("test", "") if ctx else "", "algorithm": result.algorithm,
              "confidence": result.confidence, "violation": result.violation,
              "epsilon_lower": result.epsilon_lower, "marked": ctx is not None}
    CALLS.append(record)
    if ctx is not None:
        ctx["calls"].append(record)
    if result.violation:
        call = (f"assert_private({result.algorithm}, claim={result.claim.to_dict()}, "
                f"confidence={result.confidence:.6g}, explore_runs={result.explore_runs}, "
                f"confirm_runs={result.confirm_runs}, seed={result.seed}, tests={opts['tests']}"
                f"{', sequential=True' if opts.get('sequential') else ''})")
        raise AssertionError(violation_message(result, call))
    return result


__all__ = ["assert_private", "violation_message", "DEFAULT_BUDGET"]
