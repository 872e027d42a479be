#!/usr/bin/env bash
# Builds and tests Examples/TripService, a server's package of its own that depends on sharelane by path and
# tests its CloudKit client with SharelaneTesting, as Docs/Testing.md shows, together with that page's worked
# test file. The package is set beside a link named `sharelane` to this checkout, so `package: "sharelane"`
# holds whatever this folder is called (a path dependency's identity is its folder's name).
#
#   Scripts/external-package.sh [swift test options…]
#
# Its build lives in the user's cache folder, one a checkout (the first builds sharelane's dependencies again:
# minutes), outside the checkout so no walk of the tree meets the link back to it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${XDG_CACHE_HOME:-$HOME/.cache}/sharelane-external/$(printf '%s' "$root" | cksum | cut -d' ' -f1)"
package="$work/TripService"
mkdir -p "$work"
ln -sfn "$root" "$work/sharelane"
rm -rf "$package"
mkdir -p "$package"
(cd "$root/Examples/TripService" && tar --exclude=./.build -cf - .) | (cd "$package" && tar -xf -)

# Docs/Testing.md's worked test file, as a reader copies it, with the recipe it names.
sed -n '/<!-- swift-server-example:begin -->/,/<!-- swift-server-example:end -->/p' "$root/Docs/Testing.md" \
  | sed -e '1,2d' -e '$d' | sed -e '$d' > "$package/Tests/AppTests/WorkedExampleTests.swift"
grep -q "SharelaneTesting" "$package/Tests/AppTests/WorkedExampleTests.swift" \
  || { echo "external-package: no worked example in Docs/Testing.md" >&2; exit 1; }
cp "$root/Recipes/sharelane.yaml" "$package/Recipes/sharelane.yaml"

cd "$package"
swift build --build-tests --scratch-path "$work/build"
swift test --skip-build --scratch-path "$work/build" "$@"
