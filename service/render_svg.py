"""Board diagrams as SVG, drawn from the typed view ``GetView`` returns (``pb.View``).

The picture is a function of the view alone: it shows exactly what the viewing seat may see
(docs/rules/aton.md "Information (A10)", docs/rules/osirium.md), and the same view always
gives the same bytes. Aton: the four temples with every square named as the moves name it
(``T2.6``), counters by seat, the Kingdom of the Dead, each seat's cartouches, discard pile
and hand. Osirium: the 4x4 board with each amulet's arrows and the links they form, cells
named ``row,col``, the market, the piles, the viewer's hand and each seat's deity, rituals,
completed and broken piles. Standard library only (``heka render``, the docs' figures).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from xml.sax.saxutils import escape, quoteattr

from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

from service.gen.heka.v1 import game_service_pb2 as pb

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
INK = "#1b1b1b"
MUTED = "#5a5a5a"
PANEL = "#f6f4ef"


def _num(value: float) -> str:
    """A coordinate as SVG text: integers without a point, others to two decimals."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


class Svg:
    """A flat list of SVG elements, written in the order they are added."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.parts: list[str] = []

    def _element(self, tag: str, attrs: dict[str, object], body: str | None = None) -> None:
        text = " ".join(
            f"{k.replace('_', '-')}={quoteattr(_num(v) if isinstance(v, int | float) else str(v))}"
            for k, v in attrs.items()
            if v is not None
        )
        if body is None:
            self.parts.append(f"<{tag} {text}/>")
        else:
            self.parts.append(f"<{tag} {text}>{body}</{tag}>")

    def open(self, cls: str, **attrs: object) -> None:
        """Start a group (``data_seat=1`` becomes ``data-seat="1"``); :meth:`close` ends it."""
        fields = {"class": cls, **attrs}
        text = " ".join(f"{k.replace('_', '-')}={quoteattr(str(v))}" for k, v in fields.items())
        self.parts.append(f"<g {text}>")

    def close(self) -> None:
        self.parts.append("</g>")

    def tooltip(self, text: str) -> None:
        """A ``<title>`` for the enclosing group (shown on hover, read by screen readers)."""
        self.parts.append(f"<title>{escape(text)}</title>")

    def rect(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        *,
        fill: str = "none",
        stroke: str | None = INK,
        width: float = 1,
        rx: float = 0,
        dash: str | None = None,
    ) -> None:
        self._element(
            "rect",
            {
                "x": x,
                "y": y,
                "width": w,
                "height": h,
                "rx": rx or None,
                "fill": fill,
                "stroke": stroke,
                "stroke_width": width if stroke else None,
                "stroke_dasharray": dash,
            },
        )

    def circle(
        self, cx: float, cy: float, r: float, *, fill: str, stroke: str = INK, width: float = 1.5
    ) -> None:
        self._element(
            "circle", {"cx": cx, "cy": cy, "r": r, "fill": fill, "stroke": stroke, "stroke_width": width}
        )

    def line(
        self, x1: float, y1: float, x2: float, y2: float, *, stroke: str = INK, width: float = 1
    ) -> None:
        self._element(
            "line",
            {
                "x1": x1,
                "y1": y1,
                "x2": x2,
                "y2": y2,
                "stroke": stroke,
                "stroke_width": width,
                "stroke_linecap": "round",
            },
        )

    def polygon(self, points: Sequence[tuple[float, float]], *, fill: str = INK) -> None:
        self._element(
            "polygon", {"points": " ".join(f"{_num(x)},{_num(y)}" for x, y in points), "fill": fill}
        )

    def text(
        self,
        x: float,
        y: float,
        body: str,
        *,
        size: float = 12,
        bold: bool = False,
        anchor: str = "start",
        fill: str = INK,
        cls: str | None = None,
    ) -> None:
        self._element(
            "text",
            {
                "x": x,
                "y": y,
                "font_size": size,
                "font_weight": "bold" if bold else None,
                "text_anchor": anchor if anchor != "start" else None,
                "fill": fill,
                "class": cls,
            },
            escape(body),
        )

    def document(self, height: int, title: str) -> str:
        head = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{height}" '
            f'viewBox="0 0 {self.width} {height}" font-family={quoteattr(FONT)}>\n'
            f"<title>{escape(title)}</title>\n"
            f'<rect x="0" y="0" width="{self.width}" height="{height}" fill="#ffffff"/>\n'
        )
        return head + "\n".join(self.parts) + "\n</svg>\n"


def _wrap(text: str, chars: int) -> list[str]:
    """``text`` in lines of at most ``chars`` characters, broken at spaces."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > chars:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines


