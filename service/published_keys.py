"""State keys that the heka repository publishes, which a server refuses to start with.

A key printed in an example (``k8s/secret.example.yaml``, the docs) is a key that everyone
has read: tokens sealed with it can be opened and forged, and its deals predicted. The
server refuses such a key at start (:func:`check_not_published`) and says how to make one.
The list holds the SHA-256 fingerprints of the decoded secrets, so that this file does not
publish the keys once more; ``tests/service/test_published_keys.py`` scans the repository's
examples and docs for key-shaped strings and fails on any whose fingerprint is missing here.
"""

from __future__ import annotations

import hashlib

from service.envelope import KeyConfigError, _b64decode

#: Fingerprint (sha256 of the decoded secret) -> where the key is (or was) published.
PUBLISHED: dict[str, str] = {
    "5f4e0c39408ab75ae5c583797aa59181a9529e3ff763add513ef29530a290d74": "k8s/secret.example.yaml",
}


def fingerprint(secret_b64: str) -> str | None:
    """The fingerprint of a base64 secret; None when it is not base64."""
    try:
        return hashlib.sha256(_b64decode(secret_b64)).hexdigest()
    except ValueError:
        return None


def check_not_published(spec: str) -> None:
    """KeyConfigError when a key of ``spec`` (``id:secret,...``) is one the repository
    publishes."""
    for part in spec.replace("\n", ",").split(","):
        key_id, _, secret = part.strip().partition(":")
        where = PUBLISHED.get(fingerprint(secret) or "")
        if where is not None:
            raise KeyConfigError(
                f"key {key_id.strip()!r} is the example key published in {where}: everyone can "
                "read it, open and forge its tokens and predict its deals; make a key of your "
                "own with `heka serve --new-key`"
            )
