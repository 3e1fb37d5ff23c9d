"""Who stopped the run: the user (a signal, a time limit) or the black box itself?

A black box is user code: it may call ``sys.exit``, ``os._exit`` or raise ``KeyboardInterrupt``.
None of these may end an audit as if it had finished (exit 0) or found a violation (exit 1), so
`audit.runners.base.call_blackbox` turns them into a `BlackBoxError`. A ``KeyboardInterrupt``
is passed on only when it really came from outside -- a signal handler or a watchdog calls
`request` first, and `requested` tells the two apart.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Iterator

_reason: str | None = None
_guard_os_exit = True


class BlackBoxExit(BaseException):
    """Raised in place of ``os._exit(code)`` while a black box runs (see `guard_exit`).

    A `BaseException`, so the black box's own ``except Exception`` cannot swallow it.
    """

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def request(reason: str) -> None:
    """Record that the run is being stopped from outside (a signal, a time limit)."""
    global _reason
    _reason = reason


def requested() -> str | None:
    """Why the run is being stopped from outside, or None (a KeyboardInterrupt is the black box's)."""
    return _reason


def set_guard_os_exit(on: bool) -> None:
    """Whether `guard_exit` replaces ``os._exit`` (off in Ray workers, where a dying worker is
    retried by Ray and is the black box's failure, not the driver's exit)."""
    global _guard_os_exit
    _guard_os_exit = bool(on)


def clear() -> None:
    global _reason
    _reason = None


@contextmanager
def guard_exit() -> Iterator[None]:
    """While the block runs in this thread, ``os._exit`` raises `BlackBoxExit` instead.

    Only the calling thread is affected: another thread (Ray's own, a watchdog) calling
    ``os._exit`` meanwhile still exits. Nested use is harmless.
    """
    real = os._exit
    if not _guard_os_exit or getattr(real, "_privaudit_guard", False):
        yield
        return
    me = threading.get_ident()

    def _exit(code: int) -> None:
        if threading.get_ident() == me:
            raise BlackBoxExit(code)
        real(code)

    _exit._privaudit_guard = True  # type: ignore[attr-defined]
    os._exit = _exit
    try:
        yield
    finally:
        os._exit = real


__all__ = ["BlackBoxExit", "request", "requested", "clear", "guard_exit", "set_guard_os_exit"]
