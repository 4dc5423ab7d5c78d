// --demo-errors: bad requests on purpose, each error's details decoded and checked.
// --demo-backoff: a call refused with RESOURCE_EXHAUSTED, retried until it succeeds.
import { Code } from "@connectrpc/connect";
import { BotKind } from "./gen/heka/v1/game_service_pb.js";
import type { HekaClient } from "./client.js";
import { CallError, sleep } from "./backoff.js";
import { type ErrorDetails, HEKA_DOMAIN, codeName, errorDetails, formatError } from "./errors.js";

const NO_RETRY = { maxRetries: 0 };

/** Flip one character in the middle of a token: the server must refuse it (BAD_TOKEN). */
export function alterToken(token: string): string {
  const i = Math.floor(token.length / 2);
  return token.slice(0, i) + (token[i] === "A" ? "B" : "A") + token.slice(i + 1);
}

export interface Expected {
  code: Code;
  /** ErrorInfo.reason (its domain must be heka's). */
  reason: string;
  /** A BadRequest field violation on this field. */
  field?: string;
  /** A PreconditionFailure violation of this type. */
  precondition?: string;
}

/** What is wrong with an error's details compared with `expect` ([] when they match). */
export function mismatches(info: ErrorDetails, expect: Expected): string[] {
  const wrong: string[] = [];
  if (info.code !== expect.code) wrong.push(`code ${info.codeName}, expected ${codeName(expect.code)}`);
  if (!info.hasStatus) wrong.push("no google.rpc.Status in grpc-status-details-bin");
  else if (info.trailerCode !== null && info.trailerCode !== info.code) {
    wrong.push(`grpc-status ${info.trailerCode} is not google.rpc.Status.code ${info.code}`);
  }
  if (info.errorInfo?.domain !== HEKA_DOMAIN) wrong.push(`ErrorInfo.domain ${info.errorInfo?.domain}`);
  if (info.errorInfo?.reason !== expect.reason) wrong.push(`ErrorInfo.reason ${info.errorInfo?.reason}, expected ${expect.reason}`);
  if (expect.field !== undefined) {
    const fields = (info.badRequest?.fieldViolations ?? []).map((v) => v.field);
    if (!fields.includes(expect.field)) wrong.push(`BadRequest fields [${fields}], expected "${expect.field}"`);
  }
  if (expect.precondition !== undefined) {
    const types = (info.preconditionFailure?.violations ?? []).map((v) => v.type);
    if (!types.includes(expect.precondition)) wrong.push(`PreconditionFailure types [${types}], expected ${expect.precondition}`);
  }
  return wrong;
}

interface Case {
  what: string;
  send: () => Promise<unknown>;
  expect: Expected;
}

/** Send the bad requests; returns true when every error decoded as expected. */
export async function demoErrors(client: HekaClient, log: (line: string) => void = console.log): Promise<boolean> {
  // A real game to misuse: Aton, seat 0 to act, with seat 0's legal actions.
  const game = await client.call("createGame", { game: "aton", viewer: 0, includeLegalActions: true, compactActions: true });
  const { state } = game;
  const actionId = game.legalActions[0]?.id ?? 0;
  const action = { case: "actionId", value: actionId } as const;
  const once = { policy: NO_RETRY };
  const cases: Case[] = [
    {
      what: "ListLegalActions without viewer",
      send: () => client.call("listLegalActions", { state }, once),
      expect: { code: Code.InvalidArgument, reason: "VIEWER_REQUIRED", field: "viewer" },
    },
    {
      what: "ApplyAction without player",
      send: () => client.call("applyAction", { state, action, viewer: 0 }, once),
      expect: { code: Code.InvalidArgument, reason: "PLAYER_REQUIRED", field: "player" },
    },
    {
      what: "ApplyAction for seat 1 when seat 0 is to act",
      send: () => client.call("applyAction", { state, action, player: 1 }, once),
      expect: { code: Code.FailedPrecondition, reason: "NOT_TO_ACT", precondition: "NOT_TO_ACT" },
    },
    {
      what: "CreateGame of an unknown game",
      send: () => client.call("createGame", { game: "senet" }, once),
      expect: { code: Code.InvalidArgument, reason: "UNKNOWN_GAME", field: "game" },
    },
    {
      what: "GetView of an altered token",
      send: () => client.call("getView", { state: alterToken(state) }, once),
      expect: { code: Code.InvalidArgument, reason: "BAD_TOKEN", field: "state" },
    },
    {
      what: "Osirium teams with 3 players",
      send: () =>
        client.call("createGame", { game: "osirium", numPlayers: 3, options: { game: { case: "osirium", value: { teams: true } } } }, once),
      expect: { code: Code.InvalidArgument, reason: "BAD_OPTIONS", field: "options" },
    },
  ];
  let failures = 0;
  for (const c of cases) {
    log(`\n== ${c.what}`);
    try {
      await c.send();
      log("   unexpected success");
      failures += 1;
    } catch (err) {
      if (!(err instanceof CallError)) throw err;
      log(formatError(err.details));
      const wrong = mismatches(err.details, c.expect);
      log(wrong.length ? `   NOT AS EXPECTED: ${wrong.join("; ")}` : "   as expected");
      if (wrong.length) failures += 1;
    }
  }
  log(`\n${cases.length - failures}/${cases.length} errors decoded as expected`);
  return failures === 0;
}

