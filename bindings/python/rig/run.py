"""Running work: images, functions, submissions and their runs.

A submission's parts are Python objects (Launch, CopyPart, FillPart, Words)
over operands: a slot number that each submit fills, or a Buffer of the
submission's own (fixed memory).  A Function keeps a reference to its
image, so it never outlives the code it names.
"""

import ctypes
import threading

from ._handle import Owned
from ._lib import lib, text
from ._types import (
    Access,
    Operand,
    Part,
    PartKind,
    Ref as _CRef,
    RefKind,
    SubmissionOptions,
    WordWrite as _CWordWrite,
    release_fn,
)
from .device import Device, Point, points
from .errors import ClosedError, check

c_void_p = ctypes.c_void_p


class Image(Owned):
    """Code loaded on a device (rig_image_t *)."""

    __slots__ = ()
    _release = lib.rig_image_unref
    _kind = "image"

    @classmethod
    def load(cls, device, code):
        """rig_image_load: the bytes of code (an ELF object on the host, a
        cubin, fatbin or PTX on CUDA) loaded on device."""
        data = bytes(code)
        out = c_void_p()
        check(lib.rig_image_load(device._ptr, data, len(data), ctypes.byref(out)))
        return cls(out.value)

    @property
    def device(self):
        with self._using() as i:
            return Device.of(lib.rig_image_device(i))

    def prepare(self, name):
        with self._using() as i:
            check(lib.rig_image_prepare(i, name.encode()))

    def resolve(self, name):
        """rig_image_resolve: the Function name, or None if the image has none."""
        out = c_void_p()
        with self._using() as i:
            check(lib.rig_image_resolve(i, name.encode(), ctypes.byref(out)))
            if not out.value:
                return None
            return Function(out.value, Image(lib.rig_image_ref(i)))


class Function:
    """A function of an image, ready to launch; holds its image open."""

    __slots__ = ("_ptr", "image")

    def __init__(self, ptr, image):
        self._ptr = ptr
        self.image = image

    def _use(self):
        if self.image.closed:
            raise ClosedError("the function's image is closed")
        return self._ptr

    name = property(lambda self: text(lib.rig_function_name(self._use())))
    max_threads = property(lambda self: lib.rig_function_max_threads(self._use()))


def _operand(memory, keep):
    """An Operand of a slot number or a fixed Buffer."""
    if isinstance(memory, int):
        return Operand(memory, None)
    keep.append(memory)
    return Operand(0, memory._acquire())


class Ref:
    """A ref of a launch: the 8 bytes at `at` of its parameters hold the
    address of memory (a slot or a Buffer) or of entry (a Function)."""

    def __init__(self, kind, at, memory=0, access=Access.READ_WRITE, entry=None):
        self.kind, self.at, self.memory, self.access, self.entry = RefKind(kind), at, memory, access, entry

    def _c(self, keep):
        if self.kind == RefKind.ENTRY:
            keep.append(None)  # nothing of a buffer's
            return _CRef(int(self.kind), Operand(0, None), self.at, int(self.access), self.entry._use())
        return _CRef(int(self.kind), _operand(self.memory, keep), self.at, int(self.access), None)


class Launch:
    def __init__(self, function, refs=(), params=0):
        self.function, self.refs, self.params = function, list(refs), params


class CopyPart:
    def __init__(self, src, dst):
        self.src, self.dst = src, dst


class FillPart:
    def __init__(self, dst, value=0):
        self.dst, self.value = dst, value


class Words:
    """Writes of 64-bit words: [(memory, offset, value)]."""

    def __init__(self, writes):
        self.writes = list(writes)


class _Parts:
    """The C array of parts, with what must live while rig reads it; ends
    the uses of the fixed buffers it took."""

    def __init__(self, parts):
        self.buffers = []
        self.arrays = []
        self.array = (Part * len(parts))()
        try:
            for c, part in zip(self.array, parts):
                self._fill(c, part)
        except BaseException:
            self.done()
            raise

    def _fill(self, c, part):
        if isinstance(part, Launch):
            c.kind = PartKind.LAUNCH
            refs = (_CRef * len(part.refs))(*(r._c(self.buffers) for r in part.refs))
            self.arrays.append(refs)
            c.u.launch.function = part.function._use()
            c.u.launch.refs = refs
            c.u.launch.ref_count = len(part.refs)
            c.u.launch.params = part.params
        elif isinstance(part, CopyPart):
            c.kind = PartKind.COPY
            c.u.copy.src = _operand(part.src, self.buffers)
            c.u.copy.dst = _operand(part.dst, self.buffers)
        elif isinstance(part, FillPart):
            c.kind = PartKind.FILL
            c.u.fill.dst = _operand(part.dst, self.buffers)
            c.u.fill.value = part.value
        elif isinstance(part, Words):
            c.kind = PartKind.WORDS
            writes = (_CWordWrite * len(part.writes))(
                *(_CWordWrite(_operand(m, self.buffers), o, v) for m, o, v in part.writes))
            self.arrays.append(writes)
            c.u.words.writes = writes
            c.u.words.count = len(part.writes)
        else:
            raise TypeError("not a part: %r" % (part,))

    def done(self):
        for b in self.buffers:
            if b is not None:
                b._done()
        self.buffers = []


