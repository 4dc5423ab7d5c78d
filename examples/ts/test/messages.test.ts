// The generated messages as they go on the wire: presence of `optional` seats, exact 64-bit
// seeds, oneofs; what the types do not catch (a negative bigint) the encoder refuses.
import assert from "node:assert/strict";
import { test } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  ApplyActionRequestSchema,
  BotKind,
  BotSettingsSchema,
  CreateGameRequestSchema,
  Difficulty,
  GameService,
} from "../src/gen/heka/v1/game_service_pb.js";
import { rpcName } from "../src/client.js";
import { botSettings } from "../src/game.js";
import { SplitMix64, UINT64_MAX, parseSeed } from "../src/rng.js";

test("viewer: 0 is sent and read back as seat 0; absent stays absent (the public)", () => {
  const seat0 = fromBinary(CreateGameRequestSchema, toBinary(CreateGameRequestSchema, create(CreateGameRequestSchema, { viewer: 0 })));
  assert.equal(seat0.viewer, 0);
  const pub = fromBinary(CreateGameRequestSchema, toBinary(CreateGameRequestSchema, create(CreateGameRequestSchema, {})));
  assert.equal(pub.viewer, undefined);
  const move = create(ApplyActionRequestSchema, { player: 0, action: { case: "actionId", value: 0 } });
  const back = fromBinary(ApplyActionRequestSchema, toBinary(ApplyActionRequestSchema, move));
  assert.equal(back.player, 0);
  assert.deepEqual(back.action, { case: "actionId", value: 0 });
});

test("a uint64 seed travels exactly; out of range is refused when encoding", () => {
  const top = create(CreateGameRequestSchema, { seed: UINT64_MAX });
  assert.equal(fromBinary(CreateGameRequestSchema, toBinary(CreateGameRequestSchema, top)).seed, UINT64_MAX);
  for (const seed of [-1n, UINT64_MAX + 1n]) {
    assert.throws(() => toBinary(BotSettingsSchema, create(BotSettingsSchema, { seed })), /invalid uint64/);
  }
});

test("options at the wrong level are dropped at run time: only the compiler catches them", () => {
  // typecheck/mistakes.ts: `options: {teams: true}` does not compile. Forced past the types,
  // it is an empty GameOptions, the game's defaults: no teams.
  const forced = create(CreateGameRequestSchema, { options: { teams: true } as object });
  assert.equal(forced.options?.game.case, undefined);
  const right = create(CreateGameRequestSchema, { options: { game: { case: "osirium", value: { teams: true } } } });
  assert.equal(right.options?.game.case, "osirium");
  assert.equal(right.options?.game.value?.teams, true);
});

test("bot specs", () => {
  assert.deepEqual(botSettings("greedy"), { kind: BotKind.GREEDY });
  assert.deepEqual(botSettings("MCTS:hard", 7n), { kind: BotKind.MCTS, difficulty: Difficulty.HARD, seed: 7n });
  assert.throws(() => botSettings("minimax"), /unknown bot kind/);
  assert.throws(() => botSettings("greedy:easy"), /only mcts takes a difficulty/);
});

test("seeds: parsed as uint64, SplitMix64's reference values", () => {
  assert.equal(parseSeed("18446744073709551615"), UINT64_MAX);
  assert.equal(parseSeed("0x2a"), 42n);
  for (const bad of ["-1", "abc", "", "18446744073709551616", "1.5"]) assert.throws(() => parseSeed(bad), RangeError);
  const rng = new SplitMix64(0n);
  assert.equal(rng.next64(), 0xe220a8397b1dcdafn);
  assert.equal(rng.next64(), 0x6e789e6aa1b965f4n);
});

test("method names", () => {
  assert.equal(rpcName("applyAction"), "ApplyAction");
  assert.equal(GameService.typeName, "heka.v1.GameService");
});
