#!/usr/bin/env bash
# Benchmarks sharelane on generated recipes of 10,000 and 100,000 records (100 zones, 1,000 participants):
# validate, plan into an empty SQLite store, apply, a no-op plan, apply through `sharelane serve`, and the
# reference: the sqlite3 command-line tool inserting the same rows in one transaction; recipes of 10,000 and
# 100,000 users (validate, plan, apply, the no-op plan after it), saved plans (`plan --out`, `apply FILE`) and
# include:/!asset naming a FIFO; then the emulator under load (Scripts/load.py: 20 concurrent clients, against
# a bare Hummingbird server as the baseline).
#
# Usage: Scripts/bench.sh [SIZE…]   (default: 10000 100000)
#        BENCH_USERS="10000 100000" chooses the users' sizes; BENCH_ONLY=users runs only their rows;
#        BENCH_ONLY=stop only Ctrl-C during an apply over serve --latency 80ms; BENCH_ONLY=replay only
#        `sharelane replay` of 1,000 exchanges recorded through `sharelane record`.
#        BENCH_ONLY=saved only saved plans: `plan --out` and `apply FILE` beside `plan` and `apply RECIPE`, over
#        SQLite and `http:` (20 zones of 10 participants; the sizes as above).
#        BENCH_ONLY=owners only a recipe's records in 10 zones of 10 owners beside the same under one owner.
# Writes the table to standard output and the same numbers to bench-results.json (or $BENCH_JSON).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v sqlite3 >/dev/null 2>&1; then
  echo "bench: installing the sqlite3 command-line tool for the reference measurement" >&2
  apt-get update -qq && apt-get install -y -qq sqlite3 >/dev/null
fi
if [ ! -x /usr/bin/time ]; then
  echo "bench: installing GNU time, which reports each step's peak memory" >&2
  apt-get update -qq && apt-get install -y -qq time >/dev/null
fi

swift build -c release --product sharelane 2>&1 | grep -E "error|warning: |Compiling sharelane|Build complete" || true
swift build -c release --product sharelane-bench-baseline 2>&1 | grep -E "error|Build complete" || true
python3 Scripts/bench.py .build/release/sharelane "$@"
echo
# The emulator as a test fixture (Docs/Testing.md): seeding, resets, and eight workers in containers of their own.
python3 Scripts/bench-fixture.py .build/release/sharelane
echo
exec python3 Scripts/load.py .build/release/sharelane .build/release/sharelane-bench-baseline
