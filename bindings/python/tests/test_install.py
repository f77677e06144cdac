"""A program against an installed prefix: the build installed with
`cmake --install --prefix` into a temporary directory, the package with pip
beside it, and a program run with neither the tree nor RIG_LIBRARY, which
finds the prefix's librig.so.1 through the loader, opens MEM:0, copies and
verifies, and shares a buffer through the prefix's rigd, started here, with
a second process that imports it."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import PACKAGE, Rigd, build_dir

PROGRAM = r"""
import subprocess, sys
import rig

assert rig.library_path == "librig.so.1", rig.library_path
with open("/proc/self/maps") as maps:
    loaded = [line.split()[-1] for line in maps if "librig.so" in line]
assert loaded and all(path.startswith(sys.argv[1]) for path in loaded), loaded

mem = rig.open("MEM:0")
src = rig.Buffer.of_bytes(bytes(range(256)) * 16)
dst = rig.Buffer.create(mem, src.nbytes)
rig.copy(src, dst)
assert dst.read_bytes() == src.read_bytes()
print("copied and verified", dst.nbytes)

served = rig.connect(sys.argv[2]).open("MEM:0")
shared = rig.Buffer.create(served, 4096)
shared.fill(0x42)
token = rig.share(shared)
importer = (
    "import rig, sys\n"
    "b = rig.import_token(rig.connect(sys.argv[1]).open('MEM:0'), int(sys.argv[2]))\n"
    "assert b.read_bytes() == b'\\x42' * 4096\n"
    "b.view(2048, 2048).fill(0x24)\n")
subprocess.run([sys.executable, "-c", importer, sys.argv[2], str(token)], check=True)
assert shared.read_bytes() == b"\x42" * 2048 + b"\x24" * 2048
print("shared through rigd")
"""


def installed(prefix, name):
    # Not a configuration file of that name (etc/default/rigd).
    found = sorted(p for p in prefix.rglob(name)
                   if (p.is_file() or p.is_symlink()) and "etc" not in p.relative_to(prefix).parts)
    assert found, "the install has no " + name
    return found[0]


def test_a_program_against_an_installed_prefix(tmp_path):
    if os.environ.get("RIG_SKIP_INSTALL_TEST"):
        pytest.skip(os.environ["RIG_SKIP_INSTALL_TEST"])
    build = build_dir()
    if not (build / "cmake_install.cmake").exists():
        pytest.skip("%s is not a build directory (set RIG_BUILD_DIR)" % build)
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", str(build), "--prefix", str(prefix)], check=True,
                   capture_output=True)
    # pip builds in the source directory: a copy keeps the tree clean.
    source = tmp_path / "source"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("tests", "__pycache__", "*.egg-info"))
    site = tmp_path / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-deps",
                          "--no-index", "--target", str(site), str(source)], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stdout + pip.stderr

    libdir = installed(prefix, "librig.so.1").parent
    env = {k: v for k, v in os.environ.items() if k not in ("RIG_LIBRARY", "PYTHONPATH", "RIG_SERVICE")}
    env.update(PYTHONPATH=str(site), LD_LIBRARY_PATH=str(libdir), RIG_PYTHON_INSTALLED="1")
    rigd = Rigd(installed(prefix, "rigd"), devices="MEM:0", env=env)
    try:
        run = subprocess.run([sys.executable, "-c", PROGRAM, str(prefix), rigd.socket], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
    finally:
        rigd.stop()
    assert run.returncode == 0, run.stdout + run.stderr
    assert "copied and verified 4096" in run.stdout and "shared through rigd" in run.stdout


def test_the_package_runs_from_the_tree_without_rig_library():
    """From a checkout the package finds the build tree's library."""
    if os.environ.get("RIG_PYTHON_INSTALLED"):
        pytest.skip("the installed package")
    if not list(PACKAGE.parents[1].glob("build/*/lib/librig.so.1")):
        pytest.skip("no build in the tree")
    env = {k: v for k, v in os.environ.items() if k != "RIG_LIBRARY"}
    env["PYTHONPATH"] = str(PACKAGE)
    probe = subprocess.run([sys.executable, "-c", "import rig; print(rig.library_path)"], env=env,
                           capture_output=True, text=True, cwd=pathlib.Path("/"))
    assert probe.returncode == 0, probe.stderr
    assert "/build/" in probe.stdout and probe.stdout.strip().endswith("librig.so.1")
