// Play a game of Aton or Osirium against heka's bots, one call per move, then review seat
// 0's moves (--review); or show heka's rich error details (--demo-errors) and the retry of a
// refused call (--demo-backoff).
//
//   node dist/src/play.js --target 127.0.0.1:50051 --game osirium --players 4 --teams --seed 7
//
// Exit status: 0 the game ended with an outcome (and its review, if asked, is complete; or
// the demo went as expected); 1 it did not; 2 bad command line; 3 a call failed.
import { parseArgs } from "node:util";
import { CallError } from "./backoff.js";
import { HekaClient } from "./client.js";
import { demoBackoff, demoErrors } from "./demos.js";
import { formatError } from "./errors.js";
import { type GameOptions, playGame } from "./game.js";
import { reviewGame } from "./review.js";
import { parseSeed } from "./rng.js";

const USAGE = `usage: node dist/src/play.js [options]
  --target HOST:PORT     heka server (default 127.0.0.1:50051)
  --game NAME            aton | osirium (default aton)
  --players N            number of players (default: the game's minimum; 4 with --teams)
  --teams                Osirium team play (4 players)
  --bot SPEC             bot of every other seat: random | greedy | mcts[:easy|medium|hard|expert] (default greedy)
  --seed N               uint64 seed of the game, the bots and seat 0's choices (default: the server's)
  --max-retries N        retries of a call refused with RESOURCE_EXHAUSTED or UNAVAILABLE (default 5)
  --deadline-ms N        deadline of each call (default 30000; a review cut by it goes on in another call)
  --max-calls N          give up after this many calls (default 2000)
  --verbose              log every move and the final board
  --review               when the game is over, review seat 0's moves (ReviewGame, a stream)
  --review-iterations N  search iterations per reviewed move (default 200; 0: the reviewer's preset)
  --demo-errors          send bad requests and print their decoded error details
  --demo-backoff         show a RESOURCE_EXHAUSTED call retried (server: --max-concurrent-rpcs 1)
  --help`;

interface Options extends GameOptions {
  help: boolean;
  target: string;
  maxRetries: number;
  deadlineMs: number;
  demoErrors: boolean;
  demoBackoff: boolean;
  review: boolean;
  reviewIterations: number;
}

function parse(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      target: { type: "string", default: "127.0.0.1:50051" },
      game: { type: "string", default: "aton" },
      players: { type: "string", default: "0" },
      teams: { type: "boolean", default: false },
      bot: { type: "string", default: "greedy" },
      seed: { type: "string" },
      "max-retries": { type: "string", default: "5" },
      "deadline-ms": { type: "string", default: "30000" },
      "max-calls": { type: "string", default: "2000" },
      verbose: { type: "boolean", default: false },
      review: { type: "boolean", default: false },
      "review-iterations": { type: "string", default: "200" },
      "demo-errors": { type: "boolean", default: false },
      "demo-backoff": { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const int = (name: "players" | "max-retries" | "deadline-ms" | "max-calls" | "review-iterations"): number => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer`);
    return n;
  };
  return {
    help: values.help,
    target: values.target,
    game: values.game,
    players: int("players"),
    teams: values.teams,
    bot: values.bot,
    seed: values.seed === undefined ? null : parseSeed(values.seed),
    maxRetries: int("max-retries"),
    deadlineMs: int("deadline-ms"),
    maxCalls: int("max-calls"),
    verbose: values.verbose,
    demoErrors: values["demo-errors"],
    demoBackoff: values["demo-backoff"],
    review: values.review,
    reviewIterations: int("review-iterations"),
  };
}

async function main(): Promise<number> {
  let options: Options;
  try {
    options = parse(process.argv.slice(2));
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  const client = new HekaClient(options.target, {
    deadlineMs: options.deadlineMs,
    policy: { maxRetries: options.maxRetries },
    onRetry: ({ method, retry, waitMs, info }) =>
      console.log(`${method}: ${info.codeName} ${info.errorInfo?.reason ?? ""}; retry ${retry} in ${Math.round(waitMs)} ms`),
  });
  try {
    let ok: boolean;
    if (options.demoErrors) ok = await demoErrors(client);
    else if (options.demoBackoff) ok = await demoBackoff(client);
    else {
      const game = await playGame(client, options);
      ok = game.ok;
      if (ok && options.review) {
        // With --seed, the review is reproducible too (on servers with the same keys).
        console.log();
        const review = await reviewGame(client, game.record, { seat: 0, iterations: options.reviewIterations, seed: options.seed });
        ok = review.complete;
      }
    }
    const byMethod = Object.entries(client.calls).map(([m, n]) => `${m} ${n}`).join(", ");
    console.log(`calls: ${client.totalCalls()} (${byMethod}), retries ${client.retries}`);
    return ok ? 0 : 1;
  } catch (err) {
    if (!(err instanceof CallError)) throw err; // a bug here, not an RPC error
    console.error(`call failed after ${err.attempts} attempt(s):\n${formatError(err.details)}`);
    return 3;
  } finally {
    client.close();
  }
}

process.exitCode = await main();
