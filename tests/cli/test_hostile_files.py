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
