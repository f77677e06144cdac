"""Ctrl-C during a wait on a hung sim device raises KeyboardInterrupt at
once, and the device is kept (RIG_EINTR loses nothing).  The wait runs in a
child python, which leaves with os._exit: its hung work never completes."""

import re

from conftest import run_python

CHILD = r"""
import ctypes, os, signal, sys, threading, time
import rig

# The head of sim_inject.h's rig_sim_inject_t, the capability sim devices
# declare for tests.
class Inject(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("device", ctypes.c_void_p),
                ("fault_at", ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_char_p)),
                ("hang_at", ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64))]

sim = rig.open("SIM:0", "hang_ms=600000")
inject = Inject.from_address(sim.capability("sim.inject"))
b = rig.Buffer.create(sim, 4096)
inject.hang_at(inject.device, sim.submitted + 1)
point = b.submit_fill(1)
sent = []

def interrupt():
    time.sleep(0.5)
    sent.append(time.monotonic())
    os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=interrupt, daemon=True).start()
try:
    {wait}
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted after %.3f s" % (time.monotonic() - sent[0]))
print("lost:", sim.lost, "reached:", point.reached())
sys.stdout.flush()
os._exit(0)
"""


def interrupted_after(wait):
    child = run_python(CHILD.replace("{wait}", wait), timeout=30)
    assert child.returncode == 0, child.stderr
    found = re.search(r"interrupted after ([0-9.]+) s", child.stdout)
    assert found, child.stdout + child.stderr
    assert "lost: None reached: False" in child.stdout, child.stdout
    return float(found.group(1))


def test_ctrl_c_ends_a_point_wait_within_half_a_second():
    assert interrupted_after("point.wait()") < 0.5


def test_ctrl_c_ends_a_buffer_wait_within_half_a_second():
    assert interrupted_after("b.wait()") < 0.5
