#!/usr/bin/env bash
# Runs Apple's CloudKit Catalog web app (the sample of CloudKit JS calls Apple published; the CloudKit JS 2
# edition others keep up to date) in headless Chromium against a fresh `sharelane serve`: it signs in through
# CloudKit JS's button and serve's popup, then calls each of the Catalog's samples as its Run buttons do
# (current user, zones, records with an asset, changes, the public query by distance, subscriptions,
# notifications) and signs out (Scripts/cloudkit-catalog/catalog-driver.mjs). Neither the Catalog nor Apple's
# cloudkit.js is kept in this repository (their licences); give their paths, the Catalog as a checkout or as
# its git directory:
#
#   Scripts/cloudkit-catalog-check.sh PATH_TO_CATALOG PATH_TO_CLOUDKIT_JS
#
# Needs node (18 or later), git (for a git directory) and Chromium (`chromium`, `chromium-browser` or
# `google-chrome` on the PATH, or CHROMIUM=path). Prints one line per call and `N passed, N failed`; exits 1
# when a call failed. SHARELANE=path/to/sharelane uses that binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."

catalog=${1:-}
cloudkit_js=${2:-}
if [ -z "$catalog" ] || [ ! -d "$catalog" ] || [ -z "$cloudkit_js" ] || [ ! -f "$cloudkit_js" ]; then
  echo "usage: Scripts/cloudkit-catalog-check.sh PATH_TO_CATALOG PATH_TO_CLOUDKIT_JS (the CloudKit Catalog's checkout or git directory; Apple's cloudkit.js, version 2)" >&2
  exit 2
fi
command -v node >/dev/null 2>&1 || { echo "cloudkit-catalog-check: node is needed (18 or later)" >&2; exit 2; }
chromium=${CHROMIUM:-}
if [ -z "$chromium" ]; then
  for candidate in chromium chromium-browser google-chrome; do
    if command -v "$candidate" >/dev/null 2>&1; then chromium=$(command -v "$candidate"); break; fi
  done
fi
[ -n "$chromium" ] || { echo "cloudkit-catalog-check: Chromium is needed (apt-get install chromium, or CHROMIUM=path)" >&2; exit 2; }

if [ -z "${SHARELANE:-}" ]; then
  swift build --product sharelane >&2
  SHARELANE="$(swift build --show-bin-path)/sharelane"
fi

work=$(mktemp -d)
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

api_token="cloudkit-catalog-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
"$SHARELANE" serve --store "sqlite:$work/serve.sqlite" --port 0 --api-token "$api_token" \
  >"$work/serve.out" 2>"$work/serve.log" &
serve_pid=$!
base_url=""
for _ in $(seq 1 100); do
  base_url=$(sed -n 's/^sharelane serve: CloudKit Web Services on \(http:[^ ]*\) over .*/\1/p' "$work/serve.out")
  [ -n "$base_url" ] && break
  kill -0 "$serve_pid" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$base_url" ] || { echo "cloudkit-catalog-check: serve did not start" >&2; cat "$work/serve.log" >&2; exit 1; }

node Scripts/cloudkit-catalog/catalog-driver.mjs "$chromium" "$catalog" "$cloudkit_js" "$base_url" "$api_token"
