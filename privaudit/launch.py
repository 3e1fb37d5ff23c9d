"""The ``privaudit`` console script: the command runs in a child process, so that nothing but
privaudit's own decision can make the exit code 0 or 1.

`privaudit.supervise` maps every way a command can end *in Python* to one exit code. A few ways
end the process below Python, with a code of their own choosing:

* Ray's driver aborting on an internal check: Ray 2.60 ends the process with exit code 1 (the
  code for "violation confirmed") when, for instance, a task's cancellation races its reply;
* a black box's C extension calling ``exit(1)``, or a thread of the black box calling
  ``os._exit(1)`` (`audit.interrupts.guard_exit` covers only the calling thread);
* a signal (the kernel's out-of-memory killer, a segfault).

The child (``python -c`` running `privaudit.cli.child_main`) writes the code it decided on to
a pipe just before it exits; this parent returns that code. A child that
ends without writing one crashed: the parent says so on stderr and returns 3 (an internal
error: the run's verdict is void) or 128 + N for signal N, as a shell would. Finished chunks
stay in the journal either way.

Signals: SIGTERM (and SIGHUP) sent to this parent are passed on to the child. Ctrl-C at a
terminal reaches the child directly (same process group); a SIGINT sent to this parent alone
(no terminal in the foreground) is passed on. Without POSIX pipes to pass (Windows), the
child's own exit code is returned unchecked. The parent imports nothing of privaudit's; it
costs one more interpreter start, ~45 ms.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

VERDICT_FD_ENV = "PRIVAUDIT_VERDICT_FD"
EXIT_INTERNAL = 3
# `-c` puts the working directory first on sys.path; drop it, as the console script has no such
# entry (a user's folder named `audit/` or `reports/` must not shadow privaudit's packages).
_CHILD_CODE = "import sys; del sys.path[0]; from privaudit.cli import child_main; child_main()"


def _say(msg: str) -> None:
    print(f"privaudit: {msg}", file=sys.stderr, flush=True)


def _terminal_delivers_sigint() -> bool:
    """True when this process is in the terminal's foreground process group: Ctrl-C then
    reaches the child too, and passing it on would deliver it twice."""
    if not hasattr(os, "tcgetpgrp"):   # no POSIX job control: pass every signal on
        return False
    for fd in (0, 1, 2):
        try:
            return os.tcgetpgrp(fd) == os.getpgrp()
        except OSError:
            continue
    return False


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def launch(argv: list[str]) -> int:
    """Run ``privaudit ARGV`` in a child process and return its exit code (see the module doc)."""
    cmd = [sys.executable, "-c", _CHILD_CODE, *argv]
    if os.name != "posix":   # no pipe to pass on: the child's own code, unchecked
        proc = _start(cmd, dict(os.environ), ())
        return EXIT_INTERNAL if proc is None else _wait(proc)
    read_end, write_end = os.pipe()
    try:
        proc = _start(cmd, {**os.environ, VERDICT_FD_ENV: str(write_end)}, (write_end,))
        os.close(write_end)   # the child holds the only write end now
        if proc is None:
            return EXIT_INTERNAL
        code = _wait(proc)
        # Not blocking: a process the black box forked may still hold the write end open.
        os.set_blocking(read_end, False)
        try:
            verdict = os.read(read_end, 64).decode("ascii", "replace").strip()
        except BlockingIOError:
            verdict = ""
        return _exit_code(code, verdict)
    finally:
        os.close(read_end)


def _start(cmd: list[str], env: dict, pass_fds: tuple) -> subprocess.Popen | None:
    try:
        return subprocess.Popen(cmd, env=env, pass_fds=pass_fds)
    except OSError as exc:
        _say(f"internal error: cannot start the audit process ({exc})")
        return None


def _wait(proc: subprocess.Popen) -> int:
    with _passing_signals_to(proc):
        return proc.wait()


class _passing_signals_to:
    """While the child runs: SIGTERM and SIGHUP to this parent are passed on; so is SIGINT,
    unless a terminal delivers it to the child already (then passing it on would double it)."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.saved: dict = {}

    def _forward(self, signum: int, frame: object) -> None:
        try:
            self.proc.send_signal(signum)
        except OSError:
            pass

    def __enter__(self) -> "_passing_signals_to":
        names = ["SIGTERM", "SIGHUP"] + ([] if _terminal_delivers_sigint() else ["SIGINT"])
        for name in ("SIGINT", "SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            handler = self._forward if name in names else (lambda signum, frame: None)
            try:
                self.saved[sig] = signal.signal(sig, handler)
            except (ValueError, OSError):
                pass
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self.saved.items():
            signal.signal(sig, old)


def _exit_code(code: int, verdict: str) -> int:
    if verdict.lstrip("-").isdigit():
        decided = int(verdict)
        if code != decided:
            # decided and reported; the crash came after (e.g. in Ray's shutdown)
            how = f"killed by {_signal_name(-code)}" if code < 0 else f"exit code {code}"
            _say(f"warning: after deciding (exit code {decided}) the audit process ended with "
                 f"{how}; the decision and the files written stand")
        return decided
    if code < 0:
        _say(f"error: the audit process was killed by {_signal_name(-code)} before privaudit "
             f"decided (out of memory? a crash in native code?); no verdict. Finished chunks are "
             f"kept in the journal of --out DIR, if one was given (--resume DIR continues)")
        return 128 + (-code)
    _say(f"internal error: the audit process ended with exit code {code} before privaudit "
         f"decided (a crash below Python: Ray's driver aborting -- its log is under "
         f"/tmp/ray/session_latest/logs -- or native code of the black box calling exit); no "
         f"verdict. Finished chunks are kept in the journal of --out DIR, if one was given "
         f"(--resume DIR continues)")
    return EXIT_INTERNAL


_verdict_fd: int | None = None


def take_verdict_fd() -> None:
    """In the child: take the verdict pipe from the environment (so that Ray's workers and the
    black box's own processes do not inherit its number)."""
    global _verdict_fd
    text = os.environ.pop(VERDICT_FD_ENV, "")
    _verdict_fd = int(text) if text.isdigit() else None


def report(code: int) -> None:
    """Tell the parent the decided exit code (once; a no-op outside a launched child).

    Called by `privaudit.cli.child_main` and by any path of privaudit's own that ends the
    process directly (the ``--timeout`` watchdog's ``os._exit``)."""
    global _verdict_fd
    fd, _verdict_fd = _verdict_fd, None
    if fd is None:
        return
    try:
        os.write(fd, str(int(code)).encode("ascii"))
        os.close(fd)
    except OSError:
        pass


def entry() -> None:  # pragma: no cover - the console script (tested through `launch`)
    sys.exit(launch(sys.argv[1:]))


__all__ = ["launch", "take_verdict_fd", "report", "entry", "VERDICT_FD_ENV"]
