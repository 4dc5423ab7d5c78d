"""Conversions between engine/bot values and ``heka.v1`` messages (the only module that
knows both)."""

from __future__ import annotations

import dataclasses
import enum
import math
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from google.protobuf import struct_pb2

from engine.aton.board import KINDS, NUM_TEMPLES, SLOTS
from engine.aton.view import AtonView
from engine.core import SECRET_ACTION, ActionInfo, Event, Game, GameDescriptor, Outcome, State
from engine.osirium.board import SIZE, TYPE_ARROWS, TYPE_BY_NAME, TYPE_COLOUR, TYPE_PATTERN, cells_of
from engine.osirium.cards import DEITIES, EXALTATIONS, RITUALS, E, N, S, W
from engine.osirium.view import EMPTY_SLOT, HIDDEN_ADVANCED, HIDDEN_SIMPLE, OsiriumView
from service.gen.heka.v1 import game_service_pb2 as pb

_OPTION_KINDS = {
    "bool": pb.OPTION_KIND_BOOL,
    "int": pb.OPTION_KIND_INT,
    "str": pb.OPTION_KIND_STRING,
    "str_list": pb.OPTION_KIND_STRING_LIST,
}


# ---------------------------------------------------------------------------------------
# JSON-like values
# ---------------------------------------------------------------------------------------


def jsonable(value: Any) -> Any:
    """A JSON-ready copy of an engine value (tuples to lists, keys to strings...)."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, enum.Enum):
        return jsonable(value.value) if isinstance(value.value, int | str) else value.name
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [jsonable(v) for v in items]
    return str(value)


def fill_struct(target: struct_pb2.Struct, mapping: Mapping[str, Any]) -> None:
    """Fill a Struct from engine data: directly when it is already JSON-like (the common,
    fast case), through :func:`jsonable` otherwise."""
    try:
        target.update(mapping)
    except (ValueError, TypeError, AttributeError):
        target.Clear()
        target.update(jsonable(mapping))


def to_struct(mapping: Mapping[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    if mapping:
        s.update(jsonable(mapping))
    return s


def to_value(value: Any) -> struct_pb2.Value:
    v = struct_pb2.Value()
    j = jsonable(value)
    if j is None:
        v.null_value = struct_pb2.NULL_VALUE
    elif isinstance(j, bool):
        v.bool_value = j
    elif isinstance(j, int | float):
        v.number_value = j
    elif isinstance(j, str):
        v.string_value = j
    elif isinstance(j, list):
        v.list_value.extend(j)
    else:
        v.struct_value.update(j)
    return v


def options_from_struct(options: struct_pb2.Struct, desc: GameDescriptor) -> dict[str, Any]:
    """Creation options from a Struct: JSON numbers become ints for int options and lists
    become tuples; validation itself is the game's (``resolve_options``)."""
    from google.protobuf.json_format import MessageToDict

    raw = MessageToDict(options) if options.fields else {}
    kinds = {o.name: o.kind for o in desc.options}
    out: dict[str, Any] = {}
    for name, value in raw.items():
        kind = kinds.get(name)
        if kind == "int" and isinstance(value, float) and value.is_integer():
            value = int(value)
        elif isinstance(value, list):
            value = tuple(value)
        out[name] = value
    return out


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
    return info


