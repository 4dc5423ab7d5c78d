"""The game review (ai/review.py; docs/review.md): replay, one decision's review, the scales,
a seat's summary. The service's stream is tested in tests/service/test_review_service.py."""

from __future__ import annotations

import dataclasses
import itertools
import random
from typing import ClassVar

import pytest
from ai_positions import random_positions

import ai.review as review_module
from ai.mcts import search_one_action
from ai.mcts_params import Limits
from ai.review import (
    GRADES,
    LOSS_BOUNDS,
    HistoryError,
    ReplayError,
    expected_score,
    game_accuracy,
    grade,
    move_accuracy,
    replay,
    resolve_history,
    review_decision,
    reviewer,
    summarize,
)
from engine.core import SECRET_ACTION, State
from engine.registry import get_game

SMALL = reviewer("medium", iterations=120)


def played_game(name: str, players: int, seed: int) -> tuple[State, list[int]]:
    """A new game and the actions of a seeded random game from it to the end."""
    start = get_game(name).new_initial_state(players, seed=seed)
    state = start.clone()
    rng = random.Random(seed)
    actions: list[int] = []
    while not state.is_terminal():
        a = rng.choice(state.legal_actions())
        actions.append(a)
        state.apply(a)
    return start, actions


def positions(name: str, players: int, count: int, seed: int) -> list[State]:
    game = get_game(name)
    return random_positions(lambda s: game.new_initial_state(players, seed=s), count, seed, 4, 60)


# --- replay ------------------------------------------------------------------------------


def test_replay_lists_the_decisions_of_the_reviewed_seats_with_the_state_before_each() -> None:
    start, actions = played_game("osirium", 3, 4)
    points, end = replay(start, actions, [1])
    assert end.is_terminal() and start.move_number() == 0  # the start is left as it was
    assert points and all(p.seat == 1 for p in points)
    state = start.clone()
    by_move = {p.move: p for p in points}
    for i, a in enumerate(actions):
        if state.current_player() == 1:
            p = by_move[i + 1]
            assert p.played == a and p.state.serialize() == state.serialize()
            assert p.forced == (len(state.legal_actions()) == 1)
        state.apply(a)
    assert len(points) == sum(1 for p in by_move.values())


def test_replay_names_the_first_action_that_cannot_be_applied() -> None:
    start, actions = played_game("aton", 2, 7)
    state = start.clone()
    for a in actions[:9]:
        state.apply(a)
    bad = next(a for a in range(start.game.descriptor.num_distinct_actions) if not state.is_legal(a))
    with pytest.raises(ReplayError) as info:
        replay(start, [*actions[:9], bad, *actions[10:]])
    assert info.value.move == 10
    assert "not legal" in str(info.value) and "move 10" in str(info.value)
    with pytest.raises(ReplayError) as info:
        replay(start, [*actions[:3], 10**6])
    assert info.value.move == 4
    with pytest.raises(ReplayError) as info:
        replay(start, [*actions, actions[-1]])
    assert info.value.move == len(actions) + 1 and "over" in str(info.value)


# --- scales ------------------------------------------------------------------------------


def test_grades_follow_the_loss_bands() -> None:
    assert grade(0.3, is_best=True) == "best"
    bounds = [0.0, *(b for _, b in LOSS_BOUNDS)]
    for i, name in enumerate(GRADES[1:]):
        assert grade(bounds[i], is_best=False) == name
        if i + 1 < len(bounds):
            assert grade(bounds[i + 1] - 1e-9, is_best=False) == name
    assert grade(1.0, is_best=False) == "blunder"


def test_accuracy_falls_from_100_as_the_loss_grows() -> None:
    assert move_accuracy(0.0) == pytest.approx(100.0, abs=0.01)
    values = [move_accuracy(x / 100) for x in range(0, 101)]
    assert all(a >= b for a, b in itertools.pairwise(values))
    assert move_accuracy(1.0) == 0.0
    assert 90 < move_accuracy(0.02) < 93 and 60 < move_accuracy(0.10) < 64
    assert game_accuracy([]) == 0.0 and game_accuracy([100.0, 50.0]) == 75.0
    assert expected_score(-1.0) == 0.0 and expected_score(1.0) == 1.0 and expected_score(0.0) == 0.5


def test_a_reviewer_is_a_preset_on_an_iteration_budget() -> None:
    r = reviewer("expert", iterations=300, alternatives=5)
    assert r.iterations == 300 and r.params.evaluation == "learned" and r.params.milliseconds is None
    assert not r.params.early_stop and r.name == "mcts:expert,iterations=300"
    assert reviewer().iterations == 1000 and reviewer().name == "mcts:medium"
    for bad in ({"preset": "godlike"}, {"iterations": 0}, {"alternatives": 11}):
        with pytest.raises(ValueError):
            reviewer(**bad)  # type: ignore[arg-type]


