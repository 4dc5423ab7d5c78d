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
levels: a budget and a temperature over the visit counts, :class:`ai.mcts_params.MctsParams`
``temp``); ``greedy`` is rated but is not a level.

A target rating ``r`` is valid in ``[0, top of the curve]`` (rounded down to an integer) and
gives a bot on the table's **strength curve** (:meth:`RatingTable.level_for`): the levels in
the order of what they spend and how they choose (``random``; ``easy``'s search from the
highest temperature down to ``temp=0``; then the iteration budgets; then the learned
evaluation), their measured ratings made non-decreasing along that order by a weighted
isotonic fit (:func:`monotone`; weights ``1 / interval²``), and ``r`` interpolated between
the two neighbouring levels in the knob that separates them: the inverse temperature
``1 / t`` in proportion from ``random`` (``1 / t = 0``) to the first temperature level,
``log t`` between two temperatures, ``t`` linearly down to ``temp=0``, ``log iterations``
between two budgets (Elo grows about linearly in the log of a search's budget). Neighbours
that differ in anything else (``hard`` and ``expert``: another evaluation) are not
interpolated: the nearer one plays. So a request between two measured levels gets a bot
between them, not one of them 100 Elo away; ``heka arena --ladder --check TABLE`` plays the
picked bots and measures how close they land (docs/ladder.md, "The check").

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

from ai.arena import ArenaConfig, ArenaResult, costly_candidates
from ai.learned import LEARNED
from ai.mcts_params import MctsParams, parse_params
from engine.core import EngineError
from engine.registry import get_game

#: The anchor pool: every candidate plays each of these (and they play each other).
DEFAULT_ANCHORS: Final = ("random", "greedy", "mcts:easy,ms=none", "mcts:medium,ms=none")
#: The presets rated besides the anchors (iteration budgets only, so that a rating does
#: not depend on the machine's load: ``ms=none``, as in every recorded arena).
PRESET_CANDIDATES: Final = ("mcts:hard,ms=none", "mcts:expert,ms=none")
#: Calibration levels: ``easy``'s search (200 iterations) choosing with a temperature over
#: its root visits, from nearly random (8) to nearly ``easy`` (0.1), and budgets between
#: the presets. Chosen from short pilot runs (bench/results/notes/2026-12-01-rating-ladder.md); 8 and 0.1
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
    teams: bool = False,
    design: str = "fixed",
    predicted: Mapping[str, float] | None = None,
    costly_games: int | None = None,
) -> ArenaConfig:
    """The arena of a ladder: ``anchors`` first (round-robin), then every other candidate
    against each anchor. ``random`` must be an anchor (it is the 0 of the scale). With
    ``teams`` (Osirium, 4 players) each pair plays as two teams, seats 0+2 against 1+3.
    ``design``, ``predicted``: :class:`ai.arena.ArenaConfig`'s (``nearest``: a candidate plays
    its anchors nearest its rating, after a pilot or from ``predicted``), ``costly_games``
    (the fixed design: the games per anchor of a candidate that searches more than every
    anchor, :func:`ai.arena.costly_candidates`)."""
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
        teams=teams,
        lineup="ladder",
        workers=workers,
        options=options,
        anchors=tuple(dict.fromkeys(anchors)),
        design=design,
        predicted=tuple(sorted((predicted or {}).items())),
        costly_games=costly_games,
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
class TableCheck:
    """What a table's check found (``heka arena --ladder --check TABLE``, on another seed):
    how many requested ratings measured within :data:`TOLERANCE`, and the mean absolute
    error. A table ships as measured only with a check that :attr:`passed`."""

    seed: int
    targets: int
    within: int
    mean_absolute_error: float
    #: How the check placed its bots (:data:`CHECK_SCALES`).
    scale: str = "random"

    @property
    def passed(self) -> bool:
        return self.targets > 0 and self.within == self.targets and self.mean_absolute_error <= MAX_MEAN_ERROR

    @property
    def error_text(self) -> str:
        """The mean absolute error to one decimal, rounded up: an error past the limit never
        reads as the limit itself (30.04 is "30.1", not "30.0 over 30")."""
        return f"{math.ceil(self.mean_absolute_error * 10 - 1e-9) / 10:.1f}"

    def verdict(self) -> str:
        """One line: whether the check passes, and what failed."""
        if self.passed:
            return "the check passes"
        failed = []
        if self.within < self.targets:
            failed.append(f"{self.targets - self.within} target(s) outside ±{TOLERANCE:.0f} Elo")
        if self.mean_absolute_error > MAX_MEAN_ERROR:
            failed.append(f"mean absolute error {self.error_text} over {MAX_MEAN_ERROR:.0f}")
        return "the check fails: " + ("; ".join(failed) or "no target")

    def summary(self) -> str:
        return (
            f"checked on seed {self.seed}: {self.within} of {self.targets} targets within "
            f"±{TOLERANCE:.0f} Elo, mean absolute error {self.error_text}"
            + (", anchors held at the table's ratings" if self.scale == "anchors" else ", random = 0")
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "scale": self.scale,
            "targets": self.targets,
            "within": self.within,
            "tolerance": TOLERANCE,
            # Unrounded: read back, the verdict is the one the check gave (30.04 fails).
            "mean_absolute_error": round(self.mean_absolute_error, 6),
            "max_mean_absolute_error": MAX_MEAN_ERROR,
            "passed": self.passed,
        }


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
    #: The check the table shipped with (None: not checked).
    check: TableCheck | None = None
    #: A table of team games (Osirium O9): its ratings are measured in team play.
    teams: bool = False
    #: The games per anchor of the ladder's costly candidates, where they played fewer than
    #: ``games_per_pair`` (:func:`ai.arena.costly_candidates`); None: every pair played it.
    costly_games: int | None = None

    @property
    def games_text(self) -> str:
        """The table's games per pair, in words (``256 games per pair, 128 for the levels
        that search more a move than every anchor``)."""
        text = f"{self.games_per_pair} games per pair"
        if self.costly_games is not None:
            text += f", {self.costly_games} for the levels that search more a move than every anchor"
        return text

    @property
    def levels(self) -> tuple[RatedBot, ...]:
        """The bots a target rating may pick, weakest first."""
        return tuple(b for b in self.bots if b.is_level)

    @property
    def max_target(self) -> int:
        """The highest valid target rating: the top of the strength curve, rounded down."""
        return max(0, math.floor(curve(self)[-1].rating))

    def check_target(self, target: int) -> None:
        if not 0 <= target <= self.max_target:
            raise TargetRatingError(
                f"target rating {target} is out of range: {self.game} with {self.players} players "
                f"accepts 0..{self.max_target} (random = 0, strongest level {curve(self)[-1].name})"
            )

    def level_for(self, target: int) -> Level:
        """The bot playing at ``target`` on the strength curve (:func:`curve`): a level of
        the table where the curve passes exactly through it (ties: the weaker), else a bot
        interpolated between its two neighbours, or the nearer of the two where they cannot
        be interpolated (ties: the weaker); :class:`TargetRatingError` outside
        ``[0, max_target]``."""
        self.check_target(target)
        points = curve(self)
        i = next(i for i, p in enumerate(points) if p.rating >= target)
        if i == 0 or points[i].rating == target:
            return points[i]
        a, b = points[i - 1], points[i]
        f = (target - a.rating) / (b.rating - a.rating)
        spec = _between(a.spec, b.spec, f)
        if spec is None or spec in (a.spec, b.spec):
            if spec == b.spec or (spec is None and f > 0.5):
                return b
            return a
        return Level(display_name(spec), spec, float(target), interpolated=True)

    def to_json(self) -> dict[str, Any]:
        out = self._json()
        if self.check is not None:
            out["check"] = self.check.to_json()
        return out

    def _json(self) -> dict[str, Any]:
        return {
            "format": TABLE_FORMAT,
            "game": self.game,
            "players": self.players,
            **({"teams": True} if self.teams else {}),
            "provisional": self.provisional,
            "note": self.note,
            "command": self.command,
            "seed": self.seed,
            "games_per_pair": self.games_per_pair,
            **({"costly_games": self.costly_games} if self.costly_games is not None else {}),
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


@dataclasses.dataclass(frozen=True, slots=True)
class Level:
    """A bot that a target rating may play: a point of a table's strength curve (a measured
    level, ``interpolated`` False) or a bot between two of them."""

    #: Display name (``mcts:easy,temp=1``, ``mcts:easy,temp=1.41``).
    name: str
    #: The spec as the ladder plays it (``ms=none``; the server caps its time).
    spec: str
    #: Its rating on the curve: a level's fitted (monotone) rating, or the target.
    rating: float
    interpolated: bool = False


def monotone(values: Sequence[float], weights: Sequence[float]) -> list[float]:
    """The weighted least-squares non-decreasing fit of ``values`` (pool adjacent
    violators): where a level measured below a weaker one, both get their weighted mean."""
    blocks: list[tuple[float, float, int]] = []  # (mean, weight, count)
    for v, w in zip(values, weights, strict=True):
        mean, weight, count = v, w, 1
        while blocks and blocks[-1][0] > mean:
            m, wt, n = blocks.pop()
            mean, weight, count = (m * wt + mean * weight) / (wt + weight), wt + weight, n + count
        blocks.append((mean, weight, count))
    return [m for m, _, n in blocks for _ in range(n)]


def _params(spec: str) -> MctsParams | None:
    """An MCTS level's search settings (None for ``random``)."""
    kind, _, params = spec.partition(":")
    if kind != "mcts":
        return None
    try:
        return parse_params(params)[1]
    except ValueError as exc:  # BotSpecError
        raise LadderError(f"level {spec!r}: {exc}") from None


def _strength_order(bot: RatedBot) -> tuple[float, float, float, str]:
    """Where a level sits on the curve: ``random``; then by evaluation (the heuristic before
    the learned model), budget, and inverse temperature (``temp=0``, the most-visited action,
    last)."""
    p = _params(bot.spec)
    if p is None:
        return (-1.0, 0.0, 0.0, bot.spec)
    learned = 1.0 if p.evaluation == LEARNED else 0.0
    iterations = float(p.iterations) if p.iterations is not None else math.inf
    return (learned, iterations, math.inf if p.temp == 0 else 1.0 / p.temp, bot.spec)


@functools.lru_cache(maxsize=64)
def curve(table: RatingTable) -> tuple[Level, ...]:
    """A table's strength curve: its levels in strength order (:func:`_strength_order`),
    each with its rating made non-decreasing along that order (:func:`monotone`, weights
    ``1 / interval²``; ``random`` pinned at 0)."""
    levels = sorted(table.levels, key=_strength_order)
    weights = [1e12 if b.spec == ZERO else 1.0 / max(b.ci95, 1.0) ** 2 for b in levels]
    fitted = monotone([b.rating for b in levels], weights)
    return tuple(Level(b.name, b.spec, r) for b, r in zip(levels, fitted, strict=True))


def _same_but(a: MctsParams, b: MctsParams, field: str) -> bool:
    blank = {field: getattr(MctsParams(), field)}
    return dataclasses.replace(a, **blank) == dataclasses.replace(b, **blank)


def _number_text(x: float) -> str:
    """Three significant digits, no exponent below a million (``1.41``, ``0.05``, ``106``)."""
    return f"{float(f'{x:.3g}'):g}"


def _with(spec: str, key: str, value: str) -> str:
    """``spec`` with its :class:`MctsParams` field ``key`` (named by the field or one of its
    spec aliases) set to ``value``, else appended."""
    kind, _, params = spec.partition(":")
    items = [i.strip() for i in params.split(",") if i.strip()]
    field = next(f for f in dataclasses.fields(MctsParams) if f.name == key)
    names = (key, *field.metadata["aliases"])
    for j, item in enumerate(items):
        if item.partition("=")[0].strip().lower() in names:
            items[j] = f"{key}={value}"
            break
    else:
        items.append(f"{key}={value}")
    return f"{kind}:{','.join(items)}"


def _between(weaker: str, stronger: str, f: float) -> str | None:
    """The spec a fraction ``f`` (0..1) of the way from level ``weaker`` to the next level
    ``stronger`` of a curve, or None where the two differ in more than one knob."""
    a, b = _params(weaker), _params(stronger)
    if b is None:
        return None
    if a is None:  # random -> a temperature level: 1 / t in proportion (1 / t = 0 is uniform)
        if b.temp == 0 or f <= 0:
            return None
        return _with(stronger, "temp", _number_text(b.temp / f))
    if a.temp != b.temp and _same_but(a, b, "temp"):
        if a.temp > 0 and b.temp > 0:  # log t
            t = math.exp((1 - f) * math.log(a.temp) + f * math.log(b.temp))
        elif a.temp > 0:  # down to temp=0 (the most-visited action): t linearly
            t = a.temp * (1 - f)
        else:
            return None
        return _with(stronger, "temp", _number_text(t))
    if a.iterations != b.iterations and a.iterations and b.iterations and _same_but(a, b, "iterations"):
        n = round(math.exp((1 - f) * math.log(a.iterations) + f * math.log(b.iterations)))
        return _with(stronger, "iterations", str(n))
    return None


def curve_rating(table: RatingTable, spec: str) -> float:
    """The rating ``table``'s strength curve gives the bot ``spec``: a level's fitted rating,
    or for a bot between two neighbouring levels (as :meth:`RatingTable.level_for` makes
    them) the rating in proportion to its knob, in the same scale (``1 / t``, ``log t``,
    ``t``, ``log iterations``); the inverse of ``level_for`` up to the rounding of the knob.
    :class:`LadderError` for a bot that is not on the curve."""
    points = curve(table)
    p = _params(spec)
    for point in points:
        if _params(point.spec) == p and (p is not None or point.spec == spec):
            return point.rating
    if p is None:
        raise LadderError(f"{spec!r} is not on the table's strength curve")
    key = _strength_order(RatedBot(spec, spec, 0.0, 0.0, 0.0))
    i = next((i for i, q in enumerate(points) if _strength_order(_as_rated(q)) > key), len(points))
    if i == len(points):
        raise LadderError(f"{spec!r} lies above the table's strongest level {points[-1].name}")
    a, b = points[i - 1], points[i]
    pa, pb = _params(a.spec), _params(b.spec)
    assert pb is not None  # random is the weakest level
    f: float | None = None
    if _same_but(p, pb, "temp") and pb.temp > 0 and p.temp >= pb.temp and pa is None:
        f = pb.temp / p.temp  # 1 / t in proportion from random
    elif pa is not None and _same_but(p, pb, "temp") and _same_but(pa, pb, "temp") and pa.temp > 0:
        if pb.temp > 0:
            f = (math.log(p.temp) - math.log(pa.temp)) / (math.log(pb.temp) - math.log(pa.temp))
        else:
            f = 1.0 - p.temp / pa.temp
    elif (
        pa is not None
        and _same_but(p, pb, "iterations")
        and _same_but(pa, pb, "iterations")
        and p.iterations
        and pa.iterations
        and pb.iterations
    ):
        f = math.log(p.iterations / pa.iterations) / math.log(pb.iterations / pa.iterations)
    if f is None or not 0.0 <= f <= 1.0:
        raise LadderError(f"{spec!r} is not between the levels {a.name} and {b.name} by one knob")
    return a.rating + f * (b.rating - a.rating)


def _as_rated(level: Level) -> RatedBot:
    return RatedBot(level.name, level.spec, level.rating, 0.0, 0.0)


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
        teams=result.config.teams,
        bots=tuple(bots),
        games_per_pair=result.config.games,
        # Only where some candidate played them: with no costly candidate every pair played
        # ``games_per_pair``.
        costly_games=result.config.costly_games if costly_candidates(result.config) else None,
        seed=result.config.seed,
        command=command,
        provisional=provisional,
        note=note,
    )


