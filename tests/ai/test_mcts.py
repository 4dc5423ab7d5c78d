"""ISMCTS on a small hidden-information game (tests/ai/toy_game.py): budget, determinism,
no peeking, secret simultaneous moves, root parallelism, spec parsing."""

from __future__ import annotations

import dataclasses
import os
import random
import re
import time

import pytest
from toy_game import BANK, DRAW, GAME, DuelState

from ai import mcts, root_parallel
from ai.api import BotSpecError, Budget, make_bot
from ai.mcts import MctsBot, Search, _Edge, make_mcts
from ai.mcts_params import Limits, MctsParams, parse_params
from engine.core import SECRET_ACTION


def duel(seed: int = 3) -> DuelState:
    return GAME.new_initial_state(2, seed)


def bot(**kw: object) -> MctsBot:
    return MctsBot(MctsParams(**kw))  # type: ignore[arg-type]


# --- budget ----------------------------------------------------------------------------


def test_iteration_budget_is_exact() -> None:
    d = bot(iterations=137, early_stop=False).choose(duel(), seed=5)
    assert d.diagnostics.iterations == 137
    assert sum(s.visits for s in d.diagnostics.actions) == 137
    assert not d.diagnostics.interrupted


def test_budget_argument_overrides_the_bots_own() -> None:
    d = bot(iterations=1000, early_stop=False).choose(duel(), seed=5, budget=Budget(iterations=40))
    assert d.diagnostics.iterations == 40


def test_conceal_spends_the_whole_budget_whatever_the_position() -> None:
    """``conceal=on`` (a secret decision's search): no early stop and no shortcut for a single
    legal action, so the iterations are the budget's wherever early stop or the shortcut would
    have given fewer; the action is the same."""
    stopped = forced = 0
    for game_seed in range(12):
        s = duel(game_seed)
        rng = random.Random(game_seed)
        while not s.is_terminal():
            if s.current_player() >= 0:
                plain = bot(iterations=400).choose(s, seed=1)
                hidden = bot(iterations=400, conceal=True).choose(s, seed=1)
                assert hidden.action == plain.action
                assert hidden.diagnostics.iterations == 400
                stopped += 0 < plain.diagnostics.iterations < 400
                forced += plain.diagnostics.iterations == 0
            s.apply_action(rng.choice(s.legal_actions()))
    assert stopped and forced
    assert parse_params("conceal=on")[1].conceal and not MctsParams().conceal


def test_early_stop_chooses_what_the_full_budget_chooses() -> None:
    """With early stopping (the default) the search ends once the leader's lead in visits
    exceeds the iterations left; the action is the full budget's, in fewer iterations."""
    saved = 0
    for game_seed in range(12):
        for seed in range(4):
            s = duel(game_seed)
            full = bot(iterations=400, early_stop=False).choose(s, seed=seed)
            early = bot(iterations=400).choose(s, seed=seed)
            assert early.action == full.action
            assert early.diagnostics.iterations <= 400
            assert early.diagnostics.iterations % 16 == 0 or early.diagnostics.iterations == 400
            saved += 400 - early.diagnostics.iterations
            if early.diagnostics.iterations < 400:
                lead = [*sorted((a.visits for a in early.diagnostics.actions), reverse=True), 0]
                assert lead[0] - lead[1] > 400 - early.diagnostics.iterations
    assert saved > 0


def test_early_stop_needs_an_iteration_budget_and_can_be_turned_off() -> None:
    # A pure time budget has no "iterations left": the search runs to its time limit even
    # where an iteration budget of the same size would have stopped early.
    early = bot(iterations=200).choose(duel(), seed=5)
    assert early.diagnostics.iterations < 200  # this position is decided early (in ~8 ms)...
    timed = bot(iterations=None, milliseconds=30).choose(duel(), seed=5)
    assert timed.diagnostics.iterations > early.diagnostics.iterations  # ...but the timed one runs on
    assert parse_params("medium,early_stop=off")[1].early_stop is False
    assert parse_params("medium")[1].early_stop is True


