"""Generate the figures of the docs (docs/img/) from the committed results, never by hand.

    python scripts/gen_plots.py            # write docs/img/*.svg
    python scripts/gen_plots.py --check    # exit 1 when a committed figure is not what its sources give

Plots (matplotlib, the ``docs`` extra: ``pip install -e '.[docs]'``):

- ``ladder-<game>-<n>p.svg``: each shipped rating table (``ai/ladders/*.json``, read with
  ``ai.ladder.read_table``): every rated bot's rating with its 95% interval, the valid range of
  target ratings; provisional tables are marked. ``ladder-<game>-<n>p-unshipped.svg``: a
  measured table of ``bench/results/partial/`` that does not ship yet.
- ``strength-vs-time.svg``: each ladder run's ratings against the mean thinking time per
  decision of each bot in the same games (``bench/results/ladder_*.json`` and
  ``bench/results/partial/ladder_*.json``, the arena's records).
- ``latency-by-preset.svg``: the presets' time per decision, from ``bench/results/builds.txt``
  (median over mid-game positions) and from the same ladder runs (mean over their games).

Board diagrams (standard library): ``board-aton.svg`` and ``board-osirium-4p.svg``, drawn by
``heka render`` from seeded states (:data:`BOARDS`).

The output is byte-for-byte reproducible for one matplotlib version (pinned in the docs
extra): fixed hash salt, text kept as text in the bundled DejaVu Sans, no date. Every
figure names the file it was drawn from.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from ai.arena import records_from_json, seconds_per_decision  # noqa: E402
from ai.ladder import RatingTable, display_name, read_table  # noqa: E402

OUT = ROOT / "docs" / "img"
LADDERS = ROOT / "ai" / "ladders"
PARTIAL = ROOT / "bench" / "results" / "partial"
BUILDS = ROOT / "bench" / "results" / "builds.txt"
#: The ladder runs (arena records: every game's seats, thinking time and decisions) whose
#: ratings and times the strength and latency plots show: the largest run of each
#: configuration.
LADDER_RUNS = (
    ("Aton, 2 players", "bench/results/ladder_aton2.json"),
    ("Osirium, 2 players", "bench/results/ladder_osirium2_measured.json"),
    ("Osirium, 3 players", "bench/results/ladder_osirium3_126.json"),
    ("Osirium, 4 players", "bench/results/ladder_osirium4_128.json"),
)
#: The board diagrams: file, then the arguments of ``heka render``.
BOARDS = (
    ("board-aton.svg", ["--game", "aton", "--seed", "3", "--moves", "63", "--seat", "1"]),
    (
        "board-osirium-4p.svg",
        ["--game", "osirium", "--players", "4", "--seed", "4", "--moves", "62", "--seat", "0"],
    ),
)
PRESETS = ("easy", "medium", "hard", "expert")
PRESET_COLOURS = {"easy": "#7fb3d5", "medium": "#2e86c1", "hard": "#1b4f72", "expert": "#c0392b"}
SVG_METADATA = {"Date": None}


def rel(path: Path | str) -> str:
    return Path(path).resolve().relative_to(ROOT).as_posix()


# ---------------------------------------------------------------------------------------
# matplotlib, set up for reproducible SVG
# ---------------------------------------------------------------------------------------


def pyplot() -> Any:
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "svg.hashsalt": "heka-figures",
            "svg.fonttype": "none",  # text stays text (searchable, small), in the bundled DejaVu Sans
            "font.family": "sans-serif",
            "font.sans-serif": ["DejaVu Sans", "Verdana", "Arial"],
            "font.size": 9,
            "axes.titlesize": 11,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.color": "#e3e3e3",
            "grid.linewidth": 0.6,
            "path.simplify": False,
        }
    )
    return plt


def svg_bytes(fig: Any) -> bytes:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata=SVG_METADATA)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buffer.getvalue().encode("utf-8")


def caption(fig: Any, lines: Sequence[str], *, width: int = 120) -> None:
    """Source lines under the plot, wrapped."""
    text = "\n".join(part for line in lines for part in textwrap.wrap(line, width) or [""])
    fig.text(0.01, 0.005, text, ha="left", va="bottom", fontsize=7, color="#555555")


# ---------------------------------------------------------------------------------------
# The rating ladders
# ---------------------------------------------------------------------------------------


def kind_of(name: str) -> str:
    """random, greedy, a preset (easy, medium, hard, expert) or a level between them."""
    if name in ("random", "greedy"):
        return name
    preset = name.removeprefix("mcts:")
    return preset if preset in PRESETS else "level"


def ladder_figure(table: RatingTable, source: Path, *, unshipped: bool) -> bytes:
    plt = pyplot()
    bots = table.bots
    fig, ax = plt.subplots(figsize=(8, 1.9 + 0.3 * len(bots)))
    height = fig.get_figheight()
    fig.subplots_adjust(left=0.24, right=0.97, top=1 - 0.4 / height, bottom=1.0 / height)
    top = table.max_target
    targets = f"target ratings it would allow: 0..{top}" if unshipped else f"valid target ratings 0..{top}"
    ax.axvspan(0, top, color="#eaf2f8", zorder=0)
    ax.axvline(top, color="#2e86c1", linestyle="--", linewidth=1, zorder=1)
    for y, bot in enumerate(bots):
        kind = kind_of(bot.name)
        colour = PRESET_COLOURS.get(kind, "#555555")
        marker = "D" if not bot.is_level else ("o" if kind in PRESETS else "s")
        face = "white" if not bot.is_level else colour
        ax.errorbar(
            bot.rating,
            y,
            xerr=bot.ci95 or None,
            fmt=marker,
            color=colour,
            markerfacecolor=face,
            markersize=6 if kind in PRESETS else 5,
            capsize=3,
            elinewidth=1.2,
            zorder=3,
        )
        ax.annotate(
            f"{bot.rating:.0f} ± {bot.ci95:.0f}" if bot.ci95 else f"{bot.rating:.0f} (the anchor)",
            (bot.rating + bot.ci95, y),
            xytext=(5, 0),
            textcoords="offset points",
            va="center",
            fontsize=7.5,
            color="#333333",
        )
    ax.set_yticks(range(len(bots)))
    ax.set_yticklabels([b.name for b in bots])
    for label, bot in zip(ax.get_yticklabels(), bots, strict=True):
        if kind_of(bot.name) in PRESETS:
            label.set_fontweight("bold")
    ax.set_ylim(-0.7, len(bots) - 0.3)
    right = max(b.rating + b.ci95 for b in bots)
    ax.set_xlim(min(0.0, *(b.rating - b.ci95 for b in bots)) - 20, right + 0.12 * right + 60)
    ax.set_xlabel("rating (Elo, random = 0), with its 95% interval")
    ax.grid(axis="y", visible=False)
    game = "Aton" if table.game == "aton" else "Osirium"
    state = (
        "measured, not shipped"
        if unshipped
        else ("provisional" if table.provisional else "measured and checked")
    )
    ax.set_title(
        f"{game}, {table.players} players{' in teams' if table.teams else ''}: the rating ladder ({state})",
        loc="left",
        fontweight="bold",
        color="#b9770e" if table.provisional or unshipped else "#1b1b1b",
    )
    if table.provisional:
        ax.text(
            0.5,
            0.5,
            "PROVISIONAL",
            transform=ax.transAxes,
            ha="center",
            va="center",
            fontsize=40,
            color="#b9770e",
            alpha=0.12,
            rotation=15,
            zorder=0,
        )
    handles = [
        plt.Line2D([], [], marker="o", linestyle="", color="#2e86c1", label="preset (bold)"),
        plt.Line2D([], [], marker="s", linestyle="", color="#555555", label="level between presets"),
        plt.Line2D(
            [], [], marker="D", linestyle="", color="#555555", markerfacecolor="white", label="not a level"
        ),
        plt.Rectangle((0, 0), 1, 1, color="#eaf2f8", label=targets),
    ]
    ax.legend(handles=handles, loc="lower right", fontsize=7.5, framealpha=0.95)
    notes = [f"Source: {rel(source)} ({table.games_text}), made by: {table.command}"]
    if table.note:
        notes.append(table.note)
    elif unshipped:
        notes.append("Not shipped: no check of this table yet (a table ships only with a passing check).")
    caption(fig, notes, width=125)
    return svg_bytes(fig)


def ladder_figures() -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for path in sorted(LADDERS.glob("*.json")):
        out[f"ladder-{path.stem}.svg"] = ladder_figure(read_table(path), path, unshipped=False)
    for path in sorted(PARTIAL.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and str(data.get("format", "")).startswith("heka-ladder/"):
            out[f"ladder-{path.stem}-unshipped.svg"] = ladder_figure(read_table(path), path, unshipped=True)
    return out


# ---------------------------------------------------------------------------------------
# Ladder runs: strength against time per decision
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunBot:
    name: str
    rating: float
    ci95: float
    ms_per_decision: float


@dataclass(frozen=True)
class Run:
    title: str
    source: str
    bots: tuple[RunBot, ...]
    games: int
    scheduled: int
    games_per_pairing: int
    workers: int
    interrupted: bool

    def note(self) -> str:
        parts = [
            f"{self.games:,} games",
            f"{self.games_per_pairing} per pairing",
            f"{self.workers} worker" + ("s" if self.workers != 1 else ""),
        ]
        if self.interrupted or self.games < self.scheduled:
            parts.append(f"stopped at {self.games:,} of {self.scheduled:,}")
        if "/partial/" in self.source:
            parts.append("not shipped")
        return ", ".join(parts)


def read_run(title: str, source: str) -> Run:
    """A ladder run's ratings and each bot's mean thinking time per decision over its games."""
    data = json.loads((ROOT / source).read_text(encoding="utf-8"))
    per_decision = seconds_per_decision(records_from_json(data))  # CPU time where recorded
    bots = tuple(
        RunBot(
            display_name(r["name"]),
            float(r["elo"]),
            float(r["ci95"]),
            1000.0 * per_decision[r["name"]],
        )
        for r in data["ratings"]["bots"]
        if r["name"] in per_decision
    )
    return Run(
        title,
        source,
        bots,
        int(data["games_played"]),
        int(data["games_scheduled"]),
        int(data["games_per_pairing"]),
        int(data["workers"]),
        bool(data["interrupted"]),
    )


def strength_time_figure(runs: Sequence[Run]) -> bytes:
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(10, 8.2), sharex=True)
    fig.subplots_adjust(left=0.08, right=0.98, top=0.88, bottom=0.13, hspace=0.42, wspace=0.18)
    fig.suptitle(
        "Strength against time per decision (ladder runs, iteration budgets, ms=none)",
        fontweight="bold",
        x=0.01,
        ha="left",
    )
    for ax, run in zip(axes.flat, runs, strict=True):
        search = sorted(
            (
                b
                for b in run.bots
                if b.name.startswith("mcts:") and "temp=" not in b.name and kind_of(b.name) != "expert"
            ),
            key=lambda b: b.ms_per_decision,
        )  # the line: the heuristic's search at growing budgets (expert evaluates with the learned model)
        ax.plot(
            [b.ms_per_decision for b in search],
            [b.rating for b in search],
            color="#aab7c4",
            linewidth=1,
            zorder=1,
        )
        for b in run.bots:
            kind = kind_of(b.name)
            if kind in ("random", "greedy"):  # under a millisecond: a line at its rating
                ax.axhline(b.rating, color="#888888", linestyle=":", linewidth=1, zorder=1)
                ax.text(
                    2900,
                    b.rating,
                    f"{b.name}: {b.rating:.0f}"
                    + (f" ± {b.ci95:.0f}" if b.ci95 else "")
                    + f", {b.ms_per_decision:.2f} ms",
                    fontsize=7.5,
                    color="#555555",
                    ha="right",
                    va="bottom",
                )
                continue
            if "temp=" in b.name:
                ax.errorbar(
                    b.ms_per_decision,
                    b.rating,
                    yerr=b.ci95,
                    fmt=".",
                    color="#c8c8c8",
                    elinewidth=0.6,
                    zorder=2,
                )
                continue
            colour = PRESET_COLOURS.get(kind, "#555555")
            ax.errorbar(
                b.ms_per_decision,
                b.rating,
                yerr=b.ci95,
                fmt="o",
                color=colour,
                capsize=2.5,
                markersize=5,
                zorder=3,
            )
            # expert sits above hard at about its time: its label goes to the left.
            left = kind == "expert"
            ax.annotate(
                b.name.removeprefix("mcts:").replace("iterations=", "it. "),
                (b.ms_per_decision, b.rating),
                xytext=(-6, 4) if left else (6, -9 if kind == "hard" else -3),
                textcoords="offset points",
                ha="right" if left else "left",
                fontsize=8,
                fontweight="bold" if kind in PRESETS else "normal",
            )
        ax.set_xscale("log")
        ax.set_xlim(4, 3000)
        ax.set_title(run.title, loc="left", fontweight="bold", pad=24)
        source = "\n".join(textwrap.wrap(f"{run.source}: {run.note()}", 78))
        ax.text(0.0, 1.02, source, transform=ax.transAxes, fontsize=7, color="#555555", va="bottom")
        ax.set_ylabel("rating (Elo, random = 0)")
    for ax in axes[-1]:
        ax.set_xlabel("mean thinking time per decision (ms, log scale)")
    caption(
        fig,
        [
            "Each bot's rating and interval from its run's own games; its time: the thinking time of all its "
            "decisions in those games over their number (CPU time where the games record it, else wall "
            "clock) on the machine of the run "
            "(bench/results/README.md). "
            "Grey points: easy with a sampling temperature (temp=...), which costs what easy costs; "
            "it. N: MCTS with N iterations. random and greedy decide in under a millisecond: dotted lines.",
        ],
        width=150,
    )
    return svg_bytes(fig)


# ---------------------------------------------------------------------------------------
# Latency by preset
# ---------------------------------------------------------------------------------------


def read_builds(path: Path) -> tuple[str, dict[str, dict[str, float]]]:
    """The compiled build's ("after") median ms per decision by configuration and preset, from
    the table that follows the ``bot move latency per preset`` line, and what the file says of
    the run (its first line: the command and the machine) and of that column."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("bot move latency per preset"))
    after = next(line.strip() for line in lines[start:] if line.strip().startswith("after:"))
    column = after.removeprefix("after:").strip()
    about = f"{lines[start].strip()}; the column 'after' ({column}). Run: {lines[0].lstrip('# ').strip()}"
    table: dict[str, dict[str, float]] = {}
    for line in lines[start + 4 :]:
        words = line.split()
        if len(words) < 5 or words[2] not in PRESETS:
            break
        table.setdefault(f"{words[0]} {words[1]}", {})[words[2]] = float(words[4])
    return about, table


