// A heka.v1.GameService client: the code generated from proto/ by protobuf-es (src/gen/),
// called over the gRPC protocol (HTTP/2) by Connect's Node transport. Requests and
// responses are typed: a misspelled field, enum or a seed that is not a bigint does not
// compile (typecheck/).
import { type CallOptions, type Client, ConnectError, createClient } from "@connectrpc/connect";
import { Http2SessionManager, createGrpcTransport } from "@connectrpc/connect-node";
import { GameService } from "./gen/heka/v1/game_service_pb.js";
import { CallError, type RetryEvent, type RetryOptions, type RetryPolicy, withRetry } from "./backoff.js";
import { errorDetails } from "./errors.js";

export type GameServiceClient = Client<typeof GameService>;
/** The client's method names: "listGames", "createGame", "applyAction", "reviewGame", ... */
export type Method = keyof GameServiceClient;
/** The server-streaming methods ("reviewGame"): they return an AsyncIterable, not a Promise. */
export type StreamMethod = {
  [M in Method]: ReturnType<GameServiceClient[M]> extends AsyncIterable<unknown> ? M : never;
}[Method];
/** The unary methods: one request, one response. */
export type UnaryMethod = Exclude<Method, StreamMethod>;
/** The request of a method, as a message or as a plain (typed) object. */
export type RequestOf<M extends Method> = Parameters<GameServiceClient[M]>[0];
/** The response of a unary method; of a streaming method, each message of its stream. */
export type ResponseOf<M extends Method> =
  ReturnType<GameServiceClient[M]> extends AsyncIterable<infer R> ? R : Awaited<ReturnType<GameServiceClient[M]>>;

/** The proto name of a method: "createGame" is "CreateGame". */
export function rpcName(method: Method): string {
  return GameService.method[method].name;
}

export interface ClientOptions {
  /** The deadline of each call. */
  deadlineMs?: number;
  policy?: Partial<RetryPolicy>;
  onRetry?: ((event: RetryEvent & { method: Method }) => void) | null;
  sleep?: (ms: number) => Promise<unknown>;
}

/**
 * A connection to a heka server (`target` is "host:port", plaintext HTTP/2):
 * `call(method, request)` makes one unary call with a deadline, retried on
 * RESOURCE_EXHAUSTED / UNAVAILABLE (backoff.ts), and counts calls; `stream(method, request)`
 * does the same for a server-streaming call until its first message. Repeating a heka call is
 * safe: the server keeps nothing between calls, so the same token and action give the same
 * result.
 */
export class HekaClient {
  readonly rpc: GameServiceClient;
  readonly deadlineMs: number;
  readonly policy: Partial<RetryPolicy>;
  onRetry: ClientOptions["onRetry"];
  /** Calls made by method (proto name), retries included. */
  readonly calls: Record<string, number> = {};
  retries = 0;
  private readonly sleep: ClientOptions["sleep"];
  private readonly session: Http2SessionManager;

  constructor(target: string, options: ClientOptions = {}) {
    const baseUrl = `http://${target}`;
    this.session = new Http2SessionManager(baseUrl);
    this.rpc = createClient(GameService, createGrpcTransport({ baseUrl, sessionManager: this.session }));
    this.deadlineMs = options.deadlineMs ?? 30_000;
    this.policy = options.policy ?? {};
    this.onRetry = options.onRetry ?? null;
    this.sleep = options.sleep;
  }

  /** One attempt, no retry. */
  once<M extends UnaryMethod>(method: M, request: NoInfer<RequestOf<M>>, { deadlineMs = this.deadlineMs } = {}): Promise<ResponseOf<M>> {
    const name = rpcName(method);
    this.calls[name] = (this.calls[name] ?? 0) + 1;
    // Each method has its own request type; indexing the client by a generic name loses it.
    const send = this.rpc[method] as (request: RequestOf<M>, options: CallOptions) => Promise<ResponseOf<M>>;
    return send(request, { timeoutMs: deadlineMs });
  }

  /** One call, retried as backoff.ts says; a call that fails for good throws a CallError. */
  call<M extends UnaryMethod>(
    method: M,
    request: NoInfer<RequestOf<M>>,
    { deadlineMs = this.deadlineMs, policy = this.policy }: { deadlineMs?: number; policy?: Partial<RetryPolicy> } = {},
  ): Promise<ResponseOf<M>> {
    return withRetry(() => this.once(method, request, { deadlineMs }), this.retrying(method, policy));
  }

  /**
   * A server-streaming call with a deadline (the whole stream's). A refusal arrives with the
   * first message, not when the call is made: the call is retried as `call` does until its
   * first message comes. After that nothing is retried (the messages read would come
   * again); a failure throws a CallError. Breaking out of `for await` cancels the call.
   */
  async *stream<M extends StreamMethod>(
    method: M,
    request: NoInfer<RequestOf<M>>,
    { deadlineMs = this.deadlineMs, policy = this.policy }: { deadlineMs?: number; policy?: Partial<RetryPolicy> } = {},
  ): AsyncGenerator<ResponseOf<M>> {
    const name = rpcName(method);
    const open = this.rpc[method] as (request: RequestOf<M>, options: CallOptions) => AsyncIterable<ResponseOf<M>>;
    const { messages, first, stop } = await withRetry(async () => {
      this.calls[name] = (this.calls[name] ?? 0) + 1;
      const stop = new AbortController();
      const messages = open(request, { timeoutMs: deadlineMs, signal: stop.signal })[Symbol.asyncIterator]();
      return { messages, first: await messages.next(), stop };
    }, this.retrying(method, policy));
    try {
      for (let next = first; !next.done; next = await messages.next()) yield next.value;
    } catch (err) {
      if (!(err instanceof ConnectError)) throw err;
      throw new CallError(errorDetails(err), 1, { cause: err });
    } finally {
      stop.abort(); // cancels the call if the reader stopped before its end
    }
  }

  private retrying(method: Method, policy: Partial<RetryPolicy>): RetryOptions {
    return {
      policy,
      ...(this.sleep ? { sleep: this.sleep } : {}),
      onRetry: (event) => {
        this.retries += 1;
        this.onRetry?.({ method, ...event });
      },
    };
  }

  totalCalls(): number {
    return Object.values(this.calls).reduce((a, b) => a + b, 0);
  }

  close(): void {
    this.session.abort();
  }
}
