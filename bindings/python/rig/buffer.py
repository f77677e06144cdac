"""Buffers: views, borrows, properties, claims, host access, copies and
fills, and exported arrays.

Host-addressable buffers hand their bytes to Python without a copy:
host_view() is a ctypes array over them (it exports the buffer protocol:
memoryview, numpy.frombuffer), numpy.asarray(buffer) calls __array__ over
that view, and on Python 3.12 on the buffer is itself an exporter
(__buffer__, PEP 688; a pure-Python class cannot be one before 3.12).  Each
view holds a claim of the bytes (rig_buffer_claim, after the work it must
follow) and the buffer open until the last object over it goes.
"""

import ctypes
import threading
import weakref

from . import _interrupt, dlpack
from ._handle import Owned
from ._lib import lib, text
from ._types import Access, Box, Claim, Dma, DmaKind, Memory, access_fn, release_fn
from .device import Device, points
from .errors import ClosedError, InvalidError, check

c_void_p = ctypes.c_void_p


def _new(status, out):
    check(status)
    return Buffer(out.value)


class _Wrapped:
    """Caller memory that rig_buffer_of_memory wraps, kept alive until rig
    lets go of it."""

    lock = threading.Lock()
    live = {}
    next_key = 1

    @classmethod
    def keep(cls, obj, on_release):
        with cls.lock:
            key = cls.next_key
            cls.next_key += 1
            cls.live[key] = (obj, on_release)
        return key

    @staticmethod
    @release_fn
    def released(context):
        with _Wrapped.lock:
            _obj, on_release = _Wrapped.live.pop(context, (None, None))
        if on_release is not None:
            # rig calls this later, from any thread: what it raises goes to
            # sys.unraisablehook, as ctypes reports a callback's exception.
            on_release()


def _writable_address(obj):
    """(keepalive, address, n) of a writable object of the buffer protocol."""
    view = memoryview(obj).cast("B")
    if view.readonly:
        raise TypeError("the object's bytes are read-only")
    n = view.nbytes
    if n == 0:
        return view, None, 0
    array = (ctypes.c_char * n).from_buffer(view)
    return array, ctypes.addressof(array), n


def _readable_address(obj):
    """(keepalive, address, n) of any object of the buffer protocol: a
    read-only one other than bytes is copied first."""
    if isinstance(obj, bytes):
        return obj, ctypes.cast(ctypes.c_char_p(obj), c_void_p).value, len(obj)
    view = memoryview(obj).cast("B")
    if view.readonly:
        data = bytes(view)
        return _readable_address(data)
    return _writable_address(view)


def _bytes_at(address, n, readonly):
    """A memoryview of n bytes at address, valid only while they are."""
    if n == 0:
        return memoryview(b"")
    view = memoryview((ctypes.c_ubyte * n).from_address(address)).cast("B")
    return view.toreadonly() if readonly else view


def row(src_offset, dst_offset, n):
    """rig_row: the box of one row of n bytes."""
    return lib.rig_row(src_offset, dst_offset, n)


def _boxes(boxes, n):
    boxes = [b if isinstance(b, Box) else Box(*b) for b in boxes] if boxes is not None else [row(0, 0, n)]
    return (Box * len(boxes))(*boxes), len(boxes)


