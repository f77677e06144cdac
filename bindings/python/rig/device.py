"""Devices, their budgets and timelines, and points on them.

A device is a record rig keeps for the rest of the process (rig.h): a
Device never dangles and is never released, so it needs no close; one
Device object stands for each rig_device_t.
"""

import ctypes
import threading

from . import _interrupt
from ._lib import lib, text
from ._types import POINT_VALUE_MAX, OpenOptions, Point as _CPoint, probe_fn
from .errors import check

_devices = {}
_devices_lock = threading.Lock()


def _options(config):
    if config is None:
        return None
    return ctypes.byref(OpenOptions(ctypes.sizeof(OpenOptions), config.encode()))


class Device:
    """A device (rig_device_t *).  Equal devices are the same object."""

    __slots__ = ("_ptr", "__weakref__")

    def __init__(self, ptr):
        self._ptr = ptr

    @staticmethod
    def of(ptr):
        """The Device of a rig_device_t * (None for NULL)."""
        if not ptr:
            return None
        with _devices_lock:
            device = _devices.get(ptr)
            if device is None:
                device = _devices[ptr] = Device(ptr)
            return device

    _as_parameter_ = property(lambda self: ctypes.c_void_p(self._ptr))

    # Properties: they take no lock and answer for a lost device too.
    name = property(lambda self: text(lib.rig_device_name(self._ptr)))
    arch = property(lambda self: text(lib.rig_device_arch(self._ptr)))
    instruction_set = property(lambda self: text(lib.rig_device_instruction_set(self._ptr)))
    bus = property(lambda self: text(lib.rig_device_bus(self._ptr)))
    runs_on_host = property(lambda self: bool(lib.rig_device_runs_on_host(self._ptr)))
    alignment = property(lambda self: lib.rig_device_alignment(self._ptr))
    cache_bytes = property(lambda self: lib.rig_device_cache_bytes(self._ptr))
    submitted = property(lambda self: lib.rig_submitted(self._ptr))
    lost = property(lambda self: text(lib.rig_lost(self._ptr)), doc="why the device is lost, or None")
    budget = property(lambda self: lib.rig_budget(self._ptr))
    allocated = property(lambda self: lib.rig_allocated(self._ptr))

    def capability(self, key):
        """The address of the record the driver declares under key, or None."""
        return lib.rig_device_capability(self._ptr, key.encode())

    def reaches(self, other):
        return bool(lib.rig_reaches(self._ptr, other._ptr))

    def signaled(self):
        out = ctypes.c_uint64()
        check(lib.rig_signaled(self._ptr, ctypes.byref(out)))
        return out.value

    def set_budget(self, n):
        check(lib.rig_set_budget(self._ptr, n))

    def free_cache(self):
        check(lib.rig_free_cache(self._ptr))

    def close(self):
        """rig_close: waits for d's work, then loses d ("closed") for every
        opener of its name."""
        check(_interrupt.call(lib.rig_close, self._ptr))

    def point(self, value):
        """The point (self, value)."""
        if not 0 <= value <= POINT_VALUE_MAX:
            raise ValueError("a point's value is at most 2^47 - 1, not %d" % value)
        return Point(lib.rig_point_make(self._ptr, value))

    def __eq__(self, other):
        return isinstance(other, Device) and bool(lib.rig_device_equal(self._ptr, other._ptr))

    def __hash__(self):
        return hash(self._ptr)

    def __repr__(self):
        return "rig.Device(%r)" % self.name


def open(name, config=None):  # noqa: A001 - rig_open's name
    """rig_open: the device named name ("MEM:0", "SIM:1", "CUDA:0@rigd"),
    with the driver configuration config."""
    out = ctypes.c_void_p()
    check(lib.rig_open(name.encode(), _options(config), ctypes.byref(out)))
    return Device.of(out.value)


def host():
    """rig_host: this process, "CPU"."""
    return Device.of(lib.rig_host())


def memory_device(name):
    out = ctypes.c_void_p()
    check(lib.rig_memory_device(name.encode(), ctypes.byref(out)))
    return Device.of(out.value)


def probe():
    """rig_probe: [(name, why)] for every device name rig's drivers know;
    why is None where the name opens."""
    found = []
    thrown = []

    def each(name, why, _context):
        try:
            found.append((text(name), text(why)))
        except BaseException as e:  # kept for the caller
            thrown.append(e)

    callback = probe_fn(each)
    check(lib.rig_probe(callback, None))
    if thrown:
        raise thrown[0]
    return found


class Point:
    """A point (rig_point_t): a device's slot with one of its values.  Plain
    data; copy it freely."""

    __slots__ = ("_c",)

    def __init__(self, c_point=None):
        self._c = c_point if c_point is not None else _CPoint()

    @property
    def device(self):
        """The device, until a later device takes its slot: None then."""
        return Device.of(lib.rig_point_device(self._c))

    @property
    def value(self):
        return lib.rig_point_value(self._c)

    @property
    def bits(self):
        return self._c.bits

    def wait(self):
        """Returns once the point is reached (interruptible by Ctrl-C)."""
        check(_interrupt.call(lib.rig_point_wait, self._c))

    def reached(self):
        out = ctypes.c_bool()
        check(lib.rig_point_reached(self._c, ctypes.byref(out)))
        return out.value

    def __eq__(self, other):
        return isinstance(other, Point) and self._c.bits == other._c.bits

    def __hash__(self):
        return hash(self._c.bits)

    def __repr__(self):
        device = self.device
        return "rig.Point(%s:%d)" % (device.name if device else "?", self.value)


def points(waits):
    """A ctypes array of waits' points and its length (None, 0 if empty)."""
    waits = list(waits or ())
    if not waits:
        return None, 0
    array = (_CPoint * len(waits))(*(p._c for p in waits))
    return array, len(waits)
