"""The summary table of an arena run, from its ``--json`` file (what ``heka arena`` printed).

Usage::

    .venv/bin/python bench/arena_summary.py bench/results/aton_greedy_random.json [...]

Prints, for each file, the command that reproduces the run (``heka arena ... --json FILE``)
and the report of :func:`ai.arena.format_result`: win rates with Wilson intervals, reasons
the games ended, and Elo ratings. ``bench/results/README.md`` lists the runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai.arena import ArenaConfig, ArenaResult, format_result, make_pairings, records_from_json


def command(data: dict[str, Any], path: str) -> str:
    """The ``heka arena`` command line of the run recorded in ``data``."""
    bots = ";".join(data["bots"])
    parts = ["heka arena", f"--game {data['game']}"]
    if data["players"] != 2:
        parts.append(f"--players {data['players']}")
    if data["teams"]:
        parts.append("--teams")
    if data["lineup"] != "round-robin":
        parts.append(f"--lineup {data['lineup']}")
    parts += [f'--bots "{bots}"', f"--games {data['games_per_pairing']}", f"--seed {data['seed']}"]
    parts += [f"--workers {data['workers']}", f"--json {path}"]
    return " ".join(parts)


def summary(path: str) -> str:
    data = json.loads(Path(path).read_text())
    config = ArenaConfig(
        game=data["game"],
        bots=tuple(data["bots"]),
        games=data["games_per_pairing"],
        seed=data["seed"],
        players=data["players"],
        teams=data["teams"],
        lineup=data["lineup"],
        workers=data["workers"],
        options=tuple(sorted(data["options"].items())),
    )
    pairings = make_pairings(
        config.bots,
        data["players"],
        teams=config.teams,
        lineup=config.lineup,
        anchors=tuple(data.get("anchors") or ()),
    )
    result = ArenaResult(
        config,
        data["players"],
        pairings,
        records_from_json(data),
        data["games_scheduled"],
        data["seconds"],
        data["interrupted"],
    )
    return f"$ {command(data, path)}\n\n{format_result(result)}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="arena --json files")
    args = ap.parse_args()
    print("\n\n".join(summary(f) for f in args.files))


if __name__ == "__main__":
    main()
