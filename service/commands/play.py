"""``heka play``: a person plays a game in the terminal against bots.

The board is drawn from the person's view (``view(seat).to_text()``), their legal actions are
listed by number and text (answer with either), events are shown as they happen (only those
the person may see), ``?`` shows the last bot's search diagnostics, ``help`` and ``quit``.

The game loop (:func:`play_loop`) talks to a small :class:`Session` abstraction rather than to
the engine, so the same loop can drive a game held by a running heka server: ``--server``
hands over to ``service.remote_play.run_remote``. :class:`LocalSession` plays with the engine
and the bots in this process.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import shutil
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, TextIO

if TYPE_CHECKING:
    from ai.api import Bot, Diagnostics
    from engine.core import Event, State

HELP = """commands:
  <number> or <action text>   play that action (a unique start of the text is enough)
  ?, diag                     the last bot's diagnostics (search statistics)
  b, board                    draw the board again
  l, list                     list your legal actions again
  help                        this help
  q, quit                     leave the game"""


# ---------------------------------------------------------------------------------------
# The session abstraction
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class BotTurn:
    """What the person learns of one bot decision."""

    player: int
    bot: str
    #: The action text, or ``None`` for a secret decision (Aton's exchange / arrangement).
    action_text: str | None
    decision: str
    #: Texts of the events the person may see.
    events: tuple[str, ...]
    #: Readable diagnostics (already filtered of what the person may not see).
    diagnostics: str


class Session(Protocol):
    """One game as seen by the person in ``seat``: everything the play loop needs."""

    seat: int

    def title(self) -> str: ...

    def players_text(self) -> str:
        """Who sits where (shown once at the start)."""
        ...

    def is_over(self) -> bool: ...

    def current_player(self) -> int: ...

    def decision(self) -> str: ...

    def view_text(self) -> str:
        """The board from the person's view."""
        ...

    def legal_actions(self) -> list[tuple[int, str]]:
        """The person's legal actions (id, text), when it is their turn."""
        ...

    def parse_action(self, text: str) -> int:
        """An action id from its text; raise ``ValueError`` with a helpful message."""
        ...

    def apply(self, action: int) -> list[str]:
        """Play the person's action; the texts of the events they may see."""
        ...

    def bot_turn(self) -> BotTurn:
        """Let the bot to act play one decision."""
        ...

    def outcome_text(self) -> str: ...


# ---------------------------------------------------------------------------------------
# Local session: engine and bots in this process
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
# The loop
# ---------------------------------------------------------------------------------------


def _columns(items: list[str], width: int) -> list[str]:
    cell = max(len(s) for s in items) + 2
    per_row = max(1, width // cell)
    if len(items) <= 10 or per_row == 1:
        return items
    rows = (len(items) + per_row - 1) // per_row
    out = []
    for r in range(rows):
        row = [items[c * rows + r] for c in range(per_row) if c * rows + r < len(items)]
        out.append("".join(x.ljust(cell) for x in row))
    return [line.rstrip() for line in out]


def _choose(text: str, legal: list[tuple[int, str]], session: Session) -> tuple[int | None, str]:
    """The action the person meant, or ``None`` and why not."""
    if text.isdigit():
        n = int(text)
        if 1 <= n <= len(legal):
            return legal[n - 1][0], ""
        return None, f"no action number {n}: choose 1 to {len(legal)}"
    ids = {a for a, _ in legal}
    try:
        action = session.parse_action(text)
    except ValueError:
        action = None
    if action is not None:
        if action in ids:
            return action, ""
        return None, f"{text!r} is not legal now"
    low = text.lower()
    matches = [(a, t) for a, t in legal if t.lower().startswith(low)] or [
        (a, t) for a, t in legal if low in t.lower()
    ]
    if len(matches) == 1:
        return matches[0][0], ""
    if matches:
        sample = "; ".join(t for _, t in matches[:5])
        more = "; ..." if len(matches) > 5 else ""
        return None, f"{text!r} matches {len(matches)} actions ({sample}{more})"
    return None, f"unknown action {text!r} (type a number, an action text, or help)"


def play_loop(session: Session, inp: TextIO, out: TextIO) -> int:
    """Play to the end (or until ``quit`` / end of input); returns the exit code."""

    def say(text: str = "") -> None:
        out.write(text + "\n")
        out.flush()

    width = min(shutil.get_terminal_size((100, 24)).columns, 120)
    say(f"=== {session.title()}: {session.players_text()} ===")
    say("type help for commands")
    last_diag = "no bot has played yet"
    show_board = True
    while not session.is_over():
        player = session.current_player()
        if player != session.seat:
            turn = session.bot_turn()
            last_diag = turn.diagnostics
            what = turn.action_text if turn.action_text is not None else f"(secret {turn.decision} decision)"
            say(f"seat {turn.player} ({turn.bot}): {what}")
            for e in turn.events:
                say(f"    {e}")
            show_board = True
            continue
        legal = session.legal_actions()
        if show_board:
            say("")
            say(session.view_text())
            say("")
            say(f"your decision: {session.decision()}")
            for line in _columns([f"{i:>3}. {t}" for i, (_, t) in enumerate(legal, 1)], width):
                say(line)
            show_board = False
        out.write(f"seat {session.seat} [{session.decision()}, 1-{len(legal)}]> ")
        out.flush()
        raw = inp.readline()
        if raw == "":
            say("\nend of input: leaving the game")
            return 0
        text = raw.strip()
        if not text:
            continue
        cmd = text.lower()
        if cmd in ("q", "quit", "exit"):
            say("leaving the game")
            return 0
        if cmd in ("help", "h"):
            say(HELP)
            continue
        if cmd in ("?", "diag", "diagnostics"):
            say(last_diag)
            continue
        if cmd in ("b", "board"):
            say(session.view_text())
            continue
        if cmd in ("l", "list"):
            for line in _columns([f"{i:>3}. {t}" for i, (_, t) in enumerate(legal, 1)], width):
                say(line)
            continue
        action, why = _choose(text, legal, session)
        if action is None:
            say(why)
            continue
        say(f"you: {dict(legal)[action]}")
        for e in session.apply(action):
            say(f"    {e}")
        show_board = True
    say("")
    say(session.view_text())
    say("")
    say(f"=== game over === {session.outcome_text()}")
    return 0


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
