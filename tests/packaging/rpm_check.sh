#!/usr/bin/env bash
# Builds rig's RPMs from packaging/rpm/rig.spec with rpmbuild (Debian's rpm
# package serves) and checks what each holds against expected-rpm-files:
# every listed file in its package, and nothing else but rig-devel's
# section 3 pages.
#
# Usage: rpm_check.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/rig-rpm-XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
  echo "rpm_check: $*" >&2
  exit 1
}

spec=$repo/packaging/rpm/rig.spec
version=$(rpmspec -q --srpm --qf '%{version}' "$spec" 2>/dev/null)
mkdir -p "$work/SOURCES"
"$repo/packaging/copy-tree.sh" "$work/rig-$version"
tar -czf "$work/SOURCES/rig-$version.tar.gz" -C "$work" "rig-$version"
cp "$repo/packaging/systemd/rig.sysusers" "$work/SOURCES/"

load=()
[[ -n $(rpm --eval '%{?_unitdir}') ]] || load=(--load "$here/rpm-macros")
# --nodeps: on Debian no rpm database holds the BuildRequires.
# No debuginfo packages nor /usr/lib/.build-id links: the lists compared
# are the packages' own files.
rpmbuild "${load[@]}" -bb --nodeps --define "_topdir $work" --define "debug_package %{nil}" \
  --define "_build_id_links none" "$spec" >"$work/build.log" 2>&1 || { tail -n 60 "$work/build.log"; fail "rpmbuild failed"; }

# The packages' file lists as "PACKAGE PATH", man pages without .gz.
for rpm in "$work"/RPMS/*/*.rpm; do
  name=$(rpm -qp --qf '%{name}' "$rpm" 2>/dev/null)
  rpm -qlp "$rpm" 2>/dev/null | sed -e 's/\.gz$//' -e "s|^|$name |"
done | sort >"$work/actual"

grep -v '^#' "$here/expected-rpm-files" | sort >"$work/expected"
man3=$(grep -c '^rig-devel /usr/share/man/man3/rig_[a-z0-9_]*\.3$' "$work/actual" || true)
grep -v '^rig-devel /usr/share/man/man3/' "$work/actual" >"$work/actual-listed"
diff -u "$work/expected" "$work/actual-listed" || fail "the RPMs' files differ from expected-rpm-files"
[[ $man3 -gt 0 ]] || fail "rig-devel holds no section 3 pages"
rpms=("$work"/RPMS/*/*.rpm)
echo "rpm_check: ok (${#rpms[@]} packages, $man3 section 3 pages)"
