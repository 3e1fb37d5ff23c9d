"""Every correct `lit-` mechanism passes, every incorrect one is flagged, and no bound exceeds a
documented true epsilon (seeded audits).

False alarms: each audit's bound holds with probability >= 0.95 (Bonferroni inside the audit), so
a correct mechanism whose true loss is at most its claim is flagged with probability <= 0.05, and
a bound above the true loss has probability <= 0.05; the seeds are fixed, so the outcomes are
deterministic and were each checked once. The incorrect mechanisms are flagged by wide margins
(measured at seed 0; e.g. float Laplace 8.9 vs claim 0.1, histogram bug 9.4 vs 0.1).
"""

import pytest

import algorithms
from audit import audit

# (name, parameters, confirmation runs): small budgets where they suffice
PASS = [("lit-laplace", {}, 200_000), ("lit-gaussian", {}, 200_000),
        ("lit-gaussian-analytic", {}, 200_000), ("lit-geometric", {}, 200_000),
        ("lit-truncated-geometric", {}, 200_000), ("lit-histogram", {}, 200_000),
        ("lit-prefix-sum", {}, 200_000), ("lit-rnm-laplace-index", {}, 200_000),
        ("lit-rnm-exp-index", {}, 200_000), ("lit-rappor", {}, 200_000),
        ("lit-rappor-onetime", {}, 200_000), ("lit-snapping", {}, 200_000),
        ("lit-svt1", {}, 100_000), ("lit-svt2", {}, 100_000), ("lit-numerical-svt", {}, 100_000)]
VIOLATION = [("lit-histogram-bug", {}, 200_000), ("lit-laplace-float", {}, 200_000),
             ("lit-rnm-laplace-value", {}, 1_000_000), ("lit-rnm-exp-value", {}, 1_000_000),
             ("lit-svt3", {}, 200_000), ("lit-svt4", {}, 200_000), ("lit-svt5", {}, 200_000),
             ("lit-svt6", {"epsilon": 1.0}, 200_000)]


def _audit(name, params, runs):
    m = algorithms.get(name, **params)
    return m, audit(m, m.pairs, explore_runs=runs // 10, confirm_runs=runs, seed=0)


def test_lists_cover_every_lit_mechanism():
    covered = {n for n, _, _ in PASS + VIOLATION}
    assert covered == {n for n in algorithms.names() if n.startswith("lit-")}
    for n, _, _ in PASS:
        assert algorithms.info(n)["expect"]["correct"] == "pass"
    for n, _, _ in VIOLATION:
        assert algorithms.info(n)["expect"]["correct"] == "violation"


@pytest.mark.parametrize("name, params, runs", PASS, ids=[p[0] for p in PASS])
def test_correct_mechanism_passes_below_its_true_epsilon(name, params, runs):
    m, r = _audit(name, params, runs)
    assert not r.violation, r.summary()
    assert r.epsilon_lower <= m.true_epsilon


@pytest.mark.parametrize("name, params, runs", VIOLATION, ids=[p[0] for p in VIOLATION])
def test_incorrect_mechanism_is_flagged_below_its_true_epsilon(name, params, runs):
    m, r = _audit(name, params, runs)
    assert r.violation, r.summary()
    assert r.epsilon_lower <= m.true_epsilon


def test_float_laplace_is_flagged_by_an_exact_value_event():
    """Not by luck: the witness is the exact-value grid event, and the other input never hit it."""
    _, r = _audit("lit-laplace-float", {}, 200_000)
    assert r.witness.event.get("feature") == "lattice"
    assert r.confirmed[0].k_q == 0 and any("support mismatch" in n for n in r.notes)


def test_the_same_sampler_passes_without_exact_values():
    """Declared as a real-number mechanism (no exact-value events), the float sampler looks like
    the Laplace mechanism: the exact-value event is what finds the leak."""
    m = algorithms.get("lit-laplace-float")
    m.exact_values = False
    r = audit(m, m.pairs, explore_runs=20_000, confirm_runs=200_000, seed=0)
    assert not r.violation and r.epsilon_lower < 0.1


def test_dpsniper_convention_is_one_test_at_alpha_005_per_bound():
    """benchmarks/peers.py's DP-Sniper convention: one witness pair at confidence 0.9 is one
    confirmed test whose two one-sided Clopper–Pearson bounds each get alpha = 0.05 — DP-Sniper's
    95 % per side union-bounded to 90 %. Checked on lit-svt4 at DP-Sniper's c = 1 (true eps 0.175),
    where the seeded bound (2x10^5 runs) must also stay below the true loss (false-alarm
    probability <= 0.1 at this confidence; deterministic under the fixed seed)."""
    m = algorithms.get("lit-svt4", epsilon=0.1, c=1, threshold=1.0)
    r = audit(m, m.pairs[:1], explore_runs=20_000, confirm_runs=200_000, seed=0, confidence=0.90)
    assert r.tests == 1 and r.confidence == 0.90
    assert r.alpha_per_bound == pytest.approx(0.05, abs=1e-12)
    assert m.true_epsilon == pytest.approx(0.175)
    assert r.epsilon_lower <= m.true_epsilon
