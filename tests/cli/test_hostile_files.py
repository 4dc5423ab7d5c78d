"""Files the commands read and write, whatever they hold or are: JSON nested too deeply or
with a number too long, an endless device, a pipe, a device or a link as the output. Each is
refused before any work with a message naming the file (exit 2), never a traceback, a hang,
or a device node replaced by a file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ai.ladder import LadderError, read_table
from ai.learned import ModelError, load_model
from service.cli import main

DEEP = "[" * 100_000 + "]" * 100_000
LONG_NUMBER = '{"game": "aton", "games": [], "seed": ' + "9" * 5000 + "}"


@pytest.fixture(params=["deep", "long_number"])
def hostile(request: Any, tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / f"{request.param}.json"
    path.write_text(DEEP if request.param == "deep" else LONG_NUMBER)
    return path, "nested too deeply" if request.param == "deep" else "a number too long to read"


@pytest.mark.parametrize(
    "command",
    [
        ["arena", "--bots", "random,greedy", "--games", "1", "--no-progress", "--resume", "{file}"],
        ["arena", "--ladder", "--check", "{file}", "--no-progress"],
        ["review", "{file}"],
    ],
    ids=["arena --resume", "arena --check", "review"],
)
def test_hostile_json_is_refused_naming_the_file(
    command: list[str], hostile: tuple[Path, str], tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    path, why = hostile
    monkeypatch.chdir(tmp_path)
    assert main([arg.replace("{file}", str(path)) for arg in command]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and why in err, err


def test_replay_options_nested_too_deeply_are_refused(capsys: Any, monkeypatch: Any) -> None:
    import base64

    monkeypatch.setenv("HEKA_STATE_KEYS", "k1:" + base64.b64encode(bytes(range(32))).decode())
    assert main(["replay", "--game", "aton", "--seed", "5", "--options", "[" * 5000 + "]" * 5000]) == 2
    assert "--options is not JSON (nested too deeply)" in capsys.readouterr().err


def test_a_table_or_model_file_cannot_exhaust_memory_or_the_stack(tmp_path: Path) -> None:
    with pytest.raises(LadderError, match="larger than"):
        read_table("/dev/zero")
    with pytest.raises(ModelError, match="/dev/zero: larger than 16,777,216 bytes: not a model"):
        load_model("/dev/zero")
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    with pytest.raises(LadderError, match="nested too deeply"):
        read_table(deep)
    with pytest.raises(ModelError, match="nested too deeply"):
        load_model(deep)


@pytest.mark.parametrize(
    "command",
    [["replay", "--game", "aton", "--seed", "5", "--actions", "-"], ["render", "--state", "-"]],
    ids=["replay --actions -", "render --state -"],
)
def test_standard_input_is_read_up_to_a_cap_and_as_text(
    command: list[str], capsys: Any, monkeypatch: Any
) -> None:
    """``-`` reads standard input as a file is read: an endless stream (``yes |``) is refused at
    the cap, not read until memory runs out, and bytes that are not UTF-8 are named as such."""
    import base64
    import io

    from service.commands import files

    monkeypatch.setenv("HEKA_STATE_KEYS", "k1:" + base64.b64encode(bytes(range(32))).decode())
    monkeypatch.setattr(files, "MAX_READ_BYTES", 1000)
    what = command[-2]
    for stdin, message in [
        (b"y\n" * 100_000, f"{what} -: standard input is larger than 1,000 bytes"),
        (b"\xff\xfe\x00 not text", f"{what} -: standard input is not text (UTF-8)"),
    ]:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        assert main(command) == 2
        assert message in capsys.readouterr().err


def test_an_output_that_is_no_regular_file_is_refused_before_any_game(tmp_path: Path, capsys: Any) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opening it to write would block until a reader comes
    for target in (fifo, Path("/dev/null")):
        args = ["arena", "--bots", "random,greedy", "--games", "1", "--no-progress", "--json", str(target)]
        assert main(args) == 2
        assert "not a regular file (a device, pipe or socket)" in capsys.readouterr().err
    assert Path("/dev/null").is_char_device()


def test_results_written_through_a_link_go_to_its_file(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    target.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    args = ["arena", "--bots", "random,greedy", "--games", "2", "--no-progress", "--json", str(link)]
    assert main(args) == 0
    assert link.is_symlink() and link.resolve() == target
    assert len(json.loads(target.read_text())["games"]) == 2


def test_a_run_refused_after_its_output_check_leaves_no_folder_behind(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    """The output check makes the missing folders to probe them and removes them again: a run
    refused later (here: --ray without the extra) leaves the tree as it was."""
    import sys

    from service.commands.files import check_writable

    check_writable(str(tmp_path / "a" / "b" / "out.json"), "--json")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "a").mkdir()
    check_writable(str(tmp_path / "a" / "b" / "c" / "out.json"), "--json")
    assert [p.name for p in tmp_path.rglob("*")] == ["a"]  # the folder that was there stays
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "ray", None)
    assert main(["train", "--games", "2", "--no-progress", "--ray", "local"]) == 2
    assert "pip install 'heka[ray]'" in capsys.readouterr().err
    assert [p.name for p in tmp_path.rglob("*")] == ["a"]


SENTINEL = '{"kept": "as it was"}\n'


def _arena_record(tmp_path: Path) -> Path:
    """A real arena file (one game of random bots): a record ``heka review`` reads."""
    record = tmp_path / "made" / "arena.json"
    args = ["arena", "--bots", "random;greedy", "--games", "1", "--workers", "1", "--no-progress"]
    assert main([*args, "--json", str(record)]) == 0
    return record


LADDER_RUN = ["arena", "--ladder", "--bots", "greedy", "--anchors", "random", "--games", "2", "--no-progress"]
#: Each command with two of its paths given as one file ({f}): an output over an input, or
#: over another output. The file is refused before any work, named by both of its flags.
SAME_FILE = [
    (["render", "--state", "x", "--state-keys-file", "{f}", "--out", "{f}"], "--state-keys-file", "--out"),
    (["arena", "--ladder", "--check", "{f}", "--json", "{f}", "--no-progress"], "--check", "--json"),
    (
        [*LADDER_RUN, "--json", "{f}", "--ratings", "{f}"],
        "--ratings",
        "--json",
    ),
    (
        [*LADDER_RUN, "--resume", "{f}", "--ratings", "{f}"],
        "--resume",
        "--ratings",
    ),
    (["review", "{f}", "--iterations", "5", "--no-progress", "--json", "{f}"], "the record", "--json"),
    (["train", "--games", "2", "--bot", "random", "--samples", "{f}", "--out", "{f}"], "--samples", "--out"),
]


@pytest.mark.parametrize("through_link", [False, True], ids=["same path", "a link to it"])
@pytest.mark.parametrize("case", SAME_FILE, ids=[f"{c[0][0]} {c[1]} {c[2]}" for c in SAME_FILE])
def test_an_output_over_an_input_or_another_output_is_refused(
    case: tuple[list[str], str, str], through_link: bool, tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    command, first, second = case
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "one.json"
    if command[0] == "review":
        path.write_text(_arena_record(tmp_path).read_text())
    elif "--check" in command:
        path.write_text((Path(__file__).resolve().parents[2] / "ai" / "ladders" / "aton-2p.json").read_text())
    else:
        path.write_text(SENTINEL)
    before = path.read_bytes()
    link = tmp_path / "link.json"
    link.symlink_to(path)
    # The second occurrence of {f} (the output, or the later path) goes through the link.
    argv: list[str] = []
    seen = 0
    for arg in command:
        if arg == "{f}":
            seen += 1
            arg = str(link if through_link and seen == 2 else path)
        argv.append(arg)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "is the same file as" in err and first in err and second in err, err
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["one.json", "link.json"] + (["made"] if command[0] == "review" else [])
    )


def test_an_output_through_a_link_to_nothing_is_refused_and_creates_nothing(
    tmp_path: Path, capsys: Any
) -> None:
    target = tmp_path / "elsewhere" / "target.svg"
    link = tmp_path / "out.svg"
    link.symlink_to(target)
    assert main(["render", "--game", "aton", "--out", str(link)]) == 2
    assert "a link to a missing file" in capsys.readouterr().err
    assert link.is_symlink() and not target.exists() and not target.parent.exists()


def test_results_written_beside_a_file_named_like_their_temporary_one_keep_it(tmp_path: Path) -> None:
    out = tmp_path / "b.json"
    notes = tmp_path / "b.json.tmp"
    notes.write_text("notes\n")
    assert (
        main(
            [
                "arena",
                "--bots",
                "random;greedy",
                "--games",
                "1",
                "--workers",
                "1",
                "--no-progress",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    assert json.loads(out.read_text())["games_played"] == 1
    assert notes.read_text() == "notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json", "b.json.tmp"]
