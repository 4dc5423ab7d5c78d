"""Bots that decide in a helper process: ``pure:<spec>`` on the pure-Python build, and
``checkout:<path>:<spec>`` on another checkout of heka.

For measuring one build or one version of the code against another inside one arena, so that
both sides play the same deals with the seats rotated:

* ``heka arena --bots "pure:mcts:hard,ms=none;mcts:iterations=10000,ms=none"``: both builds
  cannot live in one process (their modules have the same names), so the ``pure:`` bot sends
  each position to a child Python started with ``HEKA_PURE_PYTHON=1`` (``engine/_build.py``);
* ``heka arena --bots "checkout:../old:mcts:hard,ms=100;checkout:.:mcts:hard,ms=100"``: the
  ``checkout:`` bot's child runs the checkout at ``<path>`` with that checkout's own
  ``.venv/bin/python`` (its compiled build, if it has one) and its own bots, so an older
  commit's preset plays the current one at equal time per move.

Each position goes to the child as its state text; the child makes the inner bot from
``<spec>`` and answers with its decision. Same seed, state text and spec: the same decision as
the inner bot run in such a process. The time reported per decision is measured around the
whole exchange (the pipe and the state text add well under a millisecond); a time budget in
``<spec>`` is the child's own search time. The child is started on the first decision and ends
when this bot is collected or its process exits (end of its input).

These kinds are for the command line's arenas: the service builds its bots from the request's
enums (``service/bots.py``), never from a spec string. Standard library only; never compiled.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from ai.bot import ActionStat, Bot, BotSpecError, Budget, Decision, Diagnostics
from engine.core import State

_ROOT = Path(__file__).resolve().parent.parent

#: The child's loop, sent as ``python -c`` so that it runs the same in any checkout: one JSON
#: request per line on stdin, one JSON reply per line on stdout. It imports only ``ai.api``,
#: ``ai.bot`` and ``engine`` of the checkout it runs in.
_CHILD = """
import json, sys
import engine
from engine import get_game
from ai.api import make_bot
from ai.bot import Budget
require = sys.argv[1]
if require and engine.build() != require:
    sys.exit(f"the helper must run the {require} build, not {engine.build()}")
bots = {}
for line in sys.stdin:
    try:
        request = json.loads(line)
        spec = request["spec"]
        bot = bots.get(spec) or bots.setdefault(spec, make_bot(spec))
        text = request["state"]
        state = get_game(text.partition(":")[0]).deserialize_state(text)
        budget = None if request["budget"] is None else Budget(*request["budget"])
        decision = bot.choose(state, seed=request["seed"], budget=budget, deadline=request["deadline"])
        d = decision.diagnostics
        reply = {
            "action": decision.action,
            "diagnostics": {
                "iterations": d.iterations,
                "elapsed_seconds": d.elapsed_seconds,
                "iterations_per_second": d.iterations_per_second,
                "actions": [(a.action, a.visits, a.mean_value) for a in d.actions],
                "chosen_value": d.chosen_value,
                "principal_variation": list(d.principal_variation),
                "interrupted": d.interrupted,
                "workers": d.workers,
            },
        }
    except Exception as exc:
        reply = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""


class HelperError(BotSpecError):
    """A ``pure:`` or ``checkout:`` bot whose helper process cannot play: it ended, answered
    something that is not a reply, or refused the request (an older checkout that does not
    know a parameter of the spec). The spec names a build that does not work here."""


class HelperBot:
    """The bot ``spec`` run by a child Python in ``root`` (module docstring)."""

    def __init__(
        self,
        name: str,
        spec: str,
        *,
        root: Path,
        python: str,
        env: dict[str, str],
        require_build: str = "",
    ) -> None:
        self._child: subprocess.Popen[str] | None = None
        self.name = name
        self.spec = spec
        self._root = root
        self._python = python
        self._env = env
        self._require = require_build

    def _helper(self) -> subprocess.Popen[str]:
        if self._child is None or self._child.poll() is not None:
            env = {**os.environ, **self._env}
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(self._root), env.get("PYTHONPATH", "")) if p)
            self._child = subprocess.Popen(
                [self._python, "-c", _CHILD, self._require],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
                cwd=self._root,
            )
            atexit.register(self.close)
        return self._child

    def choose(
        self,
        state: State,
        *,
        seed: int = 0,
        budget: Budget | None = None,
        deadline: float | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Decision:
        child = self._helper()
        assert child.stdin is not None and child.stdout is not None
        request = {
            "spec": self.spec,
            "state": state.serialize(),
            "seed": seed,
            "budget": None if budget is None else [budget.iterations, budget.milliseconds],
            "deadline": deadline,
        }
        child.stdin.write(json.dumps(request) + "\n")
        child.stdin.flush()
        line = child.stdout.readline()
        if not line:
            try:
                status = child.wait(timeout=5)
            except subprocess.TimeoutExpired:
                status = None
            raise HelperError(f"{self.name}: the helper process ended (status {status})")
        try:
            reply = json.loads(line)
        except ValueError:
            raise HelperError(f"{self.name}: the helper answered {line[:80]!r}, not a reply") from None
        if not isinstance(reply, dict):
            raise HelperError(f"{self.name}: the helper answered {line[:80]!r}, not a reply")
        if "error" in reply:
            raise HelperError(f"{self.name}: the helper failed: {reply['error']}")
        d = reply["diagnostics"]
        return Decision(
            reply["action"],
            Diagnostics(
                iterations=d["iterations"],
                elapsed_seconds=d["elapsed_seconds"],
                iterations_per_second=d["iterations_per_second"],
                actions=tuple(ActionStat(a, v, m) for a, v, m in d["actions"]),
                chosen_value=d["chosen_value"],
                principal_variation=tuple(d["principal_variation"]),
                interrupted=d["interrupted"],
                workers=d["workers"],
            ),
        )

    def close(self) -> None:
        child, self._child = self._child, None
        if child is not None and child.poll() is None:
            assert child.stdin is not None
            child.stdin.close()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()

    def __del__(self) -> None:
        self.close()


def pure_bot(spec: str, make_bot: Callable[[str], Bot]) -> HelperBot:
    """``pure:<spec>``: ``spec`` decided by the pure-Python build of this checkout."""
    if not spec:
        raise BotSpecError("pure: needs a bot spec, e.g. pure:mcts:hard")
    name = "pure:" + make_bot(spec).name  # refuses a bad spec here, not in the helper
    return HelperBot(
        name, spec, root=_ROOT, python=sys.executable, env={"HEKA_PURE_PYTHON": "1"}, require_build="pure"
    )


def checkout_bot(params: str, make_bot: Callable[[str], Bot]) -> HelperBot:
    """``checkout:<path>:<spec>``: ``spec`` decided by the checkout at ``path``, with its own
    ``.venv/bin/python`` (this Python if it has none)."""
    path, _, spec = params.partition(":")
    path, spec = path.strip(), spec.strip()
    if not path or not spec:
        raise BotSpecError("checkout: needs a path and a bot spec, e.g. checkout:../old:mcts:hard")
    root = Path(path).expanduser().resolve()
    if not (root / "ai" / "api.py").is_file() or not (root / "engine").is_dir():
        raise BotSpecError(f"checkout: {path!r} is not a heka checkout (no ai/api.py and engine/ there)")
    make_bot(spec)  # a spec this checkout refuses is refused here, not in the helper
    venv = root / ".venv" / "bin" / "python"
    python = str(venv) if venv.is_file() else sys.executable
    return HelperBot(f"checkout:{path}:{spec}", spec, root=root, python=python, env={})
