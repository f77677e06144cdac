"""rig.DeviceBuffer, the spec's Device.Buffer, over memory devices: every
TOLK rule of spec/RULES.md is named by the test that asserts it (TOLK-01 to
TOLK-50), through an allocator that counts its hooks' calls and can hide
its offset and transfer hooks."""

import collections
import gc

import pytest

import rig
from rig import DeviceBuffer, dtypes


class Counting(rig.RigAllocator):
    """RigAllocator, counting the calls of its hooks."""

    def __init__(self):
        self.supports_offset = True
        self.supports_transfer = True
        self.calls = collections.Counter()

    allocs = property(lambda self: self.calls["alloc"])
    frees = property(lambda self: self.calls["free"])
    offsets = property(lambda self: self.calls["offset"])
    transfers = property(lambda self: self.calls["transfer"])


def _counted(hook):
    def counted(self, *args):
        self.calls[hook] += 1
        return getattr(rig.RigAllocator, hook)(self, *args)

    return counted


for _hook in ("alloc", "free", "offset", "transfer"):
    setattr(Counting, _hook, _counted(_hook))


@pytest.fixture
def a():
    return Counting()


def floats(a, n=64, device="MEM:0"):
    return DeviceBuffer(device, n, dtypes.float32, a)


def pattern(n, seed=1):
    return bytes((i * 7 + seed) & 0xFF for i in range(n))


def test_create_makes_an_unallocated_base_buffer(a):
    """TOLK-01, TOLK-02, TOLK-03"""
    b = DeviceBuffer.create("MEM:0", 10, dtypes.int32, a)
    assert not b.is_allocated() and not b.is_initialized() and a.allocs == 0, "TOLK-01"
    assert (b.device, b.size, b.dtype) == ("MEM:0", 10, dtypes.int32), "TOLK-02"
    assert b.spec == rig.BufferSpec.DEFAULT, "TOLK-03"
    mapped = DeviceBuffer("MEM:0", 1, dtypes.int8, a, rig.BufferSpec(rig.Memory.MAPPED))
    assert mapped.spec.memory == rig.Memory.MAPPED, "TOLK-02"


def test_every_buffer_has_a_unique_id(a):
    """TOLK-04, TOLK-13"""
    ids = set()
    for _ in range(8):
        b = floats(a)
        v = b.view(4, dtypes.float32, 16)
        vv = v.view(1, dtypes.int32, 4)
        for x in (b, v, vv):
            assert x.id not in ids, "TOLK-04"
            ids.add(x.id)
        assert b.base_id == b.id and v.base_id == b.id and vv.base_id == b.id, "TOLK-13"


def test_the_last_reference_deallocates(a):
    """TOLK-05"""
    b = floats(a)
    b.allocate()
    v = b.view(4, dtypes.float32, 0)
    v.allocate()
    del v, b
    gc.collect()
    assert a.frees == 1, "TOLK-05: the unreachable buffer's storage was freed %d times" % a.frees


def test_the_uop_refcount_frees_and_keeps_nothing(a):
    """TOLK-06, TOLK-32, TOLK-33"""
    b = floats(a)
    v = b.view(4, dtypes.float32, 8)
    assert b.add_ref(5) is b and b.uop_refcount() == 5, "TOLK-33"
    v.add_ref(2)
    assert b.uop_refcount() == 7 == v.uop_refcount(), "TOLK-32"
    b.allocate()
    b.add_ref(-7)
    assert b.uop_refcount() == 0 and b.is_allocated(), "TOLK-06: a count of 0 freed"
    b.add_ref(3)
    del v, b
    gc.collect()
    assert a.frees == 1, "TOLK-06: a positive count kept the storage"


def test_a_view_reads_back_as_made(a):
    """TOLK-07, TOLK-08, TOLK-15, TOLK-31"""
    b = DeviceBuffer("MEM:0", 64, dtypes.uint8, a, rig.BufferSpec(rig.Memory.MAPPED))
    v = b.view(6, dtypes.int16, 20)
    assert (v.size, v.dtype, v.offset) == (6, dtypes.int16, 20), "TOLK-07"
    assert v.allocator is b.allocator and v.spec == b.spec, "TOLK-08"
    assert v.allocator is a, "TOLK-31"
    assert b.offset == 0, "TOLK-15"
    assert v.view(1, dtypes.int16, 4).offset == 24, "TOLK-07: a view of a view counts from the root"


def test_a_view_shares_the_base_storage(a):
    """TOLK-09"""
    b = DeviceBuffer("MEM:0", 64, dtypes.uint8, a)
    b.allocate()
    b.copyin(bytes(64))
    v = b.view(4, dtypes.int32, 16)
    v.allocate()
    v.copyin(pattern(16))
    data = b.as_bytes()
    assert data[16:32] == pattern(16) and data[15] == 0 and data[32] == 0, "TOLK-09"


