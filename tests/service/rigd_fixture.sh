#!/bin/sh
# Starts or stops the rigd that tests share as a CTest fixture: a rigd on a
# private socket in DIR, serving DEVICES, with the config file CONFIG if
# given.
#   rigd_fixture.sh start DIR RIGD DEVICES [CONFIG]
#   rigd_fixture.sh stop DIR
# rigd's output goes to DIR/rigd.log, so that CTest does not wait for it.
set -eu
action=$1
dir=$2
case "$action" in
start)
  rigd=$3
  devices=$4
  config=${5:-}
  mkdir -p "$dir"
  if [ -f "$dir/rigd.pid" ]; then kill "$(cat "$dir/rigd.pid")" 2>/dev/null || true; fi
  rm -f "$dir/rigd.sock" "$dir/rigd.pid"
  set -- --socket "$dir/rigd.sock" --devices "$devices" --foreground
  if [ -n "$config" ]; then set -- "$@" --config "$config"; fi
  "$rigd" "$@" </dev/null >"$dir/rigd.log" 2>&1 &
  echo $! >"$dir/rigd.pid"
  for _ in $(seq 100); do
    [ -S "$dir/rigd.sock" ] && exit 0
    kill -0 "$(cat "$dir/rigd.pid")" 2>/dev/null || break
    sleep 0.05
  done
  echo "rigd did not start:" >&2
  cat "$dir/rigd.log" >&2
  exit 1
  ;;
stop)
  [ -f "$dir/rigd.pid" ] || exit 0
  pid=$(cat "$dir/rigd.pid")
  rm -f "$dir/rigd.pid"
  kill "$pid" 2>/dev/null || exit 0
  # rigd ends its sessions and closes its devices on SIGTERM.
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || exit 0
    sleep 0.05
  done
  echo "rigd did not end on SIGTERM" >&2
  kill -KILL "$pid"
  exit 1
  ;;
esac
echo "usage: rigd_fixture.sh start DIR RIGD DEVICES [CONFIG] | stop DIR" >&2
exit 2
