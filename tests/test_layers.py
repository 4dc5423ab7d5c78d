"""ARCHITECTURE.md layers: engine/ imports only the standard library; ai/ only the standard
library and engine/; only service/ may import grpc, protobuf or prometheus_client."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = {"engine": {"engine"}, "ai": {"engine", "ai"}}


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
        for root in imported_roots(path):
            ok = root in sys.stdlib_module_names or root in ALLOWED[package] or root == "__future__"
            assert ok, f"{path.relative_to(ROOT)} imports {root!r}, not allowed in {package}/"


def test_the_checker_catches_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import grpc\nfrom prometheus_client import Counter\nfrom google.protobuf import json_format\n"
    )
    assert {"grpc", "prometheus_client", "google"} <= imported_roots(bad)
