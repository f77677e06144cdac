"""The process's failure and values per device (rig_fail, rig_local_*)."""

import ctypes
import threading

from ._lib import lib, text
from ._types import local_drop_fn, local_init_fn
from .device import Device
from .errors import check


def fail(why):
    """rig_fail: loses every device but the host with why; opens answer
    RIG_EOPEN from then on.  Only the first call acts."""
    check(lib.rig_fail(why.encode()))


def failure():
    """The reason of the process's failure, or None."""
    return text(lib.rig_failure())


class LocalKey:
    """A key whose value on a device init(device) makes at the first get on
    it; drop(value), if given, runs once the device's stop has returned.
    Keys live for the process, as rig's do.  An exception init raises
    propagates from get."""

    def __init__(self, init, drop=None):
        self._init, self._drop = init, drop
        self._values = {}
        self._next = 1
        self._lock = threading.Lock()
        self._thrown = threading.local()
        self._c_init = local_init_fn(self._make)
        self._c_drop = local_drop_fn(self._dropped)
        self._ptr = lib.rig_local_new_key(self._c_init, self._c_drop, None)

    def _make(self, device, _context):
        try:
            value = self._init(Device.of(device))
        except BaseException as e:  # rethrown by get
            self._thrown.error = e
            return None
        with self._lock:
            key, self._next = self._next, self._next + 1
            self._values[key] = value
        return key

    def _dropped(self, key, _context):
        with self._lock:
            value = self._values.pop(key, None)
        if self._drop is not None and key:
            self._drop(value)  # from a stop: an exception goes to sys.unraisablehook

    def get(self, device):
        """rig_local_get: the key's value on device."""
        self._thrown.error = None
        out = ctypes.c_void_p()
        status = lib.rig_local_get(self._ptr, device._ptr, ctypes.byref(out))
        error, self._thrown.error = self._thrown.error, None
        if error is not None:
            raise error
        check(status)
        with self._lock:
            return self._values.get(out.value)
