"""docs/quickstart.md's Python, run as written against a real server: its code blocks titled
``quickstart.py``, end to end, play a whole four-player game one call per move of the person,
and print the errors the page says they print."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from service_helpers import ROOT

PAGE = ROOT / "docs" / "quickstart.md"


def fenced(text: str, info: str) -> list[str]:
    """The bodies of the fenced blocks whose info string is ``info``, in page order."""
    return re.findall(rf"^```{re.escape(info)}\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


def test_the_quickstart_plays_a_game_and_shows_its_errors(server: Any, tmp_path: Path) -> None:
    text = PAGE.read_text()
    blocks = fenced(text, 'python title="quickstart.py"')
    assert len(blocks) >= 4, "docs/quickstart.md lost its quickstart.py blocks"
    script = tmp_path / "quickstart.py"
    script.write_text("\n\n".join(blocks))
    env = {**os.environ, "HEKA_ADDRESS": server.address, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    out = done.stdout.splitlines()
    summary = [line for line in out if "moves of the person" in line]
    moves = re.fullmatch(r"(\d+) moves of the person, (\d+) in all", summary[-1]) if summary else None
    assert moves, done.stdout[-2000:]
    assert 0 < int(moves[1]) < int(moves[2])  # the three bots moved inside the person's calls
    assert any(re.fullmatch(r"winners \[[\d, ]*\]: .+", line) for line in out), done.stdout[-2000:]
    (shown,) = fenced(text, 'text title="output"')
    for line in shown.splitlines():
        last = "\n".join(out[-4:])
        assert line in out, f"docs/quickstart.md says the script prints {line!r}; it printed:\n{last}"
