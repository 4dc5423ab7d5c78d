"""Helpers for the compiled build (mypyc) that are plain Python in both builds.

``mypyc_attr``: class options for the compiled build, a no-op when the code runs as Python.
``i64``: mypyc's 64-bit machine integer type in the compiled build, ``int`` in Python.

The compiled build (mypyc, ``make compile``; ``docs/operations.md``) reads
``@mypyc_attr(allow_interpreted_subclasses=True)`` on the base classes that other code
subclasses in plain Python (``engine.core.State``, ``Game``, ``View``: the tests' toy games,
games registered from outside). mypyc recognises the decorator by its name in
``mypy_extensions`` at compile time and does not call it; at run time, compiled or not, this
module is plain Python (it is never compiled) and the decorator returns the class unchanged,
so nothing outside the standard library is imported.
"""

from __future__ import annotations

import copyreg
import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mypy_extensions import i64, mypyc_attr
else:
    #: A machine integer in the compiled build (mypyc's native ``i64``: arithmetic without
    #: Python longs, for values that never leave the signed 64-bit range); ``int`` when
    #: the code runs as Python, so both builds compute the same values.
    i64 = int

    def mypyc_attr(*_attrs: str, **_options: object) -> Any:
        return lambda cls: cls


def _rebuild(obj: Any) -> tuple[type, tuple[Any, ...]]:
    return type(obj), tuple(getattr(obj, f.name) for f in dataclasses.fields(obj))


def picklable(*classes: type) -> None:
    """Pickle (and copy) these frozen dataclasses by calling their constructor with their
    fields. Compiled, a frozen dataclass is unpickled by setting its attributes one by one,
    which its frozen ``__setattr__`` refuses; worker processes receive such values (search
    parameters, jobs, results, events)."""
    for cls in classes:
        copyreg.pickle(cls, _rebuild)


__all__ = ["i64", "mypyc_attr", "picklable"]
