"""Osirium state serialisation: ``osirium:3:`` (written and read), ``osirium:2:`` (read, and
written on request) and ``osirium:1:`` (read).

Version 3 is compact text in the style of Aton's codec, ``key=value`` fields separated by
``;``, all present, in this order::

    n=<players>;tm=<teams 0|1>;dy=<deity per seat>;pu=<power used per seat, 0|1>;
    b=<16 cells, a1..d4 row by row: '..' empty, else type + rotation digit>;
    h=<hand per seat, ','-separated>;pl=<draw pile, top last>;ds=<discard>;
    mk=<4 market slots, '.' empty>;bk=<broken pile per seat>;
    sl=<3 ritual slots per seat, '.' empty>;dn=<completed rituals per seat: ritual + principle>;
    ak=<ritual Ankhs per seat>;ex=<exaltation per seat>;si=<simple rituals, top last>;
    ad=<advanced rituals, top last>;ph=<step>;cur=<seat>;r=<round>;fl=<started><placed>;
    cl=<clear cell|-1>;cs=<cast slot>,<cast set>,<breaks left>,<last cell>;eb=<ended by|-1>;
    rng=<generator: k<key>.<position> for the game's keyed chance, plain hex for SplitMix64>;
    mv=<actions applied since the start>

A single character names an amulet type, a ritual, a deity or an exaltation: its id in
``0-9a-zA-Z`` (:data:`ALPHABET`): a state takes about half the characters of version 1's
JSON and encodes and decodes faster, which matters because the service does one or both on
most calls (sizes: docs/rules/osirium.md, "Serialization"; speed: ``bench/osirium_codec.py``).

Version 2 is the same text without ``mv`` and with a SplitMix64 generator only (the
previous release; its move number reads as 0): it is
still read, so that a token issued by that release decodes during a rolling upgrade, and
:func:`encode` writes it on request for a state whose generator allows it. Version 1
(compact JSON, :func:`encode_v1`) is still read too. Either way the text is
parsed strictly and the state then passes :meth:`OsiriumState.validate`; any problem raises
:class:`~engine.core.StateFormatError` naming the field.
"""

from __future__ import annotations

import json
from typing import Any, Final

from engine.core import StateFormatError, check_state_text
from engine.osirium.board import CELLS, NUM_TYPES, cell_name
from engine.osirium.cards import DEITIES, EXALTATIONS, MARKET_SIZE, RITUAL_SLOTS, RITUALS
from engine.osirium.state import PHASES, OsiriumState, Phase
from engine.rng import Rng, SerialRng, rng_from_text

VERSION: Final = 3
PREFIX: Final = f"osirium:{VERSION}:"
PREFIX_V2: Final = "osirium:2:"
PREFIX_V1: Final = "osirium:1:"
ALPHABET: Final = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
KEYS: Final = (
    "n", "tm", "dy", "pu", "b", "h", "pl", "ds", "mk", "bk", "sl", "dn", "ak", "ex",
    "si", "ad", "ph", "cur", "r", "fl", "cl", "cs", "eb", "rng", "mv",
)  # fmt: skip
_KEY_SET: Final = frozenset(KEYS)
#: Fields of version 2 (no move number).
_V2_KEYS: Final = KEYS[:-1]
_KEYS_EQ: Final = tuple(f"{k}=" for k in KEYS)
_V2_KEYS_EQ: Final = _KEYS_EQ[:-1]

_BAD: Final = 255  # a character outside the table being decoded
_DOT: Final = 254  # '.', an empty market or ritual slot
# Encoding: an id (0-61) becomes its ALPHABET character, _DOT a '.', in one bytes.translate.
_ENCODE: Final = bytes.maketrans(bytes([*range(len(ALPHABET)), _DOT]), (ALPHABET + ".").encode())
_TYPE_CH: Final = ALPHABET[:NUM_TYPES]
_RITUAL_CH: Final = ALPHABET[: len(RITUALS)]


