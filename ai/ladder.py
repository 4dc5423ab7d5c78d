"""The rating ladder: every preset, baseline and calibration level rated against a fixed
anchor pool, and the shipped tables that turn a requested rating into a bot.

The ladder (``heka arena --ladder``) is an arena (:mod:`ai.arena`) with the ``ladder``
lineup: the anchors (:data:`DEFAULT_ANCHORS`: ``random``, ``greedy``, ``easy``, ``medium``)
play round-robin among themselves, every other *candidate* plays each anchor, seats rotated
and deals shared within a block as in any arena. The ratings are the arena's Bradley–Terry
fit over all games with ``random`` pinned at 0 (:func:`ai.ratings.fit_elo`), with 95%
intervals; :func:`table_from_result` writes them as a *rating table*.

Rating tables (``ai/ladders/<game>-<N>p.json``, one per game and player count) list every
rated bot with its spec as played (``mcts:easy,ms=none,temp=1``), its display name
(``mcts:easy,temp=1``), rating and interval, with the command, seed, games per pair and
whether the figures are provisional. The *levels* of a table are the bots a target rating
may pick: ``random`` (the 0 of the scale) and every ``mcts`` entry (presets and calibration
levels: a budget and a temperature over the visit counts, :class:`ai.mcts.MctsParams`
``temp``); ``greedy`` is rated but is not a level. A target rating ``r`` is valid in
``[0, rating of the strongest level]`` (rounded down to an integer) and picks the level whose
rating is nearest (:meth:`RatingTable.level_for`; ties: the weaker).

Standard library only.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from ai.arena import ArenaConfig, ArenaResult

#: The anchor pool: every candidate plays each of these (and they play each other).
DEFAULT_ANCHORS: Final = ("random", "greedy", "mcts:easy,ms=none", "mcts:medium,ms=none")
#: The presets rated besides the anchors (iteration budgets only, so that a rating does
#: not depend on the machine's load: ``ms=none``, as in docs/bots.md's measured strength).
PRESET_CANDIDATES: Final = ("mcts:hard,ms=none", "mcts:expert,ms=none")
#: Calibration levels: ``easy``'s search (200 iterations) choosing with a temperature over
#: its root visits, from nearly random (8) to nearly ``easy`` (0.1), and budgets between
#: the presets. Chosen from short pilot runs (docs/bots.md, "The rating ladder"); 8 and 0.1
#: fill the gaps the provisional tables show below ``temp=4`` and above ``temp=0.25``.
CALIBRATION_LEVELS: Final = (
    "mcts:easy,ms=none,temp=8",
    "mcts:easy,ms=none,temp=4",
    "mcts:easy,ms=none,temp=2.5",
    "mcts:easy,ms=none,temp=2",
    "mcts:easy,ms=none,temp=1.5",
    "mcts:easy,ms=none,temp=1",
    "mcts:easy,ms=none,temp=0.5",
    "mcts:easy,ms=none,temp=0.25",
    "mcts:easy,ms=none,temp=0.1",
    "mcts:iterations=500,ms=none",
    "mcts:iterations=3000,ms=none",
)
#: The anchor every rating is relative to (its rating is 0 by definition).
ZERO: Final = "random"
#: The rating tables shipped with heka.
TABLE_DIR: Final = Path(__file__).resolve().parent / "ladders"
TABLE_FORMAT: Final = "heka-ladder/1"


class LadderError(ValueError):
    """A missing or malformed rating table, or a bad ladder setting."""


class TargetRatingError(ValueError):
    """A target rating outside a table's valid range (the message names the range)."""


def default_candidates() -> tuple[str, ...]:
    """Every bot the default ladder rates: the anchors, the other presets, the levels."""
    return (*DEFAULT_ANCHORS, *PRESET_CANDIDATES, *CALIBRATION_LEVELS)


def ladder_config(
    game: str,
    players: int | None,
    *,
    games_per_pair: int,
    seed: int = 1,
    workers: int = 1,
    candidates: Sequence[str] | None = None,
    anchors: Sequence[str] = DEFAULT_ANCHORS,
    options: tuple[tuple[str, Any], ...] = (),
) -> ArenaConfig:
    """The arena of a ladder: ``anchors`` first (round-robin), then every other candidate
    against each anchor. ``random`` must be an anchor (it is the 0 of the scale)."""
    if ZERO not in anchors:
        raise LadderError(f"the anchors must include {ZERO!r}: it is the 0 of the ratings")
    bots = list(dict.fromkeys(anchors))
    for c in candidates if candidates is not None else default_candidates():
        if c not in bots:
            bots.append(c)
    return ArenaConfig(
        game=game,
        bots=tuple(bots),
        games=games_per_pair,
        seed=seed,
        players=players,
        lineup="ladder",
        workers=workers,
        options=options,
        anchors=tuple(dict.fromkeys(anchors)),
    )


def display_name(spec: str) -> str:
    """A spec without ``ms=none`` (the ladder plays iteration budgets only; the server
    caps a level's time as it does a preset's): ``mcts:easy,ms=none,temp=1`` ->
    ``mcts:easy,temp=1``."""
    kind, sep, params = spec.partition(":")
    if not sep:
        return spec
    items = [i for i in params.split(",") if i.strip().replace(" ", "").lower() != "ms=none"]
    return kind + (":" + ",".join(items) if items else "")


