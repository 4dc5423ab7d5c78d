"""The typed API covers everything the engines produce, and every enum value is
reachable and documented.

* Every action id of both games converts to an ``Action`` with typed details (the oneof
  member named by its kind), and to a compact one (id and text only).
* Every event kind met in seeded games of both games (and in rule scenarios for the rare
  ones) converts to an ``Event`` whose typed details are the member named by its kind; every
  member of ``AtonEventDetails`` and ``OsiriumEventDetails`` is met.
* Every ``Decision`` and ``OutcomeReason`` value is produced by some state, and every name the
  engines produce has a value.
* Every enum value and every field of the proto has a comment.
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.core import State
from engine.osirium.cards import DEITIES
from engine.registry import get_game
from service import convert
from service.gen.heka.v1 import game_service_pb2 as pb

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "engine" / "aton"))

from aton_helpers import act, arrange_both, make_state  # noqa: E402

PROTO = ROOT / "proto" / "heka" / "v1" / "game_service.proto"


def member_of(kind: str) -> str:
    return convert._MEMBER.get(kind, kind)


# ---------------------------------------------------------------------------------------
# States that reach every decision, reason and event
# ---------------------------------------------------------------------------------------


def played_states() -> Iterator[tuple[State, list[object]]]:
    """Every state of seeded random games of both games, with the events that led to it."""
    for name, players, options, games in (
        ("aton", 2, {}, 60),
        ("osirium", 2, {}, 12),
        ("osirium", 3, {}, 8),
        ("osirium", 4, {"teams": True}, 12),
    ):
        game = get_game(name)
        for seed in range(games):
            state = game.new_initial_state(players, seed=seed, options=options)
            rng = random.Random(seed)
            yield state, []
            while not state.is_terminal():
                events = state.apply_action(rng.choice(state.legal_actions()))
                yield state, list(events)


def aton_scenarios() -> Iterator[tuple[State, list[object]]]:
    """Aton endings random play does not reach (A6.4 yellow and green, A9.3 the round limit,
    A9 a draw), as in the rule tests."""
    board = ".000 .... .... | 0000 .... .... | 000. .... .... | 000. .... ...."
    s = make_state(hands=("1234", "1234"), board=board)
    arrange_both(s, "4213", "1324")
    yield s, act(s, "place T1.0", "place T1.4", "place T1.5")  # yellow
    board = "1111 11.. 1111 | 1111 11.. 1111 | .... 111. 111. | .... .... 111."
    s = make_state(hands=("1234", "1234"), board=board)
    arrange_both(s, "2143", "1234")
    yield s, act(s, "place T1.6", "place T1.7", "place T2.6")  # green
    for scores in ((5, 3), (5, 5)):
        board = "0000 1111 0000 | 1111 0000 1111 | 0000 1111 0000 | 1111 0000 111."
        s = make_state(hands=("1234", "1234"), board=board, round=100, scores=scores, kingdom=(0, 0))
        arrange_both(s, "1234", "1234")
        events: list[object] = []
        while not s.is_terminal():
            events += s.apply_action(s.legal_actions()[0])
        yield s, events  # round limit: a win, then a draw


def all_states() -> Iterator[tuple[State, list[object]]]:
    yield from played_states()
    yield from aton_scenarios()


@pytest.fixture(scope="module")
def reached() -> dict[str, set[str]]:
    seen: dict[str, set[str]] = {"decision": set(), "reason": set(), "aton": set(), "osirium": set()}
    for state, events in all_states():
        name = state.game.descriptor.name
        seen["decision"].add(state.decision())
        outcome = state.outcome()
        if outcome is not None:
            seen["reason"].add(outcome.reason)
        for e in events:
            msg = convert.event_message(name, e)  # type: ignore[arg-type]
            kind = e.kind  # type: ignore[attr-defined]
            assert msg.kind == kind
            if kind in convert.EVENTS_WITHOUT_DETAILS:
                assert msg.WhichOneof("details") is None, kind
            else:
                assert msg.WhichOneof("details") == name, kind
                assert getattr(msg, name).WhichOneof("event") == member_of(kind), kind
            seen[name].add(kind)
    return seen


# ---------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------


def action_sample(name: str) -> list[int]:
    """Every Aton action; for Osirium (395,319 ids in blocks by kind) the first and last id of
    every block of one kind and 4,000 seeded others."""
    game = get_game(name)
    space = game.descriptor.num_distinct_actions
    if space < 5000:
        return list(range(space))
    kinds = [game.action_info(a).kind for a in range(space)]
    edges = {
        a for a in range(space) if a in (0, space - 1) or kinds[a] != kinds[a - 1] or kinds[a] != kinds[a + 1]
    }
    return sorted(edges | set(random.Random(13).sample(range(space), 4000)))


@pytest.mark.parametrize("name", ["aton", "osirium"])
def test_every_action_has_typed_details(name: str) -> None:
    game = get_game(name)
    cache = convert.ActionCache()
    kinds = set()
    for action in action_sample(name):
        info = game.action_info(action)
        msg = cache.get(game, action)
        assert (msg.id, msg.text, msg.kind) == (action, info.text, info.kind)
        if info.kind in convert.ACTIONS_WITHOUT_DETAILS:
            assert msg.WhichOneof("details") is None
        else:
            assert getattr(msg, name).WhichOneof("action") == member_of(info.kind), info.text
        compact = cache.get(game, action, compact=True)
        assert (compact.id, compact.text, compact.kind) == (action, info.text, "")
        assert compact.WhichOneof("details") is None
        kinds.add(info.kind)
    members = {f.name for f in getattr(pb, f"{name.capitalize()}ActionDetails").DESCRIPTOR.fields}
    assert {member_of(k) for k in kinds if k not in convert.ACTIONS_WITHOUT_DETAILS} == members


def test_typed_action_details_carry_the_engine_fields() -> None:
    aton, osirium = get_game("aton"), get_game("osirium")
    cache = convert.ActionCache()
    place = cache.get(aton, aton.string_to_action("place T2.3"))
    assert (place.aton.place.square, place.aton.place.temple, place.aton.place.slot) == (15, 2, 3)
    arrange = cache.get(aton, aton.string_to_action("arrange 4213"))
    assert list(arrange.aton.arrange.values) == [4, 2, 1, 3]
    action = cache.get(osirium, osirium.string_to_action("place red-corner@1,2 r90"))
    p = action.osirium.place
    assert (p.card.name, p.card.colour, p.card.pattern) == (
        "red-corner",
        pb.AMULET_COLOUR_RED,
        pb.AMULET_PATTERN_CORNER,
    )
    assert (p.cell.index, p.cell.row, p.cell.column, p.rotation) == (6, 1, 2, 90)
    assert len(p.arrows) == 2
    isis = next(
        cache.get(osirium, a)
        for a in range(osirium.descriptor.num_distinct_actions)
        if osirium.action_info(a).fields.get("deity") == "isis"
    )
    assert isis.osirium.power.deity == pb.DEITY_ISIS and isis.osirium.power.HasField("from_cell")


def test_every_event_kind_has_typed_details(reached: dict[str, set[str]]) -> None:
    for name in ("aton", "osirium"):
        members = {f.name for f in getattr(pb, f"{name.capitalize()}EventDetails").DESCRIPTOR.fields}
        with_details = {member_of(k) for k in reached[name] if k not in convert.EVENTS_WITHOUT_DETAILS}
        assert with_details == members, (name, members - with_details)


def test_every_decision_and_reason_is_reachable(reached: dict[str, set[str]]) -> None:
    decisions = {convert.decision_value(d) for d in reached["decision"]}
    assert decisions == set(pb.Decision.values()) - {pb.DECISION_UNSPECIFIED}
    reasons = {convert.reason_value(r) for r in reached["reason"]}
    assert reasons == set(pb.OutcomeReason.values()) - {pb.OUTCOME_REASON_UNSPECIFIED}


def test_engine_names_map_to_enum_values() -> None:
    from engine.aton.state import Phase as AtonPhase
    from engine.aton.state import Reason as AtonReason
    from engine.osirium.state import Phase as OsiriumPhase
    from engine.osirium.state import Reason as OsiriumReason

    for phase in (*AtonPhase, *OsiriumPhase):
        assert convert.decision_value(phase)
    for reason in (*AtonReason, *OsiriumReason):
        assert convert.reason_value(reason)
    for d in DEITIES:
        assert convert.enum_value(pb.Deity.DESCRIPTOR, d.name)
        assert convert.enum_value(pb.DeityPower.DESCRIPTOR, d.power)
    with pytest.raises(KeyError):
        convert.decision_value("dance")


def test_every_enum_value_and_field_is_documented() -> None:
    lines = PROTO.read_text().splitlines()
    undocumented = []
    for i, line in enumerate(lines):
        stripped = line.strip()
        declares = re.match(r"^(?:repeated |optional )?[\w.]+ \w+ = \d+;$|^[A-Z0-9_]+ = \d+;$", stripped)
        if declares and not lines[i - 1].strip().startswith("//"):
            undocumented.append(stripped)
        if re.match(r"^(message|enum|service|rpc|oneof) ", stripped) and not lines[i - 1].strip().startswith(
            "//"
        ):
            undocumented.append(stripped)
    assert not undocumented, undocumented


def test_options_are_typed_and_checked() -> None:
    osirium = get_game("osirium").descriptor
    options = pb.GameOptions(osirium=pb.OsiriumOptions(teams=True, deities=[pb.DEITY_SETH, pb.DEITY_ISIS]))
    assert convert.options_from_message(options, osirium) == {"teams": True, "deities": ("seth", "isis")}
    assert convert.options_from_message(pb.GameOptions(), osirium) == {}
    with pytest.raises(convert.OptionsError, match=r"options\.aton are not options of osirium"):
        convert.options_from_message(pb.GameOptions(aton=pb.AtonOptions()), osirium)
    with pytest.raises(convert.OptionsError, match="DEITY_UNSPECIFIED"):
        convert.options_from_message(
            pb.GameOptions(osirium=pb.OsiriumOptions(deities=[pb.DEITY_UNSPECIFIED])), osirium
        )
    # A field this server does not know (a newer client's, or a misspelt JSON key a client
    # library kept as an unknown field) is refused, not ignored.
    raw = pb.OsiriumOptions(teams=True).SerializeToString() + bytes([0x18, 0x01])  # field 3
    newer = pb.GameOptions()
    newer.osirium.MergeFromString(raw)
    with pytest.raises(convert.OptionsError, match="numbers 3"):
        convert.options_from_message(newer, osirium)


def test_every_option_default_has_its_kind_set() -> None:
    for game in ("aton", "osirium"):
        info = convert.game_info(get_game(game))
        for option in info.options:
            assert option.default_value.WhichOneof("kind") is not None, option.name


def test_encoded_events_are_the_events_messages() -> None:
    """``encoded_events`` (bytes cached per distinct event) encodes what ``add_events``
    builds, for every viewer, first time and from its cache; data that does not hash (a
    list where the engine writes a tuple) is encoded too."""
    from engine.core import Event

    field = pb.ApplyActionResponse.DESCRIPTOR.fields_by_name["events"].number
    for name, players in (("aton", 2), ("osirium", 4)):
        game = get_game(name)
        for seed in range(3):
            state = game.new_initial_state(players, seed=seed)
            rng = random.Random(seed)
            while not state.is_terminal():
                events = state.apply_action(rng.choice(state.legal_actions()))
                for viewer in (None, *range(players)):
                    expected = pb.ApplyActionResponse()
                    convert.add_events(expected.events, name, events, viewer)
                    for _ in range(2):
                        got = pb.ApplyActionResponse.FromString(
                            convert.encoded_events(name, events, viewer, field)
                        )
                        assert got == expected
    listed = Event(kind="place", text="seat 0 places", player=0, data={"cell": [0, 1]})
    as_tuple = Event(kind="place", text="seat 0 places", player=0, data={"cell": (0, 1)})
    expected = pb.ApplyActionResponse()
    convert.add_events(expected.events, "osirium", [as_tuple], None)
    got = pb.ApplyActionResponse.FromString(convert.encoded_events("osirium", [listed], None, field))
    assert got == expected