# --- one decision ------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "players"), [("aton", 2), ("osirium", 2), ("osirium", 4)])
def test_the_review_of_the_best_move_loses_nothing_and_others_are_valued(name: str, players: int) -> None:
    for state in positions(name, players, 3, seed=players):
        legal = state.legal_actions()
        first = review_decision(state, legal[0], SMALL, seed=11, move=5)
        best = first.best
        again = review_decision(state, best, SMALL, seed=11, move=5)
        assert again.grade == "best" and again.loss == 0.0 and again.accuracy == pytest.approx(100, abs=0.01)
        assert again.played_score == again.best_score
        # the most visited action (ties: by value, then the seed), listed first unless tied
        top = again.alternatives[0]
        assert len(again.alternatives) <= 3 and (
            top.action == best or top.visits == max(a.visits for a in again.alternatives)
        )
        assert again.iterations == SMALL.iterations  # no second search for the best move
        other = next(a for a in legal if a != best)
        r = review_decision(state, other, SMALL, seed=11, move=5)
        assert r.best == best and r.grade != "best"  # the same search, the same best action
        assert r.iterations > SMALL.iterations  # the action played was searched on its own
        assert r.loss == max(0.0, r.best_score - r.played_score)
        assert r.grade == grade(r.loss, is_best=False) and r.seat == state.current_player()


def test_a_review_is_reproducible_and_depends_on_the_seed() -> None:
    state = positions("osirium", 2, 1, seed=9)[0]
    played = state.legal_actions()[-1]
    a = review_decision(state, played, SMALL, seed=1)
    b = review_decision(state, played, SMALL, seed=1)
    c = review_decision(state, played, SMALL, seed=2)
    assert dataclasses.replace(a, seconds=0.0) == dataclasses.replace(b, seconds=0.0)
    assert (a.played_score, a.alternatives) != (c.played_score, c.alternatives)


@pytest.mark.parametrize(("name", "players"), [("aton", 2), ("osirium", 3)])
def test_a_review_reads_only_the_seats_view(name: str, players: int) -> None:
    """Twin deals: a state the reviewed seat cannot tell from the real one (everything it
    cannot see re-dealt) gets the same review."""
    rng = random.Random(5)
    for state in positions(name, players, 3, seed=21):
        seat = state.current_player()
        twin = state.sample_consistent_state(seat, rng)
        assert twin.view(seat) == state.view(seat) and twin.serialize() != state.serialize()
        played = state.legal_actions()[0]
        real = review_decision(state, played, SMALL, seed=3)
        other = review_decision(twin, played, SMALL, seed=3)
        assert (real.best, real.played_score, real.best_score, real.alternatives) == (
            other.best,
            other.played_score,
            other.best_score,
            other.alternatives,
        )


def test_the_action_played_is_searched_alone_at_the_root() -> None:
    state = positions("aton", 2, 1, seed=2)[0]
    action = state.legal_actions()[-1]
    result = search_one_action(
        state, state.current_player(), action, params=SMALL.params, seed=4, limits=Limits(80)
    )
    assert [a for a, _, _ in result.root] == [action] and result.iterations == 80
    assert result.root[0][1] == 80
    illegal = next(a for a in range(state.game.descriptor.num_distinct_actions) if not state.is_legal(a))
    with pytest.raises(ValueError):
        search_one_action(
            state, state.current_player(), illegal, params=SMALL.params, seed=4, limits=Limits(8)
        )


def test_a_deadline_or_a_stop_marks_the_review_interrupted() -> None:
    state = positions("osirium", 2, 1, seed=3)[0]
    r = review_decision(state, state.legal_actions()[0], reviewer("medium"), seed=1, should_stop=lambda: True)
    assert r.interrupted and r.iterations < 1000


def test_a_seats_summary_counts_every_grade() -> None:
    start, actions = played_game("aton", 2, 3)
    points, _ = replay(start, actions)
    reviews = [
        review_decision(p.state, p.played, reviewer("easy", 60), seed=p.move, move=p.move)
        for p in points[:24]
        if not p.forced
    ]
    forced = {0: 1, 1: 0}
    out = summarize([0, 1], reviews, forced)
    assert [s.seat for s in out] == [0, 1]
    for s in out:
        mine = [r for r in reviews if r.seat == s.seat]
        assert s.moves == len(mine) and sum(s.grades.values()) == len(mine)
        assert list(s.grades) == list(GRADES) and s.forced == forced[s.seat]
        assert s.accuracy == pytest.approx(sum(r.accuracy for r in mine) / len(mine))


