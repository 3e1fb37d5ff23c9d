"""The `privaudit` CLI: list, audit, exit codes and one-line errors for bad input."""

import json
import sys
import textwrap

import pytest

from privaudit.cli import main

FAST = ["--runner", "local", "--quiet", "--runs", "50000", "--explore-runs", "5000"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_plain_and_json(capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0 and "dp-rr" in out and "bv-rr-eps" in out
    code, out, _ = run(capsys, "list", "--json")
    rows = json.loads(out)
    names = {r["name"] for r in rows}
    assert {"dp-rr", "dp-laplace", "dp-gaussian", "dp-em"} <= names
    rr = next(r for r in rows if r["name"] == "dp-rr")
    assert rr["claim"]["epsilon"] == 1.0 and "bv-rr-det" in rr["variants"] and rr["paper"]


def test_audit_pass_and_violation_exit_codes(capsys):
    code, out, _ = run(capsys, "audit", "dp-rr", *FAST)
    assert code == 0 and "PASS" in out
    code, out, _ = run(capsys, "audit", "dp-rr", "--variant", "bv-rr-eps", *FAST)
    assert code == 1 and "VIOLATION" in out and "witness" in out


def test_audit_json_and_out_dir(capsys, tmp_path):
    code, out, _ = run(capsys, "audit", "dp-laplace", "--param", "epsilon=0.5", "--json",
                       "--out", str(tmp_path / "o"), *FAST)
    assert code == 0
    res = json.loads(out)
    assert res["claim"]["epsilon"] == 0.5 and res["params"] == {"epsilon": 0.5}
    stored = json.loads((tmp_path / "o" / "result.json").read_text())
    assert stored["epsilon_lower"] == res["epsilon_lower"]
    assert (tmp_path / "o" / "report.html").exists() and (tmp_path / "o" / "report.md").exists()


def test_claim_override(capsys):
    # randomized response with eps = 1 audited against a claim of 0.5: a real violation
    code, out, _ = run(capsys, "audit", "dp-rr", "--epsilon", "0.5", *FAST)
    assert code == 1 and "0.5-DP" in out


@pytest.mark.parametrize("argv, msg", [
    (["audit", "no-such-algo"], "unknown algorithm 'no-such-algo'"),
    (["audit", "dp-rr", "--param", "nope=1"], "unknown parameter 'nope'"),
    (["audit", "dp-rr", "--param", "epsilon"], "K=V"),
    (["audit", "dp-rr", "--param", "epsilon=abc"], "not a valid float"),
    (["audit", "dp-rr", "--variant", "bv-nope"], "unknown variant 'bv-nope'"),
    (["audit", "dp-rr", "--epsilon", "-1"], "epsilon must be finite and >= 0"),
    (["audit", "dp-rr", "--delta", "1"], "delta must be in [0, 1)"),
    (["audit", "dp-rr", "--confidence", "2"], "confidence"),
    (["audit", "dp-rr", "--runs", "0"], "--runs"),
    (["audit", "dp-rr", "--pairs", "/nonexistent/p.json"], "cannot read pairs file"),
    (["audit"], "name an ALGORITHM"),
    (["audit", "--blackbox", "nomodule_xyz:obj"], "cannot import module"),
    (["audit", "--blackbox", "json"], "module:attr"),
])
def test_bad_input_one_line_exit_2(capsys, argv, msg):
    code, out, err = run(capsys, *argv, "--runner", "local", "--quiet")
    assert code == 2
    lines = [l for l in err.strip().splitlines() if l]
    assert len(lines) == 1 and msg in lines[0], err


def test_blackbox_mechanism_with_pairs_file(capsys, tmp_path, monkeypatch):
    (tmp_path / "cli_testmech_leaky.py").write_text(textwrap.dedent("""
        import numpy as np
        from audit import Claim

        class Leaky:
            name = "leaky"
            claim = Claim(1.0)
            def sample(self, inp, runs, rng):
                # randomized response with eps = 3 while claiming 1
                keep = rng.random(runs) < np.exp(3) / (1 + np.exp(3))
                return np.where(keep, int(inp[0]), 1 - int(inp[0]))

        broken = Leaky()

        class Garbage(Leaky):
            def sample(self, inp, runs, rng):
                return np.full(runs, np.inf)  # NaN would mean "no value" (audit.mixed)
    """))
    (tmp_path / "pairs.json").write_text("[[[0], [1]]]")
    (tmp_path / "bad.json").write_text("[[0, 1")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("cli_testmech_leaky", None)  # a module of that name must not be cached
    code, out, _ = run(capsys, "audit", "--blackbox", "cli_testmech_leaky:broken", "--pairs", "pairs.json", *FAST)
    assert code == 1 and "leaky" in out, _
    code, _, err = run(capsys, "audit", "--blackbox", "cli_testmech_leaky:Garbage", "--pairs", "pairs.json", *FAST)
    assert code == 2 and "infinite" in err
    code, _, err = run(capsys, "audit", "--blackbox", "cli_testmech_leaky:broken", "--pairs", "bad.json", *FAST)
    assert code == 2 and "not valid JSON" in err
    sys.modules.pop("cli_testmech_leaky", None)


def test_csv_data_reader(tmp_path):
    from privaudit.loading import read_csv_dataset
    from audit import PrivauditError
    p = tmp_path / "d.csv"
    p.write_text("x1,x2,label\n0.5,1.0,1\n0.1,0.2,0\n")
    d = read_csv_dataset(str(p))
    assert d.n == 2 and d.d == 2 and d.y.tolist() == [1, 0]
    p.write_text("0.5,1.0,3\n")
    with pytest.raises(PrivauditError, match="labels in"):
        read_csv_dataset(str(p))
    p.write_text("0.5,abc,1\n0.1,0.2,0\n")
    with pytest.raises(PrivauditError, match="non-numeric"):
        read_csv_dataset(str(p))


def test_learner_pairs_file_must_hold_dataset_pairs(capsys, tmp_path):
    p = tmp_path / "pairs.json"
    p.write_text('[[{"X": [[0.0]], "y": [0]}]]')           # a pair with one dataset
    code, _, err = run(capsys, "audit", "df-em", "--pairs", str(p), *FAST)
    assert code == 2 and "item 0 must be a pair" in err
    p.write_text('[[{"X": [[0.0]]}, {"X": [[0.0]], "y": [1]}]]')   # no labels
    code, _, err = run(capsys, "audit", "df-em", "--pairs", str(p), *FAST)
    assert code == 2 and '"X" and "y"' in err
