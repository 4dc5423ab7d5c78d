"""The one game interface every heka game implements.

Modelled on OpenSpiel's Game/State split and python-chess's value types:

* a :class:`Game` is an immutable rule set with a :class:`GameDescriptor` (what it is:
  player counts, options, information structure) and factories for states;
* a :class:`State` is a mutable position; it changes only through :meth:`State.apply`
  (fast path: the caller guarantees legality; events only when it passes a list) or
  :meth:`State.apply_action` (validated here, once for every game, then ``apply`` with a
  list: the events);
* actions are plain ``int`` ids, stable within a game (the same id always means the same
  action text, in every state), with a readable text form and structured fields;
* chance is never a decision: shuffles are resolved inside the engine from the state's own
  generator (:mod:`engine.rng`: keyed BLAKE2b for a game's chance), whose whole state is
  serialised, so the randomness still to come survives a serialisation round trip;
* :meth:`State.view` is what one player may see; :meth:`State.sample_consistent_state`
  re-deals everything that player cannot see (determinisation), which is what bots search.

Everything here is standard library only. Domain errors are ``ValueError`` subclasses so
that one place (the service) maps them to status codes.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import random
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final, Self, TypeAlias

from engine._mypyc import mypyc_attr, picklable

if TYPE_CHECKING:
    from engine.rng import SerialRng

# ---------------------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------------------

#: ``current_player()`` when the game is over.
TERMINAL: Final = -1

#: ``public_action()`` of an action whose identity the other players do not learn when it
#: is taken (Aton's secret exchange decision and arrangement).
SECRET_ACTION: Final = -1

#: The longest action text a game reads. The longest a game writes is under 80 characters;
#: the rest is room for the whitespace the parsers tolerate. A longer text is refused before
#: it is parsed or memoised, whatever it holds.
MAX_ACTION_TEXT: Final = 256

#: The longest state text a game reads: many times the longest a game writes (a few hundred
#: characters), and too short to hold a number of the 4,300 digits past which ``int()``
#: refuses to convert (Python's limit on integer strings).
MAX_STATE_TEXT: Final = 4096

# Values allowed inside events, options and action fields: JSON-like, immutable.
Scalar: TypeAlias = int | float | str | bool | None
FieldValue: TypeAlias = Scalar | tuple[Scalar, ...] | tuple[tuple[Scalar, ...], ...]

# ---------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------


class EngineError(ValueError):
    """Base class of every domain error raised by the engine."""


class UnknownGameError(EngineError):
    """No game is registered under that name."""


class GameOptionsError(EngineError):
    """Bad player count or bad game options at creation."""


class IllegalActionError(EngineError):
    """The action is not legal in this state (or the game is over)."""


class ActionParseError(EngineError):
    """An action text could not be parsed, or an action id is unknown to the game."""


class StateFormatError(EngineError):
    """A serialised state is corrupt, of an unknown version, or describes an impossible
    position (for example counters or cards that do not add up)."""


def check_action_text(game: str, text: object) -> str:
    """``text`` when it may be parsed as an action text of ``game``: a string of at most
    :data:`MAX_ACTION_TEXT` characters; :class:`ActionParseError` otherwise."""
    if not isinstance(text, str):
        raise ActionParseError(f"{game}: an action text must be a string, got {type(text).__name__}")
    if len(text) > MAX_ACTION_TEXT:
        raise ActionParseError(
            f"{game}: an action text is at most {MAX_ACTION_TEXT} characters; this one has {len(text)}"
        )
    return text


def check_state_text(game: str, data: object) -> str:
    """``data`` when it may be parsed as a state text of ``game``: a string of at most
    :data:`MAX_STATE_TEXT` characters; :class:`StateFormatError` otherwise."""
    if not isinstance(data, str):
        raise StateFormatError(f"{game} state: expected a string, got {type(data).__name__}")
    if len(data) > MAX_STATE_TEXT:
        raise StateFormatError(
            f"{game} state: a state text is at most {MAX_STATE_TEXT} characters; this one has {len(data)}"
        )
    return data


class GameOverError(IllegalActionError):
    """An action was requested in a terminal state."""


# ---------------------------------------------------------------------------------------
# Small value types
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class OptionSpec:
    """One creation option of a game (for listings, validation and the service)."""

    name: str
    kind: str  # "bool" | "int" | "str" | "str_list"
    default: FieldValue
    description: str
    choices: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class GameDescriptor:
    """What a game is, declared up front (OpenSpiel's GameType + GameInfo)."""

    name: str
    title: str
    min_players: int
    max_players: int
    options: tuple[OptionSpec, ...]
    hidden_information: bool
    #: Size of the action id space: every action id is in ``range(num_distinct_actions)``.
    num_distinct_actions: int
    #: The round limit of the house rules (A9.3 / O8.4).
    max_rounds: int
    description: str = ""
    #: Player counts for which team play is available (empty: never).
    team_player_counts: tuple[int, ...] = ()
    #: The most legal secret actions (``State.public_action`` gives ``SECRET_ACTION``) at one
    #: decision, in any state: a bound that what a seat holds never exceeds.
    max_secret_choices: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class Event:
    """Something that happened while an action was applied.

    ``kind`` is a stable machine name (``"place"``, ``"scoring_line"``, ``"win"``...),
    ``text`` a readable sentence, ``player`` the seat it concerns (if any), ``data`` the
    structured details. ``visible_to`` is ``None`` for a public event, or the seats that may
    see it (a private event, e.g. the cards a player drew); the service filters events by
    viewer with :meth:`is_visible_to`.
    """

    kind: str
    text: str
    player: int | None = None
    data: Mapping[str, FieldValue] = dataclasses.field(default_factory=dict)
    visible_to: tuple[int, ...] | None = None

    def is_visible_to(self, player: int | None) -> bool:
        """Whether ``player`` (``None`` = the public/spectator) may see this event."""
        if self.visible_to is None:
            return True
        return player is not None and player in self.visible_to


@dataclasses.dataclass(frozen=True, slots=True)
class ActionInfo:
    """Structured description of an action id: for clients, logs and the CLI."""

    id: int
    text: str
    kind: str
    fields: Mapping[str, FieldValue] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """The result of a finished game (python-chess's ``Outcome``)."""

    #: Seats that won (several for a shared win or a winning team; empty for a draw).
    winners: tuple[int, ...]
    #: Stable machine name of how the game ended ("temple", "yellow", "green", "points",
    #: "scoring", "round_limit", "fifth_ritual"...).
    reason: str
    #: Readable explanation.
    text: str
    scores: tuple[int, ...]
    returns: tuple[float, ...]

    @property
    def is_draw(self) -> bool:
        return not self.winners


@mypyc_attr(allow_interpreted_subclasses=True)
class View(metaclass=abc.ABCMeta):
    """What one player (or the public, ``player is None``) may see of a state.

    Implementations are frozen dataclasses (``slots=True``), compared by value: a state
    sampled by :meth:`State.sample_consistent_state` must give an equal view for the same
    player. Each has a field ``player: int | None``; it is not declared here, because in the
    compiled build an attribute of this base would be read by ``dataclasses`` as the field's
    default.
    """

    __slots__ = ()

    @abc.abstractmethod
    def to_text(self) -> str:
        """Readable rendering of what this player sees (board grid etc.)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary of the view's fields."""
        assert dataclasses.is_dataclass(self)
        return dataclasses.asdict(self)


# ---------------------------------------------------------------------------------------
# Game and State
# ---------------------------------------------------------------------------------------


@mypyc_attr(allow_interpreted_subclasses=True)
class Game(metaclass=abc.ABCMeta):
    """A rule set: descriptor, state factory, action texts, deserialisation."""

    descriptor: ClassVar[GameDescriptor]

    @property
    def name(self) -> str:
        return self.descriptor.name

    @abc.abstractmethod
    def new_initial_state(
        self,
        num_players: int | None = None,
        seed: int = 0,
        options: Mapping[str, Any] | None = None,
        *,
        rng: SerialRng | None = None,
    ) -> State:
        """A new game. ``num_players`` defaults to the minimum; ``options`` are validated
        against the descriptor (unknown or ill-typed options raise
        :class:`GameOptionsError`). The game's chance is ``rng`` when given (the service
        passes :func:`engine.rng.game_rng` keyed with its secret), else
        ``game_rng(name, seed)``: the same seed then always deals the same game."""

    @abc.abstractmethod
    def serialize_state(self, state: State, *, version: int | None = None) -> str:
        """The compact, versioned, exact text of one of this game's states
        (``<game>:<version>:...``; :meth:`State.serialize` calls this). ``version``: an
        earlier version, for servers of the previous release during a rolling upgrade;
        ``ValueError`` when the state cannot be written in it."""

    @abc.abstractmethod
    def deserialize_state(self, data: object, *, validate: bool = True) -> State:
        """Inverse of :meth:`serialize_state`: a validated state, or
        :class:`StateFormatError`. ``validate=False`` skips the invariant checks (the text
        is still parsed strictly) for a text of the current version that this program
        wrote itself: the service's search workers, whose jobs carry a state the server
        already opened and checked."""

    @abc.abstractmethod
    def action_info(self, action: object) -> ActionInfo:
        """Structured description of any action id; raises :class:`ActionParseError` for
        an id outside the game's action space."""

    def action_to_string(self, action: int) -> str:
        return self.action_info(action).text

    @abc.abstractmethod
    def string_to_action(self, text: str) -> int:
        """Parse an action text (as produced by :meth:`action_to_string`, whitespace and
        case tolerant); raises :class:`ActionParseError`."""


@mypyc_attr(allow_interpreted_subclasses=True)
class State(metaclass=abc.ABCMeta):
    """A position of a game. Mutable, but only through ``apply``/``apply_action``.

    ``__slots__ = ()`` here, so that a game's state declaring its own ``__slots__`` really
    has no ``__dict__`` (smaller, faster to copy).
    """

    __slots__ = ()

    #: The game this state belongs to (set on the class by the game's constructor).
    game: ClassVar[Game]

    # --- who, what ------------------------------------------------------------------

    @property
    @abc.abstractmethod
    def num_players(self) -> int: ...

    @abc.abstractmethod
    def current_player(self) -> int:
        """The seat to decide, or :data:`TERMINAL`."""

    def is_terminal(self) -> bool:
        return self.current_player() == TERMINAL

    @abc.abstractmethod
    def decision(self) -> str:
        """Stable name of the decision the current player faces ("exchange", "arrange",
        "remove", "place", "reset", "main", "draw", "break", "refill"...; "over")."""

    @abc.abstractmethod
    def move_number(self) -> int:
        """Actions applied since the game was created (0 for a new game); every applied
        action adds one (OpenSpiel's ``MoveNumber``). A state of an earlier release, which
        did not record it, counts from 0 when read."""

    def round_number(self) -> int:
        """The current round (1-based); once terminal, the round the game ended in."""
        return 0

    def teams(self) -> tuple[int, ...]:
        """Team index of each seat (each seat its own team unless a team variant)."""
        return tuple(range(self.num_players))

    # --- actions --------------------------------------------------------------------

    @abc.abstractmethod
    def legal_actions(self) -> list[int]:
        """The current player's legal action ids, ascending, never empty unless terminal.
        The returned list is the caller's to keep (not shared with the state)."""

    def num_legal_actions(self) -> int:
        """``len(self.legal_actions())``. Games override it to count without building the
        list: a rollout only needs the count and one action (:func:`playout`)."""
        return len(self.legal_actions())

    def legal_action_at(self, index: int) -> int:
        """``self.legal_actions()[index]``, for ``0 <= index < num_legal_actions()``. Games
        override it to find the action without building the list (the same action: the
        rollouts that draw by index play the same games either way)."""
        return self.legal_actions()[index]

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` (an int id) is legal here. Games override it with a cheaper
        test than scanning :meth:`legal_actions`."""
        return type(action) is int and action in self.legal_actions()

    @abc.abstractmethod
    def apply(self, action: int, events: list[Event] | None = None) -> None:
        """Fast path: apply a legal action, with minimal checking: the caller guarantees
        legality (bots, playouts); use :meth:`apply_action` for input. When ``events`` is a
        list, the events of the action (and of the automatic steps it triggers) are appended
        to it in order; with ``None`` (the default, playouts) none are built."""

    def apply_action(self, action: int) -> list[Event]:
        """Validated path: raise :class:`IllegalActionError` (or :class:`GameOverError`)
        without changing the state if ``action`` is not legal, else apply it and return
        the events, in order, including those of any automatic steps it triggered."""
        if self.is_terminal():
            raise GameOverError(f"{self.game.name}: the game is over; no action is legal (got {action!r})")
        if not self.is_legal(action):
            raise IllegalActionError(self.illegal_action_message(action))
        events: list[Event] = []
        self.apply(action, events)
        return events

    def illegal_action_message(self, action: object) -> str:
        """Why ``action`` is refused here, naming the decision and some legal actions."""
        name = self.game.name
        text = repr(action)
        if isinstance(action, int):
            with contextlib.suppress(ValueError):  # an id outside the action space
                text = f"{self.game.action_info(action).text!r} (id {action})"
        legal = self.legal_actions()
        shown = ", ".join(self.action_to_string(a) for a in legal[:12]) + (", ..." if len(legal) > 12 else "")
        return (
            f"{name}: {text} is not legal now (round {self.round_number()}, {self.decision()}, "
            f"seat {self.current_player()} to decide); legal: {shown}"
        )

    def public_action(self, action: int) -> int:
        """The id the *other* players observe when the current player takes ``action``
        here: ``action`` itself, or :data:`SECRET_ACTION` for a secret commitment."""
        return action

    def action_to_string(self, action: int) -> str:
        return self.game.action_to_string(action)

    def string_to_action(self, text: str) -> int:
        return self.game.string_to_action(text)

    # --- results --------------------------------------------------------------------

    @abc.abstractmethod
    def scores(self) -> tuple[int, ...]:
        """Current points per seat (final scores once terminal)."""

    @abc.abstractmethod
    def returns(self) -> tuple[float, ...]:
        """Per-seat returns (+1 win / -1 loss / 0 draw or shared win) once terminal;
        all zeros before."""

    @abc.abstractmethod
    def outcome(self) -> Outcome | None:
        """The result once terminal, else ``None``."""

    # --- information ----------------------------------------------------------------

    @abc.abstractmethod
    def view(self, player: int | None) -> View:
        """What ``player`` may see (``None``: the public)."""

    @abc.abstractmethod
    def sample_consistent_state(self, player: int, rng: random.Random) -> Self:
        """A full state equal to this one in everything ``player`` can see, with every
        hidden part re-dealt uniformly among the possibilities consistent with their view.
        ``view(player)`` of the result equals ``view(player)`` of ``self``."""

    # --- copies, text, storage ------------------------------------------------------

    @abc.abstractmethod
    def clone(self) -> Self:
        """An independent deep copy."""

    def child(self, action: int) -> Self:
        """A copy with ``action`` applied (fast path)."""
        s = self.clone()
        s.apply(action)
        return s

    @abc.abstractmethod
    def to_text(self) -> str:
        """Full readable rendering (omniscient): board grid, hands, decks; for logs."""

    def serialize(self) -> str:
        """Compact, versioned, exact text form (``<game>:<version>:...``), written by the
        game's codec (:meth:`Game.serialize_state`)."""
        return self.game.serialize_state(self)

    @abc.abstractmethod
    def validate(self) -> None:
        """Check every invariant of the state (component counts, phases); raise
        :class:`StateFormatError` naming the first violation."""

    def __str__(self) -> str:
        return self.to_text()


picklable(OptionSpec, GameDescriptor, Event, ActionInfo, Outcome)


#: A playout policy: one of ``legal`` (the state's legal actions), drawn with the rng.
PlayoutPolicy: TypeAlias = Callable[[State, random.Random], int]


def playout(state: State, rng: random.Random, limit: int = -1, policy: PlayoutPolicy | None = None) -> int:
    """Play ``state`` forward on the fast path until the game ends or ``limit`` actions
    were applied (``-1``: no limit); return how many were. Each action is
    ``policy(state, rng)``, or without a policy one of the legal actions uniformly at
    random, ``legal[int(rng.random() * len(legal))]`` (drawn by its index,
    :meth:`State.legal_action_at`, so the list is not built where the game can avoid it).

    The search's rollouts (:meth:`ai.mcts.Search._rollout`) are this loop, and so are the
    random games ``bench/builds.py`` times: compiled, the loop runs in C, so its speed is
    the engine's as the search sees it (``bench/results/notes/2026-12-01-compiled-build.md``)."""
    rand = rng.random
    steps = 0
    while steps != limit and state.current_player() >= 0:
        if policy is None:
            state.apply(state.legal_action_at(int(rand() * state.num_legal_actions())))
        else:
            state.apply(policy(state, rng))
        steps += 1
    return steps


def legal_action_texts(state: State) -> list[str]:
    """Texts of the current legal actions (for errors and the CLI)."""
    return [state.action_to_string(a) for a in state.legal_actions()]


def check_num_players(desc: GameDescriptor, num_players: object) -> int:
    """Validate a player count against a descriptor (shared by every game)."""
    n = desc.min_players if num_players is None else num_players
    if isinstance(n, bool) or not isinstance(n, int):
        raise GameOptionsError(f"{desc.name}: player count must be an integer, got {n!r}")
    if not desc.min_players <= n <= desc.max_players:
        raise GameOptionsError(
            f"{desc.name} is played by {desc.min_players}"
            + ("" if desc.min_players == desc.max_players else f" to {desc.max_players}")
            + f" players, not {n}"
        )
    return n


def check_seed(desc: GameDescriptor, seed: object) -> int:
    """Validate a game seed: a non-negative integer (shared by every game)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise GameOptionsError(f"{desc.name}: the seed must be an integer, got {seed!r}")
    if seed < 0:
        raise GameOptionsError(f"{desc.name}: the seed must not be negative, got {seed}")
    return seed


def resolve_options(desc: GameDescriptor, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validate ``options`` against the descriptor and fill in defaults.

    Unknown names and ill-typed values raise :class:`GameOptionsError`; game-specific
    constraints (e.g. teams need 4 players) are checked by the game itself.
    """
    specs = {o.name: o for o in desc.options}
    given = dict(options or {})
    unknown = sorted(set(given) - set(specs))
    if unknown:
        known = ", ".join(sorted(specs)) or "none"
        raise GameOptionsError(f"{desc.name}: unknown option(s) {', '.join(unknown)} (known: {known})")
    out: dict[str, Any] = {}
    for name, spec in specs.items():
        value = given.get(name, spec.default)
        if spec.kind == "bool":
            if not isinstance(value, bool):
                raise GameOptionsError(f"{desc.name}: option {name} must be true or false, got {value!r}")
        elif spec.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise GameOptionsError(f"{desc.name}: option {name} must be an integer, got {value!r}")
        elif spec.kind == "str":
            if not isinstance(value, str):
                raise GameOptionsError(f"{desc.name}: option {name} must be a string, got {value!r}")
            if spec.choices and value not in spec.choices:
                raise GameOptionsError(
                    f"{desc.name}: option {name} must be one of {', '.join(spec.choices)}, got {value!r}"
                )
        elif spec.kind == "str_list":
            if isinstance(value, str):
                value = tuple(v.strip() for v in value.split(",") if v.strip())
            if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
                raise GameOptionsError(f"{desc.name}: option {name} must be a list of names, got {value!r}")
            value = tuple(value)
            if spec.choices:
                bad = [v for v in value if v not in spec.choices]
                if bad:
                    raise GameOptionsError(
                        f"{desc.name}: option {name}: unknown value(s) {', '.join(bad)} "
                        f"(choices: {', '.join(spec.choices)})"
                    )
        out[name] = value
    return out
