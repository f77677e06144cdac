#!/usr/bin/env bash
# Runs a binding's suite against this build: run_suite.sh rust|go
# SOURCE_DIR BUILD_DIR.  pkg-config finds the build's librig through its
# rig-uninstalled.pc; the suite's own build goes under BUILD_DIR/bindings.
# Exits 77 (CTest's SKIP_RETURN_CODE), saying why, where the language's
# tool is absent, and fails where the suite ran no test.
set -euo pipefail

language=$1 source=$2 build=$3
export PKG_CONFIG_PATH=$build/packaging${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

case $language in
rust)
  command -v cargo >/dev/null || { echo "SKIP: cargo is not installed (apt install cargo)"; exit 77; }
  export CARGO_TARGET_DIR=$build/bindings/rust
  (cd "$source/bindings/rust" && cargo test --offline 2>&1) | tee "$log"
  grep -Eq '^test result: ok\. [1-9][0-9]* passed' "$log" || { echo "FAIL: cargo ran no test"; exit 1; }
  ;;
go)
  command -v go >/dev/null || { echo "SKIP: go is not installed (apt install golang-go)"; exit 77; }
  export GOCACHE=$build/bindings/go/cache GOPATH=$build/bindings/go/path GOFLAGS=-mod=mod GOPROXY=off
  (cd "$source/bindings/go" && go test -count=1 -v ./... 2>&1) | tee "$log"
  grep -Eq '^--- PASS' "$log" || { echo "FAIL: go ran no test"; exit 1; }
  ;;
*)
  echo "usage: run_suite.sh rust|go SOURCE_DIR BUILD_DIR" >&2
  exit 2
  ;;
esac
