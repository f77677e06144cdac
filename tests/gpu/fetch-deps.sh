#!/usr/bin/env bash
# Makes a folder of Debian packages unpacked with dpkg -x, for building and
# testing rig on a machine where packages cannot be installed, such as a GPU
# machine without rig's -dev packages: tests/gpu/cuda.sh takes the folder as
# RIG_DEPS_PREFIX.  Run it on a Debian 12 machine whose apt can download:
#
#   tests/gpu/fetch-deps.sh [DIR [PACKAGE...]]
#
# DIR defaults to build/gpu-deps.  The PACKAGEs default to rig's build and
# test dependencies that such a machine lacks: liburing2 liburing-dev
# libnuma1 libnuma-dev libcriterion3 libcriterion-dev.  The libraries they
# need at run time come along: the Depends of each package that is not a
# -dev package, recursively, but for the C runtime every Linux system has
# (RIG_DEPS_SKIP, default "libc6 libgcc-s1 libstdc++6 gcc-12-base libcrypt1
# zlib1g"), which must not shadow the machine's own.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

dir=${1:-build/gpu-deps}
shift || true
packages=("$@")
if [ ${#packages[@]} -eq 0 ]; then
  packages=(liburing2 liburing-dev libnuma1 libnuma-dev libcriterion3 libcriterion-dev)
fi
read -r -a skip <<< "${RIG_DEPS_SKIP:-libc6 libgcc-s1 libstdc++6 gcc-12-base libcrypt1 zlib1g}"

# The packages a package depends on (alternatives included), without
# virtual ones.
depends_of() {
  apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances "$1" |
    awk '/^ *\|?(Pre)?Depends: / { print $2 }' | grep -v '^<' | sort -u
}

declare -A seen=()
for s in "${skip[@]}"; do seen[$s]=skip; done
all=()
queue=()
for p in "${packages[@]}"; do
  [ -n "${seen[$p]:-}" ] && continue
  seen[$p]=want
  all+=("$p")
  queue+=("$p")
done
while [ ${#queue[@]} -gt 0 ]; do
  p=${queue[0]}
  queue=("${queue[@]:1}")
  case $p in *-dev) continue ;; esac  # headers: their libraries are listed
  for d in $(depends_of "$p"); do
    [ -n "${seen[$d]:-}" ] && continue
    case $d in *-dev) seen[$d]=skip; continue ;; esac
    seen[$d]=want
    all+=("$d")
    queue+=("$d")
  done
done

echo "fetch-deps: ${#all[@]} packages into $dir: ${all[*]}"
mkdir -p "$dir/debs"
(cd "$dir/debs" && apt-get download "${all[@]}")
for deb in "$dir"/debs/*.deb; do
  dpkg -x "$deb" "$dir"
done
echo "fetch-deps: unpacked; build with RIG_DEPS_PREFIX=$(cd "$dir" && pwd) tests/gpu/cuda.sh"