/**
 * Needs a server holding one call at a time (`heka serve --max-concurrent-rpcs 1`): a bot
 * call searching for `holdMs` occupies it, and a ListGames sent meanwhile is refused with
 * RESOURCE_EXHAUSTED (OVERLOADED, RetryInfo) and retried with backoff until the bot call is
 * done. Returns true when the call was refused at least once and then succeeded.
 */
export async function demoBackoff(
  client: HekaClient,
  { holdMs = 1500, log = console.log }: { holdMs?: number; log?: (line: string) => void } = {},
): Promise<boolean> {
  const { state } = await client.call("createGame", { game: "aton" });
  const bot = { kind: BotKind.MCTS, budget: { milliseconds: holdMs }, seed: 1n };
  log(`AdvanceBots: seat 0's bot searches for ${holdMs} ms, holding the server's one call slot`);
  let pending = true;
  const hold = client
    .once("advanceBots", { state, bots: [{ seat: 0, bot }], maxBotMoves: 1 })
    .then(
      (r) => ({ ok: true as const, turns: r.botTurns.length }),
      (err: unknown) => ({ ok: false as const, err }),
    )
    .finally(() => {
      pending = false;
    });
  const refusals: ErrorDetails[] = [];
  const previous = client.onRetry;
  client.onRetry = (event) => {
    refusals.push(event.info);
    const head = `ListGames refused, retry ${event.retry} in ${Math.round(event.waitMs)} ms`;
    log(refusals.length === 1 ? `${head}:\n${formatError(event.info)}` : `${head} (${event.info.errorInfo?.reason})`);
  };
  let answered = false;
  try {
    // Until a ListGames is refused (the bot call must have reached the server first), or
    // the bot call is over.
    for (let tries = 0; pending && refusals.length === 0 && tries < 20; tries++) {
      await sleep(100);
      const retriesBefore = client.retries;
      const { games } = await client.call("listGames", {});
      answered = true;
      if (client.retries > retriesBefore) {
        log(`ListGames answered after ${client.retries - retriesBefore} retries: ${games.map((g) => g.name).join(", ")}`);
      }
    }
  } catch (err) {
    if (!(err instanceof CallError)) throw err;
    answered = false;
    log(`ListGames failed for good after ${err.attempts} attempts:\n${formatError(err.details)}`);
  } finally {
    client.onRetry = previous;
  }
  const held = await hold;
  if (!held.ok) log(`the AdvanceBots call failed:\n${formatError(errorDetails(held.err))}`);
  const exhausted = refusals.filter((i) => i.code === Code.ResourceExhausted && i.retryInfo);
  if (!exhausted.length) log("no RESOURCE_EXHAUSTED with RetryInfo seen: is the server run with --max-concurrent-rpcs 1?");
  return answered && exhausted.length > 0 && held.ok;
}
