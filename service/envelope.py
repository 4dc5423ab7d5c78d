"""The state token: the engine's serialisation, sealed.

Version 2, written by this release (then base64url without padding)::

    "HK" | 2 | flags (bit 0: encrypted) | key id length | key id (ASCII) | body

* **sealed** (the default; flag set): ``body`` is a 16-byte random salt followed by the
  AES-256-GCM ciphertext (with its 16-byte tag) of the state text, under a key used for
  this token only, ``BLAKE2b(key=enc_key, data=salt)``, with a zero nonce and the header
  (everything before the body) as associated data. GCM authenticates and encrypts in one
  step; a fresh key per token lifts GCM's limit of about 2**32 random nonces per key (a busy
  deployment seals that many tokens in days).
* **plain** (``--insecure-plaintext-tokens``, for debugging only): ``body`` is the state
  text followed by its HMAC-SHA256 tag (32 bytes) over everything before it; anyone
  holding the token can read every hidden card.

Version 1 (the previous release: HMAC-SHA256 over the header and a body that is the text or
a 12-byte nonce and its AES-256-GCM ciphertext) is still read, so that tokens issued before
an upgrade keep working.

Each configured secret yields three sub-keys: ``HMAC(secret, "heka/v1/mac")``,
``HMAC(secret, "heka/v1/enc")`` and ``HMAC(secret, "heka/v1/chance")``, which keys the
games' chance (:func:`engine.rng.chance_key`): without the secret, a seed says nothing
about the deal. The first key of the ring seals; every key of the ring opens, so keys can
be rotated: add the new key first, keep the old one until the old tokens have expired
from clients, then remove it.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import hmac
import os
import re
import secrets
import string
from collections.abc import Sequence
from typing import NamedTuple

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from engine.rng import Rng, SerialRng, chance_key, game_rng

MAGIC = b"HK"
VERSION = 2
#: Envelope versions :meth:`KeyRing.open` reads.
READ_VERSIONS = (1, 2)
FLAG_ENCRYPTED = 0x01
TAG_BYTES = 32
NONCE_BYTES = 12
SALT_BYTES = 16
GCM_TAG_BYTES = 16
_ZERO_NONCE = bytes(NONCE_BYTES)
_TOKEN_KEY_PERSON = b"heka.token.v2"
MIN_SECRET_BYTES = 16
#: Fewest distinct byte values a secret holds: 16 random bytes hold 8 or fewer about once in
#: 10^10 draws; a run of zeros or a repeated pattern holds a few.
MIN_DISTINCT_BYTES = 9
_KEY_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
#: The longest key id an error message repeats: shorter than the base64 of the shortest secret
#: (22 characters), so that a secret written in the id's place never reaches the logs.
MAX_SHOWN_ID_CHARS = 16
_HEADER_FIXED = len(MAGIC) + 3
#: Longest token accepted, in characters, far above real tokens of any state version read
#: (a few hundred characters: docs/rules/, "Serialisation"); a longer one is refused before
#: any decoding.
MAX_TOKEN_CHARS = 8192
_B64URL = re.compile(r"^[A-Za-z0-9_-]+$")
_NOT_BASE64URL = "state token is not valid base64url text (A-Z a-z 0-9 - _, no padding)"
#: base64url to standard base64, with the standard alphabet's own '+' and '/', and padding,
#: made invalid: a token holds none of them.
_URLSAFE_TO_STRICT = bytes.maketrans(b"-_+/=", b"+/!!!")
_STD_TO_URLSAFE = bytes.maketrans(b"+/", b"-_")
#: The padding base64 needs after a text of length 0, 1, 2, 3 modulo 4 (1 is refused before).
_PAD = (b"", b"===", b"==", b"=")
#: The bits of a text's last character that encode no byte, by the text's length modulo 4:
#: base64 decoders ignore them, so a text with any of them set is another text for the same
#: bytes, which heka never writes (each token has one text).
_UNUSED_BITS = (0, 0, 0x0F, 0x03)
_B64URL_ALPHABET = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"
_B64URL_VALUE = {c: v for v, c in enumerate(_B64URL_ALPHABET)}


class TokenError(ValueError):
    """A state token is refused (empty, malformed, forged, altered, truncated, foreign)."""


class KeyConfigError(ValueError):
    """HEKA_STATE_KEYS is malformed."""


@dataclasses.dataclass(frozen=True, slots=True)
class StateKey:
    key_id: str
    mac_key: bytes
    enc_key: bytes
    #: Keys the chance of the games this key creates (``engine.rng.chance_key``).
    chance_secret: bytes
    #: Keys the generators of the bots' searches (:meth:`search_seed`).
    search_secret: bytes

    @classmethod
    def from_secret(cls, key_id: str, secret: bytes, name: str = "") -> StateKey:
        """The key ``key_id`` of ``secret``; a :class:`KeyConfigError` names it ``name`` (by
        default its id when valid), and never repeats a bad id: a secret written in its place
        would go to the logs."""
        valid = bool(_KEY_ID.match(key_id))
        name = name or (f"key {key_id!r}" if valid else "key")
        if not valid:
            raise KeyConfigError(
                f"{name}: bad key id ({len(key_id)} characters): use 1-64 characters of "
                "A-Z a-z 0-9 . _ -, then ':' and the secret"
            )
        if len(secret) < MIN_SECRET_BYTES:
            raise KeyConfigError(f"{name}: secret is {len(secret)} bytes, at least {MIN_SECRET_BYTES} needed")
        if len(set(secret)) < MIN_DISTINCT_BYTES:
            raise KeyConfigError(
                f"{name}: secret holds only {len(set(secret))} distinct byte values (a "
                "repeated pattern, not random bytes): make one with `heka serve --new-key`"
            )
        return cls(
            key_id,
            hmac.new(secret, b"heka/v1/mac", hashlib.sha256).digest(),
            hmac.new(secret, b"heka/v1/enc", hashlib.sha256).digest(),
            hmac.new(secret, b"heka/v1/chance", hashlib.sha256).digest(),
            hmac.new(secret, b"heka/v1/search", hashlib.sha256).digest(),
        )

    def search_seed(self, game: str, seat: int, seed: int, view_text: str) -> int:
        """The seed a bot's search runs with: 64 bits of HMAC-SHA256, under the key's search
        secret, of the game, the bot's seat, the published seed (``SearchDiagnostics.seed``)
        and the bot's own view (``view_text``: what it knows, its hand included; see
        ``service.bots.search_seed``). Without the
        key, the published seed re-runs nothing: a viewer cannot replay the search on the
        worlds its own view allows and keep those that give the move played
        (docs/security.md, "Bots' seeds"). With the key (an operator) the decision replays
        exactly; the bot's view, not the whole state, keeps two games that differ only in
        what the bot cannot see on the same seed."""
        data = b"\x00".join(
            (
                game.encode("utf-8"),
                str(seat).encode("ascii"),
                str(seed).encode("ascii"),
                view_text.encode("utf-8"),
            )
        )
        return int.from_bytes(hmac.digest(self.search_secret, data, "sha256")[:8], "little")

    def game_rng(self, game: str, seed: int, *, previous_versions: bool = False) -> SerialRng:
        """The chance of a game this key creates: keyed BLAKE2b of (game, seed) under the
        key's chance secret, so that without the key nothing predicts the deal or a later
        shuffle (docs/security.md). ``previous_versions``: the previous release's generator
        (SplitMix64), which its state versions can hold, seeded from that same keyed
        derivation (unpredictable from the seed, not from a long run of watched shuffles;
        only for an upgrade window)."""
        if previous_versions:
            return Rng(int.from_bytes(chance_key(game, seed, self.chance_secret)[:8], "little"))
        return game_rng(game, seed, self.chance_secret)


class Opened(NamedTuple):
    """What a verified token holds (a named tuple: built on every call that opens a token,
    where a frozen dataclass's ``__init__`` costs a microsecond)."""

    serialized: str
    key_id: str
    encrypted: bool
    version: int


def _b64decode(text: str) -> bytes:
    text = text.strip().rstrip("=")
    if not re.fullmatch(r"[A-Za-z0-9+/_-]+", text):
        raise ValueError("not base64")
    text = text.replace("-", "+").replace("_", "/")
    return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)


