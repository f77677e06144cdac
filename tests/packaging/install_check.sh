#!/usr/bin/env bash
# Installs a build into a staging root (DESTDIR) and checks what a user of
# the install gets: librig.so.1 with its SONAME and file version, the
# headers, rig.pc, the CMake package, the man pages and the tool; then
# builds the consumer program once with `pkg-config --cflags --libs rig`
# and once with CMake's find_package(rig), and runs both and the tool.
#
# Usage: install_check.sh BUILD_DIR CONSUMER_DIR
set -euo pipefail

build=$1
consumer=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/rig-install-XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root

fail() {
  echo "install_check: $*" >&2
  exit 1
}

DESTDIR=$root cmake --install "$build" >"$work/install.log"

# The library: the real file, the SONAME link and the development link.
soname_link=$(find "$root" -name librig.so.1)
[[ -L $soname_link ]] || fail "no librig.so.1 link"
libdir=$(dirname "$soname_link")
real=$(readlink "$soname_link")
[[ $real =~ ^librig\.so\.1\.[0-9]+\.[0-9]+$ ]] || fail "librig.so.1 points at $real, not a versioned file"
[[ -f $libdir/$real && ! -L $libdir/$real ]] || fail "$real is not a file"
[[ $(readlink "$libdir/librig.so") == librig.so.1 ]] || fail "librig.so does not point at librig.so.1"
readelf -d "$libdir/$real" | grep -q 'Library soname: \[librig.so.1\]' || fail "$real has no SONAME librig.so.1"

prefix=${libdir%/lib*}
for file in include/rig/rig.h include/rig/rig.hpp include/rig/device_buffer.hpp include/rig/edge.h include/rig/disk.h include/rig/service.h \
            bin/rig share/man/man3/rig_open.3 share/man/man7/rig.7 share/man/man1/rig.1; do
  [[ -e $prefix/$file ]] || fail "not installed: $file"
done
pc_dir=$libdir/pkgconfig
[[ -f $pc_dir/rig.pc ]] || fail "no rig.pc in $pc_dir"
[[ -f $libdir/cmake/rig/rigConfig.cmake && -f $libdir/cmake/rig/rigConfigVersion.cmake ]] ||
  fail "no CMake package in $libdir/cmake/rig"
if grep -rq "$build" "$pc_dir/rig.pc" "$libdir/cmake/rig"; then
  fail "an installed file names the build directory"
fi

export LD_LIBRARY_PATH=$libdir

# pkg-config, the sysroot prefixing the staging root to its paths.
flags=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$pc_dir pkg-config --cflags --libs rig)
# shellcheck disable=SC2086  # flags are words
cc "$consumer/consumer.c" $flags -o "$work/consumer-pc"
"$work/consumer-pc"

# CMake's find_package, pointed at the staged package.
cmake -S "$consumer" -B "$work/consumer-build" -G Ninja -Drig_DIR="$libdir/cmake/rig" >"$work/cmake.log" ||
  { cat "$work/cmake.log"; fail "find_package(rig) failed"; }
cmake --build "$work/consumer-build" >"$work/build.log" || { cat "$work/build.log"; fail "consumer build"; }
"$work/consumer-build/consumer"

"$prefix/bin/rig" version
echo "install_check: ok"