#: A check's target (docs/ladder.md, "The check"): each requested rating's bot measures within
#: this many Elo of the request...
TOLERANCE: Final = 75.0
#: ... and the mean absolute error over the requests is at most this.
MAX_MEAN_ERROR: Final = 30.0


def table_check(rows: Sequence[CheckRow], seed: int, scale: str = "random") -> TableCheck:
    """The verdict of a check's rows (played on ``seed``, placed by ``scale``)."""
    mae = sum(abs(r.error) for r in rows) / len(rows) if rows else 0.0
    return TableCheck(seed, len(rows), sum(r.within for r in rows), mae, scale)


#: The note of a table measured in full and not checked yet (``heka arena --ladder --ship``):
#: provisional until a check passes.
UNCHECKED = "provisional: not checked"


def checked_table(table: RatingTable, check: TableCheck, *, provisional: bool = False) -> RatingTable:
    """``table`` as it ships after ``check``: measured (not provisional) when the table was
    measured in full, its note saying how it was measured and checked. A table whose check
    failed is not shipped (:class:`LadderError`), unless ``provisional``: then it ships as
    provisional, its note and its ``check`` saying that the check failed."""
    if not check.passed and not provisional:
        raise LadderError(
            f"the check failed ({check.within} of {check.targets} targets within ±{TOLERANCE:.0f} Elo, "
            f"mean absolute error {check.error_text}, at most {MAX_MEAN_ERROR:.0f}): "
            "the table is not shipped"
        )
    # A table whose pairs played different numbers of games says so (ListGames' note): its
    # games_per_pair is the most any pair played.
    sizes = f"; {table.games_text}" if table.costly_games is not None else ""
    if not check.passed:
        note = f"provisional: its check failed ({check.summary()}; {check.verdict()}){sizes}"
        return dataclasses.replace(table, provisional=True, note=note, check=check)
    # A table provisional only for want of its check (heka arena --ladder --ship) is measured
    # once it passes one; one provisional for its few games stays so, saying it was checked.
    provisional = table.provisional and not table.note.startswith(UNCHECKED)
    note = check.summary() if not provisional else f"{table.note}; {check.summary()}"
    if table.costly_games is not None and table.games_text not in note:
        note += sizes
    return dataclasses.replace(table, provisional=provisional, note=note.strip("; "), check=check)


