#!/bin/sh
# Runs COMMAND with the machine "peer" listed in RIG_MACHINES as the agent
# of agent_fixture.sh in DIR, and its key as RIG_MACHINE_KEY, so that an
# open of NAME@peer connects to it.
#   with_agent.sh DIR COMMAND [ARGUMENTS...]
set -eu
dir=$1
shift
RIG_MACHINES="peer=$(cat "$dir/address")"
RIG_MACHINE_KEY="$dir/key/peer"
export RIG_MACHINES RIG_MACHINE_KEY
exec "$@"
