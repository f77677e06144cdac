"""Owned handles: one reference to a rig object, released once.

A handle is released by close(), by leaving its `with` block, or by the
garbage collector.  A use holds the handle open: close() during a use (from
another thread, or while an exported view of a buffer's bytes lives) only
marks it, and the reference goes once the last use ends.  A use after close
raises ClosedError, so no call ever reaches rig with a released pointer.
"""

import contextlib
import threading

from .errors import ClosedError


class Owned:
    __slots__ = ("_ptr", "_uses", "_closing", "_lock", "__weakref__")

    # The function that drops the reference (rig_buffer_unref, ...).
    _release = None
    _kind = "handle"

    def __init__(self, ptr):
        self._ptr = ptr
        self._uses = 0
        self._closing = False
        self._lock = threading.Lock()

    def _acquire(self):
        with self._lock:
            if self._ptr is None or self._closing:
                raise ClosedError("the %s is closed" % self._kind)
            self._uses += 1
            return self._ptr

    def _done(self):
        with self._lock:
            self._uses -= 1
            ptr = self._take_if_unused()
        self._drop(ptr)

    def _take_if_unused(self):
        if self._closing and self._uses == 0 and self._ptr is not None:
            ptr, self._ptr = self._ptr, None
            return ptr
        return None

    def _drop(self, ptr):
        if ptr is not None:
            type(self)._release(ptr)

    @contextlib.contextmanager
    def _using(self):
        ptr = self._acquire()
        try:
            yield ptr
        finally:
            self._done()

    @property
    def closed(self):
        """True once close() was called."""
        return self._ptr is None or self._closing

    def close(self):
        """Releases the reference (at once, or when the last use ends).
        Closing twice is harmless."""
        with self._lock:
            self._closing = True
            ptr = self._take_if_unused()
        self._drop(ptr)

    def __enter__(self):
        if self.closed:
            raise ClosedError("the %s is closed" % self._kind)
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # The interpreter may be tearing the module down: a failure here has
        # nowhere to go.
        try:
            self.close()
        except Exception:
            pass
