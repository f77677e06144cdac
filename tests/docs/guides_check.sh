#!/usr/bin/env bash
# Builds and runs the examples of the language guides (docs/c.md, cpp.md,
# rust.md, go.md) as their readers would: against a prefix install of the
# build (cmake --install --prefix), with pkg-config for C, find_package for
# C++ and the bindings for Rust and Go, and a rigd of the install started
# here on a private socket.  Each language's first program copies through
# MEM:0, verifies, and shares a buffer through rigd; its load program reads
# a file into MEM:0.  Rust and Go are skipped, with the reason, where cargo
# or go is absent; C and C++ always run.
#
# Usage: guides_check.sh SOURCE_DIR BUILD_DIR
set -euo pipefail

source=$1 build=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/rig-guides-XXXXXX")
rigd_pid=
cleanup() {
  [[ -n $rigd_pid ]] && kill "$rigd_pid" 2>/dev/null && wait "$rigd_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "guides_check: $*" >&2
  exit 1
}

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
libdir=$(dirname "$(find "$prefix" -name librig.so.1)")
export PKG_CONFIG_PATH=$libdir/pkgconfig
unset RIG_SERVICE

"$prefix/sbin/rigd" --socket "$work/rigd.sock" --devices MEM:0 --foreground 2>"$work/rigd.log" &
rigd_pid=$!
for _ in $(seq 100); do
  [[ -S $work/rigd.sock ]] && break
  sleep 0.1
done
[[ -S $work/rigd.sock ]] || { cat "$work/rigd.log"; fail "rigd did not start"; }
export RIG_SERVICE=$work/rigd.sock

head -c $((3 * 1024 * 1024 + 4321)) /dev/urandom >"$work/weights.bin"

# Runs a guide's two programs and checks what they print.
run_programs() {
  local language=$1 first=$2 load=$3 out
  out=$(LD_LIBRARY_PATH=$libdir "$first") || fail "$language: the first program failed"
  echo "$out"
  grep -q "through MEM:0, verified" <<<"$out" && grep -q "shared through rigd as token" <<<"$out" ||
    fail "$language: the first program did not verify its copies and its share"
  out=$(LD_LIBRARY_PATH=$libdir "$load" "$work/weights.bin") || fail "$language: the load program failed"
  echo "$out"
  grep -q "load: $((3 * 1024 * 1024 + 4321)) bytes" <<<"$out" || fail "$language: the load program loaded other bytes"
}

extract() {
  mkdir -p "$work/$1"
  python3 "$(dirname "$0")/extract.py" "$source/docs/$1.md" "$work/$1" "$source" >/dev/null
}

# C: pkg-config, from the relocatable rig.pc.
extract c
for program in first load; do
  # shellcheck disable=SC2046  # pkg-config's flags are words
  cc -std=c11 -Wall -Werror "$work/c/$program.c" $(pkg-config --cflags --libs rig) -o "$work/c/$program"
done
run_programs C "$work/c/first" "$work/c/load"

# C++: find_package(rig), which brings C++20.
extract cpp
cmake -S "$work/cpp" -B "$work/cpp/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >"$work/cpp.log" 2>&1 &&
  cmake --build "$work/cpp/build" >>"$work/cpp.log" 2>&1 || { cat "$work/cpp.log"; fail "C++: the guide's programs did not build"; }
run_programs C++ "$work/cpp/build/first" "$work/cpp/build/load"

# Rust: the rig crate by path, librig through pkg-config.
if command -v cargo >/dev/null; then
  extract rust
  CARGO_TARGET_DIR=$work/rust/target cargo build --offline --quiet --manifest-path "$work/rust/Cargo.toml" ||
    fail "Rust: the guide's programs did not build"
  run_programs Rust "$work/rust/target/debug/first" "$work/rust/target/debug/load"
else
  echo "guides_check: SKIP Rust: cargo is not installed"
fi

# Go: the rig module by replace, librig through cgo's pkg-config.
if command -v go >/dev/null; then
  extract go
  (cd "$work/go" && GOCACHE=$work/go-cache GOPATH=$work/go-path GOFLAGS=-mod=mod GOPROXY=off \
    go build -o "$work/go/bin/" ./first ./load) || fail "Go: the guide's programs did not build"
  run_programs Go "$work/go/bin/first" "$work/go/bin/load"
else
  echo "guides_check: SKIP Go: go is not installed"
fi
echo "guides_check: ok"
