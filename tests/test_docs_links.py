"""Links between the repository's Markdown files work where they are read: on a code host,
which follows a link relative to its file, and on the docs site (scripts/mkdocs_hooks.py), which
shows the root files CHANGELOG.md, CONTRIBUTING.md and ARCHITECTURE.md as pages of its own."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\[[^\]\n]*\]\((?P<target>[^)\s]+)\)")  # links and images
OUTSIDE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|#)", re.IGNORECASE)  # a URL or an anchor here
FENCE = re.compile(r"^\s*(```|~~~)")
CODE = re.compile(r"`[^`\n]*`")


def markdown_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "*.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [ROOT / name for name in listed if (ROOT / name).is_file()]


def relative_links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of every relative link outside code, as a code host reads them."""
    links: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for match in LINK.finditer(CODE.sub("", line)):
            target = match["target"]
            if not OUTSIDE.match(target) and not target.startswith("/"):
                links.append((number, target))
    return links


def test_every_relative_link_names_a_file_of_the_repository() -> None:
    files = markdown_files()
    assert ROOT / "docs" / "index.md" in files and ROOT / "README.md" in files
    broken = [
        f"{path.relative_to(ROOT)}:{line}: {target}"
        for path in files
        for line, target in relative_links(path)
        if not (path.parent / target.split("#", 1)[0]).exists()
    ]
    assert not broken, (
        "links to no file (a site-only page is linked by its file, ../CHANGELOG.md):\n" + "\n".join(broken)
    )


def test_a_link_that_leads_nowhere_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "[a](changelog.md) `[b](x.md)` ![c](img/c.svg) [d](#here) [e](https://x.org/y)\n"
        "```\n[f](g.md)\n```\n",
        encoding="utf-8",
    )
    assert relative_links(page) == [(1, "changelog.md"), (1, "img/c.svg")]


@pytest.fixture(scope="module")
def hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("heka_docs_hooks", ROOT / "scripts" / "mkdocs_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def on_site(hooks: ModuleType, page: str, markdown: str, repo_url: str = "") -> str:
    config = {"docs_dir": str(ROOT / "docs"), "repo_url": repo_url}
    fake = SimpleNamespace(file=SimpleNamespace(src_uri=page))
    result: str = hooks.on_page_markdown(markdown, fake, config, None)
    return result


@pytest.mark.parametrize(
    ("page", "markdown", "site"),
    [
        ("index.md", "[Changelog](../CHANGELOG.md)", "[Changelog](changelog.md)"),
        ("operations.md", "[c](../CHANGELOG.md#state-formats)", "[c](changelog.md#state-formats)"),
        (
            "index.md",
            "[A](../ARCHITECTURE.md) [C](../CONTRIBUTING.md)",
            "[A](architecture.md) [C](contributing.md)",
        ),
        ("reference/api.md", "[c](../../CHANGELOG.md)", "[c](../changelog.md)"),
        ("index.md", "[q](quickstart.md) [s](#here)", "[q](quickstart.md) [s](#here)"),
        ("api.md", "[p](../proto/heka/v1/game_service.proto)", "p"),
    ],
)
def test_the_site_links_a_root_file_to_its_page(
    hooks: ModuleType, page: str, markdown: str, site: str
) -> None:
    assert on_site(hooks, page, markdown) == site


def test_the_site_links_other_repository_files_to_the_code_host(hooks: ModuleType) -> None:
    url = "https://example.org/heka"
    assert on_site(hooks, "api.md", "[p](../proto/heka/v1/game_service.proto)", url) == (
        f"[p]({url}/blob/main/proto/heka/v1/game_service.proto)"
    )
    assert on_site(hooks, "index.md", "[c](../CHANGELOG.md)", url) == "[c](changelog.md)"