class _Keeps:
    """keep callbacks of submissions, alive until rig calls them."""

    lock = threading.Lock()
    live = {}
    next_key = 1

    @staticmethod
    @release_fn
    def called(context):
        with _Keeps.lock:
            f = _Keeps.live.pop(context, None)
        if f is not None:
            f()  # later, from any thread: an exception goes to sys.unraisablehook


class Submission(Owned):
    """A prepared submission (rig_submission_t *)."""

    __slots__ = ()
    _release = lib.rig_submission_unref
    _kind = "submission"

    @classmethod
    def make(cls, device, parts, keep=None):
        """rig_submission_make of parts on device; keep() is called once the
        submission is released and its last work is done."""
        c_parts = _Parts(parts)
        options = None
        key = None
        try:
            if keep is not None:
                with _Keeps.lock:
                    key = _Keeps.next_key
                    _Keeps.next_key += 1
                    _Keeps.live[key] = keep
                options = SubmissionOptions(ctypes.sizeof(SubmissionOptions), _Keeps.called, key)
            out = c_void_p()
            status = lib.rig_submission_make(device._ptr, c_parts.array, len(parts),
                                             ctypes.byref(options) if options else None, ctypes.byref(out))
        finally:
            c_parts.done()
        if status != 0 and key is not None:
            with _Keeps.lock:
                _Keeps.live.pop(key, None)
        check(status)
        return cls(out.value)

    @property
    def slots(self):
        with self._using() as s:
            return lib.rig_submission_slots(s)

    def block(self, part):
        with self._using() as s:
            return lib.rig_submission_block(s, part)

    def take(self):
        """rig_submission_take: a Run of this submission."""
        out = c_void_p()
        with self._using() as s:
            check(lib.rig_submission_take(s, ctypes.byref(out)))
        return Run(out.value, self)


class Run:
    """A run of a submission: its grids and parameters.  submit() runs it
    and frees it; a Run is of no further use afterwards."""

    def __init__(self, ptr, submission):
        self._ptr = ptr
        self.submission = submission  # a run lives as long as its submission

    def _use(self):
        if self._ptr is None:
            raise ClosedError("the run was submitted")
        if self.submission.closed:
            raise ClosedError("the run's submission is closed")
        return self._ptr

    def _set(self, function, *args):
        check(function(self._use(), *args))
        return self

    def groups(self, k, x, y=1, z=1):
        return self._set(lib.rig_run_groups, k, x, y, z)

    def threads(self, k, x, y=1, z=1):
        return self._set(lib.rig_run_threads, k, x, y, z)

    def shared(self, k, nbytes):
        return self._set(lib.rig_run_shared, k, nbytes)

    def bytes(self, k, at, data):
        data = bytes(data)
        return self._set(lib.rig_run_bytes, k, at, data, len(data))

    def fill(self, k, value):
        return self._set(lib.rig_run_fill, k, value)

    def submit(self, buffers=(), waits=()):
        """rig_submit with buffers as the slots, after waits: the Point of
        the work.  Frees the run, also when it raises."""
        r = self._use()
        buffers = list(buffers)
        taken = []
        try:
            for b in buffers:
                taken.append(b._acquire())
            slots = (c_void_p * len(taken))(*taken) if taken else None
            array, count = points(waits)
            out = Point()
            self._ptr = None
            check(lib.rig_submit(r, slots, len(taken), array, count, ctypes.byref(out._c)))
            return out
        finally:
            for b in buffers[: len(taken)]:
                b._done()


def _store(kind):
    function = getattr(lib, "rig_run_" + kind)

    def store(self, k, at, v):
        return self._set(function, k, at, v)

    store.__name__ = kind
    store.__doc__ = "rig_run_%s: stores v at byte at of block k's parameters." % kind
    return store


for _kind in ("int8", "int16", "int32", "int64", "float32", "float64"):
    setattr(Run, _kind, _store(_kind))