# --- the history: secret decisions and checkpoints ---------------------------------------


def seen_by(start: State, actions: list[int], viewer: int) -> tuple[list[int], list[State]]:
    """The actions as ``viewer`` saw them (another seat's secret decision as -1) and the state
    after each action that leaves the viewer to act, and at the end."""
    state = start.clone()
    seen: list[int] = []
    checkpoints: list[State] = []
    for i, a in enumerate(actions):
        hidden = state.current_player() != viewer and state.public_action(a) == SECRET_ACTION
        seen.append(SECRET_ACTION if hidden else a)
        state.apply(a)
        if state.current_player() == viewer or i == len(actions) - 1:
            checkpoints.append(state.clone())
    return seen, checkpoints


def test_secret_decisions_are_found_from_the_checkpoints() -> None:
    start, actions = played_game("aton", 2, 5)
    seen, checkpoints = seen_by(start, actions, 0)
    assert SECRET_ACTION in seen
    assert resolve_history(start, seen, checkpoints, viewer=0, pinned=True) == actions
    assert resolve_history(start, actions) == actions  # nothing to find, nothing to check
    with pytest.raises(HistoryError) as info:
        resolve_history(start, seen)  # no checkpoint to find them by
    assert info.value.index == seen.index(SECRET_ACTION) and "no checkpoint" in str(info.value)


def test_a_pinned_history_ends_at_a_checkpoint_and_never_names_another_seats_move() -> None:
    start, actions = played_game("osirium", 2, 8)
    actions = actions[:40]
    end = start.clone()
    for a in actions:
        end.apply(a)
    with pytest.raises(HistoryError) as info:
        resolve_history(start, actions, viewer=0, pinned=True)
    assert info.value.index is None and info.value.move == 40
    state = start.clone()
    others = False  # a move of another seat so far
    for k, a in enumerate(actions):
        seat = state.current_player()
        illegal = next(x for x in range(state.game.descriptor.num_distinct_actions) if not state.is_legal(x))
        bad = [*actions[:k], illegal, *actions[k + 1 :]]
        with pytest.raises(HistoryError) as info:
            resolve_history(start, bad, [end], viewer=0, pinned=True)
        if seat == 0 and not others:  # no move of another seat before it: the viewer's own, named
            assert info.value.index == k and "not legal" in str(info.value)
        else:  # another seat's, or after one: its legality depends on that seat's cards
            assert info.value.index is None and info.value.move == 40 and "not legal" not in str(info.value)
        with pytest.raises(HistoryError) as info:
            resolve_history(start, bad, [end])  # unpinned (a trusted backend): named
        assert info.value.index == k
        others = others or seat != 0
        state.apply(a)
    assert others
    elsewhere = start.clone()
    for a in actions[:10]:
        elsewhere.apply(a)
    with pytest.raises(HistoryError) as info:
        resolve_history(start, actions[:5], [elsewhere])
    assert "not after one of the actions" in str(info.value)


def test_a_pinned_history_refuses_a_guess_at_another_seats_secret() -> None:
    start, actions = played_game("aton", 2, 9)
    seen, checkpoints = seen_by(start, actions, 0)
    k = seen.index(SECRET_ACTION)
    state = start.clone()
    for a in actions[:k]:
        state.apply(a)
    wrong = next(
        a for a in state.legal_actions() if a != actions[k] and state.public_action(a) == SECRET_ACTION
    )
    for guess in (actions[k], wrong):  # right or wrong, the same refusal
        probe = [*seen[:k], guess, *seen[k + 1 :]]
        with pytest.raises(HistoryError) as info:
            resolve_history(start, probe, checkpoints, viewer=0, pinned=True)
        assert "as -1" in str(info.value) and info.value.index == k


def pinned_answer(start: State, probe: list[int], checkpoint: State) -> tuple[str, int | None, int] | None:
    """A pinned review's refusal of ``probe`` for seat 0 (message, index, move); None when it
    replays."""
    try:
        resolve_history(start, probe, [checkpoint], viewer=0, pinned=True)
    except HistoryError as e:
        return str(e), e.index, e.move
    return None


