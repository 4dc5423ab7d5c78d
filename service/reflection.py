"""gRPC server reflection, both versions: ``grpc.reflection.v1`` (what current tools ask for
first: grpcurl, Postman, buf curl) and ``grpc.reflection.v1alpha`` (older tools).

grpcio-reflection serves v1alpha only. The two protocols are the same messages under two
package names (same fields, same numbers), so v1 is served by the same servicer: its requests
and responses are (de)serialised with the v1alpha classes, which read and write the same
bytes, and its own descriptor (v1alpha's, renamed) is added to the descriptor pool so that
clients can ask reflection about reflection too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection
from grpc_reflection.v1alpha import reflection_pb2 as v1alpha

V1_SERVICE_NAME = "grpc.reflection.v1.ServerReflection"
V1ALPHA_SERVICE_NAME = reflection.SERVICE_NAME
_V1_FILE = "grpc/reflection/v1/reflection.proto"


def _add_v1_descriptor(pool: Any) -> None:
    """v1alpha's file descriptor under v1's file and package names, in ``pool``."""
    try:
        pool.FindFileByName(_V1_FILE)
        return
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    v1alpha.DESCRIPTOR.CopyToProto(proto)
    old, new = proto.package, "grpc.reflection.v1"
    proto.name, proto.package = _V1_FILE, new
    proto.options.Clear()
    for message in proto.message_type:
        for field in message.field:
            if field.type_name.startswith(f".{old}."):
                field.type_name = f".{new}." + field.type_name[len(old) + 2 :]
    for service in proto.service:
        for method in service.method:
            method.input_type = f".{new}." + method.input_type[len(old) + 2 :]
            method.output_type = f".{new}." + method.output_type[len(old) + 2 :]
    pool.Add(proto)


def enable(server: grpc.aio.Server, service_names: Iterable[str]) -> None:
    """Serve reflection v1 and v1alpha on ``server`` for ``service_names`` (the reflection
    services themselves are added)."""
    pool = descriptor_pool.Default()
    _add_v1_descriptor(pool)
    names = (*service_names, V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME)
    servicer = reflection.aio.ReflectionServicer(names, pool=pool)
    reflection.enable_server_reflection(names, server, pool=pool)  # v1alpha
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=v1alpha.ServerReflectionRequest.FromString,
        response_serializer=v1alpha.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(V1_SERVICE_NAME, {"ServerReflectionInfo": handler}),)
    )
