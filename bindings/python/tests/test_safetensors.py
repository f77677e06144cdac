"""safetensors checkpoints through the package: rig.load_safetensors gives
each tensor's name, dtype, shape and buffer, and DLPack its elements typed
and shaped.  No rule ID: the format is Hugging Face's (safetensors.h);
COPY-04 (the io device copies into memory the host addresses) and COPY-08
(a file cut short answers RIG_EIO) are the copies' rules they rest on."""

import json
import struct

import pytest

import rig

numpy = pytest.importorskip("numpy")


def write_checkpoint(path, arrays, header=None):
    """A safetensors file of arrays (name: (dtype, numpy array)), their
    bytes one after another; header replaces the JSON text."""
    entries, data, offset = {}, b"", 0
    for name, (dtype, array) in arrays.items():
        raw = array.tobytes()
        entries[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(raw)]}
        data += raw
        offset += len(raw)
    text = header if header is not None else json.dumps(entries).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)
    return path


def arrays():
    """Odd sizes first, so that the large tensor's bytes start unaligned;
    an empty tensor among them."""
    return {
        "embed": ("U8", (numpy.arange(4097) * 7 % 251).astype(numpy.uint8)),
        "empty": ("F32", numpy.zeros((0, 3), numpy.float32)),
        "weight": ("F32", numpy.linspace(-1, 1, 512 * 700, dtype=numpy.float32).reshape(512, 700)),
        "steps": ("I64", numpy.array([3, -1, 1 << 40], numpy.int64)),
    }


@pytest.mark.parametrize("arena", [False, True], ids=["per_tensor", "arena"])
def test_tensors_load_typed_and_shaped(tmp_path, mem, arena):
    """COPY-04: each tensor's buffer holds its bytes; DLPack gives a numpy
    array of its dtype and shape equal to the one written."""
    written = arrays()
    path = write_checkpoint(tmp_path / "model.safetensors", written)
    tensors = rig.load_safetensors(path, mem, arena=arena)
    assert list(tensors) == list(written), "the file's order"
    for name, (dtype, array) in written.items():
        t = tensors[name]
        assert (t.name, t.dtype, t.shape, t.nbytes) == (name, dtype, array.shape, array.nbytes)
        assert t.buffer.device.name == "MEM:0" and t.buffer.nbytes == array.nbytes
        got = numpy.from_dlpack(t)
        assert got.dtype == array.dtype and got.shape == array.shape
        assert numpy.array_equal(got, array), name
        del got
        t.close()


def test_the_header_reads_before_any_load(tmp_path):
    written = arrays()
    path = write_checkpoint(tmp_path / "model.safetensors", written)
    with rig.Safetensors(path) as st:
        assert [t.name for t in st.tensors] == list(written)
        assert st.data_bytes == sum(a.nbytes for _, a in written.values())
        header_bytes = struct.unpack("<Q", path.read_bytes()[:8])[0]
        assert st.tensors[0].offset == 8 + header_bytes
        assert [t.offset for t in st.tensors[1:]] == [t.offset + t.nbytes for t in st.tensors[:-1]]


def test_an_eight_bit_float_has_no_dlpack_type(tmp_path, mem):
    path = write_checkpoint(tmp_path / "f8.safetensors", {"f8": ("F8_E4M3", numpy.arange(16, dtype=numpy.uint8))})
    t = rig.load_safetensors(path, mem)["f8"]
    assert t.buffer.read_bytes() == bytes(range(16))
    with pytest.raises(BufferError, match="F8_E4M3"):
        t.__dlpack__()


@pytest.mark.parametrize("case", ["lies", "cut", "count"])
def test_a_malformed_checkpoint_is_refused(tmp_path, mem, case):
    """COPY-08's RIG_EIO (DiskError), naming the file and what is wrong,
    before any buffer is made."""
    path = tmp_path / (case + ".safetensors")
    if case == "lies":
        header = json.dumps({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 32]}}).encode()
        write_checkpoint(path, {"x": ("F32", numpy.zeros(4, numpy.float32))}, header=header)
        said = "data_offsets"
    elif case == "cut":
        write_checkpoint(path, {"x": ("F32", numpy.zeros(64, numpy.float32))})
        path.write_bytes(path.read_bytes()[:-10])
        said = "the file holds"
    else:
        path.write_bytes(struct.pack("<Q", 1 << 40) + b"{}")
        said = "does not fit"
    allocated = mem.allocated
    with pytest.raises(rig.DiskError, match=said) as raised:
        rig.load_safetensors(path, mem)
    assert str(path) in str(raised.value)
    assert mem.allocated == allocated
