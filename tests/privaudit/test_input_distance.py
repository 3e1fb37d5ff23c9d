"""Mechanism input neighbour relations: declared, checked, refused with the distance found."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

import algorithms
from audit import audit
from audit.errors import PrivauditError
from audit.neighbours import InputDistance, check_input_neighbours, input_distance, parse_input_distance
from privaudit.cli import main

FAST = ["--runner", "local", "--quiet", "--runs", "2000", "--explore-runs", "1000"]


def test_every_registered_mechanism_declares_its_relation_and_its_pairs_satisfy_it():
    for name in algorithms.names():
        if algorithms.spec(name).unavailable() or algorithms.info(name)["kind"] != "mechanism":
            continue  # a lib- adapter whose library is not installed
        for variant in algorithms.info(name)["variants"]:
            m = algorithms.get(name, variant=variant) if variant != "correct" else algorithms.get(name)
            rel = m.input_distance
            assert isinstance(rel, InputDistance), name
            # datasets that gain or lose a record (lib- adapters) are measured as multisets; a
            # histogram under add-remove is an answer vector at l1 distance 1 instead
            assert rel.norm != "add-remove" or m.claim.neighbours == "add-remove", name
            for i, (a, b) in enumerate(m.pairs):
                check_input_neighbours(a, b, rel, f"{name} {variant} pair {i}")


def test_em_pair_scales_with_sensitivity():
    m = algorithms.get("dp-em", sensitivity=2.5)
    a, b = m.pairs[0]
    assert input_distance(a, b, "linf") == pytest.approx(2.5)


@pytest.mark.parametrize("a, b, norm, d", [
    ([0, 0, 0], [1, 1, 1], "hamming", 3), ([0, 0, 0], [1, 1, 1], "l1", 3),
    ([0, 0], [3, 4], "l2", 5), ([0, 0], [3, -4], "linf", 4), ([0], [0, 1], "l1", float("inf")),
    # add-remove: the size of the multiset symmetric difference of the records
    ([1, 2], [2, 1, 5], "add-remove", 1), ([], [3], "add-remove", 1), ([1], [2], "add-remove", 2),
    ([1, 1], [1], "add-remove", 1), ([1, 1], [1, 2, 2], "add-remove", 3),
    ([[1, 2], [3, 4]], [[3, 4]], "add-remove", 1), ([[1, 2]], [[1, 2, 3]], "add-remove", float("inf")),
])
def test_distances(a, b, norm, d):
    assert input_distance(np.array(a), np.array(b), norm) == d


@pytest.mark.parametrize("spec", ["l3:1", "l1:-1", "add-remove:-1", "l1:nan", "l1:x", "", 5, {"norm": "l1", "x": 1}])
def test_bad_relations_are_refused(spec):
    with pytest.raises(PrivauditError):
        parse_input_distance(spec)


def test_far_pairs_are_refused_with_the_distance(tmp_path, capsys):
    # the reproduction: all five records differ; a false alarm before this check
    nn = tmp_path / "nn.json"
    nn.write_text(json.dumps([[[0, 0, 0, 0, 0], [1, 1, 1, 1, 1]]]))
    code = main(["audit", "dp-laplace", "--pairs", str(nn), *FAST])
    err = capsys.readouterr().err
    assert code == 2 and "not neighbours: hamming distance 5 > 1" in err


def test_undeclared_blackbox_is_audited_and_says_unchecked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "undecl.py").write_text(textwrap.dedent('''
        from audit import Claim
        class Coin:
            name = "undecl"
            claim = Claim(1.0)
            pairs = [[[0, 0], [5, 5]]]
            def sample(self, inp, runs, rng):
                return rng.integers(0, 2, size=runs)
        coin = Coin()
        '''))
    out = tmp_path / "o"
    code = main(["audit", "--blackbox", "undecl:coin", "--out", str(out), *FAST])
    text = capsys.readouterr().out
    assert code == 0 and "neighbourhood not checked" in text
    assert any("neighbourhood not checked" in n for n in json.loads((out / "result.json").read_text())["notes"])
    assert "neighbourhood not checked" in (out / "report.md").read_text()
    assert "neighbourhood not checked" in (out / "report.html").read_text()
    # declared on the command line: the same pair is refused
    code = main(["audit", "--blackbox", "undecl:coin", "--input-distance", "l1:1", *FAST])
    assert code == 2 and "l1 distance 10 > 1" in capsys.readouterr().err


def test_python_api_checks_declared_and_given_relations():
    m = algorithms.get("dp-laplace")
    with pytest.raises(PrivauditError, match="hamming distance 2 > 1"):
        audit(m, [(np.array([0.0, 0.0]), np.array([1.0, 1.0]))], explore_runs=1000, confirm_runs=1000)
    r = audit(m, explore_runs=1000, confirm_runs=1000)
    assert any(n.startswith("neighbourhood checked") for n in r.notes)


def test_ci_key(tmp_path):
    (tmp_path / "pairs.json").write_text(json.dumps([[[0], [3]]]))
    cfg = tmp_path / "ci.toml"
    cfg.write_text(textwrap.dedent('''
        [defaults]
        runner = "local"
        explore_runs = 1000
        confirm_runs = 2000
        [[audit]]
        algorithm = "dp-rr"
        pairs = "pairs.json"
        input_distance = "linf:1"
        '''))
    assert main(["ci", str(cfg), "--check"]) == 2


def test_add_remove_pairs_are_checked_as_multisets():
    """A record added (any position) passes; a record replaced (two moves) is refused naming the
    relation; a bound of 2 admits it."""
    rel = parse_input_distance("add-remove:1")
    assert check_input_neighbours(np.array([3.0, 1.0]), np.array([1.0, 7.0, 3.0]), rel) == 1
    with pytest.raises(PrivauditError, match="add-remove distance 2 > 1"):
        check_input_neighbours(np.array([1.0]), np.array([2.0]), rel)
    assert check_input_neighbours(np.array([1.0]), np.array([2.0]), InputDistance("add-remove", 2)) == 2
