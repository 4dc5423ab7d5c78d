"""``heka play``: a person plays a game in the terminal against bots.

The board is drawn from the person's view (``view(seat).to_text()``), their legal actions are
listed by number and text (answer with either), events are shown as they happen (only those
the person may see), ``?`` shows how the last bot chose (its search's totals: its statistics
are private to its seat), ``hint`` a search from the person's own seat with its most visited
actions, ``help`` every action form with an example, and ``quit``.

The game loop (:func:`service.play_loop.play_loop`) talks to a small ``Session``
abstraction rather than to the engine, so the same loop can drive a game held by a running
heka server: ``--server`` hands over to ``service.remote_play.run_remote``.
:class:`LocalSession` plays with the engine and the bots in this process.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from service.commands.files import check_writable, nonempty, write_text
from service.commands.options import game_name, server_address
from service.play_loop import BotTurn, Search, play_loop, search_text

if TYPE_CHECKING:
    from ai.api import Bot, Diagnostics
    from engine.core import Event, State

# ---------------------------------------------------------------------------------------
# The local session
# ---------------------------------------------------------------------------------------


class LocalSession:
    def __init__(
        self,
        state: State,
        seat: int,
        bots: dict[int, tuple[str, Bot]],
        seed: int,
        *,
        hint: tuple[str, Bot] | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.state = state
        self.start = state.clone()
        self.seat = seat
        self.bots = bots
        self.seed = seed
        #: Every action applied, in order (the record of ``--save``).
        self.actions: list[int] = []
        self.rng = random.Random(seed)
        self.hint_bot = hint
        self.options = dict(options or {})
        # Hints draw their seeds apart: asking for one does not change the bots' games.
        self.hint_rng = random.Random(seed ^ 0x9E3779B97F4A7C15)

    def title(self) -> str:
        return f"{self.state.game.descriptor.title} (seed {self.seed})"

    def game_name(self) -> str:
        return self.state.game.descriptor.name

    def players_text(self) -> str:
        teams = self.state.teams()
        parts = []
        for p in range(self.state.num_players):
            who = "you" if p == self.seat else self.bots[p][0]
            team = f" (team {teams[p]})" if len(set(teams)) < len(teams) else ""
            parts.append(f"seat {p}: {who}{team}")
        return ", ".join(parts)

    def is_over(self) -> bool:
        return self.state.is_terminal()

    def current_player(self) -> int:
        return self.state.current_player()

    def decision(self) -> str:
        return self.state.decision()

    def view_text(self) -> str:
        return self.state.view(self.seat).to_text()

    def legal_actions(self) -> list[tuple[int, str]]:
        return [(a, self.state.action_to_string(a)) for a in self.state.legal_actions()]

    def parse_action(self, text: str) -> int:
        return self.state.string_to_action(text)

    def _visible(self, events: Sequence[Event]) -> list[str]:
        return [e.text for e in events if e.is_visible_to(self.seat)]

    def apply(self, action: int) -> list[str]:
        events = self._visible(self.state.apply_action(action))
        self.actions.append(action)
        return events

    def bot_turn(self) -> BotTurn:
        from engine.core import SECRET_ACTION

        player = self.state.current_player()
        spec, bot = self.bots[player]
        decision_name = self.state.decision()
        decision = bot.choose(self.state, seed=self.rng.getrandbits(63))
        secret = self.state.public_action(decision.action) == SECRET_ACTION
        text = None if secret else self.state.action_to_string(decision.action)
        # Another seat's root statistics stay with it, as a server keeps them (they name
        # actions from its hand: docs/security.md): the person sees the totals.
        diag = search_text(
            f"seat {player} ({spec}), decision {decision_name}",
            _search(decision.diagnostics, text),
            private_to=player,
        )
        events = self._visible(self.state.apply_action(decision.action))
        self.actions.append(decision.action)
        return BotTurn(player, spec, text, decision_name, tuple(events), diag)

    def hint(self) -> str:
        if self.hint_bot is None:
            return "no hint bot (--hint-bot)"
        spec, bot = self.hint_bot
        decision = bot.choose(self.state, seed=self.hint_rng.getrandbits(63))
        d = decision.diagnostics
        visited = tuple(
            (int(s.visits), float(s.mean_value), self.state.action_to_string(s.action)) for s in d.actions[:8]
        )
        search = dataclasses.replace(
            _search(d, self.state.action_to_string(decision.action)),
            visited=visited,
            chosen_value=float(d.chosen_value) if d.actions else None,
        )
        return search_text(f"hint for seat {self.seat} ({spec})", search)

    def record(self) -> dict[str, Any]:
        """The game as ``heka review`` reads it: the deal (game, players, options, seed), the
        seats, the person's seat and every action so far."""
        from service.commands.review import PLAY_RECORD

        outcome = self.state.outcome()
        return {
            "record": PLAY_RECORD,
            "game": self.state.game.descriptor.name,
            "players": self.state.num_players,
            "options": self.options,
            "seed": self.seed,
            "seats": ["you" if p == self.seat else self.bots[p][0] for p in range(self.state.num_players)],
            "person": self.seat,
            "actions": self.actions,
            "over": outcome is not None,
            "result": outcome.text if outcome is not None else "",
        }

    def outcome_text(self) -> str:
        outcome = self.state.outcome()
        if outcome is None:
            return "the game is not over"
        if self.seat in outcome.winners:
            verdict = "You win!" if len(outcome.winners) == 1 else "You share the win."
        elif not outcome.winners:
            verdict = "A draw."
        else:
            verdict = "You lose."
        scores = ", ".join(f"seat {p}: {s}" for p, s in enumerate(outcome.scores))
        return f"{outcome.text}\nscores: {scores}\n{verdict}"


