"""The disk library (disk.h): files as the memory of the io device DISK."""

import ctypes

from . import _interrupt
from ._lib import lib
from ._types import DiskMode
from .buffer import Buffer
from .device import Device
from .errors import check

c_void_p = ctypes.c_void_p


def disk_device():
    """rig_disk_device: the io device DISK."""
    out = c_void_p()
    check(lib.rig_disk_device(ctypes.byref(out)))
    return Device.of(out.value)


def disk_open(path, mode=DiskMode.READ, offset=0, length=-1):
    """rig_disk_open: a Buffer on DISK over length bytes (-1: to the end) of
    the file at path from byte offset."""
    out = c_void_p()
    check(lib.rig_disk_open(str(path).encode(), int(mode), offset, length, ctypes.byref(out)))
    return Buffer(out.value)


def disk_sync(file):
    """rig_disk_sync: makes the bytes written into file, a Buffer over a file
    disk_open opened DiskMode.READ_WRITE, durable (fdatasync), once the work
    that writes it is done."""
    with file._using() as f:
        check(_interrupt.call(lib.rig_disk_sync, f))
