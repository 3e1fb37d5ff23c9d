"""The console script runs the command in a child: a crash below Python never reads as 0 or 1.

Deterministic (exit codes and messages only). Each test starts one child interpreter (~1 s).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from privaudit import launch

from cli_blackboxes import COIN, FAST
from cli_blackboxes import coin_module as _coin


def test_decided_codes_pass_through(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    assert launch.launch(["audit", "dp-rr", *FAST]) == 0
    assert launch.launch(["audit", "dp-rr", "--variant", "bv-rr-eps", *FAST]) == 1
    assert launch.launch(["audit", "no-such-algorithm", *FAST]) == 2
    assert launch.launch(["--version"]) == 0
    assert launch.launch(["audit", "--no-such-flag"]) == 2
    err = capfd.readouterr().err
    assert "internal error" not in err and "Traceback" not in err


@pytest.mark.parametrize("body, what", [
    # a thread of the black box: audit.interrupts.guard_exit covers only the calling thread
    ("import os, threading, time; threading.Thread(target=os._exit, args=(1,)).start(); "
     "time.sleep(5)", "exit code 1"),
    # native code calling exit(1), as Ray's driver does when it aborts on an internal check
    ("import ctypes; ctypes.CDLL(None).exit(1)", "exit code 1"),
    ("import ctypes; ctypes.CDLL(None).exit(0)", "exit code 0"),
])
def test_a_crash_below_python_is_exit_3_not_a_verdict(tmp_path, monkeypatch, capfd, body, what):
    monkeypatch.chdir(tmp_path)
    code = launch.launch(["audit", "--blackbox", _coin(tmp_path, "crash", body), *FAST])
    err = capfd.readouterr().err
    assert code == launch.EXIT_INTERNAL, err
    assert f"internal error: the audit process ended with {what} before privaudit decided" in err
    assert "Traceback" not in err


def test_a_killed_child_is_128_plus_the_signal(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    bb = _coin(tmp_path, "killer", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    code = launch.launch(["audit", "--blackbox", bb, *FAST])
    err = capfd.readouterr().err
    assert code == 128 + signal.SIGKILL
    assert "killed by SIGKILL before privaudit decided" in err


def test_the_watchdog_exit_is_a_decision(tmp_path, monkeypatch, capfd):
    # --timeout: a black box stuck below Python (here: in C, deaf to SIGINT) is ended by the
    # watchdog's os._exit(2), which reports its code first; unreported, the parent would call
    # it a crash (exit 3). The child's grace period is cut from 10 s to 0.5 s.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(launch, "_CHILD_CODE", launch._CHILD_CODE.replace(
        "from privaudit.cli", "import privaudit.supervise as s; s._GRACE_S = 0.5; "
                                 "from privaudit.cli"))
    bb = _coin(tmp_path, "stuck", "import ctypes, signal; "
                                  "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}); "
                                  "ctypes.CDLL(None).sleep(30)")
    code = launch.launch(["audit", "--blackbox", bb, "--timeout", "1", *FAST])
    err = capfd.readouterr().err
    assert code == 2, err
    assert "did not stop within" in err and "internal error" not in err


@pytest.mark.parametrize("code, verdict, expected", [
    (0, "0", 0), (1, "1", 1), (2, "2", 2), (130, "130", 130),
    (1, "0", 0),          # decided 0, then crashed in shutdown: the decision stands
    (-9, "1", 1),
    (1, "", 3), (0, "", 3), (-9, "", 137), (-11, "", 139),
])
def test_exit_code_mapping(code, verdict, expected, capsys):
    assert launch._exit_code(code, verdict) == expected
    err = capsys.readouterr().err
    assert (err != "") == (verdict == "" or int(verdict) != code)


def test_sigterm_to_the_parent_reaches_the_child(tmp_path):
    (tmp_path / "slow.py").write_text(COIN.format(body="import time; time.sleep(0.05)"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    env.pop(launch.VERDICT_FD_ENV, None)
    cmd = [sys.executable, "-c", "from privaudit.launch import entry; entry()", "audit",
           "--blackbox", "slow:coin", "--runner", "local", "--runs", "400000",
           "--explore-runs", "100000", "--chunk-runs", "2000", "--out", str(tmp_path / "o")]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    journal = tmp_path / "o" / "journal.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline and (not journal.exists() or not journal.read_text().strip()):
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)        # to the parent only (its own session: no terminal)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err     # the child stopped cleanly and said so
    assert "interrupted" in err and "internal error" not in err


def test_sigint_to_the_whole_group_is_one_clean_stop(tmp_path):
    # A SIGINT to the process group (as a terminal's Ctrl-C or a CI runner's cancel): the child
    # gets it directly and again from the parent (no terminal here, so the parent passes it
    # on). One clean stop: exit 130, no traceback, a journal that resumes to the same result.
    # (A repeat that does not coalesce with the first is ignored within 1 s: test_supervise.)
    (tmp_path / "slow.py").write_text(COIN.format(body="import time; time.sleep(0.05)"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    env.pop(launch.VERDICT_FD_ENV, None)
    run = [sys.executable, "-c", "from privaudit.launch import entry; entry()"]
    args = ["audit", "--blackbox", "slow:coin", "--runner", "local", "--runs", "40000",
            "--explore-runs", "10000", "--chunk-runs", "2000", "--seed", "1", "--quiet"]
    proc = subprocess.Popen(run + args + ["--out", str(tmp_path / "o")], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    journal = tmp_path / "o" / "journal.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline and (not journal.exists() or len(journal.read_text().splitlines()) < 3):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err and "internal error" not in err
    done = len(journal.read_text().splitlines())
    resumed = subprocess.run(run + ["audit", "--resume", str(tmp_path / "o")], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    full = subprocess.run(run + args + ["--out", str(tmp_path / "full")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert full.returncode == 0, full.stderr
    a = json.loads((tmp_path / "o" / "result.json").read_text())
    b = json.loads((tmp_path / "full" / "result.json").read_text())
    assert done >= 3 and a["epsilon_lower"] == b["epsilon_lower"]


def test_a_process_the_black_box_forked_does_not_hold_the_parent(tmp_path, monkeypatch, capfd):
    # The fork inherits the verdict pipe's write end and outlives the child, which then crashes
    # without a verdict: the parent must not wait for an EOF that comes only when the fork
    # ends (a blocking read waits out its 120 s; the bound below detects that hang, it does
    # not time privaudit).
    monkeypatch.chdir(tmp_path)
    (tmp_path / "forker.py").write_text(
        "import os, signal, time\n"
        "if os.fork() == 0:\n"
        "    open('grandchild.pid', 'w').write(str(os.getpid()))\n"
        "    time.sleep(120)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n")
    bb = _coin(tmp_path, "forks", "import forker, ctypes; ctypes.CDLL(None).exit(1)")
    t0 = time.monotonic()
    try:
        code = launch.launch(["audit", "--blackbox", bb, *FAST])
        elapsed = time.monotonic() - t0
    finally:
        pid_file = tmp_path / "grandchild.pid"
        deadline = time.time() + 10
        while not pid_file.exists() and time.time() < deadline:
            time.sleep(0.05)
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
    err = capfd.readouterr().err
    assert code == launch.EXIT_INTERNAL, err
    assert "ended with exit code 1 before privaudit decided" in err
    assert elapsed < 60
