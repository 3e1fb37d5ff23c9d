"""Power of the generic path on black boxes without designs (issue 12): conservative code ranking,
ordinal half-lines, mixed ("no value") outputs and learned events.

All checks use fixed seeds. Power checks state the margin between the asserted figure and the
expected one; soundness checks state their false-alarm rate.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from audit import Claim, audit
from audit import learned
from audit.errors import BlackBoxError
from audit.events import conservative_order
from audit.learned import ScoreEvent, fit_logistic
from audit.mixed import Featurizer, continuous_layout, discrete_layout, mixed_layout
from power_mechanisms import SVT1, SVT3, SVT6, Geometric, LaplaceVector, statdp_pairs

X_SHAPE = statdp_pairs(10)[6]


def test_conservative_order_does_not_reward_small_counts():
    """3 against 0 has a larger plug-in ratio than 3000 against 300 but far less evidence."""
    kp = np.array([3, 3000, 10])
    kq = np.array([0, 300, 10])
    order = conservative_order(kp, kq, 100_000, 100_000)
    assert order[0] == 1 and order[-1] == 0


def test_geometric_reaches_its_epsilon_on_integer_outputs():
    """Two-sided geometric at eps = 1 on inputs 0 and 1: every tail has loss exactly 1.

    Measured at this budget (seeds 0-2): 0.990-0.997; asserted 0.97. With 1e6 runs per side the
    CP half-widths on the ~0.27 and ~0.73 tails cost about 0.01, so falling below 0.97 needs a
    deviation of several standard errors (probability < 1e-3 per seed). The bound may not exceed
    1 (at most 5 % of seeds could, by the 95 % guarantee; this seed does not)."""
    r = audit(Geometric(), [(np.array([0]), np.array([1]))], explore_runs=100_000,
              confirm_runs=1_000_000, seed=0)
    assert 0.97 <= r.epsilon_lower <= 1.0
    assert not r.violation


def test_ordinal_half_lines_are_candidates():
    r = audit(Geometric(), [(np.array([0]), np.array([1]))], explore_runs=20_000,
              confirm_runs=20_000, seed=1)
    assert any(">=" in c["event"] or "<" in c["event"] for c in r.search["top_explored"])


def test_diffprivlib_geometric_reaches_its_epsilon():
    """diffprivlib's `Geometric` (IBM; scalar `randomise`), wrapped as a black box. Skipped when
    diffprivlib (extra "libs", part of "test") is not installed. Same margin analysis as the numpy version; the
    budget is smaller (its mechanism is a per-sample Python loop): 2e5 runs give about 0.96-0.98,
    asserted 0.93."""
    mechs = pytest.importorskip("diffprivlib.mechanisms")

    class DPLGeometric:
        name = "diffprivlib-geometric"
        claim = Claim(1.0)

        def sample(self, inp, runs, rng):
            m = mechs.Geometric(epsilon=1.0, sensitivity=1, random_state=int(rng.integers(2**31)))
            x = int(np.asarray(inp).reshape(-1)[0])
            return np.array([m.randomise(x) for _ in range(runs)], dtype=np.int64)

    r = audit(DPLGeometric(), [(np.array([0]), np.array([1]))], explore_runs=20_000,
              confirm_runs=200_000, seed=0)
    assert 0.93 <= r.epsilon_lower <= 1.0


def test_nan_means_no_value_and_infinity_is_refused():
    class Inf:
        name = "inf"
        claim = Claim(1.0)

        def sample(self, inp, runs, rng):
            return np.full(runs, np.inf)

    with pytest.raises(BlackBoxError, match="infinite"):
        audit(Inf(), [(np.zeros(1), np.ones(1))], explore_runs=100, confirm_runs=100)


def test_mixed_layout_is_the_same_for_every_encoding():
    a, b = X_SHAPE
    feats = []
    for miss in (np.nan, -100.0, 100.0):
        m = SVT3(missing=miss)
        outs = [m.sample(x, 2000, np.random.default_rng(0)) for x in (a, b)]
        lay = mixed_layout(outs)
        assert lay is not None
        feats.append(lay(outs[0]))
    assert all(np.array_equal(feats[0], f) for f in feats[1:])
    plain = [np.random.default_rng(0).normal(size=(2000, 3)) for _ in range(2)]
    assert mixed_layout(plain) is None  # continuous outputs are not mixed


@pytest.mark.slow
def test_svt3_bound_does_not_depend_on_the_encoding():
    """Lyu-Su-Li Alg. 3 (infinity-DP) on the X-shape pair: NaN, -100 and +100 as "no answer"
    give the very same bound (identical features, seeds and events), above the claimed 1.
    Measured 2.0-2.1 at this budget; asserted > 1.3 (a confirmed violation)."""
    bounds = []
    for miss in (np.nan, -100.0, 100.0):
        r = audit(SVT3(missing=miss), [X_SHAPE], explore_runs=20_000, confirm_runs=200_000, seed=0)
        bounds.append(r.epsilon_lower)
    assert bounds[0] == bounds[1] == bounds[2]
    assert bounds[0] > 1.3


def test_score_event_round_trips_and_counts_the_same():
    lay = discrete_layout([np.array([[0, 1], [1, 1], [-1, 0]])])
    ev = ScoreEvent(lay.with_pairwise(), tuple(np.linspace(-1, 1, lay.with_pairwise().n_features())),
                    0.1, "ge", "learned score")
    back = ScoreEvent.from_dict(json.loads(json.dumps(ev.to_dict())))
    outs = np.random.default_rng(0).integers(-1, 2, size=(500, 2))
    assert np.array_equal(ev.contains(outs), back.contains(outs))
    assert Featurizer.from_dict(lay.to_dict()) == lay


@pytest.mark.parametrize("lay", [
    mixed_layout([np.where(np.arange(3000)[:, None] % 3 == 0, np.nan,
                           np.random.default_rng(1).normal(size=(3000, 3)))]),
    Featurizer(3, ((-100.0,), (), ()), (False, True, False), (True, True, True)),
    discrete_layout([np.array([[0, 1, 2], [1, 1, 0], [-1, 0, 2]])]),
    continuous_layout(3),
], ids=["nan", "atom", "discrete", "plain"])
@pytest.mark.parametrize("pairwise", [False, True])
def test_featurizer_scores_equal_the_explicit_features(lay, pairwise):
    """`Featurizer.scores` evaluates the products' weights as a quadratic form instead of building
    the product features: the same scores up to rounding, on plain, mixed and discrete layouts
    (and on the plain layout's fast path through `base`)."""
    assert lay is not None
    lay = lay.with_pairwise(pairwise)
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2000, lay.width)) * 3
    x[::4, 0] = -100.0
    x[::5, 1] = np.nan
    if lay.zero_atoms is False:  # discrete codes
        x = np.rint(np.nan_to_num(x)).clip(-1, 2)
    w = [rng.normal(size=lay.n_features()) for _ in range(3)]
    for got, wk in zip(lay.scores(x, w), w):
        want = lay(x) @ wk
        assert np.allclose(got, want, rtol=1e-12, atol=1e-9 * np.abs(want).max())
        assert not np.array_equal(got, np.zeros_like(got))
    plain = Featurizer(2, ((), ()), (False, False), (True, True))
    y = np.array([[1.0, np.nan], [-2.5, 3.0]])
    assert np.array_equal(plain.base(y), np.array([[1.0, 0.0], [-2.5, 3.0]]))
    z = np.array([[1.0, 2.0], [-2.5, 3.0]])
    assert np.array_equal(plain.base(z), z) and not np.shares_memory(plain.base(z), z)


