"""Files: atomic writes, no writing through symlinks, validated journals, safe --resume."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from audit.errors import PrivauditError
from audit.files import atomic_write_text, ensure_dir
from audit.journal import Journal
from audit.journal_check import record_problem
from privaudit.cli import main

FAST = ["--runner", "local", "--quiet", "--runs", "20000", "--explore-runs", "10000",
        "--chunk-runs", "5000"]


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_atomic_write_replaces_whole_and_refuses_symlinks(tmp_path):
    p = atomic_write_text(tmp_path / "a.txt", "one")
    atomic_write_text(p, "two")
    assert p.read_text() == "two" and sorted(os.listdir(tmp_path)) == ["a.txt"]
    target = tmp_path / "target.txt"
    target.write_text("keep me\n")
    (tmp_path / "link.txt").symlink_to(target)
    with pytest.raises(PrivauditError, match="symbolic link"):
        atomic_write_text(tmp_path / "link.txt", "x")
    assert target.read_text() == "keep me\n"


def test_ensure_dir_errors(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(PrivauditError, match="not a directory"):
        ensure_dir(f)
    with pytest.raises(PrivauditError, match="cannot create"):
        ensure_dir(f / "sub")


def test_out_naming_a_file_is_exit_2(tmp_path, capsys):
    out = tmp_path / "o"
    out.write_text("x")
    code, _, err = _run(capsys, "audit", "dp-rr", "--out", str(out), *FAST)
    assert code == 2 and "not a directory" in err and len(err.strip().splitlines()) == 1, err
    code, _, err = _run(capsys, "audit", "dp-rr", "--out", str(out / "sub"), *FAST)
    assert code == 2 and "cannot create" in err and len(err.strip().splitlines()) == 1, err


def test_symlinked_journal_is_refused_and_target_untouched(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("line 1\nline 2 without newline")
    (out / "journal.jsonl").symlink_to(victim)
    code, _, err = _run(capsys, "audit", "dp-rr", "--out", str(out), *FAST)
    assert code == 2 and "symbolic link" in err
    assert victim.read_text() == "line 1\nline 2 without newline"


def _good_record(size=100, runs=100):
    return {"v": 1, "job": "ab" * 16, "chunk": 0, "size": size,
            "red": {"type": "codes", "runs": runs, "codes": [0, 1], "counts": [40, runs - 40]}}


@pytest.mark.parametrize("mutate, needle", [
    (lambda r: r["red"].update(runs=99), "counts are for 99"),
    (lambda r: r["red"].update(counts=[40, 70]), "add up to 110"),
    (lambda r: r["red"].update(counts=[-1, 101]), "integers >= 0"),
    (lambda r: r.update(chunk=-3), "chunk"),
    (lambda r: r["red"].update(type="events", counts=[5, 101]), "in [0, 100]"),
    (lambda r: r["red"].update(type="hist", counts=[[50, 49]]), "adds up to 99"),
    (lambda r: r.update(job="../../etc"), "job"),
])
def test_inconsistent_records_are_named(mutate, needle):
    rec = _good_record()
    assert record_problem(rec) is None
    mutate(rec)
    problem = record_problem(rec)
    assert problem is not None and needle in problem, problem


def test_edited_journal_line_stops_with_a_clear_error(tmp_path, capsys):
    out = tmp_path / "o"
    code, _, _ = _run(capsys, "audit", "dp-rr", "--out", str(out), *FAST)
    assert code == 0
    lines = (out / "journal.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["red"]["runs"] = rec["size"] - 1          # the edit: counts for other runs
    lines[0] = json.dumps(rec)
    (out / "journal.jsonl").write_text("\n".join(lines) + "\n")
    code, _, err = _run(capsys, "audit", "--resume", str(out), "--quiet")
    assert code == 2 and "line 1 is not a valid record" in err, err
    with pytest.raises(PrivauditError, match="line 1"):
        Journal(out)


def test_resume_refuses_conflicting_runs_and_stores_absolute_paths(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("pairs.json").write_text("[[[0], [1]]]")
    code, _, _ = _run(capsys, "audit", "dp-rr", "--pairs", "pairs.json", "--out", "o", *FAST)
    assert code == 0
    saved = json.loads((tmp_path / "o" / "command.json").read_text())
    assert Path(saved["pairs"]).is_absolute()
    code, _, err = _run(capsys, "audit", "--resume", "o", "--runs", "999")
    assert code == 2 and "--runs 999 conflicts with the recorded runs = 20000" in err
    # from another directory: the stored absolute paths still resolve
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.chdir(other)
    code, out, err = _run(capsys, "audit", "--resume", str(tmp_path / "o"), "--quiet")
    assert code == 0, err


@pytest.mark.parametrize("content, needle", [
    ("[1, 2]", "JSON object"),
    ('{"runs": "many"}', "runs must be int"),
    ('{"evil": 1}', "unknown keys"),
    ('{"param": "epsilon=1"}', "list of K=V"),
])
def test_resume_validates_command_json(tmp_path, capsys, content, needle):
    (tmp_path / "command.json").write_text(content)
    code, _, err = _run(capsys, "audit", "--resume", str(tmp_path))
    assert code == 2 and needle in err, err


@pytest.mark.parametrize("argv, needle", [
    (["audit", "dp-rr", "--runs", str(10**15)], "runs must be an integer in [1, 1000000000000]"),
    (["audit", "dp-rr", "--epsilon", "1e308"], "claim epsilon must be <= 700"),
    (["audit", "dp-rr", "--epsilon", "701"], "claim epsilon must be <= 700"),
])
def test_absurd_budgets_and_claims_refused_up_front(capsys, argv, needle):
    code, _, err = _run(capsys, *argv, "--runner", "local", "--quiet")
    assert code == 2 and needle in err, err


def test_variant_conflicting_with_param_variant_is_refused(capsys):
    code, _, err = _run(capsys, "audit", "dp-rr", "--variant", "bv-rr-eps", "--param",
                        "variant=correct", *FAST)
    assert code == 2 and "conflicts with --param variant=correct" in err


def test_vacuous_pass_is_warned_on_the_console_and_with_check(tmp_path, capsys):
    import textwrap
    cfg = tmp_path / "ci.toml"
    cfg.write_text(textwrap.dedent('''
        [defaults]
        runner = "local"
        explore_runs = 1000
        confirm_runs = 5
        [[audit]]
        algorithm = "dp-rr"
        '''))
    code, _, err = _run(capsys, "ci", str(cfg), "--check")
    assert code == 0 and "warning" in err and "vacuous" in err
    code, _, err = _run(capsys, "ci", str(cfg), "--quiet")
    assert code == 0 and "vacuous" in err
