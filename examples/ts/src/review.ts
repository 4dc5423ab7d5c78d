// The review of a finished game (ReviewGame, a server-streaming call): what a backend keeps
// of a game while it is played, the request it builds from that, and the stream read with
// `for await`: a header, one MoveReview per decision of the seat, a summary. A review that
// ends early (the deadline, a server shutting down) is continued from `summary.nextMove`.
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type BotTurn,
  MoveGrade,
  MoveGradeSchema,
  type MoveReview,
  type ReviewGameRequestSchema,
  type ReviewGameResponse,
  type ReviewHeader,
  ReviewEnd,
  ReviewEndSchema,
  type ReviewSummary,
} from "./gen/heka/v1/game_service_pb.js";

/**
 * What a backend holds of a game played by one seat: all a review needs. The server keeps
 * nothing; these tokens show it that the actions are the game it served.
 */
export interface GameRecord {
  /** The token before the first action below: CreateGame's `state`. */
  start: string;
  /**
   * Every action since, in order, as the seat saw it: its own action ids, and each BotTurn's
   * `action.id` (-1 for another seat's secret decision, which the server finds from the next
   * checkpoint).
   */
  actions: number[];
  /** The `state` of each response after `start` (checkpoints): the last one follows the last action. */
  checkpoints: string[];
}

/** Keep a response: the actions it applied (the seat's, then the bots') and its token. */
export function recordResponse(record: GameRecord, actions: readonly number[], state: string): void {
  if (!actions.length) return; // no action, no new checkpoint
  record.actions.push(...actions);
  record.checkpoints.push(state);
}

/** The action ids of the bots' turns, as the viewer received them (-1: a secret of another seat). */
export function botActionIds(turns: readonly BotTurn[]): number[] {
  return turns.map((t) => {
    if (!t.action) throw new Error(`a bot turn of seat ${t.player} has no action`);
    return t.action.id;
  });
}

export type ReviewRequest = MessageInitShape<typeof ReviewGameRequestSchema>;

export interface ReviewOptions {
  /** The reviewed seat; the review shows its cards, so it is also the viewer. */
  seat: number;
  /** Search iterations per decision (0: the reviewer preset's). */
  iterations: number;
  /** Review from this move number on (0: the first); a continuation passes summary.nextMove. */
  fromMove?: number;
  /** The review's seed; null: the server chooses (ReviewHeader.seed). */
  seed?: bigint | null;
}

/** The ReviewGame request of a recorded game: the seat's own review, for that seat. */
export function reviewRequest(record: GameRecord, { seat, iterations, fromMove = 0, seed = null }: ReviewOptions): ReviewRequest {
  return {
    state: record.start,
    actions: record.actions,
    checkpoints: record.checkpoints,
    seats: { case: "seat", value: seat },
    viewer: seat,
    iterations,
    fromMove,
    compactActions: true,
    ...(seed === null ? {} : { seed }),
  };
}

/** "best", "inaccuracy", ...: the grade's proto name without its prefix. */
export function gradeName(grade: MoveGrade): string {
  return (MoveGradeSchema.value[grade]?.name ?? String(grade)).replace("MOVE_GRADE_", "").toLowerCase();
}

/** What will be reviewed: the decisions, the forced ones skipped, the reviewer and its seed. */
export function headerLine(h: ReviewHeader): string {
  return (
    `review of seat ${h.seats.join(", ")}: ${h.moves} move${h.moves === 1 ? "" : "s"} to review, ` +
    `${h.forcedMoves} forced move${h.forcedMoves === 1 ? "" : "s"} skipped ` +
    `(${h.actions} actions replayed); reviewer ${h.reviewer}, seed ${h.seed}`
  );
}

