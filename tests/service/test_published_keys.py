"""The server refuses to start on a state key that the repository publishes (the examples,
the docs), and the list of such keys stays complete (service/published_keys.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from service_helpers import KEY1, ROOT

from service.envelope import _b64decode
from service.published_keys import PUBLISHED, fingerprint

#: What an operator reads and may copy: the manifests, the docs, the examples.
SCANNED = ("k8s", "docs", "examples", "interop", "README.md", "Dockerfile")
#: ``id:secret`` with a secret in base64 (at least one capital, digit or + / =: not a word).
KEY_SHAPED = re.compile(r"([A-Za-z0-9_.-]+):([A-Za-z0-9+/_-]{22,}={0,2})")
#: The example of k8s/secret.example.yaml before it became a placeholder that is no key.
OLD_EXAMPLE = "k1:REPLACE+WITH+32+RANDOM+BYTES+IN+BASE64+AAAAAAA="


def key_shaped_strings() -> list[tuple[str, str]]:
    files = subprocess.run(
        ["git", "ls-files", "--", *SCANNED], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    assert len(files) > 10, files
    found = []
    for name in files:
        try:
            text = (ROOT / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for match in KEY_SHAPED.finditer(text):
            secret = match.group(2)
            if not re.search(r"[A-Z0-9+/=]", secret):
                continue
            try:
                if len(_b64decode(secret)) >= 16:
                    found.append((name, match.group(0)))
            except ValueError:
                continue
    return found


def test_every_key_printed_in_the_examples_and_docs_is_refused() -> None:
    for name, key in key_shaped_strings():
        assert fingerprint(key.partition(":")[2]) in PUBLISHED, (
            f"{name}: {key} is not in service.published_keys"
        )


def test_the_scan_finds_a_key_written_like_the_examples() -> None:
    assert KEY_SHAPED.fullmatch(OLD_EXAMPLE) and KEY_SHAPED.fullmatch(KEY1)
    assert fingerprint(OLD_EXAMPLE.partition(":")[2]) in PUBLISHED


def serve_exit(keys: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEKA_")}
    env["HEKA_STATE_KEYS"] = keys
    command = [sys.executable, "-m", "service.cli", "serve", "--host", "127.0.0.1", "--port", "0"]
    command += ["--metrics-port", "-1", "--search-workers", "1"]
    # A server that wrongly starts is stopped by the timeout (the test then fails).
    try:
        return subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=30, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"the server started with {keys!r}") from exc


@pytest.mark.parametrize(
    "keys",
    [OLD_EXAMPLE, f"{KEY1},old{OLD_EXAMPLE[2:]}", "<the output of: heka serve --new-key>"],
    ids=["old-example", "example-as-verify-key", "placeholder"],
)
def test_the_server_refuses_the_published_example(keys: str) -> None:
    done = serve_exit(keys)
    assert done.returncode == 2, done.stderr
    assert "cannot start" in done.stderr
    if "REPLACE" in keys:
        assert "k8s/secret.example.yaml" in done.stderr and "heka serve --new-key" in done.stderr


def test_the_example_secret_holds_no_working_key() -> None:
    yaml_text = (ROOT / "k8s" / "secret.example.yaml").read_text()
    (value,) = re.findall(r'HEKA_STATE_KEYS: "([^"]*)"', yaml_text)
    assert serve_exit(value).returncode == 2
