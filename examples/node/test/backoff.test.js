// The retry policy: which failures are retried, how long each wait is, when it gives up.
import { test } from "node:test";
import assert from "node:assert/strict";
import grpc from "@grpc/grpc-js";
import { DETAIL_TYPES, Status } from "../errors.js";
import { DEFAULT_POLICY, backoffMs, isRetryable, withRetry } from "../backoff.js";

const POLICY = { maxRetries: 5, baseMs: 100, maxMs: 5000, jitter: 0.2 };
const low = () => 0;
const high = () => 0.999999;

function refusal(code, { reason, retryMs } = {}) {
  const details = [];
  const pack = (type, value) => {
    const m = DETAIL_TYPES[type];
    details.push({ type_url: `type.googleapis.com/${type}`, value: m.encode(m.fromObject(value)).finish() });
  };
  if (reason) pack("google.rpc.ErrorInfo", { reason, domain: "heka.v1" });
  if (retryMs !== undefined) {
    pack("google.rpc.RetryInfo", { retry_delay: { seconds: Math.floor(retryMs / 1000), nanos: (retryMs % 1000) * 1e6 } });
  }
  const metadata = new grpc.Metadata();
  if (details.length) {
    metadata.set("grpc-status-details-bin", Buffer.from(Status.encode(Status.fromObject({ code, details })).finish()));
  }
  return Object.assign(new Error("refused"), { code, details: "refused", metadata });
}

test("backoff doubles from baseMs up to maxMs, never below the server's hint", () => {
  assert.deepEqual([0, 1, 2, 3, 10].map((n) => backoffMs(n, null, POLICY, low)), [100, 200, 400, 800, 5000]);
  assert.deepEqual([0, 1, 2].map((n) => backoffMs(n, 250, POLICY, low)), [250, 250, 400]);
  assert.equal(backoffMs(0, 8000, POLICY, low), 8000); // a hint above maxMs is still honoured
  assert.ok(Math.abs(backoffMs(0, null, POLICY, high) - 120) < 1e-3); // jitter: up to +20%
  assert.ok(Math.abs(backoffMs(20, null, POLICY, high) - 6000) < 1e-2);
  assert.equal(DEFAULT_POLICY.maxRetries, 5);
});

test("what is retried: busy RESOURCE_EXHAUSTED and UNAVAILABLE only", () => {
  const info = (code, extra = {}) => ({ code, errorInfo: null, retryInfo: null, ...extra });
  const { RESOURCE_EXHAUSTED, UNAVAILABLE, INVALID_ARGUMENT, FAILED_PRECONDITION, DEADLINE_EXCEEDED } = grpc.status;
  for (const reason of ["QUEUE_FULL", "QUEUE_WAIT", "QUEUE_DEADLINE", "OVERLOADED", "REVIEWS_FULL", "STREAMS_FULL"]) {
    assert.equal(isRetryable(info(RESOURCE_EXHAUSTED, { errorInfo: { reason } })), true, reason);
  }
  assert.equal(isRetryable(info(RESOURCE_EXHAUSTED, { errorInfo: { reason: "RESPONSE_TOO_LARGE" } })), false);
  assert.equal(isRetryable(info(RESOURCE_EXHAUSTED, { retryInfo: { retry_delay: null } })), true);
  // A message over a size limit is RESOURCE_EXHAUSTED too, without details: never retried.
  assert.equal(isRetryable(info(RESOURCE_EXHAUSTED)), false);
  assert.equal(isRetryable(info(UNAVAILABLE)), true);
  for (const code of [INVALID_ARGUMENT, FAILED_PRECONDITION, DEADLINE_EXCEEDED]) assert.equal(isRetryable(info(code)), false);
});

test("withRetry waits as the server says, then succeeds", async () => {
  const waits = [];
  const retries = [];
  let calls = 0;
  const result = await withRetry(
    async (n) => {
      assert.equal(n, calls);
      calls += 1;
      if (n < 3) throw refusal(grpc.status.RESOURCE_EXHAUSTED, { reason: "OVERLOADED", retryMs: 250 });
      return "answer";
    },
    { policy: POLICY, random: low, sleep: async (ms) => waits.push(ms), onRetry: (e) => retries.push(e.retry) },
  );
  assert.equal(result, "answer");
  assert.equal(calls, 4);
  assert.deepEqual(waits, [250, 250, 400]);
  assert.deepEqual(retries, [1, 2, 3]);
});

test("withRetry gives up after maxRetries, with the details on the error", async () => {
  const waits = [];
  let calls = 0;
  await assert.rejects(
    withRetry(
      async () => {
        calls += 1;
        throw refusal(grpc.status.RESOURCE_EXHAUSTED, { reason: "QUEUE_FULL", retryMs: 1000 });
      },
      { policy: { ...POLICY, maxRetries: 2 }, random: low, sleep: async (ms) => waits.push(ms) },
    ),
    (err) => err.attempts === 3 && err.heka.errorInfo.reason === "QUEUE_FULL" && err.heka.retryDelayMs === 1000,
  );
  assert.equal(calls, 3);
  assert.deepEqual(waits, [1000, 1000]);
});

test("withRetry does not retry other codes, nor when maxRetries is 0", async () => {
  for (const [error, policy] of [
    [refusal(grpc.status.INVALID_ARGUMENT, { reason: "BAD_TOKEN" }), POLICY],
    [refusal(grpc.status.RESOURCE_EXHAUSTED), POLICY],
    [refusal(grpc.status.UNAVAILABLE), { ...POLICY, maxRetries: 0 }],
  ]) {
    let calls = 0;
    const waits = [];
    await assert.rejects(
      withRetry(
        async () => {
          calls += 1;
          throw error;
        },
        { policy, sleep: async (ms) => waits.push(ms) },
      ),
      (err) => err.attempts === 1,
    );
    assert.equal(calls, 1);
    assert.deepEqual(waits, []);
  }
});