def parse_keys(spec: str, source: str = "") -> list[StateKey]:
    """Parse ``id:secret[,id:secret...]`` (secrets in base64, standard or url-safe); a
    :class:`KeyConfigError` names ``source``, where the keys came from (a variable, a flag
    and its file)."""
    where = f"{source}: " if source else ""
    keys: list[StateKey] = []
    for part in spec.replace("\n", ",").split(","):
        part = part.strip()
        if not part:
            continue
        key_id, sep, secret_b64 = part.partition(":")
        key_id = key_id.strip()
        # A key is named by its place, and by its id only when that is short enough not to be
        # a secret written in the id's place (ids and secrets swapped): errors go to the logs.
        name = f"key {len(keys) + 1}"
        if sep and _KEY_ID.match(key_id) and len(key_id) <= MAX_SHOWN_ID_CHARS:
            name += f" ({key_id!r})"
        if not sep:
            raise KeyConfigError(f"{where}{name}: each key must be written key_id:base64_secret")
        try:
            secret = _b64decode(secret_b64)
        except (binascii.Error, ValueError):
            raise KeyConfigError(f"{where}{name}: secret is not valid base64") from None
        try:
            keys.append(StateKey.from_secret(key_id, secret, name))
        except KeyConfigError as exc:
            raise KeyConfigError(f"{where}{exc}") from None
    ids = [k.key_id for k in keys]
    if len(set(ids)) != len(ids):
        raise KeyConfigError(f"{where}key ids must be distinct")
    return keys