def bars(ax: Any, groups: dict[str, dict[str, float]]) -> None:
    width = 0.2
    for k, preset in enumerate(PRESETS):
        xs = [i + (k - 1.5) * width for i, g in enumerate(groups) if preset in groups[g]]
        ys = [groups[g][preset] for g in groups if preset in groups[g]]
        if not xs:
            continue
        drawn = ax.bar(xs, ys, width, color=PRESET_COLOURS[preset], label=preset, zorder=2)
        ax.bar_label(drawn, labels=[f"{y:.0f}" if y >= 10 else f"{y:.1f}" for y in ys], fontsize=7, padding=1)
    ax.set_xticks(range(len(groups)))
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_xticklabels(list(groups))
    ax.set_yscale("log")
    ax.set_ylim(3, 3000)
    ax.grid(axis="x", visible=False)


def latency_figure(runs: Sequence[Run]) -> bytes:
    plt = pyplot()
    about, builds = read_builds(BUILDS)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.6), sharey=True)
    fig.subplots_adjust(left=0.07, right=0.97, top=0.8, bottom=0.24, wspace=0.06)
    fig.suptitle("Time per decision by preset", fontweight="bold", x=0.01, ha="left")
    bars(left, builds)
    handles = [plt.Rectangle((0, 0), 1, 1, color=PRESET_COLOURS[p]) for p in PRESETS]
    fig.legend(handles, [f"mcts:{p}" for p in PRESETS], loc="upper right", ncol=4, fontsize=8, frameon=False)
    left.set_title("median over 4 mid-game positions", loc="left", fontsize=10)
    left.text(
        0.0, 1.09, rel(BUILDS) + " (compiled build)", transform=left.transAxes, fontsize=7, color="#555555"
    )
    left.set_ylabel("ms per decision (log scale)")
    from_runs: dict[str, dict[str, float]] = {}
    for run in runs:
        short = run.title.replace(", ", " ").replace(" players", "p").lower()
        times = {b.name.removeprefix("mcts:"): b.ms_per_decision for b in run.bots}
        from_runs[short] = {p: times[p] for p in PRESETS if p in times}
    bars(right, from_runs)
    right.set_title("mean over every decision of a ladder run", loc="left", fontsize=10)
    right.text(
        0.0,
        1.09,
        "the ladder runs of strength-vs-time.svg (files below)",
        transform=right.transAxes,
        fontsize=7,
        color="#555555",
    )
    caption(
        fig,
        [
            f"Left, {rel(BUILDS)}: {about}",
            "Right: the ladder runs of strength-vs-time.svg "
            + "; ".join(f"{r.source} ({r.note()})" for r in runs)
            + ". A preset missing from a run was not in it. Wall clock, iteration budgets (ms=none).",
        ],
        width=170,
    )
    return svg_bytes(fig)


