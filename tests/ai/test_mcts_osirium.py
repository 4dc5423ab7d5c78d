"""ISMCTS on Osirium: no peeking (O6.4), determinism, the game-ending 5th ritual (O5.6,
O8.1), 3 players (max^n) and teams (O9.3)."""

from __future__ import annotations

import random

import pytest
from ai_positions import random_positions

from ai.knowledge import team_average
from ai.mcts import WIDEN_BASE, MctsBot, Search
from ai.mcts_params import Limits, MctsParams
from ai.osirium.greedy import OsiriumGreedy
from ai.osirium.knowledge import evaluate as osirium_evaluate
from engine import get_game
from engine.core import State
from engine.osirium import actions as A
from engine.rng import Rng


def new(players: int = 2, seed: int = 0, teams: bool = False) -> State:
    options = {"teams": True} if teams else None
    return get_game("osirium").new_initial_state(players, seed, options)


def positions(count: int, seed: int, players: int = 2) -> list[State]:
    """Seeded random-play positions with a real choice."""
    return random_positions(lambda g: new(players, g), count, seed, 0, 250)


def winning_casts(s: State) -> set[int]:
    """Casts after which, whatever is broken, the game ends with the caster's sole win."""
    p = s.current_player()
    out = set()
    for a in s.legal_actions():
        if a < A.CAST:
            continue
        ok = True
        stack = [s.child(a)]
        while stack and ok:
            x = stack.pop()
            if x.is_terminal():
                ok = x.returns()[p] == 1.0
            elif x.current_player() != p or x.decision() != "break":
                ok = False
            else:
                stack.extend(x.child(b) for b in x.legal_actions())
        if ok:
            out.add(a)
    return out


def fifth_ritual_positions(count: int) -> list[tuple[State, set[int]]]:
    found = []
    seed = 0
    while len(found) < count:
        s = new(2, seed)
        rng = random.Random(seed)
        seed += 1
        while not s.is_terminal():
            p = s.current_player()
            if s.decision() == "main" and len(s.completed[p]) == 4:  # type: ignore[attr-defined]
                wins = winning_casts(s)
                if wins and len(wins) < len(s.legal_actions()):
                    found.append((s, wins))
                    break
            s.apply(rng.choice(s.legal_actions()))
    return found


@pytest.mark.parametrize("rave", [0.0, 300.0])
def test_game_ending_fifth_ritual_is_taken(rave: float) -> None:
    """O5.6 / O8.1: a 5th ritual that ends the game with the caster ahead is cast (with and
    without RAVE)."""
    for s, wins in fifth_ritual_positions(3):
        d = MctsBot(MctsParams(iterations=300, rave=rave)).choose(s, seed=2)
        assert d.action in wins, s.action_to_string(d.action)
        assert d.diagnostics.chosen_value > 0.9


@pytest.mark.parametrize("belief", [0.0, 4.0])
@pytest.mark.parametrize("players", [2, 3])
def test_no_peeking_future_randomness_and_exaltations(players: int, belief: float) -> None:
    """O6.4: states differing in the others' secret exaltations (O2.4) and in the hidden
    future randomness give the same decision and statistics for the same seed, with the
    uniform worlds and with the belief-weighted ones (``belief``)."""
    for s in positions(4, 10 + players, players):
        p = s.current_player()
        other = s.clone()
        other.rng = Rng(123_456_789)  # type: ignore[attr-defined]
        exalt: list[int] = other.exaltations  # type: ignore[attr-defined]
        free = [x for x in range(10) if x not in exalt]
        for q in range(players):
            if q != p:
                exalt[q] = free.pop()
        assert other.view(p) == s.view(p) and other.serialize() != s.serialize()
        bot = MctsBot(MctsParams(iterations=80, belief=belief))
        a = bot.choose(s, seed=5)
        b = bot.choose(other, seed=5)
        assert a.action == b.action
        assert a.diagnostics.actions == b.diagnostics.actions


def test_no_peeking_hidden_cards() -> None:
    """O6.4: states differing in the others' hands, the pile order and the face-down
    rituals give the same decision for the same seed (the engine's determinisation must
    depend on the view and the rng only, checked first)."""
    for s in positions(6, 21, 2) + positions(3, 22, 3):
        p = s.current_player()
        other = s.sample_consistent_state(p, random.Random(99))
        assert other.view(p) == s.view(p)
        a_sample = s.sample_consistent_state(p, random.Random(5)).serialize()
        b_sample = other.sample_consistent_state(p, random.Random(5)).serialize()
        assert a_sample == b_sample, (
            "engine/osirium: sample_consistent_state depends on the hidden order of what it "
            "re-deals (sort the pools before shuffling)"
        )
        bot = MctsBot(MctsParams(iterations=80))
        assert bot.choose(s, seed=5).diagnostics.actions == bot.choose(other, seed=5).diagnostics.actions


