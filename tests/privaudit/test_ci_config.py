"""The CI config: every problem rejected before anything runs, with file, line, key and reason."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from privaudit.ci_config import ConfigError, load_config, parse_config, per_audit_confidence
from audit.types import Claim

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "privacy-ci.toml"


def _problems(text: str, tmp_path: Path) -> list[str]:
    p = tmp_path / "ci.toml"
    p.write_text(textwrap.dedent(text))
    with pytest.raises(ConfigError) as info:
        load_config(p)
    return info.value.problems


def test_example_config_is_valid():
    cfg = load_config(EXAMPLE)
    assert cfg.confidence == 0.95 and cfg.runner == "local" and cfg.seed == 0
    assert len(cfg.audits) >= 8
    expects = {a.expect for a in cfg.audits}
    assert expects == {"pass", "violation"}
    assert len({a.name for a in cfg.audits}) == len(cfg.audits)
    assert cfg.audit_confidence == pytest.approx(1 - 0.05 / len(cfg.audits))
    over = next(a for a in cfg.audits if a.name == "randomized response, over-claimed")
    assert over.claim == Claim(0.5, 0.0, "replace-one", "model")   # merged into dp-rr's claim


def test_minimal_config_and_defaults(tmp_path):
    cfg = parse_config('[[audit]]\nalgorithm = "dp-rr"\n', "ci.toml")
    a = cfg.audits[0]
    assert (a.name, a.expect, a.explore_runs, a.confirm_runs, a.tests, a.seed) == \
        ("dp-rr", "pass", 100_000, 1_000_000, 1, 0)
    assert cfg.runner == "local" and cfg.correction == "bonferroni over 1 audit"
    cfg = parse_config('[[audit]]\nalgorithm = "dp-rr"\nparams = { variant = "bv-rr-eps" }\n'
                       'expect = "violation"\nseed = 5\nconfirm_runs = 1000\n', "ci.toml")
    assert cfg.audits[0].name == "dp-rr[bv-rr-eps]" and cfg.audits[0].seed == 5


def test_per_audit_confidence():
    assert per_audit_confidence(0.95, 1) == pytest.approx(0.95)
    assert per_audit_confidence(0.95, 10) == pytest.approx(0.995)
    assert per_audit_confidence(0.9, 4) == pytest.approx(0.975)


def test_lines_keys_and_reasons(tmp_path):
    probs = _problems('''\
        [defaults]
        confidence = 1.5
        seed = -1
        runner = "cluster"
        colour = "blue"

        [[audit]]
        name = "rr"
        algorithm = "dp-rr"
        expect = "fail"

        [[audit]]
        algorithm = "dp-rr"
        params = { epsilon = "one", variant = "bv-nope", speed = 3 }
        explore_runs = 0
        ''', tmp_path)
    text = "\n".join(probs)
    path = str(tmp_path / "ci.toml")
    assert f"{path}:2: [defaults]: confidence: must be in (0, 1) (e.g. 0.95), got 1.5" in probs
    assert f"{path}:3: [defaults]: seed: must be a non-negative integer, got -1" in probs
    assert f"{path}:4: [defaults]: runner: must be one of 'local', 'ray', got 'cluster'" in probs
    assert any(p.startswith(f"{path}:5: [defaults]: colour: unknown key; valid: confidence") for p in probs)
    assert f"{path}:10: [[audit]] #1 ('rr'): expect: must be one of 'pass', 'violation', got 'fail'" in probs
    assert any(p.startswith(f"{path}:15: [[audit]] #2 ('dp-rr[bv-nope]'): explore_runs: must be a positive") for p in probs)
    assert len(probs) == 6, text        # the second audit stops at its own budget error


def test_registry_parameter_errors(tmp_path):
    probs = _problems('''\
        [[audit]]
        algorithm = "dp-rr"
        params = { epsilon = "one", variant = "bv-nope", speed = 3 }
        ''', tmp_path)
    path = str(tmp_path / "ci.toml")
    assert f"{path}:3: [[audit]] #1 ('dp-rr[bv-nope]'): params.epsilon: must be float like its " \
           f"default 1.0, got string 'one'" in probs
    assert any("params.variant: unknown variant 'bv-nope' of dp-rr; valid: correct, bv-rr-eps" in p
               for p in probs)
    assert any("params.speed: unknown parameter of dp-rr; valid: epsilon, flaw_rate, variant" in p
               for p in probs)


@pytest.mark.parametrize("body,needle", [
    ('algorithm = "dp-nothing"', "algorithm: unknown algorithm 'dp-nothing'; valid names:"),
    ('algorithm = "dp-rr"\nblackbox = "m:x"', "give exactly one of algorithm"),
    ('name = "x"', "give exactly one of algorithm"),
    ('blackbox = "nocolon"', "blackbox: must be \"module:attr\""),
    ('blackbox = "no_such_module_xyz:obj"', "cannot import module 'no_such_module_xyz'"),
    ('blackbox = "m:x"\nparams = { a = 1 }', "params: applies to registered algorithms"),
    ('algorithm = "dp-rr"\nclaim = { epsilon = -1.0 }', "claim: claim epsilon must be finite and >= 0"),
    ('algorithm = "dp-rr"\nclaim = { eps = 1.0 }', "claim.eps: unknown claim key"),
    ('algorithm = "dp-rr"\nclaim = 1.0', "claim: must be a table"),
    ('algorithm = "dp-rr"\nparams = { epsilon = -2.0 }', "epsilon must be in (0, inf), got -2.0"),
    ('algorithm = "dp-rr"\nconfirm_runs = 2.5', "confirm_runs: must be a positive integer, got float 2.5"),
    ('algorithm = "dp-rr"\nseed = true', "seed: must be a non-negative integer, got boolean True"),
    ('algorithm = "dp-rr"\nqueries = "q.json"', "queries: applies to learners"),
    ('algorithm = "dp-rr"\npairs = "missing.json"', "pairs: cannot read pairs file"),
    ('algorithm = "dp-rr"\nagainst = "paper"', "against: must be one of 'claim', 'certified'"),
])
def test_audit_table_errors(tmp_path, body, needle):
    probs = _problems("[[audit]]\n" + body + "\n", tmp_path)
    assert len(probs) == 1 and needle in probs[0], probs
    assert probs[0].startswith(str(tmp_path / "ci.toml") + ":")


def test_impossible_expectation_is_rejected(tmp_path):
    # 100 confirmation runs at per-audit confidence 0.95 cannot certify epsilon > ln(100/ln 40)
    # ~ 3.3, so a violation of a 5-DP claim can never be confirmed
    probs = _problems('''\
        [[audit]]
        algorithm = "dp-rr"
        params = { epsilon = 5.0, variant = "bv-rr-eps" }
        confirm_runs = 100
        expect = "violation"
        ''', tmp_path)
    assert len(probs) == 1 and ":5: " in probs[0]
    assert "no violation of 5-DP [replace-one, model scope] can ever be confirmed" in probs[0]
    # the same budget on a pass expectation is accepted but flagged as vacuous
    cfg = parse_config('[[audit]]\nalgorithm = "dp-rr"\nparams = { epsilon = 5.0 }\n'
                       'confirm_runs = 100\n', "ci.toml")
    assert "this pass is vacuous" in cfg.audits[0].warnings[0]
    # run, the entry's result says it once: the suite's warning, not the audit's own "powerless"
    # note beside it (the same fact)
    from audit.runners import LocalRunner
    from privaudit.ci_run import run_suite
    cfg = parse_config('[[audit]]\nalgorithm = "dp-rr"\nconfirm_runs = 5\nexplore_runs = 5\n',
                       "ci.toml")
    notes = run_suite(cfg, runner=LocalRunner()).entries[0].result.notes
    assert sum("vacuous" in n for n in notes) == 1 and not any(n.startswith("powerless")
                                                              for n in notes), notes


def test_structure_errors(tmp_path):
    probs = _problems('[defaults]\nrunner = "local"\naddress = "auto"\n[[audit]]\nalgorithm = "dp-rr"\n',
                      tmp_path)
    assert probs == [f"{tmp_path / 'ci.toml'}:3: [defaults]: address: needs runner = \"ray\" "
                     f"(the local runner joins no cluster)"]
    probs = _problems('[defaults]\nseed = 1\n', tmp_path)
    assert probs == [f"{tmp_path / 'ci.toml'}: top level: no audits: add at least one [[audit]] table"]
    probs = _problems('audit = 3\n', tmp_path)
    assert "audit: must be an array of tables" in probs[0]
    probs = _problems('[[audit]]\nalgorithm = "dp-rr"\n[[audit]]\nalgorithm = "dp-rr"\n', tmp_path)
    assert probs == [f"{tmp_path / 'ci.toml'}:3: [[audit]] #2 ('dp-rr'): name: duplicate name "
                     f"'dp-rr' (also audit #1); names identify audits in JUnit and baselines: give "
                     f"each a distinct name"]


def test_toml_syntax_error_names_line(tmp_path):
    probs = _problems('[defaults]\nconfidence = 0.95\nseed = = 3\n', tmp_path)
    assert len(probs) == 1 and probs[0].startswith(f"{tmp_path / 'ci.toml'}:3: not valid TOML:")


def test_unreadable_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the CI config"):
        load_config(tmp_path / "absent.toml")


def test_subtable_params_and_user_blackbox(tmp_path):
    """[audit.params] sub-tables, a blackbox next to the config, and a pairs file."""
    (tmp_path / "mymech.py").write_text(textwrap.dedent('''\
        import numpy as np
        from audit import Claim

        class Coin:
            name = "coin"
            claim = Claim(3.0)
            def sample(self, inp, runs, rng):
                p = 0.9 if int(np.asarray(inp).ravel()[0]) else 0.1
                return (rng.random(runs) < p).astype(np.int8)

        coin = Coin()
        '''))
    (tmp_path / "pairs.json").write_text("[[[0], [1]]]")
    p = tmp_path / "ci.toml"
    p.write_text(textwrap.dedent('''\
        [[audit]]
        name = "rr"
        algorithm = "dp-rr"
        [audit.params]
        epsilon = 0.5
        [[audit]]
        name = "coin"
        blackbox = "mymech:coin"
        pairs = "pairs.json"
        claim = { epsilon = 1.0 }
        '''))
    cfg = load_config(p)
    assert cfg.audits[0].params == {"epsilon": 0.5} and cfg.audits[0].claim.epsilon == 0.5
    coin = cfg.audits[1]
    assert coin.obj.name == "coin" and coin.claim.epsilon == 1.0 and coin.pairs == [[[0], [1]]]
    # a key inside the [audit.params] sub-table is located on its own line
    probs = _problems('[[audit]]\nname = "rr"\nalgorithm = "dp-rr"\n[audit.params]\nepsilon = "x"\n',
                      tmp_path)
    assert probs[0].startswith(f"{tmp_path / 'ci.toml'}:4: ") and "params.epsilon" in probs[0]
