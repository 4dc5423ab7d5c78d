"""Locust load test for heka: the same scenarios as ``heka loadtest``
(service/loadtest/scenarios.py), for loads beyond one machine.

Locust is not a project dependency (it pulls in gevent); install it where you generate load::

    python -m venv /tmp/locust && /tmp/locust/bin/pip install locust && /tmp/locust/bin/pip install .

One machine, headless, 20 users for one minute, frontends playing complete games::

    locust -f bench/locustfile.py --headless --host 127.0.0.1:50051 -u 20 -r 5 -t 1m \\
        --scenario play --bot mcts --difficulty easy

A server with TLS on: ``--tls-ca`` (and ``--tls-cert``, ``--tls-key`` for mutual TLS), as for
``heka loadtest``.

Many machines (Locust's distributed mode: the master aggregates, workers generate)::

    locust -f bench/locustfile.py --master --expect-workers 4 --host heka:50051 ...
    locust -f bench/locustfile.py --worker --master-host <master>      # on each load machine

Load model: each Locust user is a closed-loop worker running one scenario task after
another (a task is one complete game for ``play``, one BotMove for ``bot``, one cheap RPC
for ``cheap``). ``--task-rate R`` paces each user to at most R tasks per second
(``constant_throughput``), so the offered load is users x R. Every RPC is reported to
Locust as request type ``grpc`` named after the method; scenario-level failures (for
example an illegal bot move) as ``scenario``. Setup calls (the state pool of ``bot`` and
``cheap``) are not reported.

Shed load: a call the server refuses with a retry hint (RESOURCE_EXHAUSTED or UNAVAILABLE
with ``RetryInfo``) is reported as request type ``shed`` (not a failure) and sent again
after a jittered backoff that honours the hint (service/loadtest/retry.py;
``--no-retry``: such refusals are failures). Goodput: each completed bot move is reported
as request type ``goodput``, name ``bot_move``; that row's requests per second are the bot
moves per second (the Aggregated row counts those events too: read the ``grpc`` rows for
the request rate).
"""

from __future__ import annotations

import itertools
import random
import time
from typing import Any

import grpc
from locust import User, constant_throughput, events, task

try:  # make grpc's blocking calls cooperate with gevent (Locust's concurrency)
    from grpc.experimental import gevent as grpc_gevent

    grpc_gevent.init_gevent()
except ImportError:  # pragma: no cover - only without gevent (tests)
    pass

from service.commands.options import add_tls_client_arguments, tls_client
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
from service.loadtest.retry import Backoff, retry_delay
from service.loadtest.scenarios import (
    BOT_KINDS,
    DIFFICULTIES,
    SCENARIOS,
    Call,
    ScenarioConfig,
    ScenarioError,
    bot_moves,
    drive,
    make_scenario,
    task_rng,
)

_USER_IDS = itertools.count()


@events.init_command_line_parser.add_listener
def _add_arguments(parser: Any) -> None:
    group = parser.add_argument_group("heka")
    group.add_argument("--scenario", choices=sorted(SCENARIOS), default="cheap", help="heka scenario")
    group.add_argument("--game", default="aton", help="comma-separated games (default aton)")
    group.add_argument("--players", type=int, default=0, help="players per game (0: minimum)")
    group.add_argument("--bot", choices=sorted(BOT_KINDS), default="mcts")
    group.add_argument("--difficulty", choices=sorted(DIFFICULTIES), default="easy")
    group.add_argument("--bot-rpc", choices=("ApplyAction", "AdvanceBots", "BotMove"), default="ApplyAction")
    group.add_argument("--pool", type=int, default=16, help="mid-game states per user (bot, cheap)")
    group.add_argument("--seed", type=int, default=1)
    group.add_argument("--rpc-timeout", type=float, default=30.0, help="deadline of each RPC, seconds")
    group.add_argument("--task-rate", type=float, default=0.0, help="tasks/s per user (0: no pacing)")
    group.add_argument(
        "--no-retry", action="store_true", help="refusals with a retry hint are failures (no backoff)"
    )
    group.add_argument("--max-retries", type=int, default=20, help="refusals in a row before a task gives up")
    add_tls_client_arguments(group)  # a server with TLS on (docs/operations.md, "TLS")


