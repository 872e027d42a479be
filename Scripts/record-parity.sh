#!/usr/bin/env bash
# Records Tests/Parity/ again: sharelane's own client (lanes of Recipes/notes-permissions.yaml: batch sign-ins,
# a zone, records, a share, acceptances, edits, refusals) against a fresh `sharelane serve`, through
# `sharelane record`. Run it after a deliberate change of the emulator's answers, then review the diff.
#
# Usage: Scripts/record-parity.sh   (builds the debug binary first)
set -euo pipefail
cd "$(dirname "$0")/.."

swift build --product sharelane 2>&1 | grep -E "error|Build complete" || true
bin="$(swift build --show-bin-path)/sharelane"
scratch=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$scratch"
}
trap cleanup EXIT

# The address a process prints once it listens.
address_of() {
  for _ in $(seq 100); do
    if grep -oE 'http://127\.0\.0\.1:[0-9]+' "$1" >/dev/null 2>&1; then
      grep -oE 'http://127\.0\.0\.1:[0-9]+' "$1" | head -1
      return
    fi
    sleep 0.1
  done
  echo "record-parity: $1 never said where it listens:" >&2
  cat "$1" >&2
  exit 1
}

record() { # NAME LANE…
  local name=$1
  shift
  local token="parity-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
  "$bin" serve --store memory: --port 0 --api-token "$token" >"$scratch/serve-$name.log" 2>&1 &
  pids+=($!)
  local serve
  serve=$(address_of "$scratch/serve-$name.log")
  rm -rf "Tests/Parity/$name"
  "$bin" record --upstream "$serve" --out "Tests/Parity/$name" --port 0 >"$scratch/record-$name.log" 2>&1 &
  local recorder=$!
  pids+=($recorder)
  local proxy
  proxy=$(address_of "$scratch/record-$name.log")
  for lane in "$@"; do
    CLOUDKIT_API_TOKEN="$token" "$bin" run "$lane" Recipes/notes-permissions.yaml --store "$proxy" >/dev/null
  done
  kill -INT "$recorder"
  wait "$recorder" || true
  tail -1 "$scratch/record-$name.log"
}

record notes-permissions edit bob-edits
