#!/usr/bin/env bash
# Checks the optimised build a user installs (Scripts/install.sh), which the suite does not run: `swift test`
# builds and drives a debug binary, and an optimised build can behave differently (every release `apply` once
# exited 128 after `Apply complete!`, where the debug build exited 0).
#
#   Scripts/release-check.sh [swift test --filter PATTERN]
#
# Builds the release `sharelane`, runs the demo lane and applies a generated recipe of 10,000 records with it,
# checking each exit code and that the plan after the apply is empty, then runs the suites that drive the
# binary (every test of EndToEndTests and `serve`'s) against it: SHARELANE_TEST_EXECUTABLE names it to the
# test support. Needs the debug tests built (`swift build --build-tests`).
set -euo pipefail
cd "$(dirname "$0")/.."
filter="${1:-EndToEndTests|ServeCommandTests}"

swift build -c release --product sharelane
bin="$(swift build -c release --show-bin-path)/sharelane"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

expect_status() {
    local want="$1" what="$2"; shift 2
    local status=0
    "$@" >"$scratch/out" 2>&1 || status=$?
    if [ "$status" != "$want" ]; then
        echo "release-check: $what exited $status, expected $want; it printed:" >&2
        tail -20 "$scratch/out" >&2
        exit 1
    fi
    echo "release-check: $what exited $status"
}

# The README's first command, with the release binary (on a store of its own, not the checkout's).
expect_status 0 "run demo" "$bin" run demo --store "sqlite:$scratch/demo.sqlite"
grep -q "lane demo succeeded" "$scratch/out" || { echo "release-check: run demo did not say it succeeded" >&2; exit 1; }

python3 Scripts/gen-bench-recipe.py 10000 "$scratch/bench.yaml" >/dev/null
expect_status 0 "apply of 10,000 records" "$bin" apply "$scratch/bench.yaml" --store "sqlite:$scratch/bench.sqlite" --yes
expect_status 0 "plan --detailed-exitcode after the apply" \
    "$bin" plan "$scratch/bench.yaml" --store "sqlite:$scratch/bench.sqlite" --detailed-exitcode
expect_status 2 "plan --detailed-exitcode against a store that differs (the demo's)" \
    "$bin" plan "$scratch/bench.yaml" --store "sqlite:$scratch/demo.sqlite" --detailed-exitcode

SHARELANE_TEST_EXECUTABLE="$bin" swift test --skip-build --filter "$filter"
