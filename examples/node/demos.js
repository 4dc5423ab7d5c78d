// --demo-errors: bad requests on purpose, each error's details decoded and checked.
// --demo-backoff: a call refused with RESOURCE_EXHAUSTED, retried until it succeeds.
import grpc from "@grpc/grpc-js";
import { errorDetails, formatError, HEKA_DOMAIN } from "./errors.js";
import { sleep } from "./backoff.js";

const NO_RETRY = { maxRetries: 0 };

/** Flip one character in the middle of a token: the server must refuse it (BAD_TOKEN). */
export function alterToken(token) {
  const i = Math.floor(token.length / 2);
  return token.slice(0, i) + (token[i] === "A" ? "B" : "A") + token.slice(i + 1);
}

/** What is wrong with an error's details compared with `expect` ([] when they match). */
export function mismatches(info, expect) {
  const wrong = [];
  if (info.code !== expect.code) wrong.push(`code ${info.codeName}, expected ${grpc.status[expect.code]}`);
  if (!info.status) wrong.push("no google.rpc.Status in grpc-status-details-bin");
  else if (info.status.code !== info.code) wrong.push(`Status.code ${info.status.code} is not the call's code`);
  if (info.errorInfo?.domain !== HEKA_DOMAIN) wrong.push(`ErrorInfo.domain ${info.errorInfo?.domain}`);
  if (info.errorInfo?.reason !== expect.reason) wrong.push(`ErrorInfo.reason ${info.errorInfo?.reason}, expected ${expect.reason}`);
  if (expect.field !== undefined) {
    const fields = (info.badRequest?.field_violations ?? []).map((v) => v.field);
    if (!fields.includes(expect.field)) wrong.push(`BadRequest fields [${fields}], expected "${expect.field}"`);
  }
  if (expect.precondition !== undefined) {
    const types = (info.preconditionFailure?.violations ?? []).map((v) => v.type);
    if (!types.includes(expect.precondition)) wrong.push(`PreconditionFailure types [${types}], expected ${expect.precondition}`);
  }
  return wrong;
}

/** Send the bad requests; returns true when every error decoded as expected. */
export async function demoErrors(client, log = console.log) {
  // A real game to misuse: Aton, seat 0 to act, no viewer (a public response).
  const { state } = await client.call("CreateGame", { game: "aton" });
  const { INVALID_ARGUMENT, FAILED_PRECONDITION } = grpc.status;
  const cases = [
    {
      what: "ListLegalActions without viewer",
      method: "ListLegalActions",
      request: { state },
      expect: { code: INVALID_ARGUMENT, reason: "VIEWER_REQUIRED", field: "viewer" },
    },
    {
      what: "CreateGame of an unknown game",
      method: "CreateGame",
      request: { game: "senet" },
      expect: { code: INVALID_ARGUMENT, reason: "UNKNOWN_GAME", field: "game" },
    },
    {
      what: "ApplyAction for seat 1 when seat 0 is to act",
      method: "ApplyAction",
      request: { state, action_id: 0, player: 1 },
      expect: { code: FAILED_PRECONDITION, reason: "NOT_TO_ACT", precondition: "NOT_TO_ACT" },
    },
    {
      what: "GetView of an altered token",
      method: "GetView",
      request: { state: alterToken(state) },
      expect: { code: INVALID_ARGUMENT, reason: "BAD_TOKEN", field: "state" },
    },
    {
      what: "Osirium teams with 3 players",
      method: "CreateGame",
      request: { game: "osirium", num_players: 3, options: { osirium: { teams: true } } },
      expect: { code: INVALID_ARGUMENT, reason: "BAD_OPTIONS", field: "options" },
    },
  ];
  let failures = 0;
  for (const c of cases) {
    log(`\n== ${c.what}: ${c.method} ${JSON.stringify(c.request, (k, v) => (k === "state" ? `<token ${v.length} chars>` : v))}`);
    try {
      await client.call(c.method, c.request, { policy: NO_RETRY });
      log("   unexpected success");
      failures += 1;
      continue;
    } catch (err) {
      log(formatError(err.heka));
      const wrong = mismatches(err.heka, c.expect);
      log(wrong.length ? `   NOT AS EXPECTED: ${wrong.join("; ")}` : "   as expected");
      failures += wrong.length ? 1 : 0;
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
export async function demoBackoff(client, { holdMs = 1500, log = console.log } = {}) {
  const { state } = await client.call("CreateGame", { game: "aton" });
  const bot = { kind: "BOT_KIND_MCTS", budget: { milliseconds: holdMs }, seed: "1" };
  log(`AdvanceBots: seat 0's bot searches for ${holdMs} ms, holding the server's one call slot`);
  let pending = true;
  const hold = client
    .once("AdvanceBots", { state, bots: [{ seat: 0, bot }], max_bot_moves: 1 })
    .then(
      (r) => ({ ok: true, turns: r.bot_turns.length }),
      (err) => ({ ok: false, err }),
    )
    .finally(() => {
      pending = false;
    });
  const refusals = [];
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
      const { games } = await client.call("ListGames", {});
      answered = true;
      if (client.retries > retriesBefore) log(`ListGames answered after ${client.retries - retriesBefore} retries: ${games.map((g) => g.name).join(", ")}`);
    }
  } catch (err) {
    answered = false;
    log(`ListGames failed for good after ${err.attempts} attempts:\n${formatError(err.heka)}`);
  } finally {
    client.onRetry = previous;
  }
  const held = await hold;
  if (!held.ok) log(`the AdvanceBots call failed:\n${formatError(errorDetails(held.err))}`);
  const exhausted = refusals.filter((i) => i.code === grpc.status.RESOURCE_EXHAUSTED && i.retryInfo);
  if (!exhausted.length) log("no RESOURCE_EXHAUSTED with RetryInfo seen: is the server run with --max-concurrent-rpcs 1?");
  return answered && exhausted.length > 0 && held.ok;
}