class ActionCache:
    """Action messages by (game, id): action ids are stable within a game, so each message
    is built once (building Structs is the costly part of listing actions)."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, int], pb.Action] = {}
        self._encoded: dict[tuple[str, int, int], bytes] = {}
        self._lock = threading.Lock()

    def encoded(self, game: Game, action: int, field_number: int) -> bytes:
        """The wire bytes of one action as message field ``field_number``."""
        return self.encoded_list(game, (action,), field_number)

    def encoded_list(self, game: Game, actions: Sequence[int], field_number: int) -> bytes:
        """The wire bytes of ``actions`` as repeated message field ``field_number``: merged into
        a response with ``MergeFromString`` this is about 3x faster than copying messages."""
        name = game.descriptor.name
        out = []
        for a in actions:
            chunk = self._encoded.get((name, a, field_number))
            if chunk is None:
                body = self.get(game, a).SerializeToString()
                chunk = field_bytes(field_number, body)
                with self._lock:
                    self._encoded[(name, a, field_number)] = chunk
            out.append(chunk)
        return b"".join(out)

    def get(self, game: Game, action: int) -> pb.Action:
        key = (game.descriptor.name, action)
        msg = self._cache.get(key)
        if msg is None:
            msg = action_message(game.action_info(action))
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


def action_message(info: ActionInfo) -> pb.Action:
    return pb.Action(id=info.id, text=info.text, kind=info.kind, fields=to_struct(info.fields))


#: An action the viewer may not see (another seat's secret commitment).
SECRET = pb.Action(id=SECRET_ACTION, text="(secret)", kind="secret")


def event_message(event: Event) -> pb.Event:
    msg = pb.Event()
    fill_event(msg, event)
    return msg


def fill_event(msg: pb.Event, event: Event) -> None:
    msg.kind = event.kind
    msg.text = event.text
    msg.is_public = event.visible_to is None
    if event.player is not None:
        msg.player = event.player
    if event.data:
        fill_struct(msg.data, event.data)
    if event.visible_to is not None:
        msg.visible_to.extend(event.visible_to)


def add_events(target: Any, events: Iterable[Event], viewer: int | None) -> None:
    """Append the events ``viewer`` may see (``None``: public ones) to a repeated field,
    built in place."""
    for e in events:
        if e.is_visible_to(viewer):
            fill_event(target.add(), e)


_EVENT_CACHE_LIMIT = 50_000
_event_bytes: dict[tuple[Any, ...], bytes] = {}


def encoded_events(events: Iterable[Event], viewer: int | None, field_number: int) -> bytes:
    """The wire bytes of the events ``viewer`` may see as repeated message field
    ``field_number`` (merge them with ``MergeFromString``). Events repeat a lot (the same
    placement, the same draw), and building their ``Struct`` data is the costly part of an
    ApplyAction response, so each distinct event is encoded once (a bounded cache)."""
    out = []
    cache = _event_bytes
    for e in events:
        if not e.is_visible_to(viewer):
            continue
        key = (field_number, e.kind, e.text, e.player, e.visible_to, repr(e.data) if e.data else "")
        chunk = cache.get(key)
        if chunk is None:
            body = event_message(e).SerializeToString()
            chunk = field_bytes(field_number, body)
            if len(cache) >= _EVENT_CACHE_LIMIT:
                cache.clear()
            cache[key] = chunk
        out.append(chunk)
    return b"".join(out)


def outcome_message(o: Outcome) -> pb.Outcome:
    return pb.Outcome(
        winners=list(o.winners),
        reason=o.reason,
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
    msg.decision = state.decision()
    msg.is_over = current < 0
    msg.scores.extend(state.scores())
    msg.teams.extend(state.teams())
    if current >= 0:
        msg.current_player = current
    else:
        outcome = state.outcome()
        if outcome is not None:
            msg.outcome.CopyFrom(outcome_message(outcome))


def view_message(state: State, player: int | None) -> pb.View:
    view = state.view(player)
    msg = pb.View(text=view.to_text())
    fill_status(msg.status, state)
    if player is not None:
        msg.player = player
    fill_struct(msg.details, view.to_dict())
    fill_typed_view(msg, view)
    return msg


# ---------------------------------------------------------------------------------------
# Typed per-game views (View.aton / View.osirium)
# ---------------------------------------------------------------------------------------


def fill_typed_view(msg: pb.View, view: Any) -> None:
    """Fill the ``game_view`` oneof of ``msg`` from an engine view, when its game has a
    typed message (the untyped ``details`` stay the reference for any other game)."""
    if isinstance(view, AtonView):
        fill_aton_view(msg.aton, view)
    elif isinstance(view, OsiriumView):
        fill_osirium_view(msg.osirium, view)


_ATON_DECISIONS = {
    "exchange": pb.ATON_DECISION_EXCHANGE,
    "arrange": pb.ATON_DECISION_ARRANGE,
    "remove": pb.ATON_DECISION_REMOVE,
    "place": pb.ATON_DECISION_PLACE,
    "reset": pb.ATON_DECISION_RESET,
    "over": pb.ATON_DECISION_OVER,
}
_SQUARE_KINDS = {
    "Y": pb.SQUARE_KIND_YELLOW,
    "K": pb.SQUARE_KIND_GREY,
    "B": pb.SQUARE_KIND_BLUE,
    "G": pb.SQUARE_KIND_GREEN,
    "1": pb.SQUARE_KIND_BONUS1,
    "2": pb.SQUARE_KIND_BONUS2,
}
_EXCHANGE_CHOICES = {"keep": pb.ATON_EXCHANGE_CHOICE_KEEP, "exchange": pb.ATON_EXCHANGE_CHOICE_EXCHANGE}


def fill_aton_view(msg: pb.AtonView, v: Any) -> None:
    """An engine ``AtonView`` (engine/aton/view.py) as a typed ``AtonView`` message."""
    msg.round = v.round
    msg.decision = _ATON_DECISIONS.get(v.decision, pb.ATON_DECISION_UNSPECIFIED)
    if v.decision != "over" and v.current_player >= 0:
        msg.current_player = v.current_player
    for t in range(NUM_TEMPLES):
        temple = msg.temples.add(number=t + 1)
        for slot in range(SLOTS):
            i = t * SLOTS + slot
            kind = _SQUARE_KINDS.get(KINDS[i], pb.SQUARE_KIND_UNSPECIFIED)
            square = temple.squares.add(slot=slot, index=i, kind=kind)
            if v.board[i] >= 0:
                square.owner = v.board[i]
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
        choice = _EXCHANGE_CHOICES.get(v.exchange_decision, pb.ATON_EXCHANGE_CHOICE_UNSPECIFIED)
        msg.exchange_decision = choice
    if v.winners is not None:
        msg.winners.extend(v.winners)
    msg.reason = v.reason or ""
    msg.kingdom_total = sum(v.kingdom)


_OSIRIUM_STEPS = {
    "main": pb.OSIRIUM_STEP_MAIN,
    "place": pb.OSIRIUM_STEP_PLACE,
    "draw": pb.OSIRIUM_STEP_DRAW,
    "break": pb.OSIRIUM_STEP_BREAK,
    "refill": pb.OSIRIUM_STEP_REFILL,
    "over": pb.OSIRIUM_STEP_OVER,
}
#: Engine colour / pattern index -> enum value (engine/osirium/cards.py COLOURS, PATTERNS).
_COLOURS = (pb.AMULET_COLOUR_BLUE, pb.AMULET_COLOUR_RED, pb.AMULET_COLOUR_GREEN, pb.AMULET_COLOUR_YELLOW)
_PATTERNS = (
    pb.AMULET_PATTERN_SINGLE,
    pb.AMULET_PATTERN_STRAIGHT,
    pb.AMULET_PATTERN_CORNER,
    pb.AMULET_PATTERN_TEE,
    pb.AMULET_PATTERN_CROSS,
)
_PRINCIPLES = {"order": pb.PRINCIPLE_ORDER, "chaos": pb.PRINCIPLE_CHAOS}


def _fill_amulet(msg: pb.Amulet, name: str) -> None:
    t = TYPE_BY_NAME[name]
    msg.colour = _COLOURS[TYPE_COLOUR[t]]
    msg.pattern = _PATTERNS[TYPE_PATTERN[t]]
    msg.name = name


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


#: Ritual cards are fixed: each message is built once and copied.
_RITUAL_MESSAGES: tuple[pb.Ritual, ...] = tuple(_ritual_message(rid) for rid in range(len(RITUALS)))
_DEITIES_BY_NAME = {d.name: d for d in DEITIES}
_DIRECTIONS = (
    (N, pb.DIRECTION_NORTH),
    (E, pb.DIRECTION_EAST),
    (S, pb.DIRECTION_SOUTH),
    (W, pb.DIRECTION_WEST),
)


def _fill_ritual(msg: pb.Ritual, rid: int) -> None:
    msg.CopyFrom(_RITUAL_MESSAGES[rid])


def fill_osirium_view(msg: pb.OsiriumView, v: Any) -> None:
    """An engine ``OsiriumView`` (engine/osirium/view.py) as a typed ``OsiriumView``."""
    msg.num_players = v.num_players
    msg.step = _OSIRIUM_STEPS.get(v.decision, pb.OSIRIUM_STEP_UNSPECIFIED)
    if v.current_player >= 0:
        msg.current_player = v.current_player
    msg.round = v.round
    for c, text in enumerate(v.board):
        cell = msg.board.add(cell=c, row=c // SIZE, column=c % SIZE)
        if text:  # "<colour>-<pattern> r<degrees>"
            name, rot = text.split(" r")
            _fill_amulet(cell.amulet, name)
            cell.rotation_degrees = int(rot)
            arrows = TYPE_ARROWS[TYPE_BY_NAME[name]][int(rot) // 90]
            cell.arrows.extend(d for bit, d in _DIRECTIONS if arrows & bit)
    for k, name in enumerate(v.market):
        slot = msg.market.add(slot=k)
        if name:
            _fill_amulet(slot.amulet, name)
    msg.draw_pile_size = v.draw_pile_size
    for name in v.discard:
        _fill_amulet(msg.discard.add(), name)
    for p in range(v.num_players):
        seat = msg.seats.add(
            seat=p,
            team=v.teams[p],
            power_used=v.powers_used[p],
            hand_size=v.hand_sizes[p],
            ritual_ankhs=v.ritual_ankhs[p],
            score=v.scores[p],
        )
        d = _DEITIES_BY_NAME.get(v.deities[p])
        if d is not None:
            seat.deity.id, seat.deity.name, seat.deity.power, seat.deity.text = d.id, d.name, d.power, d.text
        else:
            seat.deity.name = v.deities[p]
        for k, rid in enumerate(v.rituals[p]):
            slot_msg = seat.rituals.add(slot=k, empty=rid == EMPTY_SLOT)
            if rid == HIDDEN_SIMPLE:  # O6: the deck of a face-down card is public
                slot_msg.hidden_deck = pb.RITUAL_DECK_SIMPLE
            elif rid == HIDDEN_ADVANCED:
                slot_msg.hidden_deck = pb.RITUAL_DECK_ADVANCED
            elif rid >= 0:
                _fill_ritual(slot_msg.ritual, rid)
        for rid, principle in v.completed[p]:
            done = seat.completed.add(principle=_PRINCIPLES.get(principle, pb.PRINCIPLE_UNSPECIFIED))
            _fill_ritual(done.ritual, rid)
        for name in v.broken[p]:
            _fill_amulet(seat.broken.add(), name)
        if v.exaltations[p] >= 0:  # -1: unknown to this viewer
            x = EXALTATIONS[v.exaltations[p]]
            seat.exaltation.id, seat.exaltation.name = x.id, x.name
            seat.exaltation.text, seat.exaltation.ankhs = x.text, x.ankhs
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
    for name in v.hand or ():
        _fill_amulet(msg.hand.add(), name)
    msg.result = v.result


def diagnostics_message(
    game: Game, cache: ActionCache, diag: Any, bot: str, seed: int, *, private: bool
) -> pb.SearchDiagnostics:
    """A bot's diagnostics. The root statistics, the chosen action's value and the principal
    variation depend on the bot's private cards (they name actions from its own hand): they
    are filled only when ``private`` (the response goes to the bot's own seat, or to a
    trusted backend); otherwise only the totals are (docs/security.md)."""
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
    for stat in diag.actions:
        msg.actions.add(
            action=cache.get(game, stat.action), visits=int(stat.visits), mean_value=float(stat.mean_value)
        )
    msg.principal_variation.extend(_actions(game, cache, diag.principal_variation))
    return msg


def _actions(game: Game, cache: ActionCache, ids: Sequence[int]) -> list[pb.Action]:
    return [cache.get(game, a) for a in ids]
