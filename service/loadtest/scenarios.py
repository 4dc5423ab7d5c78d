"""Load-test scenarios, written once for every driver.

A scenario is "sans-IO": its :meth:`Scenario.task` is a generator that yields
:class:`Call` values (an RPC method name and its request message) and receives each
response back via ``send``. A driver performs the calls: ``heka loadtest`` with grpc.aio
(:mod:`service.loadtest.runner`), ``bench/locustfile.py`` with Locust's gevent-friendly
blocking stubs, the tests with fakes. This module needs only the standard library and the
generated protobuf messages (no grpc, no locust).

A *task* is the unit a load level counts: one complete game for ``play``, one ``BotMove``
for ``bot``, one cheap RPC for ``cheap``. ``setup`` prepares shared data (a pool of
mid-game states) before the measured run; its calls are not in the report.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Generator, Sequence
from typing import Any

from engine.registry import get_game
from service.gen.heka.v1 import game_service_pb2 as pb

#: The RPC methods of heka.v1.GameService that scenarios use.
METHODS = ("ListGames", "CreateGame", "GetView", "ListLegalActions", "ApplyAction", "BotMove", "AdvanceBots")
BOT_KINDS = {"random": pb.BOT_KIND_RANDOM, "greedy": pb.BOT_KIND_GREEDY, "mcts": pb.BOT_KIND_MCTS}
#: How ``play`` moves the bot seats: inside CreateGame and ApplyAction (one call per move of
#: the person), with AdvanceBots calls, or with one BotMove call per bot move.
BOT_RPCS = ("ApplyAction", "AdvanceBots", "BotMove")
DIFFICULTIES = {
    "easy": pb.DIFFICULTY_EASY,
    "medium": pb.DIFFICULTY_MEDIUM,
    "hard": pb.DIFFICULTY_HARD,
    "expert": pb.DIFFICULTY_EXPERT,
}


@dataclasses.dataclass(frozen=True, slots=True)
class Call:
    """One RPC for the driver to make: ``GameService/<method>(request)``."""

    method: str
    request: Any


class ScenarioError(Exception):
    """A response a scenario cannot go on from (a bug in the server or the scenario); the
    driver counts it as an error of the task."""


ScenarioGen = Generator[Call, Any, None]


@dataclasses.dataclass(frozen=True, slots=True)
class ScenarioConfig:
    """Knobs shared by the scenarios (``heka loadtest`` flags, Locust environment)."""

    games: tuple[str, ...] = ("aton",)
    #: Players per game; 0: each game's minimum.
    players: int = 0
    #: Bot algorithm for bot seats (play) and BotMove calls (bot): random, greedy, mcts.
    bot: str = "mcts"
    #: MCTS preset: easy, medium, hard.
    difficulty: str = "easy"
    #: How ``play`` moves the bot seats (BOT_RPCS): inside CreateGame and ApplyAction,
    #: "AdvanceBots" (one call per bot stretch) or "BotMove" (one call per bot move).
    bot_rpc: str = "ApplyAction"
    #: Mid-game states prepared by ``setup`` for ``bot`` and ``cheap``.
    pool_size: int = 16
    #: Random moves (at most) played into each pooled state.
    pool_moves: int = 30
    #: A game still running after this many calls is reported as a scenario error.
    max_calls_per_game: int = 5000
    seed: int = 1

    def __post_init__(self) -> None:
        if not self.games:
            raise ValueError("at least one game")
        if self.bot not in BOT_KINDS:
            raise ValueError(f"unknown bot {self.bot!r} (known: {', '.join(BOT_KINDS)})")
        if self.difficulty not in DIFFICULTIES:
            raise ValueError(f"unknown difficulty {self.difficulty!r} (known: {', '.join(DIFFICULTIES)})")
        if self.bot_rpc not in BOT_RPCS:
            raise ValueError(f"bot_rpc must be one of {', '.join(BOT_RPCS)}, not {self.bot_rpc!r}")
        if self.players < 0 or self.pool_size < 1 or self.pool_moves < 0:
            raise ValueError("players >= 0, pool_size >= 1 and pool_moves >= 0")

    def bot_settings(self, rng: random.Random) -> pb.BotSettings:
        settings = pb.BotSettings(kind=BOT_KINDS[self.bot], seed=rng.getrandbits(63))
        if self.bot == "mcts":
            settings.difficulty = DIFFICULTIES[self.difficulty]
        return settings


@dataclasses.dataclass(frozen=True, slots=True)
class PooledState:
    """A mid-game state of the setup pool with what cheap calls need to use it."""

    game: str
    state: str
    num_players: int
    current_player: int
    action_ids: tuple[int, ...]


class Scenario:
    """Base class: a name, a one-line description, optional setup, and the task."""

    name = ""
    description = ""
    needs_pool = False

    def __init__(self, config: ScenarioConfig) -> None:
        self.config = config
        self.pool: list[PooledState] = []

    def describe(self) -> str:
        return self.description

    def setup(self, rng: random.Random) -> ScenarioGen:
        """Fill :attr:`pool` with mid-game states (when the scenario needs them)."""
        if not self.needs_pool:
            return
        for i in range(self.config.pool_size):
            game = self.config.games[i % len(self.config.games)]
            entry = yield from _mid_game_state(self.config, game, rng)
            if entry is not None:
                self.pool.append(entry)
        if not self.pool:
            raise ScenarioError("setup: every pooled game ended during its random opening")

    def task(self, rng: random.Random) -> ScenarioGen:
        raise NotImplementedError
        yield  # pragma: no cover

    def task_for(self, seed: int, index: int) -> ScenarioGen:
        """Task ``index`` of a run seeded ``seed``: :meth:`task` with its own random stream
        (:func:`task_rng`), so runs are reproducible whatever the scheduling."""
        return self.task(task_rng(seed, index))


def _create(config: ScenarioConfig, game: str, rng: random.Random, viewer: int | None = None) -> Call:
    request = pb.CreateGameRequest(game=game, num_players=config.players, seed=rng.getrandbits(63))
    if viewer is not None:
        request.viewer = viewer
    return Call("CreateGame", request)


def _mid_game_state(
    config: ScenarioConfig, game: str, rng: random.Random
) -> Generator[Call, Any, PooledState | None]:
    """A game after a few random moves, each chosen from the legal actions that came with
    the previous response (for the seat to act, as its viewer)."""
    create = _create(config, game, rng, viewer=0)
    create.request.include_legal_actions = True
    create.request.compact_actions = True
    created = yield create
    state, status, legal = created.state, created.status, list(created.legal_actions)
    for _ in range(rng.randint(0, config.pool_moves)):
        if status.is_over:
            break
        if not legal:
            raise ScenarioError(f"{game}: no legal action for the seat to act")
        applied = yield Call(
            "ApplyAction",
            pb.ApplyActionRequest(
                state=state,
                action_id=rng.choice(legal).id,
                game=game,
                player=status.current_player,
                viewer=status.current_player,
                include_legal_actions=True,
                compact_actions=True,
            ),
        )
        state, status = applied.state, applied.status
        legal = list(applied.legal_actions)
        if not status.is_over and not legal:
            # The legal actions came for the previous seat's viewer; list them for the next.
            listed = yield Call(
                "ListLegalActions",
                pb.ListLegalActionsRequest(
                    state=state, game=game, viewer=status.current_player, compact_actions=True
                ),
            )
            legal = list(listed.actions)
    if status.is_over:
        return None
    if not legal:
        listed = yield Call(
            "ListLegalActions",
            pb.ListLegalActionsRequest(
                state=state, game=game, viewer=status.current_player, compact_actions=True
            ),
        )
        legal = list(listed.actions)
    return PooledState(game, state, status.num_players, status.current_player, tuple(a.id for a in legal))


class PlayScenario(Scenario):
    """(a) A frontend playing complete games, one person (seat 0) against bots, as a
    frontend would: every response carries the person's view and, when it is their turn,
    their legal actions. With ``bot_rpc`` "ApplyAction" (the default) the bots play inside
    CreateGame and each ApplyAction: one call per move of the person. "AdvanceBots" and
    "BotMove" move the bots with calls of their own."""

    name = "play"

    def describe(self) -> str:
        c = self.config
        bot = f"mcts:{c.difficulty}" if c.bot == "mcts" else c.bot
        players = c.players or "min"
        return f"play: complete {'/'.join(c.games)} games, {players} players, bot seats {bot} via {c.bot_rpc}"

    def task(self, rng: random.Random) -> ScenarioGen:
        c = self.config
        game = c.games[rng.randrange(len(c.games))]
        human = 0
        request = pb.CreateGameRequest(
            game=game,
            num_players=c.players,
            seed=rng.getrandbits(63),
            viewer=human,
            include_view=True,
            include_legal_actions=True,
        )
        # Bots of every other seat (the player count is the game's minimum when not given).
        players = c.players or get_game(game).descriptor.min_players
        bots = [pb.BotSeat(seat=s, bot=c.bot_settings(rng)) for s in range(players) if s != human]
        riding = c.bot_rpc == "ApplyAction"
        if riding:
            request.bots.extend(bots)
        reply: Any = yield Call("CreateGame", request)
        calls = 1
        while not reply.status.is_over:
            if calls >= c.max_calls_per_game:
                raise ScenarioError(f"{game}: not over after {calls} calls")
            state, status = reply.state, reply.status
            if status.current_player == human:
                legal = list(reply.legal_actions)
                if not legal:
                    raise ScenarioError(
                        f"{game}: no legal actions came with the response for the seat to act"
                    )
                apply = pb.ApplyActionRequest(
                    state=state,
                    action_id=rng.choice(legal).id,
                    player=human,
                    viewer=human,
                    include_view=True,
                    include_legal_actions=True,
                    game=game,
                )
                if riding:
                    apply.bots.extend(bots)
                reply = yield Call("ApplyAction", apply)
            elif c.bot_rpc == "BotMove":
                seat = status.current_player
                reply = yield Call(
                    "BotMove",
                    pb.BotMoveRequest(
                        state=state,
                        bot=bots[seat - 1].bot,
                        player=seat,
                        apply=True,
                        viewer=human,
                        include_view=True,
                        include_legal_actions=True,
                        game=game,
                    ),
                )
            else:
                reply = yield Call(
                    "AdvanceBots",
                    pb.AdvanceBotsRequest(
                        state=state,
                        bots=bots,
                        viewer=human,
                        include_view=True,
                        include_legal_actions=True,
                        game=game,
                    ),
                )
                if not reply.bot_turns and not reply.status.is_over:
                    raise ScenarioError(f"{game}: AdvanceBots made no move ({reply.stop_reason})")
            calls += 1
            if not reply.state:
                raise ScenarioError(f"{game}: a move returned no state token")


class BotScenario(Scenario):
    """(b) Bot moves only: BotMove (without apply) on mid-game states at one difficulty."""

    name = "bot"
    needs_pool = True

    def describe(self) -> str:
        c = self.config
        bot = f"mcts:{c.difficulty}" if c.bot == "mcts" else c.bot
        return f"bot: BotMove {bot} on {c.pool_size} mid-game {'/'.join(c.games)} states"

    def task(self, rng: random.Random) -> ScenarioGen:
        entry = self.pool[rng.randrange(len(self.pool))]
        reply = yield Call(
            "BotMove",
            pb.BotMoveRequest(
                state=entry.state,
                bot=self.config.bot_settings(rng),
                game=entry.game,
                viewer=entry.current_player,
            ),
        )
        if reply.action.id not in entry.action_ids:
            raise ScenarioError(f"{entry.game}: bot chose {reply.action.id}, not a legal action")


class CheapScenario(Scenario):
    """(c) Cheap calls only (no search): a weighted mix of ListGames, CreateGame, GetView,
    ListLegalActions and ApplyAction on mid-game states; one RPC per task."""

    name = "cheap"
    needs_pool = True
    #: (method, weight)
    MIX: Sequence[tuple[str, int]] = (
        ("ListGames", 1),
        ("CreateGame", 1),
        ("GetView", 3),
        ("ListLegalActions", 3),
        ("ApplyAction", 3),
    )

    def describe(self) -> str:
        mix = ", ".join(f"{m} {w}" for m, w in self.MIX)
        return f"cheap: one call per task, weights {mix}; {'/'.join(self.config.games)}"

    def task(self, rng: random.Random) -> ScenarioGen:
        method = rng.choices([m for m, _ in self.MIX], weights=[w for _, w in self.MIX])[0]
        entry = self.pool[rng.randrange(len(self.pool))]
        if method == "ListGames":
            reply = yield Call("ListGames", pb.ListGamesRequest())
            if not reply.games:
                raise ScenarioError("ListGames returned no game")
        elif method == "CreateGame":
            reply = yield _create(self.config, entry.game, rng)
            if not reply.state:
                raise ScenarioError("CreateGame returned no state")
        elif method == "GetView":
            request = pb.GetViewRequest(state=entry.state, game=entry.game)
            seat = rng.randrange(entry.num_players + 1)
            if seat < entry.num_players:
                request.viewer = seat  # else the public view
            yield Call("GetView", request)
        elif method == "ListLegalActions":
            reply = yield Call(
                "ListLegalActions",
                pb.ListLegalActionsRequest(state=entry.state, game=entry.game, viewer=entry.current_player),
            )
            if tuple(a.id for a in reply.actions) != entry.action_ids:
                raise ScenarioError(f"{entry.game}: legal actions changed for the same state")
        else:
            yield Call(
                "ApplyAction",
                pb.ApplyActionRequest(
                    state=entry.state,
                    action_id=rng.choice(entry.action_ids),
                    game=entry.game,
                    player=entry.current_player,
                ),
            )


class CallScenario(Scenario):
    """One given call per task: ``method`` with the next request of ``requests`` (a pool the
    caller made, e.g. real positions), in turn; for measuring one RPC at a time (the
    throughput bench). Any stub the driver uses will do: ``requests`` may be raw bytes for
    a :class:`~service.loadtest.runner.RawStub`. Not a ``heka loadtest`` scenario (it has
    no config to build it from)."""

    name = "call"

    def __init__(self, method: str, requests: Sequence[Any], description: str = "") -> None:
        if not requests:
            raise ValueError("at least one request")
        super().__init__(ScenarioConfig())
        self.method = method
        self.requests = list(requests)
        self.description = description or f"call: {method}, {len(self.requests)} request(s) in turn"

    def task(self, rng: random.Random) -> ScenarioGen:
        return self._one(self.requests[rng.randrange(len(self.requests))])

    def task_for(self, seed: int, index: int) -> ScenarioGen:
        # The pool in turn: no random stream to seed per call (a few microseconds that a
        # client near its ceiling would feel).
        return self._one(self.requests[index % len(self.requests)])

    def _one(self, request: Any) -> ScenarioGen:
        yield Call(self.method, request)


SCENARIOS: dict[str, type[Scenario]] = {s.name: s for s in (PlayScenario, BotScenario, CheapScenario)}


def make_scenario(name: str, config: ScenarioConfig) -> Scenario:
    try:
        return SCENARIOS[name](config)
    except KeyError:
        raise ValueError(f"unknown scenario {name!r} (known: {', '.join(SCENARIOS)})") from None


def task_rng(seed: int, index: int) -> random.Random:
    """The random stream of task ``index`` of a run seeded ``seed`` (reproducible runs)."""
    return random.Random(seed * 1_000_003 + index)


def bot_moves(method: str, response: Any) -> int:
    """The bot moves a successful response carries (goodput): one for BotMove, the bot
    turns of the others (raw bytes of a non-heka server: none)."""
    if method == "BotMove":
        return 1
    turns = getattr(response, "bot_turns", None)
    return len(turns) if turns is not None else 0


def drive(gen: ScenarioGen, call: Any) -> int:
    """Run a scenario generator to the end with a blocking ``call(Call) -> response``
    (exceptions from ``call`` propagate); returns the number of calls made."""
    count = 0
    try:
        step = next(gen)
        while True:
            response = call(step)
            count += 1
            step = gen.send(response)
    except StopIteration:
        return count
    finally:
        gen.close()
