"""MkDocs hooks of the docs site (mkdocs.yml, ``hooks:``).

* Pages kept at the repository root (``CHANGELOG.md``, ``CONTRIBUTING.md``,
  ``ARCHITECTURE.md``) are added to the site as pages of their own (:data:`ROOT_PAGES`), their
  links rebased from the root to ``docs/``, so that the same file reads right on a code host
  and on the site. A page links to such a file by its path in the repository
  (``../CHANGELOG.md#state-formats``), which a code host follows; on the site the link goes to
  the file's page (``changelog.md#state-formats``).
* A link from a page to a file of the repository outside ``docs/`` (``../examples/node/``,
  ``../proto/heka/v1/game_service.proto``) is checked: the file must exist, else the build
  warns (and ``mkdocs build --strict`` fails). It then links to the file on the code host
  when ``repo_url`` is set, and otherwise is shown as its text, without a link: the site
  publishes only the pages.

Links inside ``docs/`` are left to MkDocs' own validation (``validation:`` in mkdocs.yml:
missing pages and anchors are warnings, so errors under ``--strict``).
"""

from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.hooks.heka")

ROOT = Path(__file__).resolve().parent.parent
#: Site page -> the repository-root file it shows.
ROOT_PAGES = {
    "changelog.md": "CHANGELOG.md",
    "contributing.md": "CONTRIBUTING.md",
    "architecture.md": "ARCHITECTURE.md",
}

#: Repository-root file -> its site page.
_SITE_PAGE = {source: page for page, source in ROOT_PAGES.items()}

_FENCE = re.compile(r"^(```|~~~)")
_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]\n]*)\]\((?P<target>[^)\s]+)\)")
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|#|/)", re.IGNORECASE)


def _map_links(markdown: str, rewrite: Any) -> str:
    """Apply ``rewrite(match) -> str`` to every Markdown link outside fenced code blocks."""
    out: list[str] = []
    fenced = False
    for line in markdown.splitlines(keepends=True):
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            out.append(line)
            continue
        out.append(line if fenced else _LINK.sub(rewrite, line))
    return "".join(out)


def rebase_root_page(markdown: str) -> str:
    """Links of a repository-root file, rewritten for a page at the top of ``docs/``."""

    def rewrite(m: re.Match[str]) -> str:
        target = m["target"]
        if _EXTERNAL.match(target):
            return m[0]
        rebased = posixpath.relpath(posixpath.normpath(target), "docs")
        if target.endswith("/") and not rebased.endswith("/"):
            rebased += "/"
        return f"[{m['text']}]({rebased})"

    return _map_links(markdown, rewrite)


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for page, source in ROOT_PAGES.items():
        text = (ROOT / source).read_text(encoding="utf-8")
        files.append(File.generated(config, page, content=rebase_root_page(text)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:  # noqa: ARG001
    docs_dir = Path(config["docs_dir"]).resolve()
    page_dir = posixpath.dirname(page.file.src_uri)
    repo_url = (config.get("repo_url") or "").rstrip("/")

    def rewrite(m: re.Match[str]) -> str:
        target = m["target"]
        if _EXTERNAL.match(target):
            return m[0]
        path = target.split("#", 1)[0]
        resolved = (docs_dir / page_dir / path).resolve()
        if resolved == docs_dir or docs_dir in resolved.parents:
            return m[0]  # a page of the site: MkDocs checks it
        try:
            relative = resolved.relative_to(ROOT)
        except ValueError:
            log.warning("%s: link %r leaves the repository", page.file.src_uri, target)
            return m[0]
        if not resolved.exists():
            log.warning("%s: link %r: no such file in the repository", page.file.src_uri, target)
            return m[0]
        site_page = _SITE_PAGE.get(relative.as_posix())
        if site_page is not None:
            anchor = target[len(path) :]
            return f"[{m['text']}]({posixpath.relpath(site_page, page_dir or '.')}{anchor})"
        if repo_url:
            suffix = "/" if resolved.is_dir() else ""
            return f"[{m['text']}]({repo_url}/blob/main/{relative.as_posix()}{suffix})"
        return m["text"]

    return _map_links(markdown, rewrite)
