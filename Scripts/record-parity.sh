#!/usr/bin/env bash
# Records Tests/Parity/ again, each through `sharelane record` in front of a fresh `sharelane serve`:
# - notes-permissions: sharelane's own client (lanes of Recipes/notes-permissions.yaml: batch sign-ins, a zone,
#   records, a share, acceptances, edits, refusals);
# - cloudkitjs-sharing: the CloudKit JS sharing app (Scripts/cloudkitjs/sharing-app.js, run in Node as
#   Scripts/cloudkitjs-check.sh runs it) when CLOUDKIT_JS names Apple's cloudkit.js (2.4.0), which is never kept
#   here (its licence).
# Run it after a deliberate change of the emulator's answers, then review the diff.
#
# Usage: [CLOUDKIT_JS=path/to/cloudkit.js] Scripts/record-parity.sh [NAME…]   (the recordings to make again,
#        default all; builds the debug binary first; node 18 or later for the CloudKit JS recording)
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

# Starts a fresh serve and a recording proxy in front of it writing Tests/Parity/NAME: sets token and proxy.
start() { # NAME [NOTE]
  local name=$1
  token="parity-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
  "$bin" serve --store memory: --port 0 --api-token "$token" >"$scratch/serve-$name.log" 2>&1 &
  pids+=($!)
  local serve
  serve=$(address_of "$scratch/serve-$name.log")
  rm -rf "Tests/Parity/$name"
  local note=()
  [ -n "${2:-}" ] && note=(--note "$2")
  "$bin" record --upstream "$serve" --out "Tests/Parity/$name" --port 0 "${note[@]}" >"$scratch/record-$name.log" 2>&1 &
  recorder=$!
  pids+=($recorder)
  proxy=$(address_of "$scratch/record-$name.log")
}

stop() { # NAME
  kill -INT "$recorder"
  wait "$recorder" || true
  tail -1 "$scratch/record-$1.log"
}

wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(notes-permissions cloudkitjs-sharing)
wants() { # NAME
  local name
  for name in "${wanted[@]}"; do [ "$name" = "$1" ] && return 0; done
  return 1
}

if wants notes-permissions; then
  start notes-permissions
  for lane in edit bob-edits; do
    # A lane whose expectation fails is recorded all the same: the recording holds what serve answered.
    CLOUDKIT_API_TOKEN="$token" "$bin" run "$lane" Recipes/notes-permissions.yaml --store "$proxy" >/dev/null ||
      echo "record-parity: lane $lane failed; its exchanges are recorded all the same" >&2
  done
  stop notes-permissions
fi

wants cloudkitjs-sharing || exit 0
cloudkit_js=${CLOUDKIT_JS:-}
if [ -z "$cloudkit_js" ] || [ ! -f "$cloudkit_js" ]; then
  echo "record-parity: cloudkitjs-sharing not recorded again: set CLOUDKIT_JS to Apple's cloudkit.js (2.4.0)" >&2
  exit 0
fi
command -v node >/dev/null 2>&1 || { echo "record-parity: node is needed (18 or later)" >&2; exit 1; }
start cloudkitjs-sharing "Recorded by Scripts/record-parity.sh: Scripts/cloudkitjs/sharing-app.js (Apple's CloudKit JS 2.4.0 in Node) through sharelane record in front of a fresh sharelane serve; sign-ins, zones, records, shares and their acceptance, change feeds, subscriptions, an asset upload and download, refusals."
# CloudKit JS 2.4.0 calls the deprecated Buffer(): Node warns once per run; the warning is not the app's.
node --no-deprecation Scripts/cloudkitjs/sharing-app.js "$cloudkit_js" "$proxy" "$token" | tail -1
stop cloudkitjs-sharing
