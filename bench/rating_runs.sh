#!/usr/bin/env bash
# The Osirium 4-player team-play (O9) rating measurements, in order, at the lowest priority,
# each resumed from its JSON file: the ladder (fixed design, 128 games per pair), then its
# check on seed 2, as the free-for-all table was measured (bench/results/ladder_osirium4_128.*,
# check_osirium4_128.*). The fixed design, because the nearest one
# rates weak levels against whichever of two equally rated anchors is nearer, and those two
# disagree (bench/results/notes/2026-12-05-osirium-4p-design.md). Stop it at any time (kill
# it); run it again to go on where each file stopped. Ship a table once its check passes: docs/ladder.md,
# "Shipping a table".
#
#   bench/rating_runs.sh [TREE]
#
# TREE: the checkout whose compiled build plays the games (default: this one); a separate
# worktree keeps the runs' code fixed while this one changes. The JSON files go to this
# checkout's bench/results/partial/, the tables to heka-results/.
#
# Both runs are complete (bench/results/ladder_osirium4_teams_128.*, check_osirium4_teams_128.*):
# run again, the check starts afresh in partial/.
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
# The ladder is complete (bench/results/ladder_osirium4_teams_128.*): resumed from it, the arena
# plays no game and writes the table the check reads; its own copy of the games goes to
# heka-results/, so the committed file stays as measured.
echo "$(date -u +%FT%TZ) table from ladder_osirium4_teams_128.json"
PYTHONPATH="$tree" "${arena[@]}" --teams --games-per-pair 128 --seed 1 --ratings "$teams" \
    --resume "$here/bench/results/ladder_osirium4_teams_128.json" \
    --json "$tables/ladder_osirium4_teams_128.json" > /dev/null || exit 1
run "$partial/check_osirium4_teams_128.json" --teams --check "$teams" --seed 2 --games-per-pair 128
