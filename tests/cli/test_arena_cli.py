"""`heka arena` end to end: table, ratings, JSON, settings errors."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from service.cli import main


def test_arena_aton_prints_the_table_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "out" / "arena.json"
    code = main(
        [
            "arena",
            "--game",
            "aton",
            "--bots",
            "greedy,random",
            "--games",
            "6",
            "--seed",
            "2",
            "--workers",
            "2",
            "--json",
            str(path),
            "--no-progress",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    row = re.search(r"greedy vs random\s+6\s+([\d.]+)% \[", out)
    assert row is not None
    assert "Elo (Bradley–Terry" in out and "random = 0" in out
    data = json.loads(path.read_text())
    assert data["game"] == "aton" and data["bots"] == ["greedy", "random"]
    assert data["games_played"] == 6 and len(data["games"]) == 6
    (pairing,) = data["pairings"]
    assert sum(pairing[k]["successes"] for k in ("a_wins", "draws", "b_wins")) == 6
    assert float(row.group(1)) == pytest.approx(100 * pairing["a_wins"]["rate"], abs=0.05)
    seats = [tuple(g["seats"]) for g in data["games"]]
    assert seats.count(("greedy", "random")) == seats.count(("random", "greedy")) == 3
    names = {r["name"]: r for r in data["ratings"]["bots"]}
    assert names["random"]["elo"] == 0.0 and names["greedy"]["elo"] > 0
    assert all("deal_seed" in g and "bot_seed" in g for g in data["games"])


def test_arena_four_player_one_vs_rest(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "arena",
            "--game",
            "osirium",
            "--players",
            "4",
            "--bots",
            "greedy,random",
            "--games",
            "4",
            "--lineup",
            "one-vs-rest",
            "--seed",
            "1",
            "--no-progress",
        ]
    )
    assert code == 0
    captured = capsys.readouterr()
    assert "osirium, 4 players: 4/4 games, lineup one-vs-rest" in captured.out
    assert "1 pairing(s) x 4 games" in captured.err


def test_arena_progress_bar_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "--game", "aton", "--bots", "random,greedy", "--games", "3", "--seed", "1"]) == 0
    captured = capsys.readouterr()
    assert "3/3 games" in captured.err and "eta" in captured.err
    assert "games  " not in captured.out.split("pairing")[0]
    # 3 games per pairing cannot balance the two seats: the arena says so.
    assert "not a multiple of the seat block length" in captured.err


@pytest.mark.parametrize(
    "args,message",
    [
        (["--game", "chess", "--bots", "random,greedy"], "unknown game"),
        (["--game", "aton", "--bots", "random"], "at least two"),
        (["--game", "aton", "--bots", "random,random"], "distinct"),
        (["--game", "aton", "--bots", "random,wizard"], "unknown bot kind"),
        (["--game", "aton", "--bots", "random,greedy", "--players", "3"], "players"),
        (["--game", "aton", "--bots", "random,greedy", "--games", "0"], "at least 1"),
        (["--game", "osirium", "--bots", "random,greedy", "--teams"], "4 players"),
    ],
)
def test_arena_rejects_bad_settings(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["arena", *args, "--no-progress"])
    except SystemExit as exc:  # refused by the flag's own type (--game)
        code = int(str(exc.code))
    assert code == 2
    assert message in capsys.readouterr().err


def test_a_game_named_in_any_case_is_the_game_in_every_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--game ATON` plays Aton, and what the run writes names it as the service loads it:
    a ladder table named `ATON-2p.json`, its "game" "ATON", was never loaded."""
    table = tmp_path / "table.json"
    run = tmp_path / "run.json"
    args = [
        "arena",
        "--ladder",
        "--game",
        "ATON",
        "--anchors",
        "random;greedy",
        "--bots",
        "mcts:iterations=2,ms=none",
    ]
    assert main([*args, "--games", "2", "--ratings", str(table), "--json", str(run), "--no-progress"]) == 0
    assert json.loads(table.read_text())["game"] == "aton"
    assert json.loads(run.read_text())["game"] == "aton"
    capsys.readouterr()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_arena_reports_and_writes_the_games_played(tmp_path: Path, sig: int) -> None:
    """Started in the background (SIGINT ignored by default there), stopped by a signal:
    the partial table is printed and the JSON written, marked interrupted."""
    path = tmp_path / "partial.json"
    command = (
        f"trap '' INT; exec '{sys.executable}' -m service.cli arena --game aton "
        f"--bots random,greedy --games 100000 --seed 1 --workers 2 --json '{path}'"
    )
    proc = subprocess.Popen(["sh", "-c", command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    while "0/100000 games" not in proc.stderr.readline():
        pass
    time.sleep(1.0)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "INTERRUPTED: partial results" in out
    data = json.loads(path.read_text())
    assert data["interrupted"] is True
    assert data["games_played"] == len(data["games"]) < 200000


def test_arena_resume_plays_only_the_missing_games(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "run.json"
    base = ["arena", "--game", "aton", "--bots", "greedy,random", "--seed", "3", "--no-progress"]
    assert main([*base, "--games", "4", "--json", str(path)]) == 0
    first = json.loads(path.read_text())
    capsys.readouterr()
    # The same file is read, extended to 6 games per pairing, and rewritten.
    assert main([*base, "--games", "6", "--json", str(path), "--resume", str(path)]) == 0
    assert "resuming: 4 game(s) kept" in capsys.readouterr().err
    data = json.loads(path.read_text())
    assert data["games_played"] == 6 and [g["index"] for g in data["games"]] == list(range(6))
    assert data["games"][:4] == first["games"]  # kept as they were (times included)
    # A copy saved by an editor that marks UTF-8 with a byte-order mark resumes the same.
    marked = tmp_path / "marked.json"
    marked.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert main([*base, "--games", "6", "--resume", str(marked)]) == 0
    assert "resuming: 6 game(s) kept" in capsys.readouterr().err
    # A file of another arena is refused, and nothing is played.
    code = main([*base, "--games", "6", "--bots", "random,greedy", "--resume", str(path)])
    assert code == 2
    assert f"cannot resume from {path}: the earlier run's bots" in capsys.readouterr().err
    # --resume without PATH: the --json file if there is one (a job run again), else a new run.
    again = tmp_path / "again.json"
    assert main([*base, "--games", "3", "--json", str(again), "--resume"]) == 0
    assert f"no earlier run in {again}: a new run" in capsys.readouterr().err
    assert main([*base, "--games", "5", "--json", str(again), "--resume"]) == 0
    assert "resuming: 3 game(s) kept" in capsys.readouterr().err
    replayed = json.loads(again.read_text())["games"]
    assert [g["actions"] for g in replayed] == [
        g["actions"] for g in json.loads(path.read_text())["games"][:5]
    ]
    assert main([*base, "--resume"]) == 2
    assert "--resume without PATH resumes from the --json file" in capsys.readouterr().err
    missing = tmp_path / "missing.json"
    assert main([*base, "--resume", str(missing)]) == 2
    assert (
        f"cannot resume: --resume {missing}: cannot read it (No such file or directory)"
        in capsys.readouterr().err
    )


def _bad_copy(path: Path, tmp_path: Path, change: Any) -> Path:
    data = json.loads(path.read_text())
    change(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    return bad


@pytest.mark.parametrize(
    "change,message",
    [
        (lambda d: d["games"][0].update(winners=[7]), "game 0: 'winners' must be seats 0..1, not [7]"),
        (
            lambda d: d["games"][0].update(returns=[1.0]),
            "game 0: 'returns' must have one entry per seat (2), not 1",
        ),
        (
            lambda d: d["games"][1].update(returns=["nan", 1]),
            "game 1: 'returns' must hold finite numbers, not 'nan'",
        ),
        (lambda d: d["games"][0].update(index=0.7), "game 0: 'index' must be an integer >= 0, not 0.7"),
        (lambda d: d["games"][0].update(returns=[5.0, -7.0]), "'returns' must hold numbers >= -1, not -7.0"),
        (
            lambda d: d["games"][0].update(returns=[5.0, -1.0]),
            "'returns' must lie in [-1, 1], not [5.0, -1.0]",
        ),
        (
            lambda d: d["games"][0].update(winners=[0], returns=[-1.0, 1.0]),
            "[0] disagree with 'returns' [-1.0, 1.0]",
        ),
        (lambda d: d["games"][0].update(winners=[], returns=[-1.0, 1.0]), "[] disagree with 'returns'"),
        (
            lambda d: d["games"][0].update(think_seconds=[]),
            "'think_seconds' must have one entry per seat (2), not 0",
        ),
        (lambda d: d["games"][0].update(scores=[1.5, 2]), "'scores' must hold integers >= 0, not 1.5"),
        (lambda d: d.update(seconds=None), "'seconds' must be a number of seconds, not None"),
        (lambda d: d.clear(), "not an arena results file"),
        (lambda d: d.update(games=5), "not an arena results file"),
    ],
)
def test_a_resumed_file_with_a_bad_record_is_refused_naming_game_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any, message: str
) -> None:
    path = tmp_path / "run.json"
    base = [
        "arena",
        "--game",
        "aton",
        "--bots",
        "greedy,random",
        "--seed",
        "3",
        "--no-progress",
        "--games",
        "2",
    ]
    assert main([*base, "--json", str(path)]) == 0
    capsys.readouterr()
    bad = _bad_copy(path, tmp_path, change)
    assert main([*base, "--resume", str(bad)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(bad) in err and "Traceback" not in err
    assert "pairing(s)" not in err  # refused before the run starts


LADDER_TINY = ["--ladder", "--anchors", "random;greedy", "--bots", "mcts:iterations=2,ms=none"]


def test_inputs_and_outputs_are_checked_before_any_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["arena", "--game", "aton", "--bots", "greedy,random", "--games", "2", "--no-progress"]
    folder = tmp_path / "folder"
    folder.mkdir()
    afile = tmp_path / "afile.json"
    afile.write_text("{}")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00")
    cases = [
        (["--json", str(folder)], f"cannot write --json {folder}: it is a folder"),
        (["--json", str(afile / "x.json")], f"{afile} is a file, not a folder"),
        ([*LADDER_TINY, "--ratings", str(folder)], f"cannot write --ratings {folder}: it is a folder"),
        (["--resume", str(binary)], f"--resume {binary}: not a text (UTF-8) file"),
        (["--resume", str(folder)], f"--resume {folder}: is a folder, not a file"),
        (["--ratings", "r.json"], "--ratings goes with --ladder"),
        (["--anchors", "random;greedy"], "--anchors goes with --ladder"),
        (["--games", "1000000000000"], "a run plays at most 1,000,000"),
        (["--check-scale", "random"], "--check-scale goes with --check TABLE"),
        ([*LADDER_TINY, "--anchors", "random;greedy;random"], "--anchors names random twice"),
        ([*LADDER_TINY, "--anchors", "random;;greedy"], "--anchors: an empty bot spec in 'random;;greedy'"),
    ]  # fmt: skip
    for extra, message in cases:
        assert main([*base, *extra]) == 2, extra
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (extra, err)
        assert "pairing(s)" not in err, extra  # nothing started
    assert not list(tmp_path.glob("**/*.tmp"))


@pytest.mark.parametrize(
    ("bots", "message"),
    [
        ("random,,greedy", "--bots: an empty bot spec in 'random,,greedy'"),
        ("random,greedy,", "--bots: an empty bot spec in 'random,greedy,'"),
        (";random;greedy", "--bots: an empty bot spec"),
        ("mcts:,random", "--bots: bot spec 'mcts:' has nothing after its ':' (write 'mcts')"),
    ],
)
def test_a_bot_list_that_lost_a_spec_is_refused_not_shortened(
    bots: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["arena", "--bots", bots, "--games", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and "pairing(s)" not in err, err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        *[
            ([command, "--seed", seed], f"argument --seed: a seed is 0..2^64-1, got {seed}")
            for command in ("arena", "simulate", "train")
            for seed in ("-1", str(2**64))
        ],
        *[
            ([command, "--games", games], f"argument --games: must be 1..1,000,000, got {games}")
            for command in ("simulate", "train")
            for games in ("0", "1000001", "100000000000000000000")
        ],
    ],
)
def test_seeds_and_game_counts_out_of_range_are_refused(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every command takes a game's seeds, 0..2^64-1 (arena and train took -1), and at most a
    million games (10^20 ran until killed)."""
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("command", ["arena", "review"])
@pytest.mark.parametrize("workers", ["0", "-3", "1025", "100000", "two"])
def test_workers_out_of_range_are_refused_before_anything_starts(
    command: str, workers: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--workers starts that many processes: 1..1024 (100,000 was accepted, and a run then
    ended in a traceback when the system refused the processes or their pipes)."""
    args = ["--bots", "random,greedy", "--games", "1"] if command == "arena" else ["record.json"]
    with pytest.raises(SystemExit) as exc:
        main([command, *args, "--workers", workers])
    assert exc.value.code == 2
    assert "argument --workers:" in capsys.readouterr().err


def test_a_system_that_refuses_the_workers_ends_the_run_with_a_message(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import ai.arena

    def refuse(*_args: object, **_kwargs: object) -> object:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(ai.arena, "WorkerPool", refuse)
    args = ["arena", "--bots", "random,greedy", "--games", "4", "--workers", "2", "--no-progress"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "cannot run the games on 2 worker(s): [Errno 24] Too many open files" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("flag", ["--json", "--anchors", "--ratings", "--bots", "--resume", "--check"])
def test_an_empty_value_is_an_error_not_the_default(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["arena", "--ladder", "--game", "aton", "--games", "2", "--no-progress", flag, ""])
    assert exc.value.code == 2
    assert f"argument {flag}: needs a value, not an empty string" in capsys.readouterr().err


LADDER = [
    "arena", "--ladder", "--game", "aton", "--games-per-pair", "2", "--seed", "2", "--no-progress",
    "--anchors", "random;greedy", "--bots", "mcts:iterations=10,ms=none;mcts:iterations=10,ms=none,temp=3",
]  # fmt: skip


def test_the_ladder_writes_a_rating_table_with_random_at_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ai.ladder import read_table

    ratings = tmp_path / "aton-2p.json"
    games = tmp_path / "games.json"
    assert main([*LADDER, "--ratings", str(ratings), "--json", str(games)]) == 0
    out = capsys.readouterr().out
    assert "rating ladder (provisional: 2 games per pair" in out
    assert re.search(r"random\s+\+0  anchor", out)
    table = read_table(ratings)
    assert table.provisional and table.games_per_pair == 2
    assert {b.name for b in table.bots} == {
        "random", "greedy", "mcts:iterations=10", "mcts:iterations=10,temp=3"
    }  # fmt: skip
    assert next(b.rating for b in table.bots if b.name == "random") == 0.0
    assert table.command.startswith("heka arena --ladder --game aton --players 2 --games-per-pair 2 --seed 2")
    data = json.loads(games.read_text())
    assert data["lineup"] == "ladder" and data["anchors"] == ["random", "greedy"]
    assert len(data["games"]) == 2 * (1 + 2 * 2)  # anchors' pair + 2 candidates x 2 anchors
    # Resumable like any arena: the same ladder with more games per pair keeps these games.
    assert main([*LADDER[:-4], *LADDER[-4:], "--games-per-pair", "4", "--json", str(games),
                 "--resume", str(games), "--ratings", str(ratings)]) == 0  # fmt: skip
    assert "resuming: 10 game(s) kept" in capsys.readouterr().err
    assert read_table(ratings).games_per_pair == 4
    # A finished run resumed plays nothing and writes the table again, whatever --workers.
    ratings.unlink()
    assert main([*LADDER, "--games-per-pair", "4", "--workers", "2", "--json", str(games),
                 "--resume", str(games), "--ratings", str(ratings)]) == 0  # fmt: skip
    assert "resuming: 20 game(s) kept" in capsys.readouterr().err
    assert read_table(ratings).games_per_pair == 4


def test_a_check_measures_the_bots_that_target_ratings_play(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ai.ladder import TOLERANCE, read_table

    ratings = tmp_path / "aton-2p.json"
    assert main([*LADDER, "--ratings", str(ratings)]) == 0
    table = read_table(ratings)
    capsys.readouterr()
    targets = [1, table.max_target // 2, table.max_target]
    games = tmp_path / "check.json"
    check = [*LADDER[:-4], "--anchors", "random;greedy", "--check", str(ratings), "--seed", "3"]
    arg = ",".join(map(str, targets))
    assert main([*check, "--targets", arg, "--json", str(games)]) == 0
    out = capsys.readouterr().out
    assert f"check of {ratings}" in out and f"of {len(targets)} within ±{TOLERANCE:.0f} Elo" in out
    data = json.loads(games.read_text())
    rows = data["check"]["rows"]
    mae = sum(abs(r["measured"] - r["target"]) for r in rows) / len(rows)
    assert abs(data["check"]["mean_absolute_error"] - mae) < 0.2
    assert [r["target"] for r in rows] == targets
    for r in rows:
        level = table.level_for(r["target"])
        assert (r["bot"], r["spec"], r["interpolated"]) == (level.name, level.spec, level.interpolated)
        assert r["within"] == (abs(r["measured"] - r["target"]) <= TOLERANCE)
        assert r["spec"] in data["bots"]
    assert rows[0]["interpolated"] and "temp=" in rows[0]["spec"]  # between random and a level
    # Resumable, and refused where it makes no sense.
    kept = len(data["games"])
    assert kept == 2 * (1 + 2 * len({r["spec"] for r in rows} - {"random", "greedy"}))
    more = ["--games-per-pair", "4", "--json", str(games), "--resume", str(games)]
    assert main([*check, "--targets", arg, *more]) == 0
    assert f"resuming: {kept} game(s) kept" in capsys.readouterr().err
    assert main([*check, "--targets", str(table.max_target + 1)]) == 2
    assert "out of range" in capsys.readouterr().err
    assert main([*check, "--bots", "greedy"]) == 2
    assert "no --bots" in capsys.readouterr().err
    assert main([*check, "--game", "osirium"]) == 2
    assert "rates aton with 2 players" in capsys.readouterr().err
    assert main(["arena", "--game", "aton", "--bots", "random,greedy", "--targets", "5"]) == 2
    assert "go with --ladder" in capsys.readouterr().err


def test_a_team_ladder_plays_each_pair_as_two_teams_and_ships_a_team_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ai import ladder
    from ai.ladder import read_table

    ratings, games = tmp_path / "teams.json", tmp_path / "games.json"
    argv = ["arena", "--ladder", "--game", "osirium", "--players", "4", "--teams", "--no-progress",
            "--anchors", "random;greedy", "--bots", "mcts:iterations=5,ms=none",
            "--games-per-pair", "2"]  # fmt: skip
    assert main([*argv, "--ratings", str(ratings), "--json", str(games)]) == 0
    data = json.loads(games.read_text())
    assert data["teams"] is True and data["lineup"] == "ladder"
    for p in data["pairings"]:
        assert p["block"] == [[p["a"], p["b"], p["a"], p["b"]], [p["b"], p["a"], p["b"], p["a"]]]
    assert "--teams" in read_table(ratings).command
    assert read_table(ratings).teams
    capsys.readouterr()
    # Shipped, it is the team table of its game and player count, beside the free-for-all one.
    monkeypatch.setattr(ladder, "TABLE_DIR", tmp_path / "ladders")
    assert main([*argv, "--ship"]) == 0
    shipped = ladder.table_path("osirium", 4, teams=True)
    assert shipped.name == "osirium-4p-teams.json" and read_table(shipped).teams
    assert not ladder.table_path("osirium", 4).exists()
    # Its check plays team games; a free-for-all table is not checked in team games.
    check = tmp_path / "check.json"
    base = ["arena", "--ladder", "--game", "osirium", "--no-progress", "--anchors", "random;greedy",
            "--games-per-pair", "2", "--seed", "2", "--targets", str(read_table(shipped).max_target),
            ]  # fmt: skip
    assert main([*base, "--check", str(shipped), "--json", str(check)]) == 0
    assert json.loads(check.read_text())["teams"] is True
    free = tmp_path / "free.json"
    free.write_text(json.dumps({**json.loads(shipped.read_text()), "teams": False}))
    assert main([*base, "--check", str(free), "--teams"]) == 2
    assert "rates free-for-all games: no --teams" in capsys.readouterr().err
    assert main([*argv, "--lineup", "one-vs-rest"]) == 2
    assert "own lineup" in capsys.readouterr().err


def test_the_nearest_design_measures_and_checks_with_the_same_games_per_candidate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ai.ladder import read_table

    ratings, games, check = tmp_path / "t.json", tmp_path / "g.json", tmp_path / "c.json"
    argv = ["arena", "--ladder", "--game", "aton", "--no-progress", "--games-per-pair", "9",
            "--design", "nearest", "--anchors", "random;greedy;mcts:iterations=10,ms=none",
            "--bots", "mcts:iterations=3,ms=none"]  # fmt: skip
    assert main([*argv, "--ratings", str(ratings), "--json", str(games)]) == 0
    out, err = capsys.readouterr()
    assert "(design nearest) = 55 games" in err  # 3 x 9 + 8 x 3 + 2 x 2
    assert re.search(r"nearest anchors \(nearest design\):\n  mcts:iterations=3,ms=none: \S+, \S+\n", out)
    data = json.loads(games.read_text())
    assert data["design"] == "nearest" and len(data["games"]) == 55
    table = read_table(ratings)
    assert "--design nearest" in table.command
    # A check in the nearest design: each target's bot against the anchors nearest the target.
    target = table.max_target // 2
    base = ["arena", "--ladder", "--game", "aton", "--no-progress", "--games-per-pair", "4", "--seed", "2",
            "--anchors", "random;greedy;mcts:iterations=10,ms=none", "--check", str(ratings)]  # fmt: skip
    assert main([*base, "--design", "nearest", "--targets", str(target), "--json", str(check)]) == 0
    data = json.loads(check.read_text())
    assert data["design"] == "nearest" and data["predicted"]
    opponents = {p["b"] for p in data["pairings"] if p["games"] and p["a"] not in data["anchors"]}
    assert len(opponents) == 2
    capsys.readouterr()
    assert main(["arena", "--game", "aton", "--bots", "random,greedy", "--design", "nearest"]) == 2
    assert "--design goes with --ladder" in capsys.readouterr().err
    # A team ladder in the nearest design: the pilot, then each bot's nearest anchors, as teams.
    teams = tmp_path / "teams.json"
    team_argv = [*argv[:4], "--players", "4", "--teams", *argv[4:], "--game", "osirium",
                 "--json", str(teams), "--ratings", str(tmp_path / "teams-table.json")]  # fmt: skip
    assert main(team_argv) == 0
    data = json.loads(teams.read_text())
    assert data["teams"] and data["design"] == "nearest" and len(data["games"]) == 55
    assert all(len(set(g["seats"][0::2])) == 1 and len(set(g["seats"][1::2])) == 1 for g in data["games"])


def test_costly_candidates_play_the_games_asked_for_them_and_the_table_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ai.ladder import read_table

    ratings, games = tmp_path / "t.json", tmp_path / "g.json"
    argv = ["arena", "--ladder", "--game", "aton", "--no-progress", "--games-per-pair", "4",
            "--anchors", "random;greedy;mcts:iterations=10,ms=none",
            "--bots", "mcts:iterations=3,ms=none;mcts:iterations=30,ms=none"]  # fmt: skip
    assert main([*argv, "--costly-games", "2", "--ratings", str(ratings), "--json", str(games)]) == 0
    err = capsys.readouterr().err
    costly = "mcts:iterations=30,ms=none"
    assert f"4 games (2 for a costly candidate: {costly}) = 30 games" in err  # 3x4 + 3x4 + 3x2
    data = json.loads(games.read_text())
    assert (data["costly_games"], data["costly"], len(data["games"])) == (2, [costly], 30)
    assert {p["a"]: p["games"] for p in data["pairings"]}["mcts:iterations=30,ms=none"] == 2
    table = read_table(ratings)
    assert table.costly_games == 2 and "--costly-games 2" in table.command
    assert table.note == (
        "provisional: 4 games per pair, 2 for the levels that search more a move than every anchor, "
        "6 per candidate at the fewest (the measurement is 200 per candidate)"
    )
    # A check that would ship plays the costly candidates at least as many games as the table.
    check = [*argv[:6], "4", "--anchors", "random;greedy;mcts:iterations=10,ms=none", "--seed", "2",
             "--check", str(ratings), "--check-scale", "random", "--targets", str(table.max_target),
             "--ship"]  # fmt: skip
    assert main([*check, "--costly-games", "1"]) == 2
    assert "1 games per pair for the costly candidates check a table that measured them at 2" in (
        capsys.readouterr().err
    )
    for extra, message in (
        (["--costly-games", "5"], "--costly-games must be 1..4 (--games-per-pair), not 5"),
        (["--costly-games", "0"], "--costly-games must be 1..4"),
        (["--costly-games", "2", "--design", "nearest"], "--costly-games goes with --ladder, in the fixed"),
    ):
        assert main([*argv, *extra]) == 2
        assert message in capsys.readouterr().err
    assert main(["arena", "--game", "aton", "--bots", "random,greedy", "--costly-games", "1"]) == 2
    assert "--costly-games goes with --ladder" in capsys.readouterr().err


def test_the_ladder_refuses_a_pool_without_random(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "--ladder", "--game", "aton", "--anchors", "greedy", "--no-progress"]) == 2
    assert "must include 'random'" in capsys.readouterr().err
    assert main(["arena", "--game", "aton", "--no-progress"]) == 2
    assert "--bots is required" in capsys.readouterr().err


def test_ray_without_the_extra_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, as without the extra
    argv = ["arena", "--game", "aton", "--bots", "random,greedy", "--games", "2", "--no-progress"]
    assert main([*argv, "--ray", "local"]) == 2
    assert "pip install 'heka[ray]'" in capsys.readouterr().err
    assert main(["train", "--games", "2", "--no-progress", "--ray", "local"]) == 2
    assert "pip install 'heka[ray]'" in capsys.readouterr().err


def test_a_local_ray_instance_refuses_to_run_without_its_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/ray.md, "Security": a local Ray instance listens on every interface; without Ray's
    token authentication anyone who reaches the machine could run code in it."""
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    argv = ["arena", "--game", "aton", "--bots", "random,greedy", "--games", "2", "--no-progress"]
    assert main([*argv, "--ray", "local"]) == 2
    assert "token authentication, not RAY_AUTH_MODE=disabled" in capsys.readouterr().err
    assert os.environ["RAY_AUTH_MODE"] == "disabled"  # left as it was


def test_the_ray_timeout_defaults_to_the_documented_wait(capsys: pytest.CaptureFixture[str]) -> None:
    from service.ray_runner import CONNECT_SECONDS, timeout

    assert timeout(None) == CONNECT_SECONDS and timeout(5.0) == 5.0
    for command in ("arena", "train"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert (
            f"exit 2 (default: {CONNECT_SECONDS:g})" in text.split("--ray-timeout SECONDS with --ray", 1)[1]
        )
    docs = " ".join((Path(__file__).resolve().parents[2] / "docs" / "ray.md").read_text().split())
    assert f"`--ray-timeout SECONDS` (default {CONNECT_SECONDS:g} s;" in docs
    # Past a day (and inf, which overflowed a timer inside Ray's connection) is refused at once.
    for command, value in (("arena", "inf"), ("train", "1e10"), ("arena", "nan"), ("train", "0")):
        with pytest.raises(SystemExit) as info:
            main([command, "--ray", "127.0.0.1:1", "--ray-timeout", value])
        assert info.value.code == 2
        assert "argument --ray-timeout: seconds above 0 and at most 86,400" in capsys.readouterr().err
    argv = ["--game", "aton", "--games", "2", "--no-progress", "--ray-timeout", "5"]
    assert main(["arena", "--bots", "random,greedy", *argv]) == 2
    assert "--ray-timeout goes with --ray ADDRESS" in capsys.readouterr().err
    assert main(["train", *argv]) == 2
    assert "--ray-timeout goes with --ray ADDRESS" in capsys.readouterr().err


def test_a_check_of_a_table_without_targets_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = json.loads((Path(__file__).resolve().parents[2] / "ai" / "ladders" / "aton-2p.json").read_text())
    table["bots"] = [b for b in table["bots"] if b["spec"] in ("random", "greedy")]
    path = tmp_path / "only-random.json"
    path.write_text(json.dumps(table))
    code = main(["arena", "--ladder", "--check", str(path), "--anchors", "random;greedy", "--games", "2"])
    err = capsys.readouterr().err
    assert code == 2 and f"--check {path}: the table has no target ratings to check (its top is 0)" in err
    assert "pairing(s)" not in err  # no ladder was played in its place


def test_a_check_that_would_measure_nothing_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """A target played by a bot the check holds (random; an anchor under the anchors scale)
    is exact by construction; a check that ships plays another seed, at the table's size."""
    table = Path(__file__).resolve().parents[2] / "ai" / "ladders" / "aton-2p.json"
    data = json.loads(table.read_text())
    base = ["arena", "--ladder", "--check", str(table), "--no-progress", "--games", "2"]
    easy = next(b["rating"] for b in data["bots"] if b["spec"] == "mcts:easy,ms=none")
    cases = [
        (["--targets", "0", "--seed", "5"], "target 0 plays random, which the check holds"),
        (["--targets", "500", "--seed", str(data["seed"]), "--ship"], "the check plays the table's own seed"),
        (
            ["--targets", "500", "--seed", "5", "--ship"],
            f"checks a table measured at {data['games_per_pair']}",
        ),
    ]
    if easy == int(easy):  # a target exactly at an anchor's rating plays that anchor
        cases.append((["--targets", str(int(easy)), "--seed", "5"], "which the check holds"))
    for extra, message in cases:
        assert main([*base, *extra]) == 2, extra
        err = capsys.readouterr().err
        assert message in err and "pairing(s)" not in err, (extra, err)


def test_a_spec_is_one_bot_whatever_the_case_of_its_kind(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["arena", "--game", "aton", "--games", "2", "--no-progress"]
    assert main([*base, "--bots", "Random,greedy"]) == 0
    out = capsys.readouterr().out
    assert "random = 0" in out and "Random" not in out
    assert main([*base, "--bots", "RANDOM,random,greedy"]) == 2
    assert "bot specs must be distinct, got random, random, greedy" in capsys.readouterr().err
    assert main([*base, "--bots", "random,ms=none;greedy"]) == 2
    assert "parameters follow the kind after ':' (the random bot)" in capsys.readouterr().err


def test_team_games_are_asked_for_with_teams_only(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["arena", "--game", "osirium", "--players", "4", "--bots", "random,greedy", "--games", "2"]
    for extra, message in [
        (["--option", "teams=true"], "--option teams: give --teams"),
        (["--teams", "--option", "teams=0"], "--option teams: give --teams"),
        (["--teams", "--lineup", "one-vs-rest"], "the one-vs-rest lineup seats one bot among others"),
    ]:
        assert main([*base, "--no-progress", *extra]) == 2, extra
        assert message in capsys.readouterr().err, extra


@pytest.mark.parametrize(
    "bots",
    [
        "mcts:iterations=5,ms=none;mcts:ms=none,it=5",
        "mcts:medium;mcts:iterations=1000,ms=2000",
    ],
)
def test_two_specs_of_one_bot_are_refused(bots: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "--game", "aton", "--bots", bots, "--games", "2", "--no-progress"]) == 2
    assert "is the same bot as" in capsys.readouterr().err


def test_a_value_that_begins_with_a_dash_gets_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    """argparse reads `--duration -5s` as two flags: the message says how to write it."""
    with pytest.raises(SystemExit) as exit_info:
        main(["loadtest", "--duration", "-5s"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --duration: expected one argument" in err
    assert "a value that begins with '-' is written --duration=VALUE" in err
    with pytest.raises(SystemExit):
        main(["loadtest", "--duration=-5s"])
    assert "a duration must be positive, not '-5s'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["arena", "--seed"])  # no value at all: no hint about dashes
    err = capsys.readouterr().err
    assert "expected one argument" in err and "begins with '-'" not in err


def test_a_check_target_without_a_level_near_it_is_refused_naming_the_gap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where the weakest level lies far above random and cannot be interpolated from it,
    target 100 plays random, which the check holds: the refusal says the table lacks a level."""
    table = {
        "format": "heka-ladder/1", "game": "aton", "players": 2, "provisional": True, "note": "",
        "command": "heka arena --ladder --game aton", "seed": 1, "games_per_pair": 2,
        "bots": [
            {"name": "random", "spec": "random", "rating": 0.0, "ci95": 0.0, "games": 4.0},
            {"name": "mcts:iterations=3", "spec": "mcts:iterations=3,ms=none", "rating": 420.0,
             "ci95": 90.0, "games": 4.0},
            {"name": "greedy", "spec": "greedy", "rating": 600.0, "ci95": 90.0, "games": 4.0},
        ],
    }  # fmt: skip
    path = tmp_path / "table.json"
    path.write_text(json.dumps(table))
    argv = ["arena", "--ladder", "--game", "aton", "--check", str(path), "--seed", "2",
            "--anchors", "random;greedy", "--games-per-pair", "2", "--no-progress"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "target 100 plays random, which the check holds at the table's rating of it, 0" in err
    assert "The table has no level nearer 100" in err and "pairing(s)" not in err
    assert main([*argv, "--targets", "400"]) == 0  # a target the table can serve is checked


def test_a_check_that_ships_plays_the_tables_design_and_ships_the_table_it_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A check that ships plays the anchors the table was measured against, every default
    target, and its costly candidates at least the table's games; and it ships the table as it
    read it when it began (TABLE, a file any later ladder run may rewrite, was read again after
    the games: a check could ship another table, with this one's verdict)."""
    from ai import arena as arena_module
    from ai import ladder
    from ai.ladder import read_table

    ratings = tmp_path / "table.json"
    ladder_argv = ["arena", "--ladder", "--game", "aton", "--no-progress", "--anchors", "random;greedy",
                   "--bots", "mcts:iterations=3,ms=none", "--games-per-pair", "2", "--seed", "1"]  # fmt: skip
    assert main([*ladder_argv, "--ratings", str(ratings)]) == 0
    table = read_table(ratings)
    capsys.readouterr()
    check = ["arena", "--ladder", "--game", "aton", "--no-progress", "--games-per-pair", "2", "--seed", "2",
             "--check", str(ratings), "--ship"]  # fmt: skip
    for extra, message in (
        ([], "the check plays the anchors random;greedy;mcts:easy,ms=none;mcts:medium,ms=none, the table"),
        (["--anchors", "random;greedy", "--targets", "100"], "--targets leaves out"),
        (["--anchors", "random;greedy", "--costly-games", "1"], "1 games per pair for the costly candidates"),
    ):
        if extra[-1:] == ["100"] and table.max_target <= 100:
            continue  # a table whose only target is 100 leaves nothing out
        assert main([*check, *extra]) == 2, extra
        err = capsys.readouterr().err
        assert message in err and "pairing(s)" not in err, (extra, err)
    capsys.readouterr()
    # TABLE rewritten while the check plays: what ships is the table the check began with.
    monkeypatch.setattr(ladder, "TABLE_DIR", tmp_path / "ladders")
    (tmp_path / "ladders").mkdir()
    played = arena_module.run_arena

    def rewrite_then_play(*args: object, **kwargs: object) -> object:
        data = json.loads(ratings.read_text())
        ratings.write_text(json.dumps({**data, "seed": 2, "games_per_pair": 1}))
        return played(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(arena_module, "run_arena", rewrite_then_play)
    assert main([*check, "--anchors", "random;greedy", "--provisional"]) == 0
    shipped = read_table(ladder.table_path("aton", 2))
    assert (shipped.seed, shipped.games_per_pair) == (table.seed, table.games_per_pair)
    assert [b.rating for b in shipped.bots] == [b.rating for b in table.bots]


def test_games_for_costly_candidates_where_none_is_costly_change_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With no candidate searching more than every anchor, every pair plays the full games:
    the table said its costly levels played fewer, and counted its candidates' games at that."""
    from ai.ladder import read_table

    ratings = tmp_path / "table.json"
    argv = ["arena", "--ladder", "--game", "aton", "--no-progress",
            "--anchors", "random;mcts:iterations=10,ms=none", "--bots", "mcts:iterations=3,ms=none",
            "--games-per-pair", "2", "--costly-games", "1"]  # fmt: skip
    assert main([*argv, "--ratings", str(ratings)]) == 0
    table = read_table(ratings)
    assert table.costly_games is None
    assert table.note.startswith("provisional: 2 games per pair, 4 per candidate (the measurement")
    capsys.readouterr()
