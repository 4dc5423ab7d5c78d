// The decoding of grpc-status-details-bin, on trailers built here as heka builds them.
import { test } from "node:test";
import assert from "node:assert/strict";
import grpc from "@grpc/grpc-js";
import { DETAIL_TYPES, Status, decodeStatus, durationMs, errorDetails, formatError } from "../errors.js";

function any(type, value) {
  const message = DETAIL_TYPES[type];
  return { type_url: `type.googleapis.com/${type}`, value: message.encode(message.fromObject(value)).finish() };
}

/** A failed call as grpc-js reports it: code, message, and the trailer in `metadata`. */
function failure(code, message, details) {
  const metadata = new grpc.Metadata();
  if (details !== undefined) {
    const bytes = Status.encode(Status.fromObject({ code, message, details })).finish();
    metadata.set("grpc-status-details-bin", Buffer.from(bytes));
  }
  return Object.assign(new Error(message), { code, details: message, metadata });
}

test("every detail of a RESOURCE_EXHAUSTED is decoded and picked out", () => {
  const err = failure(grpc.status.RESOURCE_EXHAUSTED, "every search slot is busy", [
    any("google.rpc.ErrorInfo", { reason: "QUEUE_FULL", domain: "heka.v1", metadata: { slots: "4" } }),
    any("google.rpc.RetryInfo", { retry_delay: { seconds: 1, nanos: 250_000_000 } }),
    any("google.rpc.QuotaFailure", { violations: [{ subject: "searches", description: "busy" }] }),
  ]);
  const info = errorDetails(err);
  assert.equal(info.code, 8);
  assert.equal(info.codeName, "RESOURCE_EXHAUSTED");
  assert.equal(info.message, "every search slot is busy");
  assert.equal(info.status.code, 8);
  assert.deepEqual(info.errorInfo, { reason: "QUEUE_FULL", domain: "heka.v1", metadata: { slots: "4" } });
  assert.equal(info.retryDelayMs, 1250);
  assert.equal(info.quotaFailure.violations[0].subject, "searches");
  assert.equal(info.badRequest, null);
  assert.equal(info.preconditionFailure, null);
  const text = formatError(info);
  assert.match(text, /^RESOURCE_EXHAUSTED \(8\): every search slot is busy/);
  assert.match(text, /ErrorInfo: reason=QUEUE_FULL domain=heka.v1 metadata=\{slots=4\}/);
  assert.match(text, /RetryInfo: retry_delay=1250 ms/);
  assert.match(text, /QuotaFailure: subject "searches": busy/);
});

test("BadRequest and PreconditionFailure; an unknown detail type is kept, not fatal", () => {
  const err = failure(grpc.status.INVALID_ARGUMENT, "viewer is required", [
    any("google.rpc.ErrorInfo", { reason: "VIEWER_REQUIRED", domain: "heka.v1" }),
    any("google.rpc.BadRequest", { field_violations: [{ field: "viewer", description: "required" }] }),
    any("google.rpc.PreconditionFailure", { violations: [{ type: "NOT_TO_ACT", subject: "state" }] }),
    { type_url: "type.googleapis.com/acme.v1.Mystery", value: Buffer.from([8, 1]) },
  ]);
  const info = errorDetails(err);
  assert.equal(info.badRequest.field_violations[0].field, "viewer");
  assert.equal(info.preconditionFailure.violations[0].type, "NOT_TO_ACT");
  assert.deepEqual(info.others, [{ type: "acme.v1.Mystery", unknown: true, bytes: 2 }]);
  assert.equal(info.retryDelayMs, null);
  assert.match(formatError(info), /BadRequest: field "viewer": required/);
  assert.match(formatError(info), /acme.v1.Mystery: \(unknown to this client, 2 bytes\)/);
});

test("no trailer, or a trailer that does not decode", () => {
  const bare = errorDetails(failure(grpc.status.UNAVAILABLE, "no connection"));
  assert.equal(bare.status, null);
  assert.equal(bare.errorInfo, null);
  assert.match(formatError(bare), /no grpc-status-details-bin trailer/);

  const metadata = new grpc.Metadata();
  metadata.set("grpc-status-details-bin", Buffer.from([0xff, 0xff, 0xff]));
  const broken = errorDetails({ code: 13, details: "x", metadata });
  assert.equal(broken.status, null);
  assert.ok(broken.decodeError);

  assert.equal(errorDetails(new Error("not a gRPC error")).status, null);
});

test("decodeStatus and durationMs", () => {
  const bytes = Status.encode(Status.fromObject({ code: 5, message: "m", details: [] })).finish();
  assert.deepEqual(decodeStatus(bytes), { code: 5, message: "m", details: [] });
  assert.equal(durationMs({ seconds: "2", nanos: 500_000 }), 2000.5);
  assert.equal(durationMs(null), null);
});
