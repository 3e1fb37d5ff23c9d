"""The sequential path's cheaper computations give the bounds of the plain ones: the CS ends of
few rows found on grids against regula falsi, and path points computed with the next check."""

from __future__ import annotations

import math

import numpy as np

from audit import sequential as S
from audit.types import Claim


def test_grid_and_regula_falsi_find_the_same_rejected_ends():
    """Few rows (a check's four ends per test) are shrunk on grids, many by regula falsi: both
    return rejected points (ln M >= threshold) within the tolerance of each other."""
    rng = np.random.default_rng(3)
    rows = S._GRID_ROWS + 1
    t = np.floor(10 ** rng.uniform(0.5, 6.5, rows)) + 1
    k = rng.binomial(t.astype(np.int64), 10 ** rng.uniform(-5, 0, rows)).astype(float)
    comps = S.components_for(10**6, 0.001)
    thr = math.log(1 / 0.001)
    many = S._lower_logit(k, t, comps, thr)                       # regula falsi
    few = np.concatenate([S._lower_logit(k[i:i + 8], t[i:i + 8], comps, thr)
                          for i in range(0, rows, 8)])            # grids
    assert np.array_equal(np.isinf(many), k <= 0) and np.array_equal(np.isinf(few), k <= 0)
    ok = k > 0
    assert np.max(np.abs(many[ok] - few[ok])) <= 2 * S._TOL
    for x in (many, few):
        # rejected, except at the bracket's edge (p ~ 1e-304: a single event never rules out
        # rates near 0, so the CS reaches down to them)
        inner = ok & (x > -S._LOGIT_MAX)
        assert inner.sum() > rows // 2
        lm = S._log_m_logit(k[inner], t[inner], x[inner], comps)
        assert np.all(lm >= thr - 1e-9)


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
