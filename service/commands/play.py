"""``heka play``: a person plays a game in the terminal against bots.

The board is drawn from the person's view (``view(seat).to_text()``), their legal actions are
listed by number and text (answer with either), events are shown as they happen (only those
the person may see), ``?`` shows the last bot's search diagnostics, ``help`` and ``quit``.

The game loop (:func:`service.play_loop.play_loop`) talks to a small ``Session``
abstraction rather than to the engine, so the same loop can drive a game held by a running
heka server: ``--server`` hands over to ``service.remote_play.run_remote``.
:class:`LocalSession` plays with the engine and the bots in this process.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from service.play_loop import BotTurn, play_loop

if TYPE_CHECKING:
    from ai.api import Bot, Diagnostics
    from engine.core import Event, State

# ---------------------------------------------------------------------------------------
# The local session
# ---------------------------------------------------------------------------------------


class LocalSession:
    def __init__(self, state: State, seat: int, bots: dict[int, tuple[str, Bot]], seed: int) -> None:
        self.state = state
        self.seat = seat
        self.bots = bots
        self.seed = seed
        self.rng = random.Random(seed)

    def title(self) -> str:
        return f"{self.state.game.descriptor.title} (seed {self.seed})"

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
        return self._visible(self.state.apply_action(action))

    def bot_turn(self) -> BotTurn:
        from engine.core import SECRET_ACTION

        player = self.state.current_player()
        spec, bot = self.bots[player]
        decision_name = self.state.decision()
        decision = bot.choose(self.state, seed=self.rng.getrandbits(63))
        secret = self.state.public_action(decision.action) == SECRET_ACTION
        text = None if secret else self.state.action_to_string(decision.action)
        diag = self._diagnostics_text(
            f"seat {player} ({spec}), decision {decision_name}",
            player,
            decision.action,
            decision.diagnostics,
            secret,
        )
        events = self._visible(self.state.apply_action(decision.action))
        return BotTurn(player, spec, text, decision_name, tuple(events), diag)

    def _diagnostics_text(self, head: str, player: int, action: int, d: Diagnostics, secret: bool) -> str:
        from engine.core import SECRET_ACTION

        if d.iterations == 0 and not d.actions:
            return f"{head}: no search statistics (this bot does not search)"
        lines = [
            f"{head}: {d.iterations} iterations in {d.elapsed_seconds:.2f} s "
            f"({d.iterations_per_second:,.0f}/s), {d.workers} worker(s)"
            + (", stopped by the deadline" if d.interrupted else "")
        ]
        if secret:
            # The statistics of a secret decision would reveal the bot's hidden cards.
            lines.append("  (a secret decision: its action statistics stay hidden)")
            return "\n".join(lines)
        lines.append(f"  chosen: {self.state.action_to_string(action)} (value {d.chosen_value:+.3f})")
        lines.append("  most visited:")
        for stat in d.actions[:8]:
            text = self.state.action_to_string(stat.action)
            lines.append(f"    {stat.visits:7d} visits  {stat.mean_value:+.3f}  {text}")
        # The expected line, as far as it stays this bot's own public actions in the real
        # game (beyond that it would hint at what the bot believes about hidden cards).
        line = []
        probe = self.state.clone()
        for a in d.principal_variation:
            if probe.is_terminal() or probe.current_player() != player or a not in probe.legal_actions():
                break
            if probe.public_action(a) == SECRET_ACTION:
                break
            line.append(probe.action_to_string(a))
            probe.apply(a)
        if line:
            lines.append("  expected line: " + " -> ".join(line))
        return "\n".join(lines)

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
    p.add_argument("--game", default="aton", help="game name (default: aton)")
    p.add_argument("--players", type=int, default=None, help="player count (default: the game's minimum)")
    p.add_argument("--seat", type=int, default=0, help="your seat (default: 0)")
    p.add_argument(
        "--bots",
        default="mcts:medium",
        help="bot spec for every other seat, or a comma-separated spec per other seat in seat "
        "order (default: mcts:medium)",
    )
    p.add_argument("--seed", type=int, default=None, help="game seed (default: random)")
    p.add_argument("--teams", action="store_true", help="team variant (Osirium, 4 players)")
    p.add_argument("--server", metavar="ADDR", default=None, help="play through a running heka server")
    p.set_defaults(func=run)


def make_local_session(args: argparse.Namespace) -> LocalSession:
    """Build the local session from the command line (raises ``ValueError`` on bad input)."""
    from ai.api import make_bot
    from engine import get_game

    game = get_game(args.game)
    options = {"teams": True} if args.teams else {}
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    state = game.new_initial_state(args.players, seed, options)
    n = state.num_players
    if not 0 <= args.seat < n:
        raise ValueError(f"--seat must be between 0 and {n - 1}")
    others = [p for p in range(n) if p != args.seat]
    specs = [s.strip() for s in args.bots.split(",") if s.strip()]
    if len(specs) == 1:
        specs = specs * len(others)
    if len(specs) != len(others):
        raise ValueError(f"--bots: give one spec, or one per other seat ({len(others)}), not {len(specs)}")
    bots = {p: (spec, make_bot(spec)) for p, spec in zip(others, specs, strict=True)}
    return LocalSession(state, args.seat, bots, seed)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "server", None):
        from service.remote_play import run_remote

        code: int = run_remote(args)
        return code
    try:
        session = make_local_session(args)
    except ValueError as exc:
        print(f"heka play: {exc}", file=sys.stderr)
        return 2
    return play_loop(session, sys.stdin, sys.stdout)
