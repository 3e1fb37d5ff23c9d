"""Writing files safely: whole or not at all, and never through a symbolic link.

Every result, report, command record and baseline privaudit writes goes through
`atomic_write_text`: the text is written to a temporary file in the same folder, flushed to disk,
and moved over the target with ``os.replace`` (atomic on POSIX and Windows), so a reader -- or a
crash -- sees the old file or the new one, never half of one. A target that is a symbolic link is
refused: an output folder must not redirect privaudit's writes elsewhere.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import PrivauditError


def refuse_symlink(path: str | os.PathLike, what: str = "file") -> None:
    """`PrivauditError` when `path` is a symbolic link (privaudit never writes through one)."""
    if os.path.islink(path):
        raise PrivauditError(f"refusing to write the {what} {str(path)!r}: it is a symbolic link "
                             f"(to {os.readlink(path)!r}); remove it or choose another path")


def ensure_dir(path: str | os.PathLike, what: str = "output directory") -> Path:
    """Create directory `path` if needed; a clear `PrivauditError` if it cannot be one."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise PrivauditError(f"the {what} {str(p)!r} exists and is not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PrivauditError(f"cannot create the {what} {str(p)!r}: {exc.strerror or exc}") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise PrivauditError(f"the {what} {str(p)!r} is not writable")
    return p


def atomic_write_text(path: str | os.PathLike, text: str, what: str = "file") -> Path:
    """Write `text` (UTF-8) to `path` atomically; refuse a symbolic link; clear errors."""
    p = Path(path)
    refuse_symlink(p, what)
    if p.is_dir():
        raise PrivauditError(f"cannot write the {what} {str(p)!r}: it is a directory")
    parent = p.parent if str(p.parent) else Path(".")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
        tmp = None
    except OSError as exc:
        raise PrivauditError(f"cannot write the {what} {str(p)!r}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return p


__all__ = ["atomic_write_text", "ensure_dir", "refuse_symlink"]
