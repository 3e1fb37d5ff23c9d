"""The supervisor around every command: what privaudit's exit code means is decided here alone.

    0  every claim held (CI: every expectation held)
    1  a violation was confirmed (CI: an expectation failed)
    2  bad input, or the black box failed: it raised, returned garbage, called ``sys.exit`` or
       ``os._exit``, raised ``KeyboardInterrupt`` itself, or ran past ``--timeout``
    3  an internal error of privaudit: one line on stderr names the file holding the full trace
  130  interrupted from outside (Ctrl-C, SIGTERM)
  141  the reader of standard output went away (``privaudit … | head``): 128 + SIGPIPE, as a
       shell reports a process ended by a closed pipe; files already written stay written

Nothing user code does can produce 0 or 1: only a command's own return value does. Whether a
``KeyboardInterrupt`` came from the user's terminal or from the black box is told apart by
`audit.interrupts` (the signal handlers installed here record it first).
"""

from __future__ import annotations

import _thread
import datetime as _dt
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Callable

from audit import interrupts
from audit.errors import PrivauditError

from . import launch
from .loading import user_dirs

EXIT_OK, EXIT_VIOLATION, EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_BROKEN_PIPE = 141
_REAL_EXIT = os._exit
_GRACE_S = 10.0   # after a time limit, how long the run may take to stop cleanly


def _say(msg: str) -> None:
    print(f"privaudit: {msg}", file=sys.stderr, flush=True)


def _in_user_code(exc: BaseException) -> str | None:
    """``file:line`` of the innermost traceback frame in the user's loaded code, if any.

    The user's code is what `load_blackbox` imported from the folders it added to the path;
    privaudit's own packages and installed packages are not, even when they share a folder.
    """
    dirs = tuple(d.rstrip(os.sep) + os.sep for d in user_dirs())
    own_root = os.path.realpath(os.path.dirname(os.path.dirname(interrupts.__file__))) + os.sep
    hit = None
    for fs in traceback.extract_tb(exc.__traceback__):
        f = os.path.realpath(fs.filename)
        if f.startswith(dirs) and "site-packages" not in f and not _is_own_file(f, own_root):
            hit = f"{os.path.basename(f)}:{fs.lineno}"
    return hit


def _is_own_file(path: str, own_root: str) -> bool:
    if not path.startswith(own_root):
        return False
    return path[len(own_root):].split(os.sep, 1)[0] in ("audit", "algorithms", "attacks",
                                                         "reports", "privaudit")


def write_trace(exc: BaseException, where: str | os.PathLike | None = None) -> Path | None:
    """Write `exc`'s full trace to a new file (in `where` if writable, else the temp dir)."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
    for d in ([where] if where else []) + [tempfile.gettempdir()]:
        try:
            d = Path(d)
            if not d.is_dir() or d.is_symlink():
                continue
            fd, name = tempfile.mkstemp(prefix=f"privaudit-error-{stamp}-", suffix=".txt", dir=d)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(f"privaudit internal error; argv: {sys.argv!r}\n\n{text}")
            return Path(name)
        except OSError:
            continue
    return None


class _Watchdog:
    """`--timeout SECONDS`: interrupt the run, and if it does not stop within a grace period
    (a black box stuck in C code), end the process with exit code 2."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._timers: list[threading.Timer] = []
        self._lock = threading.Lock()
        self._done = False

    def __enter__(self) -> "_Watchdog":
        if self.seconds is not None:
            t = threading.Timer(self.seconds, self._fire)
            t.daemon = True
            t.start()
            self._timers.append(t)
        return self

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            interrupts.request(f"timeout {self.seconds:g}")
            t = threading.Timer(_GRACE_S, self._kill)
            t.daemon = True
            self._timers.append(t)
            t.start()
            try:   # a real signal wakes a blocking call (sleep, wait); interrupt_main would not
                signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            except (AttributeError, OSError, ValueError):
                _thread.interrupt_main()

    def _kill(self) -> None:
        with self._lock:
            if self._done:
                return
            _say(f"error: the run exceeded --timeout {self.seconds:g} s and did not stop within "
                 f"{_GRACE_S:g} s more (the black box hangs outside Python); exiting")
            sys.stderr.flush()
            launch.report(EXIT_BAD_INPUT)   # a decision, not a crash (see privaudit.launch)
            _REAL_EXIT(EXIT_BAD_INPUT)

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._done = True
            for t in self._timers:
                t.cancel()


