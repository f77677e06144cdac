#!/usr/bin/env bash
# A client finds the packaged rigd: with RIG_SERVICE unset and no socket
# under $XDG_RUNTIME_DIR, `rig share` connects to /run/rig/rigd.sock.  The
# check runs in a mount namespace of its own whose /run is a fresh tmpfs,
# so the machine's /run is never touched; it exits 77 (skipped), saying
# why, where it cannot make one (not root, or no namespaces).
#
# Usage: packaged_rigd_check.sh RIG RIGD
set -euo pipefail

rig=$1 rigd=$2
if [[ ${1:-} != --inside ]]; then
  if [[ $(id -u) -ne 0 ]] || ! unshare --mount --propagation private true 2>/dev/null; then
    echo "SKIP: needs root and a mount namespace to stand a rigd at /run/rig/rigd.sock"
    exit 77
  fi
  exec unshare --mount --propagation private "$0" --inside "$rig" "$rigd"
fi
rig=$2 rigd=$3

mount -t tmpfs tmpfs /run
mkdir /run/rig
runtime=$(mktemp -d)
"$rigd" --socket /run/rig/rigd.sock --devices MEM:0 --foreground 2>"$runtime/rigd.log" &
rigd_pid=$!
trap 'kill "$rigd_pid" 2>/dev/null; wait "$rigd_pid" 2>/dev/null; rm -rf "$runtime"' EXIT
for _ in $(seq 100); do
  [[ -S /run/rig/rigd.sock ]] && break
  sleep 0.1
done
[[ -S /run/rig/rigd.sock ]] || { cat "$runtime/rigd.log"; echo "FAIL: rigd did not start"; exit 1; }

if ! out=$(env -u RIG_SERVICE XDG_RUNTIME_DIR="$runtime" timeout 120 "$rig" share 2>&1); then
  echo "$out"
  echo "FAIL: rig share did not find the rigd at /run/rig/rigd.sock"
  exit 1
fi
echo "$out"
grep -q "two processes shared MEM:0@rigd's memory through rigd" <<<"$out" || { echo "FAIL: no share"; exit 1; }
echo "PASS packaged_rigd"
