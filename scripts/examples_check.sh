#!/usr/bin/env bash
# The client examples checked against real servers (`make examples-check`, run by .ci/run):
#   1. two `heka serve` processes on free loopback ports, with ephemeral keys: one on the
#      defaults, one holding a single call at a time (--max-concurrent-rpcs 1) for the
#      RESOURCE_EXHAUSTED demo (started first: they boot while the next steps run);
#   2. npm ci in examples/node and examples/ts (the pinned package-lock.json files; install
#      scripts not run);
#   3. examples/ts built: its generated code (src/gen/) must be what `buf generate` makes
#      from proto/ now, and tsc compiles the client, its unit tests and the type-check test
#      (typecheck/mistakes.ts: each `@ts-expect-error` line must still be a compile error);
#   4. each JavaScript client (examples/node: proto-loader; examples/ts: protobuf-es and
#      Connect): an Aton game and an Osirium 4-player teams game against bots, one call per
#      move (each must end with an outcome), --demo-errors (the decoded details must be the
#      expected ones), --demo-backoff (a refused call retried until answered), and its unit
#      tests (node --test); examples/ts also plays an Aton game with --review and reads the
#      ReviewGame stream to its summary (the actions as seat 0 saw them, the other seat's
#      secret decisions as -1, pinned by the responses' tokens);
#   5. the Python example: an Aton game and an Osirium teams game;
#   6. both servers stopped with SIGTERM (each must drain and exit 0).
# Every step has a time limit; any failure fails the check. Each step prints the seconds since
# the start, and the last line the total. The two npm ci steps take the most (google-proto-files
# unpacks the googleapis protos; examples/ts installs buf's binaries and TypeScript).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${BIN:-.venv/bin}
STEP_TIMEOUT=${STEP_TIMEOUT:-60}

for tool in node npm timeout; do
    command -v "$tool" >/dev/null || { echo "examples-check: $tool not found" >&2; exit 1; }
done
[ -x "$BIN/heka" ] || { echo "examples-check: $BIN/heka not found (make venv)" >&2; exit 1; }
# The servers get only the settings given here.
while read -r name; do unset "$name"; done < <(compgen -e | grep '^HEKA_' || true)

WORK=$(mktemp -d)
PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { echo; echo "== [${SECONDS} s] $*"; }
run() { timeout --kill-after=5 "$STEP_TIMEOUT" "$@"; }

# start NAME ARGS...: a server in the background; its pid in PIDS, its port in $WORK/NAME.port
start() {
    local name=$1
    shift
    "$BIN/heka" serve --host 127.0.0.1 --port 0 --metrics-port -1 "$@" \
        >/dev/null 2>"$WORK/$name.log" &
    PIDS+=($!)
    echo $! >"$WORK/$name.pid"
}

# port NAME: wait (30 s at most) for the server's "listening" log line; print its port
port() {
    local name=$1 pid
    pid=$(cat "$WORK/$name.pid")
    for _ in $(seq 300); do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "server $name exited:" >&2
            cat "$WORK/$name.log" >&2
            return 1
        fi
        local found
        found=$("$BIN/python" - "$WORK/$name.log" <<'EOF'
import json, sys
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    try:
        entry = json.loads(line)
    except ValueError:
        continue
    if entry.get("event") == "listening":
        print(entry["port"])
        break
EOF
)
        if [ -n "$found" ]; then
            echo "$found"
            return 0
        fi
        sleep 0.1
    done
    echo "server $name did not start in 30 s:" >&2
    cat "$WORK/$name.log" >&2
    return 1
}

# stop NAME: SIGTERM, and the server must drain and exit 0
stop() {
    local pid status=0
    pid=$(cat "$WORK/$1.pid")
    kill -TERM "$pid"
    timeout 30 tail --pid="$pid" -f /dev/null || { echo "server $1 did not stop" >&2; return 1; }
    wait "$pid" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "server $1 exited with $status:" >&2
        tail -n 20 "$WORK/$1.log" >&2
        return 1
    fi
    echo "server $1 stopped (exit 0)"
}

