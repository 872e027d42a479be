# Sourced by the client checks (cloudkitjs-check.sh, cloudkitjs-browser-check.sh, cloudkit-catalog-check.sh):
# the sharelane binary, Chromium, and a fresh `sharelane serve` in a scratch folder that goes when the script
# ends. Each function takes the calling script's name for its messages.

# Sets `chromium` to $CHROMIUM or the first Chromium on PATH; exits 2 saying how to get one.
find_chromium() {
  chromium=${CHROMIUM:-}
  if [ -z "$chromium" ]; then
    for candidate in chromium chromium-browser google-chrome; do
      if command -v "$candidate" >/dev/null 2>&1; then chromium=$(command -v "$candidate"); break; fi
    done
  fi
  [ -n "$chromium" ] || { echo "$1: Chromium is needed (apt-get install chromium, or CHROMIUM=path)" >&2; exit 2; }
}

# Sets `SHARELANE` (unless given) to a freshly built debug binary and `work` to a scratch folder removed,
# with the serve in it, when the script exits.
prepare_serve() {
  if [ -z "${SHARELANE:-}" ]; then
    swift build --product sharelane >&2
    SHARELANE="$(swift build --show-bin-path)/sharelane"
  fi
  work=$(mktemp -d)
  serve_pid=""
  trap 'cleanup_serve' EXIT
}

cleanup_serve() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  rm -rf "$work"
}

# start_serve NAME API_TOKEN [SERVE OPTIONS…]: starts serve on a free port over a SQLite file in `work` and
# sets `base_url` once it listens; exits 1 with serve's log when it does not start.
start_serve() {
  local name=$1 token=$2
  shift 2
  "$SHARELANE" serve --store "sqlite:$work/serve.sqlite" --port 0 --api-token "$token" "$@" \
    >"$work/serve.out" 2>"$work/serve.log" &
  serve_pid=$!
  base_url=""
  for _ in $(seq 1 100); do
    base_url=$(sed -n 's/^sharelane serve: CloudKit Web Services on \(http:[^ ]*\) over .*/\1/p' "$work/serve.out")
    [ -n "$base_url" ] && return 0
    kill -0 "$serve_pid" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "$name: serve did not start" >&2
  cat "$work/serve.log" >&2
  exit 1
}
