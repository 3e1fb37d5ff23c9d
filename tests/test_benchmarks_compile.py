"""Every benchmark script and the package sources parse on the interpreter running the tests.

The benchmarks are not imported by the test suite, so a syntax error in one (e.g. an f-string
reusing its outer quote, valid only from Python 3.12 while pyproject.toml declares >= 3.10)
would otherwise go unnoticed until a user runs it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(p for d in ("benchmarks", "algorithms", "attacks", "audit", "privaudit", "reports")
               for p in (ROOT / d).rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_source_compiles(path: Path) -> None:
    compile(path.read_text(encoding="utf-8"), str(path), "exec")


def test_benchmarks_are_found() -> None:
    assert any(p.parent.name == "benchmarks" for p in FILES)