@pytest.mark.parametrize("encoding", [np.nan, -100.0])
def test_column_scores_are_the_dot_product_bit_for_bit(encoding):
    """A score whose weights lie on one column's features (the per-column half-lines of a mixed
    output) is computed from that column alone: the very same floats as the dot product with all
    base features, alone or beside dense and other columns' weights, on blocks of runs and not;
    and `base`, written in blocks of runs, equals the features stacked column by column."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(20_000, 6)) * 10.0 ** rng.uniform(-3, 3, size=6)
    x[rng.random(x.shape) < 0.4] = encoding
    x[rng.random(x.shape) < 0.1] = 0.0
    lay = mixed_layout([x])
    assert lay is not None and lay.zero_atoms
    f = lay.base(x)
    explicit = []  # the base features stacked column by column (`base` writes them in blocks)
    for j in range(lay.width):
        xj = x[:, j]
        hits = [xj == a for a in lay.atoms[j]] + ([np.isnan(xj)] if lay.missing[j] else [])
        explicit += [h.astype(float) for h in hits]
        explicit.append(np.where(np.isnan(xj) | np.any(hits, axis=0), 0.0, xj))
    assert np.array_equal(f, np.column_stack(explicit))
    ws = [np.asarray(s.weights) for s in learned._column_scorers(lay, x)]
    for p, n_ind, val in lay._blocks():
        for _ in range(4):  # random weights (and random supports) inside one column's block
            w = np.zeros(lay.n_features())
            k = rng.choice(np.arange(p, val + 1), size=rng.integers(1, val - p + 2), replace=False)
            w[k] = rng.normal(size=k.size) * 10.0 ** rng.uniform(-6, 6, size=k.size)
            ws.append(w)
    dense = rng.normal(size=lay.n_features())
    got = lay.scores(x, ws + [dense])
    for g, w in zip(got, ws + [dense]):
        assert np.array_equal(g, f @ w)
    assert np.array_equal(lay.scores(x[:7], [ws[3]])[0], f[:7] @ ws[3])
    wide = np.zeros(lay.n_features())
    wide[[0, lay.n_features() - 1]] = 1.0  # two columns: the dot product path
    assert np.array_equal(lay.scores(x, [wide])[0], f @ wide)


def test_logistic_fit_separates_by_the_informative_feature():
    rng = np.random.default_rng(0)
    fa = rng.normal(size=(4000, 3)) + np.array([0.0, 1.0, 0.0])
    fb = rng.normal(size=(4000, 3))
    w = fit_logistic(fa, fb)
    assert np.argmax(np.abs(w)) == 1 and w[1] > 0


def test_learned_events_find_svt6_leak():
    """Alg. 6 (no cutoff) on the X-shape pair, at a small budget. Exact worst-case loss on this
    pair (quadrature, benchmarks/bench_power.py): 4.06; the best event a 1e5-run confirmation
    could certify is about 3.0. Measured 2.8-3.0 at this budget; asserted 2.3."""
    r = audit(SVT6(), [X_SHAPE], explore_runs=50_000, confirm_runs=100_000, seed=0)
    assert r.epsilon_lower > 2.3 and r.violation
    assert any("learned score" in c["event"] for c in r.search["top_explored"])


def test_svt1_passes():
    """Lyu-Su-Li Alg. 1 is eps-DP: no violation (false-alarm rate <= 5 % by the guarantee)."""
    r = audit(SVT1(), statdp_pairs(10)[4:7], explore_runs=10_000, confirm_runs=50_000, seed=0)
    assert not r.violation and r.epsilon_lower <= 1.0


@pytest.mark.slow
def test_false_violation_rate_with_learned_events():
    """200 seeded audits of correct mechanisms (Laplace on 3 answers, Lyu-Su-Li Alg. 1 on 4
    queries, two-sided geometric), learned events on, at confidence 0.8.

    Each audit's bounds hold together with probability >= 0.8, so a violation (p_lo > e^eps q_hi)
    happens in at most 20 % of audits; the Laplace and geometric tail events have loss exactly
    eps, so their rate is close to the limit only if selection picks the extreme tails. The
    assertion, at most 40 of 200 (the limit's expectation), fails for a sound auditor whose rate
    is at most 0.2 with probability <= 0.47 at the very limit — but the measured rate is far
    below (5 of 201 here: 3 Laplace, 0 sparse vector, 2 geometric), and at a rate of 0.025 the
    failure probability is < 1e-15. A rate above 0.2 (an
    unsound selection, e.g. events chosen on confirmation samples) fails it almost surely."""
    assert learned.ENABLED
    mechs = [(LaplaceVector(), [(np.zeros(3), np.r_[1.0, 0.0, 0.0])]),
             (SVT1(), [(np.ones(4), np.r_[0.0, 0.0, 2.0, 2.0])]),
             (Geometric(), [(np.array([0]), np.array([1]))])]
    violations = 0
    audits = 0
    for seed in range(67):
        for mech, pairs in mechs:
            r = audit(mech, pairs, explore_runs=1_000, confirm_runs=2_000, seed=seed,
                      confidence=0.8)
            violations += int(r.violation)
            audits += 1
    assert audits >= 200
    assert violations <= 0.2 * audits
