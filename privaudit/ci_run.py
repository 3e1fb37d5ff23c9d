"""Run a CI suite of audits with suite-level error control, and compare it with a baseline.

Statistical guarantee
---------------------
Each of the m audits runs at confidence ``1 - (1 - confidence)/m`` (Bonferroni across audits, on
top of each audit's own Bonferroni split over its confirmed bounds). An audit of an algorithm that
satisfies its claim reports a violation with probability at most ``(1 - confidence)/m``; by the
union bound, whatever the dependence between audits,

    P[some audit of a correct algorithm fails its "pass" expectation] <= 1 - confidence.

Seeds are fixed (the suite's ``seed``, or an audit's own), so a re-run of the same code gives the
same counts and the same verdicts; the probability above is over the choice of seed, i.e. over
code changes that alter the random streams without altering privacy.

Bonferroni rather than Holm: Holm's step-down would reject no fewer audits, but it does not yield
simultaneous confidence bounds, and every entry's reported epsilon_lower is meant to be a valid
bound at the same level that decided its verdict. The price is a log factor in the certifiable
ceiling (``ln(n / ln(2 m T / alpha))``), small for suites of tens of audits.

Baselines
---------
A regression is an epsilon_lower that rose beyond what the baseline's own evidence allows: the
baseline's witness counts give an *upper* confidence bound ``ln((p_hi - delta) / q_lo)`` on the
privacy loss of its witness event; the current run regresses when its epsilon_lower exceeds it.
If the algorithm and the witness event are unchanged, this happens with probability at most
``2 (1 - confidence)/m`` per audit (one bound of each run failing), so stable code does not flag.
"""

from __future__ import annotations

import math
import time
import traceback
from typing import Any, Callable

from audit import stats
from audit.errors import PrivauditError
from audit.provenance import commit_cache, git_commit, versions
from audit.request import run_request
from audit.result import AuditResult, BoundTest
from audit.runners.factory import make_runner
from audit.suite import SuiteEntry, SuiteResult
from privaudit import input_search
from privaudit.ci_config import AuditSpec, CIConfig


def make_suite_runner(cfg: CIConfig, kind: str | None = None, address: str | None = None):
    """The runner the config asks for (CLI flags `kind`/`address` take precedence)."""

    kind = kind or cfg.runner
    address = address if address is not None else (cfg.address if kind == "ray" else None)
    num_cpus = cfg.num_cpus if kind == "ray" and address is None else None
    return make_runner(kind, address=address, num_cpus=num_cpus, chunk_runs=cfg.chunk_runs)


def run_one(spec: AuditSpec, confidence: float, runner: Any) -> AuditResult:
    """One audit of the suite at the per-audit `confidence`."""

    request = spec.request(confidence)
    found_plan = input_search.plan(request, spec.input_length)
    note = None
    if found_plan is not None:
        request, note = input_search.search(request, found_plan)
    result = run_request(request, runner=runner)
    if note:
        result.notes = list(result.notes) + [note]
    return result


