"""A small, exactly serialisable pseudo-random generator for the engine's own chance.

Games resolve shuffles inside the engine (chance is never a client's choice, A11 / O10).
For a serialisation round trip to preserve "the randomness still to come", the generator's
whole state must fit in the serialised state: :class:`Rng` is SplitMix64 (one 64-bit
integer of state) behind the :class:`random.Random` API, so ``rng.shuffle``,
``rng.randrange`` etc. work and are reproducible across runs and platforms.
"""

from __future__ import annotations

import random
from typing import Any

_MASK = (1 << 64) - 1


class Rng(random.Random):
    """SplitMix64 with the ``random.Random`` interface; ``state`` is one int in [0, 2**64)."""

    state: int

    def __init__(self, seed: int = 0) -> None:
        self.state = seed & _MASK
        super().__init__(seed)

    # random.Random hooks ---------------------------------------------------------------
    def seed(self, a: Any = None, version: int = 2) -> None:
        if a is None:
            a = 0
        if not isinstance(a, int):
            raise TypeError("Rng seeds must be integers")
        # Mix the seed once so that nearby seeds give unrelated streams.
        self.state = a & _MASK
        self.state = self._next64()

    def getstate(self) -> Any:
        return self.state

    def setstate(self, state: Any) -> None:
        if isinstance(state, bool) or not isinstance(state, int) or not 0 <= state <= _MASK:
            raise ValueError(f"Rng state must be an integer in [0, 2**64), got {state!r}")
        self.state = state

    def _next64(self) -> int:
        self.state = z = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def getrandbits(self, k: int) -> int:
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        out = 0
        bits = 0
        while bits < k:
            out |= self._next64() << bits
            bits += 64
        return out & ((1 << k) - 1)

    def random(self) -> float:
        return (self._next64() >> 11) * (1.0 / (1 << 53))

    def clone(self) -> Rng:
        r = Rng.__new__(Rng)
        r.state = self.state
        return r
