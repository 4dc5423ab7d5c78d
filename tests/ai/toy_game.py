"""A tiny two-player hidden-information game for testing the search against ``engine.core``.

**Secret Duel.** 18 cards (values 1–6, three of each) are shuffled; each player gets a hidden
hand of 3 and the rest is a face-down deck (its order hidden from both). A round:

1. seat 0 secretly commits a card from their hand, then seat 1 does (``public_action`` of a
   commitment is :data:`engine.core.SECRET_ACTION`: neither sees the other's card until
   both have committed — the same structure as Aton's arrangement, A3.3);
2. both cards are revealed; the higher card scores the difference for its owner (ties
   score nothing) and both cards are discarded face up;
3. the round winner (if any) takes a public decision: ``bank`` (+1 point) or ``draw`` (an
   extra card from the deck, if any);
4. each player draws one card (if the deck has any).

The game ends after :data:`ROUNDS` rounds or when a player to commit has an empty hand.
Returns: +1 / −1 by points, 0 on equality.

Action ids: 0..5 commit a card of value 1..6; 6 = bank; 7 = draw.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Mapping
from typing import Any, Self

from engine.core import (
    SECRET_ACTION,
    TERMINAL,
    ActionInfo,
    ActionParseError,
    Event,
    Game,
    GameDescriptor,
    IllegalActionError,
    Outcome,
    State,
    StateFormatError,
    View,
    check_num_players,
)

ROUNDS = 4
HAND = 3
BANK = 6
DRAW = 7
VALUES = (1, 2, 3, 4, 5, 6)


@dataclasses.dataclass(frozen=True, slots=True)
class DuelView(View):
    player: int | None
    hand: tuple[int, ...]
    committed: int | None
    hand_sizes: tuple[int, ...]
    opponent_committed: bool
    deck_size: int
    discards: tuple[int, ...]
    points: tuple[int, ...]
    round: int
    to_move: int
    phase: str

    def to_text(self) -> str:
        return repr(self)


class DuelState(State):
    __slots__ = (
        *("committed", "deck", "discards", "game", "hands", "moves"),
        *("phase", "points", "round", "to_move", "winner"),
    )

    def __init__(self, game: DuelGame) -> None:
        self.game = game
        self.hands: list[list[int]] = [[], []]
        self.deck: list[int] = []
        self.committed: list[int | None] = [None, None]
        self.discards: list[int] = []
        self.points = [0, 0]
        self.round = 0
        self.phase = "commit"  # commit | bonus | over
        self.to_move = 0
        self.winner: int | None = None
        self.moves = 0

    # --- who, what ------------------------------------------------------------------
    @property
    def num_players(self) -> int:
        return 2

    def current_player(self) -> int:
        return TERMINAL if self.phase == "over" else self.to_move

    def decision(self) -> str:
        return self.phase

    def move_number(self) -> int:
        return self.moves

    def legal_actions(self) -> list[int]:
        if self.phase == "commit":
            return sorted({v - 1 for v in self.hands[self.to_move]})
        if self.phase == "bonus":
            return [BANK, DRAW] if self.deck else [BANK]
        return []

    def public_action(self, action: int) -> int:
        return SECRET_ACTION if self.phase == "commit" else action

    def apply(self, action: int) -> None:
        self.moves += 1
        p = self.to_move
        if self.phase == "commit":
            self.hands[p].remove(action + 1)
            self.committed[p] = action + 1
            if p == 0:
                self.to_move = 1
                return
            a, b = self.committed[0], self.committed[1]
            assert a is not None and b is not None
            self.discards += [a, b]
            self.committed = [None, None]
            if a != b:
                w = 0 if a > b else 1
                self.points[w] += abs(a - b)
                self.winner = w
                self.phase = "bonus"
                self.to_move = w
                return
            self._end_round()
            return
        if self.phase == "bonus":
            if action == BANK:
                self.points[p] += 1
            elif self.deck:
                self.hands[p].append(self.deck.pop())
            self._end_round()
            return
        raise IllegalActionError("the game is over")

    def _end_round(self) -> None:
        for q in (0, 1):
            if self.deck:
                self.hands[q].append(self.deck.pop())
        self.round += 1
        self.winner = None
        self.to_move = 0
        self.phase = "commit"
        if self.round >= ROUNDS or not self.hands[0] or not self.hands[1]:
            self.phase = "over"

    def apply_action(self, action: int) -> list[Event]:
        if self.phase == "over":
            raise IllegalActionError("the game is over")
        if action not in self.legal_actions():
            raise IllegalActionError(f"illegal action {action}")
        self.apply(action)
        return [Event("act", f"action {action}")]

    # --- results --------------------------------------------------------------------
    def scores(self) -> tuple[int, ...]:
        return tuple(self.points)

    def returns(self) -> tuple[float, ...]:
        if self.phase != "over" or self.points[0] == self.points[1]:
            return (0.0, 0.0)
        return (1.0, -1.0) if self.points[0] > self.points[1] else (-1.0, 1.0)

    def outcome(self) -> Outcome | None:
        if self.phase != "over":
            return None
        r = self.returns()
        winners = tuple(i for i in (0, 1) if r[i] > 0)
        return Outcome(winners, "points", "most points", self.scores(), r)

    # --- information ----------------------------------------------------------------
    def view(self, player: int | None) -> View:
        own = () if player is None else tuple(sorted(self.hands[player]))
        committed = None if player is None else self.committed[player]
        other = None if player is None else 1 - player
        return DuelView(
            player=player,
            hand=own,
            committed=committed,
            hand_sizes=(len(self.hands[0]), len(self.hands[1])),
            opponent_committed=other is not None and self.committed[other] is not None,
            deck_size=len(self.deck),
            discards=tuple(self.discards),
            points=tuple(self.points),
            round=self.round,
            to_move=self.current_player(),
            phase=self.phase,
        )

    def sample_consistent_state(self, player: int, rng: random.Random) -> Self:
        s = self.clone()
        o = 1 - player
        pool = s.hands[o] + s.deck
        oc = s.committed[o]
        if oc is not None:
            pool.append(oc)
        pool.sort()
        rng.shuffle(pool)
        n = len(s.hands[o])
        s.hands[o] = pool[:n]
        rest = pool[n:]
        if oc is not None:
            s.committed[o] = rest.pop()
        s.deck = rest
        return s

    # --- copies, text, storage ------------------------------------------------------
    def clone(self) -> Self:
        s = self.__class__.__new__(self.__class__)
        s.game = self.game
        s.hands = [list(self.hands[0]), list(self.hands[1])]
        s.deck = list(self.deck)
        s.committed = list(self.committed)
        s.discards = list(self.discards)
        s.points = list(self.points)
        s.round = self.round
        s.phase = self.phase
        s.to_move = self.to_move
        s.winner = self.winner
        s.moves = self.moves
        return s

    def to_text(self) -> str:
        return self.serialize()

    def serialize(self) -> str:
        data = {
            "hands": self.hands,
            "deck": self.deck,
            "committed": self.committed,
            "discards": self.discards,
            "points": self.points,
            "round": self.round,
            "phase": self.phase,
            "to_move": self.to_move,
            "winner": self.winner,
            "moves": self.moves,
        }
        return "duel:1:" + json.dumps(data, separators=(",", ":"))

    def validate(self) -> None:
        cards = self.hands[0] + self.hands[1] + self.deck + self.discards
        cards += [c for c in self.committed if c is not None]
        if sorted(cards) != sorted(VALUES * 3):
            raise StateFormatError("cards do not add up")


class DuelGame(Game):
    descriptor = GameDescriptor(
        name="duel",
        title="Secret Duel (test game)",
        min_players=2,
        max_players=2,
        options=(),
        hidden_information=True,
        num_distinct_actions=8,
        max_rounds=ROUNDS,
    )

    def new_initial_state(
        self, num_players: int | None = None, seed: int = 0, options: Mapping[str, Any] | None = None
    ) -> DuelState:
        check_num_players(self.descriptor, num_players)
        s = DuelState(self)
        deck = sorted(VALUES * 3)
        random.Random(seed).shuffle(deck)
        s.hands = [deck[:HAND], deck[HAND : 2 * HAND]]
        s.deck = deck[2 * HAND :]
        return s

    def serialize_state(self, state: State, *, version: int | None = None) -> str:
        return state.serialize()

    def deserialize_state(self, data: str, *, validate: bool = True) -> DuelState:
        if not data.startswith("duel:1:"):
            raise StateFormatError("not a duel state")
        d = json.loads(data[len("duel:1:") :])
        s = DuelState(self)
        s.hands = d["hands"]
        s.deck = d["deck"]
        s.committed = d["committed"]
        s.discards = d["discards"]
        s.points = d["points"]
        s.round = d["round"]
        s.phase = d["phase"]
        s.to_move = d["to_move"]
        s.winner = d["winner"]
        s.moves = d["moves"]
        return s

    def action_info(self, action: int) -> ActionInfo:
        if 0 <= action < 6:
            return ActionInfo(action, f"commit {action + 1}", "commit", {"value": action + 1})
        if action == BANK:
            return ActionInfo(action, "bank", "bank")
        if action == DRAW:
            return ActionInfo(action, "draw", "draw")
        raise ActionParseError(f"unknown action id {action}")

    def string_to_action(self, text: str) -> int:
        t = " ".join(text.lower().split())
        for a in range(8):
            if self.action_info(a).text == t:
                return a
        raise ActionParseError(f"cannot parse {text!r}")


GAME = DuelGame()
