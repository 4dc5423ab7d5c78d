// The client's pieces that need no server: the proto as proto-loader sees it, seeds, bots.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadHeka } from "../heka.js";
import { SplitMix64, UINT64_MAX, parseSeed } from "../rng.js";
import { botSettings, finished } from "../game.js";
import { alterToken, mismatches } from "../demos.js";

const methods = loadHeka().GameService.service;

test("the proto loads, with every RPC", () => {
  for (const name of ["ListGames", "CreateGame", "GetView", "ListLegalActions", "ApplyAction", "BotMove", "AdvanceBots", "DecodeState"]) {
    assert.equal(methods[name].path, `/heka.v1.GameService/${name}`);
  }
});

test("viewer: 0 is sent (proto3 optional), an absent viewer is not", () => {
  const { requestSerialize, requestDeserialize } = methods.ListLegalActions;
  assert.deepEqual([...requestSerialize({ viewer: 0 })], [0x18, 0x00]); // field 3, varint 0
  assert.equal(requestSerialize({}).length, 0);
  assert.equal(requestDeserialize(requestSerialize({ viewer: 0 })).viewer, 0);
  assert.equal(requestDeserialize(requestSerialize({})).viewer, undefined);
});

test("64-bit seeds travel as decimal strings, exactly", () => {
  const { requestSerialize, requestDeserialize } = methods.CreateGame;
  const max = UINT64_MAX.toString();
  assert.equal(requestDeserialize(requestSerialize({ game: "aton", seed: max })).seed, max);
  assert.equal(requestDeserialize(requestSerialize({ game: "aton" })).seed, undefined);
  const bots = [{ seat: 1, bot: botSettings("mcts:easy", 2n ** 63n + 1n) }];
  const back = requestDeserialize(requestSerialize({ game: "aton", bots }));
  assert.equal(back.bots[0].bot.seed, "9223372036854775809");
  assert.equal(back.bots[0].bot.kind, "BOT_KIND_MCTS");
  assert.equal(back.bots[0].bot.difficulty, "DIFFICULTY_EASY");
});

test("oneofs: the member set is named", () => {
  const { requestSerialize, requestDeserialize } = methods.ApplyAction;
  assert.equal(requestDeserialize(requestSerialize({ state: "t", action_id: 0 })).action, "action_id");
  assert.equal(requestDeserialize(requestSerialize({ state: "t", action_text: "keep" })).action, "action_text");
  const create = methods.CreateGame;
  const options = create.requestDeserialize(create.requestSerialize({ options: { osirium: { teams: true } } })).options;
  assert.equal(options.game, "osirium");
  assert.equal(options.osirium.teams, true);
});

test("SplitMix64 matches the reference outputs", () => {
  const g = new SplitMix64(1234567n);
  assert.deepEqual([g.next64(), g.next64(), g.next64()], [6457827717110365317n, 3203168211198807973n, 9817491932198370423n]);
  assert.equal(new SplitMix64(0n).next64(), 16294208416658607535n);
  const r = new SplitMix64(7n);
  const picks = Array.from({ length: 1000 }, () => r.below(3));
  assert.deepEqual([...new Set(picks)].sort(), [0, 1, 2]);
});

test("seeds parse in 0..2^64-1 only", () => {
  assert.equal(parseSeed("18446744073709551615"), UINT64_MAX);
  assert.equal(parseSeed("0x2a"), 42n);
  assert.throws(() => parseSeed("18446744073709551616"), RangeError);
  assert.throws(() => parseSeed("-1"), RangeError);
  assert.throws(() => parseSeed("seven"));
});

test("bot specs", () => {
  assert.deepEqual(botSettings("greedy"), { kind: "BOT_KIND_GREEDY" });
  assert.deepEqual(botSettings("MCTS:hard", 5n), { kind: "BOT_KIND_MCTS", difficulty: "DIFFICULTY_HARD", seed: "5" });
  assert.throws(() => botSettings("alphazero"));
  assert.throws(() => botSettings("greedy:easy"));
});

test("finished: over, with a reason and a score per seat", () => {
  const outcome = { reason: "OUTCOME_REASON_POINTS", scores: [5, 42], winners: [1] };
  assert.equal(finished({ is_over: true, num_players: 2, outcome }), true);
  assert.equal(finished({ is_over: false, num_players: 2, outcome: null }), false);
  assert.equal(finished({ is_over: true, num_players: 2, outcome: null }), false);
  assert.equal(finished({ is_over: true, num_players: 2, outcome: { ...outcome, reason: "OUTCOME_REASON_UNSPECIFIED" } }), false);
});

test("the demo's expectations", () => {
  const token = "AAAABBBB";
  const altered = alterToken(token);
  assert.equal(altered.length, token.length);
  assert.equal([...token].filter((c, i) => c !== altered[i]).length, 1);
  const info = {
    code: 3,
    codeName: "INVALID_ARGUMENT",
    status: { code: 3 },
    errorInfo: { domain: "heka.v1", reason: "VIEWER_REQUIRED" },
    badRequest: { field_violations: [{ field: "viewer" }] },
    preconditionFailure: null,
  };
  assert.deepEqual(mismatches(info, { code: 3, reason: "VIEWER_REQUIRED", field: "viewer" }), []);
  assert.equal(mismatches(info, { code: 3, reason: "VIEWER_REQUIRED", field: "state" }).length, 1);
  assert.equal(mismatches(info, { code: 9, reason: "NOT_TO_ACT", precondition: "NOT_TO_ACT" }).length, 3);
});

test("counts arrive as numbers, seeds as strings (the wire facts of heka.js's comment)", () => {
  const { responseSerialize, responseDeserialize } = methods.BotMove;
  const sent = {
    status: { move_number: 41, current_player: 1 },
    diagnostics: { bot: "mcts:easy", seed: "18446744073709551615", iterations: 300, workers: 1 },
  };
  const back = responseDeserialize(responseSerialize(sent));
  assert.equal(typeof back.status.move_number, "number");
  assert.equal(back.status.move_number, 41);
  assert.equal(typeof back.diagnostics.iterations, "number");
  assert.equal(back.diagnostics.iterations, 300);
  assert.equal(typeof back.diagnostics.seed, "string");
  assert.equal(back.diagnostics.seed, "18446744073709551615");
});
