"""librig through ctypes, the way a Python program without bindings uses it.

Usage: test_python.py LIBRARY [unittest arguments], or with the library's
path in RIG_LIBRARY.  Standard library only.

Rules asserted through the C ABI: COPY-57, COPY-77, COPY-82, COPY-87,
COPY-91, COPY-101, BUF-48 (rig_buffer_view out of range answers RIG_EINVAL
with a message), COPY-79.
"""

import ctypes
import os
import sys
import unittest

RIG_OK = 0
RIG_EINVAL = -1
RIG_MEMORY_DEVICE = 0

c_void_p = ctypes.c_void_p
c_int64 = ctypes.c_int64
c_int = ctypes.c_int


class Point(ctypes.Structure):
    """rig_point_t: one uint64_t."""

    _fields_ = [("bits", ctypes.c_uint64)]


def load(path):
    """Loads librig at path with the prototype of every function used."""
    lib = ctypes.CDLL(path)
    prototypes = {
        # name: (restype, argtypes)
        "rig_last_error": (ctypes.c_char_p, []),
        "rig_status_name": (ctypes.c_char_p, [c_int]),
        "rig_host": (c_void_p, []),
        "rig_open": (c_int, [ctypes.c_char_p, c_void_p, ctypes.POINTER(c_void_p)]),
        "rig_device_name": (ctypes.c_char_p, [c_void_p]),
        "rig_device_equal": (ctypes.c_bool, [c_void_p, c_void_p]),
        "rig_buffer_create": (c_int, [c_void_p, c_int64, c_int, ctypes.POINTER(c_void_p)]),
        "rig_buffer_view": (c_int, [c_void_p, c_int64, c_int64, ctypes.POINTER(c_void_p)]),
        "rig_buffer_unref": (None, [c_void_p]),
        "rig_buffer_bytes": (c_int64, [c_void_p]),
        "rig_buffer_fill": (c_int, [c_void_p, ctypes.c_uint8]),
        "rig_buffer_submit_fill": (
            c_int,
            [c_void_p, ctypes.c_uint8, ctypes.POINTER(Point), ctypes.c_size_t, ctypes.POINTER(Point)],
        ),
        "rig_point_device": (c_void_p, [Point]),
        "rig_point_reached": (c_int, [Point, ctypes.POINTER(ctypes.c_bool)]),
        "rig_point_wait": (c_int, [Point]),
        "rig_buffer_copy": (c_int, [c_void_p, c_void_p]),
        "rig_buffer_blit_from_bytes": (c_int, [c_void_p, c_int64, c_int64, c_void_p, c_int64, c_int64]),
        "rig_buffer_blit_to_bytes": (c_int, [c_void_p, c_int64, c_void_p, c_int64, c_int64, c_int64]),
    }
    for name, (restype, argtypes) in prototypes.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib


LIBRARY = os.environ.get("RIG_LIBRARY")
if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
    LIBRARY = sys.argv.pop(1)
rig = load(LIBRARY) if LIBRARY else None


class RigThroughCtypes(unittest.TestCase):
    def setUp(self):
        self.assertIsNotNone(rig, "pass the library's path as argument or in RIG_LIBRARY")
        self.buffers = []

    def tearDown(self):
        for b in self.buffers:
            rig.rig_buffer_unref(b)

    def check(self, status):
        self.assertEqual(status, RIG_OK, "%s: %s" % (rig.rig_status_name(status), rig.rig_last_error()))

    def open(self, name):
        d = c_void_p()
        self.check(rig.rig_open(name.encode(), None, ctypes.byref(d)))
        self.assertEqual(rig.rig_device_name(d), name.encode())
        return d

    def create(self, device, n):
        b = c_void_p()
        self.check(rig.rig_buffer_create(device, n, RIG_MEMORY_DEVICE, ctypes.byref(b)))
        self.buffers.append(b)
        self.assertEqual(rig.rig_buffer_bytes(b), n)
        return b

    def bytes_of(self, b):
        n = rig.rig_buffer_bytes(b)
        out = ctypes.create_string_buffer(n)
        self.check(rig.rig_buffer_blit_to_bytes(b, 0, out, n, 0, n))
        return out.raw

    def test_fill_copy_read_back(self):
        """COPY-101, COPY-77, COPY-87: fill, copy to another buffer, read back."""
        mem = self.open("MEM:0")
        src = self.create(mem, 4096)
        dst = self.create(mem, 4096)
        self.check(rig.rig_buffer_fill(src, 0xA5))
        self.check(rig.rig_buffer_fill(dst, 0x00))
        self.check(rig.rig_buffer_copy(src, dst))
        self.assertEqual(self.bytes_of(dst), b"\xa5" * 4096)

    def test_blits_keep_positions(self):
        """COPY-82, COPY-87: blits between Python bytes and device memory."""
        mem0 = self.open("MEM:0")
        mem1 = self.open("MEM:1")
        a = self.create(mem0, 256)
        b = self.create(mem1, 256)
        pattern = bytes(range(256))
        self.check(rig.rig_buffer_blit_from_bytes(pattern, 256, 0, a, 0, 256))
        self.check(rig.rig_buffer_fill(b, 0))
        self.check(rig.rig_buffer_copy(a, b))
        window = ctypes.create_string_buffer(32)
        # 16 bytes of b from byte 100 land at index 8 of window.
        self.check(rig.rig_buffer_blit_to_bytes(b, 100, window, 32, 8, 16))
        self.assertEqual(window.raw, bytes(8) + pattern[100:116] + bytes(8))

    def test_submit_fill_point(self):
        """COPY-91, COPY-57: a fill the host makes returns a reached host point."""
        mem = self.open("MEM:0")
        b = self.create(mem, 1024)
        p = Point()
        self.check(rig.rig_buffer_submit_fill(b, 0x3C, None, 0, ctypes.byref(p)))
        self.assertTrue(rig.rig_device_equal(rig.rig_point_device(p), rig.rig_host()))
        reached = ctypes.c_bool(False)
        self.check(rig.rig_point_reached(p, ctypes.byref(reached)))
        self.assertTrue(reached.value)
        self.check(rig.rig_point_wait(p))
        self.assertEqual(self.bytes_of(b), b"\x3c" * 1024)

    def test_refused_calls(self):
        """BUF-48, COPY-79: refused calls answer RIG_EINVAL with a message."""
        mem = self.open("MEM:0")
        b = self.create(mem, 4096)
        shorter = self.create(mem, 2048)
        view = c_void_p()
        status = rig.rig_buffer_view(b, 4090, 16, ctypes.byref(view))
        if view.value:
            self.buffers.append(view)
        self.assertEqual(status, RIG_EINVAL)
        self.assertEqual(rig.rig_status_name(status), b"RIG_EINVAL")
        self.assertTrue(rig.rig_last_error(), "RIG_EINVAL without a message")
        self.assertEqual(rig.rig_buffer_copy(b, shorter), RIG_EINVAL)
        self.assertTrue(rig.rig_last_error(), "RIG_EINVAL without a message")


if __name__ == "__main__":
    unittest.main()