def test_view_refuses_offsets_outside_the_buffer(a):
    """TOLK-10, TOLK-11, TOLK-12"""
    b = DeviceBuffer("MEM:0", 64, dtypes.uint8, a)
    with pytest.raises(rig.InvalidError):  # TOLK-10
        b.view(1, dtypes.uint8, -1)
    with pytest.raises(rig.InvalidError):  # TOLK-11
        b.view(1, dtypes.uint8, 64)
    with pytest.raises(rig.InvalidError):  # TOLK-12
        b.view(2, dtypes.int32, 60)
    v = b.view(8, dtypes.uint8, 48)
    with pytest.raises(rig.InvalidError):  # TOLK-12, of a view
        v.view(4, dtypes.int32, 4)
    v.view(2, dtypes.int32, 0)


def test_base_is_the_root(a):
    """TOLK-14"""
    b = floats(a)
    v = b.view(8, dtypes.float32, 32)
    assert b.base is b and v.base is b and v.view(2, dtypes.float32, 4).base is b, "TOLK-14"


def test_nbytes_is_size_times_itemsize(a):
    """TOLK-16"""
    for t in (dtypes.int8, dtypes.float16, dtypes.float32, dtypes.float64):
        assert DeviceBuffer("MEM:0", 12, t, a).nbytes == 12 * t.itemsize, "TOLK-16"


def test_allocate_materialises_once(a):
    """TOLK-17, TOLK-19"""
    b = floats(a)
    b.allocate()
    assert b.is_allocated() and b.is_initialized() and a.allocs == 1, "TOLK-17"
    with pytest.raises(rig.InvalidError):  # TOLK-19
        b.allocate()
    assert a.allocs == 1, "TOLK-19"


def test_allocating_a_view_allocates_its_base_first(a):
    """TOLK-18, TOLK-22, TOLK-23"""
    b = floats(a)
    v = b.view(4, dtypes.float32, 16)
    other = b.view(4, dtypes.float32, 0)
    assert not v.is_allocated(), "TOLK-22"
    v.allocate()
    assert b.is_allocated() and a.allocs == 1 and a.offsets == 1, "TOLK-18"
    assert v.addr() == b.addr() + 16, "TOLK-18: the view's storage is not at its offset"
    assert other.is_allocated(), "TOLK-22"
    assert not other.is_initialized(), "TOLK-23"


def test_allocating_a_view_needs_offset_views(a):
    """TOLK-20, TOLK-28"""
    a.supports_offset = False
    b = floats(a)
    v = b.view(4, dtypes.float32, 16)
    assert not v.supports_offset() and not b.supports_offset(), "TOLK-28"
    with pytest.raises(rig.InvalidError):  # TOLK-20
        v.allocate()
    assert a.offsets == 0
    a.supports_offset = True
    assert v.supports_offset(), "TOLK-28"


def test_ensure_allocated_allocates_once(a):
    """TOLK-21"""
    b = floats(a)
    b.ensure_allocated()
    first = b.addr()
    b.ensure_allocated()
    assert a.allocs == 1 and b.addr() == first, "TOLK-21"
    v = b.view(2, dtypes.float32, 0)
    v.ensure_allocated()
    v.ensure_allocated()
    assert a.offsets == 1 and v.is_initialized(), "TOLK-21"


def test_deallocate_frees_a_base_and_does_nothing_twice(a):
    """TOLK-24, TOLK-26"""
    b = floats(a)
    b.deallocate()
    assert a.frees == 0, "TOLK-26"
    b.allocate()
    b.deallocate()
    assert a.frees == 1 and not b.is_allocated(), "TOLK-24"
    b.deallocate()
    assert a.frees == 1, "TOLK-26"


def test_deallocate_refuses_a_base_with_views_and_detaches_a_view(a):
    """TOLK-25, TOLK-27"""
    b = floats(a)
    v = b.view(4, dtypes.float32, 16)
    v.allocate()
    with pytest.raises(rig.InvalidError):  # TOLK-27
        b.deallocate()
    assert b.is_allocated() and a.frees == 0, "TOLK-27: the refused deallocate freed"
    v.deallocate()
    assert not v.is_initialized() and b.is_allocated() and a.frees == 0, "TOLK-25"
    b.deallocate()
    assert a.frees == 1, "TOLK-25: the detached view still counts"


