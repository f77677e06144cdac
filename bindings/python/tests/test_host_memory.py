"""A host buffer's bytes in numpy without a copy: through the buffer
protocol (host_view, memoryview, numpy.asarray) and through DLPack, each at
the buffer's own address."""

import ctypes
import sys

import numpy
import pytest

import rig


def test_numpy_asarray_reads_the_bytes_in_place(mem):
    with rig.Buffer.create(mem, 4096) as b:
        b.fill(9)
        array = numpy.asarray(b)
        assert array.ctypes.data == b.host, "numpy.asarray copied the bytes"
        assert array.shape == (4096,) and array.dtype == numpy.uint8
        assert (array == 9).all()
        array[:4] = 1  # written in place: rig reads what numpy wrote
        assert b.read_bytes(n=5) == b"\x01\x01\x01\x01\x09"
        del array


def test_the_buffer_protocol_gives_the_same_address(mem):
    with rig.Buffer.create(mem, 256) as b:
        view = b.host_view()
        assert ctypes.addressof(view) == b.host
        m = memoryview(view)
        assert m.nbytes == 256 and not m.readonly
        assert numpy.frombuffer(m, dtype=numpy.uint8).ctypes.data == b.host
        if sys.version_info >= (3, 12):
            assert numpy.frombuffer(memoryview(b), dtype=numpy.uint8).ctypes.data == b.host
        del m, view


def test_a_read_view_is_read_only(mem):
    with rig.Buffer.create(mem, 64) as b:
        m = b.memoryview(rig.Access.READ)
        assert m.readonly
        with pytest.raises(TypeError):
            m[0] = 1
        del m


def test_dlpack_gives_numpy_the_same_address(mem):
    with rig.Buffer.create(mem, 1024) as b:
        b.fill(3)
        assert b.__dlpack_device__() == (1, 0)  # kDLCPU
        array = numpy.from_dlpack(b)
        assert array.ctypes.data == b.host, "DLPack copied the bytes"
        assert array.shape == (1024,) and (array == 3).all()
        del array


def test_a_typed_buffer_through_dlpack_and_numpy(mem):
    values = numpy.arange(16, dtype=numpy.float32)
    db = rig.DeviceBuffer("MEM:0", 16, rig.dtypes.float32, rig.RigAllocator())
    db.ensure_allocated()
    db.copyin(values)
    array = numpy.from_dlpack(db)
    assert array.dtype == numpy.float32 and (array == values).all()
    assert array.ctypes.data == db.addr()
    del array


def test_dlpack_of_memory_the_host_does_not_address():
    sim = rig.open("SIM:0")
    with rig.Buffer.create(sim, 64) as b:
        with pytest.raises(BufferError):
            b.__dlpack__()


def test_an_unconsumed_capsule_releases_its_claim(mem):
    b = rig.Buffer.create(mem, 64)
    capsule = b.__dlpack__()
    assert not b.free(), "the capsule's claim keeps the memory"
    del capsule
    assert b.free(), "the capsule's destructor ended its claim"
    b.close()


def test_of_memory_wraps_numpy_without_a_copy():
    array = numpy.zeros(64, dtype=numpy.uint8)
    released = []
    b = rig.Buffer.of_memory(array, on_release=lambda: released.append(True))
    assert b.host == array.ctypes.data
    b.fill(5)
    assert (array == 5).all()
    b.close()
    assert released == [True]


def test_an_export_hands_numpy_the_bytes_for_good():
    b = rig.Buffer.create(rig.host(), 128)
    b.fill(4)
    with b.export() as e:
        array = numpy.asarray(e)
        assert array.ctypes.data == e.address and (array == 4).all()
        del array
    b.close()


def test_cuda_memory_is_described_as_kdlcuda(monkeypatch):
    """Where no GPU is at hand: a sim buffer that names itself CUDA:3, whose
    driver's address is 0x10000 + 16, gives a capsule of kDLCUDA device 3
    at that address."""
    from rig import dlpack

    class Named:
        name = "CUDA:3"

    sim = rig.open("SIM:0")
    b = rig.Buffer.create(sim, 64)
    monkeypatch.setattr(rig.Buffer, "device", property(lambda self: Named()))
    monkeypatch.setattr(rig.Buffer, "handle", lambda self: (0x10000, 16))
    assert b.__dlpack_device__() == (dlpack.K_DL_CUDA, 3)
    capsule = b.__dlpack__()
    get = ctypes.PyDLL(None).PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    tensor = dlpack.DLManagedTensor.from_address(get(capsule, b"dltensor")).dl_tensor
    assert (tensor.device.device_type, tensor.device.device_id) == (dlpack.K_DL_CUDA, 3)
    assert tensor.data == 0x10010 and tensor.ndim == 1 and tensor.shape[0] == 64
    del tensor, capsule
    monkeypatch.undo()
    assert b.free(), "the capsule's claim outlived it"
    b.close()


def test_dlpack_refuses_a_copy_or_another_device(mem):
    with rig.Buffer.create(mem, 16) as b:
        with pytest.raises(BufferError):
            b.__dlpack__(copy=True)
        with pytest.raises(BufferError):
            b.__dlpack__(dl_device=(2, 0))
        capsule = b.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False)
        del capsule


def test_numpy_reads_caller_memory_that_rig_wraps():
    data = bytearray(b"\x01" * 32)
    with rig.Buffer.of_memory(data) as b:
        array = numpy.asarray(b)
        assert array.ctypes.data == b.host and (array == 1).all()
        del array