def _search(d: Diagnostics, chosen: str | None) -> Search:
    """The totals of a search (its statistics left out: :meth:`LocalSession.hint` adds them
    for the person's own seat)."""
    return Search(
        int(d.iterations),
        float(d.elapsed_seconds),
        float(d.iterations_per_second),
        int(d.workers),
        bool(d.interrupted),
        chosen,
    )


# ---------------------------------------------------------------------------------------
# Command
# ---------------------------------------------------------------------------------------


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "play",
        help="play a game in the terminal against bots",
        description="Play against bots in the terminal: the board from your seat, your legal "
        "actions by number and text, events as they happen, '?' for the last bot's diagnostics.",
    )
    p.add_argument("--game", default="aton", type=game_name, help="game name (default: aton)")
    p.add_argument("--players", type=int, default=None, help="player count (default: the game's minimum)")
    p.add_argument("--seat", type=int, default=0, help="your seat (default: 0)")
    p.add_argument(
        "--bots",
        default="mcts:medium",
        help="bot spec for every other seat, or a comma-separated spec per other seat in seat "
        'order; a key=value item continues the previous spec ("mcts:medium,ms=none,greedy"); '
        '";" also separates (default: mcts:medium)',
        type=nonempty,
    )
    p.add_argument("--seed", type=int, default=None, help="game seed (default: random)")
    p.add_argument("--teams", action="store_true", help="team variant (Osirium, 4 players)")
    p.add_argument(
        "--hint-bot",
        default="mcts:medium",
        metavar="SPEC",
        help="the bot that searches from your seat for 'hint' (default: mcts:medium)",
    )
    p.add_argument(
        "--server",
        metavar="ADDR",
        default=None,
        type=server_address,
        help="play through a running heka server (HOST:PORT)",
    )
    p.add_argument(
        "--save",
        metavar="PATH",
        default=None,
        type=nonempty,
        help="write the game's record (its seed and every action) to PATH when it ends or you quit, "
        "for heka review (a local game only)",
    )
    p.set_defaults(func=run)


def make_local_session(args: argparse.Namespace) -> LocalSession:
    """Build the local session from the command line (raises ``ValueError`` on bad input)."""
    from ai.api import split_bot_specs
    from engine import get_game

    game = get_game(args.game)
    options = {"teams": True} if args.teams else {}
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    state = game.new_initial_state(args.players, seed, options)
    n = state.num_players
    if not 0 <= args.seat < n:
        raise ValueError(f"--seat must be between 0 and {n - 1}")
    others = [p for p in range(n) if p != args.seat]
    specs = split_bot_specs(args.bots)  # "mcts:medium,ms=none": one spec with its settings
    if len(specs) == 1:
        specs = specs * len(others)
    if len(specs) != len(others):
        raise ValueError(f"--bots: give one spec, or one per other seat ({len(others)}), not {len(specs)}")
    bots = {p: (spec, _bot(spec, "--bots")) for p, spec in zip(others, specs, strict=True)}
    hint_spec = getattr(args, "hint_bot", "mcts:medium")
    return LocalSession(
        state, args.seat, bots, seed, hint=(hint_spec, _bot(hint_spec, "--hint-bot")), options=options
    )


def _bot(spec: str, flag: str) -> Any:
    """The bot of ``spec``, a bad spec's error naming the flag that gave it."""
    from ai.api import make_bot

    try:
        return make_bot(spec)
    except ValueError as exc:
        raise ValueError(f"{flag}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    save = getattr(args, "save", None)
    if getattr(args, "server", None) is not None:  # an empty one is refused, not a local game
        if save:
            # The server shows you another seat's secret moves (Aton's arrangements) as -1, so
            # such a game cannot be replayed from what you saw: ReviewGame reviews it.
            print(
                "heka play: --save records a local game; a game played through a server cannot be "
                "replayed from what it showed you (another seat's secret moves are hidden): its "
                "backend reviews it with ReviewGame",
                file=sys.stderr,
            )
            return 2
        from service.remote_play import run_remote

        code: int = run_remote(args)
        return code
    try:
        if save:
            check_writable(save, "--save")
        table = make_local_session(args)
    except ValueError as exc:
        print(f"heka play: {exc}", file=sys.stderr)
        return 2
    saved = True
    try:
        code = play_loop(table, sys.stdin, sys.stdout)
    finally:
        if save:
            saved = write_record(table, save)
    return code if saved else 1


def write_record(table: LocalSession, path: str) -> bool:
    """Write the game's record to ``path`` (``heka review`` reads it); False, said, when
    it cannot."""
    import json

    try:
        write_text(path, json.dumps(table.record()) + "\n")
    except OSError as exc:
        print(f"heka play: cannot write --save {path}: {exc.strerror}", file=sys.stderr)
        return False
    print(f"game record written to {path} (heka review {path})")
    return True
