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
source Scripts/cloudkitjs/serve-fixture.sh
find_chromium cloudkit-catalog-check
prepare_serve

api_token="cloudkit-catalog-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
start_serve cloudkit-catalog-check "$api_token"

node Scripts/cloudkit-catalog/catalog-driver.mjs "$chromium" "$catalog" "$cloudkit_js" "$base_url" "$api_token"
