"""Board diagrams (service/render_svg.py, ``heka render``): drawn from a seat's typed view,
well-formed, byte-for-byte reproducible, labelled as the moves name things, and showing
nothing the seat may not see (docs/rules/aton.md A10, docs/rules/osirium.md O6)."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from service_helpers import KEY1

from engine import get_game
from engine.core import State
from service.cli import main
from service.convert import view_message
from service.envelope import KeyRing, parse_keys
from service.gen.heka.v1 import game_service_pb2 as pb
from service.render_svg import render_view

NS = "{http://www.w3.org/2000/svg}"


def play(game: str, players: int, seed: int, moves: int, options: dict[str, Any] | None = None) -> State:
    """The state ``heka render --game G --seed S --moves M`` draws."""
    state = get_game(game).new_initial_state(players, seed, options or {})
    rng = random.Random(seed)
    for _ in range(moves):
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))
    return state


def first(game: str, players: int, seed: int, found: Callable[[State], bool]) -> State:
    """The first state of a seeded random game where ``found`` holds."""
    state = get_game(game).new_initial_state(players, seed, {})
    rng = random.Random(seed)
    while not found(state):
        assert not state.is_terminal(), "no such state in this game"
        state.apply(rng.choice(state.legal_actions()))
    return state


def svg_of(state: State, viewer: int | None) -> str:
    return render_view(view_message(state, viewer))


def texts(root: ET.Element) -> Iterator[str]:
    for el in root.iter(f"{NS}text"):
        yield el.text or ""


def visible(svg: str) -> str:
    """The diagram's texts, lines joined (a wrapped line reads as one)."""
    return " ".join(" ".join(texts(ET.fromstring(svg))).split())


def group(root: ET.Element, cls: str, **attrs: object) -> ET.Element:
    """The one ``<g class=cls>`` with these ``data-`` attributes."""
    found = [
        g
        for g in root.iter(f"{NS}g")
        if g.get("class") == cls and all(g.get(f"data-{k}") == str(v) for k, v in attrs.items())
    ]
    assert len(found) == 1, (cls, attrs, len(found))
    return found[0]


#: States of both games (2p, 3p and 4p Osirium, teams): game, players, seed, moves, options.
STATES = [
    ("aton", 2, 3, 63, None),
    ("aton", 2, 7, 120, None),
    ("aton", 2, 5, 10_000, None),  # a finished game
    ("osirium", 2, 2, 40, None),
    ("osirium", 3, 6, 90, None),
    ("osirium", 4, 4, 62, None),  # casting a ritual
    ("osirium", 4, 9, 30, {"teams": True}),
]


@pytest.mark.parametrize(("game", "players", "seed", "moves", "options"), STATES)
def test_diagram_is_well_formed_and_reproducible(
    game: str, players: int, seed: int, moves: int, options: dict[str, Any] | None
) -> None:
    state = play(game, players, seed, moves, options)
    for viewer in (*range(players), None):
        svg = svg_of(state, viewer)
        root = ET.fromstring(svg)
        assert root.tag == f"{NS}svg"
        assert int(root.get("width", "0")) > 0 and int(root.get("height", "0")) > 0
        assert svg == svg_of(state, viewer)  # same view, same bytes
        assert svg == svg_of(get_game(game).deserialize_state(state.serialize()), viewer)


@pytest.mark.parametrize(("seed", "moves"), [(3, 63), (7, 120), (11, 40)])
def test_aton_diagram_names_every_square_counter_card_and_score(seed: int, moves: int) -> None:
    state = play("aton", 2, seed, moves)
    for viewer in (0, 1):
        view = view_message(state, viewer)
        root = ET.fromstring(render_view(view))
        for temple in view.aton.temples:
            g = group(root, "temple", temple=temple.number)
            labels = list(texts(g))
            # Every square by its name in the moves (`place T2.6`), each counter by its seat.
            assert [t for t in labels if t.startswith("T")] == [f"T{temple.number}.{s}" for s in range(12)]
            owners = sorted(str(sq.owner) for sq in temple.squares if sq.HasField("owner"))
            assert sorted(t for t in labels if t in ("0", "1")) == owners
        for seat in view.aton.seats:
            g = group(root, "seat", seat=seat.seat)
            assert f"{seat.score} points" in texts(g) or seat.score == 1
            cartouches = [t for t in texts(group(g, "cartouches", seat=seat.seat)) if len(t) == 1]
            # the positions 1-4 under the cards, then each visible card's value
            shown = [str(c.value) for c in seat.cartouches]
            assert sorted(cartouches) == sorted(["1", "2", "3", "4", *shown])
        hand = [t for t in texts(group(root, "hand", seat=viewer))]
        assert hand == [str(v) for v in view.aton.hand]


