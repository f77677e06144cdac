#!/usr/bin/env python3
"""The layout's one door (DESIGN.md, Layout): drivers/, io/ and service/
reach the core only through internal/rig_internal/, by name; lib/ names no
driver's header; the door's headers include no other header of lib/'s.

Usage: check_includes.py SOURCE_DIR.  Prints each include that breaks the
rule, with its file and line, and exits 1 where there is one."""

import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = {".c", ".cpp", ".h", ".hpp"}


def includes(path):
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        match = INCLUDE.match(line)
        if match:
            yield number, match.group(1)


def under(path, folder):
    return folder == path or folder in path.parents


def main(root):
    root = root.resolve()
    lib, drivers, door = root / "lib", root / "drivers", root / "internal" / "rig_internal"
    broken = []

    def check(path, allowed, refuse_bare):
        """allowed(target) says whether a header the include reaches by its
        own folder may be included; refuse_bare(name) says why a name found
        through the include path may not be, or None."""
        for number, name in includes(path):
            where = f"{path.relative_to(root)}:{number}: \"{name}\""
            beside = (path.parent / name).resolve()
            if beside.exists():
                if not allowed(beside):
                    broken.append(f"{where} reaches {beside.relative_to(root)}")
                continue
            why = refuse_bare(name)
            if why:
                broken.append(f"{where} {why}")

    def lib_header(name):
        if name.startswith("rig_internal/"):
            return None if (root / "internal" / name).exists() else "names no header of the door"
        if (lib / name).exists():
            return "names a header of lib/ (through the door only: rig_internal/...)"
        return None

    for area in ("drivers", "io", "service"):
        for path in sorted((root / area).rglob("*")):
            if path.suffix not in SOURCES:
                continue
            if area == "drivers":
                own = drivers / path.relative_to(drivers).parts[0]
                allowed = lambda t, own=own: under(t, own) or under(t, drivers / "common")
            else:
                allowed = lambda t, own=root / area: under(t, own)
            check(path, allowed, lib_header)

    def driver_header(name):
        if name.startswith("rig_internal/") or (lib / name).exists():
            return None
        if list(drivers.rglob(pathlib.PurePath(name).name)):
            return "names a driver's header"
        return None

    for path in sorted(lib.rglob("*")):
        if path.suffix in SOURCES:
            check(path, lambda t: not under(t, drivers), driver_header)

    for path in sorted(door.glob("*")):
        check(path, lambda t: under(t, door),
              lambda name: "includes a header outside the door" if (lib / name).exists() else None)

    for line in broken:
        print(line)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
