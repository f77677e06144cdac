#!/usr/bin/env python3
"""Shows that packaging/abi/check_abi.py catches ABI breaks: it runs the
check on copies of the public headers and of lib/librig.map, mutated one
way each, against the committed baseline.  Removing an exported function
or changing a public struct's layout must fail the check; adding a
function (to a header and the map), or appending a member to an options
struct that carries its size, must pass it.

Usage: test_abi_check.py CHECK_ABI CC INCLUDE_DIR MAP BASELINE_DIR SONAME"""
import os
import shutil
import subprocess
import sys
import tempfile

HEADERS = ["rig.h", "edge.h", "disk.h", "service.h"]


def replace_once(path, old, new):
    text = open(path).read()
    if text.count(old) != 1:
        raise SystemExit(f"fixture text not found once in {path}: {old!r}")
    open(path, "w").write(text.replace(old, new))


def remove_function(tree):
    replace_once(os.path.join(tree, "rig", "rig.h"),
                 "rig_status_t rig_buffer_copy(rig_buffer_t *src, rig_buffer_t *dst);", "")


def grow_public_struct(tree):
    # rig_open_options_t gains a member between two: every offset after it moves.
    replace_once(os.path.join(tree, "rig", "rig.h"), "  size_t size;\n  /* Driver-specific",
                 "  size_t size;\n  int added;\n  /* Driver-specific")


def append_to_options(tree):
    # rig_open_options_t carries its size: a member at its end is allowed.
    replace_once(os.path.join(tree, "rig", "rig.h"), "  const char *config;\n} rig_open_options_t;",
                 "  const char *config;\n  int appended;\n} rig_open_options_t;")


def append_to_plain_struct(tree):
    # rig_box_t has no size member: even a member at its end breaks the ABI.
    replace_once(os.path.join(tree, "rig", "rig.h"), "  int64_t dst_pitch;\n} rig_box_t;",
                 "  int64_t dst_pitch;\n  int64_t appended;\n} rig_box_t;")


def add_function(tree):
    replace_once(os.path.join(tree, "rig", "rig.h"), "int rig_version(void);",
                 "int rig_version(void);\nint rig_added_for_test(void);")
    replace_once(os.path.join(tree, "librig.map"), "    rig_word;", "    rig_word;\n    rig_added_for_test;")


def unchanged(tree):
    pass


# (mutation, whether the check must pass, rule of the ABI it shows)
CASES = [
    (unchanged, True, "the headers as committed match the baseline"),
    (remove_function, False, "an exported function removed breaks the ABI"),
    (grow_public_struct, False, "a public struct's layout changed breaks the ABI"),
    (append_to_plain_struct, False, "a member appended to a struct without a size breaks the ABI"),
    (append_to_options, True, "a member appended to a size-first options struct keeps the ABI"),
    (add_function, True, "a function added keeps the ABI"),
]


def run_case(args, mutate):
    check_abi, cc, include, librig_map, baseline_dir, soname = args
    with tempfile.TemporaryDirectory() as tree:
        shutil.copytree(os.path.join(include, "rig"), os.path.join(tree, "rig"))
        shutil.copy(librig_map, os.path.join(tree, "librig.map"))
        mutate(tree)
        result = subprocess.run(
            [sys.executable, check_abi, "--cc", cc, "--include", tree, "--map", os.path.join(tree, "librig.map"),
             "--soname", soname, "--baseline-dir", baseline_dir,
             *[os.path.join(tree, "rig", h) for h in HEADERS]],
            capture_output=True, text=True)
        return result.returncode, result.stdout + result.stderr


def main():
    failures = 0
    for mutate, must_pass, rule in CASES:
        status, output = run_case(sys.argv[1:], mutate)
        if status not in (0, 1):
            print(f"WRONG: {mutate.__name__}: the check did not run (status {status})\n{output}")
            failures += 1
            continue
        passed = status == 0
        verdict = "ok" if passed == must_pass else "WRONG"
        print(f"{verdict}: {mutate.__name__}: check {'passed' if passed else 'failed'} ({rule})")
        if passed != must_pass:
            print(output)
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