def new_secret_spec(key_id: str = "k1") -> str:
    """A fresh ``key_id:secret`` entry (32 random bytes), e.g. for ``heka serve --new-key``."""
    return f"{key_id}:{base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip('=')}"


class KeyRing:
    """Seals with the first key, opens with any."""

    def __init__(
        self,
        keys: Sequence[StateKey],
        *,
        encrypt: bool = True,
        ephemeral: bool = False,
        version: int = VERSION,
    ):
        """``version``: the envelope version :meth:`seal` writes: 2, or 1 for the previous
        release to open during a rolling upgrade (``previous_state_versions``)."""
        if not keys:
            raise KeyConfigError("at least one key is needed")
        if version not in READ_VERSIONS:
            raise KeyConfigError(f"unknown envelope version {version}")
        self.keys = tuple(keys)
        self.signing = self.keys[0]
        self.by_id = {k.key_id: k for k in self.keys}
        self.encrypt = encrypt
        self.ephemeral = ephemeral
        self.version = version
        kid = self.signing.key_id.encode("ascii")
        self._header = MAGIC + bytes((version, FLAG_ENCRYPTED if encrypt else 0, len(kid))) + kid
        #: Each key's token-key derivation, keyed once: a copy is cheaper than keying anew.
        self._token_kdf = {k.key_id: _token_kdf(k.enc_key) for k in self.keys}

    @classmethod
    def ephemeral_ring(cls, *, encrypt: bool = True, version: int = VERSION) -> KeyRing:
        key = StateKey.from_secret(f"ephemeral-{secrets.token_hex(4)}", os.urandom(32))
        return cls([key], encrypt=encrypt, ephemeral=True, version=version)

    # ------------------------------------------------------------------------------------
    def seal(self, serialized: str) -> str:
        header = self._header
        plain = serialized.encode("utf-8")
        if self.version == 1:
            return _seal_v1(self.signing, header, plain, self.encrypt)
        if self.encrypt:
            salt = os.urandom(SALT_BYTES)
            cipher = _token_cipher(self._token_kdf[self.signing.key_id], salt)
            body = salt + cipher.encrypt(_ZERO_NONCE, plain, header)
            return _b64url(header + body)
        signed = header + plain
        tag = hmac.digest(self.signing.mac_key, signed, "sha256")
        return _b64url(signed + tag)

    def open(self, token: str) -> Opened:
        """Verify and open a token; :class:`TokenError` says precisely why it is refused."""
        if not token:
            raise TokenError(
                "state token is empty: pass the `state` returned by CreateGame or a previous call"
            )
        if len(token) > MAX_TOKEN_CHARS:
            raise TokenError(
                f"state token is {len(token)} characters long, longer than any heka token "
                f"({MAX_TOKEN_CHARS} at most): pass the `state` returned by CreateGame or a previous call"
            )
        if len(token) % 4 == 1:
            raise TokenError(_NOT_BASE64URL)
        try:
            # Checked as it is decoded, in one pass: '+', '/' and '=' become a character that
            # strict decoding refuses, as it refuses anything else outside the alphabet.
            raw = binascii.a2b_base64(
                token.encode("ascii").translate(_URLSAFE_TO_STRICT) + _PAD[len(token) % 4], strict_mode=True
            )
        except (UnicodeEncodeError, binascii.Error):
            # The messages of a check by regex first, then a lenient decoding.
            if _B64URL.match(token):
                raise TokenError("state token is not valid base64url text") from None
            raise TokenError(_NOT_BASE64URL) from None
        if _B64URL_VALUE[token[-1]] & _UNUSED_BITS[len(token) % 4]:
            raise TokenError("state token is not the text heka wrote: its last character was changed")
        if len(raw) < _HEADER_FIXED or raw[:2] != MAGIC:
            if raw[:2] == MAGIC:
                raise TokenError("state token is truncated")
            raise TokenError("not a heka state token")
        version, flags, kid_len = raw[2], raw[3], raw[4]
        if version not in READ_VERSIONS:
            raise TokenError(
                f"state token version {version} is not supported (this server reads versions "
                f"{', '.join(map(str, READ_VERSIONS))})"
            )
        body_start = _HEADER_FIXED + kid_len
        if len(raw) < body_start:
            raise TokenError("state token is truncated")
        try:
            key_id = raw[_HEADER_FIXED:body_start].decode("ascii")
        except UnicodeDecodeError:
            key_id = ""
        key = self.by_id.get(key_id)
        if key is None:
            # Keep the message useful without echoing arbitrary bytes.
            shown = key_id if _KEY_ID.match(key_id) else "?"
            raise TokenError(
                f"state token was signed with key {shown!r}, unknown to this server "
                "(a token from another deployment, a key that was rotated out, or an altered token)"
            )
        if flags & ~FLAG_ENCRYPTED:
            raise TokenError(f"state token has unknown flags {flags:#04x}")
        encrypted = bool(flags & FLAG_ENCRYPTED)
        if self.encrypt and not encrypted:
            # Readable by anyone who holds it: hidden cards and the game's chance key in clear.
            # Such a token was written with HEKA_INSECURE_PLAINTEXT_TOKENS, a debugging setting:
            # a server that seals refuses it rather than keep it valid as long as its key.
            raise TokenError(
                "state token is not sealed (written with HEKA_INSECURE_PLAINTEXT_TOKENS); this "
                "server reads sealed tokens only"
            )
        if version == 1:
            plain = _open_v1(key, raw, body_start, encrypted)
        elif encrypted:
            header, body = raw[:body_start], raw[body_start:]
            if len(body) < SALT_BYTES + GCM_TAG_BYTES:
                raise TokenError("state token is truncated")
            salt = body[:SALT_BYTES]
            try:
                cipher = _token_cipher(self._token_kdf[key.key_id], salt)
                plain = cipher.decrypt(_ZERO_NONCE, body[SALT_BYTES:], header)
            except InvalidTag:
                raise TokenError(
                    "state token failed its integrity check: it was altered, truncated or forged"
                ) from None
        else:
            plain = _check_mac(key, raw)
        try:
            serialized = plain.decode("utf-8")
        except UnicodeDecodeError:
            raise TokenError("state token holds no readable state") from None
        return Opened(serialized, key.key_id, encrypted, version)