@pytest.mark.parametrize(
    ("players", "seed", "moves"), [(2, 2, 40), (2, 8, 200), (3, 6, 90), (4, 4, 62), (4, 1, 150)]
)
def test_osirium_diagram_names_every_cell_amulet_card_and_ritual(players: int, seed: int, moves: int) -> None:
    state = play("osirium", players, seed, moves)
    for viewer in range(players):
        view = view_message(state, viewer)
        v = view.osirium
        svg = render_view(view)
        root = ET.fromstring(svg)
        for cell in v.board:
            g = group(root, "cell", cell=f"{cell.row},{cell.column}")
            assert f"{cell.row},{cell.column}" in texts(g)
            amulets = [a.get("data-name") for a in g.iter(f"{NS}g") if a.get("class") == "amulet"]
            assert amulets == ([cell.amulet.name] if cell.HasField("amulet") else [])
        market = [t for t in texts(group(root, "market")) if "-" in t]
        assert market == [s.amulet.name for s in v.market if s.HasField("amulet")]
        hand = [t for t in texts(group(root, "hand", seat=viewer))]
        assert hand == [a.name for a in v.hand]
        for seat in v.seats:
            panel = " ".join(" ".join(texts(group(root, "seat", seat=seat.seat))).split())  # lines joined
            assert seat.deity.name in panel
            for slot in seat.rituals:
                if slot.HasField("ritual"):
                    assert f"#{slot.ritual.id} {slot.ritual.name}" in panel
            for done in seat.completed:
                assert f"#{done.ritual.id} {done.ritual.name}" in panel
            for amulet in seat.broken:
                assert amulet.name in panel


def test_aton_hand_and_unrevealed_cartouches_of_the_other_seat_are_not_drawn() -> None:
    # Seat 0 has arranged (its cartouches are committed, none revealed), seat 1 still holds four cards.
    state = first("aton", 2, 4, lambda s: s.decision() == "arrange" and s.current_player() == 1)
    own = [view_message(state, p).aton for p in (0, 1)]
    assert own[0].seats[0].committed and len(own[0].seats[0].cartouches) == 4
    assert len(own[1].hand) == 4
    for viewer, other in ((0, 1), (1, 0)):
        root = ET.fromstring(svg_of(state, viewer))
        # The other seat's hand: backs only, no value.
        assert list(texts(group(root, "hand", seat=other))) == []
        assert [t for t in texts(group(root, "hand", seat=viewer))] == [str(v) for v in own[viewer].hand]
    # Seat 0's committed cartouches: their values for seat 0, backs for seat 1.
    cards = [
        c.get("class") for c in group(ET.fromstring(svg_of(state, 1)), "cartouches", seat=0).iter(f"{NS}text")
    ]
    assert "card" not in cards
    mine = group(ET.fromstring(svg_of(state, 0)), "cartouches", seat=0)
    assert [t.text for t in mine.iter(f"{NS}text") if t.get("class") == "card"] == [
        str(c.value) for c in own[0].seats[0].cartouches
    ]


@pytest.mark.parametrize(("players", "seed", "moves"), [(2, 2, 40), (4, 4, 62), (4, 1, 150)])
def test_osirium_face_down_rituals_and_exaltations_of_other_seats_are_not_drawn(
    players: int, seed: int, moves: int
) -> None:
    state = play("osirium", players, seed, moves)
    assert not state.is_terminal()  # (all is revealed at the end)
    svgs = [visible(svg_of(state, p)) for p in range(players)]
    for owner in range(players):
        seat = view_message(state, owner).osirium.seats[owner]  # what only the owner sees
        secret = [f"exaltation: {seat.exaltation.name}", seat.exaltation.text]
        face_down = seat.rituals[2]
        if face_down.HasField("ritual"):
            secret.append(f"#{face_down.ritual.id} {face_down.ritual.name}")
        for viewer in range(players):
            for text in secret:
                assert (text in svgs[viewer]) == (viewer == owner), (owner, viewer, text)
        assert not any(text in visible(svg_of(state, None)) for text in secret)


@pytest.mark.parametrize(
    ("game", "players", "seed", "moves"), [("aton", 2, 7, 120), ("aton", 2, 4, 9), ("osirium", 4, 4, 62)]
)
def test_re_dealing_what_a_seat_cannot_see_leaves_its_diagram_unchanged(
    game: str, players: int, seed: int, moves: int
) -> None:
    """The diagram depends on the seat's view only: every hidden part re-dealt
    (``sample_consistent_state``), the seat's picture is the same bytes, another seat's is not."""
    state = play(game, players, seed, moves)
    rng = random.Random(seed)
    changed = False
    for _ in range(5):
        other = state.sample_consistent_state(0, rng)
        assert svg_of(other, 0) == svg_of(state, 0)
        changed |= any(svg_of(other, p) != svg_of(state, p) for p in range(1, players))
    assert changed


# ---------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------


