"""The sequential path's cheaper computations give the bounds of the plain ones: the CS ends of
few rows found on grids against regula falsi, and path points computed with the next check."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audit import sequential as S
from audit.types import Claim


def test_grid_regula_falsi_and_row_by_row_find_the_same_rejected_ends():
    """Many rows are solved by regula falsi, fewer on grids, the fewest (a check's four ends
    per test, up to four tests) row by row in plain floats: all three return rejected points
    (ln M >= threshold) within the tolerance of each other."""
    rng = np.random.default_rng(3)
    rows = S._GRID_ROWS + 1
    t = np.floor(10 ** rng.uniform(0.5, 6.5, rows)) + 1
    k = rng.binomial(t.astype(np.int64), 10 ** rng.uniform(-5, 0, rows)).astype(float)
    comps = S.components_for(10**6, 0.001)
    thr = math.log(1 / 0.001)

    def cut(size):
        return np.concatenate([S._lower_logit(k[i:i + size], t[i:i + size], comps, thr)
                               for i in range(0, rows, size)])

    many = S._lower_logit(k, t, comps, thr)                       # regula falsi
    assert S._SCALAR_ROWS < 32 <= S._GRID_ROWS
    grids, scalar = cut(32), cut(S._SCALAR_ROWS)
    ok = k > 0
    for x in (many, grids, scalar):
        assert np.array_equal(np.isinf(x), k <= 0)
        assert np.max(np.abs(many[ok] - x[ok])) <= 2 * S._TOL
        # rejected, except at the bracket's edge (p ~ 1e-304: a single event never rules out
        # rates near 0, so the CS reaches down to them)
        inner = ok & (x > -S._LOGIT_MAX)
        assert inner.sum() > rows // 2
        lm = S._log_m_logit(k[inner], t[inner], x[inner], comps)
        assert np.all(lm >= thr - 1e-9)


def test_row_by_row_log_mixture_is_the_vectorised_one():
    rng = np.random.default_rng(5)
    comps = S.components_for(10**5, 0.01)
    lw, c = [math.log(w) for w, _ in comps], [cj for _, cj in comps]
    for _ in range(200):
        t = float(np.floor(10 ** rng.uniform(0, 6)) + 1)
        k = float(rng.integers(0, int(t) + 1))
        x = float(rng.uniform(-40, 40))
        want = float(S._log_m_logit(np.array([k]), np.array([t]), np.array([x]), comps)[0])
        got = S._log_m_scalar(k, t, x, lw, c)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-9) or (math.isinf(want) and got == want)


def test_path_points_computed_with_the_next_check_give_the_same_bounds():
    claim = Claim(1.0)
    snaps = [([730.0, 40.0], [1000.0] * 2, [270.0, 21.0], [1000.0] * 2),
             ([1470.0, 90.0], [2000.0] * 2, [530.0, 44.0], [2000.0] * 2),
             ([2930.0, 170.0], [4000.0] * 2, [1070.0, 90.0], [4000.0] * 2)]
    one = S.SequentialState.start(claim, 2, 10**5, 0.95)
    points = []
    for s in snaps:
        one.update(*s)
        points.append(one.path_point())
    batch = S.SequentialState.start(claim, 2, 10**5, 0.95)
    got = batch.update(*snaps[-1], earlier=snaps[:-1]) + [batch.path_point()]
    assert got == points
    for a in ("p_lo", "q_hi", "p_hi", "q_lo", "kp", "nq"):
        assert np.array_equal(getattr(one, a), getattr(batch, a))
