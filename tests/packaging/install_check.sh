#!/usr/bin/env bash
# Installs a build into a staging root (DESTDIR) and checks what a user of
# the install gets: librig.so.1 with its SONAME and file version, the
# headers, rig.pc, the CMake package, the man pages and the tool; then
# builds the consumer program once with `pkg-config --cflags --libs rig`
# and once with CMake's find_package(rig), and runs both and the tool.
# Then installs it again under a prefix of its own (cmake --install
# --prefix X) and checks that nothing lands outside X (rigd's defaults file
# under X/etc), that rig.pc finds X by itself, that rig and rigd run with
# no LD_LIBRARY_PATH (RUNPATH $ORIGIN/../lib), that a C++ program gets
# C++20 from rig::rig, that rig.hpp says why under C++17, and that the C
# headers compile under -std=c11.
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

# pkg-config: rig.pc finds the staged prefix from its own place.
flags=$(PKG_CONFIG_LIBDIR=$pc_dir pkg-config --cflags --libs rig)
# shellcheck disable=SC2086  # flags are words
cc "$consumer/consumer.c" $flags -o "$work/consumer-pc"
"$work/consumer-pc"

# CMake's find_package, pointed at the staged package.
cmake -S "$consumer" -B "$work/consumer-build" -G Ninja -Drig_DIR="$libdir/cmake/rig" >"$work/cmake.log" ||
  { cat "$work/cmake.log"; fail "find_package(rig) failed"; }
cmake --build "$work/consumer-build" >"$work/build.log" || { cat "$work/build.log"; fail "consumer build"; }
"$work/consumer-build/consumer"

"$prefix/bin/rig" version
unset LD_LIBRARY_PATH

# --- A prefix install -------------------------------------------------------
x=$work/prefix
cmake --install "$build" --prefix "$x" >"$work/prefix-install.log"
while IFS= read -r file; do
  [[ $file == "$x"/* ]] || fail "cmake --install --prefix wrote outside the prefix: $file"
done <"$build/install_manifest.txt"
if [[ -x $x/sbin/rigd ]]; then
  [[ -f $x/etc/default/rigd ]] || fail "rigd's defaults file is not under the prefix's etc"
  "$x/sbin/rigd" --version >/dev/null || fail "the installed rigd does not run without LD_LIBRARY_PATH"
fi
x_libdir=$(dirname "$(find "$x" -name librig.so.1)")
readelf -d "$x/bin/rig" | grep -q 'RUNPATH.*\[\$ORIGIN/\.\./lib' || fail "the installed rig has no RUNPATH \$ORIGIN/../lib"
"$x/bin/rig" version >/dev/null || fail "the installed rig does not run without LD_LIBRARY_PATH"

# rig.pc names the prefix it lies in: no --define-variable, no sysroot.
flags=$(PKG_CONFIG_LIBDIR=$x_libdir/pkgconfig pkg-config --cflags --libs rig)
[[ $(realpath -m "$(PKG_CONFIG_LIBDIR=$x_libdir/pkgconfig pkg-config --variable=prefix rig)") == "$(realpath "$x")" ]] ||
  fail "rig.pc's prefix is not the install's: $flags"
# shellcheck disable=SC2086  # flags are words
cc "$consumer/consumer.c" $flags -Wl,-rpath,"$x_libdir" -o "$work/consumer-prefix"
"$work/consumer-prefix"

# C++ through find_package with no standard asked: rig::rig brings C++20.
cmake -S "$consumer/../consumer-cpp" -B "$work/consumer-cpp" -G Ninja -DCMAKE_PREFIX_PATH="$x" \
  -DCMAKE_BUILD_RPATH="$x_libdir" >"$work/cmake-cpp.log" || { cat "$work/cmake-cpp.log"; fail "find_package(rig) for C++"; }
cmake --build "$work/consumer-cpp" >"$work/build-cpp.log" || { cat "$work/build-cpp.log"; fail "the C++ consumer did not build"; }
"$work/consumer-cpp/consumer_cpp"

# rig.hpp under C++17 stops with the reason; the C headers compile as C11.
echo '#include <rig/rig.hpp>' >"$work/old.cpp"
if c++ -std=c++17 -I"$x/include" -c "$work/old.cpp" -o "$work/old.o" 2>"$work/old.log"; then
  fail "rig.hpp compiled under C++17"
fi
grep -q "rig.hpp needs C++20" "$work/old.log" || { cat "$work/old.log"; fail "rig.hpp does not say why it needs C++20"; }
for header in rig.h edge.h disk.h service.h; do
  printf '#include <rig/%s>\nint main(void) { return 0; }\n' "$header" >"$work/c11.c"
  cc -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$x/include" -c "$work/c11.c" -o "$work/c11.o" ||
    fail "$header does not compile under -std=c11"
done
echo "install_check: ok"
