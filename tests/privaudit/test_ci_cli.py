"""`privaudit ci`: exit codes, JUnit XML, Markdown summary, baselines.

The example suite's verdicts are fixed by its seed. Its false-alarm probability over seeds is at
most 0.05 (suite confidence 0.95, Bonferroni over its audits); its planted bugs double the loss
(epsilon_lower ~1.8-2.2 against claims of 1) while 200,000 confirmation runs resolve log-ratios
to a few hundredths, so a miss would need a many-sigma deviation.
"""

from __future__ import annotations

import json
import re
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from privaudit.cli import main
from audit.suite import SuiteEntry, SuiteResult
from reports.junit import render_junit

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "privacy-ci.toml"


def _cases(path: Path) -> dict:
    root = ET.parse(path).getroot()
    return {c.get("name"): c for c in root.iter("testcase")}


def test_example_passes_then_flipped_fixture_fails(tmp_path, capsys):
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    assert main(["ci", str(EXAMPLE), "--junit", str(junit), "--summary", str(summary), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "randomized response, correct" in out and "FAIL" not in out
    cases = _cases(junit)
    n = len(cases)
    assert n >= 8 and not any(c.find("failure") is not None or c.find("error") is not None
                              for c in cases.values())
    md = summary.read_text()
    assert "✅ **OK**" in md and "at most 0.05" in md

    # flip one planted-bug fixture's expectation: the gate must fail, naming it
    text = EXAMPLE.read_text()
    start = text.index('name = "Laplace, noise scale halved"')
    i = text.index('expect = "violation"', start)
    flipped = tmp_path / "flipped.toml"
    flipped.write_text(text[:i] + 'expect = "pass"' + text[i + len('expect = "violation"'):])
    junit2 = tmp_path / "junit2.xml"
    assert main(["ci", str(flipped), "--junit", str(junit2), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "FAIL Laplace, noise scale halved: privacy violation: epsilon_lower = " in out
    cases = _cases(junit2)
    failed = [name for name, c in cases.items() if c.find("failure") is not None]
    assert failed == ["Laplace, noise scale halved"]
    f = cases["Laplace, noise scale halved"].find("failure")
    assert f.get("type") == "PrivacyViolation"
    msg = f.get("message")
    assert re.search(r"epsilon_lower = \d\.\d{4}", msg) and "refutes the claim 1-DP" in msg
    assert "witness: pair #0" in msg and "event output" in msg
    root = ET.parse(junit2).getroot()
    assert root.get("failures") == "1" and root.get("tests") == str(n)


def test_malformed_config_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[defaults]\nconfidence = 0.95\n\n[[audit]]\nalgorithm = "dp-rr"\nexpect = "maybe"\n')
    assert main(["ci", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:6: [[audit]] #1 ('dp-rr'): expect: must be one of 'pass', 'violation', got 'maybe'" in err
    assert main(["ci", str(tmp_path / "missing.toml")]) == 2
    assert "cannot read the CI config" in capsys.readouterr().err


def test_check_only(tmp_path, capsys):
    assert main(["ci", str(EXAMPLE), "--check"]) == 0
    assert "per audit 0.995" in capsys.readouterr().out


def _write(tmp_path: Path, name: str, body: str) -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(body))
    return p


BASE = """\
[defaults]
explore_runs = 5000
confirm_runs = 50000

[[audit]]
name = "rr"
algorithm = "dp-rr"
params = {{ epsilon = {eps} }}
claim = {{ epsilon = 1.5 }}

[[audit]]
name = "laplace"
algorithm = "dp-laplace"
"""


def test_baseline_written_compared_and_regression(tmp_path, capsys):
    base = tmp_path / "baseline.json"
    cfg = _write(tmp_path, "ci.toml", BASE.format(eps=0.5))
    out_dir = tmp_path / "reports"
    assert main(["ci", str(cfg), "--baseline", str(base), "--quiet", "--out", str(out_dir)]) == 0
    assert "Baseline written to" in capsys.readouterr().out
    assert sorted(p.name for p in out_dir.iterdir()) == ["report.html", "report.md", "result.json"]
    stored = json.loads(base.read_text())
    assert stored["format"] == "privaudit-suite" and len(stored["entries"]) == 2

    # same code, same seed: identical bounds, no regression
    assert main(["ci", str(cfg), "--baseline", str(base), "--quiet", "--json"]) == 0
    again = SuiteResult.from_dict(json.loads(capsys.readouterr().out))
    assert [e.baseline_epsilon for e in again.entries] == \
        [e["result"]["epsilon_lower"] for e in stored["entries"]]
    assert not any(e.regression for e in again.entries)

    # the leak grows from 0.5 to 1.2, still under the claimed 1.5: reported, not failed ...
    cfg2 = _write(tmp_path, "ci2.toml", BASE.format(eps=1.2))
    junit = tmp_path / "j.xml"
    assert main(["ci", str(cfg2), "--baseline", str(base), "--quiet", "--junit", str(junit),
                 "--summary", str(tmp_path / "s.md")]) == 0
    out = capsys.readouterr().out
    assert "ok (regressed)" in out and "1 regression(s)" in out
    assert "**Regressions against the baseline**" in (tmp_path / "s.md").read_text()
    rr = _cases(junit)["rr"]
    assert rr.find("failure") is None and "regression against baseline" in rr.find("system-out").text
    # ... unless asked to fail on it
    assert main(["ci", str(cfg2), "--baseline", str(base), "--quiet", "--junit", str(junit),
                 "--fail-on-regression"]) == 1
    capsys.readouterr()
    assert _cases(junit)["rr"].find("failure").get("type") == "Regression"
    assert _cases(junit)["laplace"].find("failure") is None
    # the baseline is kept unless --update-baseline
    assert json.loads(base.read_text()) == stored
    assert main(["ci", str(cfg2), "--baseline", str(base), "--quiet", "--update-baseline"]) == 0
    assert json.loads(base.read_text())["entries"][0]["result"]["params"] == {"epsilon": 1.2}


def test_crashing_blackbox_is_an_error_testcase(tmp_path, capsys):
    (tmp_path / "crashy.py").write_text(textwrap.dedent('''\
        from audit import Claim
        class Crashy:
            name = "crashy"
            claim = Claim(1.0)
            pairs = [([0], [1])]
            def sample(self, inp, runs, rng):
                raise RuntimeError("boom <&> \\x01")
        crashy = Crashy()
        '''))
    cfg = _write(tmp_path, "ci.toml", '''\
        [defaults]
        explore_runs = 1000
        confirm_runs = 1000
        [[audit]]
        name = "crashy <&>"
        blackbox = "crashy:crashy"
        ''')
    junit = tmp_path / "j.xml"
    assert main(["ci", str(cfg), "--junit", str(junit), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "FAIL crashy <&>: audit could not run: black box 'crashy' raised RuntimeError: boom" in out
    case = _cases(junit)["crashy <&>"]          # parses: escaped, control character replaced
    assert case.find("error").get("type") == "AuditError" and "boom <&>" in case.find("error").text


def test_missed_violation_message():
    """A planted bug that stops being caught: a MissedViolation failure with the ceiling."""
    from audit.result import AuditResult
    from audit.types import Claim

    r = AuditResult(algorithm="dp-rr", kind="mechanism", claim=Claim(1.0), epsilon_lower=0.97,
                    delta_lower=0.0, violation=False, confidence=0.99, correction="bonferroni",
                    tests=1, alpha_per_bound=0.005, max_certifiable_epsilon=9.1, witness=None)
    suite = SuiteResult("s", 0.95, "bonferroni over 1 audit",
                        [SuiteEntry("bug fixture \"x\"", "dp-rr", "violation", False, r)])
    root = ET.fromstring(render_junit(suite))
    f = root.find(".//testcase/failure")
    assert f.get("type") == "MissedViolation"
    assert f.get("message") == ('bug fixture "x": expected a violation of 1-DP [replace-one, model '
                                'scope] but none was confirmed: epsilon_lower = 0.9700 (certifiable '
                                'ceiling 9.1000) at confidence 0.99; best witness: no witness')
    with pytest.raises(ValueError):
        render_junit(r)       # a single result is not a suite


@pytest.mark.ray
@pytest.mark.slow
def test_ray_runner_gives_the_local_verdicts(ray_instance, tmp_path, monkeypatch):
    """runner = "ray" with an address joins the cluster; same seed and chunks, same counts."""
    from privaudit.ci_config import load_config
    from privaudit.ci_run import make_suite_runner, run_suite

    body = ('[defaults]\nexplore_runs = 4000\nconfirm_runs = 40000\nchunk_runs = 10000\n'
            'runner = "{runner}"\n{address}\n'
            '[[audit]]\nname = "rr"\nalgorithm = "dp-rr"\n'
            '[[audit]]\nname = "em bug"\nalgorithm = "dp-em"\nparams = {{ variant = "bv-em-half" }}\n'
            'expect = "violation"\n')
    ray_cfg = load_config(_write(tmp_path, "ray.toml", body.format(
        runner="ray", address=f'address = "{ray_instance}"')))
    local_cfg = load_config(_write(tmp_path, "local.toml", body.format(runner="local", address="")))
    runner = make_suite_runner(ray_cfg)
    assert type(runner).__name__ == "RayRunner"
    try:
        on_ray = run_suite(ray_cfg, runner=runner)
    finally:
        runner.close()
    local = run_suite(local_cfg)
    assert on_ray.ok and local.ok
    assert [e.result.epsilon_lower for e in on_ray.entries] == [e.result.epsilon_lower for e in local.entries]
