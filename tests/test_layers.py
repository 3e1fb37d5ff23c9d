"""The architecture, checked: layers point one way, no import circles, no hidden imports.

DESIGN.md section 2: front ends (`privaudit`) on top; `algorithms`, `attacks`, `reports` in the
middle (independent of each other); the core (`audit`) at the bottom, importing none of them, not
even inside a function. The layer contract itself is written for import-linter in
pyproject.toml; this test runs it, and adds the two checks import-linter does not make: no
module-level import circle anywhere, and no function-local import of a project package.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("audit", "algorithms", "attacks", "reports", "privaudit")


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict) -> tuple[set[str], list[str]]:
    """(project modules imported at module level, function-local project imports as text)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    top, local = set(), []

    def targets(node) -> list[str]:
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        mod = node.module or ""
        if node.level:
            mod = ".".join(base[: len(base) - node.level + 1] + ([mod] if mod else []))
        # `from pkg import sub` imports the submodule when there is one
        subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in modules]
        return subs or [mod]

    def visit(node, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found = [t for t in targets(child) if t.split(".")[0] in PACKAGES]
                if in_function and found:
                    local.append(f"{name}:{child.lineno}: {ast.unparse(child)}")
                elif not in_function:
                    top.update(t for t in found if t in modules)
            fn = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(child, in_function or fn)

    visit(tree, False)
    return top, local


def test_import_linter_layer_contract_holds():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(exe).exists():
        pytest.fail("lint-imports is not installed: `pip install '.[test]'` brings import-linter")
    out = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "0 broken" in out.stdout


def test_no_module_level_import_circles():
    modules = _modules()
    graph = {m: _imports(m, p, modules)[0] - {m} for m, p in modules.items()}
    # Tarjan's strongly connected components: any component of two or more modules is a circle
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in graph:
        if v not in index:
            strong(v)
    # a package's __init__ re-exporting its own submodules is not a circle of two modules that
    # need each other; a circle must pass through two distinct non-__init__ modules
    real = [c for c in comps if sum(1 for m in c if not (ROOT / m.replace(".", "/")).is_dir()) > 1]
    assert not real, f"module-level import circles: {real}"


def test_no_function_local_imports_of_project_packages():
    modules = _modules()
    local = [line for m, p in modules.items() for line in _imports(m, p, modules)[1]]
    assert not local, "imports hidden inside functions:\n" + "\n".join(local)
