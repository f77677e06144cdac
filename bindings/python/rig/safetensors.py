"""safetensors checkpoints (safetensors.h) read into any device's memory.

    tensors = rig.load_safetensors("model.safetensors", rig.open("MEM:0"))
    weight = numpy.from_dlpack(tensors["embed.weight"])  # typed and shaped

The header is read and checked before a byte of data is: a malformed one
raises DiskError naming the file and what is wrong.
"""

import ctypes

from . import dlpack
from ._handle import Owned
from ._lib import lib, text
from ._types import Memory
from .buffer import Buffer
from .errors import check

c_void_p = ctypes.c_void_p

# The header's dtypes as DLPack (code, bits).  The 8-bit floats (F8_E5M2,
# F8_E4M3) have none that numpy and PyTorch read alike: their DLPack export
# raises BufferError, and their bytes stay in Tensor.buffer.
DLPACK_TYPES = {"BOOL": (dlpack.BOOL, 8), "BF16": (dlpack.BFLOAT, 16)}
DLPACK_TYPES.update({"%s%d" % (letter, bits): (code, bits)
                     for letter, code, sizes in (("U", dlpack.UINT, (8, 16, 32, 64)),
                                                 ("I", dlpack.INT, (8, 16, 32, 64)),
                                                 ("F", dlpack.FLOAT, (16, 32, 64)))
                     for bits in sizes})


class TensorHeader:
    """A tensor as the header describes it: name, dtype (as the header
    writes it: "F32", "BF16", ...), shape (a tuple), offset of its first
    byte in the file, nbytes."""

    __slots__ = ("name", "dtype", "shape", "offset", "nbytes")

    def __init__(self, info):
        self.name = text(info.name)
        self.dtype = text(info.dtype)
        self.shape = tuple(info.shape[k] for k in range(info.rank))
        self.offset = info.offset
        self.nbytes = info.bytes

    def __repr__(self):
        return "rig.TensorHeader(%r, %s, %s, %d bytes)" % (self.name, self.dtype, list(self.shape), self.nbytes)


class Tensor(TensorHeader):
    """A loaded tensor: its header's fields and buffer, a rig.Buffer of its
    bytes (a view of the file's arena for an arena load).  DLPack
    (numpy.from_dlpack, torch.from_dlpack) gives its elements, of its dtype
    and shape, in place, as Buffer.__dlpack__ gives bytes."""

    __slots__ = ("buffer",)

    def __init__(self, header, buffer):
        for field in TensorHeader.__slots__:
            setattr(self, field, getattr(header, field))
        self.buffer = buffer

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        dl_type = DLPACK_TYPES.get(self.dtype)
        if dl_type is None:
            raise BufferError("the dtype %s of tensor %r has no DLPack type" % (self.dtype, self.name))
        dlpack.check_request(dlpack.device_of(self.buffer), dl_device, copy)
        return dlpack.capsule(self.buffer, dl_type, self.shape)

    def __dlpack_device__(self):
        return dlpack.device_of(self.buffer)

    def close(self):
        """Releases the tensor's buffer."""
        self.buffer.close()

    def __repr__(self):
        return "rig.Tensor(%r, %s, %s, %d bytes on %s)" % (self.name, self.dtype, list(self.shape), self.nbytes,
                                                         self.buffer.device.name)


class Safetensors(Owned):
    """rig_safetensors_open: a checkpoint whose header is read and checked;
    tensors lists its TensorHeaders in the order of their bytes."""

    __slots__ = ("tensors", "data_bytes")
    _release = lib.rig_safetensors_close
    _kind = "safetensors file"

    def __init__(self, path):
        out = c_void_p()
        check(lib.rig_safetensors_open(str(path).encode(), ctypes.byref(out)))
        super().__init__(out.value)
        count = lib.rig_safetensors_count(out.value)
        self.tensors = [TensorHeader(lib.rig_safetensors_tensor(out.value, i).contents) for i in range(count)]
        self.data_bytes = lib.rig_safetensors_data_bytes(out.value)

    def load(self, device, memory=Memory.DEVICE, arena=False):
        """rig_safetensors_load (rig_safetensors_load_arena with arena): every
        tensor into new memory of kind memory on device.  Answers a dict of
        Tensors by name, in the file's order."""
        n = len(self.tensors)
        buffers = (c_void_p * max(n, 1))()
        with self._using() as st:
            if arena:
                whole = c_void_p()
                check(lib.rig_safetensors_load_arena(st, device._ptr, int(memory), ctypes.byref(whole), buffers))
                # The views hold the arena's memory.
                lib.rig_buffer_unref(whole.value)
            else:
                check(lib.rig_safetensors_load(st, device._ptr, int(memory), buffers))
            return {t.name: Tensor(t, Buffer(buffers[i])) for i, t in enumerate(self.tensors)}


def load_safetensors(path, device, memory=Memory.DEVICE, arena=False):
    """Every tensor of the checkpoint at path loaded onto device (see
    Safetensors.load): a dict of Tensors by name, in the file's order."""
    with Safetensors(path) as st:
        return st.load(device, memory, arena)
