"""Reductions, events and the local runner: counts, determinism, chunking."""

import json

import numpy as np
import pytest

import algorithms
from audit import BlackBoxError, Claim, Dataset
from audit.reducers import (CodeCounter, CodeSet, EventCounter, HistogramCounter, Threshold,
                            event_from_dict, reduction_from_dict)
from audit.runners import Job, LocalRunner, call_blackbox


def test_code_counts_value_bits_rows():
    out = np.array([0, 1, 1, 3, 70000])
    c = CodeCounter(None, "value")(out)
    assert c.table == {0: 1, 1: 2, 3: 1, 70000: 1} and c.runs == 5
    labels = np.array([[1, 0, 1], [1, 0, 1], [0, 0, 0]], dtype=np.int8)
    assert CodeCounter(None, "bits")(labels).table == {5: 2, 0: 1}
    rows = np.array([[2, -1], [2, -1], [0, 0]])
    assert CodeCounter(None, "rows")(rows).table == {(2, -1): 2, (0, 0): 1}


def test_reductions_add_and_roundtrip_json():
    a = CodeCounter(None, "rows")(np.array([[1, 2], [3, 4]]))
    b = CodeCounter(None, "rows")(np.array([[1, 2]]))
    s = a + b
    assert s.runs == 3 and s.table[(1, 2)] == 2
    for red in (s, EventCounter((CodeSet((1,)),))(np.array([1, 0, 1])),
                HistogramCounter(((1.0,),), ((0.0, 1.0),))(np.array([-1.0, 0.5, 2.0]))):
        back = reduction_from_dict(json.loads(json.dumps(red.to_dict())))
        assert back.to_dict() == red.to_dict()


def test_events_membership_and_roundtrip():
    labels = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.int8)
    e = CodeSet((1,), (1,), "value")                 # prediction at query 1 is 1
    assert e.contains(labels).tolist() == [False, True, True]
    joint = CodeSet((3,), (0, 1), "bits")             # both predictions are 1
    assert joint.contains(labels).tolist() == [False, False, True]
    t = Threshold((1.0,), 0.5, "ge")
    assert t.contains(np.array([0.1, 0.5, 0.9])).tolist() == [False, True, True]
    for ev in (e, joint, t, CodeSet(((1, 2), (3, 4)), None, "rows")):
        assert event_from_dict(json.loads(json.dumps(ev.to_dict()))) == ev


def test_histogram_bins_match_threshold_events():
    x = np.random.default_rng(0).normal(size=1000)
    edges = (-1.0, 0.0, 1.0)
    h = HistogramCounter(((1.0,),), (edges,))(x)
    for i, e in enumerate(edges):
        assert h.counts[0, i + 1:].sum() == np.count_nonzero(x >= e)


def test_local_runner_is_deterministic_and_chunk_invariant_in_law():
    m = algorithms.get("dp-rr")
    job = Job(m, np.array([1]), 100_003, CodeCounter(), (0, 0, 0))
    r1 = LocalRunner(chunk_runs=10_000).run([job], seed=7)[0]
    r2 = LocalRunner(chunk_runs=10_000).run([job], seed=7)[0]
    r3 = LocalRunner(chunk_runs=10_000).run([job], seed=8)[0]
    assert r1.table == r2.table and r1.runs == 100_003
    assert r1.table != r3.table


def test_runner_keys_give_independent_streams():
    m = algorithms.get("dp-laplace")
    jobs = [Job(m, np.array([0.0]), 1000, HistogramCounter(((1.0,),), ((0.0,),)), (0, i, 0))
            for i in range(2)]
    a, b = LocalRunner().run(jobs, seed=0)
    assert a.counts.tolist() != b.counts.tolist()


class Raising:
    name, claim = "raiser", Claim(1.0)

    def sample(self, inp, runs, rng):
        raise RuntimeError("boom")


class Garbage:
    name, claim = "garbage", Claim(1.0)

    def __init__(self, out):
        self.out = out

    def sample(self, inp, runs, rng):
        return self.out(runs)


class BadLearner:
    name, claim = "bad", Claim(1.0, scope="prediction")

    def predict(self, data, queries, runs, rng):
        return np.full((runs, len(queries)), 0.7)


@pytest.mark.parametrize("box, msg", [
    (Raising(), "raised RuntimeError: boom"),
    (Garbage(lambda r: np.full(r, np.inf)), "infinite"),  # NaN is "no value" (audit.mixed)
    (Garbage(lambda r: np.zeros(r + 1)), "one entry per run"),
    (Garbage(lambda r: "hello"), "dtype"),
    (Garbage(lambda r: np.zeros((r, 2, 2))), "outputs must be"),
])
def test_bad_black_boxes_are_named(box, msg):
    with pytest.raises(BlackBoxError, match=msg):
        call_blackbox(box, np.array([0]), None, 10, np.random.default_rng(0))


def test_learner_must_return_labels():
    d = Dataset([[0.0]], [0])
    with pytest.raises(BlackBoxError, match="non-label values"):
        call_blackbox(BadLearner(), d, np.array([[0.0]]), 5, np.random.default_rng(0))