def test_same_seed_same_decision() -> None:
    for s in positions(3, 31):
        a = MctsBot(MctsParams(iterations=150, early_stop=False)).choose(s, seed=8)
        b = MctsBot(MctsParams(iterations=150, early_stop=False)).choose(s.clone(), seed=8)
        assert (a.action, a.diagnostics.actions) == (b.action, b.diagnostics.actions)
        assert a.diagnostics.iterations == 150


def test_three_players_each_decision_maximises_its_own_seat() -> None:
    """max^n: the statistics at a decision of seat q hold seat q's returns."""
    s = positions(1, 41, 3)[0]
    search = Search(s, s.current_player(), MctsParams(iterations=300, cutoff=0), seed=1)
    result = search.run(Limits(300))
    assert result.iterations == 300
    seats = {q for node in search.root.children.values() for q, st in enumerate(node.stats) if st}
    assert seats  # deeper decisions were searched
    for a, visits, total in result.root:
        assert visits >= 1 and -visits <= total <= visits
        assert a in s.legal_actions()


def test_teams_share_values() -> None:
    """O9.3: partners get the same value from the heuristic (averaged per team)."""
    s = new(4, 3, teams=True)
    assert s.teams() == (0, 1, 0, 1)
    v = team_average(osirium_evaluate(s), s.teams())
    assert v[0] == v[2] and v[1] == v[3]
    search = Search(s, 0, MctsParams(iterations=50, cutoff=4), seed=1)
    assert search.teams == (0, 1, 0, 1)
    d = MctsBot(MctsParams(iterations=60)).choose(s, seed=1)
    assert d.action in s.legal_actions()


def test_default_cutoff_grows_with_the_player_count() -> None:
    """Five plies per seat: rollouts cover about one turn of every seat (2p: 10, 4p: 20)."""
    for players, cutoff in ((2, 10), (3, 15), (4, 20)):
        s = new(players, 1)
        assert Search(s, 0, MctsParams(iterations=10), seed=1).cutoff == cutoff
        assert Search(s, 0, MctsParams(iterations=10, cutoff=7), seed=1).cutoff == 7
    aton = get_game("aton").new_initial_state(2, 1)
    assert Search(aton, 0, MctsParams(iterations=10), seed=1).cutoff == 20


def test_heuristic_is_bounded() -> None:
    for players in (2, 3, 4):
        for s in positions(5, 50 + players, players):
            v = osirium_evaluate(s)
            assert len(v) == players and all(-1 < x < 1 for x in v)


def test_guided_rollouts_cast_when_possible() -> None:
    from ai.osirium.knowledge import guided_action as osirium_guided_policy

    s, _ = fifth_ritual_positions(1)[0]
    legal = s.legal_actions()
    casts = [a for a in legal if a >= A.CAST]
    picks = [osirium_guided_policy(s, random.Random(k)) for k in range(40)]
    assert sum(1 for a in picks if a in casts) > 25
    d = MctsBot(MctsParams(iterations=100, rollout="guided")).choose(s, seed=1)
    assert d.action in legal


def test_guided_rollout_placements_prefer_forming_links() -> None:
    """O4.1: a rollout placement is the one forming the most links of a few sampled
    placements, so link-forming placements come up far more often than by chance."""
    from ai.osirium.knowledge import guided_action as osirium_guided_policy
    from ai.osirium.knowledge import new_links as _osirium_new_links

    checked = 0
    for s in positions(80, 71):  # enough seeded positions for several qualifying ones
        legal = s.legal_actions()
        places = [a for a in legal if A.PLACE <= a < A.CAST]
        if s.decision() != "main" or any(a >= A.CAST for a in legal) or len(places) < 20:
            continue
        arrows: list[int] = s.cell_arrows  # type: ignore[attr-defined]
        linking = {a for a in places if _osirium_new_links(arrows, a) > 0}
        share = len(linking) / len(legal)
        if not 0.05 < share < 0.5:
            continue
        picks = [osirium_guided_policy(s, random.Random(k)) for k in range(400)]
        picked = sum(1 for a in picks if a in linking) / len(picks)
        assert picked > 1.5 * share, (picked, share)
        # The link count itself: a placement's arrows facing a neighbour's arrows (O4.1).
        for a in places[:40]:
            child = s.child(a)
            formed = int(child.links).bit_count() - int(s.links).bit_count()  # type: ignore[attr-defined]
            assert _osirium_new_links(arrows, a) == formed
        checked += 1
    assert checked >= 3


# --- progressive widening at the root (MctsParams.widen) ------------------------------


