"""heka's MCTS against OpenSpiel's ISMCTS on heka's games, at equal time and at equal
iterations (needs the ``openspiel`` extra: ``make openspiel-check`` installs it).

    .venv/bin/python bench/openspiel_race.py --game aton --games 40 --ms 200 --iterations 200
    .venv/bin/python bench/openspiel_race.py --game osirium --games 20 --modes iterations --procs 2

Both sides play the same OpenSpiel state of ``interop.openspiel`` (``heka_aton`` /
``heka_osirium``): OpenSpiel's bot through the OpenSpiel API, heka's bot on the heka state
inside it. The sides:

* **OpenSpiel**: ``open_spiel.python.algorithms.ismcts.ISMCTSBot`` as it ships (UCT with
  ``--uct-c``, unlimited world samples, final choice by most visits, information-state
  keys), evaluated by OpenSpiel's ``RandomRolloutEvaluator`` (one random rollout to the
  end), resampling through the adapter's ``resample_from_infostate`` (heka's determinisation)
  with the bot's own seeded generator. For the time budget, :class:`BudgetedISMCTSBot` adds
  a clock check before each simulation and nothing else.
* **heka**: ``make_bot(--heka + budget)`` (default ``mcts``: heka's defaults, guided
  rollouts with a cut-off and the game's heuristic).

Budgets: ``time`` = ``--ms`` milliseconds per decision for both (heka ``ms=``, no iteration
cap); ``iterations`` = ``--iterations`` per decision for both (heka ``iterations=``, no time
cap; OpenSpiel ``max_simulations``). A decision with a single legal action is answered at
once by both and not counted in the speed figures.

Schedule: game ``g`` deals ``derive_seed(seed, "deal", g // players)`` and seats heka at
``g % players`` (2 players: every deal is played twice, each bot in each seat); the bots'
seeds come from ``derive_seed(seed, "bots", g)``. ``--max-minutes`` bounds the run: games
not started by then are skipped (the table says how many were played). Prints, per budget:
games, heka's wins / draws / losses, heka's score (W + D/2)/N with its 95% Wilson interval,
iterations per second of CPU time (so that other jobs on the machine do not change them) and
wall-clock milliseconds per decision of each side; then the machine's load average. Asserts
nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

import interop.openspiel  # noqa: F401  (registers heka_aton and heka_osirium)
from ai.api import make_bot
from ai.arena import derive_seed
from ai.ratings import rate

SHORT_NAMES = {"aton": "heka_aton", "osirium": "heka_osirium"}


class _OutOfTime(Exception):
    pass


class BudgetedISMCTSBot(ismcts.ISMCTSBot):  # type: ignore[misc]
    """OpenSpiel's ``ISMCTSBot`` unchanged, plus an optional wall-clock budget: before each
    simulation (in ``sample_root_state``) the search stops once ``milliseconds`` have
    passed, after at least two simulations (its first only evaluates the root), and the
    final policy is computed from the tree as it stands, as the bot itself does.
    ``simulations`` counts the simulations of the last search."""

    def __init__(self, *args: Any, milliseconds: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._milliseconds = milliseconds
        self._deadline: float | None = None
        self.simulations = 0

    def run_search(self, state: Any) -> Any:
        self.simulations = 0
        ms = self._milliseconds
        self._deadline = None if ms is None else time.perf_counter() + ms / 1000.0
        try:
            return super().run_search(state)
        except _OutOfTime:
            return self.get_final_policy(state, self._root_node)

    def sample_root_state(self, state: Any) -> Any:
        if self._deadline is not None and self.simulations >= 2 and time.perf_counter() >= self._deadline:
            raise _OutOfTime
        self.simulations += 1
        return super().sample_root_state(state)


@dataclasses.dataclass(frozen=True)
class Task:
    game: str
    players: int
    mode: str  # "time" | "iterations"
    budget: int
    heka_spec: str
    uct_c: float
    index: int
    seed: int
    stop_at: float  # time.time() after which the game is skipped


@dataclasses.dataclass(frozen=True)
class Result:
    task: Task
    heka_seat: int
    deal_seed: int
    heka_return: float
    plies: int
    # Decisions with a choice, per side: (count, iterations, wall seconds, CPU seconds).
    heka: tuple[int, int, float, float]
    openspiel: tuple[int, int, float, float]
    seconds: float


def heka_spec(base: str, mode: str, budget: int) -> str:
    item = f"ms={budget}" if mode == "time" else f"iterations={budget}"
    return base + ("," if ":" in base else ":") + item


def play(task: Task) -> Result | None:
    if time.time() >= task.stop_at:
        return None
    t0 = time.perf_counter()
    n = task.players
    deal_seed = derive_seed(task.seed, "deal", task.index // n) % 2**31
    heka_seat = task.index % n
    bot_seed = derive_seed(task.seed, "bots", task.index)
    game = pyspiel.load_game(SHORT_NAMES[task.game], {"players": n, "seed": deal_seed})
    state = game.new_initial_state()
    heka_bot = make_bot(heka_spec(task.heka_spec, task.mode, task.budget))
    rng = random.Random(bot_seed)
    np_rng = np.random.RandomState(bot_seed % 2**32)
    os_bot = BudgetedISMCTSBot(
        game,
        mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np_rng),
        task.uct_c,
        task.budget if task.mode == "iterations" else 10**9,
        random_state=np_rng,
        milliseconds=task.budget if task.mode == "time" else None,
    )
    os_bot.set_resampler(lambda s, p: s.resample_from_infostate(p, np_rng.uniform))
    heka: list[float] = [0, 0, 0.0, 0.0]
    ospl: list[float] = [0, 0, 0.0, 0.0]
    plies = 0
    while not state.is_terminal():
        choice = len(state.legal_actions()) > 1
        start, cpu = time.perf_counter(), time.process_time()
        if state.current_player() == heka_seat:
            decision = heka_bot.choose(state.heka_state, seed=rng.getrandbits(62))
            action, iterations, side = decision.action, decision.diagnostics.iterations, heka
        else:
            action = int(os_bot.step(state))
            iterations, side = os_bot.simulations, ospl
        if choice:
            side[0] += 1
            side[1] += iterations
            side[2] += time.perf_counter() - start
            side[3] += time.process_time() - cpu
        state.apply_action(action)
        plies += 1
    return Result(
        task,
        heka_seat,
        deal_seed,
        state.returns()[heka_seat],
        plies,
        (int(heka[0]), int(heka[1]), heka[2], heka[3]),
        (int(ospl[0]), int(ospl[1]), ospl[2], ospl[3]),
        time.perf_counter() - t0,
    )


def row(results: list[Result], label: str) -> str:
    n = len(results)
    w = sum(r.heka_return > 0 for r in results)
    lo = sum(r.heka_return < 0 for r in results)
    d = n - w - lo
    score = rate(w + d / 2, n)

    def speed(side: str) -> str:
        count = sum(getattr(r, side)[0] for r in results)
        its = sum(getattr(r, side)[1] for r in results)
        wall = sum(getattr(r, side)[2] for r in results)
        cpu = sum(getattr(r, side)[3] for r in results)
        if not count or not cpu:
            return f"{'-':>8} {'-':>7}"
        return f"{its / cpu:8.0f} {1000 * wall / count:7.0f}"

    return (
        f"{label:<34} {n:5d}  {w:3d} {d:3d} {lo:3d}  "
        f"{100 * score.rate:5.1f}% [{100 * score.low:4.1f}, {100 * score.high:5.1f}]  "
        f"{speed('heka')}  {speed('openspiel')}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", choices=sorted(SHORT_NAMES), default="aton")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--modes", default="time,iterations", help="time, iterations or both (comma-separated)")
    ap.add_argument("--ms", type=int, default=200, help="milliseconds per decision in the time race")
    ap.add_argument("--iterations", type=int, default=200, help="iterations per decision (iteration race)")
    ap.add_argument("--games", type=int, default=20, help="games per budget (a multiple of --players)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--heka", default="mcts", help="heka's spec without a budget (default: heka's defaults)")
    ap.add_argument("--uct-c", type=float, default=2.0, help="OpenSpiel ISMCTS exploration constant")
    ap.add_argument("--procs", type=int, default=1)
    ap.add_argument("--max-minutes", type=float, default=None, help="start no game after this many minutes")
    args = ap.parse_args()

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not set(modes) <= {"time", "iterations"}:
        ap.error("--modes takes time and/or iterations")
    stop_at = time.time() + (args.max_minutes * 60 if args.max_minutes else 10**9)
    tasks = [
        Task(
            args.game,
            args.players,
            mode,
            args.ms if mode == "time" else args.iterations,
            args.heka,
            args.uct_c,
            g,
            args.seed,
            stop_at,
        )
        for g in range(args.games)
        for mode in modes
    ]
    print(
        f"# {args.game} {args.players}p, seed {args.seed}, {args.games} games per budget; heka: {args.heka} "
        f"+ budget; OpenSpiel: ISMCTSBot(uct_c={args.uct_c}, RandomRolloutEvaluator(1)); "
        f"procs {args.procs}; open_spiel {getattr(pyspiel, '__version__', '?')}; load average "
        + ", ".join(f"{x:.1f}" for x in os.getloadavg()),
        flush=True,
    )
    t0 = time.monotonic()
    results: list[Result] = []
    with multiprocessing.get_context("fork").Pool(args.procs) as pool:
        for res in pool.imap_unordered(play, tasks, chunksize=1):
            if res is None:
                continue
            results.append(res)
            t = res.task
            print(
                f"  {t.mode:<10} game {t.index:3d} heka seat {res.heka_seat} deal {res.deal_seed}: "
                f"heka {res.heka_return:+.0f}, {res.plies} plies, {res.seconds:.0f} s "
                f"[{len(results)}/{len(tasks)}, {time.monotonic() - t0:.0f} s]",
                file=sys.stderr,
                flush=True,
            )
    print("# it/s: iterations per CPU second of the deciding process; ms: wall-clock ms per decision")
    print(
        f"{'budget per decision':<34} {'games':>5}  {'W':>3} {'D':>3} {'L':>3}  "
        f"{'heka score [95% CI]':<22}  {'heka it/s':>8} {'ms':>7}  {'OS it/s':>8} {'ms':>7}"
    )
    for mode in modes:
        mine = sorted((r for r in results if r.task.mode == mode), key=lambda r: r.task.index)
        budget = f"{args.ms} ms" if mode == "time" else f"{args.iterations} iterations"
        print(row(mine, f"equal {mode}: {budget}"))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    elapsed = time.monotonic() - t0
    print(f"# {len(results)} of {len(tasks)} games played in {elapsed:.0f} s; load average {load}")


if __name__ == "__main__":
    main()