# expect PATTERN CMD...: run CMD (bounded), show its output, fail unless it exits 0 and prints PATTERN
expect() {
    local pattern=$1
    shift
    local out=$WORK/out.txt status=0
    run "$@" >"$out" 2>&1 || status=$?
    cat "$out"
    if [ "$status" -ne 0 ]; then
        echo "FAILED (exit $status): $*" >&2
        return 1
    fi
    if ! grep -Eq "$pattern" "$out"; then
        echo "FAILED: no line matching /$pattern/ from: $*" >&2
        return 1
    fi
}

SECONDS=0
step "servers: defaults, and one call at a time (starting)"
start main
start single --max-concurrent-rpcs 1 --grpc-processes 1 --search-workers 1

npm_ci() { (cd "$1" && timeout --kill-after=5 120 npm ci --no-audit --no-fund --ignore-scripts --loglevel=error); }
step "npm ci (examples/node)"
npm_ci examples/node
step "npm ci (examples/ts)"
npm_ci examples/ts

step "ts: src/gen/ is current (buf generate with protoc-gen-es, from proto/)"
(
    cd examples/ts
    PATH=$PWD/node_modules/.bin:$PATH run buf generate --output "$WORK/ts-gen"
    diff -rq src/gen "$WORK/ts-gen/src/gen" || {
        echo "examples/ts/src/gen is stale: run 'npm run generate' in examples/ts and commit it" >&2
        exit 1
    }
    echo "src/gen: current"
)
step "ts: tsc (the client, its unit tests, the type-check test typecheck/mistakes.ts)"
(cd examples/ts && rm -rf dist && run node_modules/.bin/tsc -p . && echo "tsc: ok")

step "servers: listening"
MAIN=127.0.0.1:$(port main)
SINGLE=127.0.0.1:$(port single)
echo "main on $MAIN, single-call on $SINGLE"

cd examples/node
step "node: Aton against a greedy bot"
expect '^outcome: OUTCOME_REASON_' node play.js --target "$MAIN" --game aton --seed 1
step "node: Osirium, 4 players in teams, MCTS (easy) bots"
expect '^outcome: OUTCOME_REASON_' \
    node play.js --target "$MAIN" --game osirium --players 4 --teams --bot mcts:easy --seed 2
step "node: --demo-errors"
expect '^5/5 errors decoded as expected' node play.js --target "$MAIN" --demo-errors
step "node: --demo-backoff (server holding one call)"
expect '^ListGames answered after [1-9][0-9]* retries' node play.js --target "$SINGLE" --demo-backoff
step "node: unit tests"
expect '^ℹ fail 0' node --test --test-reporter=spec
cd "$ROOT"

cd examples/ts
step "ts: Aton against a greedy bot"
expect '^outcome: OUTCOME_REASON_' node dist/src/play.js --target "$MAIN" --game aton --seed 1
step "ts: Osirium, 4 players in teams, greedy bots"
expect '^outcome: OUTCOME_REASON_' node dist/src/play.js --target "$MAIN" --game osirium --teams --seed 2
step "ts: Aton, then the review of seat 0's moves (--review: ReviewGame, a stream)"
expect '^summary: seat 0 accuracy [0-9.]+/100 over [1-9]' \
    node dist/src/play.js --target "$MAIN" --game aton --seed 3 --review
step "ts: --demo-errors"
expect '^6/6 errors decoded as expected' node dist/src/play.js --target "$MAIN" --demo-errors
step "ts: --demo-backoff (server holding one call)"
expect '^ListGames answered after [1-9][0-9]* retries' node dist/src/play.js --target "$SINGLE" --demo-backoff
step "ts: unit tests"
expect '^ℹ fail 0' node --test --test-reporter=spec dist/test/*.test.js
cd "$ROOT"

step "python: Aton"
expect '^winners \[.*\], OUTCOME_REASON_' "$BIN/python" examples/python/play.py --target "$MAIN" --game aton
step "python: Osirium, 4 players in teams"
expect '^winners \[.*\], OUTCOME_REASON_' \
    "$BIN/python" examples/python/play.py --target "$MAIN" --game osirium --teams

step "stopping the servers"
stop main
stop single
PIDS=()
echo
echo "examples-check: ok (${SECONDS} s)"