def test_root_order_is_a_permutation_led_by_what_greedy_plays() -> None:
    """The root ordering (the greedy rules of thumb, O6.4: the player's view only) ranks
    every legal action once; a winning 5th cast (O5.6) comes first."""
    order = OsiriumGreedy().order
    for s in positions(8, 61) + positions(4, 62, 4):
        legal = s.legal_actions()
        ranked = order(s, legal)
        assert sorted(ranked) == sorted(legal)
        other = s.sample_consistent_state(s.current_player(), random.Random(3))
        assert order(other, other.legal_actions()) == ranked  # hidden cards do not matter
    for s, wins in fifth_ritual_positions(3):
        assert order(s, s.legal_actions())[0] in wins


@pytest.mark.parametrize("widen", [0.5, 2.0])
def test_widening_searches_a_growing_prefix_of_the_order(widen: float) -> None:
    s = new(2, 4)  # the opening: about 190 placements
    legal = s.legal_actions()
    assert len(legal) > 100
    ranked = OsiriumGreedy().order(s, legal)
    n = 400
    search = Search(s, 0, MctsParams(iterations=n, widen=widen, early_stop=False), seed=2)
    result = search.run(Limits(n))
    admitted = WIDEN_BASE + int(widen * (n - 1) ** 0.5)
    # Untried admitted actions are expanded before any revisit, so the searched actions
    # are exactly the prefix admitted by the last iteration.
    assert {a for a, _, _ in result.root} == set(ranked[:admitted])
    assert sum(v for _, v, _ in result.root) == n
    # Without widening every legal action is tried.
    flat = Search(s, 0, MctsParams(iterations=n, widen=0, early_stop=False), seed=2).run(Limits(n))
    assert {a for a, _, _ in flat.root} == set(legal)


def test_widened_search_with_an_expired_deadline_plays_the_orders_first_action() -> None:
    import time

    widened = [s for s in positions(12, 63) if len(s.legal_actions()) > WIDEN_BASE]
    assert len(widened) >= 4
    for s in widened:
        ranked = OsiriumGreedy().order(s, s.legal_actions())
        bot = MctsBot(MctsParams(iterations=1000, widen=1.0))
        d = bot.choose(s, seed=1, deadline=time.monotonic() - 1.0)
        assert d.diagnostics.iterations == 1
        assert d.action == ranked[0]


@pytest.mark.parametrize(
    "widen,prior,rave",
    [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (0.0, 2.0, 0.0), (0.0, 0.0, 300.0)],
)
def test_no_peeking_with_and_without_the_root_ordering(widen: float, prior: float, rave: float) -> None:
    """O6.4 again, with the root ordering on (widening, prior) and with RAVE (whose AMAF
    values gather over determinised rollouts): the others' hands, face-down rituals,
    exaltations and the piles' order change nothing."""
    for s in positions(4, 64, 2) + positions(2, 65, 4):
        p = s.current_player()
        other = s.sample_consistent_state(p, random.Random(17))
        assert other.view(p) == s.view(p)
        bot = MctsBot(MctsParams(iterations=120, widen=widen, prior=prior, rave=rave))
        a, b = bot.choose(s, seed=3), bot.choose(other, seed=3)
        assert (a.action, a.diagnostics.actions) == (b.action, b.diagnostics.actions)


def test_the_root_prior_concentrates_visits_on_the_orders_favourites() -> None:
    """With ``prior`` the root follows the ordering unless values disagree: in the quiet
    opening (placements of nearly equal value) the first-ranked action gets several times the
    visits of a typical admitted action, where plain UCB1 spreads them evenly."""
    s = new(2, 4)
    ranked = OsiriumGreedy().order(s, s.legal_actions())
    n = 600

    def visits(prior: float) -> dict[int, int]:
        params = MctsParams(iterations=n, widen=1.0, prior=prior, early_stop=False)
        result = Search(s, 0, params, seed=2).run(Limits(n))
        assert sum(v for _, v, _ in result.root) == n
        return {a: v for a, v, _ in result.root}

    with_prior, flat = visits(1.0), visits(0.0)
    assert set(with_prior) == set(flat) == set(ranked[: WIDEN_BASE + int((n - 1) ** 0.5)])
    typical = sorted(with_prior.values())[len(with_prior) // 2]
    assert with_prior[ranked[0]] > 3 * typical
    assert max(flat.values()) < 2 * sorted(flat.values())[len(flat) // 2]


def test_the_root_prior_still_takes_the_winning_fifth_ritual() -> None:
    """O5.6 / O8.1 with the prior on and without widening: every cast is admitted at once."""
    for s, wins in fifth_ritual_positions(3):
        d = MctsBot(MctsParams(iterations=300, widen=0.0, prior=1.0)).choose(s, seed=2)
        assert d.action in wins, s.action_to_string(d.action)
