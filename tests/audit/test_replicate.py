"""Replication of a chosen threshold event on fresh runs (audit/replicate.py): deterministic checks
of the shortlist and the replacement rule, and seeded audits where exploration's own counts pick
a tail that a chance excess made look leaky."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

import algorithms
from algorithms.literature.histogram import NoisyHistogram
from audit import Claim, audit, audit_learner, auditor, learned, staged
from audit.events import Candidate, _tail_safe_rates, label_candidates
from audit.journal import Journal
from audit.reducers import CodeCounts, CodeSet, EventCounter, Threshold
from audit.replicate import (REPLICATE, SHORTLIST, reconcile, replicable, shortlist,
                             with_replication)
from audit.runners import LocalRunner
from audit.stats import expected_bounds
from privaudit.progress import ProgressRunner

CLAIM = Claim(0.1)


def _thr(pair, t, eps, direction="a>b", side="ge"):
    return Candidate(pair, direction, Threshold((1.0,), t, side, "output"), 10, 100, 5, 100, eps, 0.0)


def test_only_threshold_events_not_ranked_on_a_learning_sample_are_replicable():
    assert replicable(_thr(0, 1.0, 0.5))
    assert not replicable(Candidate(0, "a>b", CodeSet((1,)), 10, 100, 5, 100, 0.5, 0.0))
    ranked = _thr(0, 1.0, 0.5)
    ranked.extra["learning_counts"] = [1, 2, 3]
    assert not replicable(ranked)
    # a learner's label events, at one query and joint over the model's queries
    ca, cb = CodeCounts(1000, {0: 600, 1: 100, 3: 300}), CodeCounts(1000, {0: 700, 1: 50, 2: 250})
    labels = label_candidates(ca, cb, 2, pair_index=0, n_confirm=10_000, alpha=0.05,
                              claim=Claim(1.0))
    assert {c.event.encoding for c in labels} == {"value", "bits"}
    assert all(replicable(c) for c in labels)


def test_a_label_seen_rarely_by_chance_is_replaced_by_a_common_one():
    """A searched pair can make a label rare at one query (lwy-n3, seed 1: 29 against 12 of
    20,000 exploration runs; in a variant of the search not kept, plug-in planning confirmed
    0.056 on it, 0.503 with replication). Planned one standard error toward no leak
    (`audit.events._planning_rates`), a common label at another query (2,811 against 1,654)
    outranks it outright. A rarer label with a larger ratio (60 against 20) still outranks the
    common one, as a real rare label must (df-real's designs: 133 against 47, confirmed 0.886
    where the common label gives 0.80), so fresh runs decide: a leak that does not show again is
    replaced by the common label, one that does stays."""
    n = 20_000
    claim = Claim(1.0, scope="prediction")

    def candidates(rare_a: int, rare_b: int):
        ca = CodeCounts(n, {1: rare_a, 2: 2811, 0: n - 2811 - rare_a})    # code = y0 + 2 y1
        cb = CodeCounts(n, {1: rare_b, 2: 1654, 0: n - 1654 - rare_b})
        return label_candidates(ca, cb, 2, pair_index=0, n_confirm=200_000, alpha=0.05,
                                claim=claim)

    chosen = max(candidates(29, 12), key=lambda c: c.score)
    assert chosen.event.columns == (1,) and chosen.k_p == 2811          # the common label
    cands = candidates(60, 20)
    chosen = max(cands, key=lambda c: c.score)
    assert chosen.event.columns == (0,) and chosen.k_p == 60            # the rare label
    short = shortlist(cands, [chosen])
    common = next(c for c in short if c.event.columns == (1,) and c.direction == "a>b"
                  and c.event.codes == (1,))
    counts = [(19, 18) if c is chosen else (2802, 1601) if c is common else (n // 2, n // 2)
              for c in short]
    again = with_replication(short, counts, n, n_confirm=200_000, alpha=0.05, claim=claim)
    out, replaced = reconcile([chosen], again)
    assert out[0].event == common.event and replaced[0]["replicated_expected"] == 0.0
    # a rare label that is real replicates and stays
    counts = [(62, 19) if c is chosen else (2802, 1601) if c is common else (n // 2, n // 2)
              for c in short]
    again = with_replication(short, counts, n, n_confirm=200_000, alpha=0.05, claim=claim)
    out, replaced = reconcile([chosen], again)
    assert out[0].event == chosen.event and not replaced


def test_a_learner_audit_replicates_its_chosen_label_on_the_chosen_pair():
    learner = algorithms.get("lwy-n1")
    r = audit_learner(learner, explore_runs=5_000, confirm_runs=20_000, seed=0,
                      runner=LocalRunner())
    rep = r.search["replication"]
    assert rep["runs_per_side"] == 5_000 and rep["pairs"] == 1
    assert rep["shortlist"][0]["event"] == r.witness.event_text
    assert all(c["family"] == "labels" and c["pair_index"] == r.witness.pair_index
               for c in rep["shortlist"])
    assert rep["replaced"] == [] and rep["shortlist"][0]["replicated"][2] == 5_000


def test_shortlist_takes_the_chosen_then_the_best_of_the_same_pair():
    chosen = [_thr(0, 50.0, 0.9)]
    others = [_thr(1, 0.0, 0.95)] + [_thr(0, float(t), 0.8 - 0.01 * t) for t in range(20)] \
        + [Candidate(0, "a>b", CodeSet((1,)), 10, 100, 5, 100, 0.99, 0.0)]
    short = shortlist(others + chosen, chosen)
    assert short[0] is chosen[0]
    assert len(short) == SHORTLIST
    assert all(c.pair_index == 0 and isinstance(c.event, Threshold) for c in short)
    assert [c.event.threshold for c in short[1:]] == [float(t) for t in range(SHORTLIST - 1)]
    assert shortlist(others, [others[-1]]) == []    # nothing chosen is a threshold: no runs


def test_replicated_prediction_is_planned_on_the_fresh_counts_alone():
    c = _thr(0, 1.0, 0.9, direction="b>a")
    (r,) = with_replication([c], [(300, 500)], 1000, n_confirm=10_000, alpha=0.05, claim=CLAIM)
    assert r.extra["replicated"] == [500, 300, 1000]      # "b>a": p counts input b
    p, q = _tail_safe_rates(np.array([500]), np.array([300]), 1000, 1000)
    eps, delta = expected_bounds(p, q, 10_000, 0.05, 0.1, 0.0)
    assert r.extra["replicated_expected_epsilon"] == pytest.approx(float(eps[0]))
    assert r.expected_epsilon == 0.9                      # exploration's prediction is kept
    assert "replicated" not in c.extra                    # inputs are not modified


def _replicated(c, eps):
    c.extra = {**c.extra, "replicated": [0, 0, 1], "replicated_expected_epsilon": eps,
               "replicated_expected_delta": 0.0}
    return c


def test_a_pick_that_does_not_replicate_is_replaced_by_the_best_replicated():
    pick, a, b = _thr(0, 9.0, 0.7), _thr(0, 1.0, 0.5), _thr(0, 2.0, 0.6)
    short = [_replicated(pick, 0.0), _replicated(a, 0.4), _replicated(b, 0.3)]
    out, replaced = reconcile([pick], short)
    assert out[0].event == a.event and out[0].extra["replaces"] == pick.event.describe()
    assert replaced[0]["by_replicated_expected"] == 0.4 and replaced[0]["replicated_expected"] == 0.0


@pytest.mark.parametrize("own, best", [(0.25, 0.4), (0.0, 0.0), (0.5, 0.3),
                                       (0.0, 0.34)])   # last: the best is under half the promise
def test_a_pick_that_replicates_or_has_no_better_replicated_rival_stays(own, best):
    pick, a = _thr(0, 9.0, 0.7), _thr(0, 1.0, 0.5)
    out, replaced = reconcile([pick], [_replicated(pick, own), _replicated(a, best)])
    assert out[0].event == pick.event and not replaced


def test_two_chosen_events_are_not_replaced_by_the_same_one():
    p1, p2, a, b = _thr(0, 9.0, 0.6), _thr(0, 8.0, 0.5), _thr(0, 1.0, 0.5), _thr(0, 2.0, 0.4)
    short = [_replicated(p1, 0.0), _replicated(p2, 0.0), _replicated(a, 0.4), _replicated(b, 0.3)]
    out, replaced = reconcile([p1, p2], short)
    assert [c.event.threshold for c in out] == [1.0, 2.0] and len(replaced) == 2


def _dpsniper_audit(name, runs, seed):
    m = algorithms.get(name)
    return audit(m, m.pairs[:1], explore_runs=runs // 10, confirm_runs=runs, seed=seed,
                 confidence=0.9)


def test_laplace_seed_13_no_longer_confirms_a_chance_tail():
    # DP-Sniper's convention at 2e6: exploration's best, `output >= 73.8` for b over a, was 0
    # counts against a chance few; before replication the audit confirmed 0.0 (true 0.1)
    r = _dpsniper_audit("lit-laplace", 2_000_000, 13)
    rep = r.search["replication"]
    assert rep["runs_per_side"] == 200_000 and rep["pairs"] == 1
    assert len(rep["replaced"]) == 1 and rep["replaced"][0]["replicated_expected"] == 0.0
    assert r.witness.event_text == rep["replaced"][0]["by"]
    assert 0.09 < r.epsilon_lower <= 0.1 + 1e-9 and not r.violation
    assert any(n.startswith("replicated: exploration's choice `output >= 73.8") for n in r.notes)
    saved = json.loads(json.dumps(r.to_dict()))["search"]["replication"]
    assert saved["replaced"][0]["by"] == r.witness.event_text


def test_a_pick_that_replicates_is_confirmed_as_explored():
    r = _dpsniper_audit("lit-laplace", 2_000_000, 0)
    rep = r.search["replication"]
    assert rep["replaced"] == [] and rep["events"] >= 2
    assert rep["shortlist"][0]["event"] == r.witness.event_text
    assert rep["shortlist"][0]["replicated"][2] == 200_000


@pytest.mark.parametrize("name", ["dp-rr", "lit-svt1"])
def test_code_set_outputs_draw_no_replication_runs(name):
    # randomized response (two codes: prefix sets only) and sparse vector's answer vectors
    # (ranked on a learning sample already, audit.crossfit)
    m = algorithms.get(name)
    r = audit(m, m.pairs[:1], explore_runs=20_000, confirm_runs=50_000, seed=0)
    assert "replication" not in r.search


def test_replication_runs_are_a_phase_of_their_own():
    used = {auditor.EXPLORE, auditor.CONFIRM, auditor.PILOT, auditor.SEARCH, learned.LEARN,
            staged.EXPLORE_STAGE, staged.EXPLORE_VALIDATE}
    assert REPLICATE not in used


@pytest.mark.parametrize("seed", [0, 3, 7])
def test_a_leak_that_lives_in_a_thin_tail_is_kept(seed):
    # report noisy max releasing the exponential mechanism's noisy value (eps = inf): the leak
    # is in thin tails, which a stricter plan on exploration's counts gave up (mean 0.80 -> 0.42
    # over 20 seeds at 2e6); on fresh runs such a tail shows again and is kept
    r = _dpsniper_audit("lit-rnm-exp-value", 2_000_000, seed)
    assert r.search["replication"]["replaced"] == []
    assert r.violation


class NumpyLaplaceHistogram(NoisyHistogram):
    """`lit-histogram` drawing its noise with ``rng.laplace``, as it did before `laplace_noise`."""

    def sample(self, inp, runs, rng):
        return rng.laplace(0.0, self.scale, size=(runs, self.n)) + self.vector(inp, self.n)


def test_a_sequential_audit_that_explored_to_its_budget_replicates_its_choice():
    # the noisy histogram (true 0.1) with numpy's Laplace sampler (the draws this seed was found
    # on; `lit-histogram` now draws by `laplace_noise`), DP-Sniper's convention, sequential:
    # exploration's pick, a far tail of the pairwise learned score, has 0 expected on fresh runs;
    # without replication this audit confirmed 0.0 (seeds 0-19: mean 0.0835 -> 0.0899)
    m = NumpyLaplaceHistogram()
    r = audit(m, m.pairs[:1], explore_runs=200_000, confirm_runs=2_000_000, seed=16,
              confidence=0.9, sequential=True)
    assert r.sequential["explore"]["stopped"] == "budget"
    (rep,) = r.search["replication"]["replaced"]
    assert rep["chosen"].startswith("learned score (logistic, pairwise) >= ")
    assert rep["replicated_expected"] == 0.0 and r.witness.event_text == rep["by"]
    assert 0.08 < r.epsilon_lower <= 0.1 + 1e-9 and not r.violation
    assert r.sequential["stopped"] == "futility" and r.sequential["anytime_valid"]


def test_a_sequential_exploration_that_stopped_early_keeps_its_validated_choice():
    # the scale bug (true 10): exploration stops at its first stage on an event it counted
    # again on fresh runs (audit.staged); replicating it once more would only spend runs
    m = algorithms.get("lit-histogram-bug")
    r = audit(m, m.pairs[:1], explore_runs=200_000, confirm_runs=2_000_000, seed=0,
              confidence=0.9, sequential=True)
    assert r.sequential["explore"]["stopped"] == "violation expected"
    assert "replication" not in r.search and r.violation


def test_event_counter_shares_a_statistic_and_counts_as_each_event_would():
    rng = np.random.default_rng(0)
    out = rng.normal(size=(5000, 3))
    evs = (Threshold((1.0, 0.0, 0.0), 0.3, "ge", "x"), Threshold((1.0, 0.0, 0.0), 0.3, "lt", "x"),
           Threshold((1.0, 0.0, 0.0), -1.0, "ge", "x"), Threshold((1.0, 1.0, 1.0), 0.0, "ge", "sum"),
           Threshold((1.0, 0.0, 0.0), 0.3, "ge", "x"))
    calls = []

    class Counting(Threshold):
        def statistic(self, outputs):
            calls.append(self.weights)
            return super().statistic(outputs)

    counted = tuple(Counting(e.weights, e.threshold, e.side, e.label) for e in evs)
    got = EventCounter(counted)(out).counts.tolist()
    assert got == [int(np.count_nonzero(e.contains(out))) for e in evs]
    assert sorted(calls) == [(1.0, 0.0, 0.0), (1.0, 1.0, 1.0)]   # one evaluation per statistic
    # a half-line of another kind is counted by its own `contains`, never by the shared path
    class Above(Threshold):
        def contains(self, outputs):
            return self.statistic(outputs) > self.threshold

    odd = Above((1.0, 0.0, 0.0), 0.3, "gt", "x")
    assert EventCounter((evs[0], odd))(out).counts.tolist() == \
        [int(np.count_nonzero(evs[0].contains(out))), int(np.count_nonzero(out[:, 0] > 0.3))]
    codes = CodeSet((1, 2))
    ints = rng.integers(0, 4, size=1000)
    assert EventCounter((codes,))(ints).counts.tolist() == [int(np.count_nonzero(np.isin(ints, [1, 2])))]


def test_a_small_leak_is_not_traded_for_noise():
    # the figures of lit-numerical-svt, default pairs, 2e6, seed 0 (measured): exploration's
    # choice predicted 0.0157 plans to 0 on fresh runs, the shortlist's best to 0.0073; keeping
    # the choice confirms 0.0203, the replacement confirmed 0.0112
    pick, a = _thr(0, 9.0, 0.0157), _thr(0, 1.0, 0.0053)
    out, replaced = reconcile([pick], [_replicated(pick, 0.0), _replicated(a, 0.0073)])
    assert out[0].event == pick.event and not replaced


class _Recording(LocalRunner):
    """The in-process runner, recording the key of every job it runs."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.keys = []

    def run(self, jobs, seed, **kw):
        self.keys += [tuple(j.key) for j in jobs]
        return super().run(jobs, seed, **kw)


def test_replication_runs_are_journaled_and_named_in_progress(tmp_path):
    lap = algorithms.get("lit-laplace")
    kw = dict(explore_runs=20_000, confirm_runs=60_000, seed=13)
    plain = audit(lap, lap.pairs[:1], runner=LocalRunner(chunk_runs=10_000), **kw)
    runner = _Recording(chunk_runs=10_000)
    with Journal(tmp_path) as j:
        audit(lap, lap.pairs[:1], journal=j, runner=runner, **kw)
        written = j.written
    assert (REPLICATE, 0, 0) in runner.keys and (REPLICATE, 0, 1) in runner.keys
    with Journal(tmp_path) as j:
        again = audit(lap, lap.pairs[:1], journal=j, runner=LocalRunner(chunk_runs=10_000), **kw)
        assert j.written == 0 and j.hits == written     # replication chunks came back too
    assert again.search["replication"] == plain.search["replication"]
    stream = io.StringIO()
    shown = ProgressRunner(LocalRunner(chunk_runs=10_000), stream=stream, enabled=True)
    audit(lap, lap.pairs[:1], runner=shown, **kw)
    assert "replicate" in stream.getvalue()
