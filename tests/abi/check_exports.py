#!/usr/bin/env python3
"""Checks that librig exports exactly the functions its public headers
declare, each under the version node of lib/librig.map: a function declared
and not exported, or exported and not declared, fails."""
import re
import subprocess
import sys


def declared(headers):
    names = set()
    for header in headers:
        text = re.sub(r"/\*.*?\*/", "", open(header).read(), flags=re.S)
        for m in re.finditer(r"^[A-Za-z_][\w \*]*?\b(rig_\w+)\s*\(", text, flags=re.M):
            if "typedef" not in m.group(0) and "#define" not in m.group(0):
                names.add(m.group(1))
    return names


def exported(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True, text=True).stdout
    names = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtWw" and parts[2].startswith("rig_"):
            name, _, version = parts[2].partition("@@")
            names[name] = version
    return names


def main():
    library, headers = sys.argv[1], sys.argv[2:]
    want = declared(headers)
    have = exported(library)
    problems = [f"declared, not exported: {n}" for n in sorted(want - have.keys())]
    problems += [f"exported, not declared: {n}" for n in sorted(have.keys() - want)]
    problems += [f"exported without a version: {n}" for n, v in sorted(have.items()) if not v]
    for p in problems:
        print(p)
    print(f"{len(want)} functions declared, {len(have)} exported")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
