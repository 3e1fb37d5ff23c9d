"""Loading the optional DP libraries the `lib-` adapters audit, with the versions they were tested
with (pyproject.toml's ``libs`` extra). An untested major version is refused, not guessed at."""

from __future__ import annotations

import functools
import importlib
from importlib import metadata
from types import ModuleType

from audit.errors import PrivauditError

# distribution -> (tested release series, module to import). For 0.x releases the minor number is
# the major one (semantic versioning), so "0.16" pins OpenDP's series.
TESTED = {
    "diffprivlib": ("0.6", "diffprivlib"),
    "opendp": ("0.16", "opendp.prelude"),
    "python-dp": ("1", "pydp"),
}
INSTALL_HINT = "pip install 'privaudit[libs]'"


def series(version: str, tested: str) -> str:
    """The release series of `version` at the precision of `tested` ("0.16.0" -> "0.16")."""
    return ".".join(version.split(".")[: len(tested.split("."))])


@functools.lru_cache(maxsize=None)
def unavailable(dist: str) -> str | None:
    """Why library `dist` cannot be used here (one line), or None when it can."""
    tested, module = TESTED[dist]
    try:
        version = metadata.version(dist)
    except metadata.PackageNotFoundError:
        return f"{dist} is not installed ({INSTALL_HINT})"
    if series(version, tested) != tested:
        return (f"{dist} {version} is untested: the adapters were tested with {dist} {tested}.x "
                f"({INSTALL_HINT} installs it)")
    try:
        importlib.import_module(module)
    except Exception as exc:  # a broken install shows as any exception at import time
        if dist == "diffprivlib":
            try:
                sk = metadata.version("scikit-learn")
            except metadata.PackageNotFoundError:
                sk = "missing"
            return (f"diffprivlib {version} fails to import ({type(exc).__name__}: {exc}); it needs "
                    f"scikit-learn < 1.6 (installed: {sk}): pip install 'scikit-learn<1.6'")
        return f"{dist} {version} fails to import: {type(exc).__name__}: {exc}"
    return None


def load(dist: str, module: str | None = None) -> ModuleType:
    """Import `module` (default: the library's main module), or raise one clear line."""
    reason = unavailable(dist)
    if reason:
        raise PrivauditError(reason)
    return importlib.import_module(module or TESTED[dist][1])


def version(dist: str) -> str:
    return metadata.version(dist)


def requires(dist: str):
    """The registry's `requires` hook for adapters of `dist`."""
    return lambda: unavailable(dist)
