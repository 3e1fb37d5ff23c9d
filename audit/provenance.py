"""Provenance of an audit: which software ran it and which commit of the audited code it saw.

The auditor fills ``AuditResult.versions`` with ``versions()`` and, when the audited code lives in
a git checkout, ``versions["git_commit"] = git_commit(path)``. Neither function ever raises: a
missing package or a missing git is recorded as absent, never as a failed audit.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Iterator

from ._version import __version__

# Distribution names whose versions are recorded (ray only when installed).
_PACKAGES = ("numpy", "scipy", "statsmodels", "ray")


@functools.lru_cache(maxsize=None)   # ~10 ms per lookup; installed versions do not change mid-run
def _dist_version(name: str) -> str | None:
    # importlib.metadata reads the installed metadata without importing the package, so this
    # stays cheap even for ray (whose import takes seconds).
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
    except Exception:  # pragma: no cover - broken metadata must not fail an audit
        return None


def versions() -> dict:
    """Versions of Python, the numeric stack, ray (if installed), privaudit and the platform.

    Returns
    -------
    dict
        ``{"python": "3.11.2", "numpy": ..., "scipy": ..., "statsmodels": ..., "ray": ...,
        "privaudit": ..., "platform": "Linux-...-x86_64"}``; packages that are not installed are
        left out (``ray``) or recorded as ``None``.
    """
    out: dict[str, Any] = {"python": platform.python_version()}
    for name in _PACKAGES:
        v = _dist_version(name)
        if v is not None or name != "ray":
            out[name] = v
    # a source tree that is not installed has no distribution metadata
    out["privaudit"] = _dist_version("privaudit") or __version__
    digest = source_digest()
    if digest is not None:   # identifies the installed code even without git
        out["privaudit_source_sha256"] = digest
    try:
        out["platform"] = platform.platform()
    except Exception:  # pragma: no cover
        out["platform"] = sys.platform
    return out


def _directory_of(path: Any) -> Path | None:
    """A directory to ask git about: a path (file or directory), a module, or any object."""
    if path is None:
        return Path.cwd()
    if isinstance(path, (str, os.PathLike)):
        p = Path(path)
    else:
        try:
            src = inspect.getsourcefile(path if inspect.ismodule(path) or inspect.isclass(path)
                                        or inspect.isfunction(path) else type(path))
        except (TypeError, OSError):
            src = None
        if src is None:
            return None
        p = Path(src)
    p = p.expanduser()
    if p.is_file() or not p.exists():
        p = p.parent
    return p if p.is_dir() else None


# Directory -> commit, while `commit_cache` is active (None: look up on every call).
_COMMITS: dict[str, str | None] | None = None


@contextlib.contextmanager
def commit_cache() -> Iterator[None]:
    """Look each directory's git commit up once while the block runs (re-entrant).

    A lookup spawns ``git`` twice (~10 ms); a CI suite audits many algorithms of one checkout
    and records the suite's commit too, so it runs its audits inside this block: the checkout is
    taken as it was at each directory's first lookup (tracked files edited while the suite runs
    are not seen by later entries). Outside the block every call asks git again."""
    global _COMMITS
    outer = _COMMITS
    if outer is None:
        _COMMITS = {}
    try:
        yield
    finally:
        _COMMITS = outer


def git_commit(path: Any = None) -> str | None:
    """The commit (40 hex digits) of the git checkout holding `path`, or None.

    Parameters
    ----------
    path : str, os.PathLike, module or object, optional
        A file or directory of the audited code, its module, or the audited object itself (its
        class's source file is used). Default: the current directory.

    Returns
    -------
    str or None
        ``HEAD``'s commit, with ``"-dirty"`` appended when tracked files have uncommitted changes;
        None when there is no git, no repository, or anything else goes wrong (never raises).
    """
    try:
        d = _directory_of(path)
        if d is None:
            return None
        cache = _COMMITS
        if cache is None:
            return _ask_git(d)
        key = _checkout_root(d)
        if key not in cache:
            cache[key] = _ask_git(d)
        return cache[key]
    except Exception:
        return None


def _checkout_root(d: Path) -> str:
    """The nearest directory at or above `d` holding ``.git`` (as git finds it), else `d`: every
    directory of one checkout shares one cache entry (HEAD and status are the checkout's)."""
    d = d.resolve()
    for p in (d, *d.parents):
        if (p / ".git").exists():
            return str(p)
    return str(d)


def _ask_git(d: Path) -> str | None:
    try:
        env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C")
        head = subprocess.run(["git", "-C", str(d), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=5, env=env)
        sha = head.stdout.strip()
        if head.returncode != 0 or len(sha) != 40:
            return None
        # A result is only reproducible from the commit if the checkout was clean; say so.
        dirty = subprocess.run(["git", "-C", str(d), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5, env=env)
        if dirty.returncode == 0 and dirty.stdout.strip():
            sha += "-dirty"
        return sha
    except Exception:
        return None


_OWN_PACKAGES = ("audit", "algorithms", "attacks", "reports", "privaudit")
_SOURCE_SUFFIXES = (".py", ".j2", ".json")


@functools.lru_cache(maxsize=64)
def _tree_digest(root: str, names: tuple[str, ...] | None) -> str | None:
    """sha256 (16 hex digits) over the relative paths and bytes of the source files under
    `root` (only its subfolders `names` when given), in a fixed order."""
    h = hashlib.sha256()
    base = Path(root)
    tops = [base / n for n in names] if names else [base]
    files = []
    for top in tops:
        if top.is_file():
            files.append(top)
        elif top.is_dir():
            files += [f for f in top.rglob("*") if f.suffix in _SOURCE_SUFFIXES and f.is_file()
                      and "__pycache__" not in f.parts]
    if not files:
        return None
    for f in sorted(files):
        h.update(str(f.relative_to(base)).encode())
        h.update(b"\0")
        h.update(f.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def source_digest() -> str | None:
    """What identifies privaudit's own installed code when there is no git checkout: a hash of
    the source files of its packages (as installed by ``pip install .`` or run from a tree)."""
    try:
        return _tree_digest(str(Path(__file__).resolve().parent.parent), _OWN_PACKAGES)
    except Exception:  # pragma: no cover - never fail an audit over provenance
        return None


def code_digest(obj: Any) -> str | None:
    """A hash of the audited code: the source files of the package (or module file) defining
    `obj`'s class. With `git_commit` None (an installed package), this is what identifies it."""
    try:
        mod = inspect.getmodule(obj if inspect.isclass(obj) or inspect.ismodule(obj) else type(obj))
        if mod is None:
            return None
        top = sys.modules.get(mod.__name__.split(".")[0], mod)
        where = getattr(top, "__path__", None)
        if where:
            return _tree_digest(str(Path(list(where)[0]).resolve()), None)
        f = getattr(mod, "__file__", None)
        return _tree_digest(str(Path(f).resolve()), None) if f else None
    except Exception:
        return None


__all__ = ["versions", "git_commit", "commit_cache", "source_digest", "code_digest"]