def _b64url(raw: bytes) -> str:
    """base64url without padding (``base64.urlsafe_b64encode`` without its wrappers)."""
    return binascii.b2a_base64(raw, newline=False).translate(_STD_TO_URLSAFE).rstrip(b"=").decode("ascii")


def _token_kdf(enc_key: bytes) -> hashlib.blake2b:
    """BLAKE2b keyed with ``enc_key`` (the derivation of the tokens' keys), before any data."""
    return hashlib.blake2b(key=enc_key, digest_size=32, person=_TOKEN_KEY_PERSON)


def _token_cipher(kdf: hashlib.blake2b, salt: bytes) -> AESGCM:
    """The AES-256-GCM cipher of one token: its own key, ``BLAKE2b(key=enc_key, data=salt)``
    (``kdf``: :func:`_token_kdf` of ``enc_key``, which stays unchanged)."""
    derive = kdf.copy()
    derive.update(salt)
    return AESGCM(derive.digest())


def _check_mac(key: StateKey, raw: bytes) -> bytes:
    """The body of an HMAC-tagged token (plain version 2, or version 1), once verified."""
    if len(raw) < _HEADER_FIXED + TAG_BYTES:
        raise TokenError("state token is truncated")
    signed, tag = raw[:-TAG_BYTES], raw[-TAG_BYTES:]
    if not hmac.compare_digest(hmac.digest(key.mac_key, signed, "sha256"), tag):
        raise TokenError("state token failed its integrity check: it was altered, truncated or forged")
    return signed[_HEADER_FIXED + raw[4] :]


def _seal_v1(key: StateKey, header: bytes, plain: bytes, encrypt: bool) -> str:
    """A version-1 token (the previous release's envelope, which that release opens)."""
    body = plain
    if encrypt:
        nonce = os.urandom(NONCE_BYTES)
        body = nonce + AESGCM(key.enc_key).encrypt(nonce, plain, header)
    signed = header + body
    tag = hmac.digest(key.mac_key, signed, "sha256")
    return base64.urlsafe_b64encode(signed + tag).rstrip(b"=").decode("ascii")


def _open_v1(key: StateKey, raw: bytes, body_start: int, encrypted: bool) -> bytes:
    """A version-1 token (the previous release): encrypt-then-MAC."""
    if len(raw) < body_start + TAG_BYTES:
        raise TokenError("state token is truncated")
    body = _check_mac(key, raw)
    if not encrypted:
        return body
    if len(body) < NONCE_BYTES + GCM_TAG_BYTES:
        raise TokenError("state token is truncated")
    try:
        return AESGCM(key.enc_key).decrypt(body[:NONCE_BYTES], body[NONCE_BYTES:], raw[:body_start])
    except InvalidTag:
        raise TokenError("state token cannot be decrypted: it was altered or forged") from None
