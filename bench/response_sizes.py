"""Response sizes of the heka.v1 API: the protobuf bytes of typical responses.

Builds the messages in process with the service's own converters (the bytes a client
receives, before HTTP/2 framing): the legal actions of an Osirium opening, full and
compact; an easy bot's diagnostics with the default top-k, a larger k and every root
action; a typical ApplyAction answer with and without view and legal actions; a CreateGame
answer for the one-call flow.

    .venv/bin/python bench/response_sizes.py

Prints a table; asserts nothing. Deterministic (seeded).
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    from ai.api import make_bot
    from engine.registry import get_game
    from service import convert
    from service.config import Config
    from service.envelope import KeyRing, parse_keys
    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.servicer import GameService

    # A fixed key: the server keys every deal with it, so the figures repeat run to run.
    keys = KeyRing(
        parse_keys("bench:" + base64.urlsafe_b64encode(b"heka response sizes, fixed key!!").decode())
    )
    server = GameService(Config(), keys, None)  # type: ignore[arg-type]
    ctx: Any = None  # cheap calls only
    rows: list[tuple[str, str, str]] = []

    def add(name: str, message: Any, note: str = "") -> None:
        rows.append((name, f"{message.ByteSize():,}", note))

    # The largest Osirium opening of 40 seeded deals (four different amulets in hand).
    def opening_of(seed: int) -> Any:
        return pb.CreateGameRequest(
            game="osirium", num_players=4, seed=seed, viewer=0, include_legal_actions=True
        )

    seed = max(range(1, 41), key=lambda s: len(server.CreateGame(opening_of(s), ctx).legal_actions))
    opening = opening_of(seed)
    full = server.CreateGame(opening, ctx)
    compact_req = pb.CreateGameRequest()
    compact_req.CopyFrom(opening)
    compact_req.compact_actions = True
    compact = server.CreateGame(compact_req, ctx)
    n = len(full.legal_actions)
    add(
        f"Osirium 4p opening: {n} legal actions, full",
        pb.ListLegalActionsResponse(actions=full.legal_actions),
    )
    add(
        f"Osirium 4p opening: {n} legal actions, compact",
        pb.ListLegalActionsResponse(actions=compact.legal_actions),
        "id and text only",
    )
    view_req = pb.CreateGameRequest()
    view_req.CopyFrom(opening)
    view_req.include_view = True
    add("Osirium 4p CreateGame: state, view, legal actions", server.CreateGame(view_req, ctx))
    view_req.compact_actions = True
    add("  the same, compact actions", server.CreateGame(view_req, ctx))

    # An easy bot's diagnostics on the Osirium opening (200 iterations).
    state = get_game("osirium").new_initial_state(2, seed=1)
    decision = make_bot("mcts:easy,ms=none").choose(state, seed=1)
    game = state.game
    cache = convert.ActionCache()
    roots = len(decision.diagnostics.actions)
    for k, label in ((convert.DEFAULT_TOP_K, "default top-k 5"), (20, "top-k 20"), (roots, f"all {roots}")):
        diag = convert.diagnostics_message(
            game, cache, decision.diagnostics, "mcts:easy", 1, private=True, top_k=k
        )
        add(f"easy bot diagnostics, {label}", diag)
    add(
        "easy bot diagnostics, another seat's",
        convert.diagnostics_message(game, cache, decision.diagnostics, "mcts:easy", 1, private=False),
        "totals only",
    )

    # ApplyAction answers in the middle of an Aton game.
    created = server.CreateGame(
        pb.CreateGameRequest(game="aton", seed=3, viewer=0, include_legal_actions=True), ctx
    )
    apply = pb.ApplyActionRequest(state=created.state, action_id=created.legal_actions[0].id, player=0)
    apply.viewer = server.ApplyAction(apply, ctx).status.current_player  # the seat to act next
    add("Aton ApplyAction: state, action, events, status", server.ApplyAction(apply, ctx))
    apply.include_view = True
    add("  with the view of the seat to act next", server.ApplyAction(apply, ctx))
    apply.include_legal_actions = True
    add("  with its view and legal actions", server.ApplyAction(apply, ctx))

    width = max(len(r[0]) for r in rows)
    print(f"{'response':<{width}}  {'bytes':>7}  note")
    for name, size, note in rows:
        print(f"{name:<{width}}  {size:>7}  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