@pytest.mark.parametrize(("name", "players"), [("aton", 2), ("osirium", 2), ("osirium", 3)])
def test_a_pinned_history_answers_alike_whatever_another_seats_cards(
    name: str, players: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twin deals (another seat's cards resampled from seat 0's view): every list of actions
    seat 0 might send, with a move of seat 1's that only one deal allows, one that both allow,
    then nothing, an unknown id, a -1, seat 0's own moves or the moves played, gets the same
    answer and the same padded work from both. A move of another seat that replays, followed
    by one that fails, once told the viewer that seat's cards by naming the later move."""
    monkeypatch.setattr(review_module, "_Blind", _Recording)
    rng = random.Random(11)
    start, actions = played_game(name, players, 31)
    state = start.clone()
    compared = 0
    for i, a in enumerate(actions[:-3]):
        if state.current_player() == 1 and state.move_number() > 3:
            twin = state.sample_consistent_state(0, rng)
            real, other = set(state.legal_actions()), set(twin.legal_actions())
            # A secret decision sent in clear is refused for its form, naming it: not a probe.
            real = {p for p in real if state.public_action(p) != SECRET_ACTION}
            other = {p for p in other if state.public_action(p) != SECRET_ACTION}
            probes = {min(real - other, default=None), min(other - real, default=None)}
            probes |= set(sorted((real & other) - {a})[:1])
            played = [state.clone()]  # the game after each of the next moves: the checkpoints
            for b in actions[i : i + 3]:
                played.append(played[-1].child(b))
            rest = actions[i + 1 : i + 3]
            space = state.game.descriptor.num_distinct_actions
            for probe in sorted(p for p in probes if p is not None):
                for tail in ([], [space + 7], [SECRET_ACTION], [*rest], [rest[0], space + 7]):
                    _Recording.log = []
                    sent = [probe, *tail]
                    answers = [pinned_answer(s, sent, played[len(sent)]) for s in (state, twin)]
                    if answers[0] is None:
                        continue  # the game played: it replays in the real deal only
                    assert answers[0] == answers[1], (probe, tail)
                    assert answers[0][1] is None  # no action named: only the checkpoint
                    assert len(_Recording.log) == 2  # every pinned segment is padded
                    assert _Recording.log[0][:2] == _Recording.log[1][:2], (probe, tail)
                    compared += 1
        state.apply(a)
    assert compared >= 20


class _Recording(review_module._Blind):
    """The pinned search's padded work, recorded: (transitions, comparisons) done, and the
    full tree's."""

    log: ClassVar[list[tuple[int, int, int, int]]] = []

    def pad(self, transitions: int) -> None:
        super().pad(transitions)
        self.log.append((*self.done, self.transitions, self.leaves))


def test_a_pinned_search_does_the_same_work_whatever_the_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trying another seat's candidates in id order and stopping at the one that fits told the
    viewer, by the time taken, which it was. Every candidate is tried and the work padded to
    that of the full tree, a figure of what the viewer knows."""
    monkeypatch.setattr(review_module, "_Blind", _Recording)
    _Recording.log = []
    start, actions = played_game("aton", 2, 5)
    state = start.clone()
    for a in actions:
        if state.current_player() == 1 and state.public_action(a) == SECRET_ACTION:
            candidates = [c for c in state.legal_actions() if state.public_action(c) == SECRET_ACTION]
            if len(candidates) >= 6:
                break
        state.apply(a)
    else:
        pytest.fail("no secret decision of seat 1 with 6 candidates")
    distinct = {state.child(c).serialize(): c for c in reversed(candidates)}  # the first of equals
    chosen = sorted(distinct.values())
    for c in (chosen[0], chosen[len(chosen) // 2], chosen[-1]):
        after = state.child(c)
        assert resolve_history(state, [SECRET_ACTION], [after], viewer=0, pinned=True) == [c]
    assert len(_Recording.log) == 3 and len(set(_Recording.log)) == 1
    done_t, done_c, full_t, full_c = _Recording.log[0]
    assert (done_t, done_c) == (full_t, full_c) and full_c > len(candidates)  # padded past the real
    # Unpinned (a trusted backend), the first that fits ends the search, unpadded.
    assert resolve_history(state, [SECRET_ACTION], [state.child(chosen[0])]) == [chosen[0]]
    assert len(_Recording.log) == 3


def test_a_pinned_segment_with_too_many_secrets_is_refused_before_any_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(review_module, "_Blind", _Recording)
    _Recording.log = []
    start, actions = played_game("aton", 2, 5)
    seen, _ = seen_by(start, actions, 0)
    end = start.clone()
    for a in actions:
        end.apply(a)
    with pytest.raises(HistoryError) as info:
        resolve_history(start, seen, [end], viewer=0, pinned=True)
    assert "no checkpoint between them: too many to find" in str(info.value)
    assert info.value.index is None and _Recording.log == []  # the refusal depends on the list alone
