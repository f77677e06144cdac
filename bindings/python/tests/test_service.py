"""The service through the package, on a rigd the test starts: connect,
open a served device, share a buffer by token and by descriptor, and
import it in another process that verifies it and writes its second half."""

import os
import subprocess
import sys

import pytest

import rig
from conftest import python_env

IMPORTER = r"""
import os, sys
import rig
machine = rig.connect(sys.argv[1])
device = machine.open("MEM:0")
kind, value = sys.argv[2], int(sys.argv[3])
b = rig.import_token(device, value) if kind == "token" else rig.import_fd(device, value)
n = b.nbytes
assert b.read_bytes() == bytes([0x5A]) * n, "the imported bytes differ"
b.view(n // 2, n - n // 2).fill(0xC3)
print("verified", n)
"""


def test_connect_and_open_a_served_device(rigd):
    machine = rig.connect(rigd.socket)
    assert machine.lost is None and machine.name.startswith("rigd")
    device = machine.open("MEM:0")
    assert device.name == "MEM:0@" + machine.name
    with rig.Buffer.create(device, 64) as b:
        b.fill(1)
        assert b.read_bytes() == b"\x01" * 64
        assert b.host is None, "a proxy's memory is rigd's"


@pytest.mark.parametrize("kind", ["token", "fd"])
def test_share_with_another_process(rigd, kind):
    machine = rig.connect(rigd.socket)
    device = machine.open("MEM:0")
    b = rig.Buffer.create(device, 8192)
    b.fill(0x5A)
    pass_fds = ()
    if kind == "token":
        value = rig.share(b)
    else:
        value = rig.share_fd(b)
        pass_fds = (value,)
    child = subprocess.run([sys.executable, "-c", IMPORTER, rigd.socket, kind, str(value)], env=python_env(),
                           capture_output=True, text=True, timeout=60, pass_fds=pass_fds)
    if kind == "fd":
        os.close(value)
    assert child.returncode == 0, child.stderr
    assert "verified 8192" in child.stdout
    assert b.read_bytes() == b"\x5a" * 4096 + b"\xc3" * 4096
    b.close()


def test_an_unknown_token_is_refused(rigd):
    device = rig.connect(rigd.socket).open("MEM:0")
    with pytest.raises(rig.InvalidError):
        rig.import_token(device, 12345)
