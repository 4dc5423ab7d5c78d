// The review of a recorded game, without a server: the record kept while playing, the
// request built from it (as it goes on the wire), the lines printed, and the loop that
// continues a review cut by its deadline.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type MessageInitShape, create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  BotTurnSchema,
  MoveGrade,
  MoveReviewSchema,
  ReviewEnd,
  ReviewGameRequestSchema,
  ReviewGameResponseSchema,
  ReviewSummarySchema,
} from "../src/gen/heka/v1/game_service_pb.js";
import {
  type GameRecord,
  type ReviewRequest,
  accuracyOf,
  botActionIds,
  continues,
  gradeName,
  moveLine,
  recordResponse,
  reviewGame,
  reviewRequest,
  summaryLines,
} from "../src/review.js";

/** A game as seat 0 of Aton sees it: its own moves, and seat 1's secret arrangement as -1. */
function recorded(): GameRecord {
  const record: GameRecord = { start: "T0", actions: [], checkpoints: [] };
  const secret = create(BotTurnSchema, { player: 1, action: { id: -1, text: "(secret)", kind: "secret" } });
  const place = create(BotTurnSchema, { player: 1, action: { id: 57, text: "place T1.6" } });
  recordResponse(record, [3, ...botActionIds([secret])], "T2"); // seat 0 "keep", seat 1 arranges
  recordResponse(record, [12], "T3"); // seat 0 again: no bot turn
  recordResponse(record, botActionIds([]), "T3 again"); // AdvanceBots with no turn: nothing new
  recordResponse(record, [40, ...botActionIds([place, secret])], "T6"); // the last response: game over
  return record;
}

test("the record: every action in order as seat 0 saw it, a checkpoint after each response", () => {
  const record = recorded();
  assert.deepEqual(record.actions, [3, -1, 12, 40, 57, -1]);
  assert.deepEqual(record.checkpoints, ["T2", "T3", "T6"]);
  assert.throws(() => botActionIds([create(BotTurnSchema, { player: 2 })]), /seat 2 has no action/);
});

test("the request: seat 0's review for seat 0, the start token, actions and checkpoints", () => {
  const wire = (init: ReviewRequest) =>
    fromBinary(ReviewGameRequestSchema, toBinary(ReviewGameRequestSchema, create(ReviewGameRequestSchema, init)));
  const sent = wire(reviewRequest(recorded(), { seat: 0, iterations: 200 }));
  assert.equal(sent.state, "T0");
  assert.deepEqual(sent.actions, [3, -1, 12, 40, 57, -1]);
  assert.deepEqual(sent.checkpoints, ["T2", "T3", "T6"]);
  // Seat 0 and viewer 0 are sent, not taken for unset: a oneof member, an optional field.
  assert.deepEqual(sent.seats, { case: "seat", value: 0 });
  assert.equal(sent.viewer, 0);
  assert.equal(sent.iterations, 200);
  assert.equal(sent.fromMove, 0);
  assert.equal(sent.seed, undefined); // the server chooses
  const again = wire(reviewRequest(recorded(), { seat: 0, iterations: 200, fromMove: 9, seed: 42n }));
  assert.equal(again.fromMove, 9);
  assert.equal(again.seed, 42n);
});

function moveReview(move: number, grade: MoveGrade, loss: number, accuracy: number, best = "place T2.10") {
  return create(MoveReviewSchema, {
    move,
    seat: 0,
    played: { id: 5, text: "place T1.1" },
    best: grade === MoveGrade.BEST ? { id: 5, text: "place T1.1" } : { id: 9, text: best },
    loss,
    grade,
    accuracy,
  });
}

