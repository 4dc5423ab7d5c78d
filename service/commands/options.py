"""``--option NAME=VALUE``, as the commands that create games take it (arena, simulate,
render): ``true`` / ``false`` and integers typed, anything else a string."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def parse_option_pairs(pairs: Iterable[str]) -> list[tuple[str, Any]]:
    """The ``(name, value)`` of each pair, in order; :class:`ValueError` naming a bad one."""
    out: list[tuple[str, Any]] = []
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--option needs NAME=VALUE, got {pair!r}")
        low = value.strip().lower()
        parsed: Any = value.strip()
        if low in ("true", "false"):
            parsed = low == "true"
        elif low.lstrip("-").isdigit():
            parsed = int(low)
        out.append((name.strip(), parsed))
    return out
