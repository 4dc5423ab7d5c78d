"""Osirium action texts, serialization, views (O6) and determinisation."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from osirium_helpers import act, build

from engine.core import ActionParseError, IllegalActionError, StateFormatError
from engine.osirium import GAME, OsiriumState
from engine.osirium import actions as A
from engine.osirium.board import TYPE_BY_NAME
from engine.osirium.cards import CHAOS, DEITIES, ORDER, RITUALS, Principle
from engine.osirium.codec import KEYS, encode, encode_v1
from engine.osirium.state import Phase
from engine.osirium.view import HIDDEN_SIMPLE, render_board
from engine.rng import ChanceRng, Rng

DEITIES_BY_NAME = {d.name: d.id for d in DEITIES}

# ---------------------------------------------------------------------------------------
# Action ids and texts
# ---------------------------------------------------------------------------------------


def test_action_layout_blocks() -> None:
    assert GAME.descriptor.num_distinct_actions == A.NUM_ACTIONS
    assert (A.PASS, A.END, A.REFILL, A.DRAW, A.DRAW_PILE, A.BREAK) == (0, 1, 2, 4, 8, 9)
    assert (A.CLEAR, A.ANUBIS, A.BASTET, A.SETH, A.ISIS, A.PLACE, A.CAST) == (
        25,
        41,
        57,
        61,
        125,
        1149,
        2109,
    )
    assert A.NUM_ACTIONS == 2109 + 6 * 65535


def test_every_non_cast_id_round_trips_and_casts_sampled() -> None:
    for a in range(A.CAST):
        assert GAME.string_to_action(GAME.action_to_string(a)) == a
    rng = random.Random(1)
    for a in [A.CAST, A.NUM_ACTIONS - 1, *rng.sample(range(A.CAST, A.NUM_ACTIONS), 3000)]:
        info = GAME.action_info(a)
        assert info.kind == "cast"
        assert GAME.string_to_action(info.text) == a


def test_action_texts_examples_and_tolerance() -> None:
    assert GAME.action_to_string(GAME.string_to_action("place red-tee@1,2 r90")) == "place red-tee@1,2 r90"
    assert GAME.string_to_action("  PLACE Red-Tee @ 1 , 2  R90 ") == GAME.string_to_action(
        "place red-tee@1,2 r90"
    )
    # rotations giving the same arrows are one placement (the canonical, lowest rotation)
    assert GAME.string_to_action("place blue-straight@0,0 r180") == GAME.string_to_action(
        "place blue-straight@0,0 r0"
    )
    assert GAME.string_to_action("place blue-cross@0,0 r270") == GAME.string_to_action(
        "place blue-cross@0,0 r0"
    )
    cast = GAME.string_to_action("cast s0 order 0,2+0,1+1,2")
    assert GAME.action_to_string(cast) == "cast s0 order 0,1+0,2+1,2"
    info = GAME.action_info(cast)
    assert info.fields["principle"] == "order" and info.fields["cells"] == ((0, 1), (0, 2), (1, 2))
    for text, kind in [
        ("pass", "pass"),
        ("end", "end"),
        ("draw market2", "draw"),
        ("draw pile", "draw"),
        ("refill advanced", "refill"),
        ("break 1,2", "break"),
        ("clear 3,3", "clear"),
        ("isis 0,1>2,3 r90", "power"),
        ("anubis 2,2", "power"),
        ("bastet market1", "power"),
        ("seth 1,1 r180", "power"),
    ]:
        a = GAME.string_to_action(text)
        assert GAME.action_to_string(a) == text
        assert GAME.action_info(a).kind == kind
    for bad in (
        "",
        "place red-tea@1,2 r0",
        "place red-tee@4,0 r0",
        "place red-tee@1,2 r45",
        "cast s3 order 0,0",
        "draw market4",
        "bastet pile",
        "isis 0,0 r0",
        "break",
        "fly",
    ):
        with pytest.raises(ActionParseError):
            GAME.string_to_action(bad)
    for bad_id in (-1, A.NUM_ACTIONS, True):
        with pytest.raises(ActionParseError):
            GAME.action_info(bad_id)


def test_illegal_action_refused_without_change() -> None:
    s = GAME.new_initial_state(2, 4)
    before = s.serialize()
    with pytest.raises(IllegalActionError):
        s.apply_action(A.END)
    with pytest.raises(IllegalActionError):
        s.apply_action(A.BREAK)
    with pytest.raises(IllegalActionError):
        s.apply_action(GAME.string_to_action("place red-straight@0,0 r180") + 1)
    assert s.serialize() == before


# ---------------------------------------------------------------------------------------
# Serialization
# ---------------------------------------------------------------------------------------


def _play(
    seed: int, n: int, steps: int, opts: dict[str, object] | None = None, *, legacy: bool = False
) -> OsiriumState:
    """A game after ``steps`` random actions; ``legacy``: on SplitMix64, as earlier releases."""
    s = GAME.new_initial_state(n, seed, opts, rng=Rng(seed) if legacy else None)
    rng = random.Random(seed)
    for _ in range(steps):
        if s.is_terminal():
            break
        s.apply(rng.choice(s.legal_actions()))
    return s


def test_serialization_round_trip_keeps_randomness_to_come() -> None:
    for seed in range(6):
        s = _play(seed, 2 + seed % 3, 40 * seed)
        data = s.serialize()
        assert data.startswith("osirium:3:") and ";rng=k" in data
        r = GAME.deserialize_state(data)
        assert r.serialize() == data and r.legal_actions() == s.legal_actions()
        assert r.view(0) == s.view(0) and r.to_text() == s.to_text()
        rng1, rng2 = random.Random(9), random.Random(9)
        while not s.is_terminal():
            s.apply(rng1.choice(s.legal_actions()))
            r.apply(rng2.choice(r.legal_actions()))
        assert r.serialize() == s.serialize()
        assert r.outcome() == s.outcome()


def test_version_2_texts_of_the_previous_release_still_decode_and_can_be_written() -> None:
    # osirium:2 is osirium:3 with a SplitMix64 generator only: a token of the previous
    # release decodes to the same state; such a state can be written as osirium:2 for a
    # rolling upgrade; the keyed chance cannot.
    for seed in range(6):
        s = _play(seed, 2 + seed % 3, 25 * seed, legacy=True)
        old = encode(s, version=2)
        current = s.serialize()
        assert old.startswith("osirium:2:") and old[10:] + f";mv={s.move_number()}" == current[10:]
        r = GAME.deserialize_state(old)
        assert r.move_number() == 0  # version 2 did not record it
        assert r.serialize() == current.replace(f";mv={s.move_number()}", ";mv=0")
        assert r.legal_actions() == s.legal_actions()
    keyed = _play(1, 2, 10)
    with pytest.raises(ValueError, match="SplitMix64"):
        encode(keyed, version=2)
    with pytest.raises(ValueError, match="SplitMix64"):
        encode_v1(keyed)
    with pytest.raises(StateFormatError, match="rng: expected a generator state"):
        text = keyed.serialize().replace("osirium:3:", "osirium:2:", 1)
        GAME.deserialize_state(text[: text.rindex(";mv=")])


def test_version_1_texts_of_an_earlier_release_still_decode() -> None:
    # A token issued before osirium:2 must decode during a rolling upgrade, to the same state.
    for seed in range(8):
        s = _play(seed, 2 + seed % 3, 25 * seed, {"teams": True} if seed % 3 == 2 else None, legacy=True)
        old = encode_v1(s)
        assert old.startswith("osirium:1:")
        r = GAME.deserialize_state(old)
        assert r.serialize() == s.serialize().replace(f";mv={s.move_number()}", ";mv=0")
        assert r.legal_actions() == s.legal_actions() and r.outcome() == s.outcome()


def test_version_3_is_compact() -> None:
    s = _play(4, 4, 60, legacy=True)
    assert len(s.serialize()) < len(encode_v1(s)) / 2


def _corrupt(data: str, **changes: object) -> str:
    d = json.loads(data[len("osirium:1:") :])
    d.update(changes)
    return "osirium:1:" + json.dumps(d)


def test_corrupt_version_1_serializations_raise_state_format_error() -> None:
    s = _play(3, 3, 120, legacy=True)
    data = encode_v1(s)
    d = json.loads(data[len("osirium:1:") :])
    bad = [
        "",
        "osirium:3:{}",
        "aton:1:{}",
        "osirium:1:",
        "osirium:1:[1,2]",
        "osirium:1:{not json",
        data[:-3],
        _corrupt(data, pile=d["pile"][1:]),  # an amulet missing
        _corrupt(data, pile=[*d["pile"], 0]),  # one too many
        _corrupt(data, pile=[*d["pile"][:-1], 99]),  # unknown type
        _corrupt(data, simple=[*d["simple"], d["simple"][0]] if d["simple"] else [0]),  # ritual twice
        _corrupt(data, n=7),
        _corrupt(data, n="2"),
        _corrupt(data, round=0),
        _corrupt(data, phase=9),
        _corrupt(data, cur=5),
        _corrupt(data, rng=-1),
        _corrupt(data, rng=True),
        _corrupt(data, exalt=[0] * 3),
        _corrupt(data, deities=[0, 0, 1]),
        _corrupt(data, ankhs=[d["ankhs"][0] + 1, *d["ankhs"][1:]]),
        _corrupt(data, board=[3, *d["board"][1:]]),  # a non-canonical or extra amulet
        _corrupt(data, teams=True),
        _corrupt(data, extra=1),
        _corrupt(data, cast=[0, 1, 1, -1]),
    ]
    for b in bad:
        with pytest.raises(StateFormatError):
            GAME.deserialize_state(b)
    current = s.serialize().replace(f";mv={s.move_number()}", ";mv=0")  # version 1 has no move number
    assert GAME.deserialize_state(data).serialize() == current


def _fields(data: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in data[len("osirium:3:") :].split(";"))


def _v3(fields: dict[str, str], **changes: str) -> str:
    return "osirium:3:" + ";".join(f"{k}={v}" for k, v in {**fields, **changes}.items())


def test_corrupt_version_3_serializations_raise_state_format_error_naming_the_field() -> None:
    s = _play(3, 3, 120)
    data = s.serialize()
    f = _fields(data)
    assert list(f) == list(KEYS)
    assert f["b"][:2] != ".." and f["mk"] != "...."  # the cases below rely on these
    drop_rng = {k: v for k, v in f.items() if k != "rng"}
    cases = [
        ("osirium:3:", "not key=value"),
        (data[:-3] + ";rng=1", "twice"),
        (data + ";zz=1", "unknown field"),
        (_v3(drop_rng), "missing field(s) rng"),
        (_v3(f, pl=f["pl"][1:]), "amulets not accounted for"),  # an amulet missing
        (_v3(f, pl=f["pl"] + "0"), "amulets not accounted for"),  # one too many
        (_v3(f, pl=f["pl"][:-1] + "~"), "pl: '~' is not an amulet type"),
        (_v3(f, si=f["si"] + (f["si"][:1] or "0")), "rituals not accounted for"),  # twice
        (_v3(f, n="7"), "n: 7 is out of range"),
        (_v3(f, n="x"), "n: expected an integer"),
        (_v3(f, n="٣"), "n: expected an integer"),  # a non-ASCII digit
        (_v3(f, h=f["h"] + ",0"), "h: expected 3"),
        (_v3(f, r="0"), "round 0"),
        (_v3(f, ph="9"), "phase 9"),
        (_v3(f, cur="5"), "cur: 5 is out of range"),
        (_v3(f, rng="-1"), "rng: expected a generator state"),
        (_v3(f, rng="1" * 17), "rng: expected a generator state"),
        (_v3(f, rng="k" + "0" * 63 + ".1"), "rng: expected a generator state"),
        (_v3(f, ex="000"), "exaltations must be distinct"),
        (_v3(f, dy="001"), "deities"),
        (_v3(f, dy="0a1"), "dy: 'a' is not a deity"),
        (_v3(f, ak=",".join(["99", *f["ak"].split(",")[1:]])), "ritual Ankhs"),
        (_v3(f, b=".." + f["b"][2:]), "amulets not accounted for"),  # an amulet lost from a1
        (_v3(f, b=f["b"][:-2]), "b: expected 32 characters"),
        (_v3(f, b="z0" + f["b"][2:]), "b: 'z0' is not an empty cell"),
        (_v3(f, tm="1"), "teams need 4 players"),
        (_v3(f, tm="2"), "tm: '2' is not a flag"),
        (_v3(f, sl="...,...,.."), "sl: expected 3 slots per seat"),
        (_v3(f, dn="0,,"), "dn: completed rituals are pairs"),
        (_v3(f, mk="...."), "amulets not accounted for"),
        (_v3(f, cs="0,1,1,-1"), "cast fields set outside a cast"),
        (_v3(f, fl="1"), "fl: expected 2 flags"),
    ]
    for text, message in cases:
        with pytest.raises(StateFormatError) as err:
            GAME.deserialize_state(text)
        assert message in str(err.value), (text, str(err.value))
    assert GAME.deserialize_state(data).serialize() == data


# ---------------------------------------------------------------------------------------
# Views (O6)
# ---------------------------------------------------------------------------------------


def test_O6_views_show_own_private_cards_only() -> None:
    s = GAME.new_initial_state(3, 11)
    pub = s.view(None)
    assert pub.hand is None and pub.exaltations == (-1, -1, -1)
    assert all(row[2] == HIDDEN_SIMPLE for row in pub.rituals)
    assert pub.hand_sizes == (4, 4, 4) and pub.draw_pile_size == 44
    v1 = s.view(1)
    assert v1.exaltations[1] == s.exaltations[1] and v1.exaltations[0] == -1
    assert v1.rituals[1][2] == s.ritual_slots[1][2] and v1.rituals[0][2] == HIDDEN_SIMPLE
    assert v1.rituals[0][:2] == tuple(s.ritual_slots[0][:2])  # face-up rituals are public
    assert v1.hand is not None and len(v1.hand) == 4
    json.dumps(v1.to_dict())
    text = v1.to_text()
    assert "your hand" in text and "s2: (face down, simple)" in text


def test_O6_view_holds_ids_and_renders_names_on_demand() -> None:
    s = build(
        board={"0,0": "red-tee r90", "3,3": "blue-single r180"},
        hands=[["yellow-cross", "blue-tee", "red-single"], ["green-corner"]],
        market=["red-corner", None, "blue-cross", "yellow-single"],
        discard=["yellow-tee", "blue-straight", "green-single"],
        broken=[["red-cross", "blue-corner"], []],
        completed=[[(3, CHAOS), (0, ORDER)], []],
        deities=["seth", "isis"],
    )
    v = s.view(0)
    assert v.decision is Phase.MAIN and v.deities == (DEITIES_BY_NAME["Seth"], DEITIES_BY_NAME["Isis"])
    assert v.cell_types[0] == TYPE_BY_NAME["red-tee"] and v.cell_rotations[0] == 1
    assert v.cell_types[15] == TYPE_BY_NAME["blue-single"] and v.cell_rotations[15] == 2
    assert v.cell_types.count(-1) == 14 and set(v.cell_rotations[1:15]) == {0}
    assert v.market == (
        TYPE_BY_NAME["red-corner"],
        -1,
        TYPE_BY_NAME["blue-cross"],
        TYPE_BY_NAME["yellow-single"],
    )
    # Hands and piles sorted by type; the texts by name.
    assert v.hand == tuple(sorted(TYPE_BY_NAME[n] for n in ("yellow-cross", "blue-tee", "red-single")))
    assert v.discard == tuple(
        sorted(TYPE_BY_NAME[n] for n in ("yellow-tee", "blue-straight", "green-single"))
    )
    assert v.broken[0] == tuple(sorted((TYPE_BY_NAME["red-cross"], TYPE_BY_NAME["blue-corner"])))
    assert v.completed[0] == ((3, Principle.CHAOS), (0, Principle.ORDER))
    assert all(type(p) is Principle for _, p in v.completed[0])
    d = v.to_dict()
    assert d["decision"] == "main" and d["deities"] == ("Seth", "Isis")
    assert d["board"][0] == "red-tee r90" and d["board"][15] == "blue-single r180" and d["board"][1] == ""
    assert d["market"] == ("red-corner", "", "blue-cross", "yellow-single")
    assert d["hand"] == ("blue-tee", "red-single", "yellow-cross")
    assert d["discard"] == ("blue-straight", "green-single", "yellow-tee")
    assert d["broken"] == (("blue-corner", "red-cross"), ())
    assert d["completed"] == (((3, "chaos"), (0, "order")), ())
    assert "cell_types" not in d and json.loads(json.dumps(d))["board"][0] == "red-tee r90"
    text = v.to_text()
    # Beside the board: the market by its action names, the hand with each card's arrows.
    lines = [ln[30:] for ln in text.splitlines()[3:20]]
    assert lines[:5] == [
        "market:",
        "  market0 red-corner",
        "  market1 (empty)",
        "  market2 blue-cross",
        "  market3 yellow-single",
    ]
    assert "your hand (3), arrows at r0:" in lines
    assert "  blue-tee        ^ > v" in lines and "  yellow-cross    ^ > v <" in lines
    assert "seat 0: Seth" in text and "broken: blue-corner, red-cross" in text
    assert f"completed: {RITUALS[3].name} (chaos), {RITUALS[0].name} (order)" in text


def test_O6_nothing_hidden_leaks_into_a_view() -> None:
    # Changing everything hidden from seat 0 does not change seat 0's view.
    s = _play(5, 3, 150)
    base = s.view(0)
    t = s.clone()
    pool = list(reversed(s.draw_pile + s.hands[1] + s.hands[2]))
    k1, k2 = len(s.hands[1]), len(s.hands[2])
    t.hands[1], t.hands[2], t.draw_pile = pool[:k1], pool[k1 : k1 + k2], pool[k1 + k2 :]
    assert (t.hands[1], t.hands[2]) != (s.hands[1], s.hands[2])
    t.simple_rituals.reverse()
    t.advanced_rituals.reverse()
    t.exaltations[1], t.exaltations[2] = s.exaltations[2], s.exaltations[1]
    t.rng = ChanceRng(bytes(32))
    assert t.view(0) == base
    assert t.view(0).to_text() == base.to_text()
    # ... and the public view does not contain any hand, exaltation or face-down ritual.
    d = json.dumps(s.view(None).to_dict())
    assert '"hand": null' in d


def test_O6_board_drawing_shows_colours_and_arrows() -> None:
    s = build(board={"0,0": "red-tee r90", "3,3": "blue-single r180"})
    text = s.view(None).to_text()
    lines = text.splitlines()
    grid = next(ln for ln in lines if ln.startswith(" 0 |"))
    assert grid.startswith(" 0 |< R >|")
    assert "  v  " in text and "  B  " in text


# ---------------------------------------------------------------------------------------
# Determinisation
# ---------------------------------------------------------------------------------------


def test_sample_keeps_the_view_and_redeals_the_hidden() -> None:
    for seed in range(8):
        s = _play(seed, 2 + seed % 3, 30 + 25 * seed, {"teams": True} if seed % 3 == 2 else None)
        for p in range(s.player_count):
            rng = random.Random(seed * 10 + p)
            t = s.sample_consistent_state(p, rng)
            t.validate()
            assert t.view(p) == s.view(p)
            if not s.is_terminal() and p == s.current_player():
                assert t.legal_actions() == s.legal_actions()
            # public parts are identical
            assert t.cell_type == s.cell_type and t.market == s.market and t.discard == s.discard


def test_determinisation_is_uniform_over_hidden_cards() -> None:
    s = GAME.new_initial_state(2, 21)
    unknown = Counter(s.draw_pile + s.hands[1])  # what seat 0 cannot see
    total = sum(unknown.values())
    rng = random.Random(5)
    trials = 3000
    seen: Counter[int] = Counter()
    exalts: Counter[int] = Counter()
    faces: Counter[int] = Counter()
    for _ in range(trials):
        t = s.sample_consistent_state(0, rng)
        assert Counter(t.draw_pile + t.hands[1]) == unknown
        assert t.hands[0] == s.hands[0] and t.exaltations[0] == s.exaltations[0]
        assert t.ritual_slots[0] == s.ritual_slots[0]
        seen.update(t.hands[1])
        exalts[t.exaltations[1]] += 1
        faces[t.ritual_slots[1][2]] += 1
    # each unknown card lands in seat 1's hand with probability 4/total (per copy)
    for ty, k in unknown.items():
        expect = trials * 4 * k / total
        assert abs(seen[ty] - expect) < 5 * expect**0.5 + 5, (ty, seen[ty], expect)
    # seat 1's exaltation is uniform over the 9 others
    assert set(exalts) == set(range(10)) - {s.exaltations[0]}
    assert max(exalts.values()) - min(exalts.values()) < 0.35 * trials / 9
    # seat 1's face-down ritual is uniform over the simple rituals seat 0 cannot see
    pool = set(s.simple_rituals) | {s.ritual_slots[1][2]}
    assert set(faces) == pool and all(not RITUALS[r].advanced for r in faces)
    assert max(faces.values()) - min(faces.values()) < 0.4 * trials / len(pool)


def test_terminal_sample_keeps_revealed_exaltations() -> None:
    s = _play(2, 2, 10_000)
    assert s.is_terminal()
    t = s.sample_consistent_state(0, random.Random(1))
    assert t.exaltations == s.exaltations and t.view(0) == s.view(0) and t.outcome() == s.outcome()


def test_events_hide_private_draws_from_others() -> None:
    s = GAME.new_initial_state(2, 8)
    ev = act(s, "pass")
    private = [e for e in ev if e.visible_to is not None]
    assert private and all(e.visible_to == (0,) and not e.is_visible_to(1) for e in private)
    assert any(e.kind == "pass" and e.visible_to is None for e in ev)


def test_determinisation_depends_on_the_view_only() -> None:
    # Two states with the same view for seat p give the same sample for the same rng seed.
    for seed in range(5):
        s = _play(seed, 3, 60 + 40 * seed)
        p = s.current_player() if not s.is_terminal() else 0
        other = s.sample_consistent_state(p, random.Random(99))
        assert other.serialize() != s.serialize()
        a = s.sample_consistent_state(p, random.Random(5)).serialize()
        b = other.sample_consistent_state(p, random.Random(5)).serialize()
        assert a == b


def test_O4_1_board_drawing_marks_links() -> None:
    """A link (two neighbours pointing at each other) is drawn across their shared side: ``-``
    in a row, ``|`` in a column; an arrow at a neighbour that does not point back is not."""
    s = build(
        board={
            "1,1": "red-cross r0",  # arrows N E S W
            "1,2": "blue-single r270",  # W: points back at 1,1 (a link)
            "2,1": "yellow-single r0",  # N: points back at 1,1 (a link)
            "0,1": "green-single r0",  # N: points away from 1,1 (no link)
            "1,0": "green-straight r0",  # N S: not at 1,1 (no link)
        }
    )
    lines = render_board(list(zip(s.cell_type, s.cell_rotation, strict=True))).splitlines()
    rows = {int(ln[1]): ln for ln in lines if ln[:2].strip().isdigit()}
    assert rows[1] == " 1 |  G  |< R >-< B  |  .  |"
    rules = [ln for ln in lines if ln.startswith("   +")]
    assert rules[1] == "   +-----+-----+-----+-----+"  # rows 0 and 1: 0,1 points away
    assert rules[2] == "   +-----+--|--+-----+-----+"  # rows 1 and 2: 1,1 and 2,1 linked


def test_O6_view_text_fits_in_80_columns() -> None:
    """Random games to their end (long rituals lists, broken piles, the result line), every
    seat's view and the public one every 20 actions and at the end."""
    for n, seed in ((2, 1), (3, 5), (4, 5)):
        rng = random.Random(seed)
        s = GAME.new_initial_state(n, seed, {"teams": n == 4})
        steps = 0
        while True:
            if steps % 20 == 0 or s.is_terminal():
                for viewer in (None, *range(n)):
                    text = s.view(viewer).to_text()
                    assert max(map(len, text.splitlines())) <= 80, text
            if s.is_terminal():
                break
            s.apply(rng.choice(s.legal_actions()))
            steps += 1