_REPEAT_S = 1.0   # a second stop signal this soon after the first is the same request


def _install_signal_handlers() -> list:
    """Ctrl-C and SIGTERM: record that the stop came from outside, then raise KeyboardInterrupt.

    A signal arriving within `_REPEAT_S` of the previous one is ignored: one request often comes
    twice (Ctrl-C reaches the whole process group, and `privaudit.launch` passes signals on), and
    a second KeyboardInterrupt would cut the first one's clean stop short (the journal's close).
    A later one interrupts again (a user insisting).
    """
    if threading.current_thread() is not threading.main_thread():
        return []
    saved = []
    last = [float("-inf")]

    def _handler(signum: int, frame: object) -> None:
        now = time.monotonic()
        repeat = now - last[0] < _REPEAT_S
        last[0] = now
        if not interrupts.requested():
            interrupts.request(f"signal {signum}")
        elif repeat:
            return
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            saved.append((sig, signal.signal(sig, _handler)))
        except (ValueError, OSError):
            pass
    return saved


def supervise(command: Callable[[], int], *, timeout: float | None = None,
              trace_dir: str | os.PathLike | None = None) -> int:
    """Run `command` and map every way it can end to one exit code (see the module docstring)."""
    interrupts.clear()
    saved = _install_signal_handlers()
    try:
        with _Watchdog(timeout), interrupts.guard_exit():
            code = command()
        if code not in (EXIT_OK, EXIT_VIOLATION, EXIT_BAD_INPUT, EXIT_INTERRUPTED):
            raise RuntimeError(f"command returned exit code {code!r}")
        return int(code)
    except PrivauditError as exc:
        _say(f"error: {exc}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as exc:
        why = interrupts.requested()
        if why is not None and why.startswith("timeout"):
            _say(f"error: the run exceeded --timeout {timeout:g} s (the black box hangs or is too "
                 f"slow); finished chunks are kept in the journal of --out DIR, if one was given")
            return EXIT_BAD_INPUT
        if why is not None:
            _say("interrupted; finished chunks are kept in the journal (re-run with --resume DIR "
                 "to continue)")
            return EXIT_INTERRUPTED
        at = _in_user_code(exc)
        _say(f"error: the black box raised KeyboardInterrupt itself{f' (at {at})' if at else ''}")
        return EXIT_BAD_INPUT
    except SystemExit as exc:
        # The command returns its code; a SystemExit here can only come from user code.
        _say(f"error: user code called sys.exit({exc.code!r}); the black box failed")
        return EXIT_BAD_INPUT
    except interrupts.BlackBoxExit as exc:
        _say(f"error: user code called os._exit({exc.code!r}); the black box failed")
        return EXIT_BAD_INPUT
    except BrokenPipeError as exc:
        at = _in_user_code(exc)
        if at is not None:
            _say(f"error: the black box failed: BrokenPipeError: {exc} (at {at})")
            return EXIT_BAD_INPUT
        # Whoever read our output stopped reading; the verdict cannot be shown, and it must not
        # read as 0 or 1.
        silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as exc:
        at = _in_user_code(exc)
        if at is not None:
            _say(f"error: the black box failed: {type(exc).__name__}: {exc} (at {at})")
            return EXIT_BAD_INPUT
        path = write_trace(exc, trace_dir)
        where = f"full trace in {path}" if path else "the trace could not be written"
        _say(f"internal error ({type(exc).__name__}: {_first_line(exc)}); {where}; please report it")
        return EXIT_INTERNAL
    finally:
        for sig, old in saved:
            try:
                signal.signal(sig, old)
            except (ValueError, OSError, TypeError):
                pass
        interrupts.clear()


def silence_stdout() -> None:
    """Point stdout at devnull (its reader went away) so the interpreter's final flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0][:200] if text else "")


__all__ = ["supervise", "write_trace", "silence_stdout", "EXIT_OK", "EXIT_VIOLATION", "EXIT_BAD_INPUT",
           "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_BROKEN_PIPE"]
