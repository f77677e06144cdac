"""The rig package's tests: run from the tree (the package beside them) or,
with RIG_PYTHON_INSTALLED=1, against an installed package.  RIG_LIBRARY
names the library (the CTest test passes the build's), RIGD the rigd that
the service tests start, RIG_BUILD_DIR the build the install test installs.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1]
ROOT = PACKAGE.parents[1]
if not os.environ.get("RIG_PYTHON_INSTALLED"):
    sys.path.insert(0, str(PACKAGE))

import rig  # noqa: E402


def build_dir():
    named = os.environ.get("RIG_BUILD_DIR")
    if named:
        return pathlib.Path(named)
    return pathlib.Path(rig.library_path).resolve().parents[1]


@pytest.fixture
def mem():
    return rig.open("MEM:0")


@pytest.fixture
def mem1():
    return rig.open("MEM:1")


def python_env(**extra):
    """The environment of a child python that imports this same package."""
    env = dict(os.environ)
    if not os.environ.get("RIG_PYTHON_INSTALLED"):
        env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE), env.get("PYTHONPATH", "")])
    env.setdefault("RIG_LIBRARY", rig.library_path)
    env.update(extra)
    return env


def run_python(code, timeout=60, **env):
    """Runs code in a child python; answers its CompletedProcess."""
    return subprocess.run([sys.executable, "-c", code], env=python_env(**env), capture_output=True,
                          text=True, timeout=timeout)


class Rigd:
    """A rigd on a private socket, as tests/service/rigd_fixture.sh starts one."""

    def __init__(self, program, devices="MEM:0,SIM:0", env=None):
        self.dir = tempfile.mkdtemp(prefix="rig-py-rigd-")
        self.socket = os.path.join(self.dir, "rigd.sock")
        self.log = open(os.path.join(self.dir, "rigd.log"), "w")
        self.process = subprocess.Popen([str(program), "--socket", self.socket, "--devices", devices, "--foreground"],
                                        stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
                                        env=env)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.socket):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("rigd did not start: " + open(self.log.name).read())
            time.sleep(0.05)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def rigd_program():
    named = os.environ.get("RIGD")
    program = pathlib.Path(named) if named else build_dir() / "service" / "rigd"
    if not program.exists():
        pytest.skip("no rigd at %s (set RIGD)" % program)
    return program


@pytest.fixture(scope="module")
def rigd():
    server = Rigd(rigd_program())
    yield server
    server.stop()
