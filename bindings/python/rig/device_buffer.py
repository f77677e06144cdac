"""Typed, lazily allocated device buffers: the spec's Device.Buffer
(tolk-device-buffer.txt), over rig buffers.

How the OCaml notions map (the C++ header rig/device_buffer.hpp maps them
alike):
  Device.Buffer.t          DeviceBuffer, a reference to the buffer (the
                           same object for the same buffer: base(b) is b)
  Tolk_uop.Dtype.t         Dtype (name, itemsize, DLPack code); rig.dtypes
  Buffer_spec.t            BufferSpec (the kind of memory, rig.Memory);
                           BufferSpec.DEFAULT is Buffer_spec.default
  Allocator.packed         an Allocator object: its hooks are methods, the
                           optional ones (offset, transfer) announced by
                           supports_offset and supports_transfer;
                           RigAllocator allocates rig.Buffers
  the allocator's opaque   whatever alloc answers (a rig.Buffer for
  buffer                   RigAllocator)
  Invalid_argument         rig.InvalidError (status RIG_EINVAL)
  the GC finaliser         __del__: the last reference going deallocates
                           (a view holds its base, so a base outlives its
                           views)
  bytes                    bytes in, any writable buffer-protocol object
                           out (bytearray, numpy array)
  nativeint (addr)         int
A buffer's calls are serialised by a lock of its root base buffer.
"""

import abc
import dataclasses
import itertools
import threading

from . import dlpack
from ._types import Memory
from .buffer import Buffer, copy
from .errors import InvalidError


@dataclasses.dataclass(frozen=True)
class Dtype:
    """An element type: name, bytes per element, DLPack (code, bits)."""

    name: str
    itemsize: int
    dlpack: tuple

    def __repr__(self):
        return "rig.dtypes." + self.name


class dtypes:  # noqa: N801 - a namespace, as numpy's
    bool_ = Dtype("bool", 1, (dlpack.BOOL, 8))
    int8 = Dtype("int8", 1, (dlpack.INT, 8))
    uint8 = Dtype("uint8", 1, (dlpack.UINT, 8))
    int16 = Dtype("int16", 2, (dlpack.INT, 16))
    uint16 = Dtype("uint16", 2, (dlpack.UINT, 16))
    int32 = Dtype("int32", 4, (dlpack.INT, 32))
    uint32 = Dtype("uint32", 4, (dlpack.UINT, 32))
    int64 = Dtype("int64", 8, (dlpack.INT, 64))
    uint64 = Dtype("uint64", 8, (dlpack.UINT, 64))
    float16 = Dtype("float16", 2, (dlpack.FLOAT, 16))
    bfloat16 = Dtype("bfloat16", 2, (dlpack.BFLOAT, 16))
    float32 = Dtype("float32", 4, (dlpack.FLOAT, 32))
    float64 = Dtype("float64", 8, (dlpack.FLOAT, 64))


@dataclasses.dataclass(frozen=True)
class BufferSpec:
    """What kind of memory a buffer's storage is."""

    memory: Memory = Memory.DEVICE


BufferSpec.DEFAULT = BufferSpec()


class Allocator(abc.ABC):
    """The hooks of an allocator (Allocator.packed).  alloc, free, copyin,
    copyout and addr are required (a subclass without one cannot be made);
    offset and transfer exist where supports_offset and supports_transfer
    say so, and are called only then."""

    supports_offset = False
    supports_transfer = False

    @abc.abstractmethod
    def alloc(self, device, nbytes, spec):
        """New storage of nbytes on device, of spec's kind of memory."""

    @abc.abstractmethod
    def free(self, storage, nbytes, spec):
        """Lets go of storage that alloc made."""

    def offset(self, storage, nbytes, offset):
        """Storage of nbytes from byte offset of storage, sharing it."""
        raise InvalidError(f"{type(self).__name__} makes no views of its storage (supports_offset is False)")

    def transfer(self, dst, src, nbytes):
        """Copies nbytes from storage src to storage dst."""
        raise InvalidError(f"{type(self).__name__} copies no storage to storage (supports_transfer is False)")

    @abc.abstractmethod
    def copyin(self, storage, data):
        """Writes the bytes of data into storage."""

    @abc.abstractmethod
    def copyout(self, out, storage):
        """Reads storage's bytes into the writable buffer out."""

    @abc.abstractmethod
    def addr(self, storage):
        """The address of storage's first byte, for DLPack."""


