// One game against bots, one call per move of seat 0 (docs/api.md, "One call per move"):
// CreateGame {viewer: 0, include_view, include_legal_actions, bots} and then one ApplyAction
// per move of seat 0, the bots playing inside each call, until status.is_over.
import { randomBytes } from "node:crypto";
import { SplitMix64 } from "./rng.js";

const BOT_KINDS = { random: "BOT_KIND_RANDOM", greedy: "BOT_KIND_GREEDY", mcts: "BOT_KIND_MCTS" };
const DIFFICULTIES = { easy: "DIFFICULTY_EASY", medium: "DIFFICULTY_MEDIUM", hard: "DIFFICULTY_HARD" };

/** BotSettings from "greedy", "random", "mcts", "mcts:easy" (an optional uint64 seed as a BigInt). */
export function botSettings(spec, seed = null) {
  const [kind, difficulty = ""] = spec.toLowerCase().split(":");
  if (!(kind in BOT_KINDS)) throw new Error(`unknown bot kind "${kind}" (random, greedy, mcts)`);
  const settings = { kind: BOT_KINDS[kind] };
  if (difficulty) {
    if (kind !== "mcts" || !(difficulty in DIFFICULTIES)) {
      throw new Error(`"${spec}": only mcts takes a difficulty (easy, medium, hard)`);
    }
    settings.difficulty = DIFFICULTIES[difficulty];
  }
  if (seed !== null) settings.seed = seed.toString(); // uint64: a decimal string, not a number
  return settings;
}

/** Whether a status is a finished game with an outcome. */
export function finished(status) {
  const outcome = status?.outcome;
  return Boolean(
    status?.is_over &&
      outcome &&
      outcome.reason !== "OUTCOME_REASON_UNSPECIFIED" &&
      outcome.scores.length === status.num_players,
  );
}

function seats(list) {
  return list.length ? list.map((s) => `seat ${s}`).join(", ") : "nobody";
}

/** The outcome as readable lines. */
export function describeOutcome(status) {
  const o = status.outcome;
  const teams = status.teams;
  const teamPlay = new Set(teams).size < teams.length;
  const winners = o.is_draw ? "none (a draw)" : seats(o.winners);
  const lines = [
    `outcome: ${o.reason}`,
    `  winners: ${winners}${teamPlay && o.winners.length ? ` (team ${teams[o.winners[0]]})` : ""}`,
    `  scores:  ${o.scores.join(", ")}${teamPlay ? `  (teams by seat: ${teams.join(", ")})` : ""}`,
    `  returns: ${o.returns.join(", ")}`,
    `  ${o.text}`,
  ];
  const mine = o.returns[0];
  lines.push(`seat 0 (random moves) ${mine > 0 ? "won" : mine < 0 ? "lost" : "shared the result"}`);
  return lines;
}

function botLine(turns) {
  if (!turns.length) return "no bot turn";
  const shown = turns.slice(0, 4).map((t) => `s${t.player} ${JSON.stringify(t.action.text)}`);
  return `${turns.length} bot turn${turns.length === 1 ? "" : "s"}: ${shown.join(", ")}${turns.length > 4 ? ", ..." : ""}`;
}

function statusLine(status) {
  if (status.is_over) return "game over";
  return `seat ${status.current_player} to act, ${status.decision}, scores ${status.scores.join("-")}`;
}

/**
 * Play one game; `options`: game, players (0: the game's minimum, 4 with teams), teams, bot
 * (spec for every other seat), seed (BigInt or null: the server chooses), maxCalls (a bound on
 * the loop), verbose. Returns {ok, status, moves, botTurns, seed}.
 */
export async function playGame(client, options, log = console.log) {
  const game = options.game;
  let players = options.players || 0;
  if (!players) {
    const { games } = await client.call("ListGames", {});
    const info = games.find((g) => g.name === game.toLowerCase());
    if (!info) throw new Error(`the server does not run "${game}" (it runs ${games.map((g) => g.name).join(", ")})`);
    players = options.teams ? Math.max(...info.team_player_counts) : info.min_players;
  }
  // With a seed, everything is reproducible on one server key: the game's chance, each bot's
  // seed, seat 0's choices. Without, the server picks the game's seed and keeps it (a response
  // that may reach a player never carries it: it would deal the same hands again), and seat
  // 0's choices are seeded locally.
  const seeder = options.seed === null || options.seed === undefined ? null : new SplitMix64(options.seed);
  const bots = [];
  for (let seat = 1; seat < players; seat++) {
    bots.push({ seat, bot: botSettings(options.bot, seeder ? seeder.next64() : null) });
  }
  // The same fields on every call: seat 0's view and legal actions, the bots at the others.
  const mine = { viewer: 0, include_view: true, include_legal_actions: true, compact_actions: true, bots };
  const create = { game, num_players: players, ...mine };
  if (seeder) create.seed = options.seed.toString();
  if (options.teams) create.options = { osirium: { teams: true } };

  let resp = await client.call("CreateGame", create);
  const rng = new SplitMix64(seeder ? seeder.next64() : randomBytes(8).readBigUInt64LE());
  const seedText = seeder ? options.seed.toString() : "chosen by the server";
  log(
    `${game}, ${players} players${options.teams ? " in teams" : ""}, seed ${seedText}; ` +
      `seat 0 plays at random, bots (${options.bot}) at ${seats(bots.map((b) => b.seat))}`,
  );
  let botTurns = resp.bot_turns.length;
  let moves = 0;
  if (resp.bot_turns.length) log(`start: ${botLine(resp.bot_turns)}`);
  while (!resp.status.is_over) {
    if (client.totalCalls() >= options.maxCalls) {
      log(`giving up after ${options.maxCalls} calls (--max-calls)`);
      return { ok: false, status: resp.status, moves, botTurns, seed: seedText };
    }
    if (resp.status.current_player === 0) {
      if (!resp.legal_actions.length) throw new Error("seat 0 is to act but the response has no legal_actions");
      const action = rng.choice(resp.legal_actions);
      resp = await client.call("ApplyAction", { state: resp.state, action_id: action.id, player: 0, ...mine });
      moves += 1;
      botTurns += resp.bot_turns.length;
      if (options.verbose || resp.status.is_over || moves % 10 === 1) {
        log(`move ${moves}: seat 0 ${JSON.stringify(action.text)} | ${botLine(resp.bot_turns)} | ${statusLine(resp.status)}`);
      }
    } else {
      // The bots stopped before seat 0's turn (a move or time cap, stop_reason says which):
      // let them go on. With the server's defaults this does not happen.
      log(`the bots stopped early (${resp.stop_reason}); AdvanceBots`);
      resp = await client.call("AdvanceBots", { state: resp.state, ...mine });
      botTurns += resp.bot_turns.length;
    }
  }
  const ok = finished(resp.status);
  log(`game over after ${moves} moves of seat 0 and ${botTurns} bot turns (move_number ${resp.status.move_number})`);
  if (ok) for (const line of describeOutcome(resp.status)) log(line);
  else log(`the game is over but has no valid outcome: ${JSON.stringify(resp.status.outcome)}`);
  if (options.verbose && resp.view) log(resp.view.text);
  return { ok, status: resp.status, moves, botTurns, seed: seedText };
}
