"""SplitMix64 on 32-bit halves in machine integers: the compiled build's :class:`engine.rng.Rng`.

:class:`engine.rng.Rng` (SplitMix64) is what the worlds a search samples shuffle with: an
Aton rollout that empties a deck reshuffles its discard pile (``bench/builds.py``'s Aton
search: about one 30-word reshuffle per two iterations, a quarter of an iteration's time in
Python longs). In the compiled build a 64-bit word cannot be a machine integer (mypyc's
``int`` is a Python long from 2**62, and its multiply leaves the fast path from 2**30), so
here the state and every word are two 32-bit halves and each product is of at most 48 bits,
in ``i64`` (:mod:`engine._mypyc`).

Run as Python this is several times slower than the plain arithmetic on Python ints of
:meth:`engine.rng.Rng.next64_halves`, so ``engine/rng.py`` (Python in both builds) calls it
only when this module is compiled; the outputs are the same (``tests/engine/test_core.py``
compares them in each build). Standard library only.
"""

from __future__ import annotations

from typing import Any, Final

from engine._mypyc import i64

_M32: Final = 0xFFFFFFFF
_M16: Final = 0xFFFF
# The constants of SplitMix64 (Steele, Lea & Flood 2014), in halves and quarters.
_GOLDEN_HI: Final = 0x9E3779B9
_GOLDEN_LO: Final = 0x7F4A7C15
_C1_HI: Final = 0xBF58476D
_C1_LO: Final = 0x1CE4E5B9
_C2_HI: Final = 0x94D049BB
_C2_LO: Final = 0x133111EB


def _mul_hi(ah: i64, al: i64, bh: i64, bl: i64) -> i64:
    """The high half of ``(ah:al) * (bh:bl) mod 2**64`` (halves of 32 bits)."""
    b0: i64 = bl & _M16
    b1: i64 = bl >> 16
    t0: i64 = al * b0  # < 2**48
    t1: i64 = al * b1  # < 2**48
    s: i64 = t0 + ((t1 & _M16) << 16)
    carry: i64 = (s >> 32) + (t1 >> 16)  # the high half of al * bl
    # The cross products only matter mod 2**32: (x * y) mod 2**32 with y in 16-bit quarters.
    cross_a: i64 = (ah * b0 + (((ah * b1) & _M16) << 16)) & _M32
    c0: i64 = bh & _M16
    c1: i64 = bh >> 16
    cross_b: i64 = (al * c0 + (((al * c1) & _M16) << 16)) & _M32
    return (carry + cross_a + cross_b) & _M32


def _mul_lo(al: i64, bl: i64) -> i64:
    """The low half of ``(ah:al) * (bh:bl)``: that of ``al * bl``."""
    return (al * (bl & _M16) + (((al * (bl >> 16)) & _M16) << 16)) & _M32


def _output(zh: i64, zl: i64) -> tuple[i64, i64]:
    """SplitMix64's output for the (already advanced) state ``zh:zl``, as (high, low) halves."""
    # y = (z ^ (z >> 30)) * C1
    yl: i64 = zl ^ (((zl >> 30) | (zh << 2)) & _M32)
    yh: i64 = zh ^ (zh >> 30)
    h: i64 = _mul_hi(yh, yl, _C1_HI, _C1_LO)
    yl = _mul_lo(yl, _C1_LO)
    yh = h
    # y = (y ^ (y >> 27)) * C2
    yl ^= ((yl >> 27) | (yh << 5)) & _M32
    yh ^= yh >> 27
    h = _mul_hi(yh, yl, _C2_HI, _C2_LO)
    yl = _mul_lo(yl, _C2_LO)
    yh = h
    # y ^ (y >> 31)
    yl ^= ((yl >> 31) | (yh << 1)) & _M32
    yh ^= yh >> 31
    return yh, yl


def next64_halves(state: int, count: int, out: list[int]) -> int:
    """Append to ``out`` the next ``count`` SplitMix64 outputs after ``state`` (an int in
    [0, 2**64)), each as its low then its high 32 bits; return the new state."""
    zh: i64 = state >> 32
    zl: i64 = state & _M32
    for _ in range(count):
        # z += golden (mod 2**64)
        zl += _GOLDEN_LO
        zh = (zh + _GOLDEN_HI + (zl >> 32)) & _M32
        zl &= _M32
        yh, yl = _output(zh, zl)
        out.append(yl)
        out.append(yh)
    # Back to a Python int (the state may exceed a signed 64-bit integer).
    high: int = zh
    low: int = zl
    return (high << 32) | low


def shuffle(state: int, x: list[Any]) -> int:
    """:meth:`engine.rng.SerialRng.shuffle` of ``x`` (fewer than 2**32 items) with the
    SplitMix64 generator at ``state``, in place; return the generator's new state. The same
    draws: for ``i = len(x) - 1 .. 1``, the low 32 bits of the next word masked to
    ``(i + 1).bit_length()`` bits, redrawn while ``>= i + 1``; one word per draw. (Sampled
    worlds reshuffle their piles in every rollout: in C this is several times the Python
    loop, ``bench/search_ab.py``.)"""
    zh: i64 = state >> 32
    zl: i64 = state & _M32
    i: i64 = len(x) - 1
    while i > 0:
        zl += _GOLDEN_LO
        zh = (zh + _GOLDEN_HI + (zl >> 32)) & _M32
        zl &= _M32
        yl = _output(zh, zl)[1]
        m: i64 = i + 1
        mask: i64 = 1
        while mask < m:
            mask = mask * 2 + 1
        r: i64 = yl & mask
        if r < m:
            x[i], x[r] = x[r], x[i]
            i -= 1
    high: int = zh
    low: int = zl
    return (high << 32) | low
