// Rich error details: the google.rpc.Status that heka puts in the `grpc-status-details-bin`
// trailer of every error, decoded with the standard google/rpc protos published on npm
// (google-proto-files). Nothing here is specific to heka except the domain name.
import grpc from "@grpc/grpc-js";
import protoFiles from "google-proto-files";

const LOAD = { keepCase: true };
const root = protoFiles.loadSync(protoFiles.getProtoPath("rpc", "status.proto"), LOAD);
root.loadSync(protoFiles.getProtoPath("rpc", "error_details.proto"), LOAD);

/** google.rpc.Status, for decoding the trailer (and for building one in the tests). */
export const Status = root.lookupType("google.rpc.Status");

/** The detail messages of google/rpc/error_details.proto, by full name. */
export const DETAIL_TYPES = Object.fromEntries(
  [
    "ErrorInfo",
    "BadRequest",
    "PreconditionFailure",
    "RetryInfo",
    "QuotaFailure",
    "ResourceInfo",
    "DebugInfo",
    "RequestInfo",
    "Help",
    "LocalizedMessage",
  ].map((name) => [`google.rpc.${name}`, root.lookupType(`google.rpc.${name}`)]),
);

/** The domain of heka's ErrorInfo. */
export const HEKA_DOMAIN = "heka.v1";

const TO_OBJECT = { longs: String, enums: String, defaults: true, arrays: true, objects: true };
const TRAILER = "grpc-status-details-bin";

/** The name of a gRPC status code ("INVALID_ARGUMENT"), or the number as text. */
export function codeName(code) {
  return grpc.status[code] ?? String(code);
}

/**
 * Decode a serialised google.rpc.Status. Each `google.protobuf.Any` detail becomes
 * `{type, value}` (`type` the full message name, `value` the decoded message as a plain
 * object), or `{type, unknown: true, bytes}` for a message this client does not know.
 */
export function decodeStatus(bytes) {
  const status = Status.toObject(Status.decode(bytes), TO_OBJECT);
  const details = status.details.map((any) => {
    const type = any.type_url.slice(any.type_url.lastIndexOf("/") + 1);
    const message = DETAIL_TYPES[type];
    if (!message) return { type, unknown: true, bytes: any.value.length };
    return { type, value: message.toObject(message.decode(any.value), TO_OBJECT) };
  });
  return { code: status.code, message: status.message, details };
}

/** A google.protobuf.Duration ({seconds: "1", nanos: 5e8}) in milliseconds. */
export function durationMs(duration) {
  if (!duration) return null;
  return Number(duration.seconds ?? 0) * 1000 + Number(duration.nanos ?? 0) / 1e6;
}

/**
 * What a failed call says: its code, message and every detail of the trailer, with the
 * usual ones picked out. Works on any error (without the trailer, `status` is null).
 */
export function errorDetails(err) {
  const info = {
    code: err.code,
    codeName: codeName(err.code),
    message: err.details ?? err.message,
    status: null,
    decodeError: null,
    errorInfo: null,
    badRequest: null,
    preconditionFailure: null,
    retryInfo: null,
    quotaFailure: null,
    retryDelayMs: null,
    others: [],
  };
  const raw = typeof err.metadata?.get === "function" ? err.metadata.get(TRAILER) : [];
  if (raw.length === 0) return info;
  try {
    info.status = decodeStatus(raw[0]);
  } catch (exc) {
    info.decodeError = String(exc);
    return info;
  }
  for (const detail of info.status.details) {
    switch (detail.type) {
      case "google.rpc.ErrorInfo":
        info.errorInfo = detail.value;
        break;
      case "google.rpc.BadRequest":
        info.badRequest = detail.value;
        break;
      case "google.rpc.PreconditionFailure":
        info.preconditionFailure = detail.value;
        break;
      case "google.rpc.RetryInfo":
        info.retryInfo = detail.value;
        info.retryDelayMs = durationMs(detail.value.retry_delay);
        break;
      case "google.rpc.QuotaFailure":
        info.quotaFailure = detail.value;
        break;
      default:
        info.others.push(detail);
    }
  }
  return info;
}

/** The error as readable lines. */
export function formatError(info) {
  const lines = [`${info.codeName} (${info.code}): ${info.message}`];
  if (info.decodeError) lines.push(`  ${TRAILER} did not decode: ${info.decodeError}`);
  else if (!info.status) lines.push(`  no ${TRAILER} trailer`);
  if (info.status && info.status.code !== info.code) {
    lines.push(`  google.rpc.Status.code ${info.status.code} differs from the call's code`);
  }
  const e = info.errorInfo;
  if (e) {
    const meta = Object.entries(e.metadata ?? {}).map(([k, v]) => `${k}=${v}`).join(", ");
    lines.push(`  ErrorInfo: reason=${e.reason} domain=${e.domain}${meta ? ` metadata={${meta}}` : ""}`);
  }
  for (const v of info.badRequest?.field_violations ?? []) {
    lines.push(`  BadRequest: field "${v.field}": ${v.description}`);
  }
  for (const v of info.preconditionFailure?.violations ?? []) {
    lines.push(`  PreconditionFailure: type=${v.type} subject=${v.subject}: ${v.description}`);
  }
  if (info.retryInfo) lines.push(`  RetryInfo: retry_delay=${info.retryDelayMs} ms`);
  for (const v of info.quotaFailure?.violations ?? []) {
    lines.push(`  QuotaFailure: subject "${v.subject}": ${v.description}`);
  }
  for (const d of info.others) {
    lines.push(`  ${d.type}: ${d.unknown ? `(unknown to this client, ${d.bytes} bytes)` : JSON.stringify(d.value)}`);
  }
  return lines.join("\n");
}