def default_check_targets(table: RatingTable) -> tuple[int, ...]:
    """The targets a check measures by default: every 100 Elo from 100, and the top."""
    top = table.max_target
    return (*range(100, top, 100), top) if top > 0 else ()


def check_bots(table: RatingTable, targets: Sequence[int]) -> dict[int, Level]:
    """The bot each target plays (:meth:`RatingTable.level_for`)."""
    return {t: table.level_for(t) for t in targets}


@dataclasses.dataclass(frozen=True, slots=True)
class CheckRow:
    """One requested rating of a check, and what its bot measured."""

    target: int
    level: Level
    measured: float
    ci95: float

    @property
    def error(self) -> float:
        return self.measured - self.target

    @property
    def within(self) -> bool:
        return abs(self.error) <= TOLERANCE


#: How a check places its bots on the table's scale (``heka arena --check-scale``): ``anchors``
#: holds every anchor at the table's rating of it, so that a check measures where each target's
#: bot stands among the bots the table was measured against; ``random`` pins only ``random`` at
#: 0 and so re-measures, with its own noise, the distance from ``random`` to every other bot
#: (bench/ladder_scale.py measured it: about ±85 Elo at 50 games per pair, most of a level's
#: interval).
CHECK_SCALES: Final = ("anchors", "random")


