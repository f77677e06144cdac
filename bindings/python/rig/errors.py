"""rig's errors as exceptions: one class per status, each carrying the
thread's error state that rig.h leaves after a failed call."""

from ._lib import lib, text
from ._types import Status


class Error(Exception):
    """A failed rig call.

    status   the rig.Status the call answered
    message  rig_last_error(): what was wrong, with its numbers
    device   the rig.Device of a RIG_ELOST or RIG_ENOMEM (rig_error_device),
             else None
    bytes    the bytes a RIG_ENOMEM could not allocate (rig_error_bytes)
    code     the callback's return or the errno of a RIG_EIO (rig_error_code)
    """

    status = None

    def __init__(self, message, device=None, nbytes=0, code=0):
        super().__init__(message)
        self.message = message
        self.device = device
        self.bytes = nbytes
        self.code = code


class InvalidError(Error, ValueError):
    """RIG_EINVAL: the call was misused; nothing changed."""

    status = Status.EINVAL


class LostError(Error):
    """RIG_ELOST: a device the call depends on is lost."""

    status = Status.ELOST


class OutOfMemoryError(Error):
    """RIG_ENOMEM: a device could not provide the bytes."""

    status = Status.ENOMEM


class DiskError(Error, OSError):
    """RIG_EIO: an io device's read or write failed; code is the errno."""

    status = Status.EIO


class OpenError(Error):
    """RIG_EOPEN: an open failed; the message is the reason."""

    status = Status.EOPEN


class Interrupted(Error):
    """RIG_EINTR: a wait was interrupted; it lost and assigned nothing."""

    status = Status.EINTR


class CallbackError(Error):
    """RIG_ECALLBACK: a callback returned non-zero (code is its value)."""

    status = Status.ECALLBACK


class ImageError(Error):
    """RIG_EIMAGE: a device refused an image; the message says why."""

    status = Status.EIMAGE


class ClosedError(ValueError):
    """A use of a handle (buffer, image, submission, ...) after its close."""


_BY_STATUS = {cls.status: cls for cls in Error.__subclasses__()}


def error_of(status):
    """The exception for a failed call's status, read from this thread's
    error state: call it right after the call, before any other."""
    from .device import Device

    message = text(lib.rig_last_error()) or text(lib.rig_status_name(status))
    cls = _BY_STATUS.get(status, Error)
    error = cls(message, Device.of(lib.rig_error_device()), lib.rig_error_bytes(), lib.rig_error_code())
    if cls is Error:
        error.status = status
    return error


def check(status):
    """Raises the status's exception unless it is RIG_OK."""
    if status != 0:
        raise error_of(status)
