#!/usr/bin/env bash
# Installs rig's Debian packages on a fresh Debian 12 and uses them as a
# user would: builds the .deb files from the working tree
# (packaging/build-deb.sh, with lintian) while it makes a minimal Debian
# 12 root with debootstrap and the consumer's toolchain, installs the
# packages there with apt, and in that root runs `rig devices`, checks
# rigd's units and its user, builds and runs the consumer program with
# `pkg-config --cflags --libs rig` and with CMake's find_package(rig),
# and starts rigd as its user with clients sharing a buffer through it
# (`rig share`).  Needs root, network access to the mirror, debootstrap
# and what build-deb.sh needs.
#
# Usage: debian_root_check.sh [DEB_DIR]
#   DEB_DIR: .deb files built already (else they are built here)
#   RIG_DEBIAN_MIRROR: the mirror (default http://deb.debian.org/debian)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
mirror=${RIG_DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=$(mktemp -d "${TMPDIR:-/var/tmp}/rig-debroot-XXXXXX")
root=$work/root

rigd_pid=
cleanup() {
  [[ -n $rigd_pid ]] && kill "$rigd_pid" 2>/dev/null
  for mount in "$root/sys" "$root/proc"; do
    mountpoint -q "$mount" && umount -l "$mount"
  done
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "debian_root_check: $*" >&2
  exit 1
}

[[ $(id -u) -eq 0 ]] || fail "needs root (debootstrap, chroot)"

# A command in the root: in_root runs it; a background one runs the array
# itself, so that $! is the command's pid and not a subshell's.
root_command=(chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8
  DEBIAN_FRONTEND=noninteractive)
in_root() {
  "${root_command[@]}" "$@"
}

# The root with the consumer's toolchain: mostly the mirror's time, so it
# is made while the packages build.
make_root() {
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 30 "$work/debootstrap.log"; fail "debootstrap failed"; }
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys"
  # No service starts inside the root.
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod +x "$root/usr/sbin/policy-rc.d"
  in_root apt-get update -q >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt-get update"; }
  in_root apt-get install -y -q --no-install-recommends gcc libc6-dev pkg-config cmake make \
    >>"$work/apt.log" 2>&1 || { tail -n 40 "$work/apt.log"; fail "apt-get install of the toolchain"; }
}
make_root &
root_made=$!

if [[ $# -ge 1 ]]; then
  debs=$(realpath "$1")
else
  debs=$work/debs
  "$repo/packaging/build-deb.sh" "$debs" || { wait "$root_made"; exit 1; }
fi
wait "$root_made" || exit 1

mkdir -p "$root/opt/rig-debs" "$root/opt/consumer"
find "$debs" -maxdepth 1 -name '*.deb' ! -name '*-dbgsym_*' -exec cp {} "$root/opt/rig-debs/" \;
cp "$here/consumer/consumer.c" "$here/consumer/CMakeLists.txt" "$root/opt/consumer/"

in_root bash -c 'apt-get install -y -q --no-install-recommends /opt/rig-debs/*.deb' >>"$work/apt.log" 2>&1 ||
  { tail -n 40 "$work/apt.log"; fail "apt-get install of the packages"; }

echo "== rig devices (in a Debian 12 root)"
in_root rig devices
in_root rig version

echo "== rigd: its user, group and units"
in_root getent passwd rig >/dev/null || fail "no user rig after installing rigd"
in_root getent group rig >/dev/null || fail "no group rig after installing rigd"
in_root systemd-analyze verify --man=no /lib/systemd/system/rigd.socket /lib/systemd/system/rigd.service ||
  fail "rigd's units do not verify"

echo "== consumer built with pkg-config"
# shellcheck disable=SC2016  # expands inside the root
in_root bash -c 'cd /opt/consumer && cc consumer.c $(pkg-config --cflags --libs rig) -o consumer-pc && ./consumer-pc'

echo "== consumer built with find_package(rig)"
in_root bash -c 'cmake -S /opt/consumer -B /opt/consumer/build >/dev/null && cmake --build /opt/consumer/build >/dev/null &&
  /opt/consumer/build/consumer'

echo "== rigd as the user rig, and clients through it"
# As the service would run it: the user rig, the socket under /run/rig
# (systemd makes the directory; here install does), a memory device served.
in_root install -d -o rig -g rig -m 0755 /run/rig
"${root_command[@]}" setpriv --reuid=rig --regid=rig --init-groups \
  rigd --foreground --socket /run/rig/rigd.sock --devices MEM:0 >"$work/rigd.log" 2>&1 &
rigd_pid=$!
for _ in $(seq 100); do
  [[ -S $root/run/rig/rigd.sock ]] && break
  sleep 0.1
done
[[ -S $root/run/rig/rigd.sock ]] || { cat "$work/rigd.log"; fail "rigd did not start"; }
in_root rig devices --service /run/rig/rigd.sock | grep -qx 'MEM:0@rigd' || fail "rig devices does not list MEM:0@rigd"
in_root rig share --service /run/rig/rigd.sock || { cat "$work/rigd.log"; fail "rig share through rigd failed"; }
kill "$rigd_pid"
wait "$rigd_pid" || { cat "$work/rigd.log"; fail "rigd did not end cleanly on SIGTERM"; }
rigd_pid=

echo "debian_root_check: ok"
