#!/usr/bin/env bash
# The Osirium 4-player team-play (O9) rating measurements, in order, at the lowest priority,
# each resumed from its JSON file: the ladder at 256 games per pair, 128 for the candidates that
# search more than every anchor (--costly-games: hard, expert, iterations=3000), resumed from the
# fixed design at 128 (bench/results/ladder_osirium4_teams_128.*, whose games are its first 128
# rounds), complete (bench/results/ladder_osirium4_teams_256.*); then its check on a seed no
# earlier check played (3), in the same design, complete and shipped
# (bench/results/check_osirium4_teams_256.*: it passed). Both resume from their complete files
# and play no game: the script now only rebuilds the table and the check's verdict. At 128 games
# per pair the check missed by 32.2 on average (bench/results/check_osirium4_teams_128.*), most
# of it at the weak levels, whose games are cheap and whose intervals are widest; the costly
# levels cost three quarters of the games' CPU time and were within 26 (bench/results/notes/
# 2026-12-07-osirium-4p-teams-256.md). Stop it at any time (kill it); run it again to go on where
# each file stopped. Ship a table once its check passes: docs/ladder.md, "Shipping a table".
#
#   bench/rating_runs.sh [TREE]
#
# TREE: the checkout whose compiled build plays the games (default: this one); a separate
# worktree keeps the runs' code fixed while this one changes. The JSON files go to this
# checkout's bench/results/partial/, the table to heka-results/.
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tree="$(cd "${1:-$here}" && pwd)"
partial="$here/bench/results/partial"
tables="$here/heka-results"
mkdir -p "$partial" "$tables"
echo 19 > /proc/self/autogroup 2>/dev/null || true # below the desktop's own processes too
cd "$tree" || exit 2
arena=(nice -n 19 "$tree/.venv/bin/python" -m service.cli arena --ladder --game osirium --players 4
    --workers 2 --no-progress)

run() { # FILE ARGS...: one run, resumed from FILE when it exists
    local file=$1
    shift
    local resume=()
    [ -f "$file" ] && resume=(--resume "$file")
    echo "$(date -u +%FT%TZ) start $(basename "$file")"
    PYTHONPATH="$tree" "${arena[@]}" "$@" --json "$file" "${resume[@]}"
    local rc=$?
    echo "$(date -u +%FT%TZ) end $(basename "$file"): exit $rc"
    return $rc
}

teams="$tables/ladder-osirium-4p-teams.json"
# The ladder is complete (bench/results/ladder_osirium4_teams_256.*): resumed from it, the arena
# plays no game and writes the table the check reads; its own copy of the games goes to
# heka-results/, so the committed file stays as measured.
echo "$(date -u +%FT%TZ) table from ladder_osirium4_teams_256.json"
PYTHONPATH="$tree" "${arena[@]}" --teams --games-per-pair 256 --costly-games 128 --seed 1 \
    --ratings "$teams" --resume "$here/bench/results/ladder_osirium4_teams_256.json" \
    --json "$tables/ladder_osirium4_teams_256.json" > /dev/null || exit 1
# The check is complete too: resumed from its own file (a copy in heka-results/, so that the
# committed file stays as measured), it plays no game and prints its verdict.
cp "$here/bench/results/check_osirium4_teams_256.json" "$tables/check_osirium4_teams_256.json"
run "$tables/check_osirium4_teams_256.json" --teams --check "$teams" --seed 3 --games-per-pair 256 \
    --costly-games 128