class Buffer(Owned):
    """One reference to a buffer (rig_buffer_t *)."""

    __slots__ = ()
    _release = lib.rig_buffer_unref
    _kind = "buffer"

    # ---------------------------------------------------------------- makers

    @classmethod
    def create(cls, device, n, memory=Memory.DEVICE):
        """rig_buffer_create: n new bytes of device's memory of kind memory."""
        out = c_void_p()
        return _new(lib.rig_buffer_create(device._ptr, n, int(memory), ctypes.byref(out)), out)

    @classmethod
    def of_bytes(cls, data):
        """rig_buffer_of_bytes: a new host buffer holding a copy of data."""
        keep, address, n = _readable_address(data)
        out = c_void_p()
        status = lib.rig_buffer_of_bytes(address, n, ctypes.byref(out))
        del keep
        return _new(status, out)

    @classmethod
    def of_memory(cls, obj, on_release=None):
        """rig_buffer_of_memory: a host buffer over the bytes of obj (a
        writable object of the buffer protocol: bytearray, numpy array,
        mmap), without a copy.  obj stays alive until rig lets go of the
        memory, which then calls on_release() if given."""
        keep, address, n = _writable_address(obj)
        key = _Wrapped.keep((obj, keep), on_release)
        out = c_void_p()
        status = lib.rig_buffer_of_memory(address, n, _Wrapped.released, key, ctypes.byref(out))
        if status != 0:
            with _Wrapped.lock:  # rig calls no release on failure
                _Wrapped.live.pop(key, None)
        return _new(status, out)

    def view(self, first, length):
        """rig_buffer_view: length bytes of this buffer from byte first."""
        out = c_void_p()
        with self._using() as b:
            return _new(lib.rig_buffer_view(b, first, length, ctypes.byref(out)), out)

    def borrow(self, device):
        """rig_buffer_borrow: a buffer on device over these bytes, or None
        where device cannot map them."""
        out = c_void_p()
        with self._using() as b:
            check(lib.rig_buffer_borrow(device._ptr, b, ctypes.byref(out)))
        return Buffer(out.value) if out.value else None

    def ref(self):
        """Another Buffer holding a reference of its own to these bytes."""
        with self._using() as b:
            return Buffer(lib.rig_buffer_ref(b))

    # ------------------------------------------------------------ properties

    def _get(self, function, *args):
        with self._using() as b:
            return function(b, *args)

    device = property(lambda self: Device.of(self._get(lib.rig_buffer_device)))
    nbytes = property(lambda self: self._get(lib.rig_buffer_bytes))
    is_borrowed = property(lambda self: bool(self._get(lib.rig_buffer_is_borrowed)))
    spans = property(lambda self: bool(self._get(lib.rig_buffer_spans)))
    access = property(lambda self: Access(self._get(lib.rig_buffer_access)))
    dead = property(lambda self: text(self._get(lib.rig_buffer_dead)), doc="why it is dead, or None")
    why = property(lambda self: text(self._get(lib.rig_buffer_why)))
    host = property(lambda self: self._get(lib.rig_buffer_host), doc="the host address, or None")

    def __len__(self):
        return self.nbytes

    @property
    def span(self):
        """(offset of the first byte in its allocation, the allocation's bytes)."""
        offset, total = ctypes.c_int64(), ctypes.c_int64()
        self._get(lib.rig_buffer_span, ctypes.byref(offset), ctypes.byref(total))
        return offset.value, total.value

    def aligned(self, at, n):
        out = ctypes.c_bool()
        check(self._get(lib.rig_buffer_aligned, at, n, ctypes.byref(out)))
        return out.value

    def handle(self):
        """(the driver's object for the memory, the byte of it b starts at)."""
        handle, offset = ctypes.c_uint64(), ctypes.c_int64()
        check(self._get(lib.rig_buffer_handle, ctypes.byref(handle), ctypes.byref(offset)))
        return handle.value, offset.value

    def dma(self, function):
        """rig_buffer_dma for the PCI function at bus address function:
        {"kind", "ranges" [(address, bytes)], "fd", "offset", "start"}."""
        out = Dma(size=ctypes.sizeof(Dma))
        check(self._get(lib.rig_buffer_dma, function.encode(), ctypes.byref(out)))
        ranges = [(out.ranges[i].address, out.ranges[i].bytes) for i in range(out.range_count)]
        return {"kind": DmaKind(out.kind), "ranges": ranges, "fd": out.fd, "offset": out.offset,
                "start": out.start}

    def overlaps(self, other):
        with self._using() as a, other._using() as b:
            return bool(lib.rig_buffer_overlaps(a, b))

    def share_byte(self, other):
        with self._using() as a, other._using() as b:
            return bool(lib.rig_buffer_share_byte(a, b))

    # ---------------------------------------------------------------- claims

    def claim(self, access=Access.READ):
        """rig_buffer_claim: a rig.Claim; end a taken one with release_claim."""
        return Claim(self._get(lib.rig_buffer_claim, int(access)))

    def release_claim(self):
        self._get(lib.rig_buffer_release)

    def _claimed(self, access):
        """Takes a claim for access and waits for what it must follow."""
        answer = self.claim(access)
        if answer not in (Claim.CLAIMED, Claim.WAIT):
            raise InvalidError("the buffer's bytes cannot be claimed for %s: %s%s"
                               % (access.name, answer.name, ": " + self.dead if self.dead else ""))
        if answer == Claim.WAIT:
            try:
                self.wait(access)
            except BaseException:
                self.release_claim()
                raise

    def claim_begin(self):
        """rig_claim_begin: True iff the hold is exclusive."""
        out = ctypes.c_bool()
        check(self._get(lib.rig_claim_begin, ctypes.byref(out)))
        return out.value

    def claim_end(self):
        check(self._get(lib.rig_claim_end))

    def claim_consume(self, why):
        out = c_void_p()
        return _new(self._get(lib.rig_claim_consume, why.encode(), ctypes.byref(out)), out)

    def claim_hold(self):
        check(self._get(lib.rig_claim_hold))

    def claim_unhold(self):
        check(self._get(lib.rig_claim_unhold))

    def claim_share(self):
        check(self._get(lib.rig_claim_share))

    def free(self, why=None):
        """rig_buffer_free: True iff the memory was returned early."""
        out = ctypes.c_bool()
        check(self._get(lib.rig_buffer_free, why.encode() if why else None, ctypes.byref(out)))
        return out.value

    def unborrow(self, why=None):
        out = ctypes.c_bool()
        check(self._get(lib.rig_buffer_unborrow, why.encode() if why else None, ctypes.byref(out)))
        return out.value

    # ----------------------------------------------------------- host access

    def _access(self, function, f, elem_size, readonly):
        thrown = []
        result = []

        def trampoline(address, n, _context):
            view = _bytes_at(address, n, readonly)
            try:
                result.append(f(view))
                return 0
            except BaseException as e:  # rethrown once rig has returned
                thrown.append(e)
                return 1
            finally:
                view.release()

        callback = access_fn(trampoline)
        with self._using() as b:
            status = _interrupt.call(function, b, elem_size, callback, None)
        if thrown:
            raise thrown[0]
        check(status)
        return result[0]

    def read(self, f, elem_size=1):
        """rig_buffer_read: f(memoryview) over the bytes in place, read-only,
        once the last writes are done; answers what f answers.  An exception
        f raises propagates.  f must not keep the view."""
        return self._access(lib.rig_buffer_read, f, elem_size, True)

    def write(self, f, elem_size=1):
        """rig_buffer_write: as read, with a writable view, once every use
        of the memory is done."""
        return self._access(lib.rig_buffer_write, f, elem_size, False)

    def wait(self, access=Access.READ_WRITE):
        """rig_buffer_wait (interruptible by Ctrl-C)."""
        with self._using() as b:
            check(_interrupt.call(lib.rig_buffer_wait, b, int(access)))

    def reached(self, access=Access.READ_WRITE):
        out = ctypes.c_bool()
        check(self._get(lib.rig_buffer_reached, int(access), ctypes.byref(out)))
        return out.value

    def host_view(self, access=None):
        """A ctypes array (c_ubyte * nbytes) over the bytes in place, for
        host-addressable memory: memoryview(view) and numpy.frombuffer(view)
        read it without a copy.  It holds a claim for access (the buffer's
        own by default), taken once the work it must follow is done, and
        keeps the buffer open, until it and every view over it are gone.
        access READ gives a read-only memoryview through readonly()."""
        if access is None:
            access = self.access
        b = self._acquire()
        try:
            address, n = lib.rig_buffer_host(b), lib.rig_buffer_bytes(b)
            if not address and n:
                raise InvalidError("the host does not address the bytes of %s's memory"
                                   % text(lib.rig_device_name(lib.rig_buffer_device(b))))
            self._claimed(Access(access))
        except BaseException:
            self._done()
            raise
        array = (ctypes.c_ubyte * n).from_address(address or 0) if n else (ctypes.c_ubyte * 0)()
        array._rig_buffer = self
        array._rig_readonly = access == Access.READ
        weakref.finalize(array, self._end_view)
        return array

    def _end_view(self):
        lib.rig_buffer_release(self._ptr)
        self._done()

    def memoryview(self, access=None):
        """memoryview(host_view(access)), read-only for READ."""
        array = self.host_view(access)
        view = memoryview(array).cast("B")
        return view.toreadonly() if array._rig_readonly else view

    def __array__(self, dtype=None, copy=None):
        import numpy

        array = numpy.frombuffer(self.memoryview(), dtype=numpy.uint8)
        return array if dtype is None else array.view(dtype)

    def __buffer__(self, flags):  # Python 3.12 on (PEP 688)
        return self.memoryview()

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule over the bytes (uint8, one dimension): the host's
        memory as kDLCPU, a CUDA device's as kDLCUDA; taken once the work
        the access must follow is done, so any stream may use it.  The
        capsule is the unversioned DLManagedTensor whatever max_version."""
        dlpack.check_request(dlpack.device_of(self), dl_device, copy)
        return dlpack.capsule(self, dlpack.UINT8, (self.nbytes,))

    def __dlpack_device__(self):
        return dlpack.device_of(self)

    def export(self, elem_size=1):
        """rig_buffer_export: the bytes for good, as an Export."""
        out = c_void_p()
        check(self._get(lib.rig_buffer_export, elem_size, ctypes.byref(out)))
        return Export(out.value)

    # ------------------------------------------------------ copies and fills

    def fill(self, c):
        """rig_buffer_fill: every byte set to c, waited for."""
        with self._using() as b:
            check(_interrupt.call(lib.rig_buffer_fill, b, c))

    def submit_fill(self, c, waits=()):
        """rig_buffer_submit_fill: the point the bytes are set at."""
        from .device import Point

        array, count = points(waits)
        out = Point()
        with self._using() as b:
            check(lib.rig_buffer_submit_fill(b, c, array, count, ctypes.byref(out._c)))
        return out

    def write_bytes(self, data, at=0):
        """rig_buffer_blit_from_bytes: all of data (any object of the buffer
        protocol) into this buffer from byte at."""
        keep, address, n = _readable_address(data)
        with self._using() as b:
            check(_interrupt.call(lib.rig_buffer_blit_from_bytes, address, n, 0, b, at, n))
        del keep

    def readinto(self, out, at=0):
        """rig_buffer_blit_to_bytes: len(out) bytes from byte at into out (a
        writable object of the buffer protocol)."""
        keep, address, n = _writable_address(out)
        with self._using() as b:
            check(_interrupt.call(lib.rig_buffer_blit_to_bytes, b, at, address, n, 0, n))
        del keep
        return n

    def read_bytes(self, at=0, n=None):
        """n bytes (all from at by default) as a new bytes object."""
        if n is None:
            n = self.nbytes - at
        out = bytearray(n)
        self.readinto(out, at)
        return bytes(out)

    def __repr__(self):
        if self.closed:
            return "rig.Buffer(closed)"
        return "rig.Buffer(%d bytes on %s)" % (self.nbytes, self.device.name)


def copy(src, dst):
    """rig_buffer_copy: all of src into dst (of src's length), waited for."""
    with src._using() as s, dst._using() as d:
        check(_interrupt.call(lib.rig_buffer_copy, s, d))


def submit_copy(src, dst, boxes=None, waits=()):
    """rig_buffer_submit_copy: boxes (rig.Box or 6-tuples; all of src by
    default) from src into dst after waits; answers the point it is done at."""
    from .device import Point

    box_array, nboxes = _boxes(boxes, src.nbytes)
    array, count = points(waits)
    out = Point()
    with src._using() as s, dst._using() as d:
        check(lib.rig_buffer_submit_copy(s, d, box_array, nboxes, array, count, ctypes.byref(out._c)))
    return out


class Export(Owned):
    """An exported array (rig_export_t *): a buffer's bytes for good."""

    __slots__ = ()
    _release = lib.rig_export_unref
    _kind = "export"

    def _bytes(self):
        n = ctypes.c_int64()
        with self._using() as e:
            return lib.rig_export_bytes(e, ctypes.byref(n)), n.value

    @property
    def nbytes(self):
        return self._bytes()[1]

    @property
    def address(self):
        return self._bytes()[0]

    def host_view(self):
        """A ctypes array over the exported bytes, keeping the export open."""
        self._acquire()
        address, n = self._bytes()
        array = (ctypes.c_ubyte * n).from_address(address) if n else (ctypes.c_ubyte * 0)()
        array._rig_export = self
        weakref.finalize(array, self._done)
        return array

    def __array__(self, dtype=None, copy=None):
        import numpy

        array = numpy.frombuffer(self.host_view(), dtype=numpy.uint8)
        return array if dtype is None else array.view(dtype)


__all__ = ["Buffer", "Export", "copy", "submit_copy", "row", "ClosedError"]
