#!/usr/bin/env bash
# Measures the embedded store in a release build: RECORDS records (default 100,000) saved in batches of 200
# into a file store, then the sqlite3 command inserting the very same rows into the same schema in one
# transaction, for comparison. Needs sqlite3 and bc on PATH.
#
# Usage: Scripts/measure-store.sh [RECORDS]
#   SCRATCH=.build-release   build directory (default .build); the release build of the tests is reused
set -euo pipefail
cd "$(dirname "$0")/.."
records="${1:-100000}"
scratch="${SCRATCH:-.build}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
store="$work/store.sqlite"

swift build -c release --build-tests -Xswiftc -enable-testing --scratch-path "$scratch" 2>&1 | grep -E "error|Compiling|Build" | tail -1
SHARELANE_MEASURE=1 SHARELANE_MEASURE_RECORDS="$records" SHARELANE_MEASURE_FILE="$store" \
  swift test -c release -Xswiftc -enable-testing --scratch-path "$scratch" --skip-build --filter MeasurementTests 2>&1 \
  | grep MEASURE

# The same rows into the same schema (the zone and record tables with their indexes), one transaction.
sqlite3 "$store" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
{
  echo "PRAGMA journal_mode = WAL;"
  echo "PRAGMA synchronous = NORMAL;"
  echo "PRAGMA foreign_keys = ON;"
  sqlite3 "$store" ".schema zone" ".schema record"
  sqlite3 "$store" ".mode insert zone" "SELECT * FROM zone;"
  echo "BEGIN;"
  sqlite3 "$store" ".mode insert record" "SELECT * FROM record ORDER BY seq;"
  echo "COMMIT;"
} > "$work/raw.sql"
raw="$work/raw.sqlite"
start=$(date +%s.%N)
sqlite3 "$raw" < "$work/raw.sql" >/dev/null
end=$(date +%s.%N)
rows=$(sqlite3 "$raw" "SELECT count(*) FROM record;")
echo "MEASURE sqlite3 command, the same $rows rows in one transaction: $(echo "$end - $start" | bc) seconds"
