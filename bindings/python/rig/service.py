"""rigd, the per-host service (service.h)."""

import ctypes

from ._lib import lib, text
from ._types import ServiceOptions
from .buffer import Buffer
from .device import Device, _options
from .errors import check

c_void_p = ctypes.c_void_p


class Machine:
    """A connection to a rigd (rig_machine_t *): a record that lives for the
    process, so it needs no close."""

    __slots__ = ("_ptr",)

    def __init__(self, ptr):
        self._ptr = ptr

    name = property(lambda self: text(lib.rig_machine_name(self._ptr)))
    lost = property(lambda self: text(lib.rig_machine_lost(self._ptr)),
                    doc="None while connected, else why it is lost")

    def open(self, name, config=None):
        """rig_machine_open: the device rigd serves as name, as NAME@MACHINE."""
        out = c_void_p()
        check(lib.rig_machine_open(self._ptr, name.encode(), _options(config), ctypes.byref(out)))
        return Device.of(out.value)

    def __repr__(self):
        return "rig.Machine(%r)" % self.name


def connect(socket=None):
    """rig_service_connect: a new Machine, connected to the rigd at socket
    (RIG_SERVICE, else $XDG_RUNTIME_DIR/rig/rigd.sock, else
    /run/rig/rigd.sock, where None)."""
    options = ServiceOptions(ctypes.sizeof(ServiceOptions), socket.encode() if socket else None)
    out = c_void_p()
    check(lib.rig_service_connect(ctypes.byref(options), ctypes.byref(out)))
    return Machine(out.value)


def share(buffer):
    """rig_service_share: the token another process imports buffer's bytes by."""
    token = ctypes.c_uint64()
    with buffer._using() as b:
        check(lib.rig_service_share(b, ctypes.byref(token)))
    return token.value


def share_fd(buffer):
    """rig_service_share_fd: a new descriptor (the caller's to close) naming
    the export of buffer's bytes."""
    fd = ctypes.c_int(-1)
    with buffer._using() as b:
        check(lib.rig_service_share_fd(b, ctypes.byref(fd)))
    return fd.value


def import_token(device, token):
    """rig_service_import: a Buffer on device (a proxy) over token's bytes."""
    out = c_void_p()
    check(lib.rig_service_import(device._ptr, token, ctypes.byref(out)))
    return Buffer(out.value)


def import_fd(device, fd):
    """rig_service_import_fd: a Buffer on device over the bytes fd names."""
    out = c_void_p()
    check(lib.rig_service_import_fd(device._ptr, fd, ctypes.byref(out)))
    return Buffer(out.value)
