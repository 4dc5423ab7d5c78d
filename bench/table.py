"""The bench scripts' one table printer: aligned columns for a terminal, or a markdown table
to paste into a record.

    from bench.table import print_table
    print_table(("workload", "calls/s"), rows)            # aligned, two spaces apart
    print_table(("load", "RPC/s"), rows, markdown=True)   # | load | RPC/s |
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any, TextIO


def format_table(header: Sequence[Any], rows: Iterable[Sequence[Any]], markdown: bool = False) -> str:
    """``header`` and ``rows`` (cells of any type, shown with ``str``) as lines of text: each
    column as wide as its widest cell, or a markdown table. A row of the wrong length is an
    error naming the row."""
    table = [[str(c) for c in header]]
    for row in rows:
        cells = [str(c) for c in row]
        if len(cells) != len(table[0]):
            raise ValueError(f"row {cells!r} has {len(cells)} cells, the header {len(table[0])}")
        table.append(cells)
    if markdown:
        lines = ["| " + " | ".join(r) + " |" for r in table]
        lines.insert(1, "|" + "---|" * len(table[0]))
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in table)


def print_table(
    header: Sequence[Any],
    rows: Iterable[Sequence[Any]],
    title: str | None = None,
    markdown: bool = False,
    file: TextIO | None = None,
) -> None:
    """Print :func:`format_table`'s text, after ``title`` when given."""
    out = file if file is not None else sys.stdout
    if title is not None:
        print(title, file=out)
    print(format_table(header, rows, markdown), file=out, flush=True)
