"""The search's settings and the values that cross a process: :class:`MctsParams` and the
bot spec grammar that reads them (:func:`parse_params`), :class:`Limits` (when one search
stops) and :class:`SearchResult` (what it returns).

A spec's parameters (``mcts:hard,workers=2``, ``mcts:iterations=2000,ms=500,c=0.7``) are a
preset name and ``key=value`` items; each :class:`MctsParams` field says, in its metadata,
the parser of its value and the other keys it answers to. The search itself is
:mod:`ai.mcts`; its root parallelism (:mod:`ai.root_parallel`) sends these values to worker
processes, so they are frozen dataclasses that pickle in either build.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, Final, cast

from ai import presets
from ai.bot import BotSpecError, Budget
from ai.knowledge import FULL_ROLLOUT, ROLLOUTS
from ai.learned import EVALUATIONS, LEARNED
from engine._mypyc import picklable

# ---------------------------------------------------------------------------------------
# The settings and the spec grammar
# ---------------------------------------------------------------------------------------

_NONE: Final = ("none", "")
_OFF: Final = ("off", "none", "no")
_BOOLS: Final = {
    "on": True,
    "true": True,
    "1": True,
    "yes": True,
    "off": False,
    "false": False,
    "0": False,
    "no": False,
}


#: The largest budgets a spec may ask for: a search holds its tables for the whole budget up
#: front, and beyond these a decision takes hours (``hard`` spends 10,000 iterations).
MAX_ITERATIONS: Final = 1_000_000
MAX_MILLISECONDS: Final = 3_600_000.0


def _iterations(text: str) -> int | None:
    if text in _NONE:
        return None
    value = int(text)
    if value < 1:
        raise ValueError(text)
    if value > MAX_ITERATIONS:
        raise BotSpecError(f"mcts parameter iterations: at most {MAX_ITERATIONS:,}, not {value:,}")
    return value


def _milliseconds(text: str) -> float | None:
    if text in _NONE:
        return None
    value = float(text)
    if not value > 0:
        raise ValueError(text)
    if value > MAX_MILLISECONDS:
        raise BotSpecError(f"mcts parameter ms: at most {MAX_MILLISECONDS:,.0f} (an hour), not {text}")
    return value


def _non_negative(text: str) -> float:
    """A finite number of at least 0 (``inf`` would make the search's scores NaN)."""
    value = float(text)
    if not 0 <= value < math.inf:
        raise ValueError(text)
    return value


def _weight(text: str) -> float:
    value = 0.0 if text in _OFF else float(text)
    if not 0 <= value < math.inf:
        raise ValueError(text)
    return value


#: The largest belief strength (``MctsParams.belief``): weights ``exp(belief × x)`` of
#: progress values ``x`` in [0, 1] stay finite and positive.
MAX_BELIEF: Final = 20.0


def _belief(text: str) -> float:
    value = _weight(text)
    if value > MAX_BELIEF:
        raise ValueError(text)
    return value


def _rollout(text: str) -> str:
    if text not in ROLLOUTS:
        raise BotSpecError(f"unknown rollout policy {text!r} (known: {', '.join(ROLLOUTS)})")
    return text


def _cutoff(text: str) -> int:
    value = FULL_ROLLOUT if text in ("end", "none", "inf") else int(text)
    if value < FULL_ROLLOUT:
        raise ValueError(text)
    return value


def _evaluation(text: str) -> str:
    if text not in EVALUATIONS:
        raise BotSpecError(f"unknown evaluation {text!r} (known: {', '.join(EVALUATIONS)})")
    return text


def _order(text: str) -> str | None:
    if text == "game":
        return None
    if text != LEARNED:
        raise BotSpecError(f"unknown root ordering {text!r} (known: game, {LEARNED})")
    return text


def _workers(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 64:
        raise ValueError(text)
    return value


def _discount(text: str) -> float:
    value = float(text)
    if not 0 < value <= 1:
        raise ValueError(text)
    return value


def _boolean(text: str) -> bool:
    if text not in _BOOLS:
        raise ValueError(text)
    return _BOOLS[text]


def _spec(parse: Callable[[str], object], *aliases: str, accepts: str) -> dict[str, object]:
    """A field's spec-string reading (``mcts:key=value``): its parser (``ValueError`` for a
    bad value), the other keys it answers to, and the values it accepts (for messages)."""
    return {"parse": parse, "aliases": aliases, "accepts": accepts}


_FINITE: Final = "a finite number, at least 0"
_FINITE_OR_OFF: Final = "a finite number, at least 0, or off"


@dataclasses.dataclass(frozen=True, slots=True)
class MctsParams:
    """Search settings; each field can be set in a bot spec (``mcts:hard,workers=2``, see
    :func:`parse_params`) by its name or an alias. ``None`` leaves a setting to the game's
    knowledge (:class:`ai.knowledge.GameKnowledge`)."""

    #: Iteration budget (spec ``iterations``, ``it``, ``n``; ``none``: time only).
    iterations: int | None = dataclasses.field(
        default=1000,
        metadata=_spec(_iterations, "it", "n", accepts=f"a whole number 1..{MAX_ITERATIONS:,}, or none"),
    )
    #: Millisecond budget (spec ``ms``; ``none``: iterations only).
    milliseconds: float | None = dataclasses.field(
        default=None,
        metadata=_spec(
            _milliseconds, "ms", accepts=f"a number above 0, at most {MAX_MILLISECONDS:,.0f}, or none"
        ),
    )
    #: UCB1 exploration constant.
    c: float = dataclasses.field(default=0.7, metadata=_spec(_non_negative, accepts=_FINITE))
    #: Rollout policy (:data:`ai.knowledge.ROLLOUTS`); ``None``: the game's default.
    rollout: str | None = dataclasses.field(
        default=None, metadata=_spec(_rollout, accepts=", ".join(ROLLOUTS))
    )
    #: Actions after the leaf before the evaluator: ``None`` the game's default,
    #: ``FULL_ROLLOUT`` (-1; spec ``end``) to the end, ``k >= 0`` the heuristic after k.
    cutoff: int | None = dataclasses.field(
        default=None, metadata=_spec(_cutoff, accepts="end, or a whole number, at least 0")
    )
    #: Independent searches whose root statistics are summed (root parallelism).
    workers: int = dataclasses.field(default=1, metadata=_spec(_workers, accepts="a whole number 1..64"))
    #: Per-ply discount of returns (plies from the root to the end of the rollout): among
    #: equally won lines the search prefers the shorter, among lost ones the longer.
    discount: float = dataclasses.field(
        default=0.995, metadata=_spec(_discount, accepts="a number above 0, at most 1")
    )
    #: Stop an iteration-budgeted search (one worker) as soon as the most-visited root
    #: action can no longer be overtaken: its lead in visits exceeds the iterations left.
    #: The chosen action is then exactly the one the full budget would choose.
    early_stop: bool = dataclasses.field(default=True, metadata=_spec(_boolean, accepts="on or off"))
    #: Spend the whole budget whatever the position: no early stop, and a single legal
    #: action searched like any other instead of returned at once. For a decision the other
    #: seats do not see (a secret action, ``engine.core.SECRET_ACTION``), whose iterations
    #: and time reach them: with early stop or the shortcut, both would show how clear-cut,
    #: or how forced, a choice was that only the hidden hand explains.
    conceal: bool = dataclasses.field(default=False, metadata=_spec(_boolean, accepts="on or off"))
    #: Progressive widening at the root: the search considers only the first
    #: ``WIDEN_BASE + widen * sqrt(iterations so far)`` root actions of the game's root
    #: ordering (:meth:`ai.knowledge.GameKnowledge.root_order`: most promising first, from
    #: the player's view). ``0`` (spec ``off``) = every legal action from the start.
    widen: float | None = dataclasses.field(default=None, metadata=_spec(_weight, accepts=_FINITE_OR_OFF))
    #: Root prior (PUCT, root only): with ``prior = w > 0`` a root action's selection value
    #: is ``mean + w * P(a) * sqrt(N) / (1 + visits)`` instead of UCB1, where ``P`` gives the
    #: action of rank ``r`` in the game's root ordering a weight ``1 / (r + 1)`` (normalised)
    #: and ``N`` counts the root's iterations: the search follows the ordering's favourites
    #: unless their values say otherwise. ``0`` (spec ``off``) = UCB1 everywhere.
    prior: float | None = dataclasses.field(default=None, metadata=_spec(_weight, accepts=_FINITE_OR_OFF))
    #: The root ordering that ``widen`` and ``prior`` follow: ``game`` (``None``; the game's
    #: knowledge, :meth:`ai.knowledge.GameKnowledge.root_order`) or ``learned``: the root
    #: player's modelled chance to win (:mod:`ai.learned`, its own view's features) after
    #: each action, in one determinisation of its view drawn from the seed, highest first.
    order: str | None = dataclasses.field(default=None, metadata=_spec(_order, accepts=f"game or {LEARNED}"))
    #: Evaluation at the rollout cut-off: ``heuristic`` (the game's knowledge) or ``learned``
    #: (the model of :mod:`ai.learned` for the game and player count; the ``expert`` preset).
    #: ``None``: the heuristic.
    evaluation: str | None = dataclasses.field(
        default=None, metadata=_spec(_evaluation, "eval", accepts=", ".join(EVALUATIONS))
    )
    #: Temperature of the final choice: ``0`` plays the most-visited root action; ``t > 0``
    #: samples a root action with probability proportional to ``visits ** (1 / t)`` with the
    #: seeded RNG (:func:`choose_final`), so a weaker level makes the mistakes its search
    #: nearly preferred rather than random ones. ``t > 0`` also turns ``early_stop`` off
    #: (the visit counts, not only the leader, decide).
    temp: float = dataclasses.field(
        default=0.0, metadata=_spec(_non_negative, "temperature", accepts=_FINITE)
    )
    #: RAVE (rapid action value estimation, Gelly & Silver 2007), with ``rave = k > 0``: each
    #: decision also keeps, per action, the mean return of the iterations in which its seat
    #: played that action *anywhere later* in the iteration (in the tree or the rollout; the
    #: "all moves as first" value, AMAF). Selection blends the two means,
    #: ``(1 - b) * mean + b * amaf + c * sqrt(ln avail / visits)`` with
    #: ``b = sqrt(k / (3 * visits + k))``: AMAF guides an action's first visits, its own mean
    #: takes over as visits grow (``k`` visits: b = 1/2). An action never played but with an
    #: AMAF value competes on that value; actions with neither are tried first. ``0`` (spec
    #: ``off``) = plain UCB1. Not with ``prior`` (two root selection rules).
    rave: float = dataclasses.field(default=0.0, metadata=_spec(_weight, accepts=_FINITE_OR_OFF))
    #: Belief-weighted determinisation, with ``belief = b > 0`` (at most :data:`MAX_BELIEF`):
    #: each sampled world's hidden parts that the game's knowledge models
    #: (:meth:`ai.knowledge.GameKnowledge.belief`) are drawn by how well they explain what
    #: the other seats showed, the more so the larger ``b``; ``0`` (spec ``off``) = uniformly
    #: among the worlds consistent with the view, as the engine samples them.
    belief: float = dataclasses.field(
        default=0.0, metadata=_spec(_belief, accepts=f"a number 0..{MAX_BELIEF:g}, or off")
    )

    @property
    def budget(self) -> Budget:
        return Budget(self.iterations, self.milliseconds)


#: Spec key -> MctsParams field, from the fields' names and aliases.
_SPEC_KEYS: Final[dict[str, dataclasses.Field[object]]] = {
    key: f for f in dataclasses.fields(MctsParams) for key in (f.name, *f.metadata["aliases"])
}
_KNOWN_KEYS: Final = ", ".join(
    f.name + "".join(f"/{a}" for a in f.metadata["aliases"]) for f in dataclasses.fields(MctsParams)
)


def parse_params(params: str) -> tuple[str, MctsParams]:
    """Parse ``"medium"``, ``"hard,workers=2"``, ``"iterations=2000,ms=500,c=0.7,
    rollout=random,cutoff=20,workers=2"``... into (canonical name, params).

    A preset name (``easy``, ``medium``, ``hard``, ``expert``) sets the budget (and
    ``expert`` the learned evaluation and its ``c``, :data:`ai.presets.PRESET_EVALUATION`,
    :data:`ai.presets.PRESET_C`) first; ``key=value``
    items override it, each read by its :class:`MctsParams` field's parser. No preset and no
    budget means ``medium``; a budget without a preset has no other limit.
    """
    values: dict[str, object] = {}
    preset_name: str | None = None
    items = [t.strip() for t in params.split(",") if t.strip()]
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        value = value.strip().lower()
        if not eq:
            if key not in presets.PRESETS:
                raise BotSpecError(
                    f"unknown mcts preset {key!r} (known: {', '.join(presets.PRESETS)}; "
                    f"or key=value with keys {_KNOWN_KEYS})"
                )
            if preset_name is not None:
                raise BotSpecError("give at most one mcts preset")
            preset_name = key
            continue
        f = _SPEC_KEYS.get(key)
        if f is None:
            raise BotSpecError(f"unknown mcts parameter {key!r} (known: {_KNOWN_KEYS})")
        if f.name in values:
            raise BotSpecError(f"mcts parameter {f.name} given twice")
        parse = f.metadata["parse"]
        accepts = f.metadata["accepts"]
        if not value:
            raise BotSpecError(f"mcts parameter {key} has no value (expected {accepts})")
        try:
            values[f.name] = parse(value)
        except BotSpecError:
            raise
        except ValueError:
            raise BotSpecError(
                f"bad value for mcts parameter {key}: {value!r} (expected {accepts})"
            ) from None
    if preset_name is None and "iterations" not in values and "milliseconds" not in values:
        preset_name = presets.DEFAULT
    base = MctsParams()
    if preset_name is not None:
        b = presets.PRESETS[preset_name]
        base = dataclasses.replace(
            base,
            iterations=b.iterations,
            milliseconds=b.milliseconds,
            evaluation=presets.PRESET_EVALUATION.get(preset_name),
            c=presets.PRESET_C.get(preset_name, base.c),
        )
    elif "iterations" not in values:
        base = dataclasses.replace(base, iterations=None)
    p = dataclasses.replace(base, **cast("dict[str, Any]", values))  # typed by each field's parser
    if p.iterations is None and p.milliseconds is None:
        raise BotSpecError("an mcts bot needs an iteration or millisecond budget")
    if p.rave > 0 and p.prior:
        raise BotSpecError("rave and prior are two root selection rules: give one of them")
    given = [i.replace(" ", "").lower() for i in items if "=" in i]
    name = "mcts:" + ",".join(([preset_name] if preset_name else []) + given)
    return name.rstrip(":"), p


# ---------------------------------------------------------------------------------------
# One search: its limits and its result
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class Limits:
    """When a search stops: after ``iterations``, at the ``time.monotonic()`` instant
    ``stop_at``; ``deadline_given``: ``stop_at`` is the caller's deadline (stopping there
    counts as an interruption), not the search's own millisecond budget."""

    iterations: int | None = None
    stop_at: float | None = None
    deadline_given: bool = False
    #: Stop once the iterations left cannot change the most-visited root action.
    early_stop: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class SearchResult:
    """What one search returns (also what a worker process sends back)."""

    #: (action, visits, value sum) at the root, for the root seat, in first-tried order.
    root: tuple[tuple[int, int, float], ...]
    iterations: int
    elapsed: float
    principal_variation: tuple[int, ...]
    interrupted: bool
    #: Sampled worlds whose belief weights were unusable (all zero or not finite), drawn
    #: uniformly instead (``MctsParams.belief``).
    belief_fallbacks: int = 0


picklable(MctsParams, Limits, SearchResult)
