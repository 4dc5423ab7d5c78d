"""Backing off from refusals: RetryInfo, with jitter, for every driver.

A heka server that sheds load (a full search queue, a draining replica) answers
RESOURCE_EXHAUSTED or UNAVAILABLE with a ``google.rpc.RetryInfo`` in the status details
(docs/api.md, "Retrying"). A well-behaved client waits at least that long, and longer after each
refusal in a row, with random jitter so that refused clients do not come back together;
any call of heka.v1.GameService may be retried as it is (the server keeps no game). Calls
refused without a retry hint are errors, not shed load.

This module needs only the standard library and the generated protobuf messages (no grpc
object): the drivers read the trailing metadata themselves.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable
from typing import Any

from google.rpc import error_details_pb2, status_pb2

#: Status codes a refusal with a retry hint may carry.
SHED_CODES = frozenset({"RESOURCE_EXHAUSTED", "UNAVAILABLE"})
_DETAILS_KEY = "grpc-status-details-bin"


def retry_delay(code: str, trailing_metadata: Iterable[Any] | None) -> float | None:
    """The delay a refused call's RetryInfo asks for (seconds), or None when the status is
    not a refusal with a retry hint. ``trailing_metadata``: (key, value) pairs."""
    if code not in SHED_CODES or not trailing_metadata:
        return None
    for key, value in trailing_metadata:
        if key != _DETAILS_KEY:
            continue
        status = status_pb2.Status()
        try:
            status.ParseFromString(value if isinstance(value, bytes) else bytes(value))
        except Exception:
            return None
        for detail in status.details:
            if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                info = error_details_pb2.RetryInfo()
                detail.Unpack(info)
                return float(info.retry_delay.seconds + info.retry_delay.nanos / 1e9)
    return None


@dataclasses.dataclass(frozen=True, slots=True)
class Backoff:
    """How long to wait after the ``attempt``-th refusal in a row (1 = the first): the hint
    doubled for each earlier refusal, capped at ``max_seconds``, then stretched by a random
    factor in [1, 1 + ``jitter``] (never shorter than the server asked)."""

    max_retries: int = 20
    max_seconds: float = 10.0
    jitter: float = 1.0

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.max_seconds <= 0 or self.jitter < 0:
            raise ValueError("max_retries >= 0, max_seconds > 0 and jitter >= 0")

    def delay(self, hint: float, attempt: int, rng: random.Random) -> float:
        # The doubling stops past 2^60 (far above any cap): 2.0 ** 1024 overflows a float.
        base = min(self.max_seconds, max(hint, 0.001) * 2.0 ** min(60, max(0, attempt - 1)))
        return max(hint, base * (1.0 + self.jitter * rng.random()))
