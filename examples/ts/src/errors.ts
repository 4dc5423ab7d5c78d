// Rich error details: heka puts a google.rpc.Status in the `grpc-status-details-bin` trailer
// of every error. Connect's gRPC transport decodes that Status into the ConnectError (its
// code, message and `google.protobuf.Any` details); findDetails() unpacks the details with
// the generated google/rpc/error_details.proto types. Nothing here is specific to heka except
// the domain name.
import { createRegistry, type Message } from "@bufbuild/protobuf";
import type { Duration } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type BadRequest,
  BadRequestSchema,
  DebugInfoSchema,
  type ErrorInfo,
  ErrorInfoSchema,
  HelpSchema,
  LocalizedMessageSchema,
  type PreconditionFailure,
  PreconditionFailureSchema,
  type QuotaFailure,
  QuotaFailureSchema,
  RequestInfoSchema,
  ResourceInfoSchema,
  type RetryInfo,
  RetryInfoSchema,
} from "./gen/google/rpc/error_details_pb.js";

/** The domain of heka's ErrorInfo. */
export const HEKA_DOMAIN = "heka.v1";

const TRAILER = "grpc-status-details-bin";

/** Every message of google/rpc/error_details.proto, for findDetails(). */
export const DETAIL_REGISTRY = createRegistry(
  ErrorInfoSchema,
  BadRequestSchema,
  PreconditionFailureSchema,
  RetryInfoSchema,
  QuotaFailureSchema,
  ResourceInfoSchema,
  DebugInfoSchema,
  RequestInfoSchema,
  HelpSchema,
  LocalizedMessageSchema,
);

/** What a failed call says, the usual details picked out. */
export interface ErrorDetails {
  code: Code;
  /** The gRPC name of the code: "INVALID_ARGUMENT". */
  codeName: string;
  message: string;
  /** Whether the error carried a google.rpc.Status (the grpc-status-details-bin trailer). */
  hasStatus: boolean;
  /** The grpc-status trailer, when there is one (it must agree with the Status's code). */
  trailerCode: number | null;
  errorInfo: ErrorInfo | null;
  badRequest: BadRequest | null;
  preconditionFailure: PreconditionFailure | null;
  retryInfo: RetryInfo | null;
  quotaFailure: QuotaFailure | null;
  /** RetryInfo.retry_delay in milliseconds. */
  retryDelayMs: number | null;
  /** The other details: decoded ones as JSON text, unknown ones by type name. */
  others: string[];
}

/** The gRPC name of a code: Code.InvalidArgument is "INVALID_ARGUMENT". */
export function codeName(code: Code): string {
  const name = Code[code];
  if (name === undefined) return String(code);
  return name.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

/** A google.protobuf.Duration in milliseconds. */
export function durationMs(duration: Duration | undefined): number | null {
  if (!duration) return null;
  return Number(duration.seconds) * 1000 + duration.nanos / 1e6;
}

function isMessage<T extends Message>(message: Message, typeName: T["$typeName"]): message is T {
  return message.$typeName === typeName;
}

/** The details of any error (a ConnectError, or anything else: code UNKNOWN, no details). */
export function errorDetails(error: unknown): ErrorDetails {
  const err = ConnectError.from(error);
  const trailerCode = err.metadata.get("grpc-status");
  const info: ErrorDetails = {
    code: err.code,
    codeName: codeName(err.code),
    message: err.rawMessage,
    hasStatus: err.metadata.get(TRAILER) !== null,
    trailerCode: trailerCode === null ? null : Number(trailerCode),
    errorInfo: null,
    badRequest: null,
    preconditionFailure: null,
    retryInfo: null,
    quotaFailure: null,
    retryDelayMs: null,
    others: [],
  };
  for (const detail of err.findDetails(DETAIL_REGISTRY)) {
    if (isMessage<ErrorInfo>(detail, "google.rpc.ErrorInfo")) info.errorInfo = detail;
    else if (isMessage<BadRequest>(detail, "google.rpc.BadRequest")) info.badRequest = detail;
    else if (isMessage<PreconditionFailure>(detail, "google.rpc.PreconditionFailure")) info.preconditionFailure = detail;
    else if (isMessage<QuotaFailure>(detail, "google.rpc.QuotaFailure")) info.quotaFailure = detail;
    else if (isMessage<RetryInfo>(detail, "google.rpc.RetryInfo")) {
      info.retryInfo = detail;
      info.retryDelayMs = durationMs(detail.retryDelay);
    } else info.others.push(`${detail.$typeName}: ${JSON.stringify(detail, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`);
  }
  for (const detail of err.details) {
    const type = "desc" in detail ? detail.desc.typeName : detail.type;
    if (!DETAIL_REGISTRY.getMessage(type)) info.others.push(`${type}: (unknown to this client)`);
  }
  return info;
}

/** The error as readable lines. */
export function formatError(info: ErrorDetails): string {
  const lines = [`${info.codeName} (${info.code}): ${info.message}`];
  if (!info.hasStatus) lines.push(`  no ${TRAILER} trailer`);
  if (info.trailerCode !== null && info.trailerCode !== info.code) {
    lines.push(`  grpc-status ${info.trailerCode} differs from google.rpc.Status.code ${info.code}`);
  }
  const e = info.errorInfo;
  if (e) {
    const meta = Object.entries(e.metadata).map(([k, v]) => `${k}=${v}`).join(", ");
    lines.push(`  ErrorInfo: reason=${e.reason} domain=${e.domain}${meta ? ` metadata={${meta}}` : ""}`);
  }
  for (const v of info.badRequest?.fieldViolations ?? []) {
    lines.push(`  BadRequest: field "${v.field}": ${v.description}`);
  }
  for (const v of info.preconditionFailure?.violations ?? []) {
    lines.push(`  PreconditionFailure: type=${v.type} subject=${v.subject}: ${v.description}`);
  }
  if (info.retryInfo) lines.push(`  RetryInfo: retry_delay=${info.retryDelayMs} ms`);
  for (const v of info.quotaFailure?.violations ?? []) {
    lines.push(`  QuotaFailure: subject "${v.subject}": ${v.description}`);
  }
  for (const other of info.others) lines.push(`  ${other}`);
  return lines.join("\n");
}
