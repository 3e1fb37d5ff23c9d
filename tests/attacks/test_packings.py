"""Packing families (attacks.packings) and the packing audit on registered learners."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import algorithms
from attacks.packings import (
    build_family,
    family_from_dict,
    lb5,
    lb5_K,
    lb5_eta,
    lemma11,
    sphere_packing,
)
from audit.errors import PrivauditError
from audit.packing import audit_packing, kmax_formula
from audit.stats import cp_lower
from audit.runners import LocalRunner
from privaudit.ci_config import parse_config
from privaudit.cli import main


def test_lb5_constants_and_structure():
    assert lb5_K(0.1, 50) == 598 and lb5_eta(0.1, 50) == pytest.approx(1 / (6 + 4 * math.exp(5)))
    L = algorithms.get("ch-erm", alpha=1.0, grid=512)
    fam = lb5(L, M=3)
    assert fam.size == lb5_K(1.0, 3) == 85
    D = fam.distances("replace-one")
    assert D.max() == 2 and D[~np.eye(fam.size, dtype=bool)].min() == 2
    assert fam.queries.shape == (2 * fam.size, 1)
    with pytest.raises(PrivauditError, match="grid of at least"):
        lb5(algorithms.get("ch-erm", alpha=1.0), M=3)           # 64 points: too coarse
    with pytest.raises(PrivauditError, match="thresholds on \\[0, 1\\]"):
        lb5(algorithms.get("ch-a1", cls="sep2", grid=64), M=3)


def test_erm_on_lb5_is_flagged_and_matches_the_formula():
    """Non-private ERM on the small-k LB5 family (alpha = 1, M = 3: K = 85, k_max = 2): every run
    succeeds, and the reported bound is within 10 % of spec 7.5's formula evaluated at the
    observed counts (CP bounds at 0.05/K). Deterministic learner: no false-alarm question."""
    L = algorithms.get("ch-erm", alpha=1.0, grid=512)
    fam = lb5(L, M=3)
    r = audit_packing(L, fam, claim=L.claim, runs=2_000, seed=0)
    pk = r.search["packing"]
    assert r.violation and sum(pk["successes"]) == 2_000 * fam.size
    p = cp_lower(np.asarray(pk["successes"]), np.asarray(pk["runs"]), 0.05 / fam.size)
    formula = kmax_formula(np.asarray(p), 2, 0)
    assert formula == pytest.approx(0.5 * math.log((fam.size - 1) * p[1] / (1 - p[0])))
    assert abs(r.epsilon_lower - formula) <= 0.1 * formula
    assert r.epsilon_lower > 4.0


def test_paper_design_lb5():
    """Theorem 5's own datasets (m i.i.d. draws from P_z): ERM lands in G_z almost always, the
    datasets are up to m moves apart, and the bound is weaker than the small-k design's but still
    above alpha = 0.5 (M = 6, m = 6)."""
    L = algorithms.get("ch-erm", alpha=0.5, grid=1024)
    fam = lb5(L, M=6, design="paper")
    assert fam.params["m"] == 6 and fam.distances("replace-one").max() <= 6
    r = audit_packing(L, fam, claim=L.claim, runs=500, seed=0)
    assert r.violation and 0.5 < r.epsilon_lower < 2.0


def test_label_families_build_and_are_disjoint():
    L = algorithms.get("ch-a2", alpha=1.0)
    fam = lemma11(L)
    assert fam.size >= 3 and fam.distances("label").max() <= 8 * fam.params["s"] * fam.params["m"] + 1e-9
    S = algorithms.get("ch-a1", cls="sep2", grid=64)
    sp = sphere_packing(S)
    assert sp.size >= 2 and sp.relation == "label"
    with pytest.raises(PrivauditError, match="dimension 1"):
        sphere_packing(L)


def test_user_family_from_a_file(tmp_path, capsys):
    d = {"datasets": [{"X": [[0.0]], "y": [0]}, {"X": [[0.0]], "y": [1]}],
         "queries": [[0.0]], "centres": [[0], [1]], "radius": 0, "name": "two"}
    fam = family_from_dict(d)
    assert fam.size == 2
    L = algorithms.get("ch-erm", alpha=1.0)
    q = float(L.H.domain[5, 0])
    d["datasets"] = [{"X": [[q]], "y": [0]}, {"X": [[q]], "y": [1]}]
    d["queries"] = [[q]]
    path = tmp_path / "fam.json"
    path.write_text(json.dumps(d))
    code = main(["audit", "ch-erm", "--packing", str(path), "--runner", "local", "--quiet",
                 "--runs", "2000"])
    out, err = capsys.readouterr()
    assert code == 1 and "packing family two" in out
    with pytest.raises(PrivauditError, match="unknown keys"):
        family_from_dict({**d, "colour": 1})


@pytest.mark.parametrize("argv, msg", [
    (["audit", "ch-erm", "--packing", "lb5"], "grid of at least"),
    (["audit", "ch-erm", "--packing", "nope"], "unknown packing family 'nope'"),
    (["audit", "df-cor1", "--packing", "lemma11"], "prediction scope"),
    (["audit", "ch-erm", "--family-param", "M=3"], "--family-param applies to --packing"),
    (["audit", "ch-erm", "--group", "0"], "group distance must be an integer"),
])
def test_cli_refusals_are_one_line_exit_2(capsys, argv, msg):
    code = main(argv + ["--runner", "local", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2 and msg in err and "Traceback" not in err


def test_cli_lb5_example(capsys):
    code = main(["audit", "ch-erm", "--param", "grid=512", "--packing", "lb5", "--family-param",
                 "M=3", "--runs", "1000", "--runner", "local", "--quiet"])
    out, _ = capsys.readouterr()
    assert code == 1 and "packing family lb5: 85 datasets up to 2 replace-one moves apart" in out


def test_ci_config_packing_and_group(tmp_path):
    cfg = parse_config('[[audit]]\nalgorithm = "ch-erm"\nparams = { grid = 512 }\npacking = "lb5"\n'
                       'packing_params = { M = 3 }\nexpect = "violation"\n'
                       '[[audit]]\nalgorithm = "ch-em"\ngroup = 2\n', "ci.toml")
    a, b = cfg.audits
    assert a.packing is not None and a.packing.size == 85 and a.confirm_runs == 10_000
    assert b.group == 2 and b.request(0.95).group == 2


@pytest.mark.ray
def test_packing_audit_on_ray_gives_the_local_counts(ray_instance):
    """The packing engine runs through the runner protocol: Ray tasks return the same success
    counts as the local runner for the same seed (chunk seeds are spawn keys (4, j, chunk))."""
    from audit.runners.ray_runner import RayRunner     # imports ray: only in the Ray test

    L = algorithms.get("ch-a1", alpha=1.0, grid=512, eps0=0.002)
    fam = lb5(L, M=3, K=12)
    local = audit_packing(L, fam, claim=L.claim, runs=3_000, seed=4,
                          runner=LocalRunner(chunk_runs=1_000))
    with RayRunner(address=ray_instance, chunk_runs=1_000) as runner:
        remote = audit_packing(L, fam, claim=L.claim, runs=3_000, seed=4, runner=runner)
    assert remote.search["packing"]["successes"] == local.search["packing"]["successes"]
    assert remote.epsilon_lower == local.epsilon_lower


def test_a_learner_without_a_domain_is_refused_by_name():
    class Bare:
        name = "bare"
        claim = algorithms.get("ch-em").claim

        def predict(self, data, queries, runs, rng):
            return np.zeros((runs, len(queries)), dtype=np.int8)

    for fam in ("lb5", "lemma11", "sphere-packing"):
        with pytest.raises(PrivauditError, match=f"{fam} builds its datasets on the learner's domain"):
            build_family(fam, Bare())
