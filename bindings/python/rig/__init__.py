"""rig from Python: devices, buffers of their memory, and work ordered by
the memory it touches, over librig's C API (ctypes; no compiler needed).

    import rig
    mem = rig.open("MEM:0")
    with rig.Buffer.create(mem, 4096) as b:
        b.fill(7)
        assert b.read_bytes() == bytes([7]) * 4096

Every call does what the rig.h function it names does (read rig.h and the
man pages for the rules).  A failed call raises the rig.Error subclass of
its status (InvalidError, LostError, OutOfMemoryError, DiskError,
OpenError, Interrupted, CallbackError, ImageError) with the message, the
device and the bytes.  Buffers, exports, images and submissions close by
close(), `with`, or the garbage collector; a closed one raises ClosedError.
Waits on the main thread end at once on Ctrl-C (KeyboardInterrupt).
"""

from ._lib import lib as _lib, path as library_path
from ._types import (
    POINT_VALUE_MAX,
    WORD_BYTES,
    Access,
    Box,
    Claim,
    DiskMode,
    DmaKind,
    Memory,
    PartKind,
    RefKind,
    Status,
)
from .buffer import Buffer, Export, copy, row, submit_copy
from .device import Device, Point, host, memory_device, open, probe
from .device_buffer import Allocator, BufferSpec, DeviceBuffer, Dtype, RigAllocator, dtypes
from .disk import disk_device, disk_open, disk_sync
from .errors import (
    CallbackError,
    ClosedError,
    DiskError,
    Error,
    ImageError,
    Interrupted,
    InvalidError,
    LostError,
    OpenError,
    OutOfMemoryError,
)
from .local import LocalKey, fail, failure
from .run import CopyPart, FillPart, Function, Image, Launch, Ref, Run, Submission, Words
from .safetensors import Safetensors, Tensor, TensorHeader, load_safetensors
from .service import Machine, connect, import_fd, import_token, share, share_fd

__version__ = "0.1.0"


def version():
    """The loaded library's version, as RIG_VERSION encodes it."""
    return _lib.rig_version()


def word():
    """RIG_WORD_BYTES, the unit in which rig orders memory."""
    return _lib.rig_word()