def held_anchors(table: RatingTable, anchors: Sequence[str]) -> dict[str, float]:
    """The table's ratings of ``anchors`` (:class:`LadderError` naming one it does not rate)."""
    rated = {b.spec: b.rating for b in table.bots}
    missing = [a for a in anchors if a not in rated]
    if missing:
        raise LadderError(
            f"the table does not rate the anchor(s) {', '.join(missing)}: use --check-scale random"
        )
    return {a: rated[a] for a in anchors}


def check_rows(
    bots: Mapping[int, Level], result: ArenaResult, held: Mapping[str, float] | None = None
) -> list[CheckRow]:
    """Each target's bot's rating in the check's own games: ``random`` = 0, or, with
    ``held``, the anchors at those ratings (:func:`held_anchors`)."""
    rated = {r.name: r for r in result.ratings(fixed=held)}
    rows = []
    for target, level in sorted(bots.items()):
        r = rated.get(level.spec)
        if r is None:
            raise LadderError(f"the check did not rate {level.spec!r}")
        rows.append(CheckRow(target, level, r.elo, r.ci95))
    return rows


#: The largest rating, and interval, a table may hold: far above any level (Elo differences
#: of thousands are certain results), small enough that every target below it can be listed.
MAX_RATING: Final = 10_000.0


