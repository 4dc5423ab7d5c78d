"""The engine's sources of chance: exactly serialisable generators behind ``random.Random``.

Games resolve shuffles inside the engine (chance is never a client's choice, A11 / O10).
For a serialisation round trip to preserve "the randomness still to come", a generator's
whole state must fit in the serialised state, so both generators here keep a small state
and write it as text (:meth:`SerialRng.to_text`, :func:`rng_from_text`):

* :class:`ChanceRng` is **the game's chance**: keyed BLAKE2b in counter mode, a
  cryptographic generator. Its 32-byte key comes from :func:`chance_key`, a keyed hash of
  the game's seed and a secret (the server's), so neither the seed nor the cards dealt so
  far let anyone predict a later shuffle without the secret.
* :class:`Rng` is SplitMix64 (one 64-bit integer of state): fast, but its outputs reveal
  its state. It is what bots give the worlds they sample inside a search (where speed
  matters and nothing is secret), and what states written by earlier releases carry.

Both have the ``random.Random`` interface (``shuffle``, ``randrange``...), are reproducible
across runs and platforms, and offer :meth:`SerialRng.next64` for the engines' fast paths.
"""

from __future__ import annotations

import abc
import hashlib
import random
import struct
from collections.abc import MutableSequence
from typing import Any, Final

from engine import _build, splitmix

_MASK = (1 << 64) - 1

#: :func:`engine.splitmix.next64_halves` when that module is compiled (machine integers,
#: 10x the Python longs below), else ``None``: then :class:`Rng` computes in Python.
_COMPILED_HALVES: Final = splitmix.next64_halves if _build.is_compiled(splitmix) else None
#: :func:`engine.splitmix.shuffle` when compiled, else ``None`` (:meth:`Rng.shuffle`).
_COMPILED_SHUFFLE: Final = splitmix.shuffle if _build.is_compiled(splitmix) else None

#: Bytes of a :class:`ChanceRng` key.
CHANCE_KEY_BYTES = 32
#: 64-bit words produced by one BLAKE2b call (a 64-byte digest).
_WORDS_PER_BLOCK = 8
_PERSON_KEY = b"heka.chance.key"
_PERSON_STREAM = b"heka.chance.ctr"
#: A block's 64-byte digest as its 8 little-endian 64-bit words, each as two 32-bit halves
#: (low first).
_BLOCK_HALVES: Final = struct.Struct("<16I")


class SerialRng(random.Random, abc.ABC):
    """A generator whose whole state is a short text (see :func:`rng_from_text`)."""

    @abc.abstractmethod
    def next64(self) -> int:
        """The next 64 random bits, as an int in [0, 2**64)."""

    def next64_many(self, count: int) -> list[int]:
        """The next ``count`` outputs of :meth:`next64`, in order (one call instead of
        ``count``)."""
        nxt = self.next64
        return [nxt() for _ in range(count)]

    def next64_halves(self, count: int) -> list[int]:
        """The next ``count`` outputs of :meth:`next64` as ``2 * count`` ints of 32 bits:
        each word's low half, then its high half. The engines' shuffles read these: in
        the compiled build a product of a 32-bit half and a card count stays a machine
        integer, where a 64-bit word times a count is a Python long."""
        out: list[int] = []
        for w in self.next64_many(count):
            out.append(w & 0xFFFFFFFF)
            out.append(w >> 32)
        return out

    @abc.abstractmethod
    def clone(self) -> SerialRng:
        """An independent copy that will produce the same outputs."""

    @abc.abstractmethod
    def to_text(self) -> str:
        """The generator's whole state as text; :func:`rng_from_text` reads it back."""

    # random.Random hooks, shared ------------------------------------------------------
    def getrandbits(self, k: int) -> int:
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        out = 0
        bits = 0
        nxt = self.next64
        while bits < k:
            out |= nxt() << bits
            bits += 64
        return out & ((1 << k) - 1)

    def random(self) -> float:
        return (self.next64() >> 11) * (1.0 / (1 << 53))

    def shuffle(self, x: MutableSequence[Any]) -> None:
        """Exactly ``random.Random.shuffle`` on this generator (the same draws, the same
        order: ``randbelow(i + 1)`` for ``i = len(x) - 1 .. 1``, each a word masked to
        ``(i + 1).bit_length()`` bits and redrawn while ``>= i + 1``), with the words taken
        a batch at a time instead of three Python calls per draw. A batch holds as many
        words as draws are left, and every draw takes at least one word, so no word is
        taken that the draws would not have used: the generator ends where
        ``random.Random.shuffle`` leaves it. (Osirium's piles: 3x faster.) A mask of at
        most 32 bits only needs a word's low half (:meth:`next64_halves`)."""
        i = len(x) - 1
        if i >= 1 << 32:
            random.Random.shuffle(self, x)
            return
        halves: list[int] = []
        w = 0
        while i > 0:
            if w == len(halves):
                halves = self.next64_halves(i)
                w = 0
            m = i + 1
            r = halves[w] & ((1 << m.bit_length()) - 1)
            w += 2
            if r < m:
                x[i], x[r] = x[r], x[i]
                i -= 1