def test_millisecond_budget_stops() -> None:
    d = bot(iterations=None, milliseconds=50).choose(duel(), seed=5)
    assert d.diagnostics.iterations >= 1  # it returns (how fast is bench/mcts_speed.py's business)
    assert not d.diagnostics.interrupted  # its own budget, not the caller's deadline


def test_expired_deadline_still_returns_a_legal_action() -> None:
    s = duel()
    d = bot(iterations=10_000).choose(s, seed=5, deadline=time.monotonic() - 1.0)
    assert d.action in s.legal_actions()
    assert d.diagnostics.iterations == 1
    assert d.diagnostics.interrupted


def test_cancel_check_stops_the_search() -> None:
    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) >= 2

    d = bot(iterations=100_000).choose(duel(), seed=5, should_stop=stop)
    assert d.diagnostics.iterations == 32  # polled every 16 iterations
    assert d.diagnostics.interrupted


def test_single_legal_action_is_returned_without_search() -> None:
    s = duel()
    s.apply(s.legal_actions()[0])
    s.apply(s.legal_actions()[0])
    while s.legal_actions() != [BANK] and not s.is_terminal():
        if s.decision() == "bonus" and s.deck:
            s.deck.clear()  # no card left: bank is the only choice
            break
        s.apply(s.legal_actions()[0])
    if s.is_terminal() or s.legal_actions() != [BANK]:
        pytest.skip("position did not reach a forced bank")
    d = bot(iterations=100).choose(s, seed=1)
    assert d.action == BANK and d.diagnostics.iterations == 0


# --- determinism and diagnostics --------------------------------------------------------


def test_same_seed_same_decision_and_statistics() -> None:
    s = duel(7)
    a = bot(iterations=400).choose(s, seed=11)
    b = bot(iterations=400).choose(s.clone(), seed=11)
    assert a.action == b.action
    assert a.diagnostics.actions == b.diagnostics.actions
    assert a.diagnostics.principal_variation == b.diagnostics.principal_variation


def test_different_seeds_explore_differently() -> None:
    s = duel(7)
    stats = {bot(iterations=300).choose(s, seed=k).diagnostics.actions for k in range(4)}
    assert len(stats) > 1


def test_diagnostics_are_consistent() -> None:
    s = duel(4)
    d = bot(iterations=500).choose(s, seed=2).diagnostics
    visits = [a.visits for a in d.actions]
    assert visits == sorted(visits, reverse=True)
    assert {a.action for a in d.actions} == set(s.legal_actions())
    assert d.principal_variation[0] == d.actions[0].action
    assert d.chosen_value == d.actions[0].mean_value
    assert all(-1.0 <= a.mean_value <= 1.0 for a in d.actions)
    assert d.iterations_per_second > 0 and d.elapsed_seconds > 0


def test_final_choice_most_visits_then_mean_then_rng() -> None:
    import random

    root = {1: [10.0, 5.0], 2: [10.0, 6.0], 3: [9.0, 9.0]}
    assert mcts.choose_final(root, [1, 2, 3], random.Random(0))[0] == 2
    tie = {1: [10.0, 5.0], 2: [10.0, 5.0]}
    picks = {mcts.choose_final(tie, [1, 2], random.Random(k))[0] for k in range(20)}
    assert picks == {1, 2}


def test_final_choice_with_a_temperature_samples_by_visits() -> None:
    import random

    root = {1: [30.0, 3.0], 2: [10.0, 6.0], 3: [0.0, 0.0]}
    rng = random.Random(7)
    picks = [mcts.choose_final(root, [1, 2, 3], rng, temp=1.0)[0] for _ in range(4000)]
    assert 3 not in picks  # never visited: never played
    assert 0.72 < picks.count(1) / len(picks) < 0.78  # 30 / 40
    rng = random.Random(7)
    hot = [mcts.choose_final(root, [1, 2, 3], rng, temp=1e6)[0] for _ in range(4000)]
    assert 0.47 < hot.count(1) / len(hot) < 0.53  # visited actions alike
    rng = random.Random(7)
    assert {mcts.choose_final(root, [1, 2, 3], rng, temp=0.01)[0] for _ in range(200)} == {1}
    assert mcts.choose_final(root, [1, 2, 3], random.Random(0), temp=2.0)[1] in (0.1, 0.6)