def _number(value: object, what: str, where: str, low: float = -math.inf, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise LadderError(f"{where}: {what} must be a finite number, got {value!r}")
    if not low <= value <= high:
        raise LadderError(f"{where}: {what} must lie in [{low:g}, {high:g}], got {value!r}")
    return float(value)


def _field(data: Mapping[str, Any], key: str, kind: type, where: str, default: object = ...) -> Any:
    """``data[key]`` of JSON type ``kind`` (int: not a bool), else a :class:`LadderError`."""
    if key not in data:
        if default is ...:
            raise LadderError(f"{where}: missing field {key!r}")
        return default
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise LadderError(f"{where}: {key!r} must be {_KINDS[kind]}, not {value!r}")
    return value


_KINDS: Final = {int: "an integer", str: "a string", bool: "true or false", list: "a list"}


def parse_table(data: object, where: str) -> RatingTable:
    """A rating table from its JSON data (:class:`LadderError` naming ``where`` and the field
    otherwise: every field of its type, nothing coerced)."""
    if not isinstance(data, Mapping) or data.get("format") != TABLE_FORMAT:
        raise LadderError(f"{where}: not a rating table (format {TABLE_FORMAT!r})")
    bots = []
    for i, b in enumerate(_field(data, "bots", list, where)):
        at = f"{where}: bots[{i}]"
        if not isinstance(b, Mapping):
            raise LadderError(f"{at} must be an object")
        spec = _field(b, "spec", str, at)
        # An unknown parameter or bad value names the level; other kinds are no level.
        try:
            params = _params(spec)
        except LadderError as exc:
            raise LadderError(f"{at}: {exc}") from None
        if params is None and spec not in (ZERO, "greedy"):
            raise LadderError(f"{at}: 'spec' {spec!r} is not random, greedy or an mcts level")
        bots.append(
            RatedBot(
                name=_field(b, "name", str, at),
                spec=spec,
                rating=_number(b.get("rating"), f"bots[{i}].rating", where, -MAX_RATING, MAX_RATING),
                ci95=_number(b.get("ci95"), f"bots[{i}].ci95", where, 0.0, MAX_RATING),
                games=_number(b.get("games", 0), f"bots[{i}].games", where, 0.0),
            )
        )
    specs = [b.spec for b in bots]
    twice = sorted({s for s in specs if specs.count(s) > 1})
    if twice:
        raise LadderError(f"{where}: {', '.join(twice)} rated more than once")
    table = RatingTable(
        game=_field(data, "game", str, where),
        players=_field(data, "players", int, where),
        bots=tuple(sorted(bots, key=lambda b: (b.rating, b.name))),
        games_per_pair=_field(data, "games_per_pair", int, where),
        seed=_field(data, "seed", int, where),
        command=_field(data, "command", str, where),
        provisional=(provisional := _field(data, "provisional", bool, where)),
        note=_field(data, "note", str, where, ""),
        check=_parse_check(data.get("check"), where, provisional),
        teams=_field(data, "teams", bool, where, False),
        costly_games=_field(data, "costly_games", int, where, None),
    )
    if table.players < 1 or table.games_per_pair < 1:
        raise LadderError(f"{where}: 'players' and 'games_per_pair' must be at least 1")
    if table.costly_games is not None and not 1 <= table.costly_games <= table.games_per_pair:
        raise LadderError(
            f"{where}: 'costly_games' must be 1..{table.games_per_pair} ('games_per_pair'), "
            f"not {table.costly_games}"
        )
    try:  # the game, its player count and the team variant, as a game of the table is set up
        get_game(table.game).new_initial_state(table.players, 0, {"teams": True} if table.teams else {})
    except EngineError as exc:
        raise LadderError(f"{where}: {exc}") from None
    zero = [b for b in table.bots if b.spec == ZERO]
    if not zero or zero[0].rating != 0.0:
        raise LadderError(f"{where}: {ZERO!r} must be rated, at exactly 0")
    return table


def _parse_check(data: object, where: str, provisional: bool) -> TableCheck | None:
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise LadderError(f"{where}: check must be an object")
    at = f"{where}: check"
    scale = _field(data, "scale", str, at, "random")
    if scale not in ("random", "anchors"):
        raise LadderError(f"{at}: 'scale' must be random or anchors, not {scale!r}")
    check = TableCheck(
        seed=_field(data, "seed", int, at),
        targets=_field(data, "targets", int, at),
        within=_field(data, "within", int, at),
        mean_absolute_error=_number(data.get("mean_absolute_error"), "check.mean_absolute_error", where, 0.0),
        scale=scale,
    )
    if not 0 <= check.within <= check.targets:
        raise LadderError(f"{at}: 'within' must lie in 0..'targets'")
    if not check.passed and not provisional:
        raise LadderError(
            f"{where}: its check failed ({check.summary()}): a table ships as measured only with a "
            "passing check"
        )
    return check


def table_path(game: str, players: int, directory: Path | None = None, *, teams: bool = False) -> Path:
    return (directory or TABLE_DIR) / f"{game}-{players}p{'-teams' if teams else ''}.json"


@functools.cache
def load_table(game: str, players: int, teams: bool = False) -> RatingTable | None:
    """The shipped table of ``game`` with ``players`` players (``teams``: of its team games),
    or None when none is shipped (a malformed file raises :class:`LadderError`)."""
    path = table_path(game, players, teams=teams)
    if not path.exists():
        return None
    return read_table(path)


#: The largest rating table read (a table is a few KiB; ``/dev/zero`` is refused, not read
#: until memory runs out).
MAX_TABLE_BYTES: Final = 16 * 2**20


def read_table(path: Path | str) -> RatingTable:
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_TABLE_BYTES + 1)
        if len(raw) > MAX_TABLE_BYTES:
            raise LadderError(f"{path}: larger than {MAX_TABLE_BYTES:,} bytes: not a rating table")
        data = json.loads(raw.decode("utf-8-sig"))  # a byte-order mark is not part of the text
    except UnicodeDecodeError:
        raise LadderError(f"{path}: not a rating table (not a text, UTF-8, file)") from None
    except RecursionError:
        raise LadderError(f"{path}: cannot read the rating table (JSON nested too deeply)") from None
    except OSError as exc:
        raise LadderError(f"{path}: cannot read the rating table: {exc.strerror or exc}") from None
    except ValueError as exc:  # a JSONDecodeError, or a number too long to read
        if isinstance(exc, LadderError):
            raise
        why = "a number too long to read" if "integer string conversion" in str(exc) else str(exc)
        raise LadderError(f"{path}: cannot read the rating table ({why})") from None
    return parse_table(data, str(path))


def table_json(table: RatingTable) -> str:
    return json.dumps(table.to_json(), indent=1) + "\n"
