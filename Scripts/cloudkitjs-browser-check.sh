#!/usr/bin/env bash
# Runs a web app on Apple's CloudKit JS (Scripts/cloudkitjs/browser-app.html) in headless Chromium against a
# fresh `sharelane serve`: the page is served from a loopback origin of its own with the cloudkit.js you give
# (read where it lies; Apple's file is never kept in this repository, its licence), signs in through CloudKit
# JS's button and serve's popup, creates a zone, saves and queries records, shares the zone, reads the share's
# metadata, signs out, and a second person signs in and accepts the share.
#
#   Scripts/cloudkitjs-browser-check.sh path/to/cloudkit.js [SCREENSHOT.png]
#
# Needs node (18 or later) and Chromium (`chromium`, `chromium-browser` or `google-chrome` on the PATH, or
# CHROMIUM=path). Prints one line per step and `N passed, N failed`; exits 1 when a step failed.
# SHARELANE=path/to/sharelane uses that binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."

cloudkit_js=${1:-}
screenshot=${2:-}
if [ -z "$cloudkit_js" ] || [ ! -f "$cloudkit_js" ]; then
  echo "usage: Scripts/cloudkitjs-browser-check.sh PATH_TO_CLOUDKIT_JS [SCREENSHOT.png] (Apple's cloudkit.js, version 2)" >&2
  exit 2
fi
command -v node >/dev/null 2>&1 || { echo "cloudkitjs-browser-check: node is needed (18 or later)" >&2; exit 2; }
source Scripts/cloudkitjs/serve-fixture.sh
find_chromium cloudkitjs-browser-check
prepare_serve

api_token="cloudkitjs-browser-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
start_serve cloudkitjs-browser-check "$api_token"

node Scripts/cloudkitjs/browser-driver.mjs "$chromium" "$cloudkit_js" "$base_url" "$api_token" ${screenshot:+"$screenshot"}