def _enum_word(enum: EnumTypeWrapper, value: int, prefix: str) -> str:
    """``DECISION_ARRANGE`` -> ``arrange``."""
    return enum.Name(value).removeprefix(prefix).lower().replace("_", " ")


def _points(score: int) -> str:
    return "1 point" if score == 1 else f"{score} points"


def _seat_label(seat: int, viewer: int | None) -> str:
    return f"seat {seat} (you)" if seat == viewer else f"seat {seat}"


def _status_line(view: pb.View, round_number: int) -> str:
    status = view.status
    decision = _enum_word(pb.Decision, status.decision, "DECISION_")
    if status.is_over:
        text = status.outcome.text if status.HasField("outcome") else "game over"
        return f"round {round_number} · game over: {text}"
    return (
        f"round {round_number} · move {status.move_number} · "
        f"{_seat_label(status.current_player, _viewer(view))} to decide ({decision})"
    )


def _viewer(view: pb.View) -> int | None:
    return view.viewer if view.HasField("viewer") else None


def _view_line(view: pb.View, hidden: str) -> str:
    viewer = _viewer(view)
    if viewer is None:
        return f"public view (a spectator's): {hidden} are hidden"
    return f"view of seat {viewer}: the other seats' {hidden} are hidden"


def _header(svg: Svg, heading: str, caption: str, status: str) -> int:
    """The title, the caption (how the state was reached, whose view) and the status line;
    how far the rest moves down for the caption."""
    svg.text(_MARGIN, 32, heading, size=20, bold=True)
    shift = 0
    if caption:
        svg.text(_MARGIN, 54, caption, size=13)
        shift = 20
    svg.text(_MARGIN, 54 + shift, status, size=13, fill=MUTED)
    return shift


def render_view(view: pb.View, *, title: str = "", caption: str = "") -> str:
    """The SVG diagram of a view (``pb.View`` with its ``aton`` or ``osirium`` member set),
    under ``title`` (default: the game) and ``caption`` (a line below it)."""
    which = view.WhichOneof("game_view")
    if which == "aton":
        return render_aton(view, title=title, caption=caption)
    if which == "osirium":
        return render_osirium(view, title=title, caption=caption)
    raise ValueError("the view has no typed game view (View.aton or View.osirium)")


# ---------------------------------------------------------------------------------------
# Aton
# ---------------------------------------------------------------------------------------

_SQUARE_FILL = {
    pb.SQUARE_KIND_YELLOW: "#f3d55b",
    pb.SQUARE_KIND_GREY: "#b9b9b9",
    pb.SQUARE_KIND_BLUE: "#79aee0",
    pb.SQUARE_KIND_GREEN: "#8fca7c",
    pb.SQUARE_KIND_BONUS1: "#eadfc4",
    pb.SQUARE_KIND_BONUS2: "#e2cfa2",
}
_BONUS = {pb.SQUARE_KIND_BONUS1: "+1", pb.SQUARE_KIND_BONUS2: "+2"}
#: Seat 0's counters are black, seat 1's white: tellable apart without colour vision.
_COUNTER = (("#1b1b1b", "#ffffff"), ("#ffffff", "#1b1b1b"))

_SQ = 50  # square side
_SQ_GAP = 4
_TEMPLE_GAP = 20
_MARGIN = 36


def _counter(svg: Svg, cx: float, cy: float, seat: int, r: float = 13) -> None:
    fill, ink = _COUNTER[seat % 2]
    svg.circle(cx, cy, r, fill=fill, stroke=INK, width=2)
    svg.text(cx, cy + r * 0.33, str(seat), size=r * 0.9, bold=True, anchor="middle", fill=ink)


def _card(svg: Svg, x: float, y: float, value: int | None, *, w: float = 30, h: float = 42) -> None:
    """A card face with its value, or (``None``) its back: the value is not in the picture."""
    if value is None:
        svg.rect(x, y, w, h, fill="#8b6b45", stroke=INK, rx=4)
        svg.rect(x + 4, y + 4, w - 8, h - 8, fill="none", stroke="#d9c39b", rx=2)
    else:
        svg.rect(x, y, w, h, fill="#fffdf4", stroke=INK, rx=4)
        svg.text(x + w / 2, y + h / 2 + 7, str(value), size=20, bold=True, anchor="middle", cls="card")


