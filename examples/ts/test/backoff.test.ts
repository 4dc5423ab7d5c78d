// The retry policy: which failures are retried, how long each wait is, when it gives up.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Code } from "@connectrpc/connect";
import { ErrorInfoSchema, RetryInfoSchema } from "../src/gen/google/rpc/error_details_pb.js";
import { CallError, DEFAULT_POLICY, backoffMs, isRetryable, withRetry } from "../src/backoff.js";
import { errorDetails } from "../src/errors.js";
import { type Detail, detail, receivedError } from "./trailer.js";

const POLICY = { maxRetries: 5, baseMs: 100, maxMs: 5000, jitter: 0.2 };
const low = (): number => 0;
const high = (): number => 0.999999;

function refusal(code: Code, { reason, retryMs }: { reason?: string; retryMs?: number } = {}) {
  const details: Detail[] = [];
  if (reason) details.push(detail(ErrorInfoSchema, { reason, domain: "heka.v1" }));
  if (retryMs !== undefined) {
    const seconds = Math.floor(retryMs / 1000);
    details.push(detail(RetryInfoSchema, { retryDelay: { seconds: BigInt(seconds), nanos: (retryMs % 1000) * 1e6 } }));
  }
  return receivedError(code, "refused", details);
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
  const retryable = (code: Code, extra: { reason?: string; retryMs?: number } = {}) => isRetryable(errorDetails(refusal(code, extra)));
  for (const reason of ["QUEUE_FULL", "QUEUE_WAIT", "QUEUE_DEADLINE", "OVERLOADED", "REVIEWS_FULL", "STREAMS_FULL"]) {
    assert.equal(retryable(Code.ResourceExhausted, { reason }), true, reason);
  }
  assert.equal(retryable(Code.ResourceExhausted, { retryMs: 100 }), true);
  // A message over a size limit is RESOURCE_EXHAUSTED too, without details: never retried.
  assert.equal(retryable(Code.ResourceExhausted), false);
  assert.equal(retryable(Code.ResourceExhausted, { reason: "RESPONSE_TOO_LARGE" }), false);
  assert.equal(retryable(Code.Unavailable), true);
  for (const code of [Code.InvalidArgument, Code.FailedPrecondition, Code.DeadlineExceeded]) assert.equal(retryable(code), false);
});

test("withRetry waits as the server says, then succeeds", async () => {
  const waits: number[] = [];
  const retries: number[] = [];
  let calls = 0;
  const result = await withRetry(
    async (n) => {
      assert.equal(n, calls);
      calls += 1;
      if (n < 3) throw refusal(Code.ResourceExhausted, { reason: "OVERLOADED", retryMs: 250 });
      return "answer";
    },
    { policy: POLICY, random: low, sleep: async (ms) => waits.push(ms), onRetry: (e) => retries.push(e.retry) },
  );
  assert.equal(result, "answer");
  assert.equal(calls, 4);
  assert.deepEqual(waits, [250, 250, 400]);
  assert.deepEqual(retries, [1, 2, 3]);
});

test("withRetry gives up after maxRetries, with the details on the CallError", async () => {
  const waits: number[] = [];
  let calls = 0;
  await assert.rejects(
    withRetry(
      async () => {
        calls += 1;
        throw refusal(Code.ResourceExhausted, { reason: "QUEUE_FULL", retryMs: 1000 });
      },
      { policy: { ...POLICY, maxRetries: 2 }, random: low, sleep: async (ms) => waits.push(ms) },
    ),
    (err) => err instanceof CallError && err.attempts === 3 && err.details.errorInfo?.reason === "QUEUE_FULL" && err.details.retryDelayMs === 1000,
  );
  assert.equal(calls, 3);
  assert.deepEqual(waits, [1000, 1000]);
});

test("withRetry does not retry other codes, nor when maxRetries is 0, nor a bug", async () => {
  const cases: [Error, typeof POLICY][] = [
    [refusal(Code.InvalidArgument, { reason: "BAD_TOKEN" }), POLICY],
    [refusal(Code.ResourceExhausted), POLICY],
    [refusal(Code.Unavailable), { ...POLICY, maxRetries: 0 }],
    [new TypeError("a bug in the caller"), POLICY],
  ];
  for (const [error, policy] of cases) {
    let calls = 0;
    const waits: number[] = [];
    await assert.rejects(
      withRetry(
        async () => {
          calls += 1;
          throw error;
        },
        { policy, sleep: async (ms) => waits.push(ms) },
      ),
      (err) => (error instanceof TypeError ? err === error : err instanceof CallError && err.attempts === 1),
    );
    assert.equal(calls, 1);
    assert.deepEqual(waits, []);
  }
});
