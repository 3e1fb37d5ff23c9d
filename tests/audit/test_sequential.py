"""Anytime-valid confirmation (audit.sequential): the confidence sequence, its error rate under
peeking after every chunk, the stopping rules, and determinism across runners and resumes."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import algorithms
from audit import audit, sequential as S, stats
from audit.budget import Budget
from audit.types import Claim
from audit.errors import PrivauditError
from audit.journal import Journal
from audit.request import AuditRequest, run_request
from audit.reducers import CodeCounter
from audit.runners import LocalRunner
from audit.runners.base import Job
from audit.runners.ray_runner import RayRunner
from audit.testing import assert_private
from privaudit.ci_config import ConfigError, parse_config
from privaudit.cli import main as cli_main
from reports import render_html, render_markdown
from reports.schema import RESULT_SCHEMA, validate

pytest_plugins = ["pytester"]

A = 0.0125   # a per-sequence level for the tests of the confidence sequence itself


def _comps(n: int = 10**6, alpha: float = A):
    return S.components_for(n, alpha)


# ---------------------------------------------------------------------------------------------
# the confidence sequence
# ---------------------------------------------------------------------------------------------
def test_cs_contains_the_rate_and_is_wider_than_clopper_pearson():
    k = np.array([1, 3, 50, 731, 731_000, 999, 12])
    n = np.array([10, 10, 1000, 1000, 10**6, 1000, 10**6])
    lo, hi = S.cs_bounds(k, n, A, _comps())
    assert np.all(lo <= k / n) and np.all(k / n <= hi)
    # time-uniform validity costs width: never narrower than the fixed-n bound at the same level
    assert np.all(lo <= stats.cp_lower(k, n, A) + 1e-12)
    assert np.all(hi >= stats.cp_upper(k, n, A) - 1e-12)
    # edges: no evidence below at k = 0, none above at k = n
    lo0, hi0 = S.cs_bounds([0, 5], [5, 5], A, _comps())
    assert lo0[0] == 0.0 and hi0[1] == 1.0 and 0 < hi0[0] < 1 and 0 < lo0[1] < 1


def test_cs_ends_are_the_crossings_of_the_mixture_martingale():
    """Checks the bisection against a fine grid: the mixture is monotone on each side of the
    empirical rate and the returned ends bracket every non-rejected point (never narrower)."""
    rng = np.random.default_rng(5)
    thr = math.log(1 / A)
    for _ in range(60):
        t = int(10 ** rng.uniform(0.5, 6.5))
        k = int(rng.binomial(t, 10 ** rng.uniform(-4, 0)))
        if not 2 <= k <= t - 2:
            continue
        comps = S.components_for(int(10 ** rng.uniform(2, 7)), A)
        lo, hi = S.cs_bounds(k, t, A, comps)
        xh = math.log(k / (t - k))
        x = np.linspace(xh - 30, xh + 30, 30001)
        lm = S._log_m_logit(np.float64(k), np.float64(t), x, comps)
        i = int(np.argmin(lm))
        assert np.all(np.diff(lm[:i + 1]) <= 1e-9) and np.all(np.diff(lm[i:]) >= -1e-9)
        inside = x[lm < thr]
        assert 1 / (1 + math.exp(-inside.min())) >= lo * (1 - 1e-9)
        assert 1 / (1 + math.exp(-inside.max())) <= hi * (1 + 1e-9)
        # the ends really are rejected (to the bisection's precision)
        for end in (lo, hi):
            xe = math.log(end / (1 - end))
            assert S._log_m_logit(np.float64(k), np.float64(t), np.array([xe]), comps)[0] >= thr - 1e-6


def test_symmetry_shapes_and_bad_alpha():
    comps = _comps()
    lo, hi = S.cs_bounds(300, 1000, A, comps)
    lo2, hi2 = S.cs_bounds(700, 1000, A, comps)
    assert lo == pytest.approx(1 - hi2, rel=1e-9) and hi == pytest.approx(1 - lo2, rel=1e-9)
    assert S.cs_lower(np.ones((2, 3)) * 5, 10, A, comps).shape == (2, 3)
    assert np.ndim(S.cs_upper(5, 10, A, comps)) == 0
    with pytest.raises(PrivauditError):
        S.cs_lower(1, 2, 1.5, comps)
    with pytest.raises(PrivauditError):
        S.components_for(100, A, ((0.5, 0.3),))


def test_time_uniform_coverage_of_bernoulli_paths():
    """1,000 seeded Bernoulli paths at level 0.05, checked after each of 128 chunks: the rate of
    paths whose CS ever misses p is at most 0.05 (Ville). The assertion allows 0.05 plus three
    binomial standard errors (0.071), so a correct CS fails it with probability < 0.2 %; the
    mixture is conservative and the measured rate is lower."""
    rng = np.random.default_rng(20261127)
    paths, rounds, chunk, alpha = 1000, 128, 800, 0.05
    comps = S.components_for(rounds * chunk, alpha)
    p = 10 ** rng.uniform(-3, math.log10(0.5), size=paths)
    k = np.cumsum(rng.binomial(chunk, p[:, None], size=(paths, rounds)), axis=1)
    n = chunk * np.arange(1, rounds + 1)[None, :].repeat(paths, 0)
    lo, hi = S.cs_bounds(k, n, alpha, comps)
    miss = np.any((lo > p[:, None]) | (hi < p[:, None]), axis=1)
    print(f"paths ever missed: {miss.sum()} of {paths}")
    assert miss.mean() <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / paths)


# ---------------------------------------------------------------------------------------------
# false violations under peeking (counts drawn exactly), and the stopping rules
# ---------------------------------------------------------------------------------------------
def _exact_epsilon_paths(rng, audits: int, rounds: int, chunk: int):
    """Counts of audits at their exact epsilon: per audit a worst-case event with
    p = e^eps q exactly (randomized response's output 1: p = e^eps/(1+e^eps); a Laplace tail
    beyond the shift, where the two densities' ratio is e^eps: q small)."""
    eps = rng.choice([0.1, 0.5, 1.0, 2.0, 4.0], size=audits)
    kind = rng.integers(0, 2, size=audits)
    q_rr = 1 / (1 + np.exp(eps))
    q_tail = 10 ** rng.uniform(-4, -1.5, size=audits) * np.exp(-eps)
    q = np.where(kind == 0, q_rr, q_tail)
    p = np.exp(eps) * q
    kp = np.cumsum(rng.binomial(chunk, p[:, None], size=(audits, rounds)), axis=1)
    kq = np.cumsum(rng.binomial(chunk, q[:, None], size=(audits, rounds)), axis=1)
    return eps, kp, kq


def test_false_violation_rate_when_peeking_after_every_chunk():
    """600 seeded audits of mechanisms at their exact epsilon (randomized response, and Laplace
    tail events of rate 1e-4..3e-2), the confidence sequences checked after each of 256 chunks
    of a 10^6-run budget, never stopping for futility (peeking to the end is the worst case),
    and the final Clopper–Pearson analysis at the budget: the fraction showing a violation by
    either rule must be at most 1 - confidence = 0.05. Analysis: per audit, each of the two
    sequences (p's and q's) ever misses with probability <= ANYTIME_SHARE * 0.025 (Ville) and each
    of the two final one-sided bounds with <= (1 - ANYTIME_SHARE) * 0.025 (Clopper–Pearson at the
    planned n), so a false violation has probability <= 2 * 0.025 = 0.05 (union bound); three binomial standard errors
    of slack (0.077) make a false alarm of this test < 0.2 %. Measured: 7 of 600 (1.2 %), of
    which 2 by the sequences and 5 by the final analysis alone."""
    rng = np.random.default_rng(16)
    audits, rounds, chunk, confidence = 600, 256, 3907, 0.95
    eps, kp, kq = _exact_epsilon_paths(rng, audits, rounds, chunk)
    alpha, alpha_final = S.split_alpha(confidence, 1)
    assert alpha + alpha_final == pytest.approx(stats.per_bound_alpha(confidence, 1))
    comps = S.components_for(rounds * chunk, alpha)
    n = chunk * np.arange(1, rounds + 1)[None, :].repeat(audits, 0)
    p_lo = np.maximum.accumulate(S.cs_lower(kp, n, alpha, comps), axis=1)
    q_hi = np.minimum.accumulate(S.cs_upper(kq, n, alpha, comps), axis=1)
    by_cs = np.any(p_lo > np.exp(eps)[:, None] * q_hi, axis=1)
    budget = rounds * chunk
    fin_p = stats.cp_lower(kp[:, -1], budget, alpha_final)
    fin_q = stats.cp_upper(kq[:, -1], budget, alpha_final)
    by_final = (np.maximum(fin_p, p_lo[:, -1]) > np.exp(eps) * np.minimum(fin_q, q_hi[:, -1]))
    violated = by_cs | by_final
    rate = violated.mean()
    assert rate <= (1 - confidence) + 3 * math.sqrt(0.05 * 0.95 / audits)
    # the same data through the fixed-n Clopper–Pearson bound *with* peeking is not valid:
    # it is the reason this module exists (not asserted: it depends on the draws)
    print(f"false violations under peeking: {violated.sum()} of {audits} "
          f"({by_cs.sum()} by the sequences, {(by_final & ~by_cs).sum()} by the final analysis alone)")


def test_state_stops_for_violation_futility_and_budget():
    claim_tight = algorithms.get("dp-rr", epsilon=1.0).claim
    st = S.SequentialState.start(claim_tight, tests=1, budget=10**6, confidence=0.95)
    st.update([9000], [10_000], [1000], [10_000])       # ratio 9 >> e
    assert st.decide() == "violation"
    st = S.SequentialState.start(claim_tight, tests=1, budget=10**6, confidence=0.95)
    st.update([5100], [10_000], [4900], [10_000])       # ratio ~1.04: far below e
    assert st.decide() == "futility"
    assert st.epsilon_upper()[0] < 1.0
    st = S.SequentialState.start(claim_tight, tests=1, budget=10_000, confidence=0.95)
    st.update([7300], [10_000], [2700], [10_000])       # exactly e: undecided, budget spent
    assert st.decide() == "budget"
    st = S.SequentialState.start(claim_tight, tests=1, budget=10**6, confidence=0.95)
    st.update([7300], [10_000], [2700], [10_000])
    assert st.decide() is None                          # at the claim, early: go on


def test_final_analysis_decides_a_rare_event_at_the_budget():
    """A rare event at 10^6 runs (360 against 218, claim 0.1): the confidence sequence alone
    cannot show the violation, the final Clopper–Pearson analysis at the planned budget does;
    before the budget it may not be used."""
    claim, n = Claim(0.1), 10**6
    st = S.SequentialState.start(claim, tests=1, budget=n, confidence=0.95)
    a = stats.per_bound_alpha(0.95, 1)
    assert st.alpha == pytest.approx(S.ANYTIME_SHARE * a) and st.alpha + st.alpha_final == pytest.approx(a)
    st.update([200], [n // 2], [109], [n // 2])
    with pytest.raises(PrivauditError, match="planned budget"):
        st.final_analysis()
    st = S.SequentialState.start(claim, tests=1, budget=n, confidence=0.95)
    st.update([360], [n], [218], [n])
    assert st.decide() == "budget" and not st.violated()[0] and st.epsilon_lower()[0] < 0.1
    st.final_analysis()
    assert st.final and st.violated()[0]
    fixed = stats.epsilon_lower(stats.cp_lower(360, n, a), stats.cp_upper(218, n, a))
    assert 0.1 < st.epsilon_lower()[0] < fixed      # part of the level: a little below the fixed bound
    # the ceiling is the final analysis' (n of n against 0 of n at the budget)
    lo, hi = S.extreme_bounds(n, 0.95, 1)
    assert lo == pytest.approx(float(stats.cp_lower(n, n, st.alpha_final)))
    comps = S.components_for(n, st.alpha)
    assert hi <= float(S.cs_upper(0, n, st.alpha, comps)) and lo >= float(S.cs_lower(n, n, st.alpha, comps))
    ceiling = S.max_certifiable_epsilon(n, 0.95, 1)
    assert ceiling == pytest.approx(math.log(lo / hi)) and ceiling < stats.max_certifiable_epsilon(n, 0.95)


def test_budget_run_records_the_final_analysis(tmp_path):
    rr = algorithms.get("dp-rr", epsilon=1.0)
    # true epsilon 1 against a claim of 0.98: too close for the sequences, shown at the budget
    r = audit(rr, rr.pairs, claim=Claim(0.98), seed=3, explore_runs=10_000, confirm_runs=100_000,
              sequential=True)
    seq = r.sequential
    assert seq["stopped"] == "budget" and seq["decided_by"] == "final" and r.violation
    assert seq["anytime_valid"] is False and "planned budget" in seq["validity"]
    assert seq["final"]["runs"] == 100_000 and seq["final"]["epsilon_lower"] == r.epsilon_lower
    # the final bound is the intersection: never below what the sequence alone showed at the end
    assert r.epsilon_lower >= seq["path"][-1]["epsilon_lower"]
    d = json.loads(json.dumps(r.to_dict()))
    validate(d, RESULT_SCHEMA)
    assert "final analysis" in render_markdown(r) and "planned budget only" in render_html(r)
    bug = audit(algorithms.get("dp-rr", epsilon=1.0, variant="bv-rr-eps"), rr.pairs, seed=3,
                explore_runs=10_000, confirm_runs=100_000, sequential=True)
    assert bug.sequential["decided_by"] == "anytime" and bug.sequential["anytime_valid"] is True
    assert "final" not in bug.sequential


# ---------------------------------------------------------------------------------------------
# through the auditor
# ---------------------------------------------------------------------------------------------
def test_planted_bug_is_flagged_early_and_margin_passes_early():
    bug = algorithms.get("dp-laplace", epsilon=1.0, variant="bv-laplace-scale")
    r = audit(bug, bug.pairs, seed=0, explore_runs=20_000, confirm_runs=10**6, sequential=True)
    assert r.violation and r.sequential["stopped"] == "violation"
    assert r.sequential["runs_per_side"] <= 10**6 // 5
    assert r.sequential["anytime_valid"] is True and r.confirmed[0].n_p == r.sequential["runs_per_side"]
    fixed = audit(bug, bug.pairs, seed=0, explore_runs=20_000, confirm_runs=10**6)
    assert fixed.violation
    # a correct mechanism audited against a claim 3x larger than it needs stops early too
    rr = algorithms.get("dp-rr", epsilon=1.0)
    r = audit(rr, rr.pairs, claim=Claim(3.0), seed=0, explore_runs=20_000, confirm_runs=10**6,
              sequential=True)
    assert not r.violation and r.sequential["stopped"] == "futility"
    assert r.sequential["runs_per_side"] < 10**6 // 5
    assert r.max_certifiable_epsilon < stats.max_certifiable_epsilon(10**6, 0.95)
    assert "sequential" in r.summary()


def test_result_round_trip_and_schema(tmp_path):
    rr = algorithms.get("dp-rr", epsilon=1.0, variant="bv-rr-eps")
    r = audit(rr, rr.pairs, seed=3, explore_runs=10_000, confirm_runs=100_000, sequential=True)
    d = json.loads(json.dumps(r.to_dict()))
    validate(d, RESULT_SCHEMA)
    back = type(r).from_dict(d)
    assert back.sequential == r.sequential
    assert d["sequential"]["path"] and d["sequential"]["stopped"] in S.STOP_REASONS
    fixed = audit(rr, rr.pairs, seed=3, explore_runs=10_000, confirm_runs=100_000)
    assert "sequential" not in fixed.to_dict() and fixed.sequential is None


def test_reports_show_the_sequential_path():
    rr = algorithms.get("dp-rr", epsilon=1.0, variant="bv-rr-eps")
    r = audit(rr, rr.pairs, seed=3, explore_runs=10_000, confirm_runs=100_000, sequential=True)
    html = render_html(r)
    assert "Sequential confirmation (anytime-valid)" in html
    assert html.count("<svg") == render_html(audit(rr, rr.pairs, seed=3, explore_runs=10_000,
                                                   confirm_runs=100_000)).count("<svg") + 1
    assert "sequential (anytime-valid) | stopped (violation)" in render_markdown(r)


def test_budget_and_request_carry_sequential():
    assert Budget().sequential is False
    with pytest.raises(PrivauditError, match="sequential"):
        Budget(sequential="yes")
    rr = algorithms.get("dp-rr", epsilon=1.0, variant="bv-rr-eps")
    req = AuditRequest(rr, budget=Budget(explore_runs=10_000, confirm_runs=100_000, sequential=True))
    assert run_request(req).sequential["stopped"] == "violation"


def test_assert_private_sequential():
    rr = algorithms.get("dp-rr", epsilon=1.0, variant="bv-rr-eps")
    with pytest.raises(AssertionError, match="sequential=True"):
        assert_private(rr, sequential=True)
    ok = assert_private(algorithms.get("dp-rr", epsilon=1.0), claim=4.0, sequential=True)
    assert ok.sequential["stopped"] == "futility"


MARKER_TESTS = '''
import pytest, algorithms
from audit.testing import assert_private

@pytest.mark.privacy("dp-rr", params={"variant": "bv-rr-eps"}, sequential=True,
                     explore_runs=5_000, confirm_runs=100_000)
def test_marked_bug():
    pass

@pytest.mark.privacy(sequential=True)
def test_marked_defaults():
    r = assert_private(algorithms.get("dp-rr", epsilon=1.0), claim=4.0, explore_runs=5_000)
    assert r.sequential["stopped"] == "futility"
'''


def test_pytest_marker_takes_sequential(pytester):
    pytester.makepyfile(MARKER_TESTS)
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    res.assert_outcomes(passed=1, failed=1)
    assert "sequential=True" in res.stdout.str()


def test_same_stop_after_resume_from_a_partial_journal(tmp_path):
    """A journal holding only the first rounds gives the same stopping point and result."""
    rr = algorithms.get("dp-rr", epsilon=1.0)
    kw = dict(seed=7, explore_runs=10_000, confirm_runs=100_000, sequential=True)
    with Journal(tmp_path / "a", fsync=False) as j:
        first = audit(rr, rr.pairs, journal=j, **kw)
    lines = (tmp_path / "a" / "journal.jsonl").read_text().splitlines()
    (tmp_path / "b").mkdir()
    # keep the exploration chunks and the first few confirmation chunks only
    (tmp_path / "b" / "journal.jsonl").write_text("\n".join(lines[: len(lines) // 3]) + "\n")
    with Journal(tmp_path / "b", fsync=False) as j:
        again = audit(rr, rr.pairs, journal=j, **kw)
        assert j.hits > 0
    assert again.sequential == first.sequential
    assert [t.to_dict() for t in again.confirmed] == [t.to_dict() for t in first.confirmed]
    plain = audit(rr, rr.pairs, **kw)
    assert plain.sequential == first.sequential


def test_cli_and_ci_config(tmp_path, capsys):
    out = tmp_path / "out"
    code = cli_main(["audit", "dp-rr", "--variant", "bv-rr-eps", "--runner", "local", "--quiet",
                     "--runs", "100000", "--sequential", "--out", str(out)])
    assert code == 1
    d = json.loads((out / "result.json").read_text())
    assert d["sequential"]["stopped"] == "violation" and d["sequential"]["anytime_valid"] is True
    assert json.loads((out / "command.json").read_text())["sequential"] is True
    assert "sequential" in capsys.readouterr().out
    cfg = parse_config('[defaults]\nsequential = true\n[[audit]]\nalgorithm = "dp-rr"\n'
                       '[[audit]]\nalgorithm = "dp-laplace"\nsequential = false\n')
    assert [a.sequential for a in cfg.audits] == [True, False]
    assert cfg.audits[0].request(0.99).budget.sequential is True
    with pytest.raises(ConfigError, match="sequential: must be true or false"):
        parse_config('[[audit]]\nalgorithm = "dp-rr"\nsequential = "yes"\n')


def test_local_runner_streams_rounds_in_order():
    rr = algorithms.get("dp-rr", epsilon=1.0)
    jobs = [Job(rr, np.array([s]), 10_000, CodeCounter(), (9, s), None, 3000) for s in (0, 1)]
    rounds = list(LocalRunner().iter_rounds(jobs, seed=1))
    assert [r for r, _ in rounds] == [0, 1, 2, 3]
    assert [t[0].runs for _, t in rounds] == [3000, 6000, 9000, 10_000]
    full = LocalRunner(chunk_runs=3000).run(jobs, seed=1)
    assert rounds[-1][1][0].table == full[0].table
    with pytest.raises(PrivauditError, match="same runs"):
        list(LocalRunner().iter_rounds([jobs[0], Job(rr, np.array([1]), 5, CodeCounter(), (9, 2))], 1))


def test_confirmation_rounds_grow_with_the_runs_so_far():
    """Rounds of 1/256 of the budget while those add >= 10 %, then 10 % of the runs so far,
    capped by the runner's chunk size; the schedule depends only on the budget and the
    configured chunk sizes (so every runner cuts the same rounds), and a runner streams it."""
    rr = algorithms.get("dp-rr", epsilon=1.0)
    job = Job(rr, np.array([0]), 10**6, CodeCounter(), (9, 0))
    sizes = S.sequential_schedule(job, None, 10**6)
    assert sum(sizes) == 10**6 and sizes[0] == 3907 and 35 <= len(sizes) <= 50
    done = np.cumsum(sizes)[:-1]
    assert np.all(np.asarray(sizes[1:-1]) <= np.maximum(3907, np.ceil(0.1 * done[:-1]) + 1))
    capped = S.sequential_schedule(job, 20_000, 10**6)
    assert max(capped) == 20_000 and sum(capped) == 10**6
    jobs = [Job(rr, np.array([s]), 10_000, CodeCounter(), (9, s), None, 3000, (3000, 3000, 4000))
            for s in (0, 1)]
    rounds = list(LocalRunner().iter_rounds(jobs, seed=1))
    assert [t[0].runs for _, t in rounds] == [3000, 6000, 10_000]
    with pytest.raises(PrivauditError, match="schedule"):
        Job(rr, np.array([0]), 10, CodeCounter(), (9, 0), None, None, (3, 3)).chunk_sizes()


def test_futility_uses_a_planning_level_and_the_screen_agrees_with_the_cs():
    """The futility side is a 5 % sequence (spends no error level); the Clopper–Pearson screen
    never skips a check at which the CS would have stopped (checked on random counts)."""
    claim = Claim(1.0)
    st = S.SequentialState.start(claim, tests=1, budget=10**6, confidence=0.995)
    assert st.futility_alpha == S.FUTILITY_LEVEL and st.alpha < S.FUTILITY_LEVEL
    rng = np.random.default_rng(7)
    decided = 0
    for _ in range(200):
        t = int(10 ** rng.uniform(3, 5.5))
        p = float(rng.uniform(0.05, 0.9))
        q = p * math.exp(-rng.uniform(0.6, 1.4))
        st = S.SequentialState.start(claim, tests=1, budget=10**6, confidence=0.995)
        kp, kq = rng.binomial(t, p), rng.binomial(t, q)
        st.observe([kp], [t], [kq], [t])
        screened = st.needs_cs()
        st.update([kp], [t], [kq], [t])
        if st.decide() is not None:
            decided += 1
            assert screened, (kp, kq, t)
    assert decided >= 20      # the check is exercised on both stopping rules' counts


@pytest.mark.slow
def test_end_to_end_false_violations_through_the_auditor():
    """60 seeded sequential audits (explore 10^4, budget 10^5 per side, 26 peeks) of randomized
    response and the Laplace mechanism at their exact epsilon: each reports a violation with
    probability at most 0.05, so 7 or more of 60 would happen with probability < 4 % if the
    bound were exactly at its level (it is conservative: measured 0 of 60)."""
    false = 0
    for seed in range(30):
        for name in ("dp-rr", "dp-laplace"):
            m = algorithms.get(name, epsilon=1.0)
            r = audit(m, m.pairs, seed=seed, explore_runs=10_000, confirm_runs=100_000,
                      sequential=True)
            false += r.violation
    print(f"end-to-end false violations: {false} of 60")
    assert false <= 6


@pytest.mark.ray
def test_ray_gives_the_same_stop_and_drops_the_rest(ray_instance, ray_cancel_calls):
    rr = algorithms.get("dp-rr", epsilon=1.0)
    kw = dict(seed=5, explore_runs=10_000, confirm_runs=100_000, sequential=True)
    local = audit(rr, rr.pairs, **kw)
    with RayRunner(task_seconds=1e-9) as ray_runner:
        remote = audit(rr, rr.pairs, runner=ray_runner, **kw)
    assert remote.sequential == local.sequential
    assert [t.to_dict() for t in remote.confirmed] == [t.to_dict() for t in local.confirmed]
    # a planted bug stops at the first round: most of the budget is never computed
    bug = algorithms.get("dp-rr", epsilon=1.0, variant="bv-rr-eps")
    with RayRunner(task_seconds=1e-9) as ray_runner:
        r = audit(bug, bug.pairs, runner=ray_runner, **kw)
        stats_ = dict(ray_runner.stats)
    assert r.sequential["stopped"] == "violation" and r.sequential["rounds"] == 1
    assert stats_["streamed"] and stats_["computed"] < stats_["chunks"]
    assert ray_cancel_calls == []     # the tasks still in flight are dropped, never ray.cancel'ed


@pytest.mark.ray
def test_interrupted_ray_audit_resumes_to_the_local_stop(ray_instance, tmp_path, ray_cancel_calls):
    """A sequential audit on Ray interrupted half-way through its confirmation (a KeyboardInterrupt
    raised from the progress callback, as Ctrl-C does) resumes from its journal, on Ray, to the
    same stopping point and result as an uninterrupted local run with the same seed. The case
    runs to the budget (the final analysis decides), so every round is needed."""
    rr = algorithms.get("dp-rr", epsilon=1.0)
    kw = dict(claim=Claim(0.98), seed=3, explore_runs=10_000, confirm_runs=100_000, sequential=True)
    local = audit(rr, rr.pairs, **kw)
    assert local.sequential["stopped"] == "budget" and local.sequential["decided_by"] == "final"
    spent = [0]

    def interrupt_midway(runs: int) -> None:
        spent[0] += runs
        if spent[0] > 2 * 10_000 + 100_000:     # exploration done, half of the confirmation
            raise KeyboardInterrupt

    with Journal(tmp_path / "j", fsync=False) as j:
        with RayRunner(task_seconds=1e-9) as ray_runner, pytest.raises(KeyboardInterrupt):
            audit(rr, rr.pairs, runner=ray_runner, journal=j, progress=interrupt_midway, **kw)
        done = len(j)
    assert done > 2        # exploration chunks and some confirmation chunks were journaled
    with Journal(tmp_path / "j", fsync=False) as j:
        with RayRunner(task_seconds=1e-9) as ray_runner:
            resumed = audit(rr, rr.pairs, runner=ray_runner, journal=j, **kw)
            computed = ray_runner.stats["computed"]
            chunks = ray_runner.stats["chunks"]
        assert j.hits >= done - 2     # every journaled chunk but a round's unpaired half is reused
    print(f"journaled before the interrupt: {done}; resumed: {chunks - computed} of {chunks} from the journal")
    assert computed < chunks          # the resumed confirmation did not start over
    assert resumed.sequential == local.sequential
    assert [t.to_dict() for t in resumed.confirmed] == [t.to_dict() for t in local.confirmed]
    assert (resumed.epsilon_lower, resumed.violation) == (local.epsilon_lower, local.violation)
    assert ray_cancel_calls == []
