"""``pure:<spec>``: a bot that decides in a helper process running the pure-Python build.

For measuring the compiled build against the pure-Python reference inside one arena
(``heka arena --bots "pure:mcts:hard,ms=none;mcts:iterations=10000,ms=none"``): both builds
cannot live in one process (their modules have the same names), so this bot sends each
position, as its state text, to a child Python process started with ``HEKA_PURE_PYTHON=1``
(``engine/_build.py``), which makes the inner bot from ``<spec>`` and answers with its
decision. Same seed, same state text, same spec: the same decision as the inner bot run in a
pure-Python process; the time it reports per decision is measured around the whole exchange
(the pipe adds well under a millisecond). The child is started on the first decision and
ends when this bot is collected or its process exits (end of its input). Standard library
only; never compiled.
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
_HELPER = "from ai.api import make_bot; from ai.purebuild import serve; serve(make_bot)"


class PureBuildBot:
    """The bot ``spec`` run by a pure-Python helper process (module docstring)."""

    def __init__(self, spec: str, make_bot: Callable[[str], Bot]) -> None:
        self._child: subprocess.Popen[str] | None = None
        if not spec:
            raise BotSpecError("pure: needs a bot spec, e.g. pure:mcts:hard")
        self.name = "pure:" + make_bot(spec).name  # refuses a bad spec here, not in the helper
        self.spec = spec

    def _helper(self) -> subprocess.Popen[str]:
        if self._child is None or self._child.poll() is not None:
            env = {**os.environ, "HEKA_PURE_PYTHON": "1"}
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH", "")) if p)
            self._child = subprocess.Popen(
                [sys.executable, "-c", _HELPER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
                cwd=_ROOT,
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
            raise RuntimeError(f"pure: the helper process ended (status {child.poll()})")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"pure: the helper failed: {reply['error']}")
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


def serve(make_bot: Callable[[str], Bot]) -> None:  # pragma: no cover - runs in the helper process
    """The helper: one JSON request per line on stdin, one JSON reply per line on stdout."""
    import engine
    from engine import get_game

    assert engine.build() == "pure", "the helper must run the pure-Python build"
    bots: dict[str, Bot] = {}
    for line in sys.stdin:
        try:
            request = json.loads(line)
            spec = request["spec"]
            bot = bots.get(spec) or bots.setdefault(spec, make_bot(spec))
            text: str = request["state"]
            state = get_game(text.partition(":")[0]).deserialize_state(text)
            budget = None if request["budget"] is None else Budget(*request["budget"])
            decision = bot.choose(state, seed=request["seed"], budget=budget, deadline=request["deadline"])
            d = decision.diagnostics
            reply: dict[str, object] = {
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
        except Exception as exc:  # reported to the parent, which raises
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
