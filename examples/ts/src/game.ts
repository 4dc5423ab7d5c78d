// One game against bots, one call per move of seat 0 (docs/api.md, "One call per move"):
// CreateGame {viewer: 0, includeView, includeLegalActions, bots} and then one ApplyAction
// per move of seat 0 (player: 0, the same fields), the bots playing inside each call, until
// status.isOver.
import { randomBytes } from "node:crypto";
import type { DescEnum, MessageInitShape } from "@bufbuild/protobuf";
import {
  type Action,
  type AdvanceBotsResponse,
  type ApplyActionResponse,
  BotKind,
  type BotSettingsSchema,
  type BotTurn,
  type CreateGameResponse,
  DecisionSchema,
  Difficulty,
  type GameStatus,
  OutcomeReason,
  OutcomeReasonSchema,
  StopReasonSchema,
} from "./gen/heka/v1/game_service_pb.js";
import type { HekaClient } from "./client.js";
import { type GameRecord, botActionIds, recordResponse } from "./review.js";
import { SplitMix64 } from "./rng.js";

const BOT_KINDS: Record<string, BotKind> = { random: BotKind.RANDOM, greedy: BotKind.GREEDY, mcts: BotKind.MCTS };
const DIFFICULTIES: Record<string, Difficulty> = {
  easy: Difficulty.EASY,
  medium: Difficulty.MEDIUM,
  hard: Difficulty.HARD,
  expert: Difficulty.EXPERT,
};

export type BotSettingsInit = MessageInitShape<typeof BotSettingsSchema>;

/** BotSettings from "greedy", "random", "mcts", "mcts:easy", with an optional uint64 seed. */
export function botSettings(spec: string, seed: bigint | null = null): BotSettingsInit {
  const [kindName = "", difficultyName = ""] = spec.toLowerCase().split(":");
  const kind = BOT_KINDS[kindName];
  if (kind === undefined) throw new Error(`unknown bot kind "${kindName}" (random, greedy, mcts)`);
  const settings: BotSettingsInit = { kind };
  if (difficultyName) {
    const difficulty = DIFFICULTIES[difficultyName];
    if (kind !== BotKind.MCTS || difficulty === undefined) {
      throw new Error(`"${spec}": only mcts takes a difficulty (easy, medium, hard, expert)`);
    }
    settings.difficulty = difficulty;
  }
  if (seed !== null) settings.seed = seed;
  return settings;
}

/** The proto name of an enum value: OutcomeReason.POINTS is "OUTCOME_REASON_POINTS". */
function enumName(schema: DescEnum, value: number): string {
  return schema.value[value]?.name ?? String(value);
}

/** Whether a status is a finished game with an outcome. */
export function finished(status: GameStatus | undefined): boolean {
  const outcome = status?.outcome;
  return Boolean(
    status?.isOver && outcome && outcome.reason !== OutcomeReason.UNSPECIFIED && outcome.scores.length === status.numPlayers,
  );
}

function seats(list: readonly number[]): string {
  return list.length ? list.map((s) => `seat ${s}`).join(", ") : "nobody";
}

/** The outcome of a finished game as readable lines. */
export function describeOutcome(status: GameStatus): string[] {
  const o = status.outcome;
  if (!o) return ["no outcome"];
  const teams = status.teams;
  const teamPlay = new Set(teams).size < teams.length;
  const winners = o.isDraw ? "none (a draw)" : seats(o.winners);
  const firstWinner = o.winners[0];
  const team = teamPlay && firstWinner !== undefined ? ` (team ${teams[firstWinner]})` : "";
  const mine = o.returns[0] ?? 0;
  return [
    `outcome: ${enumName(OutcomeReasonSchema, o.reason)}`,
    `  winners: ${winners}${team}`,
    `  scores:  ${o.scores.join(", ")}${teamPlay ? `  (teams by seat: ${teams.join(", ")})` : ""}`,
    `  returns: ${o.returns.join(", ")}`,
    `  ${o.text}`,
    `seat 0 (random moves) ${mine > 0 ? "won" : mine < 0 ? "lost" : "shared the result"}`,
  ];
}

function botLine(turns: readonly BotTurn[]): string {
  if (!turns.length) return "no bot turn";
  const shown = turns.slice(0, 4).map((t) => `s${t.player} ${JSON.stringify(t.action?.text ?? "")}`);
  return `${turns.length} bot turn${turns.length === 1 ? "" : "s"}: ${shown.join(", ")}${turns.length > 4 ? ", ..." : ""}`;
}

function statusLine(status: GameStatus): string {
  if (status.isOver) return "game over";
  return `seat ${status.currentPlayer} to act, ${enumName(DecisionSchema, status.decision)}, scores ${status.scores.join("-")}`;
}

