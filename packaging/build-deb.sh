#!/usr/bin/env bash
# Builds rig's Debian packages (librig1, librig-dev, rig-tools, rigd) from
# the working tree: copies the tree's files (copy-tree.sh) to a temporary
# directory, links packaging/debian there as
# debian/, runs dpkg-buildpackage -us -uc -b and lintian, and moves the
# .deb files into OUT_DIR.  Needs debhelper, dpkg-dev, fakeroot, lintian
# and the Build-Depends of packaging/debian/control.
#
# Usage: packaging/build-deb.sh OUT_DIR
set -euo pipefail

out=$(realpath -m "${1:?usage: build-deb.sh OUT_DIR}")
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/rig-deb-XXXXXX")
trap 'rm -rf "$work"' EXIT

mkdir -p "$out"
"$repo/packaging/copy-tree.sh" "$work/rig"
ln -s packaging/debian "$work/rig/debian"

(cd "$work/rig" && dpkg-buildpackage -us -uc -b -j"$(nproc)") >"$work/build.log" 2>&1 ||
  { tail -n 60 "$work/build.log"; echo "build-deb: dpkg-buildpackage failed" >&2; exit 1; }

changes=$(ls "$work"/*.changes)
lintian --fail-on error,warning "$changes"
mv "$work"/*.deb "$out"/
ls "$out"/*.deb
