"""State tokens (service/envelope.py): sealed by default, opened by every key of the ring,
signed by the first; every altered, truncated, overlong or malformed token refused; the
previous release's envelope still opens and, in compatibility mode, is the one sealed."""

from __future__ import annotations

import base64

import pytest
from service_helpers import KEY1, KEY2

from service.envelope import KeyConfigError, KeyRing, TokenError, new_secret_spec, parse_keys


def test_seal_open_round_trip_plain_and_encrypted() -> None:
    for encrypt in (False, True):
        ring = KeyRing(parse_keys(KEY1), encrypt=encrypt)
        token = ring.seal("aton:1:some-state")
        opened = ring.open(token)
        assert opened.serialized == "aton:1:some-state"
        assert opened.key_id == "k1" and opened.encrypted == encrypt and opened.version == 2


def test_tokens_are_sealed_by_default_and_hold_no_readable_text() -> None:
    """A KeyRing encrypts unless told otherwise; two seals of one text differ
    (a fresh salt, so a fresh key, per token) and neither shows the text."""
    ring = KeyRing(parse_keys(KEY1))
    assert ring.encrypt
    text = "aton:2:r=1;hands=1234,4321"
    a, b = ring.seal(text), ring.seal(text)
    assert a != b and ring.open(a).serialized == ring.open(b).serialized == text
    for token in (a, b):
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        assert b"aton" not in raw and b"1234" not in raw
        assert ring.open(token).encrypted


