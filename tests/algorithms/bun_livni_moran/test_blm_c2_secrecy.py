"""blm-c2 mode='secrecy': Corollary 2's secrecy-of-the-sample step (BLM-12) over the stand-in."""

from __future__ import annotations

import math

import numpy as np
import pytest

import algorithms
from algorithms.bun_livni_moran.c2_secrecy import amplified, rate_for
from algorithms.registry import spec
from audit import audit_learner
from audit.errors import PrivauditError


@pytest.mark.parametrize("target", [0.05, 0.25, 1.0, 2.0])
def test_claim_is_the_amplification_bound_at_any_target(target):
    W = algorithms.get("blm-c2", mode="secrecy", epsilon=target)
    inner = algorithms.get("blm-c2")                     # the stand-in at epsilon0 = 2
    frac = math.expm1(target) / math.expm1(2.0)
    assert W.frac == pytest.approx(frac) and rate_for(target, 2.0) == pytest.approx(frac)
    assert W.claim.epsilon == pytest.approx(target) == pytest.approx(amplified(2.0, frac))
    assert W.claim.delta == pytest.approx(frac * inner.claim.delta)
    assert W.m == inner.A.n_total and W.n_min * frac >= W.m
    if target < 2.0:                                     # the stand-in's own n is too small
        with pytest.raises(PrivauditError, match="needs n >="):
            W.predict(inner.pairs[0][0], W.queries, 1, np.random.default_rng(0))


def test_bad_modes_and_targets():
    with pytest.raises(PrivauditError, match="target epsilon must be in"):
        algorithms.get("blm-c2", mode="secrecy", epsilon=3.0)
    with pytest.raises(PrivauditError, match="unknown mode"):
        algorithms.get("blm-c2", mode="other")
    with pytest.raises(PrivauditError, match="plants its bug in mode='secrecy'"):
        algorithms.get("blm-c2", variant="s1", mode="stand-in")
    assert spec("blm-c2").instance("s1") == {"mode": "secrecy", "epsilon": 0.25}


def test_subsample_is_uniform_without_replacement():
    """3,000 subsamples: every draw has m distinct indices; index 0 is included with frequency
    m/n = frac (binomial s.d. 0.0038 at frac 0.044; tolerance 0.02, > 5 s.d.; seed fixed)."""
    W = algorithms.get("blm-c2", mode="secrecy", epsilon=0.25)
    idx = W.subsample(W.n_min, 3_000, np.random.default_rng(0))
    assert all(len(set(r.tolist())) == W.m for r in idx[:50])
    assert (idx == 0).any(axis=1).mean() == pytest.approx(W.m / W.n_min, abs=0.02)
    assert abs(np.mean(idx[:, 0]) - W.n_min / 2) < 0.05 * W.n_min      # random order, not sorted


def test_planted_first_m_bug_is_flagged_on_its_default_pairs():
    """s1 (first m records, amplified claim kept): the stand-in's relabelling design sits in the
    first m records, so the wrapper realizes the stand-in's loss (measured 0.78) against the
    claim 0.25. Budget 10k/100k, seed 7; a correct learner is flagged with probability <= 5 %."""
    B = algorithms.get("blm-c2", variant="s1")
    r = audit_learner(B, explore_runs=10_000, confirm_runs=100_000, seed=7)
    assert r.violation and r.epsilon_lower > 0.5


@pytest.mark.slow
def test_correct_secrecy_mode_passes_on_the_same_pairs():
    """The correct wrapper on s1's pairs: one inner run per subsample (~10 ms), so a small budget
    (explore 200, confirm 400 per side; ~15 s). False alarm <= 5 % (Bonferroni), seed fixed."""
    B = algorithms.get("blm-c2", variant="s1")
    W = algorithms.get("blm-c2", mode="secrecy", epsilon=0.25)
    r = audit_learner(W, pairs=B.pairs, queries=B.queries, explore_runs=200, confirm_runs=400, seed=7)
    assert not r.violation
