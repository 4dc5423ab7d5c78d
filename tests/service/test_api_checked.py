"""The API is checked in CI (``make api-check``: buf lint, STANDARD rules, and buf
breaking against the frozen v1 image ``proto/heka-v1.binpb``). This test shows the check
bites: a breaking change to a copy of the proto is refused. It needs the buf that
``make api-check`` installs (CI runs that first); without it, it is skipped."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUF = ROOT / ".tools" / "node_modules" / ".bin" / "buf"
pytestmark = pytest.mark.skipif(not BUF.exists(), reason="buf not installed (make api-check installs it)")


def buf(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BUF), *args], check=False, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_the_proto_passes_lint_and_breaking() -> None:
    assert buf("lint", "proto", cwd=ROOT).returncode == 0
    result = buf("breaking", "proto", "--against", "proto/heka-v1.binpb", cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("old", "new", "complaint"),
    [
        ("  int32 move_number = 9;", "  int32 move_count = 9;", "move_number"),  # a renamed field
        ("  DECISION_REFILL = 10;\n", "", 'enum value "10" on enum "Decision"'),  # a removed value
        (
            "  optional int32 viewer = 2;\n  // When set",
            "  optional int64 viewer = 2;\n  // When set",
            "viewer",
        ),
    ],
)
def test_a_breaking_change_is_refused(tmp_path: Path, old: str, new: str, complaint: str) -> None:
    shutil.copytree(ROOT / "proto", tmp_path / "proto")
    path = tmp_path / "proto" / "heka" / "v1" / "game_service.proto"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    result = buf("breaking", "proto", "--against", "proto/heka-v1.binpb", cwd=tmp_path)
    assert result.returncode != 0 and complaint in result.stdout + result.stderr


def test_lint_refuses_an_enum_without_its_unspecified_zero(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "proto", tmp_path / "proto")
    path = tmp_path / "proto" / "heka" / "v1" / "game_service.proto"
    path.write_text(path.read_text().replace("DRAW_SOURCE_UNSPECIFIED = 0;", "DRAW_SOURCE_NONE = 0;"))
    result = buf("lint", "proto", cwd=tmp_path)
    assert result.returncode != 0 and "DRAW_SOURCE_NONE" in result.stdout + result.stderr
