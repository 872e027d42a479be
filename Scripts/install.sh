#!/usr/bin/env bash
# Installs sharelane under PREFIX: the binary, its man page and its bash, zsh and fish completions; or removes
# them again. `make install` and `make uninstall` run this.
#
#   Scripts/install.sh [install|uninstall]
#
# Environment:
#   PREFIX             where to install (default /usr/local): bin/, share/man/man1/, share/bash-completion/,
#                      share/zsh/site-functions/, share/fish/vendor_completions.d/, and share/sharelane/ (the
#                      recipe JSON Schema, which `sharelane init` points editors at, and the table of the
#                      reference's dictionaries, which `sharelane conformance` checks answers against)
#   DESTDIR            a staging root put before PREFIX, for packagers (default none)
#   CONFIGURATION      release (default) or debug: the build to install
#   SWIFT_BUILD_FLAGS  more flags for `swift build` (e.g. --static-swift-stdlib, for a binary that runs on a
#                      machine without the Swift toolchain)
#   BINARY             install this already-built sharelane instead of building one
#
# The man page is rendered by Scripts/manpage.py from the binary's own description of its commands
# (`sharelane --experimental-dump-help`, swift-argument-parser's JSON: what its `generate-manual` plugin reads
# too). The plugin is not used: it builds the whole package and a tool of its own again, and cannot run while
# another SwiftPM command holds .build, so it could not install an already-built binary. The completions are
# `sharelane completion SHELL`.
set -euo pipefail
cd "$(dirname "$0")/.."

action=${1:-install}
PREFIX=${PREFIX:-/usr/local}
CONFIGURATION=${CONFIGURATION:-release}
root="${DESTDIR:-}$PREFIX"
files=(
  "bin/sharelane"
  "share/man/man1/sharelane.1"
  "share/bash-completion/completions/sharelane"
  "share/zsh/site-functions/_sharelane"
  "share/fish/vendor_completions.d/sharelane.fish"
  "share/sharelane/recipe.schema.json"
  "share/sharelane/reference-dictionaries.json"
)

case "$action" in
install)
  case "$CONFIGURATION" in
  release | debug) ;;
  *) echo "install: CONFIGURATION is release or debug, not '$CONFIGURATION'" >&2; exit 1 ;;
  esac
  built="a $CONFIGURATION build"
  if [ -n "${BINARY:-}" ]; then
    built="$BINARY"
  else
    # shellcheck disable=SC2086 # the flags are words to split
    swift build -c "$CONFIGURATION" --product sharelane ${SWIFT_BUILD_FLAGS:-}
    # shellcheck disable=SC2086
    BINARY="$(swift build -c "$CONFIGURATION" --show-bin-path ${SWIFT_BUILD_FLAGS:-})/sharelane"
  fi
  [ -x "$BINARY" ] || { echo "install: no sharelane executable at $BINARY" >&2; exit 1; }
  command -v python3 >/dev/null 2>&1 || { echo "install: python3 renders the man page; install it and retry" >&2; exit 1; }

  # Everything is made in a scratch folder first, so a failure installs nothing.
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  "$BINARY" completion bash >"$scratch/sharelane.bash"
  "$BINARY" completion zsh >"$scratch/_sharelane"
  "$BINARY" completion fish >"$scratch/sharelane.fish"
  version=$("$BINARY" --version)
  "$BINARY" --experimental-dump-help | python3 Scripts/manpage.py --version "$version" >"$scratch/sharelane.1"

  install -d "$root/bin" "$root/share/man/man1" "$root/share/bash-completion/completions" \
    "$root/share/zsh/site-functions" "$root/share/fish/vendor_completions.d" "$root/share/sharelane"
  install -m 755 "$BINARY" "$root/bin/sharelane"
  install -m 644 "$scratch/sharelane.1" "$root/share/man/man1/sharelane.1"
  install -m 644 "$scratch/sharelane.bash" "$root/share/bash-completion/completions/sharelane"
  install -m 644 "$scratch/_sharelane" "$root/share/zsh/site-functions/_sharelane"
  install -m 644 "$scratch/sharelane.fish" "$root/share/fish/vendor_completions.d/sharelane.fish"
  install -m 644 Recipes/recipe.schema.json "$root/share/sharelane/recipe.schema.json"
  install -m 644 Docs/Reference/Dictionaries.json "$root/share/sharelane/reference-dictionaries.json"
  echo "Installed sharelane $version ($built) in $root:"
  for file in "${files[@]}"; do echo "  $root/$file"; done
  ;;
uninstall)
  for file in "${files[@]}"; do
    if [ -e "$root/$file" ]; then rm -f "$root/$file" && echo "Removed $root/$file"; fi
  done
  ;;
*)
  echo "usage: Scripts/install.sh [install|uninstall]   (PREFIX, DESTDIR, CONFIGURATION, BINARY)" >&2
  exit 1
  ;;
esac