test("the lines: a move, its grade and loss; the summary and why it ended", () => {
  assert.deepEqual(
    [MoveGrade.BEST, MoveGrade.EXCELLENT, MoveGrade.GOOD, MoveGrade.INACCURACY, MoveGrade.MISTAKE, MoveGrade.BLUNDER].map(gradeName),
    ["best", "excellent", "good", "inaccuracy", "mistake", "blunder"],
  );
  assert.equal(moveLine(moveReview(9, MoveGrade.INACCURACY, 0.0981, 63.2)), 'move 9: inaccuracy, loss 0.098: "place T1.1" -> "place T2.10"');
  assert.equal(moveLine(moveReview(12, MoveGrade.BEST, 0, 100)), 'move 12: best, loss 0.000: "place T1.1"');
  const summary = create(ReviewSummarySchema, {
    end: ReviewEnd.DEADLINE,
    seats: [{ seat: 0, moves: 2, accuracy: 81.25, meanLoss: 0.049, grades: [{ grade: MoveGrade.BEST, moves: 1 }, { grade: MoveGrade.MISTAKE, moves: 1 }] }],
    movesReviewed: 2,
    movesLeft: 27,
    nextMove: 14,
    elapsedSeconds: 1.26,
  });
  assert.deepEqual(summaryLines(summary), [
    "summary: seat 0 accuracy 81.3/100 over 2 moves, mean loss 0.049; best 1, mistake 1",
    "end: REVIEW_END_DEADLINE, 27 moves left, next move 14 (1.3 s)",
  ]);
});

test("which ends continue: the deadline and a shutdown, from nextMove", () => {
  const ended = (end: ReviewEnd, nextMove: number) => continues(create(ReviewSummarySchema, { end, nextMove }));
  assert.equal(ended(ReviewEnd.DEADLINE, 14), true);
  assert.equal(ended(ReviewEnd.SHUTTING_DOWN, 14), true);
  assert.equal(ended(ReviewEnd.COMPLETE, 0), false);
  assert.equal(ended(ReviewEnd.DEADLINE, 0), false);
});

test("the accuracy over several calls is the mean of the moves' accuracies, 0..100", () => {
  assert.equal(accuracyOf([]), 0);
  assert.equal(accuracyOf([moveReview(1, MoveGrade.BEST, 0, 100), moveReview(3, MoveGrade.BLUNDER, 0.4, 15)]), 57.5);
});

type Item = MessageInitShape<typeof ReviewGameResponseSchema>["item"];

test("a review cut by its deadline is continued from nextMove with the header's seed", async () => {
  const header: Item = { case: "header", value: { moves: 3, seats: [0], reviewer: "mcts:medium,iterations=200", seed: 77n } };
  const streams: Item[][] = [
    [
      header,
      { case: "move", value: moveReview(1, MoveGrade.BEST, 0, 100) },
      { case: "summary", value: { end: ReviewEnd.DEADLINE, movesReviewed: 1, movesLeft: 2, nextMove: 3 } },
    ],
    [
      { ...header, value: { ...header.value, moves: 2 } },
      { case: "move", value: moveReview(3, MoveGrade.GOOD, 0.03, 84) },
      { case: "move", value: moveReview(5, MoveGrade.MISTAKE, 0.15, 44) },
      { case: "summary", value: { end: ReviewEnd.COMPLETE } },
    ],
  ];
  const requests: ReviewRequest[] = [];
  const client = {
    async *stream(_method: "reviewGame", request: ReviewRequest) {
      requests.push(request);
      for (const item of streams[requests.length - 1] ?? []) yield create(ReviewGameResponseSchema, { item });
    },
  };
  const lines: string[] = [];
  const result = await reviewGame(client, recorded(), { seat: 0, iterations: 200 }, (line) => lines.push(line));
  assert.equal(result.complete, true);
  assert.equal(result.calls, 2);
  assert.deepEqual(result.moves.map((m) => m.move), [1, 3, 5]);
  assert.deepEqual(requests.map((r) => [r.fromMove, r.seed]), [[0, undefined], [3, 77n]]);
  assert.ok(lines.includes("whole review: accuracy 76.0/100 over 3 moves"), lines.join("\n"));
});

test("a review that makes no progress is not asked again", async () => {
  let calls = 0;
  const client = {
    async *stream() {
      calls += 1;
      yield create(ReviewGameResponseSchema, { item: { case: "summary", value: { end: ReviewEnd.DEADLINE, movesLeft: 3, nextMove: 1 } } });
    },
  };
  const result = await reviewGame(client, recorded(), { seat: 0, iterations: 200 }, () => {});
  assert.equal(calls, 1);
  assert.equal(result.complete, false);
});
