#!/usr/bin/env bash
# Runs the model-based checker (Tests/ModelCheckTests, Docs/ModelCheck.md) for a long run.
#   Scripts/check.sh [--cases N] [--seed S] [--case-seed S] [--faults MIX] [--throttle RATE] [--known-bugs] [--skip-build]
# --cases N       how many cases (default 10000)
# --seed S        the run's seed (default: the CI run's); each case's seed is derived from it
# --case-seed S   rerun one case, as printed by a failure
# --faults MIX    the faults serve plays while its side applies (default unavailable=3%,reset=2%,lost-answer=3%;
#                 none for a good network), as `serve --faults` writes them
# --throttle RATE serve's throttle meanwhile (default 10/s; none for no throttle)
# --known-bugs    close every gate of KnownBugs.swift again (the bugs they held back are fixed)
set -euo pipefail
cd "$(dirname "$0")/.."
cases=10000
seed=""
case_seed=""
known_bugs=0
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --cases) cases="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --case-seed) case_seed="$2"; shift 2 ;;
        --faults) export SHARELANE_CHECK_FAULTS="$2"; shift 2 ;;
        --throttle) export SHARELANE_CHECK_THROTTLE="$2"; shift 2 ;;
        --known-bugs) known_bugs=1; shift ;;
        --skip-build) build=0; shift ;;
        -h|--help) sed -n 2,10p "$0"; exit 0 ;;
        *) echo "check.sh: unknown option $1 (see --help)" >&2; exit 1 ;;
    esac
done
if [ "$build" = 1 ]; then swift build --build-tests; fi
export SHARELANE_CHECK_CASES="$cases"
[ -n "$seed" ] && export SHARELANE_CHECK_SEED="$seed"
[ -n "$case_seed" ] && export SHARELANE_CHECK_CASE_SEED="$case_seed"
[ "$known_bugs" = 1 ] && export SHARELANE_CHECK_KNOWN_BUGS=0
exec swift test --skip-build --filter ModelCheckTests
