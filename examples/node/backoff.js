// Retrying a refused call: exponential backoff with jitter, never sooner than the server's
// RetryInfo.retry_delay, a bounded number of times. Pure functions plus one loop whose clock
// and randomness are injected, so that `node --test` checks them without a server.
import grpc from "@grpc/grpc-js";
import { errorDetails } from "./errors.js";

export const DEFAULT_POLICY = Object.freeze({
  maxRetries: 5, // retries after the first attempt (0: never retry)
  baseMs: 100, // the first backoff without a server hint
  maxMs: 5000, // cap of the exponential part (a longer server hint is still honoured)
  jitter: 0.2, // each wait is stretched by a random 0..20%, so refused clients spread out
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
export function isRetryable(info) {
  if (info.code === grpc.status.UNAVAILABLE) return true;
  if (info.code !== grpc.status.RESOURCE_EXHAUSTED) return false;
  return info.retryInfo !== null || BUSY_REASONS.has(info.errorInfo?.reason);
}

/**
 * Milliseconds to wait before retry number `retry` (0 for the first retry):
 * max(server hint, min(maxMs, baseMs * 2^retry)), stretched by up to `jitter` at random.
 * `random` returns a number in [0, 1).
 */
export function backoffMs(retry, serverDelayMs, policy = DEFAULT_POLICY, random = Math.random) {
  const exponential = Math.min(policy.maxMs, policy.baseMs * 2 ** retry);
  const floor = Math.max(serverDelayMs ?? 0, exponential);
  return floor * (1 + policy.jitter * random());
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Run `attempt(n)` (a function returning a promise; n = 0, 1, ...) until it resolves, a
 * failure is not retryable, or `policy.maxRetries` retries are spent. The error finally
 * thrown carries `heka` (its decoded details) and `attempts`. `onRetry({retry, waitMs,
 * info})` is told of each retry before its wait.
 */
export async function withRetry(attempt, options = {}) {
  const policy = { ...DEFAULT_POLICY, ...options.policy };
  const random = options.random ?? Math.random;
  const wait = options.sleep ?? sleep;
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      const info = errorDetails(err);
      if (n >= policy.maxRetries || !isRetryable(info)) {
        err.heka = info;
        err.attempts = n + 1;
        throw err;
      }
      const waitMs = backoffMs(n, info.retryDelayMs, policy, random);
      options.onRetry?.({ retry: n + 1, waitMs, info });
      await wait(waitMs);
    }
  }
}
