"""Clopper–Pearson bounds and the epsilon/delta lower bounds built from them."""

import math

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from audit import stats


def test_cp_matches_statsmodels_one_sided():
    k = np.array([0, 1, 5, 50, 999, 1000])
    n = 1000
    a = 0.025
    lo_sm, hi_sm = proportion_confint(k, n, alpha=2 * a, method="beta")
    np.testing.assert_allclose(stats.cp_lower(k, n, a), lo_sm, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(stats.cp_upper(k, n, a), hi_sm, rtol=1e-12, atol=1e-15)


def test_cp_edges_and_tiny_proportions():
    assert stats.cp_lower(0, 100, 0.05) == 0.0
    assert stats.cp_upper(100, 100, 0.05) == 1.0
    # k = 0 upper bound has the closed form 1 - alpha^(1/n)
    n = 10**9
    assert stats.cp_upper(0, n, 0.05) == pytest.approx(-math.expm1(math.log(0.05) / n), rel=1e-9)


def test_cp_coverage_is_at_least_nominal():
    # exact coverage of the one-sided lower bound at p = 0.3, n = 50 by summing the binomial pmf
    from scipy.stats import binom
    n, p, a = 50, 0.3, 0.05
    k = np.arange(n + 1)
    covered = stats.cp_lower(k, n, a) <= p
    assert binom.pmf(k, n, p)[covered].sum() >= 1 - a


def test_epsilon_and_delta_lower():
    assert stats.epsilon_lower(0.5, 0.1) == pytest.approx(math.log(5))
    assert stats.epsilon_lower(0.5, 0.1, delta=0.3) == pytest.approx(math.log(2))
    assert stats.epsilon_lower(0.05, 0.1) == 0.0          # floored
    assert stats.epsilon_lower(0.2, 0.5, delta=0.3) == 0.0  # p_lo <= delta: no evidence
    assert stats.delta_lower(0.5, 0.1, 1.0) == pytest.approx(0.5 - math.e * 0.1)
    assert stats.delta_lower(0.1, 0.5, 0.0) == 0.0


def test_ceiling_matches_rule_of_thumb():
    n, conf = 10**6, 0.95
    exact = stats.max_certifiable_epsilon(n, conf, tests=1)
    assert exact == pytest.approx(stats.ceiling_approx(n, 1 - conf), abs=0.05)
    # more tests, less certifiable
    assert stats.max_certifiable_epsilon(n, conf, tests=10) < exact


def test_bonferroni_alpha_and_errors():
    assert stats.per_bound_alpha(0.95, 5) == pytest.approx(0.005)
    with pytest.raises(ValueError):
        stats.per_bound_alpha(1.0, 1)
    with pytest.raises(ValueError):
        stats.cp_lower(1, 10, 0.0)