def render_aton(view: pb.View, *, title: str = "", caption: str = "") -> str:
    v = view.aton
    viewer = _viewer(view)
    width = 2 * _MARGIN + 4 * (4 * _SQ + 3 * _SQ_GAP) + 3 * _TEMPLE_GAP
    svg = Svg(width)
    heading = title or "Aton"
    shift = _header(svg, heading, caption, _status_line(view, v.round))

    # The temples (A1.6): T<temple>.<slot>, as the moves name squares.
    top = 92 + shift
    temple_w = 4 * _SQ + 3 * _SQ_GAP
    for temple in v.temples:
        x0 = _MARGIN + (temple.number - 1) * (temple_w + _TEMPLE_GAP)
        svg.text(x0, top - 8, f"Temple {temple.number}", size=14, bold=True)
        svg.open("temple", data_temple=temple.number)
        for square in temple.squares:
            sx = x0 + (square.slot % 4) * (_SQ + _SQ_GAP)
            sy = top + (square.slot // 4) * (_SQ + _SQ_GAP)
            svg.rect(sx, sy, _SQ, _SQ, fill=_SQUARE_FILL.get(square.kind, "#ffffff"), stroke="#6b6b6b")
            svg.text(sx + 3, sy + 11, f"T{temple.number}.{square.slot}", size=9, cls="square")
            bonus = _BONUS.get(square.kind)
            if bonus:
                svg.text(sx + _SQ - 3, sy + _SQ - 4, bonus, size=11, bold=True, anchor="end")
            if square.HasField("owner"):
                _counter(svg, sx + _SQ / 2 - (4 if bonus else 0), sy + _SQ / 2 + 3, square.owner)
        svg.close()

    # Legend.
    y: float = top + 3 * (_SQ + _SQ_GAP) + 20
    x: float = _MARGIN
    for kind, label in (
        (pb.SQUARE_KIND_YELLOW, "yellow"),
        (pb.SQUARE_KIND_GREY, "grey"),
        (pb.SQUARE_KIND_BLUE, "blue"),
        (pb.SQUARE_KIND_GREEN, "green"),
        (pb.SQUARE_KIND_BONUS1, "bonus +1"),
        (pb.SQUARE_KIND_BONUS2, "bonus +2"),
    ):
        svg.rect(x, y - 11, 14, 14, fill=_SQUARE_FILL[kind], stroke="#6b6b6b")
        svg.text(x + 19, y, label, size=11)
        x += 30 + 6.5 * len(label)
    for owner in (0, 1):
        _counter(svg, x + 7, y - 4, owner, r=8)
        svg.text(x + 19, y, f"counter of seat {owner}", size=11)
        x += 130

    # The Kingdom of the Dead (A1.7) and the round's state.
    y += 34
    svg.text(_MARGIN, y, f"Kingdom of the Dead {v.kingdom_total}/8", size=13, bold=True)
    owners = [s.seat for s in v.seats for _ in range(s.kingdom)]
    for k in range(8):
        cx = _MARGIN + 200 + k * 28
        if k < len(owners):
            _counter(svg, cx, y - 5, owners[k], r=10)
        else:
            svg.circle(cx, y - 5, 10, fill="none", stroke="#9a9a9a", width=1)
    notes = []
    if v.HasField("first_player"):
        notes.append(f"seat {v.first_player} acts first")
    if v.war:
        notes.append("war: " + ", ".join(f"{w.seat0_card}-{w.seat1_card}" for w in v.war))
    if v.remaining and view.status.decision in (pb.DECISION_REMOVE, pb.DECISION_PLACE):
        what = "to remove" if view.status.decision == pb.DECISION_REMOVE else "to place"
        notes.append(f"{v.remaining} {what}")
    if v.HasField("removal_target"):
        notes.append(f"removing counters of seat {v.removal_target}")
    if v.overflow:
        notes.append(f"{v.overflow} overflow to the Kingdom")
    if v.HasField("reset_temple"):
        notes.append(f"reset: temple {v.reset_temple}")
    if notes:
        svg.text(_MARGIN + 450, y, " · ".join(notes), size=12)

    # The seats.
    y += 24
    panel_w = (width - 2 * _MARGIN - 24) / 2
    panel_h = 196
    for seat in v.seats:
        px = _MARGIN + seat.seat * (panel_w + 24)
        svg.open("seat", data_seat=seat.seat)
        svg.rect(px, y, panel_w, panel_h, fill=PANEL, stroke="#c9c2b3", rx=6)
        _counter(svg, px + 20, y + 22, seat.seat, r=10)
        svg.text(px + 38, y + 27, _seat_label(seat.seat, viewer).capitalize(), size=15, bold=True)
        svg.text(px + panel_w - 14, y + 27, _points(seat.score), size=15, bold=True, anchor="end")
        svg.text(
            px + 14,
            y + 50,
            f"stock {seat.stock} · in the Kingdom {seat.kingdom} · deck {seat.deck_size} · "
            f"hand {seat.hand_size}",
            size=12,
        )
        discard = "  ".join(
            f"{value}×{count}" for value, count in zip((1, 2, 3, 4), seat.discard_counts, strict=True)
        )
        token = "exchange token: yes" if seat.has_token else "exchange token: no"
        flags = [token]
        if seat.exchanged:
            flags.append("exchanged this round")
        if seat.seat == viewer and v.exchange_decision != pb.ATON_EXCHANGE_CHOICE_UNSPECIFIED:
            flags.append(
                "your choice: "
                + _enum_word(pb.AtonExchangeChoice, v.exchange_decision, "ATON_EXCHANGE_CHOICE_")
            )
        svg.text(px + 14, y + 68, f"discard pile: {discard or '-'}", size=12)
        svg.text(px + 14, y + 86, " · ".join(flags), size=12)

        # Cartouches 1-4 (A3.3, A3.4): a value where the viewer may see it, else a back.
        shown = {c.position: c.value for c in seat.cartouches}
        svg.text(px + 14, y + 124, "cartouches", size=12)
        svg.open("cartouches", data_seat=seat.seat)
        for position in (1, 2, 3, 4):
            card_x = px + 90 + (position - 1) * 38
            if position in shown:
                _card(svg, card_x, y + 98, shown[position])
            elif seat.committed:
                _card(svg, card_x, y + 98, None)
            else:
                svg.rect(card_x, y + 98, 30, 42, fill="none", stroke="#9a9a9a", rx=4, dash="4 3")
            svg.text(card_x + 15, y + 152, str(position), size=10, anchor="middle", fill=MUTED)
        svg.close()

        # The hand: its values for the viewer's own seat only.
        svg.text(px + 260, y + 124, "hand", size=12)
        svg.open("hand", data_seat=seat.seat)
        own = seat.seat == viewer
        values: list[int | None] = list(v.hand) if own else [None] * seat.hand_size
        for k, value in enumerate(values):
            _card(svg, px + 295 + k * 34, y + 98, value)
        svg.close()
        if not own and seat.hand_size:
            svg.text(px + 295, y + 160, f"{seat.hand_size} cards, hidden", size=10, fill=MUTED)
        elif not values:
            svg.text(px + 295, y + 124, "empty", size=12, fill=MUTED)
        svg.text(px + 14, y + 182, f"{seat.revealed} of 4 cartouches revealed", size=10, fill=MUTED)
        svg.close()

    y += panel_h + 26
    svg.text(_MARGIN, y, _view_line(view, "hands and unrevealed cartouches"), size=11, fill=MUTED)
    return svg.document(int(y) + 16, heading)


# ---------------------------------------------------------------------------------------
# Osirium
# ---------------------------------------------------------------------------------------

_AMULET = {
    pb.AMULET_COLOUR_BLUE: ("#3d7cc0", "#cfe0f3", "B"),
    pb.AMULET_COLOUR_RED: ("#c8433c", "#f4d3d0", "R"),
    pb.AMULET_COLOUR_GREEN: ("#3f9550", "#d2ead5", "G"),
    pb.AMULET_COLOUR_YELLOW: ("#d0a81f", "#f8ecbd", "Y"),
}
#: The printed arrows of each pattern (rotation 0, O1.3).
_PRINTED = {
    pb.AMULET_PATTERN_SINGLE: (pb.DIRECTION_NORTH,),
    pb.AMULET_PATTERN_STRAIGHT: (pb.DIRECTION_NORTH, pb.DIRECTION_SOUTH),
    pb.AMULET_PATTERN_CORNER: (pb.DIRECTION_NORTH, pb.DIRECTION_EAST),
    pb.AMULET_PATTERN_TEE: (pb.DIRECTION_NORTH, pb.DIRECTION_EAST, pb.DIRECTION_SOUTH),
    pb.AMULET_PATTERN_CROSS: (pb.DIRECTION_NORTH, pb.DIRECTION_EAST, pb.DIRECTION_SOUTH, pb.DIRECTION_WEST),
}
_STEP: dict[int, tuple[int, int]] = {
    pb.DIRECTION_NORTH: (0, -1),
    pb.DIRECTION_EAST: (1, 0),
    pb.DIRECTION_SOUTH: (0, 1),
    pb.DIRECTION_WEST: (-1, 0),
}
_OPPOSITE: dict[int, int] = {
    pb.DIRECTION_NORTH: pb.DIRECTION_SOUTH,
    pb.DIRECTION_SOUTH: pb.DIRECTION_NORTH,
    pb.DIRECTION_EAST: pb.DIRECTION_WEST,
    pb.DIRECTION_WEST: pb.DIRECTION_EAST,
}

_CELL = 104


def _colour(amulet: pb.Amulet) -> tuple[str, str, str]:
    return _AMULET.get(amulet.colour, ("#777777", "#eeeeee", "?"))


def _pattern(amulet: pb.Amulet) -> str:
    return _enum_word(pb.AmuletPattern, amulet.pattern, "AMULET_PATTERN_")


def _tile(svg: Svg, x: float, y: float, size: float, *, amulet: pb.Amulet, arrows: Iterable[int]) -> None:
    """An amulet: a square of its colour with its arrows from the centre to the sides."""
    strong, light, _ = _colour(amulet)
    svg.rect(x, y, size, size, fill=light, stroke=strong, width=2.5, rx=size * 0.12)
    cx, cy = x + size / 2, y + size / 2
    reach = size / 2 - 2
    head = max(5.0, size * 0.11)
    for d in arrows:
        dx, dy = _STEP[d]
        tx, ty = cx + dx * reach, cy + dy * reach
        svg.line(cx, cy, tx - dx * head, ty - dy * head, stroke=INK, width=max(2.0, size * 0.05))
        # The head: its tip on the side, its base across the arrow.
        bx, by = tx - dx * head, ty - dy * head
        svg.polygon(
            [
                (tx, ty),
                (bx + dy * head * 0.8, by + dx * head * 0.8),
                (bx - dy * head * 0.8, by - dx * head * 0.8),
            ]
        )
    svg.circle(cx, cy, max(2.5, size * 0.06), fill=strong, stroke=INK, width=1)


def _named_tile(
    svg: Svg, x: float, y: float, amulet: pb.Amulet, *, size: float = 46, cls: str = "amulet"
) -> None:
    """A card of a hand, the market or a pile: the tile with its printed arrows, and its name."""
    svg.open(cls, data_name=amulet.name)
    _tile(svg, x, y, size, amulet=amulet, arrows=_PRINTED.get(amulet.pattern, ()))
    svg.text(x + size / 2, y + size + 14, amulet.name, size=10, anchor="middle", cls="amulet-name")
    svg.close()


def _ritual_text(ritual: pb.Ritual) -> str:
    letters = "".join(_colour(pb.Amulet(colour=c.colour))[2] * c.count for c in ritual.requirement)
    return (
        f"#{ritual.id} {ritual.name} [{letters}] · Order {ritual.order_ankhs}/{ritual.order_breaks}"
        f" · Chaos {ritual.chaos_ankhs}/{ritual.chaos_breaks}"
    )


def _osirium_seat_lines(seat: pb.OsiriumSeat, viewer: int | None) -> list[tuple[str, str]]:
    """The lines of a seat's panel, each with its class (tests and styles find them by it)."""
    lines: list[tuple[str, str]] = []

    def add(text: str, cls: str) -> None:
        for k, part in enumerate(_wrap(text, 68)):
            lines.append((part if k == 0 else "    " + part, cls))

    deity = seat.deity
    power = _enum_word(pb.DeityPower, deity.power, "DEITY_POWER_")
    add(f"power, {power}{' (used)' if seat.power_used else ''}: {deity.text}", "power")
    own = seat.seat == viewer
    hand = f"hand: {seat.hand_size} amulets" + (
        " (shown above)" if own else " (hidden)" if seat.hand_size else ""
    )
    add(f"{hand} · ritual Ankhs {seat.ritual_ankhs}", "hand")
    for slot in seat.rituals:
        name = f"s{slot.slot}" + (" (face down)" if slot.slot == 2 else "")
        if slot.empty:
            add(f"{name}: empty", "ritual")
        elif slot.HasField("ritual"):
            add(f"{name}: {_ritual_text(slot.ritual)}", "ritual")
        else:
            deck = _enum_word(pb.RitualDeck, slot.hidden_deck, "RITUAL_DECK_")
            add(f"{name}: hidden, from the {deck} deck", "ritual")
    if seat.completed:
        done = ", ".join(
            f"#{c.ritual.id} {c.ritual.name} ({_enum_word(pb.Principle, c.principle, 'PRINCIPLE_')})"
            for c in seat.completed
        )
        add(f"completed: {done}", "completed")
    if seat.broken:
        add(f"broken ({len(seat.broken)}): {', '.join(a.name for a in seat.broken)}", "broken")
    if seat.HasField("exaltation"):
        x = seat.exaltation
        add(f"exaltation: {x.name} ({x.ankhs} Ankhs): {x.text}", "exaltation")
    else:
        add("exaltation: hidden", "exaltation")
    return lines


def render_osirium(view: pb.View, *, title: str = "", caption: str = "") -> str:
    v = view.osirium
    viewer = _viewer(view)
    width = 1000
    svg = Svg(width)
    teams = len({s.team for s in v.seats}) < len(v.seats)
    heading = title or f"Osirium, {v.num_players} players" + (" in teams" if teams else "")
    shift = _header(svg, heading, caption, _status_line(view, v.round))

    # The board (O1.2): cells row,col; each amulet with its arrows as rotated; links (O4.1)
    # where two neighbours point at each other.
    bx, by = 76, 100 + shift
    for c in range(4):
        svg.text(bx + c * _CELL + _CELL / 2, by - 8, f"col {c}", size=11, anchor="middle", fill=MUTED)
        svg.text(bx - 8, by + c * _CELL + _CELL / 2 + 4, f"row {c}", size=11, anchor="end", fill=MUTED)
    cast = set(v.cast.cells) if v.HasField("cast") else set()
    cells = {cell.cell: cell for cell in v.board}
    for cell in v.board:
        x, y = bx + cell.column * _CELL, by + cell.row * _CELL
        svg.open("cell", data_cell=f"{cell.row},{cell.column}")
        svg.rect(x, y, _CELL, _CELL, fill="#fbf8f1", stroke="#9d927c")
        if cell.HasField("amulet"):
            a = cell.amulet
            svg.open("amulet", data_name=a.name)
            svg.tooltip(f"{a.name} at {cell.row},{cell.column}, rotated {cell.rotation_degrees}°")
            _tile(svg, x + 14, y + 14, _CELL - 28, amulet=a, arrows=cell.arrows)
            svg.text(x + 5, y + _CELL - 5, a.name.split("-")[0], size=9, fill=MUTED)
            svg.text(x + _CELL - 5, y + _CELL - 5, _pattern(a), size=9, anchor="end", fill=MUTED)
            svg.close()
        svg.text(x + 5, y + 13, f"{cell.row},{cell.column}", size=10, bold=True, cls="cell-name")
        svg.close()
    for cell in v.board:  # the cast's set and the cleared cell, outlined over their neighbours
        x, y = bx + cell.column * _CELL, by + cell.row * _CELL
        if cell.cell in cast:
            svg.rect(x + 1.5, y + 1.5, _CELL - 3, _CELL - 3, stroke="#e07b00", width=3)
        if v.HasField("clear_cell") and cell.cell == v.clear_cell:
            svg.rect(x + 1.5, y + 1.5, _CELL - 3, _CELL - 3, stroke="#e07b00", width=3, dash="6 4")
    for cell in v.board:  # links: drawn last, over both cells
        for d in (pb.DIRECTION_EAST, pb.DIRECTION_SOUTH):
            dx, dy = _STEP[d]
            if not (0 <= cell.column + dx < 4 and 0 <= cell.row + dy < 4):
                continue
            other = cells[cell.cell + dx + 4 * dy]
            if d in cell.arrows and _OPPOSITE[d] in other.arrows:
                ex = bx + cell.column * _CELL + _CELL / 2 + dx * _CELL / 2
                ey = by + cell.row * _CELL + _CELL / 2 + dy * _CELL / 2
                svg.circle(ex, ey, 5, fill="#ffffff", stroke=INK, width=2)
    board_bottom = by + 4 * _CELL
    svg.text(
        bx,
        board_bottom + 18,
        "○ on a side: a link (both amulets point at each other, O4.1)",
        size=10,
        fill=MUTED,
    )
    if v.HasField("cast"):
        cells_text = " ".join(f"{c // 4},{c % 4}" for c in v.cast.cells)
        text = f"casting ritual s{v.cast.slot} with {cells_text} (outlined) · {v.cast.breaks_left} to break"
        if v.cast.HasField("last_broken_cell"):
            last = v.cast.last_broken_cell
            text += f" · last broken {last // 4},{last % 4}"
        svg.text(bx, board_bottom + 34, text, size=11)

    # The market (O1.7), the piles, the viewer's hand.
    rx = bx + 4 * _CELL + 40
    svg.text(rx, by + 6, "Market", size=14, bold=True)
    svg.open("market")
    for slot in v.market:
        x = rx + slot.slot * 112
        svg.text(x, by + 26, f"market{slot.slot}", size=10, fill=MUTED)
        if slot.HasField("amulet"):
            _named_tile(svg, x + 20, by + 34, slot.amulet)
        else:
            svg.rect(x + 20, by + 34, 46, 46, fill="none", stroke="#9a9a9a", rx=5, dash="4 3")
            svg.text(x + 43, by + 96, "empty", size=10, anchor="middle", fill=MUTED)
    svg.close()
    y = by + 126
    svg.text(
        rx,
        y,
        f"draw pile {v.draw_pile_size} · discard {len(v.discard)} · rituals: simple {v.simple_pile_size}, "
        f"advanced {v.advanced_pile_size}",
        size=12,
    )
    if v.discard:
        for part in _wrap("discard: " + ", ".join(a.name for a in v.discard), 64):
            y += 16
            svg.text(rx, y, part, size=11, fill=MUTED, cls="discard")
    y += 34
    if viewer is None:
        svg.text(rx, y, "Hands: hidden (public view)", size=14, bold=True)
    else:
        svg.text(rx, y, f"Your hand (seat {viewer})", size=14, bold=True)
        svg.open("hand", data_seat=viewer)
        for k, amulet in enumerate(v.hand):
            _named_tile(svg, rx + 20 + k * 90, y + 12, amulet)
        svg.close()
        if not v.hand:
            svg.text(rx, y + 22, "empty", size=11, fill=MUTED)
    if not view.status.is_over and (v.started or v.placed):
        done = "has placed this turn" if v.placed else "has started its turn (it may no longer pass)"
        svg.text(rx, y + 96, f"seat {view.status.current_player} {done}", size=11, fill=MUTED)

    # The seats.
    panel_w = (width - 2 * _MARGIN - 24) / 2
    top = board_bottom + 52
    rows = [v.seats[i : i + 2] for i in range(0, len(v.seats), 2)]
    for row in rows:
        seat_lines = [_osirium_seat_lines(s, viewer) for s in row]
        panel_h = 40 + 16 * max(len(lines) for lines in seat_lines)
        for k, (seat, lines) in enumerate(zip(row, seat_lines, strict=True)):
            px = _MARGIN + k * (panel_w + 24)
            svg.open("seat", data_seat=seat.seat)
            svg.rect(px, top, panel_w, panel_h, fill=PANEL, stroke="#c9c2b3", rx=6)
            head = f"{_seat_label(seat.seat, viewer).capitalize()} · {seat.deity.name}"
            if teams:
                head += f" · team {seat.team}"
            if view.status.current_player == seat.seat and not view.status.is_over:
                head += " · to act"
            svg.text(px + 14, top + 24, head, size=15, bold=True)
            svg.text(px + panel_w - 14, top + 24, _points(seat.score), size=15, bold=True, anchor="end")
            for i, (line, cls) in enumerate(lines):
                svg.text(px + 14, top + 46 + 16 * i, line, size=11.5, cls=cls)
            svg.close()
        top += panel_h + 14
    legend = "rituals: #id name [colours needed] · Order Ankhs/breaks · Chaos Ankhs/breaks"
    svg.text(_MARGIN, top + 8, legend, size=11, fill=MUTED)
    svg.text(
        _MARGIN, top + 24, _view_line(view, "hands, face-down rituals and exaltations"), size=11, fill=MUTED
    )
    return svg.document(int(top) + 36, heading)
