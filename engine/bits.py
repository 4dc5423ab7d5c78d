"""Bit counts and lowest bits of the engines' masks (board cells, squares, links) in machine
arithmetic.

``int.bit_count()`` and ``int.bit_length()`` are method calls to mypyc: the mask is boxed
and the method looked up by name on every call, which made counting the bits of candidate
sets a tenth of a compiled Osirium search (``bench/search_profile.py``). :func:`popcount` and
:func:`low_bit` compute the same on a 64-bit machine integer (``i64``), a handful of
operations once compiled. Standard library only.
"""

from __future__ import annotations

from typing import Final

from engine._mypyc import i64

_M1: Final = 0x5555555555555555
_M2: Final = 0x3333333333333333
_M4: Final = 0x0F0F0F0F0F0F0F0F


def _count(v: i64) -> i64:
    v = v - ((v >> 1) & _M1)
    v = (v & _M2) + ((v >> 2) & _M2)
    v = (v + (v >> 4)) & _M4
    v = v + (v >> 8)
    v = v + (v >> 16)
    v = v + (v >> 32)
    return v & 0x7F


#: Whether this module runs compiled (its functions are then native, not Python functions):
#: run as Python, the int methods are the faster way (C, where the arithmetic above is not).
_COMPILED: Final = type(_count).__name__ != "function"


def popcount(x: int) -> int:
    """``x.bit_count()`` for ``0 <= x < 2**63`` (every mask of the engines)."""
    if _COMPILED:
        return _count(x)
    return x.bit_count()


def low_bit(x: int) -> int:
    """The index of the lowest set bit of ``x``, ``(x & -x).bit_length() - 1``, for
    ``0 <= x < 2**63`` (``-1`` for 0)."""
    if not _COMPILED:
        return (x & -x).bit_length() - 1
    v: i64 = x
    if v == 0:
        return -1
    return _count((v & -v) - 1)
