"""The two builds: the compiled modules (mypyc, ``make compile``) and the pure-Python reference.

``make test`` runs the whole suite once, on the compiled build when there is one; these tests
check that the choice works (``HEKA_PURE_PYTHON=1`` loads the ``.py`` files in any install,
the extensions are used otherwise) and that both builds give the same results on what must
not depend on the build: the golden games, the values of a conformance subset and seeded bot
decisions (``tests/build_identity.py``, one process per build, outputs compared).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import engine
import engine.aton.state as aton_state
from engine import _build, get_game

ROOT = Path(__file__).resolve().parent.parent
PROBE = "import engine, engine.core as c, ai.mcts as m; print(engine.build(), c.__file__, m.__file__)"
COMPILED = bool(_build.compiled_modules())


def run_python(args: list[str], *, pure: bool, timeout: float = 300) -> str:
    env = {k: v for k, v in os.environ.items() if k != _build.PURE_ENV}
    if pure:
        env[_build.PURE_ENV] = "1"
    command = [sys.executable, *args]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout)  # noqa: PLW1510
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_pure_python_forced_by_the_environment() -> None:
    build, core_file, mcts_file = run_python(["-c", PROBE], pure=True).split()
    assert build == "pure"
    assert core_file.endswith("engine/core.py") and mcts_file.endswith("ai/mcts.py")


@pytest.mark.skipif(not COMPILED, reason="no compiled build here (make compile; needs a C compiler)")
def test_compiled_build_loads_the_extensions() -> None:
    build, core_file, mcts_file = run_python(["-c", PROBE], pure=False).split()
    assert build == "compiled"
    assert not core_file.endswith(".py") and not mcts_file.endswith(".py")


@pytest.mark.skipif(not COMPILED, reason="no compiled build here")
def test_this_suite_runs_the_build_it_was_asked_for() -> None:
    """Under ``make test`` the suite tests the compiled modules; under ``make test-pure`` the
    pure ones (a stale build falls back to pure Python with a warning: not silently)."""
    wanted = "pure" if os.environ.get(_build.PURE_ENV) == "1" else "compiled"
    assert engine.build() == wanted
    assert _build.is_compiled(aton_state) == (wanted == "compiled")


@pytest.mark.skipif(not COMPILED, reason="no compiled build here: nothing to compare")
def test_both_builds_give_identical_results() -> None:
    script = str(ROOT / "tests" / "build_identity.py")
    pure = run_python([script], pure=True).splitlines()
    compiled = run_python([script], pure=False).splitlines()
    assert pure[0] == "build pure" and compiled[0] == "build compiled"
    assert len(pure) == len(compiled) > 100
    differ = [(p, c) for p, c in zip(pure[1:], compiled[1:], strict=True) if p != c]
    assert not differ, differ[:10]


def test_frozen_dataclasses_pickle_in_either_build() -> None:
    """Worker processes receive search parameters and jobs, and send back results: compiled,
    a frozen dataclass needs ``engine._mypyc.picklable`` to unpickle."""
    import pickle

    from ai import mcts
    from engine import core
    from engine.osirium import cards

    values = [
        core.Event("kind", "text", 1, {"a": 1}, (1,)),
        core.Outcome((0,), "points", "text", (40, 12), (1.0, -1.0)),
        core.ActionInfo(3, "text", "kind", {}),
        get_game("aton").descriptor,
        mcts.MctsParams(iterations=7),
        cards.RITUALS[0],
    ]
    for value in values:
        assert pickle.loads(pickle.dumps(value)) == value


def test_root_parallel_workers_really_search() -> None:
    """Two workers: the second search runs in a worker process (its pickled job and result
    cross the pipe), not in the in-process fallback."""
    from ai import mcts

    state = get_game("osirium").new_initial_state(2, 3)
    limits = mcts.Limits(iterations=100, stop_at=None, deadline_given=False, early_stop=False)
    params = mcts.MctsParams(iterations=100, milliseconds=None)
    results, in_workers = mcts._parallel(
        state, 0, params=params, seed=1, workers=2, limits=limits, should_stop=None, knowledge=None
    )
    assert len(results) == 2 and in_workers == 1


def test_a_pure_bot_decides_in_a_pure_python_helper_like_the_bot_itself() -> None:
    """``pure:<spec>`` (ai/purebuild.py, for arenas of one build against the other): the same
    decision and statistics as ``<spec>`` run here, from a helper on the pure-Python build."""
    from ai.api import BotSpecError, make_bot

    state = get_game("aton").new_initial_state(2, 3)
    for _ in range(3):
        state.apply(state.legal_actions()[0])
    pure = make_bot("pure:mcts:easy,ms=none")
    here = make_bot("mcts:easy,ms=none")
    try:
        assert pure.name == "pure:" + here.name
        a, b = pure.choose(state, seed=5), here.choose(state, seed=5)
        assert a.action == b.action
        assert a.diagnostics.actions == b.diagnostics.actions
        assert pure._helper().pid != os.getpid()  # type: ignore[attr-defined]
    finally:
        pure.close()  # type: ignore[attr-defined]
    with pytest.raises(BotSpecError):
        make_bot("pure:")
    with pytest.raises(BotSpecError):
        make_bot("pure:mcts:nonsense=1")


def test_a_checkout_bot_decides_in_a_helper_of_that_checkout_like_the_bot_itself(tmp_path: Path) -> None:
    """``checkout:<path>:<spec>`` (ai/purebuild.py, for arenas of one commit against another):
    the helper runs the checkout at the path, here this one, so its decisions are this bot's."""
    from ai.api import BotSpecError, make_bot

    state = get_game("osirium").new_initial_state(3, 4)
    for _ in range(5):
        state.apply(state.legal_actions()[-1])
    other = make_bot(f"checkout:{ROOT}:mcts:easy,ms=none")
    here = make_bot("mcts:easy,ms=none")
    try:
        assert other.name == f"checkout:{ROOT}:mcts:easy,ms=none"
        for seed in (1, 2):
            a, b = other.choose(state, seed=seed), here.choose(state, seed=seed)
            assert a.action == b.action
            assert a.diagnostics.actions == b.diagnostics.actions
        assert other._helper().pid != os.getpid()  # type: ignore[attr-defined]
    finally:
        other.close()  # type: ignore[attr-defined]
    with pytest.raises(BotSpecError, match="needs a path and a bot spec"):
        make_bot(f"checkout:{ROOT}")
    with pytest.raises(BotSpecError, match="not a heka checkout"):
        make_bot(f"checkout:{tmp_path}:mcts:easy")
    with pytest.raises(BotSpecError):
        make_bot(f"checkout:{ROOT}:mcts:nonsense=1")


