#!/usr/bin/env bash
# Measures the embedded store: 100,000 records in batches of 200 into a file store (release build), then
# the sqlite3 command inserting the same rows into the same schema in one transaction.
# Usage: Scripts/measure-store.sh [RECORDS]   (needs sqlite3 on PATH)
set -euo pipefail
cd "$(dirname "$0")/.."
records="${1:-100000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
store="$work/store.sqlite"

SHARELANE_MEASURE=1 SHARELANE_MEASURE_RECORDS="$records" SHARELANE_MEASURE_FILE="$store" \
  swift test -c release --filter MeasurementTests 2>&1 | grep MEASURE

# The same rows, through the sqlite3 command, into the same schema, in one transaction.
sqlite3 "$store" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
{
  echo "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
  sqlite3 "$store" ".schema zone" ".schema record"
  echo "INSERT INTO zone SELECT * FROM src.zone;" | sed 's/^/-- /'
  echo "BEGIN;"
  sqlite3 "$store" ".mode insert record" "SELECT * FROM record ORDER BY seq;"
  echo "COMMIT;"
} > "$work/raw.sql"
zone_rows="$(sqlite3 "$store" ".mode insert zone" "SELECT * FROM zone;")"
raw="$work/raw.sqlite"
sqlite3 "$raw" "PRAGMA foreign_keys = ON;" >/dev/null
start=$(date +%s.%N)
{ echo "PRAGMA foreign_keys = ON;"; sed -n '1,/^BEGIN;$/p' "$work/raw.sql" | grep -v '^BEGIN;$'; echo "$zone_rows"; sed -n '/^BEGIN;$/,$p' "$work/raw.sql"; } | sqlite3 "$raw"
end=$(date +%s.%N)
echo "MEASURE sqlite3 command, same $(sqlite3 "$raw" 'SELECT count(*) FROM record') rows, one transaction: $(echo "$end - $start" | bc)s"
