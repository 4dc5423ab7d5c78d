"""`heka play` driven through stdin: a whole game against bots, commands, end of input."""

from __future__ import annotations

import io
import re

import pytest

from service.cli import main


def play(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str], lines: list[str]
) -> tuple[int, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(line + "\n" for line in lines)))
    code = main(["play", *args])
    return code, capsys.readouterr().out


def test_play_aton_to_the_end_against_a_random_bot(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = ["help", "?", "zzz", "999", "b", "l"] + ["1"] * 2000
    code, out = play(monkeypatch, capsys, ["--game", "aton", "--bots", "random", "--seed", "3"], lines)
    assert code == 0
    assert "=== Aton (seed 3): seat 0: you, seat 1: random ===" in out
    assert "commands:" in out  # help
    assert "no bot has played yet" in out  # ? before any bot move
    assert "unknown action 'zzz'" in out
    assert "no action number 999" in out
    assert "=== game over ===" in out
    assert re.search(r"You (win|lose)|A draw", out)
    # The board is drawn from seat 0's view; the opponent's hand and arrangement never show.
    assert "view: seat 0" in out and "view: public" not in out
    assert "seat 1's hand" not in out and "seat 1 arranges" not in out
    assert "seat 1 (random): (secret arrange decision)" in out
    # The person's own private events are shown.
    assert "seat 0's hand" in out or "seat 0 arranges" in out


def test_play_accepts_action_texts_and_unique_prefixes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Aton round 1 starts with the exchange decision: "keep" by text, then "arr" is ambiguous.
    code, out = play(
        monkeypatch, capsys, ["--game", "aton", "--bots", "random", "--seed", "1"], ["KEEP", "arr", "quit"]
    )
    assert code == 0
    assert "you: keep" in out
    assert "'arr' matches" in out
    assert out.rstrip().endswith("leaving the game")


def test_play_ends_cleanly_at_end_of_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = play(
        monkeypatch,
        capsys,
        ["--game", "osirium", "--players", "3", "--seat", "1", "--bots", "random,greedy", "--seed", "4"],
        ["help"],
    )
    assert code == 0
    assert "seat 0: random, seat 1: you, seat 2: greedy" in out
    assert "seat 0 (random):" in out  # seat 0 played before the person's first turn
    assert "end of input" in out


def test_play_osirium_to_the_end(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--game", "osirium", "--bots", "random", "--seed", "2"]
    code, out = play(monkeypatch, capsys, args, ["1"] * 3000)
    assert code == 0
    assert "Osirium — view of seat 0" in out
    assert "=== game over ===" in out and "scores: seat 0:" in out


def test_play_shows_a_searching_bot_totals_and_keeps_its_statistics_private(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``?``: how the last bot chose (its totals and its move); its root statistics name
    actions from its hand, so they stay private to its seat, as a server keeps them."""
    lines = []
    for _ in range(30):
        lines += ["?", "1"]
    code, out = play(
        monkeypatch,
        capsys,
        ["--game", "aton", "--bots", "mcts:iterations=10", "--seed", "2"],
        [*lines, "quit"],
    )
    assert code == 0
    assert re.search(r"seat 1 \(mcts:iterations=10\), decision place:\n  \d+ iterations in", out)
    assert "chosen: place T" in out
    assert "its statistics are private to seat 1" in out and "type hint for a search from your seat" in out
    assert "most visited" not in out


def test_play_hides_a_secret_bot_decision(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Seat 1 plays; seat 0 (the bot) commits its exchange and arrangement secretly first.
    code, out = play(
        monkeypatch,
        capsys,
        ["--game", "aton", "--seat", "1", "--bots", "mcts:iterations=20", "--seed", "5"],
        ["?", "quit"],
    )
    assert code == 0
    assert "chosen: (a secret decision)" in out
    assert "most visited" not in out


def _screen(out: str) -> list[str]:
    """The lines as a terminal shows them: the prompt ends with the person's input line."""
    return re.sub(r"seat \d \[[^\]]*\]> ", "\n", out).splitlines()


def _hint_block(out: str) -> list[str]:
    lines = out.split("hint for seat 0 (mcts:iterations=40):", 1)[1].splitlines()
    block = []
    for line in lines[1:]:
        if not line.startswith("  "):
            break
        block.append(line)
    return block


def test_play_hint_lists_the_most_visited_of_the_persons_own_actions(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``hint``: a search from the person's own seat, private to it, so with its statistics;
    asking for one does not change the bots' game."""
    args = [
        "--game",
        "aton",
        "--bots",
        "mcts:iterations=10",
        "--hint-bot",
        "mcts:iterations=40",
        "--seed",
        "3",
    ]
    # keep, arrange, then the first placement decision: hint there.
    code, out = play(monkeypatch, capsys, args, ["keep", "1", "hint", "1", "quit"])
    assert code == 0
    block = _hint_block(out)
    assert block[0].startswith("  40 iterations in")
    assert block[1].startswith("  chosen: place T") and "(value " in block[1]
    assert block[2] == "  most visited:"
    visited = [line.split("  ")[-1] for line in block[3:]]
    assert visited and all(t.startswith("place T") for t in visited)
    listed = re.findall(r"\d+\. (place T\d\.\d+)", out.split("your decision: place", 1)[1])
    assert set(visited) <= set(listed)  # the person's own legal actions
    # The same game without the hint: the bots play the same moves.
    code, plain = play(monkeypatch, capsys, args, ["keep", "1", "1", "quit"])
    bot_moves = [ln for ln in out.splitlines() if ln.startswith("seat 1 (")]
    assert bot_moves == [ln for ln in plain.splitlines() if ln.startswith("seat 1 (")]


@pytest.mark.parametrize(
    ("game", "words"),
    [
        ("aton", ["keep", "exchange", "arrange", "remove", "place", "reset"]),
        (
            "osirium",
            [
                "pass",
                "place",
                "draw",
                "cast",
                "break",
                "refill",
                "end",
                "clear",
                "isis",
                "anubis",
                "bastet",
                "seth",
            ],
        ),
    ],
)
def test_play_help_explains_every_action_form(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], game: str, words: list[str]
) -> None:
    code, out = play(
        monkeypatch, capsys, ["--game", game, "--bots", "random", "--seed", "1"], ["help", "quit"]
    )
    assert code == 0
    forms = out.split("actions (* = a form you may play now", 1)[1].splitlines()[1:]
    heads = [line[4:].split()[0] for line in forms if line.startswith(("  * ", "    ")) and line[4] != " "]
    assert heads == words
    assert max(map(len, _screen(out))) <= 80


def test_play_help_explains_arrange_with_one_of_the_legal_arrangements(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = play(
        monkeypatch, capsys, ["--game", "aton", "--bots", "random", "--seed", "1"], ["keep", "help", "quit"]
    )
    assert code == 0
    helped = " ".join(out.split("actions (* = a form", 1)[1].split())
    m = re.search(
        r"\* arrange (\d)(\d)(\d)(\d) one card on each of cartouches 1-4, in that order: (.*?)\(A3\.3", helped
    )
    assert m is not None, helped
    c1, c2, c3, c4, text = m.groups()
    assert f"arrange {c1}{c2}{c3}{c4}" in out.split("your decision: arrange", 1)[1]  # a legal action
    assert f"{c1} on cartouche 1" in text and f"{c2} on cartouche 2" in text
    assert f"{c3} on cartouche 3" in text and f"{c4} on cartouche 4" in text
    # The forms not legal now keep a fixed example: the square of a placement by its number.
    assert "place T2.6 put one of your counters on square 6 of temple 2 (bonus +1)" in helped


def test_play_osirium_lists_a_long_action_list_by_form(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = play(
        monkeypatch, capsys, ["--game", "osirium", "--bots", "random", "--seed", "7"], ["l", "quit"]
    )
    assert code == 0
    first, full = out.split("seat 0 [main, 1-193]> ", 1)
    shown = first.split("your decision: main", 1)[1].splitlines()[1:]
    assert shown[0] == "  1. pass"
    assert shown[1] == "  2-33. place blue-straight@0,0 r0 ... @3,3 r90 (32 actions)"
    assert len(shown) <= 10 and max(map(len, _screen(first))) <= 80
    # "l" lists every action by number.
    assert "193. place yellow-straight@3,3 r90" in full and " 97. place blue-tee@3,3 r270" in full


def test_play_rejects_bad_settings(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["play", "--game", "aton", "--seat", "2", "--bots", "random"]) == 2
    assert "--seat" in capsys.readouterr().err
    assert main(["play", "--game", "osirium", "--players", "3", "--bots", "random,random,random"]) == 2
    assert "one per other seat" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:  # refused by the flag's own type
        main(["play", "--game", "chess"])
    assert info.value.code == 2
    assert "unknown game" in capsys.readouterr().err
    assert main(["play", "--game", "aton", "--bots", "genius"]) == 2
    assert "heka play: --bots: unknown bot kind" in capsys.readouterr().err
    assert main(["play", "--game", "aton", "--hint-bot", "genius"]) == 2
    assert "heka play: --hint-bot: unknown bot kind" in capsys.readouterr().err


def test_play_registers_the_server_flag() -> None:
    from service.cli import build_parser

    args = build_parser().parse_args(["play", "--server", "localhost:50051"])
    assert args.server == "localhost:50051"


def test_play_reads_bot_specs_with_settings_as_arena_does(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # "mcts:iterations=5,ms=none" is one spec with two settings, not two specs.
    args = [
        "--game",
        "osirium",
        "--players",
        "3",
        "--bots",
        "mcts:iterations=5,ms=none,random",
        "--seed",
        "2",
    ]
    code, out = play(monkeypatch, capsys, args, ["q"])
    assert code == 0
    assert "seat 1: mcts:iterations=5,ms=none, seat 2: random" in out
    code, _ = play(monkeypatch, capsys, ["--bots", "mcts:iterations=5,ms=none", "--seed", "2"], ["q"])
    assert code == 0


def test_play_answers_huge_numbers_and_endless_lines_with_a_message(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = ["1" * 3000, "a" * 20000, "q"]
    code, out = play(monkeypatch, capsys, ["--game", "aton", "--bots", "random", "--seed", "3"], lines)
    assert code == 0
    assert "no action number 111111111111111111111111111111111111111…: choose 1 to" in out
    assert "a line of over 4,096 characters is no action" in out
    assert len(out) < 20000  # no echo of the whole line
