"""The terminal play loop of ``heka play``, local or through a server.

:func:`play_loop` talks to a small :class:`Session` abstraction rather than to the engine,
so the same loop drives a game played in this process (``service.commands.play``'s
``LocalSession``) or held by a running heka server (``service.remote_play``).
"""

from __future__ import annotations

import dataclasses
import shutil
from typing import Protocol, TextIO

from service.play_help import help_lines, summarised

HELP = """commands:
  <number> or <text>   play that action (a unique start or part of it will do)
  ?, diag              how the last bot chose its move (its search's totals)
  hint                 a search from your seat: its most visited actions for you
  b, board             draw the board again
  l, list              list every legal action (a long list is shown by form)
  help                 this help, and every action form with an example
  q, quit              leave the game"""

#: A list of legal actions longer than this many lines is shown by form (``l`` lists all).
MAX_LIST_LINES = 20


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


@dataclasses.dataclass(frozen=True, slots=True)
class Search:
    """One search's diagnostics as the person may see them (``ai.api.Diagnostics``, or the
    server's ``SearchDiagnostics``)."""

    iterations: int
    elapsed_seconds: float
    iterations_per_second: float
    workers: int
    interrupted: bool
    #: The chosen action's text (``None``: a secret decision of another seat).
    chosen: str | None
    #: The root statistics: (visits, mean value, action text), most visited first; empty
    #: when they are not the person's to see.
    visited: tuple[tuple[int, float, str], ...] = ()
    chosen_value: float | None = None


NO_SEARCH = "no search statistics: a single choice, or a bot that does not search"
#: Why another seat's statistics are not shown (docs/security.md, "What a response reveals").
PRIVATE_NOTE = (
    "  its statistics are private to seat {seat} (they can tell what it holds; servers\n"
    "  send other seats only these totals): type hint for a search from your seat"
)


def search_text(head: str, search: Search, *, private_to: int | None = None) -> str:
    """Readable diagnostics: the totals, the chosen action, and either the most visited
    actions or, with ``private_to``, why they are not shown."""
    chosen = search.chosen or "(a secret decision)"
    if search.iterations == 0 and not search.visited:
        return f"{head}:\n  chosen: {chosen}\n  {NO_SEARCH}"
    lines = [
        f"{head}:",
        f"  {search.iterations} iterations in {search.elapsed_seconds:.2f} s "
        f"({search.iterations_per_second:,.0f}/s), {search.workers} worker(s)"
        + (", stopped by the deadline" if search.interrupted else ""),
    ]
    value = "" if search.chosen_value is None else f" (value {search.chosen_value:+.3f})"
    lines.append(f"  chosen: {chosen}{value}")
    if private_to is not None:
        lines.append(PRIVATE_NOTE.format(seat=private_to))
    elif search.visited:
        lines.append("  most visited:")
        lines.extend(f"    {n:7d} visits  {mean:+.3f}  {text}" for n, mean, text in search.visited)
    return "\n".join(lines)


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

    def game_name(self) -> str:
        """The game's registry name (``aton``, ``osirium``): which action forms help lists."""
        ...

    def hint(self) -> str:
        """A search from the person's own seat, as readable text: private to that seat, so
        with its most visited actions."""
        ...


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


def _action_lines(legal: list[tuple[int, str]], width: int, *, full: bool = False) -> list[str]:
    """The numbered legal actions in columns; a list longer than :data:`MAX_LIST_LINES`
    lines (Osirium's placements) by form unless ``full``."""
    lines = _columns([f"{i:>3}. {t}" for i, (_, t) in enumerate(legal, 1)], width)
    if full or len(lines) <= MAX_LIST_LINES:
        return lines
    return [
        *summarised([t for _, t in legal]),
        f"({len(legal)} actions; a run of one form shows its first and last: l lists all,",
        " help explains each form)",
    ]


#: The longest line read as a command (an action text is under a hundred characters).
MAX_LINE = 4096


def _choose(text: str, legal: list[tuple[int, str]], session: Session) -> tuple[int | None, str]:
    """The action the person meant, or ``None`` and why not."""
    if text.isascii() and text.isdigit():
        n = int(text) if len(text) <= 9 else 0
        if 1 <= n <= len(legal):
            return legal[n - 1][0], ""
        return None, f"no action number {_short(text)}: choose 1 to {len(legal)}"
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
    return None, f"unknown action {_short(text)!r} (type a number, an action text, or help)"


def _short(text: str, most: int = 40) -> str:
    """``text`` cut to ``most`` characters for a message."""
    return text if len(text) <= most else text[: most - 1] + "…"


def play_loop(session: Session, inp: TextIO, out: TextIO) -> int:
    """Play to the end (or until ``quit`` / end of input); returns the exit code."""

    def say(text: str = "") -> None:
        out.write(text + "\n")
        out.flush()

    width = min(shutil.get_terminal_size((80, 24)).columns, 120)
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
            for line in _action_lines(legal, width):
                say(line)
            show_board = False
        out.write(f"seat {session.seat} [{session.decision()}, 1-{len(legal)}]> ")
        out.flush()
        raw = inp.readline(MAX_LINE + 1)
        if len(raw) > MAX_LINE and not raw.endswith("\n"):  # drop the rest of an endless line
            while (more := inp.readline(MAX_LINE)) and not more.endswith("\n"):
                pass
            say(
                f"a line of over {MAX_LINE:,} characters is no action "
                "(type a number, an action text, or help)"
            )
            continue
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
            for line in help_lines(session.game_name(), [t for _, t in legal], width):
                say(line)
            continue
        if cmd in ("?", "diag", "diagnostics"):
            say(last_diag)
            continue
        if cmd in ("hint", "suggest"):
            say(session.hint())
            continue
        if cmd in ("b", "board"):
            say(session.view_text())
            continue
        if cmd in ("l", "list"):
            for line in _action_lines(legal, width, full=True):
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
