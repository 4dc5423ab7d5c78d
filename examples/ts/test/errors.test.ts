// Decoding rich error details from the trailer: every google/rpc/error_details.proto message
// heka sends, picked out by type; unknown details listed, never fatal.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  BadRequestSchema,
  DebugInfoSchema,
  ErrorInfoSchema,
  PreconditionFailureSchema,
  QuotaFailureSchema,
  RetryInfoSchema,
} from "../src/gen/google/rpc/error_details_pb.js";
import { codeName, durationMs, errorDetails, formatError } from "../src/errors.js";
import { mismatches } from "../src/demos.js";
import { detail, receivedError } from "./trailer.js";

test("ErrorInfo, BadRequest and the trailer's code", () => {
  const err = receivedError(Code.InvalidArgument, "viewer is required", [
    detail(ErrorInfoSchema, { reason: "VIEWER_REQUIRED", domain: "heka.v1", metadata: { current_player: "0" } }),
    detail(BadRequestSchema, { fieldViolations: [{ field: "viewer", description: "viewer is required" }] }),
  ]);
  const info = errorDetails(err);
  assert.equal(info.code, Code.InvalidArgument);
  assert.equal(info.codeName, "INVALID_ARGUMENT");
  assert.equal(info.message, "viewer is required");
  assert.equal(info.hasStatus, true);
  assert.equal(info.trailerCode, 3);
  assert.equal(info.errorInfo?.reason, "VIEWER_REQUIRED");
  assert.deepEqual(info.errorInfo?.metadata, { current_player: "0" });
  assert.deepEqual(info.badRequest?.fieldViolations.map((v) => v.field), ["viewer"]);
  assert.deepEqual(info.others, []);
  assert.deepEqual(mismatches(info, { code: Code.InvalidArgument, reason: "VIEWER_REQUIRED", field: "viewer" }), []);
  assert.deepEqual(mismatches(info, { code: Code.InvalidArgument, reason: "VIEWER_REQUIRED", field: "player" }), [
    'BadRequest fields [viewer], expected "player"',
  ]);
  assert.match(formatError(info), /ErrorInfo: reason=VIEWER_REQUIRED domain=heka\.v1 metadata=\{current_player=0\}/);
});

test("PreconditionFailure, RetryInfo, QuotaFailure; other details listed", () => {
  const err = receivedError(Code.ResourceExhausted, "busy", [
    detail(ErrorInfoSchema, { reason: "OVERLOADED", domain: "heka.v1" }),
    detail(RetryInfoSchema, { retryDelay: { seconds: 1n, nanos: 500_000_000 } }),
    detail(QuotaFailureSchema, { violations: [{ subject: "concurrent calls", description: "1 call" }] }),
    detail(PreconditionFailureSchema, { violations: [{ type: "NOT_TO_ACT", subject: "state" }] }),
    detail(DebugInfoSchema, { detail: "x" }),
  ]);
  const info = errorDetails(err);
  assert.equal(info.retryDelayMs, 1500);
  assert.equal(info.quotaFailure?.violations[0]?.subject, "concurrent calls");
  assert.equal(info.preconditionFailure?.violations[0]?.type, "NOT_TO_ACT");
  assert.equal(info.others.length, 1);
  assert.match(info.others[0] ?? "", /^google\.rpc\.DebugInfo: /);
  assert.match(formatError(info), /RetryInfo: retry_delay=1500 ms/);
});

test("a detail of a type this client does not know is listed, the rest decoded", () => {
  const err = receivedError(Code.Internal, "x", [detail(ErrorInfoSchema, { reason: "R", domain: "heka.v1" })]);
  err.details.push({ type: "example.v1.Unknown", value: new Uint8Array([8, 1]) });
  const info = errorDetails(err);
  assert.equal(info.errorInfo?.reason, "R");
  assert.deepEqual(info.others, ["example.v1.Unknown: (unknown to this client)"]);
});

test("an error without the trailer, and an error that is not a ConnectError", () => {
  const plain = errorDetails(new ConnectError("no route", Code.Unavailable));
  assert.equal(plain.hasStatus, false);
  assert.equal(plain.errorInfo, null);
  assert.match(formatError(plain), /no grpc-status-details-bin trailer/);
  assert.equal(errorDetails(new Error("boom")).code, Code.Unknown);
});

test("codeName and durationMs", () => {
  assert.equal(codeName(Code.ResourceExhausted), "RESOURCE_EXHAUSTED");
  assert.equal(codeName(Code.FailedPrecondition), "FAILED_PRECONDITION");
  assert.equal(codeName(Code.DeadlineExceeded), "DEADLINE_EXCEEDED");
  assert.equal(durationMs(undefined), null);
  assert.equal(durationMs({ $typeName: "google.protobuf.Duration", seconds: 0n, nanos: 250_000_000 }), 250);
});