def test_temperature_zero_is_todays_choice() -> None:
    assert parse_params("easy,temp=0")[1] == parse_params("easy")[1]
    for seed in range(6):
        s = duel(seed)
        a = make_bot("mcts:iterations=300").choose(s, seed=seed)
        b = make_bot("mcts:iterations=300,temp=0").choose(s, seed=seed)
        assert (a.action, a.diagnostics.actions) == (b.action, b.diagnostics.actions)


def test_temperature_is_seeded_and_sometimes_plays_another_action() -> None:
    s = duel(4)
    hot = make_bot("mcts:iterations=300,temperature=2")
    argmax = make_bot("mcts:iterations=300").choose(s, seed=1).action
    picks = []
    for seed in range(40):
        d = hot.choose(s, seed=seed)
        assert d.action == hot.choose(s, seed=seed).action  # same seed, same move
        assert d.diagnostics.iterations == 300  # no early stop: the visits decide
        picks.append(d.action)
    assert argmax in picks
    assert any(a != argmax for a in picks)


# --- information: no peeking, availability, secret moves ---------------------------------


def swap_hidden(s: DuelState, player: int, k: int) -> DuelState:
    """The same position for ``player`` with the opponent's hidden cards re-dealt."""
    import random

    return s.sample_consistent_state(player, random.Random(1000 + k))


@pytest.mark.parametrize("seed", range(6))
def test_no_peeking_first_player(seed: int) -> None:
    s = duel(seed)
    base = bot(iterations=300).choose(s, seed=9)
    for k in range(3):
        other = swap_hidden(s, 0, k)
        assert other.serialize() != s.serialize() or k > 0
        d = bot(iterations=300).choose(other, seed=9)
        assert d.action == base.action
        assert d.diagnostics.actions == base.diagnostics.actions


@pytest.mark.parametrize("seed", range(6))
def test_no_peeking_second_player_does_not_see_the_commitment(seed: int) -> None:
    s = duel(seed)
    s.apply(max(s.legal_actions()))  # seat 0 commits its best card, secretly
    base = bot(iterations=300).choose(s, seed=9)
    seen = set()
    for k in range(6):
        other = swap_hidden(s, 1, k)
        seen.add(other.committed[0])
        d = bot(iterations=300).choose(other, seed=9)
        assert d.diagnostics.actions == base.diagnostics.actions
    assert len(seen) > 1  # the hidden commitment really differed


def test_availability_counts_bound_visits() -> None:
    search = Search(duel(5), 0, MctsParams(iterations=400), seed=3)
    search.run(Limits(400))
    for child in search.root.children.values():
        edges = child.stats[1]
        assert edges
        for e in edges.values():
            assert 1 <= e.visits <= e.avail <= 400


def test_second_commitment_statistics_are_shared_across_first_commitments() -> None:
    """A3.3 analogue: seat 1's statistics under every seat-0 commitment are one object,
    so the search's seat 1 cannot answer what seat 0 committed."""
    s = duel(2)
    search = Search(s, 0, MctsParams(iterations=600), seed=1)
    search.run(Limits(600))
    children = list(search.root.children.values())
    assert len(children) == len(s.legal_actions()) > 1
    shared = {id(c.stats[1]) for c in children}
    assert len(shared) == 1
    assert s.public_action(s.legal_actions()[0]) == SECRET_ACTION
    # Once seat 0 acts publicly (bank/draw after winning the round), seat 1's observation
    # follows the real path again; after seat 1's own public action it does not.
    cleared = kept = 0
    for c in children:
        for g in c.children.values():  # after seat 1's commitment
            for key, h in g.children.items():  # after a public bank/draw by the winner
                if key >> 3 not in (BANK, DRAW):
                    continue  # a tie: the next round's commitment
                if key & 7 == 0:
                    assert h.masked[1] == 0
                    cleared += 1
                else:
                    assert h.masked[1] == 1
                    kept += 1
    assert cleared > 0 and kept > 0