@commit_cache()   # one git lookup per checkout for the whole suite, not two subprocesses per audit
def run_suite(cfg: CIConfig, runner: Any = None, baseline: SuiteResult | None = None,
              on_entry: Callable[[SuiteEntry], None] | None = None) -> SuiteResult:
    """Run every audit of `cfg`; never raises for a failing audit (it becomes an entry's error).

    Parameters
    ----------
    cfg : CIConfig
    runner : Runner, optional
        Default: the config's runner (closed again at the end).
    baseline : SuiteResult, optional
        A stored suite to compare epsilon_lower with (entries matched by name).
    on_entry : callable, optional
        Called with each finished entry (progress output).
    """
    own = runner is None
    if own:
        runner = make_suite_runner(cfg)
    conf_i = cfg.audit_confidence
    base = {e.name: e for e in baseline.entries} if baseline is not None else {}
    entries = []
    t0 = time.perf_counter()
    try:
        for spec in cfg.audits:
            result, error = None, None
            try:
                result = run_one(spec, conf_i, runner)
            except PrivauditError as exc:
                error = str(exc)
            except Exception as exc:   # the user's black box crashed: a failed test, not a crash
                tb = traceback.extract_tb(exc.__traceback__)
                at = f" (at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
                error = f"{type(exc).__name__}: {exc}{at}"
            ok = error is None and result is not None and \
                result.violation == (spec.expect == "violation")
            entry = SuiteEntry(spec.name, spec.algorithm, spec.expect, ok, result, error)
            if result is not None:
                # the config check's "vacuous" warning says what the audit's "powerless" note
                # says, in the suite's words (confirm_runs, the per-audit confidence): keep one
                own = [n for n in result.notes
                       if not (spec.warnings and str(n).startswith("powerless"))]
                result.notes = own + list(spec.warnings)
            if spec.name in base:
                compare_with_baseline(entry, base[spec.name])
            entries.append(entry)
            if on_entry is not None:
                on_entry(entry)
        desc = runner.describe() if hasattr(runner, "describe") else {"kind": type(runner).__name__}
    finally:
        if own:
            runner.close()
    return SuiteResult(name=cfg.name, confidence=cfg.confidence, correction=cfg.correction,
                       entries=entries, seed=cfg.seed,
                       timings={"total_s": round(time.perf_counter() - t0, 4)},
                       versions=suite_versions(), runner=desc)


def suite_versions() -> dict:
    """Software versions and the git commit of the current directory (the repository under CI)."""

    return {**versions(), "git_commit": git_commit()}


# ---------------------------------------------------------------------------------------------
# baselines
# ---------------------------------------------------------------------------------------------
def witness_test(result: AuditResult) -> BoundTest | None:
    """The confirmed test behind `result.epsilon_lower` (the largest of its bounds)."""
    if not result.confirmed:
        return None
    return max(result.confirmed, key=lambda t: (t.epsilon_lower, t.delta_lower))


def epsilon_upper(test: BoundTest, alpha: float, delta: float = 0.0) -> float:
    """Upper confidence bound on the privacy loss of one event, from its confirmation counts.

    ``ln((p_hi - delta) / q_lo)`` with one-sided Clopper–Pearson bounds at level `alpha` each:
    the event's true ``ln((p - delta)/q)`` is below it with probability >= 1 - 2 alpha.
    Infinite when the q side never saw the event (no finite upper bound exists).
    """
    p_hi = float(stats.cp_upper(test.k_p, test.n_p, alpha))
    q_lo = float(stats.cp_lower(test.k_q, test.n_q, alpha))
    if q_lo <= 0.0:
        return math.inf
    if p_hi <= delta:
        return 0.0
    return max(0.0, math.log((p_hi - delta) / q_lo))


def compare_with_baseline(entry: SuiteEntry, base: SuiteEntry) -> None:
    """Set `entry.baseline_epsilon` and `entry.regression` from a stored entry of the same name."""
    if base.result is None:
        return
    entry.baseline_epsilon = float(base.result.epsilon_lower)
    if entry.result is None:
        return
    t = witness_test(base.result)
    if t is None:
        return
    # Both runs are measured against the claimed delta of the current run.
    upper = epsilon_upper(t, base.result.alpha_per_bound, entry.result.claim.delta)
    entry.regression = bool(entry.result.epsilon_lower > upper)
    if entry.regression:
        entry.result.notes = list(entry.result.notes) + [
            f"regression: epsilon_lower {entry.result.epsilon_lower:.4f} exceeds {upper:.4f}, the "
            f"upper confidence bound of the baseline's witness event (baseline epsilon_lower "
            f"{entry.baseline_epsilon:.4f})"]


def regression_upper(base: SuiteEntry, delta: float) -> float | None:
    """The threshold a run must exceed to count as a regression against `base`."""
    if base.result is None or (t := witness_test(base.result)) is None:
        return None
    return epsilon_upper(t, base.result.alpha_per_bound, delta)


__all__ = ["run_suite", "run_one", "make_suite_runner", "compare_with_baseline", "epsilon_upper",
           "witness_test", "regression_upper"]
