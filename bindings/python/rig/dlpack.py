"""DLPack (the unversioned DLManagedTensor of dlpack.h, which numpy 1.22 on,
PyTorch and CuPy take), made with ctypes.

A capsule named "dltensor" holds a DLManagedTensor over a buffer's bytes in
place.  Its manager keeps the rig.Buffer open and a claim on its memory
(taken once the work the access must follow is done, so the bytes are
ready on any stream) until the consumer calls the deleter, or until the
capsule dies unconsumed, whose destructor calls it then.

Devices: memory the host addresses is kDLCPU; the memory of CUDA:n (and of
its instances, CUDA:n~TAG) is kDLCUDA device n, its address the driver's
device pointer (rig_buffer_handle); AMD:n's kDLROCM.  Other memory (a sim
device's, a proxy's, whose bytes live in rigd) has no DLPack device, and
__dlpack__ raises BufferError, as the DLPack protocol asks.
"""

import ctypes
import re
import threading

from ._lib import lib
from ._types import Access, Claim

K_DL_CPU = 1
K_DL_CUDA = 2
K_DL_ROCM = 10

# DLDataType codes.
INT, UINT, FLOAT, BFLOAT, BOOL = 0, 1, 2, 4, 6


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


UINT8 = (UINT, 8)


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


_deleter_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", _deleter_fn),
]

_NAME = ctypes.create_string_buffer(b"dltensor")
_live = {}  # the managed tensor's address: (tensor, shape, buffer)
_live_lock = threading.Lock()

# Prototypes of its own: others may set ctypes.pythonapi's differently.
_api = ctypes.PyDLL(None)
_capsule_destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _capsule_destructor]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


@_deleter_fn
def _deleter(address):
    with _live_lock:
        entry = _live.pop(address, None)
    if entry is not None:
        entry[2]._end_view()


@_capsule_destructor
def _destroy_capsule(capsule):
    # A capsule the consumer took is renamed "used_dltensor": its deleter is
    # the consumer's to call.
    if _api.PyCapsule_IsValid(capsule, _NAME):
        _deleter(_api.PyCapsule_GetPointer(capsule, _NAME))


_INDEXED = re.compile(r"^(CUDA|AMD):(\d+)(~[^@]*)?$")


def device_of(buffer):
    """(DLPack device type, device id) of the buffer's memory, or
    BufferError where it has none."""
    if buffer.host or buffer.nbytes == 0:
        return K_DL_CPU, 0
    name = buffer.device.name
    match = _INDEXED.match(name)
    if not match:
        raise BufferError("%s's memory has no DLPack device: the host does not address it" % name)
    return (K_DL_CUDA if match.group(1) == "CUDA" else K_DL_ROCM), int(match.group(2))


def check_request(device, dl_device=None, copy=None):
    """Refuses what the DLPack protocol's newer keywords ask that rig cannot
    give: a copy, or another device."""
    if copy:
        raise BufferError("rig hands its memory without a copy (copy=True asked for one)")
    if dl_device is not None and tuple(dl_device) != tuple(device):
        raise BufferError("the memory is on DLPack device %s, not %s" % (tuple(device), tuple(dl_device)))


def _address(buffer, device_type):
    if device_type == K_DL_CPU:
        return buffer.host
    handle, offset = buffer.handle()
    return handle + offset


def capsule(buffer, dtype, shape):
    """A "dltensor" capsule over buffer's bytes as a C-contiguous array of
    dtype ((code, bits)) and shape."""
    device_type, device_id = device_of(buffer)
    access = buffer.access
    b = buffer._acquire()
    try:
        answer = Claim(lib.rig_buffer_claim(b, int(access)))
        if answer not in (Claim.CLAIMED, Claim.WAIT):
            raise BufferError("the buffer's bytes cannot be claimed: %s" % answer.name)
        try:
            if answer == Claim.WAIT:
                buffer.wait(Access(access))
            address = _address(buffer, device_type)
        except BaseException:
            lib.rig_buffer_release(b)
            raise
    except BaseException:
        buffer._done()
        raise
    dims = (ctypes.c_int64 * len(shape))(*shape)
    tensor = DLManagedTensor()
    tensor.dl_tensor.data = address
    tensor.dl_tensor.device = DLDevice(device_type, device_id)
    tensor.dl_tensor.ndim = len(shape)
    tensor.dl_tensor.dtype = DLDataType(dtype[0], dtype[1], 1)
    tensor.dl_tensor.shape = dims
    tensor.dl_tensor.strides = None  # C-contiguous
    tensor.dl_tensor.byte_offset = 0
    tensor.deleter = _deleter
    key = ctypes.addressof(tensor)
    with _live_lock:
        _live[key] = (tensor, dims, buffer)
    return _api.PyCapsule_New(key, _NAME, _destroy_capsule)