def test_leaky_search_would_differ() -> None:
    """Control for the test above: without the shared statistics the second seat's node
    would be distinct per commitment (so the sharing is what the test above sees)."""
    s = duel(2)
    search = Search(s, 0, MctsParams(iterations=200), seed=1)
    search.run(Limits(200))
    children = list(search.root.children.values())
    assert len({id(c) for c in children}) == len(children) > 1


# --- root parallelism ------------------------------------------------------------------


def test_two_workers_merge_root_statistics() -> None:
    s = duel(6)
    d = make_mcts("iterations=150,workers=2").choose(s, seed=4)
    assert d.diagnostics.workers == 2
    assert d.diagnostics.iterations == 300
    a = Search(s, 0, MctsParams(iterations=150), seed=4).run(Limits(150))
    b = Search(s, 0, MctsParams(iterations=150), seed=root_parallel.worker_seed(4, 1)).run(Limits(150))
    expect: dict[int, int] = {}
    for r in (a, b):
        for act, v, _ in r.root:
            expect[act] = expect.get(act, 0) + v
    assert {x.action: x.visits for x in d.diagnostics.actions} == expect


def test_workers_leave_no_zombies_and_are_deterministic() -> None:
    s = duel(6)
    first = make_mcts("iterations=100,workers=2").choose(s, seed=8)
    second = make_mcts("iterations=100,workers=2").choose(s, seed=8)
    assert first.diagnostics.actions == second.diagnostics.actions
    import multiprocessing

    assert multiprocessing.active_children() == []
    # No defunct child of ours remains.
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        pid = 0
    assert pid == 0


def test_worker_failure_falls_back_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    s = duel(6)
    expected = make_mcts("iterations=100,workers=2").choose(s, seed=8)

    def broken(*_args: object) -> None:
        raise RuntimeError("worker exploded")

    monkeypatch.setattr(root_parallel, "_search_in_worker", broken)
    got = make_mcts("iterations=100,workers=2").choose(s, seed=8)
    assert got.diagnostics.actions == expected.diagnostics.actions
    assert got.diagnostics.workers == 2


# --- RAVE ------------------------------------------------------------------------------


def test_rave_amaf_update_follows_its_definition() -> None:
    """At the i-th decision of an iteration (seat q), each action q played from there on
    (in the tree or the rollout), counted once, gains the iteration's return in its AMAF
    statistics; the other seats' actions and the actions before the decision do not.
    (A hand-built iteration, so that the check holds in the compiled build too, where a
    method cannot be spied on.)"""
    search = Search(duel(4), 0, MctsParams(iterations=200, rave=300), seed=1)
    edges0 = {5: _Edge(), 6: _Edge(), 7: _Edge()}  # seat 0 chooses 5
    edges1 = {1: _Edge(), 2: _Edge()}  # seat 1 chooses 2
    edges2 = {5: _Edge(), 6: _Edge(), 9: _Edge()}  # seat 0 chooses 6
    path = [(edges0[5], 0, edges0), (edges1[2], 1, edges1), (edges2[6], 0, edges2)]
    played = [(5, 0), (2, 1), (6, 0), (7, 0), (5, 1), (6, 0), (1, 1)]  # tree, then rollout
    trail = [(a << 3) | q for a, q in played]
    values = [0.5, -0.5]
    search._backprop_rave(path, trail, values, 7)
    f = search.params.discount**7

    def amaf(edges: dict[int, _Edge]) -> dict[int, tuple[int, float]]:
        return {a: (e.amaf_n, round(e.amaf_total, 12)) for a, e in edges.items()}

    won, lost = round(f * 0.5, 12), round(f * -0.5, 12)
    # Decision 0: seat 0 plays 5, 6 (twice: counted once) and 7 from there on.
    assert amaf(edges0) == {5: (1, won), 6: (1, won), 7: (1, won)}
    # Decision 1: seat 1 plays 2 and 1 (its 5 has no edge here).
    assert amaf(edges1) == {1: (1, lost), 2: (1, lost)}
    # Decision 2: seat 0 plays 6 and 7 from there on; its 5 came before, the later 5 is
    # seat 1's.
    assert amaf(edges2) == {5: (0, 0.0), 6: (1, won), 9: (0, 0.0)}
    # The chosen edges' own statistics: one visit each, the seat's discounted return.
    assert [(e.visits, round(e.total, 12)) for e, _, _ in path] == [(1, won), (1, lost), (1, won)]


