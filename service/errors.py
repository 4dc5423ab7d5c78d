"""The one place where errors become gRPC statuses.

Servicer code raises :class:`ServiceError` (or lets an engine/bot/token error propagate);
:func:`to_service_error` maps every exception to a status code, a message a client can act
on, a metric ``reason`` and the standard rich details (``google.rpc.ErrorInfo`` always,
``BadRequest`` when a request field is at fault, ``PreconditionFailure``, ``RetryInfo`` +
``QuotaFailure`` for a full search capacity). Bad input is never ``UNKNOWN``/``INTERNAL``;
``INTERNAL`` means a bug, and is logged with a traceback.
"""

from __future__ import annotations

import logging
import uuid
from concurrent.futures.process import BrokenProcessPool

import grpc
from google.protobuf import duration_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from ai.api import BotSpecError
from engine.core import (
    ActionParseError,
    EngineError,
    GameOptionsError,
    GameOverError,
    IllegalActionError,
    StateFormatError,
    UnknownGameError,
)
from service.envelope import TokenError

log = logging.getLogger("heka.errors")

DOMAIN = "heka.v1"


#: Longest error message sent (client input echoed in a message could otherwise exceed the
#: metadata size limit and turn a precise error into a transport error).
MAX_MESSAGE_CHARS = 400


def clip(message: str) -> str:
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return message[: MAX_MESSAGE_CHARS - 20] + f"... ({len(message)} chars)"


#: Every ErrorInfo reason (lower case; ErrorInfo carries it in upper case): the table of
#: docs/api.md, "Errors", lists them, and ``heka_invalid_requests_total`` counts by them.
#: A reason outside this set is counted as ``other`` (service.metrics.label_values).
REASONS = frozenset(
    {
        "bad_bot",
        "bad_budget",
        "bad_options",
        "bad_player",
        "bad_player_count",
        "bad_request",
        "bad_request_body",
        "bad_state",
        "bad_target_rating",
        "bad_token",
        "cancelled",
        "draining",
        "deadline",
        "decode_disabled",
        "game_over",
        "illegal_action",
        "internal",
        "not_to_act",
        "overloaded",
        "player_required",
        "private_move",
        "private_review",
        "queue_deadline",
        "queue_full",
        "queue_wait",
        "response_too_large",
        "reviews_full",
        "shutting_down",
        "streams_full",
        "two_oneof_members",
        "unknown_action",
        "unknown_enum_value",
        "unknown_game",
        "viewer_required",
        "worker_died",
        "wrong_game",
        # a status that a handler set on its context itself (service.interceptors)
        *(code.name.lower() for code in grpc.StatusCode),
    }
)


