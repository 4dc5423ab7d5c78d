"""A bounded memo of verified tokens and their decoded states.

Decoding a token (HMAC check, decryption, the engine's deserialisation and validation) is
the largest cost of a cheap call, and a frontend uses each token several times (view,
legal actions, then the action). The cache maps a token string the server has verified or
issued to its decoded :class:`~engine.core.State` and its text (what a search worker
gets, so that it is not encoded again). It is a pure memo: the answer never
depends on it (a miss decodes the token), so the service stays stateless and any replica
still answers any call. Cached states are shared and must never be changed: callers that
change a state take a ``clone()``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from engine.core import State


class StateCache:
    """Least-recently-used, thread-safe, at most ``size`` entries (0: disabled)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[str, tuple[State, str]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, token: str) -> tuple[State, str] | None:
        """The state of ``token`` and its text, or ``None``."""
        if not self.size:
            return None
        with self._lock:
            entry = self._data.get(token)
            if entry is not None:
                self._data.move_to_end(token)
            return entry

    def put(self, token: str, state: State, text: str) -> None:
        if not self.size:
            return
        with self._lock:
            self._data[token] = (state, text)
            self._data.move_to_end(token)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)