def _decode_table(count: int, dot: bool = False) -> bytes:
    """bytes.translate table: the first ``count`` ALPHABET characters to their ids, '.'
    to :data:`_DOT` when ``dot``, everything else (non-ASCII bytes too) to :data:`_BAD`."""
    table = bytearray([_BAD] * 256)
    for i, c in enumerate(ALPHABET[:count]):
        table[ord(c)] = i
    if dot:
        table[ord(".")] = _DOT
    return bytes(table)


_TYPES: Final = _decode_table(NUM_TYPES)
_RITUALS: Final = _decode_table(len(RITUALS))
_DEITIES: Final = _decode_table(len(DEITIES))
_EXALTATIONS: Final = _decode_table(len(EXALTATIONS))
_MARKET: Final = _decode_table(NUM_TYPES, dot=True)
_SLOTS: Final = _decode_table(len(RITUALS), dot=True)
_FLAGS: Final = _decode_table(2)
#: Board cell text by ``(type + 1) * 4 + rotation`` (type -1: empty).
_CELL_TEXT: Final = [".."] * 4 + [f"{t}{r}" for t in _TYPE_CH for r in "0123"]
_CELL_OF: Final = {text: (i // 4 - 1, i % 4) for i, text in enumerate(_CELL_TEXT) if i >= 4}
_CELL_OF[".."] = (-1, 0)
#: Completed ritual text by ``id * 2 + principle``.
_DONE_TEXT: Final = [f"{r}{p}" for r in _RITUAL_CH for p in "01"]
_DONE_OF: Final = {text: i for i, text in enumerate(_DONE_TEXT)}
_BIT: Final = "01"
#: A phase's number in the text (``ph=<n>``): its place in :class:`Phase`.
_PHASE_NUMBER: Final = {phase: i for i, phase in enumerate(PHASES)}


def _phase(number: int) -> Phase:
    if not 0 <= number < len(PHASES):
        raise StateFormatError(f"osirium: invalid state: phase {number}")
    return PHASES[number]


def _chars(values: list[int]) -> str:
    """Ids 0-61 as ALPHABET text."""
    return bytes(values).translate(_ENCODE).decode()


def _seats(rows: list[list[int]]) -> str:
    return ",".join([bytes(row).translate(_ENCODE).decode() for row in rows])


def _dotted(values: list[int]) -> str:
    """Ids as ALPHABET text, -1 as '.'."""
    return bytes([_DOT if v < 0 else v for v in values]).translate(_ENCODE).decode()


def encode(s: OsiriumState, version: int = VERSION) -> str:
    """The ``osirium:3:`` text of ``s`` (runs on every state-changing call of the service), or
    the previous release's ``osirium:2:`` text, which only a SplitMix64 generator can be
    written in (``ValueError`` otherwise)."""
    prefix = PREFIX
    if version != VERSION:
        if version != 2 or not isinstance(s.rng, Rng):
            raise ValueError(
                f"osirium: cannot write state version {version} (version 2 needs a SplitMix64 generator)"
            )
        prefix = PREFIX_V2
    cells = _CELL_TEXT
    board = "".join([cells[(t + 1) * 4 + r] for t, r in zip(s.cell_type, s.cell_rotation, strict=True)])
    slots = ",".join([_dotted(row) for row in s.ritual_slots])
    done = ",".join(["".join([_DONE_TEXT[c] for c in row]) for row in s.completed])
    return (
        f"{prefix}n={s.player_count};tm={_BIT[s.team_play]};dy={_chars(s.deities)};"
        f"pu={''.join([_BIT[u] for u in s.powers_used])};b={board};h={_seats(s.hands)};"
        f"pl={_chars(s.draw_pile)};ds={_chars(s.discard)};mk={_dotted(s.market)};"
        f"bk={_seats(s.broken)};sl={slots};dn={done};"
        f"ak={','.join(map(str, s.ankhs))};ex={_chars(s.exaltations)};"
        f"si={_chars(s.simple_rituals)};ad={_chars(s.advanced_rituals)};ph={_PHASE_NUMBER[s.phase]};"
        f"cur={s.current};r={s.round};fl={_BIT[s.started]}{_BIT[s.placed]};cl={s.clear_cell};"
        f"cs={s.cast_slot},{s.cast_cells},{s.breaks_left},{s.last_broken};eb={s.ended_by};rng={s.rng.to_text()}"
    ) + (f";mv={s.moves}" if prefix == PREFIX else "")


def decode(data: object, *, validate: bool = True) -> OsiriumState:
    """The state serialised in ``data`` (version 3, 2 or 1), validated (a version-3 text
    this program wrote itself may skip it: ``validate=False``)."""
    text = check_state_text("osirium", data)
    if text.startswith(PREFIX):
        return _decode_v2(text[len(PREFIX) :], chance=True, validate=validate)
    if text.startswith(PREFIX_V2):
        return _decode_v2(text[len(PREFIX_V2) :], chance=False)
    if text.startswith(PREFIX_V1):
        return _decode_v1(text[len(PREFIX_V1) :])
    if text.startswith("osirium:"):
        raise StateFormatError(
            f"osirium: unknown state version {text.split(':', 2)[1]!r} "
            "(this engine reads versions 1, 2 and 3)"
        )
    raise StateFormatError(f"osirium: not an Osirium state (expected '{PREFIX}...')")


# ---------------------------------------------------------------------------------------
# Version 2
# ---------------------------------------------------------------------------------------


#: The most digits of a number in a state text: more than any counter needs, and a bound on
#: the work of converting one.
_MAX_DIGITS: Final = 20


def _fail(field: str, msg: str) -> StateFormatError:
    return StateFormatError(f"osirium: corrupt state: {field}: {msg}")


def _integer(text: str, field: str, lo: int, hi: int) -> int:
    body = text[1:] if text[:1] == "-" else text
    if not (body.isdigit() and body.isascii() and len(body) <= _MAX_DIGITS):
        raise _fail(field, f"expected an integer, got {text[:40]!r}")
    v = int(text)
    if not lo <= v <= hi:
        raise _fail(field, f"{v} is out of range {lo}..{hi}")
    return v


def _ids(text: str, table: bytes, field: str, what: str) -> list[int]:
    """The ids written in ``text`` through a :func:`_decode_table`; '.' (where the table
    allows it) is -1."""
    ids = text.encode().translate(table)
    if _BAD in ids:
        bad = next(c for c in text if len(c.encode()) > 1 or table[ord(c)] == _BAD)
        raise _fail(field, f"{bad!r} is not {what}")
    if _DOT in ids:
        return [-1 if v == _DOT else v for v in ids]
    return list(ids)


def _per_seat(text: str, n: int, field: str) -> list[str]:
    parts = text.split(",")
    if len(parts) != n:
        raise _fail(field, f"expected {n} ','-separated seats, got {len(parts)}")
    return parts


def _flags(text: str, n: int, field: str) -> list[bool]:
    if len(text) != n:
        raise _fail(field, f"expected {n} flags, got {text!r}")
    return [v == 1 for v in _ids(text, _FLAGS, field, "a flag 0 or 1")]


def _fields_in_order(body: str, chance: bool) -> dict[str, str] | None:
    """The fields of a text written by :func:`encode`: every key once, in order (one split,
    no per-field partition); ``None`` for any other text, which :func:`_fields` reads or
    refuses with the reason."""
    items = body.split(";")
    keys = _KEYS_EQ if chance else _V2_KEYS_EQ
    if len(items) != len(keys):
        return None
    values: list[str] = []
    for key, item in zip(keys, items, strict=True):
        if not item.startswith(key):
            return None
        values.append(item[len(key) :])
    return dict(zip(KEYS if chance else _V2_KEYS, values, strict=False))


def _fields(body: str, chance: bool) -> dict[str, str]:
    """The fields of a version 3 or 2 text in any order, or the reason it is refused."""
    f: dict[str, str] = {}
    for item in body.split(";"):
        key, eq, value = item.partition("=")
        if not eq:
            raise StateFormatError(f"osirium: corrupt state: field {item[:40]!r} is not key=value")
        if key not in _KEY_SET or (key == "mv" and not chance):
            raise StateFormatError(f"osirium: corrupt state: unknown field {key[:40]!r}")
        if key in f:
            raise StateFormatError(f"osirium: corrupt state: field {key!r} appears twice")
        f[key] = value
    keys = KEYS if chance else _V2_KEYS
    if len(f) != len(keys):
        missing = ", ".join(k for k in keys if k not in f)
        raise StateFormatError(f"osirium: corrupt state: missing field(s) {missing}")
    return f


def _decode_v2(body: str, *, chance: bool, validate: bool = True) -> OsiriumState:
    """Versions 3 and 2 (``chance``: version 3, whose generator may be keyed BLAKE2b)."""
    f = _fields_in_order(body, chance)
    if f is None:
        f = _fields(body, chance)
    s = OsiriumState()
    n = s.player_count = _integer(f["n"], "n", 2, 4)
    s.team_play = _flags(f["tm"], 1, "tm")[0]
    deity = f["dy"]
    if len(deity) != n:
        raise _fail("dy", f"expected {n} deities, got {deity!r}")
    s.deities = _ids(deity, _DEITIES, "dy", "a deity")
    s.powers_used = _flags(f["pu"], n, "pu")
    board = f["b"]
    if len(board) != 2 * CELLS:
        raise _fail("b", f"expected {2 * CELLS} characters (2 per cell), got {len(board)}")
    try:
        cells = [_CELL_OF[board[i : i + 2]] for i in range(0, 2 * CELLS, 2)]
    except KeyError as exc:
        raise _fail("b", f"{exc.args[0]!r} is not an empty cell '..' or an amulet and rotation") from None
    s.cell_type = [t for t, _ in cells]
    s.cell_rotation = [r for _, r in cells]
    s.hands = [_ids(h, _TYPES, "h", "an amulet type") for h in _per_seat(f["h"], n, "h")]
    s.draw_pile = _ids(f["pl"], _TYPES, "pl", "an amulet type")
    s.discard = _ids(f["ds"], _TYPES, "ds", "an amulet type")
    market = f["mk"]
    if len(market) != MARKET_SIZE:
        raise _fail("mk", f"expected {MARKET_SIZE} slots, got {market!r}")
    s.market = _ids(market, _MARKET, "mk", "an amulet type or '.'")
    s.broken = [_ids(b, _TYPES, "bk", "an amulet type") for b in _per_seat(f["bk"], n, "bk")]
    slots = _per_seat(f["sl"], n, "sl")
    if any(len(row) != RITUAL_SLOTS for row in slots):
        raise _fail("sl", f"expected {RITUAL_SLOTS} slots per seat, got {f['sl']!r}")
    s.ritual_slots = [_ids(row, _SLOTS, "sl", "a ritual or '.'") for row in slots]
    done = []
    for row in _per_seat(f["dn"], n, "dn"):
        if len(row) % 2:
            raise _fail("dn", f"completed rituals are pairs of ritual and principle, got {row!r}")
        try:
            done.append([_DONE_OF[row[i : i + 2]] for i in range(0, len(row), 2)])
        except KeyError as exc:
            raise _fail("dn", f"{exc.args[0]!r} is not a ritual and principle 0/1") from None
    s.completed = done
    s.ankhs = [_integer(a, "ak", 0, 999) for a in _per_seat(f["ak"], n, "ak")]
    exalt = f["ex"]
    if len(exalt) != n:
        raise _fail("ex", f"expected {n} exaltations, got {exalt!r}")
    s.exaltations = _ids(exalt, _EXALTATIONS, "ex", "an exaltation")
    s.simple_rituals = _ids(f["si"], _RITUALS, "si", "a ritual")
    s.advanced_rituals = _ids(f["ad"], _RITUALS, "ad", "a ritual")
    s.phase = _phase(_integer(f["ph"], "ph", 0, 99))
    s.current = _integer(f["cur"], "cur", 0, n - 1)
    s.round = _integer(f["r"], "r", 0, 9999)
    s.started, s.placed = _flags(f["fl"], 2, "fl")
    s.clear_cell = _integer(f["cl"], "cl", -1, CELLS - 1)
    cast = f["cs"].split(",")
    if len(cast) != 4:
        raise _fail("cs", f"expected slot,set,left,last, got {f['cs']!r}")
    s.cast_slot = _integer(cast[0], "cs", -1, RITUAL_SLOTS - 1)
    s.cast_cells = _integer(cast[1], "cs", 0, (1 << CELLS) - 1)
    s.breaks_left = _integer(cast[2], "cs", 0, CELLS)
    s.last_broken = _integer(cast[3], "cs", -1, CELLS - 1)
    s.moves = _integer(f["mv"], "mv", 0, 1 << 62) if chance else 0
    s.ended_by = _integer(f["eb"], "eb", -1, n - 1)
    text = f["rng"]
    try:
        rng = rng_from_text(text)
        if not chance and not isinstance(rng, Rng):
            raise ValueError
    except ValueError:
        raise _fail("rng", f"expected a generator state, got {text[:80]!r}") from None
    return _finish(s, rng, validate=validate)


def _finish(s: OsiriumState, rng: SerialRng, *, validate: bool = True) -> OsiriumState:
    """Derive the board masks, check every invariant (unless told not to), and settle the
    outcome."""
    s.rng = rng
    s.derive_board()
    if validate:
        s.validate(derived=False)
    s.settle_outcome()
    return s


# ---------------------------------------------------------------------------------------
# Version 1 (compact JSON): read for tokens of the previous release; written only by
# encode_v1, for compatibility tests.
# ---------------------------------------------------------------------------------------

_V1_KEYS: Final = frozenset(
    (
        "n", "teams", "deities", "used", "board", "hands", "pile", "discard", "market",
        "broken", "slots", "done", "ankhs", "exalt", "simple", "advanced", "phase", "cur",
        "round", "started", "placed", "clear", "cast", "ended_by", "rng",
    )
)  # fmt: skip


def encode_v1(s: OsiriumState) -> str:
    """The ``osirium:1:`` JSON text of ``s`` (an earlier release's format; SplitMix64 only)."""
    if not isinstance(s.rng, Rng):
        raise ValueError("osirium: version 1 needs a SplitMix64 generator")
    d: dict[str, Any] = {
        "n": s.player_count,
        "teams": s.team_play,
        "deities": s.deities,
        "used": s.powers_used,
        "board": [-1 if t < 0 else t * 4 + r for t, r in zip(s.cell_type, s.cell_rotation, strict=True)],
        "hands": s.hands,
        "pile": s.draw_pile,
        "discard": s.discard,
        "market": s.market,
        "broken": s.broken,
        "slots": s.ritual_slots,
        "done": s.completed,
        "ankhs": s.ankhs,
        "exalt": s.exaltations,
        "simple": s.simple_rituals,
        "advanced": s.advanced_rituals,
        "phase": _PHASE_NUMBER[s.phase],
        "cur": s.current,
        "round": s.round,
        "started": s.started,
        "placed": s.placed,
        "clear": s.clear_cell,
        "cast": [s.cast_slot, s.cast_cells, s.breaks_left, s.last_broken],
        "ended_by": s.ended_by,
        "rng": s.rng.state,
    }
    return PREFIX_V1 + json.dumps(d, separators=(",", ":"))


def _decode_v1(body: str) -> OsiriumState:
    try:
        d = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise StateFormatError(f"osirium: corrupt state: {exc}") from None
    if not isinstance(d, dict):
        raise StateFormatError("osirium: corrupt state: not an object")
    try:
        return _from_dict(d)
    except StateFormatError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise StateFormatError(f"osirium: corrupt state: {exc!r}") from None


def _from_dict(d: dict[str, Any]) -> OsiriumState:
    def integer(v: object, what: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise StateFormatError(f"osirium: {what} must be an integer, got {v!r}")
        return v

    def boolean(v: object, what: str) -> bool:
        if not isinstance(v, bool):
            raise StateFormatError(f"osirium: {what} must be true or false, got {v!r}")
        return v

    def ints(v: object, what: str, length: int | None = None) -> list[int]:
        if not isinstance(v, list):
            raise StateFormatError(f"osirium: {what} must be a list")
        if length is not None and len(v) != length:
            raise StateFormatError(f"osirium: {what} must have {length} entries, not {len(v)}")
        return [integer(x, what) for x in v]

    def rows(v: object, what: str, n: int) -> list[list[int]]:
        if not isinstance(v, list) or len(v) != n:
            raise StateFormatError(f"osirium: {what} must be a list of {n} lists")
        return [ints(x, what) for x in v]

    if set(d) != _V1_KEYS:
        raise StateFormatError(f"osirium: corrupt state: fields {sorted(set(d) ^ _V1_KEYS)} differ")
    n = integer(d["n"], "n")
    if not 2 <= n <= 4:
        raise StateFormatError(f"osirium: player count {n} is not 2..4")
    s = OsiriumState()
    s.player_count = n
    s.team_play = boolean(d["teams"], "teams")
    s.deities = ints(d["deities"], "deities", n)
    used = d["used"]
    if not isinstance(used, list) or len(used) != n:
        raise StateFormatError("osirium: used must be a list of n booleans")
    s.powers_used = [boolean(u, "used") for u in used]
    board = ints(d["board"], "board", CELLS)
    s.hands = rows(d["hands"], "hands", n)
    s.draw_pile = ints(d["pile"], "pile")
    s.discard = ints(d["discard"], "discard")
    s.market = ints(d["market"], "market", MARKET_SIZE)
    s.broken = rows(d["broken"], "broken", n)
    s.ritual_slots = rows(d["slots"], "slots", n)
    s.completed = rows(d["done"], "done", n)
    s.ankhs = ints(d["ankhs"], "ankhs", n)
    s.exaltations = ints(d["exalt"], "exalt", n)
    s.simple_rituals = ints(d["simple"], "simple")
    s.advanced_rituals = ints(d["advanced"], "advanced")
    s.phase = _phase(integer(d["phase"], "phase"))
    s.current = integer(d["cur"], "cur")
    s.round = integer(d["round"], "round")
    s.moves = 0  # version 1 did not record it
    s.started = boolean(d["started"], "started")
    s.placed = boolean(d["placed"], "placed")
    s.clear_cell = integer(d["clear"], "clear")
    s.cast_slot, s.cast_cells, s.breaks_left, s.last_broken = ints(d["cast"], "cast", 4)
    s.ended_by = integer(d["ended_by"], "ended_by")
    s.cell_type = [-1] * CELLS
    s.cell_rotation = [0] * CELLS
    for c, v in enumerate(board):
        if v == -1:
            continue
        if not 0 <= v < NUM_TYPES * 4:
            raise StateFormatError(f"osirium: bad amulet code {v} on cell {cell_name(c)}")
        s.cell_type[c], s.cell_rotation[c] = divmod(v, 4)
    state = integer(d["rng"], "rng")
    if not 0 <= state < 1 << 64:
        raise StateFormatError("osirium: rng state out of range")
    rng = Rng(0)
    rng.setstate(state)
    return _finish(s, rng)
