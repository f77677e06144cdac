#!/usr/bin/env python3
"""Checks librig's ABI against the committed baseline of its SONAME.

The ABI of librig.so.N is what its public headers declare, exported under
the version nodes of lib/librig.map (tests/abi/check_exports.py checks that
the built library exports exactly that).  This script builds a surface
library from those two alone: one definition for each declared function,
compiled with debug information and linked with the version script and
the SONAME, so that abidw sees every public type's layout whatever flags
librig itself was built with.  It then compares the surface with
packaging/abi/<SONAME>.abi using abidiff:

  - a function removed or changed, a public type's layout changed, a
    symbol's version node changed: the check fails (exit status 1);
  - functions added: allowed (a release adds a version node for them),
    reported so the baseline is recorded again at the release;
  - members appended to a struct whose first member is `size_t size`
    (an options struct that carries the size its caller compiled):
    allowed, as DESIGN.md's conventions of the C API state;
  - no baseline for the SONAME (it moved): the check fails until one is
    recorded, with --update, for the new SONAME.
Exit status: 0 compatible, 1 changed (or no baseline), 2 the surface did
not build.

Usage: check_abi.py --cc CC --include DIR --map MAP --soname SONAME
                    --baseline-dir DIR [--update] HEADER...
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# abidiff's exit status bits (libabigail's abidiff_status).
ABIDIFF_ERROR = 1
ABIDIFF_USAGE_ERROR = 2
ABIDIFF_ABI_CHANGE = 4
ABIDIFF_ABI_INCOMPATIBLE_CHANGE = 8

ABIDW_FLAGS = ["--no-show-locs", "--no-comp-dir-path", "--no-corpus-path", "--drop-undefined-syms"]


def declarations(header):
    """The text of each rig_* function declaration in header, to its ';'."""
    text = re.sub(r"/\*.*?\*/", "", open(header).read(), flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    found = []
    for m in re.finditer(r"^[A-Za-z_][\w \*]*?\brig_\w+\s*\(", text, flags=re.M):
        if "typedef" in m.group(0) or "#define" in m.group(0):
            continue
        end = text.index(";", m.end())
        found.append(text[m.start():end].strip())
    return found


def size_first_structs(headers):
    """The structs whose first member is `size_t size`: the size the caller
    compiled, so that later releases may append members (DESIGN.md, the
    conventions of the C API)."""
    names = []
    for header in headers:
        text = open(header).read()
        names += re.findall(r"\bstruct\s+(rig_\w+)\s*\{\s*size_t\s+size\s*;", text)
    return names


def appendable_suppressions(headers, out):
    """An abidiff suppression file that allows members appended at the end
    of each size-first struct, and nothing else."""
    with open(out, "w") as f:
        for name in size_first_structs(headers):
            f.write(f"[suppress_type]\n  type_kind = struct\n  name = {name}\n"
                    f"  has_data_member_inserted_at = end\n\n")


def surface_source(headers):
    """C source defining every declared function with a body that traps."""
    lines = [f'#include "{os.path.abspath(h)}"' for h in headers]
    for header in headers:
        for decl in declarations(header):
            lines.append(f"{decl} {{ __builtin_trap(); }}")
    return "\n".join(lines) + "\n"


def build_surface(args, workdir):
    source = os.path.join(workdir, "surface.c")
    library = os.path.join(workdir, args.soname)
    with open(source, "w") as f:
        f.write(surface_source(args.headers))
    # C2x: a definition may leave a parameter unnamed, as declarations do.
    subprocess.run([args.cc, "-std=gnu2x", "-g", "-O0", "-fPIC", "-shared", "-w",
                    "-I", os.path.abspath(args.include), "-o", args.soname, "surface.c",
                    f"-Wl,--version-script={os.path.abspath(args.map)}", f"-Wl,-soname,{args.soname}"],
                   cwd=workdir, check=True)
    return library


def abidw(library, headers_dir, out):
    subprocess.run(["abidw", *ABIDW_FLAGS, "--headers-dir", headers_dir, "--out-file", out, library], check=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cc", default="cc")
    parser.add_argument("--include", required=True, help="the directory that holds rig/")
    parser.add_argument("--map", required=True)
    parser.add_argument("--soname", required=True)
    parser.add_argument("--baseline-dir", required=True)
    parser.add_argument("--update", action="store_true", help="record the baseline instead of checking")
    parser.add_argument("headers", nargs="+")
    args = parser.parse_args()

    baseline = os.path.join(args.baseline_dir, f"{args.soname}.abi")
    headers_dir = os.path.join(args.include, "rig")
    with tempfile.TemporaryDirectory() as workdir:
        library = build_surface(args, workdir)
        current = os.path.join(workdir, "current.abi")
        abidw(library, headers_dir, current)
        if args.update:
            shutil.copyfile(current, baseline)
            print(f"recorded {baseline}")
            return 0
        if not os.path.exists(baseline):
            print(f"no ABI baseline for {args.soname}: record one with --update "
                  f"(a new SONAME starts a new baseline)")
            return 1
        suppressions = os.path.join(workdir, "appendable.abignore")
        appendable_suppressions(args.headers, suppressions)
        result = subprocess.run(["abidiff", "--no-added-syms", "--suppressions", suppressions, baseline, current],
                                capture_output=True, text=True)
        print(result.stdout, end="")
        print(result.stderr, end="", file=sys.stderr)
        if result.returncode & (ABIDIFF_ERROR | ABIDIFF_USAGE_ERROR):
            print("abidiff failed")
            return 1
        if result.returncode & (ABIDIFF_ABI_CHANGE | ABIDIFF_ABI_INCOMPATIBLE_CHANGE):
            print(f"the ABI of {args.soname} changed against {os.path.basename(baseline)}: "
                  f"restore it, or move the SONAME and record a new baseline")
            return 1
        added = subprocess.run(["abidiff", baseline, current], capture_output=True, text=True)
        if added.returncode:
            print("functions added since the baseline (allowed; record it again at the release):")
            print(added.stdout, end="")
        print(f"{args.soname}: ABI compatible with {os.path.basename(baseline)}")
        return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as e:
        # A surface that does not build is no verdict on the ABI.
        print(f"failed: {' '.join(e.cmd)}", file=sys.stderr)
        sys.exit(2)
