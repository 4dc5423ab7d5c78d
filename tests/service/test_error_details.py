"""The rich details of an error (service/errors.py): what a refused call says about when
to retry and which quota failed."""

from __future__ import annotations


def test_retry_hints_carry_a_quota_failure_only_for_resource_exhausted() -> None:
    """A dead worker (UNAVAILABLE) says when to retry, but no quota failed; a full capacity
    (RESOURCE_EXHAUSTED) says both."""
    import grpc
    from google.rpc import error_details_pb2, status_pb2

    from service.errors import ServiceError, resource_exhausted

    def kinds(err: ServiceError) -> set[str]:
        proto = err.to_status()
        trailers = dict(proto.trailing_metadata)
        decoded = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
        names = set()
        for detail in decoded.details:
            for cls in (
                error_details_pb2.RetryInfo,
                error_details_pb2.QuotaFailure,
                error_details_pb2.ErrorInfo,
            ):
                if detail.Is(cls.DESCRIPTOR):
                    names.add(cls.__name__)
        return names

    dead = ServiceError(
        grpc.StatusCode.UNAVAILABLE, "a search worker died", reason="worker_died", retry_after=0.5
    )
    assert kinds(dead) == {"ErrorInfo", "RetryInfo"}
    assert kinds(resource_exhausted("busy", "capacity")) == {"ErrorInfo", "RetryInfo", "QuotaFailure"}