export interface GameOptions {
  game: string;
  /** 0: the game's minimum (4 with teams). */
  players: number;
  teams: boolean;
  /** Bot spec of every other seat. */
  bot: string;
  /** null: the server chooses the game's seed. */
  seed: bigint | null;
  /** A bound on the loop. */
  maxCalls: number;
  verbose: boolean;
}

export interface GameResult {
  ok: boolean;
  status: GameStatus | undefined;
  moves: number;
  botTurns: number;
  /** The game as seat 0 saw it, for a review (review.ts). */
  record: GameRecord;
}

type Turn = CreateGameResponse | ApplyActionResponse | AdvanceBotsResponse;

function statusOf(resp: Turn): GameStatus {
  if (!resp.status) throw new Error("the response has no status");
  return resp.status;
}

/** Play one game: seat 0 plays uniformly random legal moves, the bots every other seat. */
export async function playGame(client: HekaClient, options: GameOptions, log: (line: string) => void = console.log): Promise<GameResult> {
  const game = options.game.toLowerCase();
  let players = options.players;
  if (!players) {
    const { games } = await client.call("listGames", {});
    const info = games.find((g) => g.name === game);
    if (!info) throw new Error(`the server does not run "${game}" (it runs ${games.map((g) => g.name).join(", ")})`);
    players = options.teams ? Math.max(...info.teamPlayerCounts) : info.minPlayers;
  }
  // With a seed, everything is reproducible on one server key: the game's chance, each bot's
  // seed, seat 0's choices. Without, the server picks the game's seed and keeps it (a
  // response that may reach a player never carries it: it would deal the same hands again),
  // and seat 0's choices are seeded locally.
  const seeder = options.seed === null ? null : new SplitMix64(options.seed);
  const bots: { seat: number; bot: BotSettingsInit }[] = [];
  for (let seat = 1; seat < players; seat++) {
    bots.push({ seat, bot: botSettings(options.bot, seeder ? seeder.next64() : null) });
  }
  // The same fields on every call: seat 0's view and legal actions, the bots at the others.
  const mine = { viewer: 0, includeView: true, includeLegalActions: true, compactActions: true, bots };

  let resp: Turn = await client.call("createGame", {
    game,
    numPlayers: players,
    ...(options.seed === null ? {} : { seed: options.seed }),
    ...(options.teams ? { options: { game: { case: "osirium", value: { teams: true } } } } : {}),
    ...mine,
  });
  const rng = new SplitMix64(seeder ? seeder.next64() : randomBytes(8).readBigUInt64LE());
  log(
    `${game}, ${players} players${options.teams ? " in teams" : ""}, seed ${options.seed ?? "chosen by the server"}; ` +
      `seat 0 plays at random, bots (${options.bot}) at ${seats(bots.map((b) => b.seat))}`,
  );
  // The bots' turns in CreateGame's response come before its token: the record starts after them.
  const record: GameRecord = { start: resp.state, actions: [], checkpoints: [] };
  let botTurns = resp.botTurns.length;
  let moves = 0;
  if (resp.botTurns.length) log(`start: ${botLine(resp.botTurns)}`);
  let status = statusOf(resp);
  while (!status.isOver) {
    if (client.totalCalls() >= options.maxCalls) {
      log(`giving up after ${options.maxCalls} calls (--max-calls)`);
      return { ok: false, status, moves, botTurns, record };
    }
    if (status.currentPlayer === 0) {
      if (!resp.legalActions.length) throw new Error("seat 0 is to act but the response has no legalActions");
      const action: Action = rng.choice(resp.legalActions);
      resp = await client.call("applyAction", {
        state: resp.state,
        action: { case: "actionId", value: action.id },
        player: 0,
        ...mine,
      });
      recordResponse(record, [action.id, ...botActionIds(resp.botTurns)], resp.state);
      moves += 1;
      botTurns += resp.botTurns.length;
      status = statusOf(resp);
      if (options.verbose || status.isOver || moves % 10 === 1) {
        log(`move ${moves}: seat 0 ${JSON.stringify(action.text)} | ${botLine(resp.botTurns)} | ${statusLine(status)}`);
      }
    } else {
      // The bots stopped before seat 0's turn (a move or time cap, stopReason says which):
      // let them go on. With the server's defaults this does not happen.
      log(`the bots stopped early (${enumName(StopReasonSchema, resp.stopReason)}); AdvanceBots`);
      resp = await client.call("advanceBots", { state: resp.state, ...mine });
      recordResponse(record, botActionIds(resp.botTurns), resp.state);
      botTurns += resp.botTurns.length;
      status = statusOf(resp);
    }
  }
  const ok = finished(status);
  log(`game over after ${moves} moves of seat 0 and ${botTurns} bot turns (move_number ${status.moveNumber})`);
  if (ok) for (const line of describeOutcome(status)) log(line);
  else log(`the game is over but has no valid outcome: ${status.outcome?.text ?? "none"}`);
  if (options.verbose && resp.view) log(resp.view.text);
  return { ok, status, moves, botTurns, record };
}