def test_render_writes_the_seats_diagram(tmp_path: Path) -> None:
    out = tmp_path / "board.svg"
    args = ["render", "--game", "osirium", "--players", "4", "--seed", "4", "--moves", "62", "--seat", "2"]
    assert main([*args, "--out", str(out)]) == 0
    caption = "seed 4, after 62 random moves · seat 2's view"
    assert out.read_text() == render_view(view_message(play("osirium", 4, 4, 62), 2), caption=caption)
    assert main([*args, "--out", str(tmp_path / "again.svg")]) == 0
    assert (tmp_path / "again.svg").read_bytes() == out.read_bytes()


def test_render_prints_to_standard_output_and_draws_the_public_view(capsys: Any) -> None:
    assert main(["render", "--game", "aton", "--seed", "3", "--moves", "63", "--public"]) == 0
    out = capsys.readouterr().out
    caption = "seed 3, after 63 random moves · the public view"
    assert out == render_view(view_message(play("aton", 2, 3, 63), None), caption=caption)


def test_render_reads_a_state_text_and_a_sealed_token(tmp_path: Path, monkeypatch: Any, capsys: Any) -> None:
    state = play("osirium", 3, 6, 90)
    assert main(["render", "--state", state.serialize(), "--seat", "1", "--title", "T"]) == 0
    text_svg = capsys.readouterr().out
    assert text_svg == render_view(
        view_message(state, 1), title="T", caption="from a state text · seat 1's view"
    )
    token = KeyRing(parse_keys(KEY1)).seal(state.serialize())
    monkeypatch.setenv("HEKA_STATE_KEYS", KEY1)
    assert main(["render", "--state", token, "--seat", "1", "--title", "T"]) == 0
    token_svg = capsys.readouterr().out
    assert token_svg == text_svg.replace("from a state text", "from a state token")
    monkeypatch.delenv("HEKA_STATE_KEYS")
    keys = tmp_path / "keys"
    keys.write_text(KEY1)
    assert (
        main(["render", "--state", token, "--seat", "1", "--title", "T", "--state-keys-file", str(keys)]) == 0
    )
    assert capsys.readouterr().out == token_svg


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "chess"], "unknown game 'chess'"),
        (["--game", "aton", "--seat", "2"], "--seat 2 is not a seat: this game has 2 players, seats 0..1"),
        (["--game", "osirium", "--players", "3", "--seat", "-1"], "seats 0..2"),
        (["--game", "osirium", "--players", "5"], "osirium is played by 2 to 4 players, not 5"),
        (["--game", "aton", "--moves", "-1"], "--moves must not be negative"),
        (["--game", "aton", "--option", "x"], "--option needs NAME=VALUE"),
        (["--game", "aton", "--teams"], "teams"),
        (["--game", "aton", "--state", "aton:2:x"], "either --game or --state"),
        (["--state", "aton:2:x", "--moves", "30"], "--moves make a new game (with --game): not with --state"),
        (
            ["--state", "aton:2:x", "--seed", "7", "--players", "4", "--teams", "--option", "foo=1"],
            "--seed, --players, --teams, --option make a new game",
        ),
        ([], "give --game"),
        (["--state", "aton:2:nonsense"], "aton state"),
        (["--state", "not-a-token"], "no key opens a token"),
        (["--game", "aton", "--public", "--seat", "1"], "either --seat (a seat's view) or --public"),
        (
            ["--game", "aton", "--state-keys-file", "keys"],
            "--state-keys-file opens a token: it goes with --state",
        ),
    ],
)
def test_render_refuses_bad_input_with_status_2(
    args: list[str], message: str, capsys: Any, monkeypatch: Any
) -> None:
    monkeypatch.delenv("HEKA_STATE_KEYS", raising=False)
    monkeypatch.delenv("HEKA_STATE_KEYS_FILE", raising=False)
    assert main(["render", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("heka render: ") and message in captured.err


def test_a_view_without_a_game_view_is_refused() -> None:
    with pytest.raises(ValueError, match="no typed game view"):
        render_view(pb.View())


def test_an_out_path_below_a_file_is_refused_naming_it(tmp_path: Path, capsys: Any) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["render", "--game", "aton", "--out", str(afile / "x.svg")]) == 2
    assert f"cannot write --out {afile / 'x.svg'}: {afile} is a file, not a folder" in capsys.readouterr().err


@pytest.mark.parametrize("title", ["bad\x01title", "nul\x00", "\ufffe"])
def test_a_title_an_svg_cannot_hold_is_refused(title: str, capsys: Any) -> None:
    """A control character in --title made a file no XML parser opens (exit 0)."""
    with pytest.raises(SystemExit) as info:
        main(["render", "--game", "aton", "--title", title])
    assert info.value.code == 2
    assert "argument --title: U+" in capsys.readouterr().err


def test_a_title_with_markup_and_tabs_stays_well_formed(capsys: Any) -> None:
    import xml.etree.ElementTree as ET

    assert main(["render", "--game", "aton", "--title", "a < b & c\td"]) == 0
    root = ET.fromstring(capsys.readouterr().out.encode())
    assert root.find("{http://www.w3.org/2000/svg}title").text == "a < b & c\td"  # type: ignore[union-attr]
