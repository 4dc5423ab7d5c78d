// A heka.v1.GameService client, written from proto/heka/v1/game_service.proto alone: the
// proto is loaded at run time by @grpc/proto-loader (no generated code, no build step).
import path from "node:path";
import { fileURLToPath } from "node:url";
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";
import { withRetry } from "./backoff.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const PROTO_PATH = path.resolve(HERE, "../../proto/heka/v1/game_service.proto");

// How proto-loader maps messages to JavaScript objects:
//   keepCase: field names as in the proto (viewer, include_legal_actions, bot_turns);
//   enums: String: enum values by name ("BOT_KIND_GREEDY"), sent and received;
//   longs: String: int64/uint64 (the seeds) as decimal strings, since a JavaScript number
//     holds only 53 bits; int32 fields (move_number, iterations) arrive as numbers;
//   defaults: absent scalars and lists read as 0, "", false, [] (absent messages read as null;
//     proto3 `optional` fields stay undefined when absent);
//   oneofs: a virtual property names the member set ("details": "aton").
export const LOADER_OPTIONS = Object.freeze({
  keepCase: true,
  enums: String,
  longs: String,
  defaults: true,
  oneofs: true,
});

/** The loaded heka.v1 package (grpc-js service constructors). */
export function loadHeka(protoPath = PROTO_PATH) {
  const definition = protoLoader.loadSync(protoPath, LOADER_OPTIONS);
  return grpc.loadPackageDefinition(definition).heka.v1;
}

/**
 * A connection to a heka server: `call(method, request)` makes one unary call with a
 * deadline, retried on RESOURCE_EXHAUSTED / UNAVAILABLE (see backoff.js), and counts calls.
 * Repeating a heka call is safe: the server keeps nothing between calls, so the same token
 * and action give the same result.
 */
export class HekaClient {
  constructor(target, { deadlineMs = 30_000, policy = {}, onRetry = null, sleep = undefined } = {}) {
    const heka = loadHeka();
    this.target = target;
    this.stub = new heka.GameService(target, grpc.credentials.createInsecure());
    this.deadlineMs = deadlineMs;
    this.policy = policy;
    this.onRetry = onRetry;
    this.sleep = sleep;
    this.calls = {}; // method -> calls answered (successfully or not), retries included
    this.retries = 0;
  }

  /** One attempt, no retry. */
  once(method, request, { deadlineMs = this.deadlineMs } = {}) {
    const deadline = new Date(Date.now() + deadlineMs);
    this.calls[method] = (this.calls[method] ?? 0) + 1;
    return new Promise((resolve, reject) => {
      this.stub[method](request, { deadline }, (err, response) => (err ? reject(err) : resolve(response)));
    });
  }

  /** One call, retried as backoff.js says; throws the last error (with `.heka` details). */
  call(method, request, { deadlineMs = this.deadlineMs, policy = this.policy } = {}) {
    return withRetry(() => this.once(method, request, { deadlineMs }), {
      policy,
      sleep: this.sleep,
      onRetry: (event) => {
        this.retries += 1;
        this.onRetry?.({ method, ...event });
      },
    });
  }

  totalCalls() {
    return Object.values(this.calls).reduce((a, b) => a + b, 0);
  }

  close() {
    this.stub.close();
  }
}
