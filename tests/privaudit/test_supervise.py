"""The supervisor: nothing user code does turns into exit 0 or 1; internal errors are exit 3.

Every test here is deterministic (no statistics): exit codes and messages only.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import privaudit.cli_audit
import privaudit.loading
from privaudit.cli import main
from privaudit.supervise import EXIT_BROKEN_PIPE, supervise

from cli_blackboxes import COIN, FAST
from cli_blackboxes import coin_module as _module


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("body, needle", [
    ("import sys; sys.exit(0)", "sys.exit(0)"),
    ("import sys; sys.exit(1)", "sys.exit(1)"),
    ("import os; os._exit(0)", "os._exit(0)"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt itself"),
    ("raise SystemExit", "sys.exit(None)"),
])
def test_blackbox_exit_or_interrupt_is_exit_2(tmp_path, monkeypatch, capsys, body, needle):
    monkeypatch.chdir(tmp_path)
    spec = _module(tmp_path, f"bb_{abs(hash(body))}", body)
    code, out, err = _run(capsys, "audit", "--blackbox", spec, *FAST)
    assert code == 2, (out, err)
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("prelude, spec_attr, needle", [
    ("import sys\nsys.exit(0)\n", "coin", "importing the module called sys.exit(0)"),
    ("raise RuntimeError('boom at import')\n", "coin", "RuntimeError: boom at import"),
    ("def broken(:\n", "coin", "syntax error"),
    ("", "Coin2", "constructor needs arguments"),
])
def test_loading_failures_are_exit_2(tmp_path, monkeypatch, capsys, prelude, spec_attr, needle):
    monkeypatch.chdir(tmp_path)
    name = f"ld_{abs(hash(prelude + spec_attr))}"
    (tmp_path / f"{name}.py").write_text(prelude + COIN.format(body="pass") + textwrap.dedent('''
        class Coin2(Coin):
            def __init__(self, p):
                self.p = p
        '''))
    code, _, err = _run(capsys, "audit", "--blackbox", f"{name}:{spec_attr}", *FAST)
    assert code == 2 and needle in err and "Traceback" not in err, err


@pytest.mark.parametrize("spec", [":", "a:", ":b", "1x:y", "audit.auditor:audit"])
def test_bad_specs_are_exit_2(capsys, spec):
    code, _, err = _run(capsys, "audit", "--blackbox", spec, *FAST)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_closed_output_pipe_is_141_not_a_verdict_or_internal_error(capsys, monkeypatch):
    # `privaudit ... | head`: the reader went away; that is neither a verdict nor a crash.
    # No user folders loaded (earlier tests may have loaded black boxes from this folder).
    monkeypatch.setattr(privaudit.loading, "_USER_DIRS", [])
    def command() -> int:
        raise BrokenPipeError(32, "Broken pipe")

    assert supervise(command) == EXIT_BROKEN_PIPE == 141
    assert "internal error" not in capsys.readouterr().err


def test_real_interrupt_is_130(tmp_path, monkeypatch, capsys):
    # the black box receives a real SIGINT (as from the terminal): that is the user stopping
    monkeypatch.chdir(tmp_path)
    spec = _module(tmp_path, "sigint_bb", "import os, signal; os.kill(os.getpid(), signal.SIGINT); import time; time.sleep(5)")
    code, _, err = _run(capsys, "audit", "--blackbox", spec, *FAST)
    assert code == 130 and "interrupted" in err


def test_timeout_is_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    spec = _module(tmp_path, "slow_bb", "import time; time.sleep(60)")
    t0 = time.perf_counter()
    code, _, err = _run(capsys, "audit", "--blackbox", spec, "--timeout", "0.5", *FAST)
    assert code == 2 and "--timeout 0.5" in err and time.perf_counter() - t0 < 10


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "abc"])
def test_bad_timeout_is_exit_2(capsys, value):
    with pytest.raises(SystemExit) as e:
        main(["audit", "dp-rr", "--timeout", value])
    assert e.value.code == 2


def test_internal_error_is_exit_3_with_trace_file(tmp_path, monkeypatch, capsys):
    def broken(*a, **k):
        return 1 / 0
    monkeypatch.setattr(privaudit.cli_audit, "run_request", broken)
    monkeypatch.setattr("privaudit.loading._USER_DIRS", [])  # this file is not user code here
    out = tmp_path / "o"
    out.mkdir()
    code, _, err = _run(capsys, "audit", "dp-rr", "--out", str(out), *FAST)
    lines = err.strip().splitlines()
    assert code == 3 and len(lines) == 1 and "internal error (ZeroDivisionError" in lines[0], err
    trace = Path(lines[0].split("full trace in ")[1].split(";")[0])
    assert trace.parent == out and "Traceback" in trace.read_text()


def test_address_with_local_runner_is_refused(capsys):
    code, _, err = _run(capsys, "audit", "dp-rr", "--runner", "local", "--address", "auto")
    assert code == 2 and "--runner local" in err


def test_auto_runner_says_what_it_chose(capsys):
    code, out, err = _run(capsys, "audit", "dp-rr", "--runs", "2000", "--explore-runs", "1000",
                          "--quiet")
    assert code == 0 and "runner: local (in-process" in err


def test_ci_suite_blackbox_exit_does_not_pass_and_junit_is_written(tmp_path, capsys):
    (tmp_path / "exiter.py").write_text(COIN.format(body="import sys; sys.exit(0)"))
    cfg = tmp_path / "ci.toml"
    cfg.write_text(textwrap.dedent('''
        [defaults]
        runner = "local"
        explore_runs = 1000
        confirm_runs = 2000
        [[audit]]
        name = "rr flagged"
        algorithm = "dp-rr"
        expect = "violation"
        [[audit]]
        name = "exiter"
        blackbox = "exiter:coin"
        expect = "pass"
        '''))
    junit = tmp_path / "j.xml"
    code = main(["ci", str(cfg), "--junit", str(junit), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 1, (out, err)
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert set(cases) == {"rr flagged", "exiter"}
    assert "sys.exit(0)" in out


def test_user_reports_folder_does_not_shadow_privaudit(tmp_path):
    # a fresh interpreter (-P: no script folder on the path), run from a folder holding a
    # `reports/` package of the user's, as users who write audit reports often have
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "__init__.py").write_text("raise ImportError('the user reports package')\n")
    (tmp_path / "audit").mkdir()
    (tmp_path / "audit" / "__init__.py").write_text("raise ImportError('the user audit package')\n")
    (tmp_path / "mine.py").write_text(COIN.format(body="pass"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.run([sys.executable, "-P", "-m", "privaudit.cli", "audit", "--blackbox",
                           "mine:coin", "--out", "o", *FAST], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "o" / "report.html").exists()


def test_own_package_names_are_refused_as_blackbox_modules(capsys):
    code, _, err = _run(capsys, "audit", "--blackbox", "reports:write_reports", *FAST)
    assert code == 2 and "privaudit's own packages" in err


@pytest.mark.ray
def test_private_ray_instance_listens_on_loopback(ray_instance):
    assert ray_instance.startswith("127.0.0.1:")


def test_ci_junit_keeps_finished_audits_when_the_process_dies(tmp_path):
    # audit 2's black box kills the whole process (as a segfault would): audit 1 stays in JUnit
    (tmp_path / "killer.py").write_text(COIN.format(body="import os, signal; os.kill(os.getpid(), signal.SIGKILL)"))
    cfg = tmp_path / "ci.toml"
    cfg.write_text(textwrap.dedent('''
        [defaults]
        runner = "local"
        explore_runs = 1000
        confirm_runs = 2000
        [[audit]]
        name = "rr"
        algorithm = "dp-rr"
        [[audit]]
        name = "killer"
        blackbox = "killer:coin"
        '''))
    junit = tmp_path / "j.xml"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.run([sys.executable, "-P", "-m", "privaudit.cli", "ci", str(cfg), "--junit",
                           str(junit), "--quiet"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode not in (0, 1)
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert set(cases) == {"rr", "killer"}
    assert cases["rr"].find("failure") is None and cases["rr"].find("error") is None
    assert "did not finish" in ET.tostring(cases["killer"], encoding="unicode")


def test_a_repeated_stop_signal_within_a_second_is_the_same_request(monkeypatch):
    # Ctrl-C reaches the process group and privaudit.launch passes signals on: one request can
    # arrive twice. The repeat must not raise a second KeyboardInterrupt into the clean stop.
    import signal as _signal

    from audit import interrupts
    from privaudit import supervise as sup

    clock = [100.0]
    monkeypatch.setattr(sup.time, "monotonic", lambda: clock[0])
    saved = sup._install_signal_handlers()
    try:
        handler = _signal.getsignal(_signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):
            handler(_signal.SIGINT, None)
        assert interrupts.requested() == f"signal {int(_signal.SIGINT)}"
        clock[0] += 0.2
        assert handler(_signal.SIGTERM, None) is None      # the same request, ignored
        clock[0] += 1.5
        with pytest.raises(KeyboardInterrupt):             # a user insisting: interrupts again
            handler(_signal.SIGINT, None)
    finally:
        for sig, old in saved:
            _signal.signal(sig, old)
        interrupts.clear()
