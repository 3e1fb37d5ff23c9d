"""`privaudit audit --blackbox m:mech` with no pairs: the input search (issue 12, item 5).

A mechanism that declares its input neighbour relation and input length (attributes, or
--input-distance / --input-length) is audited on pairs found by `attacks.mechanism_search`;
without them the command says exactly what is missing (exit 2). Each audit below is one seeded
run at confidence 0.95, so the correct mechanism's PASS could only fail with probability <= 5 %
for a new seed, and never changes for this fixed one.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from privaudit.cli import main

MODULE = textwrap.dedent('''
    import numpy as np
    from audit import Claim

    class NoisyMaxValue:
        """Report noisy max releasing the value, Laplace(4) noise on 5 answers of linf
        sensitivity 1: (5/4)-DP, planted bug: claims 0.5."""
        name = "rnm-value-bug"
        claim = Claim(epsilon=0.5)
        input_distance = "linf:1"
        input_length = 5

        def sample(self, x, runs, rng):
            x = np.asarray(x, float)
            return (x[None, :] + rng.laplace(0.0, 4.0, size=(runs, x.size))).max(axis=1)

    class SumLaplace:
        """The Laplace mechanism on a sum (l1 sensitivity 1), scale 1: 1-DP, correct."""
        name = "sum-laplace"
        claim = Claim(epsilon=1.0)

        def sample(self, x, runs, rng):
            return np.asarray(x, float).sum() + rng.laplace(0.0, 1.0, size=runs)

    bug = NoisyMaxValue()
    correct = SumLaplace()
''')

FAST = ("--runs", "100000", "--explore-runs", "20000", "--runner", "local", "--quiet")


@pytest.fixture
def module_dir(tmp_path, monkeypatch):
    (tmp_path / "searchmech.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_declared_relation_and_length_search_finds_the_violation(module_dir, capsys):
    code = main(["audit", "--blackbox", "searchmech:bug", "--out", "out", *FAST])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "pairs found by the input search" in out and "linf distance <= 1" in out
    result = json.loads((module_dir / "out" / "result.json").read_text())
    assert result["violation"] and result["epsilon_lower"] > 0.5


def test_flags_declare_them_for_a_black_box_without_attributes(module_dir, capsys):
    code = main(["audit", "--blackbox", "searchmech:correct", "--input-distance", "l1:1",
                 "--input-length", "3", *FAST])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "pairs found by the input search" in out


@pytest.mark.parametrize("extra, needle", [
    ((), "input neighbour relation"),
    (("--input-distance", "l1:1"), "input length"),
    (("--input-length", "3"), "input neighbour relation"),
])
def test_no_pairs_and_nothing_declared_says_what_is_missing(module_dir, capsys, extra, needle):
    code = main(["audit", "--blackbox", "searchmech:correct", *extra, *FAST])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err


def test_input_length_with_pairs_is_refused(module_dir, capsys):
    (module_dir / "p.json").write_text("[[[0], [1]]]")
    code = main(["audit", "--blackbox", "searchmech:correct", "--pairs", "p.json",
                 "--input-length", "1", *FAST])
    assert code == 2 and "input length applies only" in capsys.readouterr().err


def test_ci_config_searches_inputs_and_refuses_what_it_cannot(module_dir, capsys):
    """The CI gate takes the same decision: input_length / input_distance keys, or refusal
    at validation (exit 2) naming the missing declaration."""
    (module_dir / "ci.toml").write_text(textwrap.dedent('''
        [defaults]
        runner = "local"
        explore_runs = 20000
        confirm_runs = 100000

        [[audit]]
        name = "bug-found-by-search"
        blackbox = "searchmech:bug"
        expect = "violation"

        [[audit]]
        name = "correct-searched"
        blackbox = "searchmech:correct"
        input_distance = "l1:1"
        input_length = 3
        expect = "pass"
    '''))
    code = main(["ci", "ci.toml", "--out", "ci-out"])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    (module_dir / "bad.toml").write_text(textwrap.dedent('''
        [[audit]]
        name = "nothing-declared"
        blackbox = "searchmech:correct"
        expect = "pass"
    '''))
    code = main(["ci", "bad.toml"])
    err = capsys.readouterr().err
    assert code == 2 and "input neighbour relation" in err, err
