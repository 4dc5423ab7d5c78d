// Retrying a refused call: exponential backoff with jitter, never sooner than the server's
// RetryInfo.retry_delay, a bounded number of times. Pure functions plus one loop whose clock
// and randomness are injected, so that the unit tests check them without a server.
import { Code, ConnectError } from "@connectrpc/connect";
import { type ErrorDetails, errorDetails } from "./errors.js";

export interface RetryPolicy {
  /** Retries after the first attempt (0: never retry). */
  maxRetries: number;
  /** The first backoff without a server hint. */
  baseMs: number;
  /** Cap of the exponential part (a longer server hint is still honoured). */
  maxMs: number;
  /** Each wait is stretched by a random 0..jitter, so that refused clients spread out. */
  jitter: number;
}

export const DEFAULT_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxRetries: 5,
  baseMs: 100,
  maxMs: 5000,
  jitter: 0.2,
});

// Reasons of heka's RESOURCE_EXHAUSTED that mean "busy now, try again" (docs/api.md#errors).
const BUSY_REASONS = new Set(["QUEUE_FULL", "QUEUE_WAIT", "QUEUE_DEADLINE", "OVERLOADED", "REVIEWS_FULL", "STREAMS_FULL"]);

/**
 * Whether a failed call is worth repeating. RESOURCE_EXHAUSTED only when the server says it
 * is busy (a RetryInfo, or one of heka's busy reasons: every search slot busy, the replica's
 * cap of calls, reviews or streams reached): the same code without them is a message over a
 * size limit (RESPONSE_TOO_LARGE, or gRPC's own refusal of a request), which fails again
 * however long one waits. UNAVAILABLE
 * (no connection, a worker that died) is retried too; nothing else is.
 */
export function isRetryable(info: Pick<ErrorDetails, "code" | "errorInfo" | "retryInfo">): boolean {
  if (info.code === Code.Unavailable) return true;
  if (info.code !== Code.ResourceExhausted) return false;
  return info.retryInfo !== null || BUSY_REASONS.has(info.errorInfo?.reason ?? "");
}

/**
 * Milliseconds to wait before retry number `retry` (0 for the first retry):
 * max(server hint, min(maxMs, baseMs * 2^retry)), stretched by up to `jitter` at random.
 * `random` returns a number in [0, 1).
 */
export function backoffMs(
  retry: number,
  serverDelayMs: number | null,
  policy: RetryPolicy = DEFAULT_POLICY,
  random: () => number = Math.random,
): number {
  const exponential = Math.min(policy.maxMs, policy.baseMs * 2 ** retry);
  const floor = Math.max(serverDelayMs ?? 0, exponential);
  return floor * (1 + policy.jitter * random());
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A call that failed for good: its decoded details, how many attempts were made. */
export class CallError extends Error {
  constructor(
    readonly details: ErrorDetails,
    readonly attempts: number,
    options: { cause: ConnectError },
  ) {
    super(`${details.codeName}: ${details.message} (after ${attempts} attempt${attempts === 1 ? "" : "s"})`, options);
    this.name = "CallError";
  }
}

export interface RetryEvent {
  /** 1 for the first retry. */
  retry: number;
  waitMs: number;
  info: ErrorDetails;
}

export interface RetryOptions {
  policy?: Partial<RetryPolicy>;
  random?: () => number;
  sleep?: (ms: number) => Promise<unknown>;
  /** Told of each retry before its wait. */
  onRetry?: (event: RetryEvent) => void;
}

/**
 * Run `attempt(n)` (n = 0, 1, ...) until it resolves, a failure is not retryable, or
 * `policy.maxRetries` retries are spent; then throw a CallError. An exception that is not
 * a ConnectError (a bug, not an RPC error) is thrown as it is, never retried.
 */
export async function withRetry<T>(attempt: (n: number) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const policy = { ...DEFAULT_POLICY, ...options.policy };
  const random = options.random ?? Math.random;
  const wait = options.sleep ?? sleep;
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (!(err instanceof ConnectError)) throw err;
      const info = errorDetails(err);
      if (n >= policy.maxRetries || !isRetryable(info)) throw new CallError(info, n + 1, { cause: err });
      const waitMs = backoffMs(n, info.retryDelayMs, policy, random);
      options.onRetry?.({ retry: n + 1, waitMs, info });
      await wait(waitMs);
    }
  }
}
