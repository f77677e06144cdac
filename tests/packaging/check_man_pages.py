#!/usr/bin/env python3
"""Checks that the section 3 man pages name every function the public
headers declare in their NAME sections (so `man` and `apropos` find each),
and that every page a SEE ALSO names exists or belongs to another
project.

Usage: check_man_pages.py MAN_DIR CHECK_EXPORTS_DIR HEADER..."""
import glob
import os
import re
import sys


def name_section(page):
    text = open(page).read()
    m = re.search(r"^\.SH NAME\n(.*?)\\-", text, flags=re.S | re.M)
    return set(re.findall(r"\brig_\w+", m.group(1))) if m else set()


def see_also(page):
    text = open(page).read()
    m = re.search(r"^\.SH SEE ALSO\n(.*)", text, flags=re.S | re.M)
    return set(re.findall(r"^\.BR (\w+) \((\d)\)", m.group(1), flags=re.M)) if m else set()


def main():
    man_dir, exports_dir, headers = sys.argv[1], sys.argv[2], sys.argv[3:]
    sys.path.insert(0, exports_dir)
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    from check_exports import declared

    pages = glob.glob(os.path.join(man_dir, "*.[1-8]"))
    named = set().union(*(name_section(p) for p in pages if p.endswith(".3")))
    problems = [f"no man page names {f}" for f in sorted(declared(headers) - named)]
    present = {os.path.basename(p) for p in pages}
    for page in pages:
        for name, section in see_also(page):
            if name.startswith("rig") and f"{name}.{section}" not in present and not any(
                    name in name_section(p) for p in pages if p.endswith(f".{section}")):
                problems.append(f"{os.path.basename(page)}: SEE ALSO {name}({section}) names no page")
    for p in problems:
        print(p)
    print(f"{len(pages)} pages, {len(named)} functions named")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
