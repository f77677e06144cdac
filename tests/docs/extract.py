#!/usr/bin/env python3
"""Writes a guide's named code blocks into a directory: extract.py GUIDE
DIR SOURCE.  A block whose info string names a file after its language
("```c first.c") is written to DIR/first.c, with RIG_SOURCE replaced by
SOURCE (the tree's root).  Prints the files written; fails on none."""
import os
import re
import sys


def main():
    guide, directory, source = sys.argv[1:4]
    text = open(guide, encoding="utf-8").read()
    blocks = re.findall(r"^```\w+ (\S+)\n(.*?)^```$", text, flags=re.M | re.S)
    if not blocks:
        sys.exit(f"{guide}: no named code block")
    for name, body in blocks:
        path = os.path.join(directory, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(body.replace("RIG_SOURCE", source))
        print(path)


if __name__ == "__main__":
    main()