def test_rave_is_seeded_and_reports_only_visited_actions() -> None:
    a = bot(iterations=300, rave=300, early_stop=False).choose(duel(), seed=5)
    b = bot(iterations=300, rave=300, early_stop=False).choose(duel(), seed=5)
    assert (a.action, a.diagnostics.actions) == (b.action, b.diagnostics.actions)
    assert a.diagnostics.iterations == 300
    assert all(s.visits > 0 for s in a.diagnostics.actions)
    assert sum(s.visits for s in a.diagnostics.actions) == 300


@pytest.mark.parametrize("seed", range(4))
def test_rave_does_not_peek(seed: int) -> None:
    """The AMAF values gather over determinisations only: the opponent's hidden cards change
    nothing, including for the seat that answers a secret commitment."""
    s = duel(seed)
    s.apply(max(s.legal_actions()))
    base = bot(iterations=300, rave=300).choose(s, seed=9)
    for k in range(4):
        d = bot(iterations=300, rave=300).choose(swap_hidden(s, 1, k), seed=9)
        assert d.diagnostics.actions == base.diagnostics.actions


def test_rave_changes_the_search() -> None:
    """RAVE is a different selection rule: the same seed spreads its visits differently."""
    plain = bot(iterations=400, early_stop=False).choose(duel(6), seed=3)
    rave = bot(iterations=400, rave=300, early_stop=False).choose(duel(6), seed=3)
    assert plain.diagnostics.actions != rave.diagnostics.actions


# --- spec ------------------------------------------------------------------------------


def test_spec_presets_and_parameters() -> None:
    from ai import presets

    assert parse_params("")[1].iterations == presets.PRESETS["medium"].iterations
    assert parse_params("hard")[1].iterations == presets.PRESETS["hard"].iterations
    _, p = parse_params("iterations=2000,ms=500,c=0.7,rollout=random,cutoff=20,workers=2")
    assert (p.iterations, p.milliseconds, p.c, p.rollout, p.cutoff, p.workers) == (
        2000,
        500.0,
        0.7,
        "random",
        20,
        2,
    )
    assert parse_params("easy,workers=2")[1].workers == 2
    assert parse_params("cutoff=end")[1].cutoff == -1
    assert parse_params("ms=300")[1].iterations is None
    assert parse_params("medium")[1].widen is None  # the game's default
    assert parse_params("medium,widen=1.5")[1].widen == 1.5
    assert parse_params("medium,widen=off")[1].widen == 0.0
    assert parse_params("medium")[1].prior is None
    assert parse_params("medium,prior=1")[1].prior == 1.0
    assert parse_params("medium")[1].temp == 0.0
    assert parse_params("easy,temp=0.5")[1].temp == 0.5
    assert parse_params("medium")[1].rave == 0.0
    assert parse_params("expert,rave=300")[1].rave == 300.0
    assert parse_params("medium,rave=off")[1].rave == 0.0
    assert make_bot("mcts").name == "mcts:medium"
    assert make_bot("mcts:hard").name == "mcts:hard"


