"""Property tests (hypothesis) of the state codecs and action texts of both games.

For any position reached by play from any seed: the state text round-trips exactly, also
through the previous release's versions where a state can be written in them; a text with
one character changed, cut short or grown, or a number in it made long or written in other
digits, is either refused with ``StateFormatError`` or read as a valid state (never another
exception), whose own text then reads back to itself; every action id's text parses back to
the id; and any action text, of any length or digits, is refused with ``ActionParseError`` or
read as an action.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import MAX_ACTION_TEXT, MAX_STATE_TEXT, ActionParseError, StateFormatError, get_game
from engine.aton.codec import encode as aton_encode
from engine.core import State
from engine.osirium.codec import encode as osirium_encode
from engine.osirium.codec import encode_v1 as osirium_encode_v1
from engine.rng import Rng

CONFIGS = [("aton", 2, {}), ("osirium", 2, {}), ("osirium", 3, {}), ("osirium", 4, {"teams": True})]
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def position(game: str, players: int, options: dict[str, bool], seed: int, plies: int) -> State:
    """The state after ``plies`` random actions (fewer if the game ends) from ``seed``."""
    state = get_game(game).new_initial_state(players, seed, options)
    rng = random.Random(seed)
    for _ in range(plies):
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))
    return state


@st.composite
def states(draw: st.DrawFn) -> State:
    game, players, options = draw(st.sampled_from(CONFIGS))
    return position(game, players, options, draw(st.integers(0, 2**32)), draw(st.integers(0, 600)))


@PROPERTY
@given(states())
def test_state_text_round_trips(state: State) -> None:
    text = state.serialize()
    again = state.game.deserialize_state(text)
    assert again.serialize() == text
    assert again.legal_actions() == state.legal_actions()
    assert again.view(None) == state.view(None)


@PROPERTY
@given(states(), st.integers(0, 2**64 - 1))
def test_previous_versions_round_trip_with_a_splitmix_generator(state: State, rng_state: int) -> None:
    """A state whose generator is SplitMix64 (a sampled world; an earlier release's token)
    can be written in the previous versions, which read back to the same state (their move
    number aside: those versions did not record it, and it reads as 0)."""
    state.rng = Rng(0)  # type: ignore[attr-defined]
    state.rng.setstate(rng_state)  # type: ignore[attr-defined]
    current = state.serialize().replace(f";mv={state.move_number()}", ";mv=0")
    if state.game.name == "aton":
        texts = [aton_encode(state, version=1)]  # type: ignore[arg-type]
    else:
        texts = [osirium_encode(state, version=2), osirium_encode_v1(state)]  # type: ignore[arg-type]
    for text in texts:
        assert state.game.deserialize_state(text).serialize() == current


@PROPERTY
@given(states(), st.data())
def test_a_damaged_text_is_refused_or_read_exactly(state: State, data: st.DataObject) -> None:
    text = state.serialize()
    kind = data.draw(st.sampled_from(["change", "cut", "grow"]))
    i = data.draw(st.integers(0, len(text) - 1))
    if kind == "change":
        damaged = text[:i] + data.draw(st.characters(codec="ascii")) + text[i + 1 :]
    elif kind == "cut":
        damaged = text[:i]
    else:
        damaged = text[:i] + data.draw(st.text(min_size=1, max_size=3)) + text[i:]
    try:
        read = state.game.deserialize_state(damaged)
    except StateFormatError:
        return
    read.validate()  # e.g. a changed digit of a count that still adds up
    text = read.serialize()
    assert state.game.deserialize_state(text).serialize() == text


@pytest.mark.parametrize("game", ["aton", "osirium"])
@PROPERTY
@given(data=st.data())
def test_every_action_text_parses_back_to_its_id(game: str, data: st.DataObject) -> None:
    g = get_game(game)
    action = data.draw(st.integers(0, g.descriptor.num_distinct_actions - 1))
    text = g.action_to_string(action)
    assert g.string_to_action(text) == action
    assert g.string_to_action(f"  {text.upper()}  ") == action


# --- numbers and lengths: the parsers of caller text raise only their own errors ----------

#: What a number in a text may be replaced by: one more digit than any field has, more than
#: ``int()`` converts (4,300), and digits ``int()`` reads that are not ASCII (Arabic-Indic
#: three, fullwidth three, superscript two: ``str.isdigit`` is true of each).
NUMBERS = ["9" * 21, "9" * 5000, "-" + "9" * 4400, "\u0663", "\uff13", "\u00b2"]


def with_numbers(text: str) -> list[str]:
    """``text`` with each run of digits in turn replaced by each of :data:`NUMBERS`."""
    runs = list(re.finditer(r"[0-9]+", text))
    return [text[: m.start()] + n + text[m.end() :] for m in runs for n in NUMBERS]


@pytest.mark.parametrize(("game", "players", "options"), CONFIGS, ids=str)
def test_a_state_text_with_any_number_is_refused_or_read_exactly(
    game: str, players: int, options: dict[str, bool]
) -> None:
    """Every number of a state text, made too long for its field or for ``int()``, or written
    in other digits, is refused with ``StateFormatError`` (a ``ValueError`` of ``int()`` once
    escaped), and a text longer than any state is refused before it is read."""
    g = get_game(game)
    text = position(game, players, options, 5, 40).serialize()
    variants = with_numbers(text)
    assert len(variants) > 30 * len(NUMBERS)
    for damaged in variants:
        try:
            read = g.deserialize_state(damaged)
        except StateFormatError:
            continue
        read.validate()
        assert g.deserialize_state(read.serialize()).serialize() == read.serialize()
    for long in (text + "0" * MAX_STATE_TEXT, " " * (MAX_STATE_TEXT + 1)):
        with pytest.raises(StateFormatError, match=f"at most {MAX_STATE_TEXT} characters"):
            g.deserialize_state(long)


@pytest.mark.parametrize("game", ["aton", "osirium"])
def test_an_action_text_with_any_number_or_length_is_refused_or_read_exactly(game: str) -> None:
    """Every number of an action's text, made long or written in other digits, is refused
    with ``ActionParseError`` (a long rotation once reached ``int()``'s limit: a ValueError,
    INTERNAL in the service) or read as an action whose text reads back to it. A text over
    ``MAX_ACTION_TEXT`` characters is refused whatever it holds, before the parse's memo, so
    callers cannot fill it with long texts."""
    g = get_game(game)
    n = g.descriptor.num_distinct_actions
    # Every kind of action (Osirium's casts, most of its 395,319 ids, come last): the first
    # ids, and a seeded sample of the rest.
    ids = [*range(min(n, 2200)), *random.Random(7).sample(range(2200, n), min(max(n - 2200, 0), 300))]
    for action in ids:
        text = g.action_to_string(action)
        for damaged in with_numbers(text):
            try:
                read = g.string_to_action(damaged)
            except ActionParseError:
                continue
            assert g.string_to_action(g.action_to_string(read)) == read
        padded = text + " " * (MAX_ACTION_TEXT - len(text))
        assert g.string_to_action(padded) == action  # room for the whitespace parsers tolerate
        with pytest.raises(ActionParseError, match=f"at most {MAX_ACTION_TEXT} characters"):
            g.string_to_action(padded + " ")


@pytest.mark.parametrize("game", ["aton", "osirium"])
@PROPERTY
@given(text=st.text(alphabet=st.sampled_from(" \t0123456789٣３,.@>+-:/rstpalcemdoxybihnkug"), max_size=90))
def test_any_action_text_is_refused_or_read_exactly(game: str, text: str) -> None:
    g = get_game(game)
    try:
        read = g.string_to_action(text)
    except ActionParseError:
        return
    assert g.string_to_action(g.action_to_string(read)) == read
