"""The cache of decoded states by token (service/statecache.py): a bounded LRU, filled by
the call that decodes a token, never changed by the calls served from it."""

from __future__ import annotations

from typing import Any

from service.envelope import KeyRing


def test_state_cache_is_a_bounded_lru() -> None:
    from engine.registry import get_game
    from service.statecache import StateCache

    states = [get_game("aton").new_initial_state(2, seed=i) for i in range(3)]
    texts = [s.serialize() for s in states]
    cache = StateCache(2)
    cache.put("a", states[0], texts[0])
    cache.put("b", states[1], texts[1])
    assert cache.get("a") == (states[0], texts[0])  # "a" is now the most recent
    cache.put("c", states[2], texts[2])
    assert cache.get("b") is None and cache.get("a") == (states[0], texts[0]) and len(cache) == 2
    off = StateCache(0)
    off.put("a", states[0], texts[0])
    assert off.get("a") is None


def test_apply_action_caches_the_token_it_decoded_and_never_changes_the_cached_state() -> None:
    # A token another process issued: its first ApplyAction here decodes it and caches the
    # decoded state; the action is applied to a copy, so the cached state (and any answer
    # built from it later) is still the token's.
    from engine.registry import get_game
    from service.config import Config
    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.servicer import GameService

    keys = KeyRing.ephemeral_ring()
    service = GameService(Config(), keys, None)  # type: ignore[arg-type]
    state = get_game("osirium").new_initial_state(3, seed=4)
    body = state.serialize()
    token = keys.seal(body)
    request = pb.ApplyActionRequest(
        state=token, action_id=state.legal_actions()[0], player=state.current_player()
    )
    context: Any = None
    assert service.states.get(token) is None
    first = service.ApplyAction(request, context)
    entry = service.states.get(token)
    assert entry is not None and entry[1] == body
    cached = entry[0]
    assert cached.serialize() == body
    second = service.ApplyAction(request, context)  # served from the cache
    assert service.states.get(token) == (cached, body) and cached.serialize() == body
    assert keys.open(first.state).serialized == keys.open(second.state).serialized != body
    assert list(first.events) == list(second.events)