@pytest.mark.parametrize(
    "spec",
    [
        "impossible",
        "iterations=0",
        "c=-1",
        "workers=0",
        "rollout=psychic",
        "easy,hard",
        "depth=3",
        "ms=x",
        "widen=-1",
        "widen=inf",
        "prior=-0.5",
        "temp=-1",
        "temp=nan",
        "temp=inf",  # every number must be finite: inf made the exploration term NaN
        "c=inf",
        "c=1e400",
        "c=nan",
        "rave=-1",
        "rave=inf",
        "rave=100,prior=1",
    ],
)
def test_bad_specs_are_refused(spec: str) -> None:
    with pytest.raises(BotSpecError):
        make_mcts(spec)


@pytest.mark.parametrize("field", dataclasses.fields(MctsParams), ids=lambda f: f.name)
def test_a_bad_or_empty_value_names_the_parameter_and_what_it_accepts(
    field: dataclasses.Field[object],
) -> None:
    """Every parameter's refusal says what it takes (``iterations=-1`` named no range)."""
    accepts = field.metadata["accepts"]
    assert accepts
    with pytest.raises(BotSpecError) as bad:
        parse_params(f"{field.name}=-1e400x")
    assert field.name in str(bad.value) and (accepts in str(bad.value) or "known:" in str(bad.value))
    with pytest.raises(
        BotSpecError, match=re.escape(f"mcts parameter {field.name} has no value (expected {accepts})")
    ):
        parse_params(f"{field.name}=")


@pytest.mark.parametrize(
    "spec,message",
    [
        ("iterations=99999999999,ms=none", "iterations: at most 1,000,000, not 99,999,999,999"),
        ("ms=1e12", "ms: at most 3,600,000 (an hour), not 1e12"),
        ("iterations=5,ms=none,iterations=7", "iterations given twice"),
        ("it=5,n=6", "iterations given twice"),
    ],
)
def test_budgets_are_bounded_and_a_parameter_is_given_once(spec: str, message: str) -> None:
    with pytest.raises(BotSpecError, match=re.escape(message)):
        make_mcts(spec)
    make_mcts("iterations=1000000,ms=3600000")  # the bounds themselves are accepted


def test_search_shuffle_is_the_shuffle_of_random_draws() -> None:
    """SearchRandom.shuffle is the permutation of ``j = int(random() * (i + 1))`` for
    ``i = n - 1 .. 1``, and leaves the generator where those ``random()`` calls leave it: the
    searches' decisions depend on both, so a faster shuffle must keep them."""
    from ai.mcts import SearchRandom

    for seed in range(5):
        for n in (*range(8), 31, 90, 200):
            fast, ref = SearchRandom(seed), random.Random(seed)
            fast.random(), ref.random()  # not at the start of the stream
            x, y = list(range(n)), list(range(n))
            fast.shuffle(x)
            for i in range(n - 1, 0, -1):
                j = int(ref.random() * (i + 1))
                y[i], y[j] = y[j], y[i]
            assert x == y
            assert fast.getstate() == ref.getstate()


def test_a_search_leaves_the_cycle_collector_as_it_found_it() -> None:
    """The search turns the cycle collector off while it iterates (no reference cycles are
    made there) and restores it, on or off, when it ends."""
    import gc

    state = GAME.new_initial_state(2, 1)
    seen: list[bool] = []
    assert gc.isenabled()
    Search(state, state.current_player(), MctsParams(iterations=50), seed=1).run(
        Limits(iterations=50), should_stop=lambda: seen.append(gc.isenabled()) or False
    )
    assert gc.isenabled() and seen and not any(seen)
    gc.disable()
    try:
        Search(state, state.current_player(), MctsParams(iterations=50), seed=1).run(Limits(iterations=50))
        assert not gc.isenabled()
    finally:
        gc.enable()
