#!/bin/sh
# Starts or stops the agent that the conformance suite's remote device
# sets share as a CTest fixture: a rigd --listen 127.0.0.1:0 serving
# MEM:0 and SIM:0, its key ring DIR/ring holding the key "peer", of which
# DIR/key/peer is the client's copy; DIR/address gets the address it
# listens at (with_agent.sh reads both).  CONFIG's lines, if given, join
# its config file.
#   agent_fixture.sh start DIR RIGD [CONFIG]
#   agent_fixture.sh stop DIR
set -eu
action=$1
dir=$2
case "$action" in
start)
  rigd=$3
  config=${4:-}
  umask 077
  if [ -f "$dir/rigd.pid" ]; then kill "$(cat "$dir/rigd.pid")" 2>/dev/null || true; fi
  rm -rf "$dir"
  mkdir -p "$dir/ring" "$dir/key"
  printf 'the key of the conformance suite on another machine' >"$dir/ring/peer"
  cp "$dir/ring/peer" "$dir/key/peer"
  printf 'machine_keys = %s\ntest_knobs = allow\n' "$dir/ring" >"$dir/rigd.conf"
  if [ -n "$config" ]; then cat "$config" >>"$dir/rigd.conf"; fi
  # Made here: the background command's redirection may run after the
  # first read below.
  : >"$dir/rigd.log"
  "$rigd" --socket "$dir/rigd.sock" --devices MEM:0,SIM:0 --config "$dir/rigd.conf" --listen 127.0.0.1:0 \
    --foreground </dev/null >"$dir/rigd.log" 2>&1 &
  echo $! >"$dir/rigd.pid"
  for _ in $(seq 600); do
    address=$(sed -n 's/.*listening for machines on \([0-9.]*:[0-9]*\).*/\1/p' "$dir/rigd.log")
    if [ -n "$address" ]; then
      echo "$address" >"$dir/address"
      exit 0
    fi
    kill -0 "$(cat "$dir/rigd.pid")" 2>/dev/null || break
    sleep 0.05
  done
  echo "rigd did not listen for machines:" >&2
  cat "$dir/rigd.log" >&2
  exit 1
  ;;
stop)
  # The same rigd.pid, ended as the service fixture ends its rigd.
  exec "$(dirname "$0")/../service/rigd_fixture.sh" stop "$dir"
  ;;
esac
echo "usage: agent_fixture.sh start DIR RIGD [CONFIG] | stop DIR" >&2
exit 2
