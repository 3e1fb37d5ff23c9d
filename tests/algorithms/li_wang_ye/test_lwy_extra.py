"""Li, Wang & Ye extras: Baseline-A+V (``lwy-b2``, spec B2), the calibrated Theorem 18 pipeline
(``lwy-p0``, spec P0-a) and the planted P2 bugs V14 / V17.

False alarms: Monte Carlo checks use Clopper-Pearson intervals at level ALPHA / checks (Bonferroni)
with ALPHA = 1e-6 for the file, or z-margins of at least 7 standard deviations (stated at each
test); audits run at a fixed seed, so their outcome is reproducible (the auditor's own bound holds
with probability >= 0.95 per audit, see tests/algorithms/li_wang_ye/test_lwy_audit.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import algorithms
from algorithms.li_wang_ye import designs as D
from audit import Claim, Dataset, audit_learner
from audit.errors import PrivauditError
from audit.stats import cp_lower, cp_upper

ALPHA = 1e-6
BUDGET = dict(explore_runs=20_000, confirm_runs=200_000, seed=1)


def _interval(ones, runs, checks):
    a = ALPHA / checks / 2
    return cp_lower(ones, runs, a), cp_upper(ones, runs, a)


# -- B2 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("release", ["aux", "g", "vh"])
def test_b2_exact_oracle_matches_monte_carlo(release):
    L = algorithms.get("lwy-b2", release=release, neighbours="label")
    for S in L.pairs[0]:
        exact = L.exact(S, L.queries)
        out = L.predict(S, L.queries, 20_000, np.random.default_rng(3))
        assert out.shape == (20_000, len(L.queries)) and out.dtype == np.int8
        lo, hi = _interval(out.sum(axis=0), 20_000, checks=6)
        assert np.all((lo <= exact + 1e-12) & (exact <= hi + 1e-12)), (exact, out.mean(axis=0))


def test_b2_is_baseline_a_on_u_and_v():
    """White-box: B2's g is Baseline-A run on U o V (identical exact law), and the default output
    is g XOR h_bar with h_bar consistent with V^h (so at V's points x = 1, 6 it equals g XOR h)."""
    L = algorithms.get("lwy-b2", release="g")
    U = L.pairs[0][0]
    S = Dataset(np.vstack([U.X, L.V.X]), np.concatenate([U.y, L.V.y]))
    B1 = algorithms.get("lwy-b1")
    assert np.allclose(L.exact(U, L.queries), B1.exact(S, L.queries), atol=1e-12)
    aux = algorithms.get("lwy-b2")
    out = aux.predict(U, [[1.0], [6.0]], 1000, np.random.default_rng(0))
    # with EMLearner on n = 60 points, g agrees with h on V's heavy cells almost surely, and h_bar
    # equals h there: output 0 (any 1 means the XOR is wrong); Pr[1] < 1e-6 per run (exact oracle)
    assert aux.exact(U, [[1.0], [6.0]]).max() < 1e-6
    assert out.sum() == 0


@pytest.mark.parametrize("params", [{}, {"neighbours": "label"}, {"release": "vh", "neighbours": "label"}],
                         ids=["replace-one", "label", "label-vh"])
def test_b2_correct_passes_audit(params):
    L = algorithms.get("lwy-b2", **params)
    r = audit_learner(L, **BUDGET)
    assert not r.violation and r.epsilon_lower <= L.claim.epsilon


def test_b2_label_audit_is_tight():
    """The V^h channel of the label-flip design realizes 0.92 of eps_EM = 1 (exact oracle); the
    audit certifies about 0.90 (measured), so it flags a (false) claim of 0.5 and never exceeds 1."""
    L = algorithms.get("lwy-b2", release="vh", neighbours="label")
    S1, S2 = L.pairs[0]
    e1, e2 = L.exact(S1, L.queries)[0], L.exact(S2, L.queries)[0]
    assert 0.9 < np.log((1 - e2) / (1 - e1)) <= 1.0 + 1e-12
    r = audit_learner(L, claim=Claim(0.5, 0.0, "label", "model"), **BUDGET)
    assert r.violation and 0.5 < r.epsilon_lower <= 1.0


def test_b2_bad_input():
    with pytest.raises(PrivauditError, match="release"):
        algorithms.get("lwy-b2", release="both")
    L = algorithms.get("lwy-b2", release="vh")
    with pytest.raises(PrivauditError, match="points of V"):
        L.predict(L.pairs[0][0], [[3.0]], 5, np.random.default_rng(0))
    with pytest.raises(PrivauditError, match="grid"):
        algorithms.get("lwy-b2", grid=4)


# -- P0 ---------------------------------------------------------------------------------------------
def test_p0_calibration_matches_spec_reference():
    """Spec P0-a reference eps_int (n = 10^4 and 10^5) and the certified bound never above target."""
    from algorithms.li_wang_ye.core import n2_certified
    from algorithms.li_wang_ye.extra import calibrate
    for n in (10_000, 100_000):
        for target, ref in ((0.1, 0.00343), (0.25, 0.00921), (0.5, 0.02080), (1.0, 0.05328), (2.0, 0.17339)):
            e = calibrate(target, n)
            assert e == pytest.approx(ref, abs=1e-5) and n2_certified(e, n, 1.0, 0.0)[0] <= target
    L = algorithms.get("lwy-p0", epsilon=0.5, n=1000)
    assert L.claim.epsilon <= 0.5 and L.k(1000) == 21 and L.draws(1000) == 3   # floor(21 / 6)
    with pytest.raises(PrivauditError, match="increase n"):
        algorithms.get("lwy-p0", epsilon=0.05, n=50)


def test_p0_exact_oracle_and_w1_monte_carlo():
    """wrap=False: exact oracle inside CP intervals. W1 (m = 3 draws of T^h, EMLearner(1)) only
    sees 3 points, so its predictor is flatter than A = EMLearner(1) on all of T^h: at the
    lowest query it predicts 1 more rarely (measured 0.16 vs 0.31; 20,000 runs, sd < 0.004)."""
    L = algorithms.get("lwy-p0", wrap=False)
    S = L.pairs[0][0]
    exact = L.exact(S, L.queries)
    out = L.predict(S, L.queries, 20_000, np.random.default_rng(12))
    lo, hi = _interval(out.sum(axis=0), 20_000, checks=len(L.queries))
    assert np.all((lo <= exact + 1e-12) & (exact <= hi + 1e-12))
    W = algorithms.get("lwy-p0").predict(S, L.queries, 20_000, np.random.default_rng(13)).mean(axis=0)
    assert W[0] < exact[0] - 0.08


def test_p0_passes_and_internal_eps_is_flagged():
    """With the LocProbe A the realized loss is ln(1 + (k/n)(e - 1)) = 0.2616 (exact) at target 2:
    the audit passes the calibrated claim and flags the internal eps_int = 0.173 ("wrong epsilon
    accounting", as V6); measured epsilon_lower 0.251."""
    L = algorithms.get("lwy-p0", epsilon=2.0, wrap=False, base="locprobe")
    r = audit_learner(L, **BUDGET)
    assert not r.violation and r.epsilon_lower <= L.claim.epsilon
    r = audit_learner(L, claim=Claim(L.eps_int, 0.0, "replace-one", "model"), **BUDGET)
    assert r.violation and L.eps_int < r.epsilon_lower <= np.log1p(L.k(1000) / 1000 * (np.e - 1))


@pytest.mark.slow
def test_p0_w1_passes():
    """The default pipeline (W1 around EMLearner) on its D3 / D2 pairs (measured epsilon_lower 0)."""
    L = algorithms.get("lwy-p0")
    r = audit_learner(L, **BUDGET)
    assert not r.violation and r.epsilon_lower <= L.claim.epsilon


# -- V14 / V17 -----------------------------------------------------------------------------------------
def _sparse_zeros(n=1000, zeros=94):
    """(1, 0) x zeros and (4, 1) x the rest: a portion of 7 of T^h holds a (1, 0) with probability
    ~0.5, so P1's votes at x = 0 vary from run to run (the smallest consistent threshold is 2 iff
    the portion holds a 0-labelled point)."""
    return D._ds([(1.0, 0, zeros), (4.0, 1, n - zeros)])


def test_v14_same_marginals_correlated_answers():
    """V14 shares I, h and the partition across a run's queries: each answer has the correct
    marginal law, but two answers of one run are strongly correlated; the correct P2's are
    independent. 40,000 runs: sd of a correlation estimate < 0.006, margins >= 7 sd; marginals
    compared with CP intervals at ALPHA/4 each."""
    S = _sparse_zeros()
    q = [[0.0], [0.0]]
    runs = 40_000
    outs = {v: algorithms.get("lwy-p2", variant=v).predict(S, q, runs, np.random.default_rng(11))
            for v in ("correct", "v14")}
    corr = {v: np.corrcoef(o[:, 0], o[:, 1])[0, 1] for v, o in outs.items()}
    assert abs(corr["correct"]) < 0.04 and corr["v14"] > 0.2, corr
    (lc, hc), (lv, hv) = (_interval(outs[v][:, 0].sum(), runs, checks=4) for v in ("correct", "v14"))
    assert lc <= hv and lv <= hc                     # the marginals agree
    L = algorithms.get("lwy-p2", variant="v14")
    assert L.claim.scope == "model" and L.certified.scope == "prediction"
    assert L.claim.epsilon == algorithms.get("lwy-p2").claim.epsilon and len(L.queries) == 4


def test_v17_breaks_permutation_invariance():
    """Spec 4.5(2): with the records sorted ((1, 0) first), V17's index-order portions are nearly
    pure, so many vote 1 at x = 0 (Pr[1] ~ 0.27 measured); shuffled, they are mixed (~ 0.001). The
    correct P2 depends only on the multiset: identical outputs for the same seed."""
    S = D._ds([(1.0, 0, 500), (4.0, 1, 500)])                     # sorted by x
    perm = np.random.default_rng(4).permutation(S.n)
    Sp = Dataset(S.X[perm], S.y[perm])
    q = [[0.0]]
    runs = 4000
    C = algorithms.get("lwy-p2")
    assert np.array_equal(C.predict(S, q, runs, np.random.default_rng(5)),
                          C.predict(Sp, q, runs, np.random.default_rng(5)))
    V = algorithms.get("lwy-p2", variant="v17")
    a = V.predict(S, q, runs, np.random.default_rng(6)).sum()
    b = V.predict(Sp, q, runs, np.random.default_rng(7)).sum()
    c = C.predict(Sp, q, runs, np.random.default_rng(8)).sum()
    (la, ha), (lb, hb), (lc, hc) = (_interval(x, runs, checks=3) for x in (a, b, c))
    assert la > hb                                   # sorted vs shuffled differ for V17
    assert lb <= hc and lc <= hb                     # shuffled V17 behaves like the correct P2


def test_registered():
    assert {"lwy-b2", "lwy-p0"} <= set(algorithms.names())
    info = algorithms.info("lwy-b2")
    assert info["paper"].startswith("Li, Wang & Ye") and info["claim"]["epsilon"] == pytest.approx(3.3863, abs=1e-4)
    assert {"v14", "v17"} <= set(algorithms.info("lwy-p2")["variants"])
    assert algorithms.get("lwy-p2", variant="v17").claim == algorithms.get("lwy-p2").claim