class Rng(SerialRng):
    """SplitMix64 with the ``random.Random`` interface; ``state`` is one int in [0, 2**64).

    Fast, not secret: bots' sampled worlds, and states of earlier releases, use it."""

    state: int

    def __init__(self, seed: int = 0) -> None:
        self.state = seed & _MASK
        super().__init__(seed)

    def seed(self, a: object = None, version: int = 2) -> None:
        if a is None:
            a = 0
        if not isinstance(a, int):
            raise TypeError("Rng seeds must be integers")
        # Mix the seed once so that nearby seeds give unrelated streams.
        self.state = a & _MASK
        self.state = self.next64()

    @staticmethod
    def seeded(seed: int) -> Rng:
        """``Rng(seed)``, the same stream, without ``random.Random.__init__`` (which costs
        several times the rest: a search's sampled world makes one per iteration)."""
        r = Rng.__new__(Rng)
        if _COMPILED_HALVES is not None:  # the first word after ``seed``, made in C
            word: list[int] = []
            _COMPILED_HALVES(seed & _MASK, 1, word)
            r.state = word[0] | (word[1] << 32)
        else:
            r.state = seed & _MASK
            r.state = r.next64()
        return r

    def getstate(self) -> Any:
        return self.state

    def setstate(self, state: object) -> None:
        if isinstance(state, bool) or not isinstance(state, int) or not 0 <= state <= _MASK:
            raise ValueError(f"Rng state must be an integer in [0, 2**64), got {state!r}")
        self.state = state

    def next64(self) -> int:
        self.state = z = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def next64_many(self, count: int) -> list[int]:
        # next64 inlined: the same words, without a method call per word.
        out: list[int] = []
        append = out.append
        mask = _MASK
        z = self.state
        for _ in range(count):
            z = (z + 0x9E3779B97F4A7C15) & mask
            y = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & mask
            y = (y ^ (y >> 27)) * 0x94D049BB133111EB & mask
            append(y ^ (y >> 31))
        self.state = z
        return out

    def next64_halves(self, count: int) -> list[int]:
        out: list[int] = []
        if _COMPILED_HALVES is not None:  # the compiled build: the same words in C
            self.state = _COMPILED_HALVES(self.state, count, out)
            return out
        append = out.append
        mask = _MASK
        z = self.state
        for _ in range(count):
            z = (z + 0x9E3779B97F4A7C15) & mask
            y = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & mask
            y = (y ^ (y >> 27)) * 0x94D049BB133111EB & mask
            y ^= y >> 31
            append(y & 0xFFFFFFFF)
            append(y >> 32)
        self.state = z
        return out

    def shuffle(self, x: MutableSequence[Any]) -> None:
        # The compiled build: SerialRng.shuffle's draws, the words made in C as they go.
        if _COMPILED_SHUFFLE is not None and type(x) is list and len(x) < 1 << 32:
            self.state = _COMPILED_SHUFFLE(self.state, x)
        else:
            SerialRng.shuffle(self, x)

    def clone(self) -> Rng:
        r = Rng.__new__(Rng)
        r.state = self.state
        return r

    def to_text(self) -> str:
        return f"{self.state:x}"