/** `move 12: inaccuracy, loss 0.064: "played" -> "best"` (the best alone when it was played). */
export function moveLine(m: MoveReview): string {
  const played = JSON.stringify(m.played?.text ?? "");
  const best = m.grade === MoveGrade.BEST ? "" : ` -> ${JSON.stringify(m.best?.text ?? "")}`;
  return `move ${m.move}: ${gradeName(m.grade)}, loss ${m.loss.toFixed(3)}: ${played}${best}`;
}

/** The accuracy, the grades and why the stream ended: one line per reviewed seat, then `end`. */
export function summaryLines(s: ReviewSummary): string[] {
  const lines = s.seats.map(
    (seat) =>
      `summary: seat ${seat.seat} accuracy ${seat.accuracy.toFixed(1)}/100 over ${seat.moves} moves, ` +
      `mean loss ${seat.meanLoss.toFixed(3)}; ${seat.grades.map((g) => `${gradeName(g.grade)} ${g.moves}`).join(", ")}`,
  );
  const rest = s.movesLeft ? `, ${s.movesLeft} moves left, next move ${s.nextMove}` : "";
  return [...lines, `end: ${ReviewEndSchema.value[s.end]?.name ?? s.end}${rest} (${s.elapsedSeconds.toFixed(1)} s)`];
}

/** Whether a review that ended this way has more to give: ask again from summary.nextMove. */
export function continues(s: ReviewSummary): boolean {
  return (s.end === ReviewEnd.DEADLINE || s.end === ReviewEnd.SHUTTING_DOWN) && s.nextMove > 0;
}

/**
 * A seat's accuracy over moves reviewed in several calls: each summary covers its own call,
 * and the accuracy of a game is the mean of its moves' accuracies (0..100), as the server
 * computes it for one call.
 */
export function accuracyOf(moves: readonly MoveReview[]): number {
  return moves.length ? moves.reduce((sum, m) => sum + m.accuracy, 0) / moves.length : 0;
}

/** What a review needs of a client: HekaClient's `stream` (a fake one in the tests). */
export interface ReviewClient {
  stream(method: "reviewGame", request: ReviewRequest): AsyncIterable<ReviewGameResponse>;
}

export interface ReviewResult {
  /** Whether every decision was reviewed. */
  complete: boolean;
  moves: MoveReview[];
  calls: number;
}

/**
 * Review seat `options.seat`'s decisions of a recorded game, printing the stream as it
 * comes; continue it while it ends early and makes progress.
 */
export async function reviewGame(
  client: ReviewClient,
  record: GameRecord,
  options: ReviewOptions,
  log: (line: string) => void = console.log,
): Promise<ReviewResult> {
  const moves: MoveReview[] = [];
  let request = reviewRequest(record, options);
  for (let calls = 1; ; calls++) {
    let summary: ReviewSummary | undefined;
    for await (const { item } of client.stream("reviewGame", request)) {
      switch (item.case) {
        case "header":
          log(headerLine(item.value));
          // The same seed for the rest: a continued review gives each move the review it
          // would have had in one call.
          request = { ...request, seed: item.value.seed };
          break;
        case "move":
          moves.push(item.value);
          log(moveLine(item.value));
          break;
        case "summary":
          summary = item.value;
          for (const line of summaryLines(summary)) log(line);
          break;
      }
    }
    if (!summary) throw new Error("the review's stream ended without a summary");
    if (!continues(summary)) {
      const complete = summary.end === ReviewEnd.COMPLETE;
      if (complete && calls > 1) log(`whole review: accuracy ${accuracyOf(moves).toFixed(1)}/100 over ${moves.length} moves`);
      return { complete, moves, calls };
    }
    if (!summary.movesReviewed) {
      log("no move reviewed in that call: giving up (a longer --deadline-ms?)");
      return { complete: false, moves, calls };
    }
    log(`continuing from move ${summary.nextMove}; accuracy so far ${accuracyOf(moves).toFixed(1)}/100 over ${moves.length} moves`);
    request = { ...request, fromMove: summary.nextMove };
  }
}
