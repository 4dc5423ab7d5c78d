"""Scenario tests for the Osirium rules, named after the rule ids of shared/rules/osirium.md."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest
from osirium_helpers import BREAK, DRAW, MAIN, OVER, PLACE, REFILL, act, build, cell, legal_texts

from engine.core import GameOptionsError, IllegalActionError
from engine.osirium import GAME, OsiriumState
from engine.osirium import actions as A
from engine.osirium.board import (
    CANON_ROTS,
    TYPE_BY_NAME,
    TYPE_COUNT,
    all_links,
    connected_sets,
    rotate_arrows,
    set_signature,
)
from engine.osirium.cards import AMULETS, DEITIES, EXALTATIONS, RITUALS, E, N, S, W
from engine.osirium.view import HIDDEN_ADVANCED, HIDDEN_SIMPLE

# Handy boards. "blue-straight r90" points E and W: a row of them is a linked chain.
ROW3 = {"0,0": "blue-straight r90", "0,1": "blue-straight r90", "0,2": "blue-straight r90"}


def deity_names(s: OsiriumState) -> tuple[str, ...]:
    """The deities of the public view (deity ids), by name."""
    return tuple(DEITIES[d].name for d in s.view(None).deities)


def mask(*cells: str) -> int:
    return sum(1 << cell(c) for c in cells)


# ---------------------------------------------------------------------------------------
# O1 components
# ---------------------------------------------------------------------------------------


def test_O1_3_sixty_amulets_fifteen_per_colour_with_printed_patterns() -> None:
    assert len(AMULETS) == 60
    assert Counter(a.colour for a in AMULETS) == {0: 15, 1: 15, 2: 15, 3: 15}
    per_pattern = Counter((a.pattern, a.arrows) for a in AMULETS if a.colour == 0)
    assert per_pattern == {(0, N): 2, (1, N | S): 3, (2, N | E): 4, (3, N | E | S): 4, (4, 15): 2}
    assert len({a.id for a in AMULETS}) == 60 and len({a.name for a in AMULETS}) == 60
    assert sum(TYPE_COUNT) == 60


def test_O1_3_rotation_turns_arrows_clockwise() -> None:
    assert rotate_arrows(N, 1) == E and rotate_arrows(N, 2) == S and rotate_arrows(N, 3) == W
    assert rotate_arrows(N | E, 1) == E | S
    assert rotate_arrows(N | E | S, 3) == W | N | E
    # Rotations giving the same arrows count once (O10).
    assert CANON_ROTS[TYPE_BY_NAME["red-straight"]] == (0, 1)
    assert CANON_ROTS[TYPE_BY_NAME["red-cross"]] == (0,)
    assert CANON_ROTS[TYPE_BY_NAME["red-corner"]] == (0, 1, 2, 3)


def test_O1_4_forty_rituals_sixteen_simple_with_their_sides() -> None:
    assert len(RITUALS) == 40
    assert sum(not r.advanced for r in RITUALS) == 16
    assert all(3 <= r.size <= 5 for r in RITUALS)
    tetrad = next(r for r in RITUALS if r.requirement == (4, 0, 0, 0))
    assert (tetrad.order_ankhs, tetrad.order_breaks, tetrad.chaos_ankhs, tetrad.chaos_breaks) == (6, 2, 4, 3)
    great = next(r for r in RITUALS if r.requirement == (3, 2, 0, 0))
    assert (great.order_ankhs, great.order_breaks, great.chaos_ankhs, great.chaos_breaks) == (8, 2, 5, 4)
    assert sum(r.requirement == (1, 1, 1, 1) for r in RITUALS) == 2


def test_O1_5_O1_6_ten_exaltations_four_deities() -> None:
    assert len(EXALTATIONS) == 10 and len({x.name for x in EXALTATIONS}) == 10
    assert [d.name for d in DEITIES] == ["Isis", "Anubis", "Bastet", "Seth"]


# ---------------------------------------------------------------------------------------
# O2 setup, O9 variants (options)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4])
def test_O2_setup_deals_hands_market_rituals_exaltations(n: int) -> None:
    s = GAME.new_initial_state(n, 5)
    assert [len(h) for h in s.hands] == [4] * n
    assert all(t >= 0 for t in s.market)
    assert len(s.draw_pile) == 60 - 4 * n - 4
    assert all(len(row) == 3 and all(not RITUALS[r].advanced for r in row) for row in s.ritual_slots)
    assert len(s.simple_rituals) == 16 - 3 * n and len(s.advanced_rituals) == 24
    assert len(set(s.exaltations)) == n
    assert s.scores() == (0,) * n and s.current_player() == 0 and s.round_number() == 1
    # O2.1 default deities
    assert deity_names(s) == ("Isis", "Anubis", "Bastet", "Seth")[:n]


def test_O9_2_deities_option_each_at_most_once() -> None:
    s = GAME.new_initial_state(3, 1, {"deities": ["seth", "ISIS", "Bastet"]})
    assert deity_names(s) == ("Seth", "Isis", "Bastet")
    assert deity_names(GAME.new_initial_state(2, 1, {"deities": "anubis, seth"})) == ("Anubis", "Seth")
    for bad in (["isis", "isis"], ["isis"], ["isis", "ra"], 3):
        with pytest.raises(GameOptionsError):
            GAME.new_initial_state(2, 1, {"deities": bad})


def test_O9_3_teams_only_with_four_players() -> None:
    assert GAME.new_initial_state(4, 1, {"teams": True}).teams() == (0, 1, 0, 1)
    assert GAME.new_initial_state(4, 1).teams() == (0, 1, 2, 3)
    for n in (2, 3):
        with pytest.raises(GameOptionsError):
            GAME.new_initial_state(n, 1, {"teams": True})
    with pytest.raises(GameOptionsError):
        GAME.new_initial_state(4, 1, {"teams": "yes"})


# ---------------------------------------------------------------------------------------
# O3 turn structure
# ---------------------------------------------------------------------------------------


def test_O3_1_place_once_per_turn_and_must_place_with_a_card() -> None:
    s = build(hands=[["red-tee", "red-tee", "blue-cross"], []])
    texts = legal_texts(s)
    assert "end" not in texts  # O3.4: not before placing while holding a card
    places = [t for t in texts if t.startswith("place")]
    # identical cards interchangeable: red-tee 4 arrow sets + blue-cross 1, on 16 cells
    assert len(places) == (4 + 1) * 16
    assert "place red-tee@1,2 r90" in texts
    act(s, "place red-tee@1,2 r90", "draw pile")
    assert s.decision() == "main"
    assert not any(t.startswith("place") for t in legal_texts(s))
    assert "end" in legal_texts(s)


def test_O3_1a_full_board_clear_then_place_on_freed_cell_only() -> None:
    names = ["green-single"] * 2 + ["green-straight"] * 3 + ["green-corner"] * 4 + ["green-tee"] * 4
    names += ["green-cross"] * 2 + ["red-cross"]
    full = {f"{k // 4},{k % 4}": names[k] for k in range(16)}
    s = build(hands=[["blue-tee"], []], board=full)
    texts = legal_texts(s)
    assert [t for t in texts if t.startswith("clear")] == [
        f"clear {r},{c}" for r in range(4) for c in range(4)
    ]
    assert not any(t.startswith("place") for t in texts)
    act(s, "clear 1,1")
    assert s.decision() == "place" and s.phase == PLACE
    assert s.cell_type[cell("1,1")] == -1
    assert s.discard[-1] == TYPE_BY_NAME["green-corner"]  # to the discard, not a broken pile
    assert s.broken == [[], []]
    assert legal_texts(s) == [f"place blue-tee@1,1 r{r}" for r in (0, 90, 180, 270)]
    act(s, "place blue-tee@1,1 r90")
    assert s.decision() == "draw"


def test_O3_2_draw_from_market_refills_at_once() -> None:
    s = build(
        hands=[["blue-tee"], []], market=["red-tee", "red-cross", None, "green-tee"], pile=["yellow-cross"]
    )
    act(s, "place blue-tee@0,0 r0")
    assert legal_texts(s) == ["draw market0", "draw market1", "draw market3", "draw pile"]
    ev = act(s, "draw market1")
    assert s.market == [TYPE_BY_NAME[x] for x in ("red-tee", "yellow-cross")] + [
        -1,
        TYPE_BY_NAME["green-tee"],
    ]
    assert s.hands[0] == [TYPE_BY_NAME["red-cross"]]
    assert any(e.kind == "market_refill" and e.visible_to is None for e in ev)


def test_O3_2_draw_from_pile_is_private() -> None:
    s = build(hands=[["blue-tee"], []], pile=["yellow-cross"])
    act(s, "place blue-tee@0,0 r0")
    ev = act(s, "draw pile")
    assert s.hands[0] == [TYPE_BY_NAME["yellow-cross"]]
    private = [e for e in ev if "yellow-cross" in e.text]
    assert private and all(e.visible_to == (0,) for e in private)
    assert next(e for e in ev if e.kind == "draw").visible_to is None


def test_O3_2_draw_skipped_without_source_and_market_slot_stays_empty() -> None:
    # Everything not named is on the board's broken piles... use hands to hold the rest.
    s = build(hands=[["blue-tee", "red-tee"], []], market=[None, None, "green-tee", None], rest="discard")
    s.broken[1] = s.discard[:]
    s.discard = []
    s.validate()
    act(s, "place blue-tee@0,0 r0")
    assert legal_texts(s) == ["draw market2"]
    act(s, "draw market2")  # refill impossible: the slot stays empty
    assert s.market == [-1, -1, -1, -1]
    act(s, "end")
    act(s, "pass")  # seat 1: hand empty, nothing to draw
    assert s.hands[1] == []
    act(s, "place red-tee@1,1 r0")  # seat 0 has 2 cards < 4 but no source: draw skipped
    assert s.decision() == "main" and "end" in legal_texts(s)


def test_O3_3_no_ritual_between_placing_and_drawing() -> None:
    s = build(board=dict(ROW3), hands=[["red-tee"], []], slots=[[0, -1, -1], [-1, -1, -1]])
    assert any(t.startswith("cast") for t in legal_texts(s))  # before
    act(s, "place red-tee@3,3 r0")
    assert s.decision() == "draw"
    assert all(t.startswith("draw") for t in legal_texts(s))  # between: draw only
    act(s, "draw pile")
    assert any(t.startswith("cast") for t in legal_texts(s))  # after


def test_O3_4_end_when_placed_or_hand_empty() -> None:
    s = build(hands=[[], ["red-tee"]])
    assert legal_texts(s)[:2] == ["pass", "end"]  # empty hand: may end at once
    act(s, "end")
    assert s.current_player() == 1
    assert "end" not in legal_texts(s)


def test_O3_5_pass_only_first_discard_then_draw_four_with_reshuffle() -> None:
    s = build(
        hands=[["red-tee", "blue-tee", "green-tee"], []],
        pile=["yellow-cross", "yellow-single"],
        rest="discard",
    )
    s.broken[1] = s.discard[:]  # keep the discard empty
    s.discard = []
    s.validate()
    assert legal_texts(s)[0] == "pass"
    ev = act(s, "pass")
    # drew the 2 pile cards, then the reshuffled discard (= the passed hand) for 2 more
    assert len(s.hands[0]) == 4
    assert Counter(s.hands[0]) >= Counter([TYPE_BY_NAME["yellow-single"], TYPE_BY_NAME["yellow-cross"]])
    assert any(e.kind == "reshuffle" for e in ev)
    assert len(s.discard) + len(s.draw_pile) == 1
    assert s.current_player() == 1  # passing ends the turn
    assert s.cell_type == [-1] * 16 and s.ankhs == [0, 0]


def test_O3_5_no_pass_after_any_other_action() -> None:
    for first in ("place red-tee@3,3 r0", "isis 0,0>1,1 r0", "cast s0 order 0,0+0,1+0,2"):
        board = dict(ROW3) if "cast" in first else {"0,0": "blue-tee"}
        s = build(board=board, hands=[["red-tee"], []], slots=[[0, -1, -1], [-1, -1, -1]])
        act(s, first)
        while s.decision() != "main":
            s.apply_action(s.legal_actions()[0])
        assert "pass" not in legal_texts(s), first


def test_O3_6_pile_empty_reshuffles_discard_for_a_draw() -> None:
    s = build(hands=[["red-tee"], []], pile=[], rest="discard")
    assert s.draw_pile == []
    n_discard = len(s.discard)
    act(s, "place red-tee@0,0 r0")
    ev = act(s, "draw pile")
    assert len(s.hands[0]) == 1 and len(s.draw_pile) == n_discard - 1 and s.discard == []
    assert ev[0].kind == "reshuffle"


# ---------------------------------------------------------------------------------------
# O4 links
# ---------------------------------------------------------------------------------------


def test_O4_1_facing_arrows_link_one_way_arrow_does_not() -> None:
    s = build(board={"0,0": "blue-single r90", "0,1": "blue-single r270"})
    assert s.links != 0
    s = build(board={"0,0": "blue-single r90", "0,1": "blue-single r0"})  # E vs N: one way
    assert s.links == 0


def test_O4_1_no_link_across_empty_cell_or_diagonal() -> None:
    s = build(board={"0,0": "blue-cross", "0,2": "red-cross", "1,1": "green-cross"})
    assert s.links == 0
    assert all_links(s.cell_arrows) == 0


def test_O4_2_touching_but_not_linked_set_does_not_match() -> None:
    # (1,0) touches (0,0) but (0,0) has no S arrow: {0,0 0,1 1,0} is not connected by links.
    s = build(
        board={"0,0": "blue-straight r90", "0,1": "blue-straight r90", "1,0": "blue-cross"},
        slots=[[0, -1, -1], [-1, -1, -1]],
    )
    assert s.castable(0) == []
    assert not any(t.startswith("cast") for t in legal_texts(s))


def test_O4_2_other_amulets_may_touch_the_set() -> None:
    board = dict(ROW3)
    board["0,3"] = "red-cross"  # linked to 0,2 but not part of the set
    board["1,1"] = "red-cross"  # touches 0,1
    s = build(board=board, slots=[[0, 4, -1], [-1, -1, -1]])
    assert s.castable(0) == [mask("0,0", "0,1", "0,2")]
    assert s.castable(1) == [mask("0,1", "0,2", "0,3")]  # 2 blue + 1 red through links


def _brute_force(s: OsiriumState) -> dict[int, list[int]]:
    """Every set of 3..5 board amulets connected through its own links, by colour signature."""
    from engine.osirium.board import EDGE_CELLS

    linked = {EDGE_CELLS[e] for e in range(24) if s.links >> e & 1}
    occ = [c for c in range(16) if s.cell_type[c] >= 0]
    out: dict[int, list[int]] = {}
    for k in (3, 4, 5):
        for combo in itertools.combinations(occ, k):
            seen = {combo[0]}
            stack = [combo[0]]
            while stack:
                a = stack.pop()
                for b in combo:
                    if b not in seen and (min(a, b), max(a, b)) in linked:
                        seen.add(b)
                        stack.append(b)
            if len(seen) == k:
                m = sum(1 << c for c in combo)
                out.setdefault(set_signature(m, s.colour_cells), []).append(m)
    return {sig: sorted(ms) for sig, ms in out.items()}


def test_O4_2_O5_1_matching_finds_every_connected_set_with_exact_colours() -> None:
    rng = random.Random(3)
    checked = 0
    for seed in range(30):
        s = GAME.new_initial_state(2, seed)
        # random play until the board is fairly full, then compare with brute force
        while not s.is_terminal() and bin(s.occupied).count("1") < 6 + seed % 9:
            s.apply(rng.choice(s.legal_actions()))
        if s.is_terminal():
            continue
        expect = _brute_force(s)
        assert {sig: sorted(ms) for sig, ms in s.sets_by_signature().items()} == expect, seed
        checked += sum(len(ms) for ms in expect.values())
    assert checked > 20
    # With every edge linked, the enumeration gives each grid-connected set of 3..5 cells once.
    from engine.osirium.board import EDGE_CELLS

    edges = set(EDGE_CELLS)
    grid = 0
    for k in (3, 4, 5):
        for combo in itertools.combinations(range(16), k):
            seen, stack = {combo[0]}, [combo[0]]
            while stack:
                a = stack.pop()
                for b in combo:
                    if b not in seen and (min(a, b), max(a, b)) in edges:
                        seen.add(b)
                        stack.append(b)
            grid += len(seen) == k
    sets = connected_sets((1 << 24) - 1)
    assert len(sets) == len(set(sets)) == grid


# ---------------------------------------------------------------------------------------
# O5 casting
# ---------------------------------------------------------------------------------------


def test_O5_1_exact_colours_any_slot_both_principles() -> None:
    board = dict(ROW3)
    s = build(board=board, slots=[[4, 0, 1], [-1, -1, -1]])  # 2B+1R no; 3B yes; 3R no
    casts = [t for t in legal_texts(s) if t.startswith("cast")]
    assert casts == ["cast s1 order 0,0+0,1+0,2", "cast s1 chaos 0,0+0,1+0,2"]


def test_O5_2_O5_3_O5_4_order_cast_scores_breaks_one_rest_stays() -> None:
    s = build(board=dict(ROW3), slots=[[0, -1, -1], [-1, -1, -1]])
    ev = act(s, "cast s0 order 0,0+0,1+0,2")
    assert s.ankhs[0] == 3 and s.scores() == (3, 0)
    assert s.completed[0] == [0 * 2 + 0]  # O5.4 completed with the principle
    assert s.ritual_slots[0][0] == -1 and s.view(1).rituals[0][0] == -1
    assert [e.kind for e in ev] == ["cast", "ankhs"]
    assert s.decision() == "break"
    assert legal_texts(s) == ["break 0,0", "break 0,1", "break 0,2"]
    act(s, "break 0,1")
    # O5.3: the unbroken amulets stay
    assert s.cell_type[cell("0,0")] >= 0 and s.cell_type[cell("0,2")] >= 0 and s.cell_type[cell("0,1")] == -1
    assert s.broken[0] == [TYPE_BY_NAME["blue-straight"]]
    assert s.scores() == (4, 0)  # 1 per broken amulet
    assert s.decision() == "refill"


def test_O5_3_each_broken_set_reachable_one_way_only() -> None:
    # Chaos on a tetrad breaks 3 of 4: C(4,3) = 4 distinct broken sets, each by one sequence.
    board = {
        "1,0": "red-straight r90",
        "1,1": "red-straight r90",
        "1,2": "red-straight r90",
        "1,3": "red-cross",
    }
    s = build(board=board, slots=[[23, -1, -1], [-1, -1, -1]])
    act(s, "cast s0 chaos 1,0+1,1+1,2+1,3")
    assert s.breaks_left == 3
    results: list[frozenset[int]] = []

    def walk(st: object, broken: tuple[int, ...]) -> None:
        from engine.osirium.state import OsiriumState

        assert isinstance(st, OsiriumState)
        if st.phase != BREAK:
            results.append(frozenset(broken))
            return
        legal = st.legal_actions()
        assert legal  # never a step with no choice
        for a in legal:
            walk(st.child(a), (*broken, a - A.BREAK))

    walk(s, ())
    assert len(results) == 4 and len(set(results)) == 4


def test_O5_5_refill_choice_slot2_face_down() -> None:
    board = dict(ROW3)
    s = build(board=board, slots=[[-1, -1, 0], [-1, -1, -1]])
    act(s, "cast s2 order 0,0+0,1+0,2", "break 0,0")
    assert legal_texts(s) == ["refill simple", "refill advanced"]
    ev = act(s, "refill advanced")
    rid = s.ritual_slots[0][2]
    assert RITUALS[rid].advanced and rid == 39  # top of the advanced pile
    assert s.view(1).rituals[0][2] == HIDDEN_ADVANCED
    assert s.view(0).rituals[0][2] == rid
    private = [e for e in ev if str(rid) in e.text]
    assert private and all(e.visible_to == (0,) for e in private)
    assert s.decision() == "main"


def test_O5_5_only_a_non_empty_pile_is_offered_and_skip_when_both_empty() -> None:
    # (With 40 rituals both piles can never be empty in a real game; the engine still
    # handles it. The piles are emptied by hand here, so no validate().)
    s = build(board=dict(ROW3), slots=[[0, -1, -1], [-1, -1, -1]])
    act(s, "cast s0 order 0,0+0,1+0,2")
    only_simple = s.clone()
    only_simple.advanced_rituals = []
    only_simple.apply(A.BREAK + cell("0,0"))
    assert only_simple.legal_actions() == [A.REFILL]
    only_advanced = s.clone()
    only_advanced.simple_rituals = []
    only_advanced.apply(A.BREAK + cell("0,0"))
    assert only_advanced.legal_actions() == [A.REFILL + 1]
    s.simple_rituals, s.advanced_rituals = [], []
    ev = s.apply_action(A.BREAK + cell("0,0"))
    assert s.decision() == "main" and s.ritual_slots[0][0] == -1
    assert any(e.kind == "refill_skipped" for e in ev)


def test_O5_6_fifth_ritual_ends_after_breaks_without_refill() -> None:
    done = [(1, 0), (2, 0), (3, 0), (4, 0)]
    s = build(board=dict(ROW3), slots=[[0, -1, -1], [-1, -1, -1]], completed=[done, []], exalt=[9, 0])
    act(s, "cast s0 chaos 0,0+0,1+0,2")
    assert s.decision() == "break" and not s.is_terminal()
    act(s, "break 0,0")
    assert not s.is_terminal()
    ev = act(s, "break 0,1")
    assert s.is_terminal() and s.decision() == "over"
    assert s.ritual_slots[0][0] == -1  # no refill
    assert s.ended_by == 0
    o = s.outcome()
    assert o is not None and o.reason == "fifth_ritual"
    # O8.2 with Last word (exaltation 9): 4*3 + 2 + 3 + 2 broken
    assert o.scores[0] == 12 + 2 + 3 + 2
    kinds = [e.kind for e in ev]
    assert kinds[-1] == "win" and kinds.count("scoring_line") == 2


# ---------------------------------------------------------------------------------------
# O7 deity powers
# ---------------------------------------------------------------------------------------


def test_O7_isis_moves_an_amulet_with_any_rotation_once() -> None:
    s = build(board={"0,0": "blue-straight"}, hands=[["red-tee"], ["red-tee"]], deities=["isis", "anubis"])
    isis = [t for t in legal_texts(s) if t.startswith("isis")]
    assert len(isis) == 15 * 2  # 15 empty cells × 2 arrow sets of a straight
    assert "isis 0,0>0,0 r0" not in isis
    act(s, "isis 0,0>2,3 r90")
    assert s.cell_type[cell("0,0")] == -1 and s.cell_rotation[cell("2,3")] == 1
    assert "pass" not in legal_texts(s)
    assert not any(t.startswith("isis") for t in legal_texts(s))
    act(s, "place red-tee@0,0 r0", "draw pile", "end", "pass")
    assert not any(t.startswith("isis") for t in legal_texts(s))  # once per game


def test_O7_isis_not_on_a_full_board_and_not_in_other_steps() -> None:
    names = ["green-single"] * 2 + ["green-straight"] * 3 + ["green-corner"] * 4 + ["green-tee"] * 4
    names += ["green-cross"] * 2 + ["red-cross"]
    full = {f"{k // 4},{k % 4}": names[k] for k in range(16)}
    s = build(board=full, hands=[["blue-tee"], []])
    assert not any(t.startswith("isis") for t in legal_texts(s))
    act(s, "clear 0,0")
    assert not any(t.startswith("isis") for t in legal_texts(s))  # place-after-clear step
    act(s, "place blue-tee@0,0 r0")
    assert s.decision() == "draw" and not any(t.startswith("isis") for t in legal_texts(s))


def test_O7_anubis_breaks_into_own_broken_pile() -> None:
    s = build(board={"1,1": "yellow-tee"}, hands=[["red-tee"], []], deities=["anubis", "isis"])
    act(s, "anubis 1,1")
    assert s.cell_type[cell("1,1")] == -1
    assert s.broken[0] == [TYPE_BY_NAME["yellow-tee"]] and s.scores() == (1, 0)
    assert s.powers_used == [True, False]
    assert "pass" not in legal_texts(s)


def test_O7_bastet_takes_a_fifth_card_and_skips_next_draw() -> None:
    s = build(
        hands=[["red-tee", "red-tee", "blue-tee", "blue-tee"], []],
        market=["green-tee", None, "yellow-tee", "green-cross"],
        pile=["yellow-cross"],
        deities=["bastet", "seth"],
    )
    bastet = [t for t in legal_texts(s) if t.startswith("bastet")]
    assert bastet == ["bastet market0", "bastet market2", "bastet market3"]
    act(s, "bastet market2")
    assert len(s.hands[0]) == 5 and s.market[2] == TYPE_BY_NAME["yellow-cross"]
    act(s, "place red-tee@0,0 r0")
    assert len(s.hands[0]) == 4 and s.decision() == "main"  # draw skipped


def test_O7_seth_rotates_to_a_different_arrow_set_never_a_cross() -> None:
    s = build(
        board={"0,0": "blue-straight", "0,1": "blue-cross", "0,2": "blue-corner r90"},
        hands=[["red-tee"], []],
        deities=["seth", "isis"],
    )
    seth = [t for t in legal_texts(s) if t.startswith("seth")]
    assert seth == ["seth 0,0 r90", "seth 0,2 r0", "seth 0,2 r180", "seth 0,2 r270"]
    # a non-canonical rotation text reads as the canonical one for that amulet
    assert s.string_to_action("seth 0,0 r270") == s.string_to_action("seth 0,0 r90")
    act(s, "seth 0,0 r90")
    assert s.cell_arrows[cell("0,0")] == E | W


def test_O7_powers_not_during_break_refill_draw() -> None:
    s = build(board=dict(ROW3), hands=[["red-tee"], []], slots=[[0, -1, -1], [-1, -1, -1]])
    act(s, "cast s0 order 0,0+0,1+0,2")
    assert not any(t.startswith("isis") for t in legal_texts(s))
    act(s, "break 0,0")
    assert not any(t.startswith("isis") for t in legal_texts(s))
    act(s, "refill simple")
    assert any(t.startswith("isis") for t in legal_texts(s))


# ---------------------------------------------------------------------------------------
# Exaltations (O1.5) and final scoring (O8)
# ---------------------------------------------------------------------------------------


def _exalt_state(x: int, completed: list[tuple[int, int]], broken: list[str], ended_by: int = -1) -> bool:
    s = build(completed=[completed, []], broken=[broken, []], exalt=[x, 9 if x != 9 else 0])
    s.ended_by = ended_by
    return s.exaltation_met(0)


@pytest.mark.parametrize(
    ("x", "completed", "broken", "ended_by", "met"),
    [
        (0, [(0, 0), (1, 0), (2, 0)], [], -1, True),  # Maat
        (0, [(0, 0), (1, 0), (2, 1)], [], -1, False),
        (0, [(0, 0), (1, 0)], [], -1, False),
        (1, [(0, 1), (1, 1)], [], -1, True),  # Storm
        (1, [(0, 1), (1, 0)], [], -1, False),
        (2, [], ["blue-tee"] * 4, -1, True),  # Devotion to blue
        (2, [], ["blue-tee"] * 3 + ["red-tee"], -1, False),
        (5, [], ["yellow-cross", "yellow-cross", "yellow-tee", "yellow-single"], -1, True),
        (6, [], ["blue-tee", "red-tee", "green-tee", "yellow-tee"], -1, True),  # Harmony
        (6, [], ["blue-tee", "red-tee", "green-tee"], -1, False),
        (7, [(16, 0), (22, 1)], [], -1, True),  # Ascension
        (7, [(16, 0), (1, 1)], [], -1, False),
        (8, [(28, 0)], [], -1, True),  # Great rite: 5 amulets
        (8, [(16, 0), (22, 0), (26, 0)], [], -1, False),
        (9, [], [], 0, True),  # Last word
        (9, [], [], -1, False),
    ],
)
def test_O1_5_exaltation_conditions(
    x: int, completed: list[tuple[int, int]], broken: list[str], ended_by: int, met: bool
) -> None:
    assert _exalt_state(x, completed, broken, ended_by) is met


def _finish(s: object) -> tuple[tuple[int, ...], tuple[float, ...], tuple[int, ...]]:
    from engine.osirium.state import OsiriumState

    assert isinstance(s, OsiriumState)
    s._finish(None)
    o = s.outcome()
    assert o is not None
    return o.scores, o.returns, o.winners


# Exaltations 9 (Last word) and 8 (Great rite) are not met in these positions.
NO_X = [9, 8]


def test_O8_2_final_score_rituals_exaltation_broken() -> None:
    s = build(completed=[[(0, 0), (1, 0), (2, 0)], [(3, 1)]], broken=[["red-tee"], []], exalt=[0, 9])
    scores, returns, winners = _finish(s)
    assert scores == (9 + 4 + 1, 2)
    assert returns == (1.0, -1.0) and winners == (0,)


def test_O8_3_tie_break_most_rituals() -> None:
    s = build(completed=[[(0, 0), (1, 0)], [(22, 0)]], exalt=NO_X)  # 6 vs 6 Ankhs
    scores, returns, winners = _finish(s)
    assert scores == (6, 6) and winners == (0,) and returns == (1.0, -1.0)


def test_O8_3_tie_break_most_broken() -> None:
    s = build(
        completed=[[(0, 0)], [(16, 0)]],
        broken=[["red-tee", "red-tee", "red-tee"], ["blue-tee"]],
        exalt=NO_X,
    )  # 3+3 vs 5+1, one ritual each
    scores, returns, winners = _finish(s)
    assert scores == (6, 6) and winners == (0,) and returns == (1.0, -1.0)


def test_O8_3_shared_win_and_O8_5_returns() -> None:
    s = build(3, completed=[[(0, 0)], [(1, 0)], []], broken=[["red-tee"], ["blue-tee"], []], exalt=[9, 8, 7])
    scores, returns, winners = _finish(s)
    assert scores == (4, 4, 0) and winners == (0, 1) and returns == (0.0, 0.0, -1.0)
    s = build(2, exalt=NO_X)
    scores, returns, winners = _finish(s)
    assert winners == (0, 1) and returns == (0.0, 0.0)


def test_O9_3_team_scores_are_summed() -> None:
    s = build(
        4,
        teams=True,
        completed=[[(0, 0)], [(28, 0)], [(1, 0), (2, 0)], []],  # team 0: 3+6=9, team 1: 8
        exalt=[9, 8, 7, 6],
    )
    scores, returns, winners = _finish(s)
    assert scores[1] == 8 + 5  # Great rite met for seat 1 (exaltation 8): team 1 = 13 > 9
    assert winners == (1, 3) and returns == (-1.0, 1.0, -1.0, 1.0)
    s = build(4, teams=True, completed=[[(0, 0)], [(1, 0)], [], []], exalt=[9, 8, 7, 6])
    scores, returns, winners = _finish(s)
    assert winners == (0, 1, 2, 3) and returns == (0.0,) * 4  # teams tied on everything


def test_O9_3_team_tie_break_uses_summed_rituals() -> None:
    # team 0: 3+3 = 6 with 2 rituals; team 1: 6 with 1 ritual
    s = build(4, teams=True, completed=[[(0, 0)], [(22, 0)], [(1, 0)], []], exalt=[9, 8, 7, 6])
    _scores, returns, winners = _finish(s)
    assert winners == (0, 2) and returns == (1.0, -1.0, 1.0, -1.0)


def test_O8_1_game_ends_mid_round() -> None:
    done = [(1, 0), (2, 0), (3, 0), (4, 0)]
    slots = [[0, -1, -1], [-1] * 3, [-1] * 3]
    s = build(3, board=dict(ROW3), slots=slots, completed=[done, [], []], exalt=[0, 1, 2])
    act(s, "cast s0 order 0,0+0,1+0,2", "break 0,2")
    assert s.is_terminal() and s.round_number() == 1
    assert s.legal_actions() == []
    with pytest.raises(IllegalActionError):
        s.apply_action(A.END)


def test_O8_4_round_limit() -> None:
    s = build(2, hands=[[], []], cur=1, round=100, exalt=NO_X)
    ev = act(s, "end")
    assert s.is_terminal()
    o = s.outcome()
    assert o is not None and o.reason == "round_limit" and s.round_number() == 100
    assert [e.kind for e in ev][-1] == "win"
    s = build(2, hands=[[], []], cur=0, round=100, exalt=NO_X)
    act(s, "end")
    assert not s.is_terminal() and s.current_player() == 1


# ---------------------------------------------------------------------------------------
# O10: every step offers a choice; decisions by step
# ---------------------------------------------------------------------------------------


def test_O10_steps_and_choices_in_random_games() -> None:
    seen: Counter[str] = Counter()
    for seed in range(15):
        for n, opts in ((2, {}), (4, {"teams": True})):
            s = GAME.new_initial_state(n, seed, opts)
            rng = random.Random(seed)
            while not s.is_terminal():
                legal = s.legal_actions()
                assert legal
                seen[s.decision()] += 1
                if s.phase == DRAW:
                    assert all(A.DRAW <= a <= A.DRAW_PILE for a in legal)
                elif s.phase == REFILL:
                    assert set(legal) <= {A.REFILL, A.REFILL + 1}
                elif s.phase == BREAK:
                    assert all(A.BREAK <= a < A.CLEAR for a in legal)
                elif s.phase == PLACE:
                    assert all(A.PLACE <= a < A.CAST for a in legal)
                else:
                    assert s.phase == MAIN
                s.apply(rng.choice(legal))
            assert s.phase == OVER
    assert {"main", "draw", "break", "refill"} <= set(seen)


def test_hidden_slot_deck_is_public() -> None:
    s = GAME.new_initial_state(2, 3)
    assert s.view(1).rituals[0][2] == HIDDEN_SIMPLE
    assert s.view(0).rituals[0][2] == s.ritual_slots[0][2]


def test_O1_1_O9_1_two_to_four_players() -> None:
    for n in (2, 3, 4):
        assert GAME.new_initial_state(n, 1).num_players == n
    for n in (0, 1, 5):
        with pytest.raises(GameOptionsError):
            GAME.new_initial_state(n, 1)
    assert GAME.new_initial_state(None, 1).num_players == 2


def test_O1_2_at_most_one_amulet_per_cell() -> None:
    s = build(board={"2,2": "red-tee"}, hands=[["blue-tee"], []])
    texts = legal_texts(s)
    assert not any("@2,2" in t for t in texts) and "place blue-tee@2,1 r0" in texts
    with pytest.raises(IllegalActionError):
        act(s, "place blue-tee@2,2 r0")


def test_O1_7_market_is_four_public_cards() -> None:
    s = GAME.new_initial_state(2, 9)
    market = s.view(None).market
    assert len(market) == 4 and all(t >= 0 for t in market)
    assert s.view(0).market == s.view(1).market == market


def test_every_action_reports_events() -> None:
    for seed in range(4):
        s = GAME.new_initial_state(2 + seed % 3, seed)
        rng = random.Random(seed)
        while not s.is_terminal():
            a = rng.choice(s.legal_actions())
            events = s.apply_action(a)
            assert events, s.action_to_string(a)
            assert any(e.visible_to is None for e in events)  # something public every time
        assert [e.kind for e in events][-1] == "win"