class RigAllocator(Allocator):
    """Storage in rig buffers: alloc is rig_buffer_create on the device the
    name opens, offset a rig view, transfer a rig copy, copyin and copyout
    blits, addr the host address where the host has one, else the
    driver's (rig_buffer_handle)."""

    supports_offset = True
    supports_transfer = True

    def alloc(self, device, nbytes, spec):
        from .device import open as open_device

        return Buffer.create(open_device(device), nbytes, spec.memory)

    def free(self, storage, nbytes, spec):
        storage.close()

    def offset(self, storage, nbytes, offset):
        return storage.view(offset, nbytes)

    def transfer(self, dst, src, nbytes):
        copy(src, dst)

    def copyin(self, storage, data):
        storage.write_bytes(data)

    def copyout(self, out, storage):
        storage.readinto(out)

    def addr(self, storage):
        if storage.host or storage.nbytes == 0:
            return storage.host or 0
        handle, offset = storage.handle()
        return handle + offset


_ids = itertools.count(1)


def _prefix(device):
    return device.split(":", 1)[0]


def _invalid(message):
    return InvalidError(message)


class DeviceBuffer:
    """A typed buffer of size elements of dtype on device: a base buffer
    (DeviceBuffer(...)) or a view into one (b.view(...))."""

    def __init__(self, device, size, dtype, allocator, spec=None):
        """create: an unallocated base buffer."""
        if size < 0:
            raise _invalid("a buffer's size is at least 0, not %d" % size)
        self._init(device, size, dtype, spec or BufferSpec.DEFAULT, allocator, None, 0)
        self._lock = threading.RLock()
        self._allocated_views = 0
        self._refcount = 0

    def _init(self, device, size, dtype, spec, allocator, base, offset):
        self._id = next(_ids)
        self._device, self._size, self._dtype, self._spec = device, size, dtype, spec
        self._allocator, self._base, self._offset = allocator, base, offset
        self._storage = None

    @classmethod
    def create(cls, device, size, dtype, allocator, spec=None):
        """create ~device ~size ~dtype ?spec allocator."""
        return cls(device, size, dtype, allocator, spec)

    def view(self, size, dtype, offset):
        """A view of size elements of dtype from byte offset of this buffer."""
        if offset < 0:
            raise _invalid("a view's offset is at least 0, not %d" % offset)
        if offset >= self.nbytes:
            raise _invalid("a view's offset %d is not below the buffer's %d bytes" % (offset, self.nbytes))
        root = self.base
        start = self._offset + offset
        if size < 0 or start + size * dtype.itemsize > root.nbytes:
            raise _invalid("a view of %d bytes at byte %d extends past the base buffer's %d bytes"
                           % (size * dtype.itemsize, start, root.nbytes))
        v = DeviceBuffer.__new__(DeviceBuffer)
        v._init(root._device, size, dtype, root._spec, root._allocator, root, start)
        return v

    # ----------------------------------------------------- identity, metadata

    id = property(lambda self: self._id)
    base_id = property(lambda self: self.base._id)
    device = property(lambda self: self._device)
    size = property(lambda self: self._size)
    dtype = property(lambda self: self._dtype)
    spec = property(lambda self: self._spec)
    nbytes = property(lambda self: self._size * self._dtype.itemsize)
    base = property(lambda self: self._base if self._base is not None else self)
    offset = property(lambda self: self._offset)
    allocator = property(lambda self: self.base._allocator)

    @property
    def _root_lock(self):
        return self.base._lock

    # ------------------------------------------------------------ allocation

    def allocate(self):
        with self._root_lock:
            if self._storage is not None:
                raise _invalid("buffer %d is already allocated" % self._id)
            root = self.base
            if root is self:
                self._storage = root._allocator.alloc(self._device, self.nbytes, self._spec)
                return
            if not root._allocator.supports_offset:
                raise _invalid("the allocator of buffer %d makes no offset views" % self._id)
            root.ensure_allocated()
            self._storage = root._allocator.offset(root._storage, self.nbytes, self._offset)
            root._allocated_views += 1

    def ensure_allocated(self):
        with self._root_lock:
            if self._storage is None:
                self.allocate()

    def is_allocated(self):
        return self.base._storage is not None

    def is_initialized(self):
        return self._storage is not None

    def deallocate(self):
        with self._root_lock:
            if self._storage is None:
                return
            root = self.base
            if root is self:
                if self._allocated_views:
                    raise _invalid("buffer %d still has %d allocated views" % (self._id, self._allocated_views))
                storage, self._storage = self._storage, None
                self._allocator.free(storage, self.nbytes, self._spec)
            else:
                storage, self._storage = self._storage, None
                root._allocated_views -= 1
                if isinstance(storage, Buffer):
                    storage.close()

    def __del__(self):
        try:
            self.deallocate()
        except Exception:  # the interpreter may be going; nothing to tell
            pass

    def supports_offset(self):
        return bool(self.allocator.supports_offset)

    # ------------------------------------------------------ reference counts

    def uop_refcount(self):
        return self.base._refcount

    def add_ref(self, cnt):
        with self._root_lock:
            self.base._refcount += cnt
        return self

    # --------------------------------------------------------- data transfer

    def _own_storage(self, what):
        if not self.is_allocated():
            raise _invalid("%s of buffer %d, which is not allocated" % (what, self._id))
        if self._storage is None:
            raise _invalid("%s of view %d, which is not initialised (its base is): allocate it" % (what, self._id))
        return self._storage

    def copyin(self, src):
        n = memoryview(src).nbytes
        with self._root_lock:
            if n != self.nbytes:
                raise _invalid("copyin of %d bytes into buffer %d of %d bytes" % (n, self._id, self.nbytes))
            self.allocator.copyin(self._own_storage("copyin"), src)

    def copyout(self, dst):
        n = memoryview(dst).nbytes
        with self._root_lock:
            if n != self.nbytes:
                raise _invalid("copyout of buffer %d of %d bytes into %d bytes" % (self._id, self.nbytes, n))
            self.allocator.copyout(dst, self._own_storage("copyout"))

    def as_bytes(self):
        out = bytearray(self.nbytes)
        self.copyout(out)
        return bytes(out)

    def addr(self):
        with self._root_lock:
            self.ensure_allocated()
            return self.allocator.addr(self._storage)

    def supports_transfer(self, src):
        """supports_transfer dst src, with self as dst."""
        return bool(self.allocator.supports_transfer) and _prefix(self._device) == _prefix(src._device)

    @staticmethod
    def _same_shape(dst, src, what):
        if dst._size != src._size:
            raise _invalid("%s between buffers of %d and %d elements" % (what, dst._size, src._size))
        if dst._dtype != src._dtype:
            raise _invalid("%s between buffers of %s and %s" % (what, dst._dtype.name, src._dtype.name))

    @staticmethod
    def transfer(dst, src):
        """Copies src into dst through dst's allocator's transfer hook: True
        where supports_transfer, else False (nothing copied)."""
        DeviceBuffer._same_shape(dst, src, "transfer")
        if not dst.supports_transfer(src):
            return False
        dst.ensure_allocated()
        src.ensure_allocated()
        dst.allocator.transfer(dst._own_storage("transfer"), src._own_storage("transfer"), dst.nbytes)
        return True

    @staticmethod
    def copy_between(dst, src):
        """Copies src into dst through host memory."""
        DeviceBuffer._same_shape(dst, src, "copy_between")
        dst.ensure_allocated()
        src.ensure_allocated()
        dst.copyin(src.as_bytes())

    # ---------------------------------------------- handing memory to others

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack over the storage (allocated first): a 1-D array of size
        elements of dtype, as Buffer.__dlpack__.  Needs RigAllocator's
        storage."""
        self.ensure_allocated()
        dlpack.check_request(dlpack.device_of(self._storage), dl_device, copy)
        return dlpack.capsule(self._storage, self._dtype.dlpack, (self._size,))

    def __dlpack_device__(self):
        self.ensure_allocated()
        return dlpack.device_of(self._storage)

    def __repr__(self):
        kind = "view at %d of %d" % (self._offset, self.base_id) if self._base is not None else "base"
        return "rig.DeviceBuffer(id %d, %s, %d x %s on %s)" % (self._id, kind, self._size, self._dtype.name,
                                                             self._device)
