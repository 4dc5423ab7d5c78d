"""Fill the generated blocks of the docs pages with figures read from their sources.

    .venv/bin/python scripts/gen_figures.py          # rewrite the blocks in docs/**/*.md
    .venv/bin/python scripts/gen_figures.py --check  # exit 1 when a block is not current

A block is the text between ``<!-- generated:NAME -->`` and ``<!-- /generated -->`` in a
page; everything between the markers is replaced by :data:`BLOCKS` ``[NAME]()``. The
sources:

* ``presets``: the difficulty presets (``ai/presets.py``);
* ``rating-ranges``: the target ratings each shipped rating table accepts
  (``ai/ladders/*.json`` through ``ai.ladder``), whether it is measured or provisional, and
  its check's verdict;
* ``preset-strength``: each preset's rating in each table, and its time per decision in the
  ladder run that rated it (the run's JSON in ``bench/results/``, found by its ratings);
* ``preset-latency``: time per decision of each preset on mid-game positions
  (``bench/results/builds.txt``, ``bench/builds.py``), when that run measured today's
  presets;
* ``ray-cost``: the seconds per game of each level of the measured ladders, and the
  wall time of a ladder and its check on 2, 16 and 128 cores with Ray (their JSON in
  ``bench/results/`` and ``ray_overhead.txt``, through ``bench/ladder_cost.py``);
* ``review-validation``: each rated level's accuracy and blunders in review, and the rank
  correlation with its rating (``bench/results/review_validation_*.json``, from
  ``bench/review_validation.py``, with the shipped rating tables);
* ``review-cost``: a review's CPU per move and per game (``bench/results/review_cost.json``,
  ``bench/review_cost.py``);
* ``review-stream``: the time to a review stream's first and last messages
  (``bench/results/review_stream.json``, ``bench/review_stream.py``);
* ``state-versions-aton``, ``state-versions-osirium``: the state version the game writes,
  the previous release's that ``HEKA_PREVIOUS_STATE_VERSIONS`` writes, and the length of a
  state's text and of its sealed token on seeded random positions (the engine's codec and
  ``service/envelope.py``, computed here).

``make docs`` runs this; ``tests/test_docs_generated.py`` fails when a block is not current.
Only figures from these files appear: a figure that has no source is left out, not guessed.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import math
import random
import re
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
RESULTS = ROOT / "bench" / "results"
BLOCK = re.compile(r"(<!-- generated:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /generated -->)", re.DOTALL)
PRESET_ORDER = ("easy", "medium", "hard", "expert")
GAME_NAMES = {"aton": "Aton", "osirium": "Osirium"}


def _imports() -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def _source_note(*paths: str) -> str:
    return "<!-- from " + ", ".join(paths) + " by scripts/gen_figures.py: edit those, then `make docs` -->"


def _number(x: float) -> str:
    return f"{x:,.0f}"


# ---------------------------------------------------------------------------------------
# The rating tables and the ladder runs that made them
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    path: Path
    table: Any  # ai.ladder.RatingTable
    run: Path | None  # the ladder run's JSON that the table's ratings come from

    @property
    def label(self) -> str:
        teams = " in teams" if self.table.teams else ""
        return f"{GAME_NAMES.get(self.table.game, self.table.game)}, {self.table.players} players{teams}"


def _run_matches(run: dict[str, Any], table: Any) -> bool:
    """Whether a ladder run's JSON is the run that rated ``table``: same game, players, seed
    and games per pair, and every rating of the table the run's, to the table's rounding."""
    if (run.get("game"), run.get("players"), run.get("lineup")) != (table.game, table.players, "ladder"):
        return False
    if run.get("seed") != table.seed or run.get("games_per_pairing") != table.games_per_pair:
        return False
    elo = {b["name"]: b["elo"] for b in run.get("ratings", {}).get("bots", [])}
    return all(b.spec in elo and abs(elo[b.spec] - b.rating) <= 0.051 for b in table.bots)


@functools.cache
def configs() -> tuple[Config, ...]:
    _imports()
    from ai import ladder

    runs: list[tuple[Path, dict[str, Any]]] = []
    for path in sorted(RESULTS.rglob("ladder_*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("lineup") == "ladder":
            runs.append((path, data))
    out = []
    for path in sorted(ladder.TABLE_DIR.glob("*.json")):
        table = ladder.read_table(path)
        run = next((p for p, data in runs if _run_matches(data, table)), None)
        out.append(Config(path, table, run))
    return tuple(sorted(out, key=lambda c: (c.table.game, c.table.players, c.table.teams)))


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _status(table: Any) -> str:
    if table.check is not None and table.check.passed:
        return "measured"
    return "provisional" if table.provisional else "measured, not checked"


def _check_text(table: Any) -> str:
    if table.check is None:
        return "not checked yet"
    verdict = "passed" if table.check.passed else "failed"
    _imports()
    from ai import ladder

    return (
        f"{verdict}: {table.check.within} of {table.check.targets} targets within "
        f"±{ladder.TOLERANCE:.0f} Elo, mean error {table.check.mean_absolute_error:.0f} "
        f"(seed {table.check.seed})"
    )


def rating_ranges() -> str:
    _imports()
    from ai import ladder

    cs = configs()
    lines = [
        _source_note("ai/ladders/*.json"),
        "",
        "| Game | Players | `target_rating` accepts | Strongest level | Table | Games per pair | Check |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in cs:
        t = c.table
        top = ladder.curve(t)[-1]
        lines.append(
            f"| {GAME_NAMES.get(t.game, t.game)} | {t.players}{', teams' if t.teams else ''} | "
            f"0 to {t.max_target:,} | `{top.name}` | "
            f"{_status(t)} (`{_rel(c.path)}`) | {t.games_per_pair} | {_check_text(t)} |"
        )
    return "\n".join(lines)


def _decision_ms(run: Path) -> dict[str, float]:
    """Mean milliseconds per decision of each bot over a run's games (CPU time where its games
    record it: ai.arena.seconds_per_decision)."""
    _imports()
    from ai.arena import records_from_json, seconds_per_decision

    records = records_from_json(json.loads(run.read_text(encoding="utf-8")))
    return {spec: 1000 * s for spec, s in seconds_per_decision(records).items()}


def preset_strength() -> str:
    cs = configs()
    bots = [("greedy", "greedy")] + [(f"mcts:{p},ms=none", f"mcts:{p}") for p in PRESET_ORDER]
    lines = [
        _source_note("ai/ladders/*.json", "the ladder runs of bench/results/"),
        "",
        "Rating ± 95% interval; below it, the mean milliseconds per decision in the rating run.",
        "",
        "| Game, players | " + " | ".join(f"`{name}`" for _, name in bots) + " | Table, run |",
        "|---|" + "---|" * (len(bots) + 1),
    ]
    for c in cs:
        rated = {b.spec: b for b in c.table.bots}
        ms = _decision_ms(c.run) if c.run is not None else {}
        cells = []
        for spec, _ in bots:
            bot = rated.get(spec)
            if bot is None:
                cells.append("not rated")
                continue
            took = f"<br>{ms[spec]:,.1f} ms" if spec in ms else ""
            cells.append(f"{bot.rating:,.0f} ± {bot.ci95:,.0f}{took}")
        source = f"{_status(c.table)}, `{_rel(c.run)}`" if c.run is not None else _status(c.table)
        lines.append(f"| {c.label} | " + " | ".join(cells) + f" | {source} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# The presets
# ---------------------------------------------------------------------------------------


def presets() -> str:
    _imports()
    from ai import presets as p
    from ai.mcts_params import MctsParams

    default_c = MctsParams().c
    lines = [
        _source_note("ai/presets.py"),
        "",
        "| Preset | Iterations | Time cap per decision | Evaluation | Exploration `c` |",
        "|---|---|---|---|---|",
    ]
    for name in PRESET_ORDER:
        b = p.PRESETS[name]
        default = " (the default)" if name == p.DEFAULT else ""
        cap = f"{b.milliseconds / 1000:g} s" if b.milliseconds is not None else "none"
        iterations = _number(b.iterations) if b.iterations is not None else "none"
        evaluation = p.PRESET_EVALUATION.get(name, "heuristic")
        c = p.PRESET_C.get(name, default_c)
        lines.append(f"| `mcts:{name}`{default} | {iterations} | {cap} | {evaluation} | {c:g} |")
    return "\n".join(lines)


def _builds_latency() -> tuple[str, str, dict[str, float]] | None:
    """builds.txt's command line, its "after" presets and its "after" milliseconds per row,
    or None when it has no latency section."""
    path = RESULTS / "builds.txt"
    if not path.exists():
        return None
    text = path.read_text(encoding="utf-8")
    head = text.splitlines()[0].lstrip("# ").strip()
    m = re.fullmatch(r"(?:\S*/)?python (\S+.*?)\s+\((.*)\)", head)
    if m:  # "CMD   (NOTE)" -> "`CMD`; NOTE"
        head = f"`{m[1]}`; {m[2]}"
    else:
        head = f"`{head}`"
    after = re.search(r"after:\s+compiled build, presets (\{[^}]*\})", text)
    section = text.split("bot move latency per preset", 1)
    if after is None or len(section) < 2:
        return None
    rows: dict[str, float] = {}
    for line in section[1].splitlines():
        m = re.fullmatch(r"\s+(\w+ \dp \w+)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+x", line)
        if m:
            rows[m[1]] = float(m[3])
    return head, after[1], rows


def preset_latency() -> str:
    _imports()
    from ai import presets as p

    found = _builds_latency()
    lines = [_source_note("bench/results/builds.txt", "ai/presets.py"), ""]
    if found is None:
        return "\n".join([*lines, "No latency run in `bench/results/builds.txt`."])
    head, measured, rows = found
    measured_presets = {k: int(v) for k, v in re.findall(r"'(\w+)': (\d+)", measured)}
    current = {k: p.PRESETS[k].iterations for k in measured_presets if k in p.PRESETS}
    if current != measured_presets:
        return "\n".join(
            [
                *lines,
                f"`bench/results/builds.txt` measured the presets {measured_presets} (iterations); today's "
                f"are {current}: run `bench/builds.py` again (`make bench`) for current figures.",
            ]
        )
    configs_seen = sorted({r.rsplit(" ", 1)[0] for r in rows}, key=lambda s: (s.split()[0], s.split()[1]))
    names = [n for n in PRESET_ORDER if any(f"{cfg} {n}" in rows for cfg in configs_seen)]
    lines += [
        f"Median milliseconds per decision, compiled build, four mid-game positions per game ({head}):",
        "",
        "| Game, players | " + " | ".join(f"`mcts:{n}`" for n in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for cfg in configs_seen:
        game, players = cfg.split()
        cells = [f"{rows[f'{cfg} {n}']:,.0f}" if f"{cfg} {n}" in rows else "—" for n in names]
        lines.append(f"| {GAME_NAMES.get(game, game)}, {players[:-1]} players | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _significant(x: float) -> str:
    """``x`` to two significant figures (at least units), with thousands separators."""
    if x <= 0:
        return "0"
    return f"{round(x, 1 - math.floor(math.log10(x))):,.0f}"


def players_per_pod() -> str:
    """docs/operations.md, "Players per pod": players at once against each preset on a default
    pod (2 search workers), one move of the person every 10 s. Aton `easy` is the overload run's
    measured capacity; the others follow from the presets' time per decision (builds.txt):
    workers ÷ time for `medium` and `hard`; for `easy`, whose searches are short, the measured run's
    time per bot move beyond Aton `easy`'s search (the server's part of a bot move) is added to
    Osirium `easy`'s search."""
    found = _builds_latency()
    lines = [_source_note("bench/results/builds.txt", "bench/results/overload.txt"), ""]
    overload = (RESULTS / "overload.txt").read_text(encoding="utf-8")
    m = re.search(r"Capacity: the best closed-loop\s+goodput of the after run, (\d+) bot moves/s", overload)
    if found is None or m is None:
        missing = "No latency run in `bench/results/builds.txt` or no capacity in `overload.txt`."
        return "\n".join([*lines, missing])
    rows = found[2]
    slots, seconds = 2, 10.0
    measured = float(m[1])  # bot moves a second, Aton easy, through the server
    per_move_server = slots / measured - rows["aton 2p easy"] / 1000  # seconds of a slot beyond the search

    def players(moves_per_second: float, bots_per_person_move: int) -> str:
        return "≈ " + _significant(moves_per_second * seconds / bots_per_person_move)

    cells = {
        ("easy", "aton"): players(measured, 1) + f" (measured: {measured:,.0f} bot moves a second)",
        ("easy", "osirium"): players(slots / (rows["osirium 4p easy"] / 1000 + per_move_server), 3),
    }
    for preset in ("medium", "hard"):
        cells[(preset, "aton")] = players(slots / (rows[f"aton 2p {preset}"] / 1000), 1)
        cells[(preset, "osirium")] = players(slots / (rows[f"osirium 4p {preset}"] / 1000), 3)
    lines += ["| Preset | Aton (2 players) | Osirium (4 players) |", "|---|---|---|"]
    for preset in ("easy", "medium", "hard"):
        lines.append(f"| `{preset}` | {cells[(preset, 'aton')]} | {cells[(preset, 'osirium')]} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# What a ladder costs, on N cores with Ray
# ---------------------------------------------------------------------------------------


@functools.cache
@functools.cache
def _bench_module(name: str) -> ModuleType:
    """A bench script as a module (bench/NAME.py), for the figures it computes; loaded once."""
    _imports()  # (the scripts import bench.table)
    spec = importlib.util.spec_from_file_location(f"heka_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (their dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def _ladder_cost() -> ModuleType:
    """bench/ladder_cost.py, which computes these figures for bench/results/ladder_cost.txt."""
    return _bench_module("ladder_cost")


def _level(spec: str) -> str:
    """A ladder level's name in the table: its spec without ``ms=none`` (every level has it)."""
    return spec.replace(",ms=none", "")


def ray_cost() -> str:
    lc = _ladder_cost()
    overhead = lc.ray_overhead()
    measured = [(label, lc.load(ladder), lc.load(check)) for label, ladder, check in lc.MEASURED]
    paths = [_rel(p) for _, ladder, check in lc.MEASURED for p in (ladder, check)]
    lines = [
        _source_note(*paths, "bench/results/ray_overhead.txt"),
        "",
        "Seconds of one core per game of each level of the ladders (a game runs on one core; CPU time "
        "where the games record it, else wall time): the mean over the level's games against the "
        "anchors, the `mcts:easy` temperature levels as a range.",
        "",
        "| Level | " + " | ".join(label for label, _, _ in measured) + " |",
        "|---|" + "---|" * len(measured),
    ]
    costs = [lc.level_costs(ladder) for _, ladder, _ in measured]
    temps = "mcts:easy,ms=none,temp="
    rows: dict[str, list[list[float]]] = {}
    for i, per in enumerate(costs):
        for spec, (_games, mean) in per.items():
            if spec == lc.ANCHOR_GAMES:
                name = "the anchors' games between themselves"
            elif spec.startswith(temps):
                name = temps
            else:
                name = f"`{_level(spec)}`"
            rows.setdefault(name, [[] for _ in measured])[i].append(mean)
    temp_levels = {s[len(temps) :] for per in costs for s in per if s.startswith(temps)}
    ordered = sorted(rows.items(), key=lambda kv: sum(min(c) for c in kv[1] if c))
    for name, cells in ordered:
        if name == temps:
            low, high = min(temp_levels, key=float), max(temp_levels, key=float)
            name = f"`mcts:easy`, temperature {low} to {high} ({len(temp_levels)} levels)"
        text = [
            "—" if not c else (f"{min(c):.2f}" if len(c) == 1 else f"{min(c):.2f} to {max(c):.2f}")
            for c in cells
        ]
        lines.append(f"| {name} | " + " | ".join(text) + " |")
    lines += [
        "",
        f"Wall time with Ray, each game one task on one core: the games' seconds over N, no less than "
        f"the run's longest game, plus Ray's overhead of {overhead * 1000:.1f} ms a game as if it were "
        "not shared out between the cores; in brackets the most it can be (the longest game started "
        "last). The check runs after its ladder.",
        "",
        "| Run | Games | CPU time of the games | Longest game | "
        + " | ".join(f"{n} cores" for n in lc.CORES)
        + " |",
        "|---|---|---|---|" + "---|" * len(lc.CORES),
    ]
    for label, ladder, check in measured:
        parts = [("ladder", [lc.RunCost.of(ladder)]), ("check", [lc.RunCost.of(check)])]
        parts.append(("ladder, then check", parts[0][1] + parts[1][1]))
        for what, runs in parts:
            games = sum(r.games for r in runs)
            seconds = sum(r.seconds for r in runs)
            longest = max(r.longest for r in runs)
            costs_on = []
            for n in lc.CORES:
                estimate, bound = lc.sequence(runs, n, overhead)
                costs_on.append(f"{lc.duration(estimate)} ({lc.duration(bound)})")
            lines.append(
                f"| {label}: {what} | {games:,} | {lc.duration(seconds)} | {lc.duration(longest)} | "
                + " | ".join(costs_on)
                + " |"
            )
    return "\n".join(lines)


def review_validation() -> str:
    _imports()
    from ai.ladder import load_table, read_table
    from ai.review import game_accuracy

    rv = _bench_module("review_validation")
    runs = sorted(RESULTS.glob("review_validation_*.json"))
    lines = [_source_note(*(_rel(p) for p in runs)), ""]
    for path in runs:
        data = json.loads(path.read_text())
        a = data["args"]
        table = read_table(ROOT / a["table"]) if a.get("table") else load_table(a["game"], a["players"])
        if table is None:
            raise SystemExit(f"{_rel(path)}: no table shipped for {a['game']} with {a['players']} players")
        rated = {b.spec: b for b in table.bots}
        rows = []
        for spec in dict.fromkeys(g["level"] for g in data["games"]):
            mine = [g for g in data["games"] if g["level"] == spec]
            grades = [x for g in mine for x in g["grades"]]
            n = max(1, len(grades))
            bot = rated.get(spec)
            if bot is None:
                continue
            rows.append(
                (
                    bot.rating,
                    f"| `{bot.name}` | {bot.rating:+.0f} | {len(grades):,} | "
                    f"{game_accuracy(g['accuracy'] for g in mine):.1f} | "
                    f"{100 * grades.count('blunder') / n:.1f} | {100 * grades.count('mistake') / n:.1f} |",
                    game_accuracy(g["accuracy"] for g in mine),
                )
            )
        rows.sort(key=lambda r: r[0])
        rho = rv.spearman([r[0] for r in rows], [r[2] for r in rows])
        cpu = sum(g["review_cpu"] for g in data["games"])
        moves = sum(len(g["grades"]) for g in data["games"])
        lines += [
            f"**{GAME_NAMES[a['game']]}, {a['players']} players**: {len(rows)} levels, "
            f"{a['games']} games each against `{a['opponent']}`, reviewer `{a['preset']}`"
            + (
                (
                    f", ratings from the shipped table `{a['table']}`"
                    if str(a["table"]).startswith("ai/ladders/")
                    else f", ratings from `{a['table']}` (measured, not shipped)"
                )
                if a.get("table")
                else ""
            )
            + ". "
            f"Spearman's rank correlation of accuracy with rating: **{rho:.2f}**.",
            "",
            "| Level | Rating | Moves reviewed | Accuracy | Blunders per 100 moves "
            "| Mistakes per 100 moves |",
            "|---|---|---|---|---|---|",
            *(r[1] for r in rows),
            "",
            f"Review cost in this run: {1000 * cpu / max(1, moves):.0f} ms of CPU per move.",
            "",
        ]
    return "\n".join(lines)


def review_cost() -> str:
    path = RESULTS / "review_cost.json"
    data = json.loads(path.read_text())
    lines = [
        _source_note(_rel(path)),
        "",
        f"Reviewer `{data['reviewer']}` ({data['iterations']:,} iterations per decision), every "
        f"seat, on games of `{data['args']['player']}` in every seat; medians over "
        f"{data['args']['games']} games.",
        "",
        "| Game | Moves reviewed per game | Forced, skipped | CPU per game | CPU per move |",
        "|---|---|---|---|---|",
    ]
    for c in data["configs"]:
        games = c["games"]
        moves = statistics.median(g["moves"] for g in games)
        forced = statistics.median(g["forced"] for g in games)
        cpu = statistics.median(g["cpu"] for g in games)
        per = statistics.median(g["cpu"] / max(1, g["moves"]) for g in games)
        lines.append(
            f"| {GAME_NAMES[c['game']]}, {c['players']} players | {moves:.0f} | {forced:.0f} | "
            f"{cpu:.1f} s | {1000 * per:.0f} ms |"
        )
    return "\n".join(lines)


def review_stream() -> str:
    paths = sorted(RESULTS.glob("review_stream*.json"))
    lines = [
        _source_note(*(_rel(p) for p in paths)),
        "",
        "| Server | `workers` | Decisions reviewed | First message (the header) | First move | Last move "
        "| Wall time per move |",
        "|---|---|---|---|---|---|---|",
    ]
    for path in paths:
        data = json.loads(path.read_text())
        runs = data["runs"]

        def med(key: str, runs: list[dict[str, float]] = runs) -> float:
            return float(statistics.median(r[key] for r in runs))

        lines.append(
            f"| `{data['server']}` | {data.get('workers') or 'default (1)'} | {med('moves'):.0f} | "
            f"{1000 * med('header'):.0f} ms | {med('first_move'):.2f} s | {med('last_move'):.1f} s | "
            f"{1000 * med('summary') / med('moves'):.0f} ms |"
        )
    data = json.loads(paths[0].read_text())
    lines += [
        "",
        f"Medians of {len(data['runs'])} runs each, on {data['cpus']} CPUs, one search worker per "
        "gRPC process unless `--search-workers` says otherwise.",
    ]
    return "\n".join(lines)


#: Positions per player count for the state sizes: seeded random playouts cut at random depths.
SIZE_POSITIONS = 30


def state_versions(game: str) -> str:
    """docs/rules/GAME.md, "Serialisation": the versions written and the sizes of a state."""
    _imports()
    from engine.registry import get_game
    from service.envelope import KeyRing
    from service.servicer import PREVIOUS_STATE_VERSIONS

    g = get_game(game)
    keys = KeyRing.ephemeral_ring()  # (a token's length does not depend on its key)
    current = g.new_initial_state(g.descriptor.min_players, 1).serialize().split(":")[1]
    previous = PREVIOUS_STATE_VERSIONS[game]
    lines = [
        _source_note(f"engine/{game}/codec.py", "service/envelope.py"),
        "",
        f"Written: `{game}:{current}:`. With `HEKA_PREVIOUS_STATE_VERSIONS=true` the service writes "
        f"the previous release's `{game}:{previous}:` instead "
        '([Operations, "Upgrades and rollbacks"](../operations.md#upgrades-and-rollbacks)).',
        "",
        "| players | state text, characters (median, range) | sealed token, characters (median) |",
        "|---|---|---|",
    ]
    for n in range(g.descriptor.min_players, g.descriptor.max_players + 1):
        texts = []
        for seed in range(SIZE_POSITIONS):
            state = g.new_initial_state(n, seed)
            rng = random.Random(seed)
            for _ in range(rng.randrange(0, 120)):
                if state.is_terminal():
                    break
                state.apply(rng.choice(state.legal_actions()))
            texts.append(state.serialize())
        sizes = sorted(len(t) for t in texts)
        token = statistics.median(len(keys.seal(t)) for t in texts)
        lines.append(f"| {n} | {statistics.median(sizes):,.0f} ({sizes[0]:,}–{sizes[-1]:,}) | {token:,.0f} |")
    lines += [
        "",
        f"On {SIZE_POSITIONS} positions per player count: seeded random games cut after 0 to 119 actions.",
    ]
    return "\n".join(lines)


BLOCKS: dict[str, Callable[[], str]] = {
    "presets": presets,
    "rating-ranges": rating_ranges,
    "preset-strength": preset_strength,
    "preset-latency": preset_latency,
    "players-per-pod": players_per_pod,
    "ray-cost": ray_cost,
    "review-validation": review_validation,
    "review-cost": review_cost,
    "review-stream": review_stream,
    "state-versions-aton": functools.partial(state_versions, "aton"),
    "state-versions-osirium": functools.partial(state_versions, "osirium"),
}


# ---------------------------------------------------------------------------------------


def fill(text: str, where: str, cache: dict[str, str]) -> str:
    def block(m: re.Match[str]) -> str:
        name = m["name"]
        if name not in BLOCKS:
            raise SystemExit(f"{where}: unknown generated block {name!r} (known: {', '.join(BLOCKS)})")
        if name not in cache:
            cache[name] = BLOCKS[name]().rstrip("\n") + "\n"
        return m[1] + cache[name] + m[4]

    return BLOCK.sub(block, text)


def pages() -> dict[Path, str]:
    """Each page with generated blocks and the text it must have."""
    cache: dict[str, str] = {}
    out = {}
    for path in sorted(DOCS.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        if "<!-- generated:" in text:
            out[path] = fill(text, _rel(path), cache)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a block is not current")
    args = parser.parse_args(argv)
    expected = pages()
    stale = [p for p, text in expected.items() if p.read_text(encoding="utf-8") != text]
    if args.check:
        for p in stale:
            print(f"{_rel(p)}: generated blocks not current: run scripts/gen_figures.py", file=sys.stderr)
        return 1 if stale else 0
    for p in stale:
        p.write_text(expected[p], encoding="utf-8")
        print(f"wrote {_rel(p)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