def test_supports_transfer_needs_the_hook_and_one_backend(a):
    """TOLK-29, TOLK-30"""
    m0, m1, cpu = floats(a, 8, "MEM:0"), floats(a, 8, "MEM:1"), floats(a, 8, "CPU")
    assert m1.supports_transfer(m0), "TOLK-29"
    assert not cpu.supports_transfer(m0) and not m0.supports_transfer(cpu), "TOLK-30"
    a.supports_transfer = False
    assert not m1.supports_transfer(m0), "TOLK-29"


def test_copyin_and_copyout(a):
    """TOLK-34, TOLK-35, TOLK-36, TOLK-37, TOLK-38, TOLK-39, TOLK-40"""
    b = floats(a, 16)
    data = pattern(64)
    out = bytearray(64)
    with pytest.raises(rig.InvalidError):  # TOLK-36
        b.copyin(data)
    with pytest.raises(rig.InvalidError):  # TOLK-39
        b.copyout(out)
    assert a.allocs == 0
    b.allocate()
    with pytest.raises(rig.InvalidError):  # TOLK-35
        b.copyin(data[:63])
    with pytest.raises(rig.InvalidError):  # TOLK-38
        b.copyout(bytearray(65))
    b.copyin(data)
    b.copyout(out)
    assert bytes(out) == data, "TOLK-34, TOLK-37"
    fresh = b.as_bytes()
    assert isinstance(fresh, bytes) and fresh == data, "TOLK-40"


def test_transfer_through_the_hook(a):
    """TOLK-41, TOLK-42, TOLK-43, TOLK-44, TOLK-45"""
    src, dst = floats(a, 16, "MEM:0"), floats(a, 16, "MEM:1")
    with pytest.raises(rig.InvalidError):  # TOLK-44
        DeviceBuffer.transfer(dst, floats(a, 15))
    with pytest.raises(rig.InvalidError):  # TOLK-45
        DeviceBuffer.transfer(dst, DeviceBuffer("MEM:0", 16, dtypes.int32, a))
    assert a.allocs == 0
    src.allocate()
    src.copyin(pattern(64, 3))
    assert DeviceBuffer.transfer(dst, src) is True, "TOLK-41"
    assert a.transfers == 1 and dst.is_allocated(), "TOLK-41, TOLK-43"
    assert dst.as_bytes() == pattern(64, 3), "TOLK-41"
    fresh_src, fresh_dst = floats(a, 16, "MEM:0"), floats(a, 16, "MEM:1")
    assert DeviceBuffer.transfer(fresh_dst, fresh_src)
    assert fresh_src.is_allocated() and fresh_dst.is_allocated(), "TOLK-43"
    a.supports_transfer = False
    none = floats(a, 16, "MEM:1")
    assert DeviceBuffer.transfer(none, src) is False, "TOLK-42"
    assert not none.is_allocated() and a.transfers == 2, "TOLK-42"


def test_copy_between_through_host_memory(a):
    """TOLK-46, TOLK-47, TOLK-48, TOLK-49"""
    a.supports_transfer = False
    src, dst = floats(a, 16, "MEM:0"), floats(a, 16, "CPU")
    with pytest.raises(rig.InvalidError):  # TOLK-48
        DeviceBuffer.copy_between(dst, floats(a, 17))
    with pytest.raises(rig.InvalidError):  # TOLK-49
        DeviceBuffer.copy_between(dst, DeviceBuffer("MEM:0", 16, dtypes.uint32, a))
    assert a.allocs == 0
    DeviceBuffer.copy_between(dst, src)
    assert src.is_allocated() and dst.is_allocated(), "TOLK-47"
    src.copyin(pattern(64, 9))
    DeviceBuffer.copy_between(dst, src)
    assert dst.as_bytes() == pattern(64, 9) and a.transfers == 0, "TOLK-46"


def test_addr_allocates_and_answers_the_address(a):
    """TOLK-50"""
    b = floats(a)
    address = b.addr()
    assert b.is_allocated() and a.allocs == 1, "TOLK-50"
    assert address == b._storage.host, "TOLK-50"
    assert b.addr() == address
    assert b.view(4, dtypes.float32, 16).addr() == address + 16, "TOLK-50"


def test_an_allocator_without_a_required_hook_cannot_be_made():
    class NoAddr(rig.Allocator):
        def alloc(self, device, nbytes, spec):
            return None

        def free(self, storage, nbytes, spec):
            pass

        def copyin(self, storage, data):
            pass

        def copyout(self, out, storage):
            pass

    with pytest.raises(TypeError, match="addr"):
        NoAddr()

    class Plain(NoAddr):
        def addr(self, storage):
            return 0

    # Its optional hooks, which it says it lacks, refuse with the reason.
    with pytest.raises(rig.InvalidError, match="supports_offset is False"):
        Plain().offset(None, 1, 0)
    with pytest.raises(rig.InvalidError, match="supports_transfer is False"):
        Plain().transfer(None, None, 1)
