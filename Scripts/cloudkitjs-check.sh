#!/usr/bin/env bash
# Runs an app written with Apple's CloudKit JS in Node against a fresh `sharelane serve`, for whoever has a
# copy of cloudkit.js: for version 2, a sharing app (Scripts/cloudkitjs/sharing-app.js); for version 1, a
# movie catalogue on the public database, as a server with a key and as a signed-in user
# (Scripts/cloudkitjs/public-app-v1.js). Apple's file is never kept in this repository (its licence); give
# its path:
#
#   Scripts/cloudkitjs-check.sh path/to/cloudkit.js
#
# The app is chosen by the library's own CloudKit.VERSION.
# Needs node (18 or later, for its fetch) and openssl (the server-to-server key). Prints one line per step and
# `N passed, N failed`; exits 1 when a step failed. SHARELANE=path/to/sharelane uses that binary instead of
# building one.
set -euo pipefail
cd "$(dirname "$0")/.."

cloudkit_js=${1:-}
if [ -z "$cloudkit_js" ] || [ ! -f "$cloudkit_js" ]; then
  echo "usage: Scripts/cloudkitjs-check.sh PATH_TO_CLOUDKIT_JS (Apple's cloudkit.js, version 1 or 2)" >&2
  exit 2
fi
command -v node >/dev/null 2>&1 || { echo "cloudkitjs-check: node is needed (18 or later)" >&2; exit 2; }
command -v openssl >/dev/null 2>&1 || { echo "cloudkitjs-check: openssl is needed for the server-to-server key" >&2; exit 2; }

source Scripts/cloudkitjs/serve-fixture.sh
prepare_serve

openssl ecparam -name prime256v1 -genkey -noout -out "$work/eckey.pem" 2>/dev/null
openssl ec -in "$work/eckey.pem" -pubout -out "$work/eckey.pub.pem" 2>/dev/null
key_id="cloudkitjs-check-key"
api_token="cloudkitjs-check-$(openssl rand -hex 8)"

start_serve cloudkitjs-check "$api_token" --server-key "$key_id=$work/eckey.pub.pem"

# CloudKit JS calls the deprecated Buffer(): Node warns once per run; the warning is not the app's.
version=$(node --no-deprecation -e 'console.log(require(require("fs").realpathSync(process.argv[1])).VERSION || ""); process.exit(0)' "$cloudkit_js")
case "$version" in
  1.*) app=Scripts/cloudkitjs/public-app-v1.js ;;
  2.*) app=Scripts/cloudkitjs/sharing-app.js ;;
  *) echo "cloudkitjs-check: $cloudkit_js is CloudKit JS '$version'; versions 1 and 2 are known" >&2; exit 2 ;;
esac
echo "CloudKit JS $version: $app" >&2
node --no-deprecation "$app" "$cloudkit_js" "$base_url" "$api_token" "$key_id" "$work/eckey.pem"