# ---------------------------------------------------------------------------------------
# Board diagrams
# ---------------------------------------------------------------------------------------


def board_figures() -> dict[str, bytes]:
    from service.cli import main as heka

    out: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in BOARDS:
            path = Path(tmp) / name
            if heka(["render", *args, "--out", str(path)]) != 0:
                raise SystemExit(f"heka render {' '.join(args)} failed")
            out[name] = path.read_bytes()
    return out


# ---------------------------------------------------------------------------------------


def figures(*, plots: bool = True) -> dict[str, bytes]:
    """Every figure by file name (``plots=False``: the board diagrams only, no matplotlib)."""
    out = board_figures()
    if plots:
        out.update(ladder_figures())
        runs = [read_run(title, source) for title, source in LADDER_RUNS]
        out["strength-vs-time.svg"] = strength_time_figure(runs)
        out["latency-by-preset.svg"] = latency_figure(runs)
    return dict(sorted(out.items()))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(OUT), help="folder to write (default: docs/img)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file there differs")
    args = parser.parse_args(argv)
    out = Path(args.out)
    made = figures()
    if args.check:
        stale = [
            name
            for name, data in made.items()
            if not (out / name).is_file() or (out / name).read_bytes() != data
        ]
        for name in stale:
            print(
                f"{out / name}: not what its sources give: run python scripts/gen_plots.py", file=sys.stderr
            )
        return 1 if stale else 0
    out.mkdir(parents=True, exist_ok=True)
    for name, data in made.items():
        (out / name).write_bytes(data)
        print(f"wrote {out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
