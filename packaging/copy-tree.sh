#!/usr/bin/env bash
# Copies the repository's files, those git tracks or would add (not those
# it ignores, nor those deleted in the working tree), into DEST, so that a
# package builds from what the tree holds now.
#
# Usage: packaging/copy-tree.sh DEST
set -euo pipefail

dest=${1:?usage: copy-tree.sh DEST}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$dest"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' file; do [[ -e $file || -L $file ]] && printf '%s\0' "$file"; done |
  tar --null -T - -cf -) | tar -xf - -C "$dest"
