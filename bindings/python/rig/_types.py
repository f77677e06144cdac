"""The structs, enums and callback types of rig.h, disk.h and service.h, laid
out as the headers lay them."""

import ctypes
import enum

c_int64 = ctypes.c_int64
c_void_p = ctypes.c_void_p


class Status(enum.IntEnum):
    OK = 0
    EINVAL = -1
    ELOST = -2
    ENOMEM = -3
    EIO = -4
    EOPEN = -5
    EINTR = -6
    ECALLBACK = -7
    EIMAGE = -8


class Memory(enum.IntEnum):
    """rig_memory_t: the kinds of memory rig_buffer_create allocates."""

    DEVICE = 0
    PINNED = 1
    MAPPED = 2


class Access(enum.IntEnum):
    """rig_access_t."""

    READ = 1
    READ_WRITE = 3


class Claim(enum.IntEnum):
    """rig_claim_t: the answers of Buffer.claim."""

    CLAIMED = 0
    WAIT = 1
    DEAD = 2
    EXCLUSIVE = 3
    READ_ONLY = 4
    INVALID = 5


class RefKind(enum.IntEnum):
    """rig_ref_kind_t."""

    READ = 1
    WRITE = 2
    READ_WRITE = 3
    UNORDERED = 4
    ENTRY = 5


class PartKind(enum.IntEnum):
    LAUNCH = 1
    COPY = 2
    FILL = 3
    WORDS = 4


class DiskMode(enum.IntEnum):
    READ = 0
    READ_WRITE = 1


class DmaKind(enum.IntEnum):
    BUS = 1
    DMABUF = 2


POINT_VALUE_MAX = (1 << 47) - 1
WORD_BYTES = 4


class Point(ctypes.Structure):
    _fields_ = [("bits", ctypes.c_uint64)]


class OpenOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("config", ctypes.c_char_p)]


class ServiceOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("socket", ctypes.c_char_p)]


class Box(ctypes.Structure):
    _fields_ = [
        ("src_offset", c_int64),
        ("dst_offset", c_int64),
        ("width", c_int64),
        ("rows", c_int64),
        ("src_pitch", c_int64),
        ("dst_pitch", c_int64),
    ]


class DmaRange(ctypes.Structure):
    _fields_ = [("address", ctypes.c_uint64), ("bytes", ctypes.c_uint64)]


class Dma(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("kind", ctypes.c_int),
        ("ranges", ctypes.POINTER(DmaRange)),
        ("range_count", ctypes.c_size_t),
        ("fd", ctypes.c_int),
        ("offset", c_int64),
        ("start", c_int64),
    ]


class TensorInfo(ctypes.Structure):
    """rig_tensor_info_t (safetensors.h)."""

    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_char_p),
        ("shape", ctypes.POINTER(c_int64)),
        ("rank", ctypes.c_size_t),
        ("offset", c_int64),
        ("bytes", c_int64),
    ]


class Operand(ctypes.Structure):
    _fields_ = [("slot", ctypes.c_uint32), ("fixed", c_void_p)]


class Ref(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int),
        ("memory", Operand),
        ("at", c_int64),
        ("access", ctypes.c_int),
        ("entry", c_void_p),
    ]


class WordWrite(ctypes.Structure):
    _fields_ = [("memory", Operand), ("offset", c_int64), ("value", ctypes.c_uint64)]


class _Launch(ctypes.Structure):
    _fields_ = [
        ("function", c_void_p),
        ("refs", ctypes.POINTER(Ref)),
        ("ref_count", ctypes.c_size_t),
        ("params", c_int64),
    ]


class _Copy(ctypes.Structure):
    _fields_ = [("src", Operand), ("dst", Operand)]


class _Fill(ctypes.Structure):
    _fields_ = [("dst", Operand), ("value", ctypes.c_uint8)]


class _Words(ctypes.Structure):
    _fields_ = [("writes", ctypes.POINTER(WordWrite)), ("count", ctypes.c_size_t)]


class _PartUnion(ctypes.Union):
    _fields_ = [
        ("launch", _Launch),
        ("copy", _Copy),
        ("fill", _Fill),
        ("words", _Words),
        ("reserved", ctypes.c_uint64 * 8),
    ]


class Part(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("u", _PartUnion)]


release_fn = ctypes.CFUNCTYPE(None, c_void_p)


class SubmissionOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("keep", release_fn), ("keep_context", c_void_p)]


probe_fn = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_char_p, c_void_p)
access_fn = ctypes.CFUNCTYPE(ctypes.c_int, c_void_p, c_int64, c_void_p)
local_init_fn = ctypes.CFUNCTYPE(c_void_p, c_void_p, c_void_p)
local_drop_fn = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)