def _v1_token(ring: KeyRing, text: str, *, encrypt: bool) -> str:
    """A token as the previous release sealed it (envelope version 1: encrypt-then-MAC)."""
    import hashlib
    import hmac
    import os

    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    key = ring.signing
    kid = key.key_id.encode()
    header = b"HK" + bytes((1, 1 if encrypt else 0, len(kid))) + kid
    body = text.encode()
    if encrypt:
        nonce = os.urandom(12)
        body = nonce + AESGCM(key.enc_key).encrypt(nonce, body, header)
    tag = hmac.new(key.mac_key, header + body, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(header + body + tag).rstrip(b"=").decode()


def test_compatibility_mode_seals_the_previous_envelope() -> None:
    """During a rolling upgrade (previous_state_versions) the server seals envelope version 1,
    the only one the previous release opens; encrypted all the same."""
    from service.config import Config
    from service.server import load_keys

    ring = load_keys(Config(state_keys=KEY1, previous_state_versions=True))
    token = ring.seal("osirium:2:abc")
    opened = ring.open(token)
    assert (opened.version, opened.encrypted, opened.serialized) == (1, True, "osirium:2:abc")
    assert token.startswith(_v1_token(ring, "x", encrypt=True)[:4])  # "HK", 1, flags
    assert load_keys(Config(state_keys=KEY1)).open(token).serialized == "osirium:2:abc"
    assert load_keys(Config(state_keys=KEY1)).version == 2


def test_tokens_of_the_previous_release_still_open() -> None:
    for encrypt in (False, True):
        ring = KeyRing(parse_keys(KEY1), encrypt=encrypt)
        old = _v1_token(ring, "osirium:2:abc", encrypt=encrypt)
        opened = ring.open(old)
        assert (opened.serialized, opened.version, opened.encrypted) == ("osirium:2:abc", 1, encrypt)
        raw = bytearray(base64.urlsafe_b64decode(old + "=" * (-len(old) % 4)))
        raw[-40] ^= 1
        with pytest.raises(TokenError):
            ring.open(base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode())


def test_a_sealing_server_refuses_a_readable_token() -> None:
    """A token written with HEKA_INSECURE_PLAINTEXT_TOKENS holds every hidden card and the
    game's chance key in clear: a server that seals refused none, so such tokens stayed valid
    as long as their key after the debugging ended."""
    keys = parse_keys(KEY1)
    plain, sealed = KeyRing(keys, encrypt=False), KeyRing(keys)
    for token in (plain.seal("osirium:2:abc"), _v1_token(plain, "osirium:2:abc", encrypt=False)):
        assert plain.open(token).serialized == "osirium:2:abc"
        with pytest.raises(TokenError, match="not sealed"):
            sealed.open(token)
    assert sealed.open(sealed.seal("osirium:2:abc")).encrypted


def test_every_single_bit_flip_is_refused() -> None:
    ring = KeyRing(parse_keys(KEY1), encrypt=True)
    token = ring.seal("osirium:1:xyz")
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    for i in range(len(raw)):
        for bit in (0x01, 0x80):
            bad = bytearray(raw)
            bad[i] ^= bit
            with pytest.raises(TokenError):
                ring.open(base64.urlsafe_b64encode(bytes(bad)).rstrip(b"=").decode())


@pytest.mark.parametrize("encrypt", [True, False])
def test_every_changed_character_is_refused(encrypt: bool) -> None:
    """Each token has one text: any character changed to any other of the alphabet is refused,
    the last one included. base64 decoders ignore the bits of a text's last character that
    encode no byte (4 bits at a length of 2 modulo 4, 2 at 3), so up to 15 other last
    characters decoded to the same bytes and opened, the same token under other texts."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    ring = KeyRing(parse_keys(KEY1), encrypt=encrypt)
    tails = set()
    for state in ("aton:1:a", "aton:1:ab", "aton:1:abc"):  # texts of each length modulo 4
        token = ring.seal(state)
        tails.add(len(token) % 4)
        assert ring.open(token).serialized == state
        for i, c in enumerate(token):
            for other in alphabet.replace(c, ""):
                with pytest.raises(TokenError):
                    ring.open(token[:i] + other + token[i + 1 :])
    assert tails == {0, 2, 3}


def test_every_truncation_is_refused() -> None:
    ring = KeyRing(parse_keys(KEY1))
    token = ring.seal("aton:1:abc")
    for n in range(len(token)):
        with pytest.raises(TokenError):
            ring.open(token[:n])


def test_tokens_outside_base64url_are_refused() -> None:
    """A token is base64url without padding: the standard alphabet's '+' and '/', padding,
    whitespace and anything else are refused, each with the message saying so."""
    ring = KeyRing(parse_keys(KEY1))
    token = ring.seal("aton:1:abc")
    assert ring.open(token).serialized == "aton:1:abc"
    for bad in (
        token[:-4] + "+" + token[-3:],
        token[:-4] + "/" + token[-3:],
        token[:-4] + "=" + token[-3:],
        token[:8] + " " + token[9:],
        token[:8] + "\n" + token[9:],
        token[:8] + "é" + token[9:],
        token + "=" * (-len(token) % 4 or 4),
    ):
        with pytest.raises(TokenError, match=r"not valid base64url text \(A-Z a-z 0-9 - _, no padding\)"):
            ring.open(bad)
    # A trailing line break (which a regular expression's `$` lets through) leaves the text
    # one character off the length its bytes need.
    with pytest.raises(TokenError, match="not valid base64url text"):
        ring.open(token + "\n")


def test_rotation_signs_with_first_key_and_verifies_all() -> None:
    old = KeyRing(parse_keys(KEY1))
    rotated = KeyRing(parse_keys(f"{KEY2},{KEY1}"))
    assert rotated.open(old.seal("a:1:x")).key_id == "k1"
    new_token = rotated.seal("a:1:x")
    assert rotated.open(new_token).key_id == "k2"
    with pytest.raises(TokenError, match="unknown to this server"):
        old.open(new_token)


def test_same_key_id_different_secret_is_refused() -> None:
    a = KeyRing(parse_keys(KEY1))
    b = KeyRing(parse_keys("k1:" + base64.b64encode(b"another secret of 32 bytes......").decode()))
    with pytest.raises(TokenError, match="integrity check"):
        b.open(a.seal("a:1:x"))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nocolon", "key_id:base64_secret"),
        ("k1:c2hvcnQ", "at least 16"),
        ("k1:***", "not valid base64"),
        ("bad id:" + base64.b64encode(b"x" * 32).decode(), "bad key id"),
        (f"{KEY1},{KEY1}", "distinct"),
        ("k1:AAAAAAAAAAAAAAAAAAAAAA", "only 1 distinct byte values"),  # 16 zero bytes
        ("k1:" + base64.b64encode(b"abcd" * 8).decode(), "only 4 distinct byte values"),
    ],
)
def test_bad_key_specs(spec: str, message: str) -> None:
    with pytest.raises(KeyConfigError, match=message):
        KeyRing(parse_keys(spec))


def test_a_bad_key_spec_never_repeats_a_secret() -> None:
    """Key errors go to the logs (the start_failed line): a secret written where the id goes
    (id and secret swapped, the id left out, a typo in the separator) is never repeated, nor a
    part of it; a key is named by its place, and by its id when that is short."""
    secret = base64.b64encode(bytes(range(7, 39))).decode()
    url_safe = base64.urlsafe_b64encode(bytes(range(40, 72))).decode().rstrip("=")
    specs = [
        f"{secret}:k1",  # swapped
        f"{url_safe}:k1",  # swapped, an id-shaped secret
        secret,  # no id
        url_safe,
        f"k1;{secret}",  # a wrong separator
        f"{KEY1},k2:{secret[:10]}",  # a short secret
    ]
    for spec in specs:
        with pytest.raises(KeyConfigError) as info:
            parse_keys(spec, "HEKA_STATE_KEYS")
        text = str(info.value)
        for s in (secret, url_safe):
            assert not any(s[i : i + 8] in text for i in range(len(s) - 7)), (spec, text)
    with pytest.raises(KeyConfigError, match=r"key 2 \('k2'\): secret is 7 bytes"):
        parse_keys(f"{KEY1},k2:{secret[:10]}")


def test_a_token_longer_than_the_bound_is_refused_before_decoding() -> None:
    from service.envelope import MAX_TOKEN_CHARS

    ring = KeyRing(parse_keys(KEY1))
    with pytest.raises(TokenError, match=f"{MAX_TOKEN_CHARS + 1} characters long"):
        ring.open("A" * (MAX_TOKEN_CHARS + 1))
    with pytest.raises(TokenError, match="not a heka state token"):  # at the bound: decoded
        ring.open("A" * MAX_TOKEN_CHARS)
    long_state = "aton:1:" + "x" * 5000  # a token of ~6,900 characters is still accepted
    assert ring.open(ring.seal(long_state)).serialized == long_state


def test_new_secret_spec_parses() -> None:
    (key,) = parse_keys(new_secret_spec("fresh"))
    assert key.key_id == "fresh"