class ServiceError(Exception):
    """An error with its status, message, metric reason and optional request field."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        reason: str,
        field: str | None = None,
        precondition: str | None = None,
        retry_after: float | None = None,
        quota_subject: str = "searches",
        metadata: dict[str, str] | None = None,
    ) -> None:
        message = clip(message)
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason
        self.field = field
        self.precondition = precondition
        self.retry_after = retry_after
        self.quota_subject = quota_subject
        #: Machine-readable facts a client may act on (ErrorInfo.metadata), e.g. the seat to
        #: act, so that it need not parse the message.
        self.metadata = metadata or {}

    def to_status(self) -> grpc.Status:
        status = status_pb2.Status(code=self.code.value[0], message=self.message)
        info = error_details_pb2.ErrorInfo(reason=self.reason.upper(), domain=DOMAIN, metadata=self.metadata)
        status.details.add().Pack(info)
        if self.field is not None:
            bad = error_details_pb2.BadRequest()
            bad.field_violations.add(field=self.field, description=self.message)
            status.details.add().Pack(bad)
        if self.precondition is not None:
            pf = error_details_pb2.PreconditionFailure()
            pf.violations.add(type=self.precondition, subject="state", description=self.message)
            status.details.add().Pack(pf)
        if self.retry_after is not None:
            retry = error_details_pb2.RetryInfo(
                retry_delay=duration_pb2.Duration(
                    nanos=int(self.retry_after * 1e9) % 1_000_000_000, seconds=int(self.retry_after)
                )
            )
            status.details.add().Pack(retry)
            if self.code == grpc.StatusCode.RESOURCE_EXHAUSTED:  # a quota, not a dead worker
                quota = error_details_pb2.QuotaFailure()
                quota.violations.add(subject=self.quota_subject, description=self.message)
                status.details.add().Pack(quota)
        return rpc_status.to_status(status)


def invalid(
    field: str | None, message: str, reason: str, metadata: dict[str, str] | None = None
) -> ServiceError:
    return ServiceError(
        grpc.StatusCode.INVALID_ARGUMENT, message, reason=reason, field=field, metadata=metadata
    )


def failed_precondition(message: str, reason: str, metadata: dict[str, str] | None = None) -> ServiceError:
    return ServiceError(
        grpc.StatusCode.FAILED_PRECONDITION,
        message,
        reason=reason,
        precondition=reason.upper(),
        metadata=metadata,
    )


def resource_exhausted(
    message: str, reason: str, retry_after: float = 1.0, quota_subject: str = "searches"
) -> ServiceError:
    return ServiceError(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        message,
        reason=reason,
        retry_after=retry_after,
        quota_subject=quota_subject,
    )


def response_too_large(size: int, limit: int) -> ServiceError:
    """A response over ``HEKA_MAX_MESSAGE_BYTES``, refused by the server itself (gRPC would
    fail it after the handler returned, with no details, and the call would count as a
    success). Retrying the same request gives the same answer: no retry hint."""
    return ServiceError(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        f"the response would be {size:,} bytes, over this server's HEKA_MAX_MESSAGE_BYTES "
        f"({limit:,}): ask for less (fewer max_bot_moves, a smaller diagnostics_top_k, "
        "compact_actions, no include_legal_actions), or raise the cap",
        reason="response_too_large",
    )


#: Retry hint of a call cut because the server is shutting down: another replica
#: (or this one's successor) can take the retry at once.
SHUTDOWN_RETRY_SECONDS = 0.1


def shutting_down() -> ServiceError:
    """A call cut by shutdown: its grace ran out before it finished. Nothing of it is kept
    (the move is applied only in the token of a response), so the same request may be sent
    again, to another replica."""
    return ServiceError(
        grpc.StatusCode.UNAVAILABLE,
        "the server is shutting down and its grace (HEKA_GRACE_SECONDS) ran out before this call "
        "finished; nothing was applied: retry the same request on another replica",
        reason="shutting_down",
        retry_after=SHUTDOWN_RETRY_SECONDS,
    )


def _options_field(message: str) -> str:
    text = message.lower()
    if "option" not in text and ("player count" in text or "played by" in text):
        return "num_players"
    return "options"


def to_service_error(exc: BaseException) -> ServiceError:
    """Map any exception raised while serving a call to a :class:`ServiceError`."""
    if isinstance(exc, ServiceError):
        return exc
    msg = str(exc) or type(exc).__name__
    if isinstance(exc, TokenError):
        return invalid("state", msg, "bad_token")
    if isinstance(exc, GameOverError):
        return failed_precondition(msg, "game_over")
    if isinstance(exc, IllegalActionError):
        return invalid("action", msg, "illegal_action")
    if isinstance(exc, ActionParseError):
        return invalid("action", msg, "unknown_action")
    if isinstance(exc, UnknownGameError):
        return invalid("game", msg, "unknown_game")
    if isinstance(exc, GameOptionsError):
        field = _options_field(msg)
        return invalid(field, msg, "bad_player_count" if field == "num_players" else "bad_options")
    if isinstance(exc, StateFormatError):
        return invalid("state", f"the state in the token is not valid: {msg}", "bad_state")
    if isinstance(exc, BotSpecError):
        return invalid("bot", msg, "bad_bot")
    if isinstance(exc, EngineError):
        return invalid(None, msg, "bad_request")
    if isinstance(exc, BrokenProcessPool):
        log.error("search worker pool broke; it is being restarted")
        return ServiceError(
            grpc.StatusCode.UNAVAILABLE,
            "a search worker died; retry the call",
            reason="worker_died",
            retry_after=0.5,
        )
    incident = uuid.uuid4().hex[:12]
    log.error("internal error (incident %s)", incident, exc_info=exc)
    return ServiceError(
        grpc.StatusCode.INTERNAL, f"internal server error (incident {incident})", reason="internal"
    )