class HekaUser(User):
    """A frontend (or bot caller) talking to heka.v1.GameService over its own channel."""

    abstract = False

    def wait_time(self) -> float:
        rate = float(getattr(self.environment.parsed_options, "task_rate", 0.0) or 0.0)
        if rate <= 0:
            return 0.0
        if not hasattr(self, "_pace"):
            self._pace = constant_throughput(rate)
        return float(self._pace(self))

    def on_start(self) -> None:
        opts = self.environment.parsed_options
        self.user_id = next(_USER_IDS)
        self.timeout = float(opts.rpc_timeout)
        self.seed = int(opts.seed) * 100_003 + self.user_id
        target = self.host or "127.0.0.1:50051"
        tls = tls_client(opts)
        if tls is not None:
            self.channel = grpc.secure_channel(target, tls.credentials(), options=tls.options())
        else:
            self.channel = grpc.insecure_channel(target)
        self.stub = pb_grpc.GameServiceStub(self.channel)  # type: ignore[no-untyped-call]
        config = ScenarioConfig(
            games=tuple(g.strip() for g in str(opts.game).split(",") if g.strip()),
            players=int(opts.players),
            bot=opts.bot,
            difficulty=opts.difficulty,
            bot_rpc=opts.bot_rpc,
            pool_size=int(opts.pool),
            seed=self.seed,
        )
        self.scenario = make_scenario(opts.scenario, config)
        retry = not getattr(opts, "no_retry", False)
        self.backoff = Backoff(max_retries=int(opts.max_retries)) if retry else None
        self.jitter = random.Random(self.seed ^ 0x5EED)
        self.sleep = time.sleep  # gevent's, once Locust has patched the standard library
        drive(self.scenario.setup(random.Random(self.seed)), self._call_unreported)
        self.tasks_done = 0

    def on_stop(self) -> None:
        self.channel.close()

    def _hint(self, exc: grpc.RpcError) -> float | None:
        """The retry delay of a refusal to back off from (None: an error)."""
        if self.backoff is None or not hasattr(exc, "code"):
            return None
        trailing = exc.trailing_metadata() if hasattr(exc, "trailing_metadata") else None
        return retry_delay(exc.code().name, trailing)

    def _call_unreported(self, call: Call) -> Any:
        refusals = 0
        while True:
            try:
                return getattr(self.stub, call.method)(call.request, timeout=self.timeout)
            except grpc.RpcError as exc:
                hint = self._hint(exc)
                refusals += 1
                if hint is None or self.backoff is None or refusals > self.backoff.max_retries:
                    raise
                self.sleep(self.backoff.delay(hint, refusals, self.jitter))

    def _call(self, call: Call) -> Any:
        refusals = 0
        while True:
            start = time.perf_counter()
            response = None
            error: Exception | None = None
            kind = "grpc"
            try:
                response = getattr(self.stub, call.method)(call.request, timeout=self.timeout)
            except grpc.RpcError as exc:
                error = exc
                hint = self._hint(exc)
                if hint is not None and self.backoff is not None and refusals < self.backoff.max_retries:
                    kind, error = "shed", None
                    refusals += 1
            self.environment.events.request.fire(
                request_type=kind,
                name=call.method,
                response_time=(time.perf_counter() - start) * 1000.0,
                response_length=response.ByteSize() if response is not None else 0,
                exception=error,
                context={"scenario": self.scenario.name},
            )
            if error is not None:
                raise error
            if kind == "shed":
                assert self.backoff is not None and hint is not None
                self.sleep(self.backoff.delay(hint, refusals, self.jitter))
                continue
            for _ in range(bot_moves(call.method, response)):
                self.environment.events.request.fire(
                    request_type="goodput",
                    name="bot_move",
                    response_time=0.0,
                    response_length=0,
                    exception=None,
                    context={"scenario": self.scenario.name},
                )
            return response

    @task
    def scenario_task(self) -> None:
        rng = task_rng(self.seed, self.tasks_done)
        self.tasks_done += 1
        start = time.perf_counter()
        try:
            drive(self.scenario.task(rng), self._call)
        except grpc.RpcError:
            pass  # already reported under its method
        except ScenarioError as exc:
            self.environment.events.request.fire(
                request_type="scenario",
                name=self.scenario.name,
                response_time=(time.perf_counter() - start) * 1000.0,
                response_length=0,
                exception=exc,
                context={},
            )
