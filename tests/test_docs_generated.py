"""The docs site's generated pages are current with their sources (`make docs` regenerates
them): the API reference (proto comments, error reasons, settings) and the figures of the
marked blocks (rating tables, presets, bench results). A failure names the command to run."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIX = "run `.venv/bin/python scripts/{script}.py` (or `make docs`) and commit the result"


def script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"heka_docs_{name}", ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def reference() -> ModuleType:
    return script("gen_reference")


@pytest.fixture(scope="module")
def figures() -> ModuleType:
    return script("gen_figures")


def test_the_reference_pages_are_current(reference: ModuleType) -> None:
    stale = [p.relative_to(ROOT).as_posix() for p in reference.stale(reference.pages())]
    assert not stale, f"not current: {stale}: " + FIX.format(script="gen_reference")


def test_the_generated_blocks_are_current(figures: ModuleType) -> None:
    expected = figures.pages()
    assert ROOT / "docs" / "presets.md" in expected
    stale = [p.relative_to(ROOT).as_posix() for p, text in expected.items() if p.read_text() != text]
    assert not stale, f"generated blocks not current in {stale}: " + FIX.format(script="gen_figures")


def test_the_api_reference_has_every_rpc_message_field_and_enum_value() -> None:
    from service.gen.heka.v1 import game_service_pb2 as pb

    page = (ROOT / "docs" / "reference" / "api.md").read_text()
    headings = set(re.findall(r"^#{2,3} (\S+)$", page, re.MULTILINE))
    for method in pb.DESCRIPTOR.services_by_name["GameService"].methods:
        assert method.name in headings, method.name
    for message in pb.DESCRIPTOR.message_types_by_name.values():
        assert message.name in headings, message.name
        section = page.split(f"\n### {message.name}\n", 1)[1].split("\n### ", 1)[0]
        for f in message.fields:
            assert f"| `{f.name}` | {f.number} |" in section, f"{message.name}.{f.name}"
    for enum in pb.DESCRIPTOR.enum_types_by_name.values():
        assert enum.name in headings, enum.name
        for value in enum.values:
            assert f"| `{value.name}` | {value.number} |" in page, value.name


def test_the_error_page_lists_every_reason_with_a_status_code() -> None:
    import grpc

    from service.errors import REASONS

    page = (ROOT / "docs" / "reference" / "errors.md").read_text()
    codes = {c.name for c in grpc.StatusCode}
    rows = dict(re.findall(r"^\| `([A-Z_]+)` \| `([A-Z_]+)` \|", page, re.MULTILINE))
    for reason in REASONS:
        if reason.upper() not in codes:  # heka's own (a status code's name is listed below the table)
            assert reason.upper() in rows, reason
            assert rows[reason.upper()] in codes
    assert rows["PLAYER_REQUIRED"] == "INVALID_ARGUMENT" and rows["NOT_TO_ACT"] == "FAILED_PRECONDITION"
    assert rows["QUEUE_FULL"] == "RESOURCE_EXHAUSTED" and rows["DRAINING"] == "UNAVAILABLE"


def test_the_rating_ranges_are_the_shipped_tables(figures: ModuleType) -> None:
    from ai import ladder

    block = figures.rating_ranges()
    tables = sorted(ladder.TABLE_DIR.glob("*.json"))
    assert tables
    for path in tables:
        table = ladder.read_table(path)
        teams = ", teams" if table.teams else ""
        assert f"| {table.players}{teams} | 0 to {table.max_target:,} |" in block, path.name


def test_a_block_is_filled_between_its_markers_and_an_unknown_one_is_refused(figures: ModuleType) -> None:
    text = "before\n<!-- generated:presets -->\nstale\n<!-- /generated -->\nafter\n"
    filled = figures.fill(text, "page.md", {})
    assert filled.startswith("before\n<!-- generated:presets -->\n")
    assert filled.endswith("<!-- /generated -->\nafter\n")
    assert "stale" not in filled and "| `mcts:medium` (the default) |" in filled
    assert figures.fill(filled, "page.md", {}) == filled
    with pytest.raises(SystemExit, match="unknown generated block 'nope'"):
        figures.fill("<!-- generated:nope -->\n<!-- /generated -->", "page.md", {})


def test_a_ladder_run_is_matched_to_its_table_by_its_ratings(figures: ModuleType) -> None:
    configs = {(c.table.game, c.table.players): c for c in figures.configs()}
    aton = configs[("aton", 2)]
    assert aton.run is not None and aton.run.name == "ladder_aton2.json"
    data = {"game": "aton", "players": 2, "lineup": "ladder", "seed": aton.table.seed,
            "games_per_pairing": aton.table.games_per_pair,
            "ratings": {"bots": [{"name": b.spec, "elo": b.rating} for b in aton.table.bots]}}  # fmt: skip
    assert figures._run_matches(data, aton.table)
    data["ratings"]["bots"][-1]["elo"] += 1.0  # another run's ratings
    assert not figures._run_matches(data, aton.table)


def test_root_pages_are_rebased_for_the_site() -> None:
    hooks = script("mkdocs_hooks")
    text = (
        "[a](docs/security.md#what-the-backend-sets) [b](bench/results/README.md) "
        "[c](https://example.org/x) [d](#here)\n```\n[e](docs/api.md)\n```\n"
    )
    assert hooks.rebase_root_page(text) == (
        "[a](security.md#what-the-backend-sets) [b](../bench/results/README.md) "
        "[c](https://example.org/x) [d](#here)\n```\n[e](docs/api.md)\n```\n"
    )