class ChanceRng(SerialRng):
    """Keyed BLAKE2b in counter mode: word ``i`` of the stream is bytes ``8*(i%8)`` to
    ``8*(i%8)+8`` of ``BLAKE2b-512(key=key, data=i // 8 as 8 bytes)``.

    The state is the key and the number of words used so far. Without the key, the words
    already seen say nothing about the next ones (BLAKE2b is a pseudo-random function), so
    a player who watches every card dealt still cannot predict a reshuffle."""

    key: bytes
    used: int
    #: The block whose 8 words ``_halves`` holds, as 16 halves (low, high, low...; -1: none
    #: yet).
    _block: int
    _halves: tuple[int, ...]
    #: BLAKE2b with the key and personalisation absorbed: each block is a copy of it fed
    #: the counter (the key block is hashed once per generator, not once per block). Made on
    #: the first block: most decoded states are answered without drawing a word.
    _keyed: Any

    def __init__(self, key: bytes, used: int = 0) -> None:
        if not isinstance(key, bytes) or len(key) != CHANCE_KEY_BYTES:
            raise ValueError(f"a chance key is {CHANCE_KEY_BYTES} bytes")
        if isinstance(used, bool) or not isinstance(used, int) or not 0 <= used <= _MASK:
            raise ValueError(f"ChanceRng position must be an integer in [0, 2**64), got {used!r}")
        self.key = key
        self.used = used
        self._block = -1
        self._halves = ()
        self._keyed = None
        # Not random.Random.__init__: its seed() call does nothing here (the key fixes the
        # stream), and every decoded state makes a generator.
        self.gauss_next = None

    def seed(self, a: object = None, version: int = 2) -> None:
        """The key fixes the stream: ``random.Random.__init__`` calls this, and it does nothing."""

    def getstate(self) -> Any:
        return (self.key, self.used)

    def setstate(self, state: object) -> None:
        if not isinstance(state, tuple) or len(state) != 2:
            raise ValueError(f"ChanceRng state must be a (key, used) pair, got {state!r}")
        key, used = state
        fresh = ChanceRng(key, used)  # validates both parts
        self.key, self.used, self._block, self._halves = fresh.key, fresh.used, -1, ()
        self._keyed = fresh._keyed

    def _load(self, block: int) -> tuple[int, ...]:
        """The 8 words of ``block`` (BLAKE2b-512 of the counter) as 16 little-endian 32-bit
        halves, kept until the next block."""
        keyed = self._keyed
        if keyed is None:
            keyed = self._keyed = hashlib.blake2b(key=self.key, person=_PERSON_STREAM)
        h = keyed.copy()
        h.update(block.to_bytes(8, "little"))
        self._halves = halves = _BLOCK_HALVES.unpack(h.digest())
        self._block = block
        return halves

    def next64(self) -> int:
        i = self.used
        block, word = divmod(i, _WORDS_PER_BLOCK)
        h = self._halves if block == self._block else self._load(block)
        self.used = i + 1
        return h[2 * word] | (h[2 * word + 1] << 32)

    def next64_many(self, count: int) -> list[int]:
        h = self.next64_halves(count)
        return [h[k] | (h[k + 1] << 32) for k in range(0, 2 * count, 2)]

    def next64_halves(self, count: int) -> list[int]:
        # The words of ``count`` calls of next64, a block (8 words) at a time.
        i = self.used
        end = i + count
        block, word = divmod(i, _WORDS_PER_BLOCK)
        h = self._halves if block == self._block else self._load(block)
        out = list(h[2 * word : 2 * (word + count)])
        i += len(out) // 2
        while i < end:
            h = self._load(i // _WORDS_PER_BLOCK)
            take = end - i
            out.extend(h if take >= _WORDS_PER_BLOCK else h[: 2 * take])
            i += _WORDS_PER_BLOCK if take >= _WORDS_PER_BLOCK else take
        self.used = end
        return out

    def clone(self) -> ChanceRng:
        r = ChanceRng.__new__(ChanceRng)
        r.key = self.key
        r.used = self.used
        r._block = self._block
        r._halves = self._halves
        r._keyed = self._keyed  # never fed: each block feeds a copy
        return r

    def to_text(self) -> str:
        return f"k{self.key.hex()}.{self.used:x}"


def chance_key(game: str, seed: int, secret: bytes = b"") -> bytes:
    """The key of a game's :class:`ChanceRng`: BLAKE2b of the game's name and seed, keyed
    with ``secret`` (at most 64 bytes). The same (game, seed, secret) always gives the same
    game; without the secret, the seed says nothing about the deal. An empty secret (the
    CLI, tests) makes the deal a function of the seed alone."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"a seed is a non-negative integer, got {seed!r}")
    if len(secret) > hashlib.blake2b.MAX_KEY_SIZE:
        raise ValueError(f"a chance secret is at most {hashlib.blake2b.MAX_KEY_SIZE} bytes")
    data = game.encode("utf-8") + b"\x00" + seed.to_bytes((seed.bit_length() + 7) // 8 or 1, "big")
    return hashlib.blake2b(data, key=secret, person=_PERSON_KEY, digest_size=CHANCE_KEY_BYTES).digest()


def game_rng(game: str, seed: int, secret: bytes = b"") -> ChanceRng:
    """The chance of a new game (see :func:`chance_key`)."""
    return ChanceRng(chance_key(game, seed, secret))


def rng_from_text(text: str) -> SerialRng:
    """The generator written by :meth:`SerialRng.to_text`: ``k<64 hex>.<hex>`` for a
    :class:`ChanceRng`, plain hex for an :class:`Rng`. Raises ``ValueError``."""
    if not text.isascii():
        raise ValueError("not a generator state")
    if text.startswith("k"):
        key_hex, dot, used_hex = text[1:].partition(".")
        if not dot or len(key_hex) != 2 * CHANCE_KEY_BYTES or not used_hex.isalnum():
            raise ValueError("a chance generator is k<64 hex digits>.<hex position>")
        return ChanceRng(bytes.fromhex(key_hex), int(used_hex, 16))
    if not text.isalnum():
        raise ValueError("not a hexadecimal generator state")
    r = Rng.__new__(Rng)  # not Rng(0): its seeding would only be overwritten
    r.setstate(int(text, 16))
    return r
