"""The metrics' label values come from fixed sets that the code defines (docs/operations.md,
"Metrics"): no field of a request, and no method name a caller makes up, becomes a label
value, so no caller can grow the number of series the metrics endpoint serves."""

from __future__ import annotations

import ast
import re
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families
from service_helpers import KEY1, ServerProcess

from service import metrics
from service.errors import REASONS
from service.gen.heka.v1 import game_service_pb2 as pb
from service.workers import REFUSAL_REASONS

ROOT = Path(__file__).resolve().parents[2]

#: Distinct values of each request field sent (the flood).
DISTINCT = 1000


def series(server: ServerProcess) -> list[tuple[str, dict[str, str]]]:
    """Every heka_ sample the metrics endpoint serves: (name, labels)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return [
        (s.name, dict(s.labels))
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name.startswith("heka_")
    ]


def _key(sample: tuple[str, dict[str, str]]) -> str:
    name, labels = sample
    return name + "{" + ",".join(f"{k}={v}" for k, v in sorted(labels.items()) if k != "le") + "}"


@pytest.fixture(scope="module")
def cheap_server(start_server: Any) -> ServerProcess:
    """One gRPC process, one search worker, searches of one iteration: a bot call is cheap."""
    return start_server(
        "--grpc-processes",
        "1",
        "--search-workers",
        "1",
        "--max-concurrent-searches",
        "8",
        "--max-iterations",
        "1",
        HEKA_STATE_KEYS=KEY1,
    )


def _calls(server: ServerProcess, values: range) -> list[Callable[[], Any]]:
    """Calls carrying ``values`` in every request field that reaches a label: the target
    rating (the ``bot`` label), the game name (``game``), the bot kind and difficulty
    (``reason`` of the refusal), and the method name (``grpc_method``, ``grpc_service``)."""
    stub = server.stub
    token = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=5)).state
    seat = stub.GetView(pb.GetViewRequest(state=token)).view.status.current_player
    calls: list[Callable[[], Any]] = []
    for i in values:
        calls.append(
            lambda i=i: stub.BotMove(
                pb.BotMoveRequest(state=token, viewer=seat, bot=pb.BotSettings(target_rating=i, seed=i))
            )
        )
        calls.append(lambda i=i: stub.CreateGame(pb.CreateGameRequest(game=f"game-{i}")))
        calls.append(
            lambda i=i: stub.BotMove(
                pb.BotMoveRequest(
                    state=token, viewer=seat, bot=pb.BotSettings(kind=100 + i, difficulty=100 + i)
                )
            )
        )
        junk = server.channel.unary_unary(f"/heka.v1.GameService/Junk{i}")
        calls.append(lambda junk=junk: junk(b"", timeout=10))
        other = server.channel.unary_unary(f"/junk{i}.Service/Method{i}")
        calls.append(lambda other=other: other(b"", timeout=10))
    return calls


def _run(calls: list[Callable[[], Any]]) -> set[str]:
    codes = set()
    for call in calls:
        try:
            call()
            codes.add("OK")
        except grpc.RpcError as exc:
            codes.add(exc.code().name)
    return codes


def test_no_request_field_grows_the_metrics(cheap_server: ServerProcess) -> None:
    """A few calls of each kind, then DISTINCT distinct values of each field: the number of
    series does not grow, and every label value is one of its label's set."""
    codes = _run(_calls(cheap_server, range(3)))
    assert codes == {"OK", "INVALID_ARGUMENT", "UNIMPLEMENTED"}, codes
    before = {_key(s) for s in series(cheap_server)}
    codes = _run(_calls(cheap_server, range(3, 3 + DISTINCT)))
    assert codes == {"OK", "INVALID_ARGUMENT", "UNIMPLEMENTED"}, codes
    after = series(cheap_server)
    keys = {_key(s) for s in after}
    print(
        f"heka_ series on /metrics (a histogram's buckets as one): {len(before)} after the first "
        f"calls, {len(keys)} after {DISTINCT} more; heka_ samples, buckets included: {len(after)}"
    )
    assert keys == before, sorted(keys - before)[:20]
    allowed = metrics.label_values()
    outside = {(k, v) for _, labels in after for k, v in labels.items() if k != "le" and v not in allowed[k]}
    assert not outside, sorted(outside)[:20]
    searches = {labels["bot"] for name, labels in after if name == "heka_searches_total"}
    assert searches == {"rated"}, searches  # every target rating, random's 0 included


