"""``heka arena`` and ``heka train`` with ``--ray``, when the ``ray`` extra is installed
(``make ray-check``); skipped otherwise.

* ``--ray HOST:PORT`` where nothing answers fails after ``--ray-timeout`` seconds, exit 2,
  with one line that names the address: no traceback, none of Ray's retry messages.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="needs the ray extra (pip install 'heka[ray]'; make ray-check)")

pytestmark = [pytest.mark.ray, pytest.mark.timeout(300)]


@pytest.mark.parametrize(
    "command",
    [["arena", "--game", "aton", "--bots", "greedy;random", "--games", "2", "--no-progress"],
     ["train", "--game", "aton", "--games", "2", "--no-progress"]],
    ids=["arena", "train"],
)  # fmt: skip
def test_an_address_nobody_answers_fails_with_one_line_after_the_timeout(
    command: list[str], tmp_path: Path
) -> None:
    """A closed local port: ray.init alone would retry it for ever."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # held, never listening: every connection is refused
        address = f"127.0.0.1:{closed.getsockname()[1]}"
        proc = subprocess.run(
            [sys.executable, "-m", "service.cli", *command, "--ray", address, "--ray-timeout", "2"],
            check=False, capture_output=True, text=True, cwd=tmp_path, timeout=120,
        )  # fmt: skip
    name = command[0]
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert all(line.startswith(f"heka {name}: ") for line in lines), proc.stderr
    assert lines[-1].startswith(
        f"heka {name}: no Ray cluster answered at {address} within 2 s: check the address"
    )
    assert lines[-1].endswith("(--ray-timeout SECONDS waits longer)")
