"""The state token: the engine's serialisation in a signed, optionally encrypted envelope.

Token layout (then base64url without padding)::

    "HK" | version (1 byte, = 1) | flags (1 byte; bit 0: encrypted) |
    key id length (1 byte) | key id (ASCII) | body | HMAC-SHA256 tag (32 bytes)

* ``body`` is the UTF-8 serialisation, or, when encrypted, a 12-byte random nonce followed
  by its AES-256-GCM ciphertext with the header (everything before the body) as associated
  data;
* the tag authenticates everything before it (encrypt-then-MAC), under the key named by
  the key id;
* each configured secret yields two sub-keys: ``HMAC(secret, "heka/v1/mac")`` and
  ``HMAC(secret, "heka/v1/enc")``.

The first key of the ring signs (and encrypts); every key of the ring verifies, so keys
can be rotated: add the new key first, keep the old one until the old tokens have expired
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
from collections.abc import Sequence

MAGIC = b"HK"
VERSION = 1
FLAG_ENCRYPTED = 0x01
TAG_BYTES = 32
NONCE_BYTES = 12
MIN_SECRET_BYTES = 16
_KEY_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_HEADER_FIXED = len(MAGIC) + 3
#: Longest token accepted, in characters. Real tokens are under 1,000 (~530 at most in
#: random games of this release, ~930 for the osirium:1 of the previous one); a longer one
#: is refused before any decoding.
MAX_TOKEN_CHARS = 8192
_B64URL = re.compile(r"^[A-Za-z0-9_-]+$")


class TokenError(ValueError):
    """A state token is refused (empty, malformed, forged, altered, truncated, foreign)."""


class KeyConfigError(ValueError):
    """HEKA_STATE_KEYS is malformed."""


@dataclasses.dataclass(frozen=True, slots=True)
class StateKey:
    key_id: str
    mac_key: bytes
    enc_key: bytes

    @classmethod
    def from_secret(cls, key_id: str, secret: bytes) -> StateKey:
        if not _KEY_ID.match(key_id):
            raise KeyConfigError(f"bad key id {key_id!r}: use 1-64 characters of A-Z a-z 0-9 . _ -")
        if len(secret) < MIN_SECRET_BYTES:
            raise KeyConfigError(
                f"key {key_id!r}: secret is {len(secret)} bytes, at least {MIN_SECRET_BYTES} needed"
            )
        return cls(
            key_id,
            hmac.new(secret, b"heka/v1/mac", hashlib.sha256).digest(),
            hmac.new(secret, b"heka/v1/enc", hashlib.sha256).digest(),
        )


@dataclasses.dataclass(frozen=True, slots=True)
class Opened:
    """What a verified token holds."""

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


def parse_keys(spec: str) -> list[StateKey]:
    """Parse ``id:secret[,id:secret...]`` (secrets in base64, standard or url-safe)."""
    keys: list[StateKey] = []
    for part in spec.replace("\n", ",").split(","):
        part = part.strip()
        if not part:
            continue
        key_id, sep, secret_b64 = part.partition(":")
        if not sep:
            raise KeyConfigError("each key must be written key_id:base64_secret")
        try:
            secret = _b64decode(secret_b64)
        except (binascii.Error, ValueError):
            raise KeyConfigError(f"key {key_id.strip()!r}: secret is not valid base64") from None
        keys.append(StateKey.from_secret(key_id.strip(), secret))
    ids = [k.key_id for k in keys]
    if len(set(ids)) != len(ids):
        raise KeyConfigError("key ids must be distinct")
    return keys


def new_secret_spec(key_id: str = "k1") -> str:
    """A fresh ``key_id:secret`` entry (32 random bytes), e.g. for ``heka serve --new-key``."""
    return f"{key_id}:{base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip('=')}"


class KeyRing:
    """Signs with the first key, verifies with any."""

    def __init__(self, keys: Sequence[StateKey], *, encrypt: bool = False, ephemeral: bool = False):
        if not keys:
            raise KeyConfigError("at least one key is needed")
        self.keys = tuple(keys)
        self.signing = self.keys[0]
        self.by_id = {k.key_id: k for k in self.keys}
        self.encrypt = encrypt
        self.ephemeral = ephemeral
        self._aead: object | None = None

    @classmethod
    def ephemeral_ring(cls, *, encrypt: bool = False) -> KeyRing:
        key = StateKey.from_secret(f"ephemeral-{secrets.token_hex(4)}", os.urandom(32))
        return cls([key], encrypt=encrypt, ephemeral=True)

    # ------------------------------------------------------------------------------------
    def seal(self, serialized: str) -> str:
        key = self.signing
        kid = key.key_id.encode("ascii")
        flags = FLAG_ENCRYPTED if self.encrypt else 0
        header = MAGIC + bytes((VERSION, flags, len(kid))) + kid
        plain = serialized.encode("utf-8")
        if self.encrypt:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            nonce = os.urandom(NONCE_BYTES)
            body = nonce + AESGCM(key.enc_key).encrypt(nonce, plain, header)
        else:
            body = plain
        signed = header + body
        tag = hmac.new(key.mac_key, signed, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(signed + tag).rstrip(b"=").decode("ascii")

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
        if not _B64URL.match(token) or len(token) % 4 == 1:
            raise TokenError("state token is not valid base64url text (A-Z a-z 0-9 - _, no padding)")
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except (binascii.Error, ValueError):
            raise TokenError("state token is not valid base64url text") from None
        if len(raw) < _HEADER_FIXED + TAG_BYTES or raw[:2] != MAGIC:
            if raw[:2] == MAGIC:
                raise TokenError("state token is truncated")
            raise TokenError("not a heka state token")
        version, flags, kid_len = raw[2], raw[3], raw[4]
        if version != VERSION:
            raise TokenError(
                f"state token version {version} is not supported (this server reads version {VERSION})"
            )
        body_start = _HEADER_FIXED + kid_len
        if len(raw) < body_start + TAG_BYTES:
            raise TokenError("state token is truncated")
        try:
            key_id = raw[_HEADER_FIXED:body_start].decode("ascii")
        except UnicodeDecodeError:
            key_id = ""
        key = self.by_id.get(key_id)
        signed, tag = raw[:-TAG_BYTES], raw[-TAG_BYTES:]
        if key is None:
            # Keep the message useful without echoing arbitrary bytes.
            shown = key_id if _KEY_ID.match(key_id) else "?"
            raise TokenError(
                f"state token was signed with key {shown!r}, unknown to this server "
                "(a token from another deployment, a key that was rotated out, or an altered token)"
            )
        expected = hmac.new(key.mac_key, signed, hashlib.sha256).digest()
        if not hmac.compare_digest(expected, tag):
            raise TokenError("state token failed its signature check: it was altered, truncated or forged")
        if flags & ~FLAG_ENCRYPTED:
            raise TokenError(f"state token has unknown flags {flags:#04x}")
        body = signed[body_start:]
        encrypted = bool(flags & FLAG_ENCRYPTED)
        if encrypted:
            from cryptography.exceptions import InvalidTag
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            if len(body) < NONCE_BYTES + 16:
                raise TokenError("state token is truncated")
            try:
                plain = AESGCM(key.enc_key).decrypt(
                    body[:NONCE_BYTES], body[NONCE_BYTES:], signed[:body_start]
                )
            except InvalidTag:
                raise TokenError("state token cannot be decrypted: it was altered or forged") from None
        else:
            plain = body
        try:
            serialized = plain.decode("utf-8")
        except UnicodeDecodeError:
            raise TokenError("state token holds no readable state") from None
        return Opened(serialized, key.key_id, encrypted, version)