def test_a_label_value_outside_its_set_is_counted_as_other() -> None:
    for metric, values in (
        (metrics.SEARCHES, ("aton", "mcts:easy,temp=0.786")),
        (metrics.GAMES_CREATED, ("no-such-game",)),
        (metrics.INVALID_REQUESTS, ("made_up",)),
        (metrics.RPC_HANDLED, ("junk.Service", "Junk", "OK")),
    ):
        closed = metrics.closed(metric, values)
        assert closed[-1] == metrics.OTHER or closed[0] == metrics.OTHER, closed
    assert metrics.closed(metrics.SEARCHES, ("osirium", "mcts:expert")) == ("osirium", "mcts:expert")
    assert metrics.closed(metrics.RPC_HANDLED, ("heka.v1.GameService", "BotMove", "OK")) == (
        "heka.v1.GameService",
        "BotMove",
        "OK",
    )


def _documented_bots(doc: str) -> set[str]:
    """The ``bot`` values that a doc lists on its heka_searches_total row."""
    row = next(
        line for line in (ROOT / doc).read_text().splitlines() if line.startswith("| `heka_searches_total`")
    )
    listed = re.search(r"\(`bot`: (.*?)\)", row)
    assert listed, row
    return set(re.findall(r"`([^`]+)`", listed.group(1)))


def test_the_docs_list_every_bot_label_value() -> None:
    assert _documented_bots("docs/operations.md") == set(metrics.bot_labels())


def test_the_docs_name_only_label_values_the_code_emits() -> None:
    """The values docs/operations.md names for the outcome and reason labels exist."""
    text = (ROOT / "docs/operations.md").read_text()
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `(heka_\w+)` \|.*$", text, re.MULTILINE)}
    allowed = metrics.label_values()
    outcome = re.search(r"end reason \((.*?)\)", rows["heka_games_finished_total"])
    reason = re.search(r"reason \((.*?)\)", rows["heka_invalid_requests_total"].split("by the lower-case")[1])
    assert outcome and reason
    assert set(re.findall(r"`(\w+)`", outcome.group(1))) <= allowed["outcome"]
    assert set(re.findall(r"`(\w+)`", reason.group(1))) <= allowed["reason"]


def test_the_error_table_lists_every_reason() -> None:
    """docs/api.md's table of errors names each ErrorInfo reason of service.errors.REASONS
    (those besides the status codes a handler sets itself), and no other."""
    import grpc as grpc_module

    text = (ROOT / "docs/api.md").read_text()
    table = text.split("| Situation | Code | ErrorInfo reason |")[1].split("\n\n")[0]
    documented = {r.lower() for r in re.findall(r"^\|[^|]*\|[^|]*\| `([A-Z_]+)` \|", table, re.MULTILINE)}
    statuses = {c.name.lower() for c in grpc_module.StatusCode}
    assert documented == REASONS - (statuses - documented)


#: The helpers that build a ServiceError, and the position of their ``reason`` argument.
_REASON_ARGUMENT = {"invalid": 2, "failed_precondition": 1, "resource_exhausted": 1, "ServiceError": None}


def test_every_reason_raised_is_in_the_set() -> None:
    """Each ``reason`` the service code gives a ServiceError is a literal of
    service.errors.REASONS (the helpers in errors.py pass their own argument on; the
    interceptor's is a status code's name)."""
    found: dict[str, str] = {}
    computed = []
    for path in sorted((ROOT / "service").rglob("*.py")):
        if "gen" in path.relative_to(ROOT).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if name not in _REASON_ARGUMENT:
                continue
            position = _REASON_ARGUMENT[name]
            arg = next((k.value for k in node.keywords if k.arg == "reason"), None)
            if arg is None and position is not None and len(node.args) > position:
                arg = node.args[position]
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found[arg.value] = where
            elif isinstance(arg, ast.IfExp) and all(
                isinstance(b, ast.Constant) for b in (arg.body, arg.orelse)
            ):
                found.update({arg.body.value: where, arg.orelse.value: where})  # type: ignore[attr-defined]
            else:
                computed.append(f"{where}: {ast.unparse(arg) if arg is not None else None}")
    assert {r: w for r, w in found.items() if r not in REASONS} == {}
    assert len(found) > 20
    # The queue's refusals pass their reason on: each is one of service.workers.REFUSAL_REASONS.
    assert set(REFUSAL_REASONS) <= REASONS
    assert all(
        c.startswith(("service/errors.py", "service/interceptors.py")) or c.endswith("exc.reason")
        for c in computed
    ), computed
