"""The docs' figures (docs/img/) are what scripts/gen_plots.py makes from the committed
results: every figure is made, well-formed and current. The plots need the ``docs`` extra
(matplotlib): without it they are skipped, saying so; the board diagrams need nothing."""

from __future__ import annotations

import importlib.util
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
IMG = ROOT / "docs" / "img"
NO_MATPLOTLIB = "matplotlib is not installed: the plots need the docs extra (pip install -e '.[docs]')"


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_plots", ROOT / "scripts" / "gen_plots.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


gen = load_generator()


def pinned_matplotlib() -> str:
    """The version the docs extra pins (pyproject.toml), which made the committed plots."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r'"matplotlib==([^"]+)"', text)
    assert match, "pyproject.toml: the docs extra pins matplotlib"
    return match.group(1)


def test_the_board_diagrams_are_current() -> None:
    made = gen.figures(plots=False)
    assert set(made) == {name for name, _ in gen.BOARDS}
    for name, data in made.items():
        ET.fromstring(data)
        assert (IMG / name).read_bytes() == data, f"docs/img/{name} is stale: run python scripts/gen_plots.py"


@pytest.fixture(scope="module")
def plots() -> dict[str, bytes]:
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip(NO_MATPLOTLIB)
    figures: dict[str, bytes] = gen.figures()
    return figures


def test_the_generator_makes_every_figure_from_the_results(plots: dict[str, bytes]) -> None:
    ladders = {f"ladder-{p.stem}.svg" for p in (ROOT / "ai" / "ladders").glob("*.json")}
    assert ladders <= set(plots)
    assert {"strength-vs-time.svg", "latency-by-preset.svg", *(name for name, _ in gen.BOARDS)} <= set(plots)
    for name, data in plots.items():
        root = ET.fromstring(data)
        assert root.tag.endswith("svg"), name
        assert b"<dc:date>" not in data, name  # no date: the same sources give the same bytes
    # Each plot names its source.
    assert b"ai/ladders/aton-2p.json" in plots["ladder-aton-2p.svg"]
    assert b"bench/results/ladder_aton2.json" in plots["strength-vs-time.svg"]
    assert b"bench/results/builds.txt" in plots["latency-by-preset.svg"]
    for name in ladders:
        provisional = gen.read_table(
            ROOT / "ai" / "ladders" / name.removeprefix("ladder-").replace(".svg", ".json")
        )
        assert (b"PROVISIONAL" in plots[name]) == provisional.provisional, name
    # Every committed figure is one the generator makes.
    assert {p.name for p in IMG.glob("*.svg")} == set(plots)


def test_the_committed_plots_are_current(plots: dict[str, bytes]) -> None:
    import matplotlib

    if matplotlib.__version__ != pinned_matplotlib():
        pytest.skip(
            f"matplotlib {matplotlib.__version__} is installed, the plots are made with "
            f"{pinned_matplotlib()} (the docs extra): its SVG differs in detail"
        )
    stale = [name for name, data in plots.items() if (IMG / name).read_bytes() != data]
    assert stale == [], f"stale in docs/img/: {', '.join(stale)}: run python scripts/gen_plots.py"
