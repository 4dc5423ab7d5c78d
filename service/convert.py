"""Conversions between engine/bot values and ``heka.v1`` messages (the only module that
knows both).

Actions and events get typed details (``Action.aton`` / ``.osirium``, ``Event.aton`` /
``.osirium``) filled from the engine's structured fields by :func:`fill_fields`: a field of
the message per engine key (renamed where a key is not a good field name), amulet names as
``Amulet``, cells as ``BoardCell``, closed sets of names as enum values (by naming rule:
``"fifth_ritual"`` is ``OUTCOME_REASON_FIFTH_RITUAL``). A key without a field raises: the
test that walks every action and event kind of both games catches any the proto misses.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from google.protobuf import struct_pb2, unknown_fields
from google.protobuf.descriptor import EnumDescriptor, FieldDescriptor

from ai.ladder import RatingTable, load_table
from engine.aton.board import KINDS, NUM_SQUARES, NUM_TEMPLES, SLOTS
from engine.aton.flow import ExchangeChoice
from engine.aton.flow import Phase as AtonPhase
from engine.aton.flow import Reason as AtonReason
from engine.aton.view import AtonView
from engine.core import SECRET_ACTION, ActionInfo, Event, Game, GameDescriptor, Outcome, State
from engine.osirium.board import (
    CELLS,
    NUM_TYPES,
    SIZE,
    TYPE_ARROWS,
    TYPE_BY_NAME,
    TYPE_COLOUR,
    TYPE_NAME,
    TYPE_PATTERN,
    cells_of,
)
from engine.osirium.cards import (
    DEITIES,
    EXALTATIONS,
    MARKET_SIZE,
    RITUALS,
    Deity,
    E,
    Exaltation,
    N,
    Principle,
    S,
    W,
)
from engine.osirium.flow import Phase as OsiriumPhase
from engine.osirium.flow import Reason as OsiriumReason
from engine.osirium.view import EMPTY_SLOT, HIDDEN_ADVANCED, HIDDEN_SIMPLE, OsiriumView
from service.gen.heka.v1 import game_service_pb2 as pb

_OPTION_KINDS = {
    "bool": pb.OPTION_KIND_BOOL,
    "int": pb.OPTION_KIND_INT,
    "str": pb.OPTION_KIND_STRING,
    "str_list": pb.OPTION_KIND_STRING_LIST,
}

#: Root actions listed in bot diagnostics when the request does not say (BotSettings).
DEFAULT_TOP_K = 5
MAX_TOP_K = 100


# ---------------------------------------------------------------------------------------
# Enums by naming rule
# ---------------------------------------------------------------------------------------


def _enum_prefix(enum: EnumDescriptor) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper()


#: Engine names that the naming rule does not turn into the value's name.
_ENUM_SPELLINGS = {"bonus +1": "BONUS1", "bonus +2": "BONUS2"}


def enum_value(enum: EnumDescriptor, name: str) -> Any:
    """The value of ``enum`` for an engine name: ``("OutcomeReason", "round_limit")`` is
    ``OUTCOME_REASON_ROUND_LIMIT``. ``KeyError`` for a name the enum lacks."""
    word = _ENUM_SPELLINGS.get(name, name.upper())
    return enum.values_by_name[f"{_enum_prefix(enum)}_{word}"].number


_DECISION = pb.Decision.DESCRIPTOR
_REASON = pb.OutcomeReason.DESCRIPTOR


#: Both games' decisions and outcome reasons as enum values, computed once (by the naming
#: rule; a StrEnum member hashes and compares as its string, so a plain name finds it too).
_DECISIONS: dict[str, int] = {p: enum_value(_DECISION, p) for p in (*AtonPhase, *OsiriumPhase)}
_REASONS: dict[str, int] = {r: enum_value(_REASON, r) for r in (*AtonReason, *OsiriumReason)}


def decision_value(name: str) -> Any:
    """The ``Decision`` of an engine decision (``Phase.MAIN``, or a name: "exchange"...)."""
    value = _DECISIONS.get(name)
    return enum_value(_DECISION, name) if value is None else value


def reason_value(name: str) -> Any:
    """The ``OutcomeReason`` of an engine outcome reason (``Reason.TEMPLE``, "fifth_ritual"...)."""
    value = _REASONS.get(name)
    return enum_value(_REASON, name) if value is None else value


# ---------------------------------------------------------------------------------------
# Typed details from engine fields
# ---------------------------------------------------------------------------------------

_DIRECTION_LETTERS = {
    "N": pb.DIRECTION_NORTH,
    "E": pb.DIRECTION_EAST,
    "S": pb.DIRECTION_SOUTH,
    "W": pb.DIRECTION_WEST,
}
#: Engine keys that are not good field names.
_RENAMES = {"from": "from_cell", "to": "to_cell"}
#: Engine keys a message deliberately leaves out (the amulet's colour and pattern are in
#: its ``Amulet``).
_REDUNDANT = frozenset(("colour", "pattern"))


def _fill_cell(msg: Any, value: Any) -> None:
    row, column = (value // SIZE, value % SIZE) if isinstance(value, int) else value
    msg.index, msg.row, msg.column = row * SIZE + column, row, column


def _fill_square(msg: Any, value: int) -> None:
    msg.square, msg.temple, msg.slot = value, value // SLOTS + 1, value % SLOTS
    msg.square_kind = _SQUARE_KINDS[KINDS[value]]


def _scalar(field: FieldDescriptor, value: Any) -> Any:
    enum = field.enum_type
    if enum is None:
        return value
    return enum_value(enum, value) if isinstance(value, str) else int(value)


def fill_fields(msg: Any, data: Mapping[str, Any]) -> None:
    """Set the fields of ``msg`` from an engine mapping (action fields, event data)."""
    fields = msg.DESCRIPTOR.fields_by_name
    for key, value in data.items():
        if key in _REDUNDANT and key not in fields:
            continue
        field = fields[_RENAMES.get(key, key)]  # KeyError: the proto lacks this key
        name = field.name
        if field.message_type is not None:
            fill = _FILLERS[field.message_type.name]
            if field.is_repeated:
                target = getattr(msg, name)
                for item in value:
                    fill(target.add(), item)
            else:
                fill(getattr(msg, name), value)
        elif name == "arrows":  # "NE": the sides the arrows point to
            getattr(msg, name).extend(_DIRECTION_LETTERS[c] for c in value)
        elif field.is_repeated:
            getattr(msg, name).extend(_scalar(field, v) for v in value)
        else:
            setattr(msg, name, _scalar(field, value))


#: Fillers of the message types engine values become (completed at the end of the module).
_FILLERS: dict[str, Any] = {"BoardCell": _fill_cell}

#: Action and event kinds whose oneof member has another name (a Python keyword).
_MEMBER = {"break": "break_amulet", "pass": "pass_turn"}
#: Event kinds that carry no details.
EVENTS_WITHOUT_DETAILS = frozenset(
    ("arranged", "exchange_decided", "cleanup", "scoring_round", "end_turn", "draw_skipped", "refill_skipped")
)
#: Action kinds that carry no details.
ACTIONS_WITHOUT_DETAILS = frozenset(("keep", "exchange", "pass", "end"))


def fill_action_details(msg: pb.Action, game: str, info: ActionInfo) -> None:
    if info.kind in ACTIONS_WITHOUT_DETAILS:
        return
    member = getattr(getattr(msg, game), _MEMBER.get(info.kind, info.kind))
    if game == "aton" and info.kind in ("remove", "place", "reset"):
        square = info.fields["square"]
        assert isinstance(square, int)
        _fill_square(member, square)  # AtonSquareRef, its kind from the square
    else:
        fill_fields(member, info.fields)


def fill_event_details(msg: pb.Event, game: str, event: Event) -> None:
    if event.kind in EVENTS_WITHOUT_DETAILS:
        return
    member = getattr(getattr(msg, game), _MEMBER.get(event.kind, event.kind))
    fill_fields(member, event.data)
    if not event.data:
        member.SetInParent()


# ---------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------


def to_value(value: Any) -> struct_pb2.Value:
    """A ``google.protobuf.Value`` for an option default, always with its kind set."""
    v = struct_pb2.Value()
    if value is None:
        v.null_value = struct_pb2.NULL_VALUE
    elif isinstance(value, bool):
        v.bool_value = value
    elif isinstance(value, int | float):
        v.number_value = value if math.isfinite(value) else 0.0
    elif isinstance(value, str):
        v.string_value = value
    else:
        v.list_value.SetInParent()
        v.list_value.extend(list(value))
    return v


class OptionsError(ValueError):
    """Creation options that do not fit the game (the servicer names the field)."""


def options_from_message(options: pb.GameOptions, desc: GameDescriptor) -> dict[str, Any]:
    """Engine creation options from the typed ``GameOptions``: the member of the game being
    created, or none. Fields this server does not know (a newer client's) are refused, not
    ignored; validation of the values themselves is the game's (``resolve_options``)."""
    unknown = unknown_fields.UnknownFieldSet(options)
    if len(unknown):  # a newer client's options of another game, or of this one
        numbers = ", ".join(str(unknown[i].field_number) for i in range(len(unknown)))
        raise OptionsError(f"options has fields this server does not know (numbers {numbers})")
    which = options.WhichOneof("game")
    if which is None:
        return {}
    if which != desc.name:
        raise OptionsError(f"options.{which} are not options of {desc.name}: use options.{desc.name}")
    member = getattr(options, which)
    unknown = unknown_fields.UnknownFieldSet(member)
    if len(unknown):
        numbers = ", ".join(str(unknown[i].field_number) for i in range(len(unknown)))
        raise OptionsError(f"options.{which} has fields this server does not know (numbers {numbers})")
    if which == "osirium":
        out: dict[str, Any] = {"teams": member.teams}
        if member.deities:
            if pb.DEITY_UNSPECIFIED in member.deities:
                raise OptionsError("options.osirium.deities: DEITY_UNSPECIFIED is not a deity")
            out["deities"] = tuple(pb.Deity.Name(d)[len("DEITY_") :].lower() for d in member.deities)
        return out
    return {}


# ---------------------------------------------------------------------------------------
# Games, actions, events
# ---------------------------------------------------------------------------------------


def game_info(game: Game) -> pb.GameInfo:
    d = game.descriptor
    info = pb.GameInfo(
        name=d.name,
        title=d.title,
        min_players=d.min_players,
        max_players=d.max_players,
        hidden_information=d.hidden_information,
        num_distinct_actions=d.num_distinct_actions,
        max_rounds=d.max_rounds,
        description=d.description,
        team_player_counts=list(d.team_player_counts),
    )
    for o in d.options:
        info.options.add(
            name=o.name,
            kind=_OPTION_KINDS.get(o.kind, pb.OPTION_KIND_UNSPECIFIED),
            default_value=to_value(o.default),
            description=o.description,
            choices=list(o.choices),
        )
    for players in range(d.min_players, d.max_players + 1):
        for teams in (False, True):
            table = load_table(d.name, players, teams=teams)
            if table is not None:
                info.ratings.append(rating_ladder(table))
    return info


_PRESET_DIFFICULTIES = {
    "mcts:easy": pb.DIFFICULTY_EASY,
    "mcts:medium": pb.DIFFICULTY_MEDIUM,
    "mcts:hard": pb.DIFFICULTY_HARD,
    "mcts:expert": pb.DIFFICULTY_EXPERT,
}
_RATED_KINDS = {"random": pb.BOT_KIND_RANDOM, "greedy": pb.BOT_KIND_GREEDY, "mcts": pb.BOT_KIND_MCTS}


def rating_ladder(table: RatingTable) -> pb.RatingLadder:
    """A rating table (:mod:`ai.ladder`) as ListGames reports it."""
    msg = pb.RatingLadder(
        num_players=table.players,
        min_target_rating=0,
        max_target_rating=table.max_target,
        provisional=table.provisional,
        games_per_pair=table.games_per_pair,
        note=table.note,
        teams=table.teams,
    )
    for b in table.bots:
        msg.bots.add(
            name=b.name,
            rating=round(b.rating, 1),
            interval=round(b.ci95, 1),
            kind=_RATED_KINDS.get(b.name.partition(":")[0], pb.BOT_KIND_UNSPECIFIED),
            difficulty=_PRESET_DIFFICULTIES.get(b.name, pb.DIFFICULTY_UNSPECIFIED),
            is_level=b.is_level,
        )
    return msg


class ActionCache:
    """Action messages by (game, id, compact): action ids are stable within a game, so each
    message is built once, and its wire bytes too (listing actions is the common call)."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, int, bool], pb.Action] = {}
        self._encoded: dict[tuple[str, int, int, bool], bytes] = {}
        self._lock = threading.Lock()

    def encoded(self, game: Game, action: int, field_number: int, *, compact: bool = False) -> bytes:
        """The wire bytes of one action as message field ``field_number``."""
        return self.encoded_list(game, (action,), field_number, compact=compact)

    def encoded_list(
        self, game: Game, actions: Sequence[int], field_number: int, *, compact: bool = False
    ) -> bytes:
        """The wire bytes of ``actions`` as repeated message field ``field_number``: merged into
        a response with ``MergeFromString`` this is about 3x faster than copying messages."""
        name = game.descriptor.name
        encoded = self._encoded
        out = []
        for a in actions:
            chunk = encoded.get((name, a, field_number, compact))
            if chunk is None:
                body = self.get(game, a, compact=compact).SerializeToString()
                chunk = field_bytes(field_number, body)
                with self._lock:
                    encoded[(name, a, field_number, compact)] = chunk
            out.append(chunk)
        return b"".join(out)

    def get(self, game: Game, action: int, *, compact: bool = False) -> pb.Action:
        key = (game.descriptor.name, action, compact)
        msg = self._cache.get(key)
        if msg is None:
            info = game.action_info(action)
            if compact:
                msg = pb.Action(id=info.id, text=info.text)
            else:
                msg = action_message(game.descriptor.name, info)
            with self._lock:
                self._cache[key] = msg
        return msg


def field_bytes(field_number: int, body: bytes) -> bytes:
    """``body`` (a serialised message) as length-delimited field ``field_number``: such
    chunks, concatenated, merge into a message with ``MergeFromString``."""
    return _varint(field_number << 3 | 2) + _varint(len(body)) + body


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def action_message(game: str, info: ActionInfo) -> pb.Action:
    msg = pb.Action(id=info.id, text=info.text, kind=info.kind)
    fill_action_details(msg, game, info)
    return msg


#: An action the viewer may not see (another seat's secret decision).
SECRET = pb.Action(id=SECRET_ACTION, text="(secret)", kind="secret")


def event_message(game: str, event: Event) -> pb.Event:
    msg = pb.Event()
    fill_event(msg, game, event)
    return msg


def fill_event(msg: pb.Event, game: str, event: Event) -> None:
    msg.kind = event.kind
    msg.text = event.text
    msg.is_public = event.visible_to is None
    if event.player is not None:
        msg.player = event.player
    if event.visible_to is not None:
        msg.visible_to.extend(event.visible_to)
    fill_event_details(msg, game, event)


_EVENT_CACHE_LIMIT = 50_000
_event_bytes: dict[tuple[Any, ...], bytes] = {}


def encoded_events(game: str, events: Iterable[Event], viewer: int | None, field_number: int) -> bytes:
    """The wire bytes of the events ``viewer`` may see (``None``: the public ones) as
    repeated message field ``field_number`` (merge them with ``MergeFromString``). Events
    repeat a lot (the same placement, the same draw), so each distinct event is converted
    and encoded once (a bounded cache)."""
    out = []
    cache = _event_bytes
    for e in events:
        if not e.is_visible_to(viewer):
            continue
        # The data's items as they are: engine field values are scalars or tuples (hashable),
        # and each kind's fields have one type each, so equal items encode alike.
        head = (game, field_number, e.kind, e.text, e.player, e.visible_to)
        key: tuple[Any, ...] = (head, tuple(e.data.items()))
        try:
            chunk = cache.get(key)
        except TypeError:  # an unhashable value after all: its text tells it apart
            key = (head, repr(e.data))
            chunk = cache.get(key)
        if chunk is None:
            body = event_message(game, e).SerializeToString()
            chunk = field_bytes(field_number, body)
            if len(cache) >= _EVENT_CACHE_LIMIT:
                cache.clear()
            cache[key] = chunk
        out.append(chunk)
    return b"".join(out)


def add_events(target: Any, game: str, events: Iterable[Event], viewer: int | None) -> None:
    """Append the events ``viewer`` may see (``None``: the public ones) to a repeated
    ``Event`` field."""
    for e in events:
        if e.is_visible_to(viewer):
            fill_event(target.add(), game, e)


def outcome_message(o: Outcome) -> pb.Outcome:
    return pb.Outcome(
        winners=list(o.winners),
        reason=reason_value(o.reason),
        text=o.text,
        scores=list(o.scores),
        returns=list(o.returns),
        is_draw=o.is_draw,
    )


def outcome_label(o: Outcome) -> str:
    """The ``outcome`` label of heka_games_finished_total."""
    return "draw" if o.is_draw else o.reason


def status_message(state: State) -> pb.GameStatus:
    msg = pb.GameStatus()
    fill_status(msg, state)
    return msg


def fill_status(msg: pb.GameStatus, state: State) -> None:
    """Fill a (sub-)message in place: cheaper than building one and copying it."""
    current = state.current_player()
    msg.game = state.game.descriptor.name
    msg.num_players = state.num_players
    msg.decision = decision_value(state.decision())
    msg.is_over = current < 0
    msg.scores.extend(state.scores())
    msg.teams.extend(state.teams())
    msg.move_number = state.move_number()
    if current >= 0:
        msg.current_player = current
    else:
        outcome = state.outcome()
        if outcome is not None:
            msg.outcome.CopyFrom(outcome_message(outcome))


def view_message(state: State, viewer: int | None) -> pb.View:
    view = state.view(viewer)
    msg = pb.View(text=view.to_text())
    fill_status(msg.status, state)
    if viewer is not None:
        msg.viewer = viewer
    if isinstance(view, AtonView):
        fill_aton_view(msg.aton, view)
    elif isinstance(view, OsiriumView):
        fill_osirium_view(msg.osirium, view)
        outcome = state.outcome()
        if outcome is not None:
            msg.osirium.reason = reason_value(outcome.reason)
    return msg


# ---------------------------------------------------------------------------------------
# Typed per-game views (View.aton / View.osirium)
# ---------------------------------------------------------------------------------------


_SQUARE_KINDS = {
    "Y": pb.SQUARE_KIND_YELLOW,
    "K": pb.SQUARE_KIND_GREY,
    "B": pb.SQUARE_KIND_BLUE,
    "G": pb.SQUARE_KIND_GREEN,
    "1": pb.SQUARE_KIND_BONUS1,
    "2": pb.SQUARE_KIND_BONUS2,
}
_EXCHANGE_CHOICES = {
    ExchangeChoice.KEEP: pb.ATON_EXCHANGE_CHOICE_KEEP,
    ExchangeChoice.EXCHANGE: pb.ATON_EXCHANGE_CHOICE_EXCHANGE,
}


def _square_message(i: int, owner: int) -> pb.AtonSquare:
    msg = pb.AtonSquare(slot=i % SLOTS, index=i, kind=_SQUARE_KINDS[KINDS[i]])
    if owner >= 0:
        msg.owner = owner
    return msg


#: The board's squares are fixed: ``AtonSquare`` by square, then owner + 1 (0: empty),
#: built once and copied.
_SQUARE_MESSAGES: tuple[tuple[pb.AtonSquare, ...], ...] = tuple(
    tuple(_square_message(i, owner) for owner in (-1, 0, 1)) for i in range(NUM_SQUARES)
)


def fill_aton_view(msg: pb.AtonView, v: AtonView) -> None:
    """An engine ``AtonView`` (engine/aton/view.py) as a typed ``AtonView`` message."""
    msg.round = v.round
    msg.decision = decision_value(v.decision)
    if v.current_player >= 0:  # -1 once over
        msg.current_player = v.current_player
    board = v.board
    for t in range(NUM_TEMPLES):
        squares = range(t * SLOTS, (t + 1) * SLOTS)
        msg.temples.add(number=t + 1).squares.extend([_SQUARE_MESSAGES[i][board[i] + 1] for i in squares])
    for p in range(len(v.scores)):
        seat = msg.seats.add(
            seat=p,
            score=v.scores[p],
            kingdom=v.kingdom[p],
            stock=v.stocks[p],
            deck_size=v.deck_sizes[p],
            hand_size=v.hand_sizes[p],
            discard_counts=list(v.discards[p]),
            has_token=v.tokens[p],
            exchanged=v.exchanged[p],
            committed=v.committed[p],
            revealed=v.revealed[p],
        )
        for k, card in enumerate(v.cartouches[p]):
            if card:  # 0: hidden from this viewer (A3.4), or not arranged
                seat.cartouches.add(position=k + 1, value=card)
    if v.first_player is not None:
        msg.first_player = v.first_player
    for a, b in v.war:
        msg.war.add(seat0_card=a, seat1_card=b)
    msg.remaining = v.remaining
    if v.removal_target is not None:
        msg.removal_target = v.removal_target
    msg.overflow = v.overflow
    if v.reset_temple is not None:
        msg.reset_temple = v.reset_temple
    msg.hand.extend(v.hand)
    if v.exchange_decision is not None:
        msg.exchange_decision = _EXCHANGE_CHOICES[v.exchange_decision]
    if v.winners is not None:
        msg.winners.extend(v.winners)
    if v.reason is not None:
        msg.reason = reason_value(v.reason)
    msg.kingdom_total = sum(v.kingdom)


#: Engine colour / pattern index -> enum value (engine/osirium/cards.py COLOURS, PATTERNS).
_COLOURS = (pb.AMULET_COLOUR_BLUE, pb.AMULET_COLOUR_RED, pb.AMULET_COLOUR_GREEN, pb.AMULET_COLOUR_YELLOW)
_PATTERNS = (
    pb.AMULET_PATTERN_SINGLE,
    pb.AMULET_PATTERN_STRAIGHT,
    pb.AMULET_PATTERN_CORNER,
    pb.AMULET_PATTERN_TEE,
    pb.AMULET_PATTERN_CROSS,
)
#: ``Principle`` by the engine's principle (engine/osirium/cards.py ``Principle``).
_PRINCIPLES = tuple(enum_value(pb.Principle.DESCRIPTOR, p.name.lower()) for p in Principle)
_DIRECTIONS = (
    (N, pb.DIRECTION_NORTH),
    (E, pb.DIRECTION_EAST),
    (S, pb.DIRECTION_SOUTH),
    (W, pb.DIRECTION_WEST),
)


def _amulet_message(t: int) -> pb.Amulet:
    return pb.Amulet(colour=_COLOURS[TYPE_COLOUR[t]], pattern=_PATTERNS[TYPE_PATTERN[t]], name=TYPE_NAME[t])


def _ritual_message(rid: int) -> pb.Ritual:
    msg = pb.Ritual()
    r = RITUALS[rid]
    msg.id = rid
    msg.name = r.name
    for c, count in enumerate(r.requirement):
        if count:
            msg.requirement.add(colour=_COLOURS[c], count=count)
    msg.advanced = r.advanced
    msg.order_ankhs = r.order_ankhs
    msg.order_breaks = r.order_breaks
    msg.chaos_ankhs = r.chaos_ankhs
    msg.chaos_breaks = r.chaos_breaks
    return msg


def _deity_message(d: Deity) -> pb.DeityBoard:
    return pb.DeityBoard(
        id=d.id,
        name=d.name,
        text=d.text,
        power=enum_value(pb.DeityPower.DESCRIPTOR, d.power),
        deity=enum_value(pb.Deity.DESCRIPTOR, d.name),
    )


def _exaltation_message(x: Exaltation) -> pb.Exaltation:
    return pb.Exaltation(id=x.id, name=x.name, text=x.text, ankhs=x.ankhs)


def _cell_message(cell: int, t: int, rot: int) -> pb.OsiriumCell:
    msg = pb.OsiriumCell(cell=cell, row=cell // SIZE, column=cell % SIZE)
    if t >= 0:
        msg.amulet.CopyFrom(_AMULET_MESSAGES[t])
        msg.rotation_degrees = rot * 90
        arrows = TYPE_ARROWS[t][rot]
        msg.arrows.extend(d for bit, d in _DIRECTIONS if arrows & bit)
    return msg


# Cards, deity boards and board cells are fixed: each message is built once and copied.
_AMULET_MESSAGES: tuple[pb.Amulet, ...] = tuple(_amulet_message(t) for t in range(NUM_TYPES))
_RITUAL_MESSAGES: tuple[pb.Ritual, ...] = tuple(_ritual_message(rid) for rid in range(len(RITUALS)))
_DEITY_MESSAGES: tuple[pb.DeityBoard, ...] = tuple(_deity_message(d) for d in DEITIES)
_EXALTATION_MESSAGES: tuple[pb.Exaltation, ...] = tuple(_exaltation_message(x) for x in EXALTATIONS)
#: ``OsiriumCell`` by cell, then ``(type + 1) * 4 + rotation`` (an empty cell: type -1).
_CELL_MESSAGES: tuple[tuple[pb.OsiriumCell, ...], ...] = tuple(
    tuple(_cell_message(cell, t, rot) for t in range(-1, NUM_TYPES) for rot in range(4))
    for cell in range(CELLS)
)
_EMPTY_MARKET_SLOTS: tuple[pb.MarketSlot, ...] = tuple(pb.MarketSlot(slot=k) for k in range(MARKET_SIZE))
#: Amulet types by name: the wire lists the discard pile, broken piles and hands sorted by
#: name (proto/heka/v1/game_service.proto), the engine view sorts them by type.
_BY_NAME = sorted(range(NUM_TYPES), key=TYPE_NAME.__getitem__)
_NAME_RANK: tuple[int, ...] = tuple(_BY_NAME.index(t) for t in range(NUM_TYPES))


def _amulets_by_name(types: Iterable[int]) -> list[pb.Amulet]:
    return [_AMULET_MESSAGES[t] for t in sorted(types, key=_NAME_RANK.__getitem__)]


def _fill_amulet(msg: pb.Amulet, name: str) -> None:
    """An amulet named in an action's or event's fields (``"red-tee"``)."""
    msg.CopyFrom(_AMULET_MESSAGES[TYPE_BY_NAME[name]])


def _fill_ritual(msg: pb.Ritual, rid: int) -> None:
    msg.CopyFrom(_RITUAL_MESSAGES[rid])


def fill_osirium_view(msg: pb.OsiriumView, v: OsiriumView) -> None:
    """An engine ``OsiriumView`` (engine/osirium/view.py) as a typed ``OsiriumView``: amulets,
    deities, rituals and exaltations by id, from messages built once."""
    msg.num_players = v.num_players
    msg.decision = decision_value(v.decision)
    if v.current_player >= 0:
        msg.current_player = v.current_player
    msg.round = v.round
    rotations = v.cell_rotations
    msg.board.extend([_CELL_MESSAGES[c][(t + 1) * 4 + rotations[c]] for c, t in enumerate(v.cell_types)])
    for k, t in enumerate(v.market):
        if t >= 0:
            msg.market.add(slot=k, amulet=_AMULET_MESSAGES[t])
        else:
            msg.market.append(_EMPTY_MARKET_SLOTS[k])
    msg.draw_pile_size = v.draw_pile_size
    msg.discard.extend(_amulets_by_name(v.discard))
    for p in range(v.num_players):
        seat = msg.seats.add(
            seat=p,
            team=v.teams[p],
            deity=_DEITY_MESSAGES[v.deities[p]],
            power_used=v.powers_used[p],
            hand_size=v.hand_sizes[p],
            ritual_ankhs=v.ritual_ankhs[p],
            score=v.scores[p],
        )
        for k, rid in enumerate(v.rituals[p]):
            slot_msg = seat.rituals.add(slot=k, empty=rid == EMPTY_SLOT)
            if rid == HIDDEN_SIMPLE:  # O6: the deck of a face-down card is public
                slot_msg.hidden_deck = pb.RITUAL_DECK_SIMPLE
            elif rid == HIDDEN_ADVANCED:
                slot_msg.hidden_deck = pb.RITUAL_DECK_ADVANCED
            elif rid >= 0:
                _fill_ritual(slot_msg.ritual, rid)
        for rid, principle in v.completed[p]:
            seat.completed.add(ritual=_RITUAL_MESSAGES[rid], principle=_PRINCIPLES[principle])
        seat.broken.extend(_amulets_by_name(v.broken[p]))
        if v.exaltations[p] >= 0:  # -1: unknown to this viewer
            seat.exaltation.CopyFrom(_EXALTATION_MESSAGES[v.exaltations[p]])
    msg.simple_pile_size = v.simple_pile_size
    msg.advanced_pile_size = v.advanced_pile_size
    msg.started = v.started
    msg.placed = v.placed
    if v.clear_cell >= 0:
        msg.clear_cell = v.clear_cell
    if v.cast:
        slot_index, mask, left, last = v.cast
        msg.cast.slot = slot_index
        msg.cast.cells.extend(cells_of(mask))
        msg.cast.breaks_left = left
        if last >= 0:
            msg.cast.last_broken_cell = last
    if v.hand is not None:
        msg.hand.extend(_amulets_by_name(v.hand))
    msg.result = v.result


def diagnostics_message(
    game: Game,
    cache: ActionCache,
    diag: Any,
    bot: str,
    seed: int,
    *,
    private: bool,
    top_k: int = DEFAULT_TOP_K,
    compact: bool = False,
) -> pb.SearchDiagnostics:
    """A bot's diagnostics: the ``top_k`` most visited root actions and the totals. The root
    statistics, their counts, the chosen action's value and the principal variation depend
    on the bot's private cards (they name actions from its own hand): they are filled only
    when ``private`` (the response goes to the bot's own seat, or to a trusted backend);
    otherwise only the search's totals are (docs/security.md). ``compact``: actions with id
    and text only."""
    msg = pb.SearchDiagnostics(
        bot=bot,
        seed=seed,
        iterations=int(diag.iterations),
        elapsed_seconds=float(diag.elapsed_seconds),
        iterations_per_second=float(diag.iterations_per_second),
        interrupted=bool(diag.interrupted),
        workers=int(diag.workers),
    )
    if not private:
        return msg
    msg.chosen_value = float(diag.chosen_value)
    msg.root_actions = len(diag.actions)
    msg.root_visits = sum(int(stat.visits) for stat in diag.actions)
    for stat in diag.actions[:top_k]:  # most visited first (ai.api.Diagnostics)
        msg.actions.add(
            action=cache.get(game, stat.action, compact=compact),
            visits=int(stat.visits),
            mean_value=float(stat.mean_value),
        )
    msg.principal_variation.extend(cache.get(game, a, compact=compact) for a in diag.principal_variation)
    return msg


_FILLERS["Amulet"] = _fill_amulet
