// Errors as the gRPC transport makes them from a response's trailers: a google.rpc.Status
// with `google.protobuf.Any` details, serialised into grpc-status-details-bin (as heka's
// server writes it), then decoded by Connect's gRPC protocol code.
import { type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { findTrailerError, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";

export interface Detail<Desc extends DescMessage = DescMessage> {
  desc: Desc;
  value: MessageInitShape<Desc>;
}

/** `detail(Schema, value)`: one detail of an error, typed by its message. */
export function detail<Desc extends DescMessage>(desc: Desc, value: MessageInitShape<Desc>): Detail {
  return { desc, value } as Detail;
}

/** The ConnectError a client receives for a call that failed with these details. */
export function receivedError(code: Code, message: string, details: Detail[] = []): ConnectError {
  const trailer = setTrailerStatus(new Headers(), new ConnectError(message, code, undefined, details));
  const error = findTrailerError(trailer);
  if (!error) throw new Error("the trailer holds no error");
  return error;
}
