"""The compiled build: the engine and the search's hot modules compiled with mypyc.

Everything else about the package is in ``pyproject.toml``; this file only adds the C
extensions. The pure-Python modules stay the reference: the extensions are built from the
same ``.py`` files (already ``mypy --strict``), the ``.py`` files ship next to them, and
``HEKA_PURE_PYTHON=1`` makes any install load the ``.py`` files instead (``engine/_build.py``).

``HEKA_COMPILE`` chooses:

* ``auto`` (default): compile when a C compiler and the Python headers are found and mypyc
  imports, else build the pure-Python package and say why;
* ``1``: compile, and fail if it cannot;
* ``0``: never compile (``make venv``'s editable install: ``make compile`` builds in place).

Used by ``pip wheel .`` (the Docker builder stage) and by ``make compile``
(``setup.py build_ext --inplace``: extensions next to the sources, git-ignored).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import sysconfig
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent

#: The compiled modules: the engines' rules and codecs, and the search with the games'
#: knowledge (evaluators, guided rollouts, greedy orderings, the learned evaluation's features
#: and model). Not compiled: the packages'
#: ``__init__`` (they install the build selector), ``engine/_build.py`` and
#: ``engine/_mypyc.py`` (plain Python by design), ``engine/rng.py`` and ``ai/procpool.py``,
#: ``ai/arena.py`` ... (subclasses of stdlib Python classes, or not hot), the views
#: (``engine/*/view.py``: dataclasses built once per call) and ``engine/registry.py``.
COMPILED = (
    "engine/core.py",
    "engine/aton/board.py",
    "engine/aton/codec.py",
    "engine/aton/game.py",
    "engine/aton/invariants.py",
    "engine/aton/state.py",
    "engine/osirium/actions.py",
    "engine/osirium/board.py",
    "engine/osirium/cards.py",
    "engine/osirium/codec.py",
    "engine/osirium/game.py",
    "engine/osirium/invariants.py",
    "engine/osirium/state.py",
    "engine/splitmix.py",
    "engine/bits.py",
    "ai/knowledge.py",
    "ai/mcts.py",
    "ai/mcts_params.py",
    "ai/root_parallel.py",
    "ai/aton/greedy.py",
    "ai/aton/knowledge.py",
    "ai/osirium/greedy.py",
    "ai/osirium/knowledge.py",
    "ai/aton/features.py",
    "ai/osirium/features.py",
    "ai/learned.py",
)


def _say(message: str) -> None:
    print(f"heka build: {message}", file=sys.stderr, flush=True)


def why_not_compiled() -> str | None:
    """``None`` when the compiled build can be made here, else the reason it cannot."""
    cc = shlex.split(sysconfig.get_config_var("CC") or "cc")
    if not cc or shutil.which(cc[0]) is None:
        return f"no C compiler ({cc[0] if cc else 'CC unset'} not found)"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return "no Python headers (Python.h)"
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        return "mypyc is not installed (it comes with mypy)"
    return None


def ext_modules() -> list[object]:
    mode = os.environ.get("HEKA_COMPILE", "auto").strip().lower()
    if mode in ("0", "no", "off", "false"):
        return []
    reason = why_not_compiled()
    if reason is not None:
        if mode in ("1", "yes", "on", "true"):
            raise SystemExit(f"heka build: HEKA_COMPILE={mode} but {reason}")
        _say(f"{reason}: building the pure-Python package")
        return []
    from mypyc.build import mypycify

    _say(f"compiling {len(COMPILED)} modules with mypyc")
    return list(
        mypycify(
            # The mypy options of pyproject.toml apply; its per-module sections name packages
            # this build does not check (service), which mypy would otherwise report.
            ["--no-warn-unused-configs", *COMPILED],
            # -O1 and no debug info: as fast as -O3 on these modules (bench/aton_speed.py,
            # bench/mcts_speed.py: within 3%), two thirds of the compile time.
            opt_level="1",
            debug_level="0",
            group_name="heka",
        )
    )


setup(ext_modules=ext_modules())