# ---------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class RatedBot:
    """One rated bot of a table."""

    #: Display name (``random``, ``greedy``, ``mcts:easy``, ``mcts:easy,temp=1``).
    name: str
    #: The spec as the ladder played it (``ai.api.make_bot``).
    spec: str
    #: Elo, ``random`` = 0.
    rating: float
    #: Half-width of the 95% interval.
    ci95: float
    #: Weight of its rated games.
    games: float

    @property
    def is_level(self) -> bool:
        """Whether a target rating may pick it: ``random`` and the MCTS entries."""
        return self.spec == ZERO or self.spec.startswith("mcts:")


@dataclasses.dataclass(frozen=True, slots=True)
class RatingTable:
    game: str
    players: int
    #: Every rated bot, weakest first.
    bots: tuple[RatedBot, ...]
    games_per_pair: int
    seed: int
    command: str
    provisional: bool
    note: str = ""

    @property
    def levels(self) -> tuple[RatedBot, ...]:
        """The bots a target rating may pick, weakest first."""
        return tuple(b for b in self.bots if b.is_level)

    @property
    def max_target(self) -> int:
        """The highest valid target rating: the strongest level's, rounded down."""
        return max(0, math.floor(max(b.rating for b in self.levels)))

    def check_target(self, target: int) -> None:
        if not 0 <= target <= self.max_target:
            raise TargetRatingError(
                f"target rating {target} is out of range: {self.game} with {self.players} players "
                f"accepts 0..{self.max_target} (random = 0, strongest level "
                f"{max(self.levels, key=lambda b: b.rating).name})"
            )

    def level_for(self, target: int) -> RatedBot:
        """The level whose rating is nearest ``target`` (ties: the weaker);
        :class:`TargetRatingError` outside ``[0, max_target]``."""
        self.check_target(target)
        return min(self.levels, key=lambda b: (abs(b.rating - target), b.rating))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": TABLE_FORMAT,
            "game": self.game,
            "players": self.players,
            "provisional": self.provisional,
            "note": self.note,
            "command": self.command,
            "seed": self.seed,
            "games_per_pair": self.games_per_pair,
            "bots": [
                {
                    "name": b.name,
                    "spec": b.spec,
                    "rating": round(b.rating, 1),
                    "ci95": round(b.ci95, 1),
                    "games": round(b.games, 3),
                }
                for b in self.bots
            ],
        }


def table_from_result(
    result: ArenaResult, command: str, *, provisional: bool = True, note: str = ""
) -> RatingTable:
    """The rating table of a finished ladder (``random`` = 0)."""
    if ZERO not in result.config.bots:
        raise LadderError(f"a ladder's ratings need {ZERO!r} among the bots")
    ratings = result.ratings()
    bots = sorted(
        (RatedBot(display_name(r.name), r.name, r.elo, r.ci95, r.games) for r in ratings),
        key=lambda b: (b.rating, b.name),
    )
    return RatingTable(
        game=result.config.game,
        players=result.players,
        bots=tuple(bots),
        games_per_pair=result.config.games,
        seed=result.config.seed,
        command=command,
        provisional=provisional,
        note=note,
    )


def _number(value: object, what: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise LadderError(f"{where}: {what} must be a finite number, got {value!r}")
    return float(value)


def parse_table(data: object, where: str) -> RatingTable:
    """A rating table from its JSON data (:class:`LadderError` naming ``where`` otherwise)."""
    if not isinstance(data, Mapping) or data.get("format") != TABLE_FORMAT:
        raise LadderError(f"{where}: not a rating table (format {TABLE_FORMAT!r})")
    try:
        bots = []
        for i, b in enumerate(data["bots"]):
            bots.append(
                RatedBot(
                    name=str(b["name"]),
                    spec=str(b["spec"]),
                    rating=_number(b["rating"], f"bots[{i}].rating", where),
                    ci95=_number(b["ci95"], f"bots[{i}].ci95", where),
                    games=_number(b.get("games", 0), f"bots[{i}].games", where),
                )
            )
        table = RatingTable(
            game=str(data["game"]),
            players=int(data["players"]),
            bots=tuple(sorted(bots, key=lambda b: (b.rating, b.name))),
            games_per_pair=int(data["games_per_pair"]),
            seed=int(data["seed"]),
            command=str(data["command"]),
            provisional=bool(data["provisional"]),
            note=str(data.get("note", "")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, LadderError):
            raise
        raise LadderError(f"{where}: bad or missing field ({exc})") from exc
    zero = [b for b in table.bots if b.spec == ZERO]
    if not zero or zero[0].rating != 0.0:
        raise LadderError(f"{where}: {ZERO!r} must be rated, at exactly 0")
    return table


def table_path(game: str, players: int, directory: Path | None = None) -> Path:
    return (directory or TABLE_DIR) / f"{game}-{players}p.json"


@functools.cache
def load_table(game: str, players: int) -> RatingTable | None:
    """The shipped table of ``game`` with ``players`` players, or None when none is shipped
    (a malformed file raises :class:`LadderError`)."""
    path = table_path(game, players)
    if not path.exists():
        return None
    return read_table(path)


def read_table(path: Path | str) -> RatingTable:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise LadderError(f"{path}: cannot read the rating table ({exc})") from exc
    return parse_table(data, str(path))


def table_json(table: RatingTable) -> str:
    return json.dumps(table.to_json(), indent=1) + "\n"