#: Class reflection that the compiled build does not support: a mypyc class has no
#: ``__slots__``, no instance ``__dict__`` and no attribute annotations to read at run time.
_REFLECTION_ATTRIBUTES = frozenset({"__slots__", "__dict__", "__annotations__", "__weakref__"})
_REFLECTION_CALLS = frozenset({"vars", "get_type_hints", "get_annotations"})


def _class_reflection(path: Path) -> list[str]:
    """Reads of ``__slots__``/``__dict__``/``__annotations__`` and calls of ``vars()``/
    ``get_type_hints()`` in a module (a class body declaring ``__slots__`` is no read)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and node.attr in _REFLECTION_ATTRIBUTES:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}")
        elif (
            isinstance(node, ast.Name)
            and node.id in _REFLECTION_ATTRIBUTES
            and isinstance(node.ctx, ast.Load)
        ):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.id}")
        elif isinstance(node, ast.Call):
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if name in _REFLECTION_CALLS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}()")
    return found


def test_engine_and_ai_use_no_class_reflection_the_compiled_build_lacks() -> None:
    """engine/ and ai/ run compiled: the attributes of their classes are read by name, never
    listed by reflection (``AtonState.fields`` reads ``engine.aton.state.STATE_FIELDS``)."""
    found = [
        hit
        for package in ("engine", "ai")
        for path in sorted((ROOT / package).rglob("*.py"))
        for hit in _class_reflection(path)
    ]
    assert not found, found


_FIELDS_PROBE = """
import engine
from engine import get_game
from engine.aton.state import STATE_FIELDS
state = get_game("aton").new_initial_state(2, 7)
for _ in range(6):
    state.apply(state.legal_actions()[-1])
fields = state.fields()
assert tuple(fields) == STATE_FIELDS, (tuple(fields), STATE_FIELDS)
print(engine.build())
for name, value in fields.items():
    print(name, value if name != "rng" else type(value).__name__)
"""


@pytest.mark.parametrize("pure", [True, False], ids=["pure", "compiled"])
def test_state_fields_in_either_build(pure: bool) -> None:
    """``AtonState.fields()`` lists every attribute of the state, with the same values in
    both builds (the compiled class has no ``__slots__`` to list)."""
    if not pure and not COMPILED:
        pytest.skip("no compiled build here (make compile; needs a C compiler)")
    from engine.aton.state import STATE_FIELDS

    lines = run_python(["-c", _FIELDS_PROBE], pure=pure).splitlines()
    assert lines[0] == ("pure" if pure else "compiled")
    assert [line.split()[0] for line in lines[1:]] == list(STATE_FIELDS)
    if not pure:
        reference = run_python(["-c", _FIELDS_PROBE], pure=True).splitlines()
        assert lines[1:] == reference[1:]


@pytest.mark.parametrize(
    ("engine_init", "message"),
    [
        ("raise SystemExit(1)\n", "the helper process ended (status 1)"),
        (
            "import sys\nsys.stdout.write('garbage\\n'); sys.stdout.flush(); sys.stdin.readline()\n",
            "not a reply",
        ),
    ],
    ids=["ends", "answers garbage"],
)
def test_a_checkout_whose_helper_cannot_play_is_a_bot_spec_error(
    tmp_path: Path, engine_init: str, message: str
) -> None:
    """A checkout whose helper dies or answers nonsense (a broken or foreign tree at the path)
    is a :class:`BotSpecError` naming the bot, which the commands report, not a traceback."""
    from ai.api import BotSpecError, make_bot

    (tmp_path / "ai").mkdir()
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "__init__.py").write_text(engine_init)  # the helper imports it first
    (tmp_path / "ai" / "api.py").write_text("")
    bot = make_bot(f"checkout:{tmp_path}:random")
    try:
        with pytest.raises(BotSpecError, match=re.escape(message)):
            bot.choose(get_game("aton").new_initial_state(None, 1), seed=1)
    finally:
        bot.close()  # type: ignore[attr-defined]
