"""Small readers for the deployment files, shared by the tests in tests/deploy/.

``parse_dockerfile`` understands what our Dockerfile uses (comments, parser directives,
line continuations, ``FROM ... AS``, JSON-form instructions); it is not a general parser.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import shlex
import shutil
import socket
import sys
from pathlib import Path
from typing import Any, NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
K8S = ROOT / "k8s"


@dataclasses.dataclass
class Instruction:
    keyword: str  # upper case
    value: str  # the rest of the (joined) line
    line: int

    def json_args(self) -> list[str] | None:
        """The arguments of an exec-form (JSON array) instruction, else None."""
        try:
            parsed = json.loads(self.value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, list) and all(isinstance(a, str) for a in parsed) else None


@dataclasses.dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[Instruction]

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]

    def env(self) -> dict[str, str]:
        """ENV values set in this stage (``K=V`` pairs; ``$VAR`` expanded from earlier ones)."""
        out: dict[str, str] = {}
        for ins in self.all("ENV"):
            for token in shlex.split(ins.value):
                key, _, value = token.partition("=")
                out[key] = value
        return out


def parse_dockerfile(text: str) -> list[Stage]:
    """The stages of a Dockerfile (``ARG`` lines before the first ``FROM``: :func:`global_args`)."""
    stages: list[Stage] = []
    pending = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue  # comment lines inside a continuation are dropped by Docker too
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        full = pending + line
        pending = ""
        keyword, _, value = full.partition(" ")
        ins = Instruction(keyword.upper(), value.strip(), start)
        if ins.keyword == "FROM":
            parts = ins.value.split()
            name = parts[2] if len(parts) >= 3 and parts[1].upper() == "AS" else None
            stages.append(Stage(parts[0], name, []))
        elif not stages and ins.keyword != "ARG":
            raise ValueError(f"line {start}: {keyword} before FROM")
        elif not stages:
            continue
        else:
            stages[-1].instructions.append(ins)
    return stages


def global_args(text: str) -> dict[str, str]:
    """The ``ARG NAME=DEFAULT`` lines before a Dockerfile's first ``FROM`` (what ``FROM`` may use)."""
    args: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if line.upper().startswith("FROM "):
            break
        if line.upper().startswith("ARG "):
            name, _, default = line[4:].strip().partition("=")
            args[name] = default
    return args


def stage_named(stages: list[Stage], name: str) -> Stage:
    for stage in stages:
        if stage.name == name:
            return stage
    raise KeyError(name)


def resolved_env(stages: list[Stage], stage: Stage) -> dict[str, str]:
    """ENV of ``stage`` including what it inherits through ``FROM <earlier stage>``."""
    chain = [stage]
    while True:
        names = {s.name: s for s in stages if s.name}
        parent = names.get(chain[-1].base)
        if parent is None:
            break
        chain.append(parent)
    env: dict[str, str] = {}
    for s in reversed(chain):
        for key, value in s.env().items():
            env[key] = _expand(value, env)
    return env


def _expand(value: str, env: dict[str, str]) -> str:
    for key in sorted(env, key=len, reverse=True):
        value = value.replace("$" + key, env[key]).replace("${" + key + "}", env[key])
    return value


def load_manifests() -> list[tuple[Path, dict[str, object]]]:
    """Every YAML document under k8s/ with the file it came from."""
    import yaml

    docs: list[tuple[Path, dict[str, object]]] = []
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                docs.append((path, doc))
    return docs


def venv_tool(name: str) -> str | None:
    """A console script installed next to this interpreter (the .venv), else on PATH."""
    local = Path(sys.executable).parent / name
    if local.exists():
        return str(local)
    return shutil.which(name)


OPS_HINT = "the `ops` extra: make ops-check, or pip install -e '.[ops]'"


def in_ci() -> bool:
    """CI sets CI=true (.ci/run does): there a missing tool is a failure, not a skip."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing(what: str) -> NoReturn:
    """Skip (outside CI) or fail (under CI) a test whose tool or module is not installed, saying
    which and how to get it: in CI a skipped check must not look like a passed one."""
    reason = f"{what} not installed ({OPS_HINT})"
    if in_ci():
        pytest.fail(f"CI=true: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def require_tool(name: str) -> str:
    tool = venv_tool(name)
    if tool is None:
        missing(name)
    return tool


def require_module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        missing(f"the Python module {name}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
