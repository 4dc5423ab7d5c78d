"""ARCHITECTURE.md layers: engine/ imports only the standard library; ai/ only the standard
library and engine/; only service/ may import grpc, protobuf or prometheus_client; interop/
(optional extras) only the standard library, engine/ and its framework (pyspiel); learn/
(the training extra) the standard library, engine/, ai/ and numpy."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = {
    "engine": {"engine"},
    "ai": {"engine", "ai"},
    "interop": {"engine", "interop", "pyspiel"},
    "learn": {"engine", "ai", "learn", "numpy"},
}
#: Imports only a type checker (and mypyc) reads: under ``if TYPE_CHECKING:`` in these files.
TYPE_CHECKING_ONLY = {"engine/_mypyc.py": {"mypy_extensions"}}


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_what_its_layer_allows(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"{package}/ has no Python files"
    for path in files:
        extra = TYPE_CHECKING_ONLY.get(path.relative_to(ROOT).as_posix(), set())
        for root in imported_roots(path):
            ok = (
                root in sys.stdlib_module_names
                or root in ALLOWED[package]
                or root == "__future__"
                or root in extra
            )
            assert ok, f"{path.relative_to(ROOT)} imports {root!r}, not allowed in {package}/"


def test_compile_time_imports_are_not_made_at_run_time() -> None:
    """engine/_mypyc.py imports mypy_extensions for mypyc only: a process that imports every
    engine and ai module has not imported it (the runtime image does not have it)."""
    code = (
        "import sys, pkgutil, importlib, engine, ai\n"
        "for pkg in (engine, ai):\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        importlib.import_module(m.name)\n"
        "print('mypy_extensions' in sys.modules)"
    )
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def test_the_checker_catches_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import grpc\nfrom prometheus_client import Counter\nfrom google.protobuf import json_format\n"
    )
    assert {"grpc", "prometheus_client", "google"} <= imported_roots(bad)


# ---------------------------------------------------------------------------------------
# No import cycles (every import statement counts: inside functions and TYPE_CHECKING too)
# ---------------------------------------------------------------------------------------


def import_graph(packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Module -> the project modules it imports (``from a.b import c`` counts as importing
    ``a.b.c`` when that is a module, else ``a.b``)."""
    modules: dict[str, Path] = {}
    for package in packages:
        for path in (ROOT / package).rglob("*.py"):
            if "gen" in path.parts:
                continue
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            modules[name] = path

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                targets = [resolve(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [
                    resolve(f"{node.module}.{alias.name}")
                    if f"{node.module}.{alias.name}" in modules
                    else resolve(node.module)
                    for alias in node.names
                ]
            graph[name].update(t for t in targets if t is not None and t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_module_imports_another_in_a_circle() -> None:
    graph = import_graph(("engine", "ai", "service", "interop"))
    assert len(graph) > 40
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_test_folder_is_named_after_a_dependency() -> None:
    """A folder of tests/ imports as a package of its name once tests/ is on sys.path (pytest
    puts it there for the test modules directly in tests/): a folder named after an optional
    dependency, such as ``ray``, then stands in for it where it is not installed, and its
    tests run instead of skipping. Folders are named otherwise (tests/on_ray)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        requirements += extra
    names = {
        re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].strip().lower().replace("-", "_") for r in requirements
    }
    # The repository's own folders of modules without __init__.py (bench.table) merge too.
    names |= {p.name for p in ROOT.iterdir() if p.is_dir() and p.name != "tests" and list(p.glob("*.py"))}
    names -= {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}  # a package wins
    folders = {p.name for p in (ROOT / "tests").iterdir() if p.is_dir()}
    assert {"ray", "bench"} <= names and folders  # the check reads what it should
    assert not folders & names, folders & names
