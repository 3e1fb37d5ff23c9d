"""Reports: versioned JSON (schema, round-trip, version checks), Markdown, self-contained HTML,
the `privaudit report` command and the provenance helpers.

Every statistical input here is either built by hand from `audit.stats` (exact, no randomness) or
comes from a tiny seeded audit (deterministic: the same seed gives the same counts), so nothing
in this file can flake.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from html.parser import HTMLParser

import pytest

import algorithms
from audit import audit, stats
from privaudit.cli import main
from audit.errors import PrivauditError
from audit.result import AuditResult, BoundTest, Witness
from audit.suite import SuiteEntry, SuiteResult
from audit.types import Claim
from reports import (from_obj, load, loads, render_html, render_markdown, to_json, validate,
                     write_reports)
from reports import plots
from reports.jsonio import jsonable
from audit.provenance import git_commit, versions
from reports.schema import load_schema

XSS = "<script>alert(1)</script>"


# ---------------------------------------------------------------------------------------------
# results to render
# ---------------------------------------------------------------------------------------------
def _bound(k_p, n_p, k_q, n_q, alpha, claim, direction="a>b", event_text="label(x0) = 1"):
    p_lo = float(stats.cp_lower(k_p, n_p, alpha))
    q_hi = float(stats.cp_upper(k_q, n_q, alpha))
    return BoundTest(pair_index=0, direction=direction, event={"type": "codes", "codes": [1]},
                     event_text=event_text, k_p=k_p, n_p=n_p, k_q=k_q, n_q=n_q, p_lo=p_lo,
                     q_hi=q_hi, epsilon_lower=float(stats.epsilon_lower(p_lo, q_hi, claim.delta)),
                     delta_lower=float(stats.delta_lower(p_lo, q_hi, claim.epsilon)),
                     query_indices=[0])


def learner_violation(name: str = "df-cor1", n_records: int = 40, differ: int = 17) -> AuditResult:
    """A learner audit whose confirmed counts refute epsilon = 1 (built from exact CP bounds)."""
    claim = Claim(1.0)
    conf, tests, n = 0.95, 2, 100_000
    alpha = stats.per_bound_alpha(conf, tests)
    t1 = _bound(90_000, n, 20_000, n, alpha, claim)
    t2 = _bound(60_000, n, 40_000, n, alpha, claim, direction="b>a", event_text="label(x0) = 0")
    X = [[i / 40, (i % 3) / 2] for i in range(n_records)]
    y = [i % 2 for i in range(n_records)]
    Xb, yb = [r[:] for r in X], y[:]
    Xb[differ], yb[differ] = [0.9, 0.9], 1 - y[differ]
    w = Witness(pair_index=0, a={"X": X, "y": y}, b={"X": Xb, "y": yb}, direction="a>b",
                event={"type": "codes", "codes": [1]}, event_text="label(x0) = 1",
                queries=[[0.9, 0.9]], differing=[differ], p_hat=0.9, q_hat=0.2,
                found_by="adversarial family")
    return AuditResult(
        algorithm=name, kind="learner", claim=claim, epsilon_lower=t1.epsilon_lower,
        delta_lower=t1.delta_lower, violation=t1.epsilon_lower > claim.epsilon, confidence=conf,
        correction="bonferroni", tests=tests, alpha_per_bound=alpha,
        max_certifiable_epsilon=stats.max_certifiable_epsilon(n, conf, tests), witness=w,
        confirmed=[t1, t2], explore_runs=10_000, confirm_runs=n, seed=7,
        params={"epsilon": 1.0, "variant": "bv-cor-1"},
        search={"strategy": "families",
                "history": [{"pair": i, "query": [0.1 * i], "eps_hat": 0.3 * i} for i in range(6)]},
        runner={"runner": "local", "workers": 1}, timings={"explore_s": 0.4, "total_s": 2.8},
        versions={**versions(), "git_commit": "0123456789abcdef0123456789abcdef01234567"},
        notes=["planted bug"])


@pytest.fixture(scope="module")
def laplace_results():
    """Two tiny real audits: the correct Laplace mechanism and the planted bug with halved noise
    (true epsilon 2 against the claimed 1). Seeded, so deterministic; ~0.1 s each."""
    ok = audit(algorithms.get("dp-laplace"), explore_runs=20_000, confirm_runs=50_000, seed=3)
    bad = audit(algorithms.get("dp-laplace", variant="bv-laplace-scale"), explore_runs=20_000,
                confirm_runs=50_000, seed=3)
    return ok, bad


@pytest.fixture(scope="module")
def suite(laplace_results):
    ok, bad = laplace_results
    return SuiteResult(
        name="ci.toml", confidence=0.95, correction="bonferroni over 3 audits",
        entries=[SuiteEntry("Laplace, correct", "dp-laplace", "pass", not ok.violation, ok),
                 SuiteEntry("Laplace, halved noise", "dp-laplace", "violation", bad.violation, bad,
                            baseline_epsilon=1.5),
                 SuiteEntry("mine", "mypkg:thing", "pass", False, None, error="cannot import mypkg")],
        seed=0, timings={"total_s": 1.0}, versions=versions(), runner={"runner": "local"})


# ---------------------------------------------------------------------------------------------
# HTML inspection
# ---------------------------------------------------------------------------------------------
class _Scan(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag

    def handle_data(self, data):
        self.text.append(data)


def scan(html: str) -> _Scan:
    s = _Scan()
    s.feed(html)
    s.close()
    return s


def assert_self_contained(html: str) -> _Scan:
    s = scan(html)
    for tag, attrs in s.tags:
        assert tag not in ("script", "link", "iframe", "object", "embed"), (tag, attrs)
        for key in ("src", "href", "xlink:href", "data", "action", "poster"):
            v = (attrs.get(key) or "").strip().lower()
            # Only in-page anchors ("#...") and inline data are allowed.
            assert not v or v.startswith("#") or v.startswith("data:"), (tag, key, v)
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", html, re.I)
    assert "@import" not in html
    return s


def test_violation_report_is_self_contained_and_shows_the_witness():
    r = learner_violation()
    html = render_html(r)
    s = assert_self_contained(html)
    text = " ".join(s.text)
    assert "VIOLATION" in text and "PASS" not in text.split("VIOLATION")[0]
    banners = [a for t, a in s.tags if "banner" in (a.get("class") or "")]
    assert banners and "violation" in banners[0]["class"]
    # claim, bound and ceiling appear with the numbers of the result
    assert f"{r.epsilon_lower:.4g}" in text and f"{r.max_certifiable_epsilon:.4g}" in text
    # exactly the differing record is highlighted
    rows = [a for t, a in s.tags if t == "tr" and "differs" in (a.get("class") or "")]
    assert len(rows) == 1
    assert re.search(r'<tr class="differs"><td class="num">17</td>', html)
    # plots: scale, confidence intervals, budget curve, as inline SVG
    assert sum(1 for t, _ in s.tags if t == "svg") == 3
    # search history rendered as a table with its columns, provenance shown
    assert "eps_hat" in text and "0123456789abcdef0123456789abcdef01234567" in text
    assert versions()["numpy"] in text


def test_large_dataset_is_elided_around_the_differing_record():
    html = render_html(learner_violation(n_records=500, differ=250))
    s = scan(html)
    shown = [a for t, a in s.tags if t == "tr"]
    assert len(shown) < 100   # not all 500 records
    assert re.search(r'<tr class="differs"><td class="num">250</td>', html)
    assert "identical records" in html


def test_pass_and_violation_from_real_audits(laplace_results):
    ok, bad = laplace_results
    # Seeded and deterministic; the bug has true epsilon 2 vs the claimed 1, so 50k runs per side
    # refute it with a wide margin, while the correct mechanism cannot (soundness at 95%).
    assert not ok.violation and bad.violation
    for r in (ok, bad):
        html = render_html(r)
        s = assert_self_contained(html)
        text = " ".join(s.text)
        assert r.verdict in text
        assert "The two inputs" in text           # mechanisms: the two inputs, not datasets
        assert r.witness.event_text in text
        assert sum(1 for t, _ in s.tags if t == "svg") == 3
    # the explored candidates (a list of dicts in result.search) are shown as a table
    assert "top_explored" in render_html(bad) and "expected_epsilon" in render_html(bad)


def test_suite_report(suite):
    html = render_html(suite)
    s = assert_self_contained(html)
    text = " ".join(s.text)
    assert "FAILED" in text and "NOT MET" in text and "cannot import mypkg" in text
    # one section per entry, linked from the overview table
    ids = {a.get("id") for _, a in s.tags}
    assert {"entry-1", "entry-2", "entry-3"} <= ids
    assert sum(1 for t, a in s.tags if t == "a" and a.get("href", "").startswith("#entry-")) == 3
    md = render_markdown(suite)
    assert md.count("\n| ") == 1 + 3        # header + one row per entry (the separator starts "|-")
    assert "❌" in md and "cannot import mypkg" in md


def test_user_strings_are_escaped_everywhere():
    r = learner_violation(name=XSS)
    r.witness.event_text = XSS
    r.search["history"].append({XSS: XSS})
    r.versions["platform"] = XSS
    r.notes.append(XSS)
    r.params[XSS] = XSS
    suite = SuiteResult(name=XSS, confidence=0.95, correction=XSS,
                        entries=[SuiteEntry(XSS, XSS, "violation", True, r),
                                 SuiteEntry("x", "y", "pass", False, None, error=XSS)],
                        versions={"git_commit": XSS})
    for obj in (r, suite):
        html = render_html(obj)
        s = assert_self_contained(html)       # no <script> element was created
        assert "<script" not in html.lower()
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert XSS in " ".join(s.text)        # shown to the reader as text
        md = render_markdown(obj)
        assert "<script" not in md and "&lt;script&gt;" in md


def test_markdown_table_survives_pipes_and_newlines():
    r = learner_violation(name="a|b\nc")
    md = render_markdown(r)
    assert "a\\|b c" in md
    for line in md.splitlines():
        if line.startswith("|"):   # every row of the two-column table has exactly 3 bare pipes
            assert len(re.findall(r"(?<!\\)\|", line)) == 3, line


# ---------------------------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------------------------
def test_json_round_trip_single_and_suite(laplace_results, suite):
    for obj in (learner_violation(), *laplace_results, suite):
        text = to_json(obj)
        back = loads(text)
        assert type(back) is type(obj)
        assert to_json(back) == text
        assert json.loads(text) == jsonable(obj.to_dict())   # every field is kept
    back = loads(to_json(suite))
    assert back.ok == suite.ok is False
    assert [e.status for e in back.entries] == ["PASS", "VIOLATION", "ERROR"]
    assert back.entries[1].result.confirmed[0].k_p == suite.entries[1].result.confirmed[0].k_p
    assert back.entries[1].baseline_epsilon == 1.5


def test_json_is_strict_and_encodes_infinity():
    r = learner_violation()
    r.epsilon_lower = math.inf              # a support mismatch would do this
    r.timings["nan_s"] = float("nan")
    text = to_json(r)
    assert "Infinity" not in text and "NaN" not in text
    d = json.loads(text)
    assert d["epsilon_lower"] == "inf"
    assert loads(text).epsilon_lower == math.inf


def test_schema_documents_every_field(laplace_results, suite):
    res = load_schema("result-v1.json")
    d = learner_violation().to_dict()
    assert set(d) <= set(res["properties"])
    assert set(d["witness"]) <= set(res["$defs"]["witness"]["properties"])
    assert set(d["confirmed"][0]) <= set(res["$defs"]["bound_test"]["properties"])
    assert set(d["claim"]) <= set(res["$defs"]["claim"]["properties"])
    su = load_schema("suite-v1.json")
    sd = suite.to_dict()
    assert set(sd) <= set(su["properties"])
    assert set(sd["entries"][0]) <= set(su["$defs"]["entry"]["properties"])
    assert validate(d) == [] and validate(sd, "suite-v1.json") == []


def test_validator_names_the_problem():
    d = learner_violation().to_dict()
    d["confirmed"][0]["k_p"] = "many"
    d["claim"]["neighbours"] = "everyone"
    del d["verdict"]
    errs = validate(d)
    assert any("confirmed[0].k_p must be integer" in e for e in errs)
    assert any("claim.neighbours must be one of" in e for e in errs)
    assert any("missing the field 'verdict'" in e for e in errs)
    with pytest.raises(PrivauditError, match="invalid audit result"):
        from_obj(d)
    d = json.loads(to_json(learner_violation()))
    d["confidence"] = True          # a JSON boolean is not a number
    assert validate(d)


@pytest.mark.parametrize("version, hint", [(0, "older"), (2, "newer"), (None, "no schema_version")])
def test_other_schema_versions_are_rejected_clearly(tmp_path, suite, version, hint):
    for obj in (learner_violation(), suite):
        d = json.loads(to_json(obj))
        if version is None:
            del d["schema_version"]
        else:
            d["schema_version"] = version
        p = tmp_path / "r.json"
        p.write_text(json.dumps(d))
        with pytest.raises(PrivauditError, match=f"schema_version {version!r}.*reads version 1.*{hint}"):
            load(p)


def test_load_rejects_garbage(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("{not json")
    with pytest.raises(PrivauditError, match="not valid JSON"):
        load(p)
    p.write_text("[1, 2]")
    with pytest.raises(PrivauditError, match="must be a JSON object"):
        load(p)
    p.write_text(json.dumps({"format": "pickle", "schema_version": 1}))
    with pytest.raises(PrivauditError, match="unknown result format"):
        load(p)
    with pytest.raises(PrivauditError, match="cannot read"):
        load(tmp_path / "missing.json")


def test_suite_entry_validates_expectation():
    with pytest.raises(PrivauditError, match="expect must be one of"):
        SuiteEntry("x", "y", "maybe", True, None)
    assert SuiteResult("s", 0.95, "none", []).ok


def test_write_reports(tmp_path):
    r = learner_violation()
    paths = write_reports(r, tmp_path / "out")
    assert {p.name for p in paths.values()} == {"result.json", "report.html", "report.md"}
    assert to_json(load(paths["json"])) == to_json(r)
    assert paths["html"].read_text().startswith("<!DOCTYPE html>")
    assert "VIOLATION" in paths["markdown"].read_text()


# ---------------------------------------------------------------------------------------------
# the numbers behind the plots
# ---------------------------------------------------------------------------------------------
def test_budget_curve_passes_through_the_reported_bound():
    r = learner_violation()
    t = r.confirmed[0]
    pts = plots.budget_points(t, r.alpha_per_bound, 1.0, 0.0, t.n_p)
    i = int(list(pts["n"]).index(t.n_p))
    assert pts["epsilon"][i] == pytest.approx(t.epsilon_lower, rel=1e-12)
    assert pts["ceiling"][i] == pytest.approx(r.max_certifiable_epsilon, rel=1e-12)
    # the bound grows with n at fixed proportions and never exceeds the ceiling
    assert all(pts["epsilon"] <= pts["ceiling"] + 1e-12)
    assert pts["epsilon"][-1] > pts["epsilon"][0]
    # a pass at these proportions would turn into a violation from some n on
    weak = _bound(300, 1000, 100, 1000, r.alpha_per_bound, Claim(1.0))
    n_v = plots.budget_points(weak, r.alpha_per_bound, 1.0, 0.0, 1000)["n_violation"]
    assert n_v is not None and n_v > 1000
    assert float(stats.epsilon_lower(stats.cp_lower(0.3 * n_v, n_v, r.alpha_per_bound),
                                     stats.cp_upper(0.1 * n_v, n_v, r.alpha_per_bound))) > 1.0


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------
def test_cli_report_renders_stored_results(tmp_path, capsys, suite):
    for name, obj in (("single", learner_violation()), ("suite", suite)):
        src = tmp_path / f"{name}.json"
        src.write_text(to_json(obj))
        html, md, js = tmp_path / f"{name}.html", tmp_path / f"{name}.md", tmp_path / f"{name}-2.json"
        assert main(["report", str(src), "--html", str(html), "--md", str(md), "--json", str(js)]) == 0
        assert_self_contained(html.read_text())
        assert md.read_text() == render_markdown(obj)
        assert js.read_text() == src.read_text()
    capsys.readouterr()
    assert main(["report", str(tmp_path / "single.json")]) == 0
    assert "VIOLATION" in capsys.readouterr().out


def test_cli_report_bad_input_exits_2_with_one_line(tmp_path, capsys):
    old = json.loads(to_json(learner_violation()))
    old["schema_version"] = 0
    p = tmp_path / "old.json"
    p.write_text(json.dumps(old))
    for path in (p, tmp_path / "missing.json"):
        assert main(["report", str(path), "--html", str(tmp_path / "x.html")]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("privaudit: error:") and "\n" not in err
        assert "Traceback" not in err
    assert not (tmp_path / "x.html").exists()


# ---------------------------------------------------------------------------------------------
# provenance and laziness
# ---------------------------------------------------------------------------------------------
def test_versions():
    v = versions()
    import numpy
    assert v["numpy"] == numpy.__version__
    assert v["python"] == ".".join(map(str, sys.version_info[:3]))
    assert v["privaudit"] and v["platform"]
    assert {"scipy", "statsmodels"} <= set(v)


def test_git_commit(tmp_path):
    repo = tmp_path / "code"
    repo.mkdir()
    (repo / "m.py").write_text("x = 1\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    try:
        subprocess.run(git[:3] + ["init", "-q"], check=True, capture_output=True)
        subprocess.run(git + ["add", "m.py"], check=True, capture_output=True)
        subprocess.run(git + ["commit", "-q", "-m", "c"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git is not available")
    sha = subprocess.run(git[:3] + ["rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert git_commit(repo / "m.py") == sha == git_commit(repo)
    (repo / "m.py").write_text("x = 2\n")
    assert git_commit(repo) == sha + "-dirty"
    assert git_commit(tmp_path / "nowhere" / "x.py") is None
    assert git_commit(object()) is None or len(git_commit(object())) >= 40   # never raises


def test_matplotlib_is_imported_only_for_html():
    # loaded by path: a third-party wheel (one of the `libs` extra) installs a top-level `tests`
    # package into site-packages, which would shadow `tests.reports`
    code = ("import sys, importlib.util, reports; "
            "s = importlib.util.spec_from_file_location('_test_reports', 'tests/reports/test_reports.py'); "
            "m = importlib.util.module_from_spec(s); s.loader.exec_module(m); f = m.learner_violation; "
            "r = f(); reports.to_json(r); reports.render_markdown(r); "
            "assert 'matplotlib' not in sys.modules, 'eager'; reports.render_html(r); "
            "assert 'matplotlib' in sys.modules")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert out.returncode == 0, out.stderr[-2000:]
