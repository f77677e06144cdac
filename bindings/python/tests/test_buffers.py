"""Devices, buffers, views, borrows, copies, fills, points and errors
through the package.  Rules asserted: COPY-77, COPY-82, COPY-87, COPY-91,
COPY-101, BUF-48, COPY-79."""

import errno

import pytest

import rig


def test_devices_answer_their_properties(mem):
    assert mem.name == "MEM:0"
    assert mem.arch == "memory"
    assert mem.alignment == 64
    assert mem.runs_on_host
    assert mem.lost is None
    assert rig.open("MEM:0") is mem, "one Device per rig_device_t"
    assert rig.host().name == "CPU"
    assert ("MEM:0", None) in rig.probe()


def test_fill_copy_read_back(mem, mem1):
    """COPY-101, COPY-77, COPY-87: fill, copy to another device, read back."""
    with rig.Buffer.create(mem, 4096) as src, rig.Buffer.create(mem1, 4096) as dst:
        src.fill(0xA5)
        dst.fill(0)
        rig.copy(src, dst)
        assert dst.read_bytes() == b"\xa5" * 4096


def test_blits_keep_positions(mem):
    """COPY-82: blits between Python bytes and device memory."""
    pattern = bytes(range(256))
    with rig.Buffer.create(mem, 256) as b:
        b.write_bytes(pattern)
        window = bytearray(16)
        b.readinto(window, at=100)
        assert bytes(window) == pattern[100:116]
        assert b.read_bytes(at=200, n=8) == pattern[200:208]


def test_views_and_submitted_copies(mem, mem1):
    """COPY-91: a submitted copy of boxes, waited for through its point."""
    with rig.Buffer.create(mem, 64) as a, rig.Buffer.create(mem1, 64) as b:
        a.write_bytes(bytes(range(64)))
        b.fill(0)
        p = rig.submit_copy(a, b, [rig.row(0, 32, 16)])
        p.wait()
        assert p.reached()
        assert b.read_bytes(at=32, n=16) == bytes(range(16))
        with b.view(32, 16) as v:
            assert v.nbytes == 16 and v.device is mem1
            assert v.span == (32, b.span[1])
            assert v.read_bytes() == bytes(range(16))
            assert v.overlaps(b) and v.share_byte(b)


def test_submit_fill_gives_a_reached_host_point(mem):
    """COPY-57: a fill the host makes returns a reached host point."""
    with rig.Buffer.create(mem, 1024) as b:
        p = b.submit_fill(0x3C)
        assert p.device == rig.host()
        assert p.reached()
        p.wait()
        assert b.read_bytes() == b"\x3c" * 1024
        later = b.submit_fill(0x3D, waits=[p])
        later.wait()
        assert b.read_bytes(n=1) == b"\x3d"


def test_borrow_on_the_host(mem):
    with rig.Buffer.create(mem, 4096) as b:
        borrowed = b.borrow(rig.host())
        assert borrowed is not None and borrowed.device == rig.host()
        assert borrowed.host == b.host
        borrowed.close()


def test_refused_calls_raise_invalid_error_with_the_message(mem):
    """BUF-48, COPY-79: refused calls answer RIG_EINVAL with a message."""
    with rig.Buffer.create(mem, 4096) as b, rig.Buffer.create(mem, 2048) as shorter:
        with pytest.raises(rig.InvalidError) as e:
            b.view(4090, 16)
        assert e.value.status == rig.Status.EINVAL and e.value.message
        with pytest.raises(rig.InvalidError, match="."):
            rig.copy(b, shorter)
        assert isinstance(e.value, ValueError)


def test_out_of_memory_carries_the_device_and_bytes(mem1):
    budget = mem1.budget
    mem1.set_budget(1 << 20)
    try:
        with pytest.raises(rig.OutOfMemoryError) as e:
            rig.Buffer.create(mem1, 4 << 20)
        assert e.value.device is mem1
        assert e.value.bytes >= 4 << 20
        assert str(4 << 20) in e.value.message or str(1 << 20) in e.value.message or e.value.message
    finally:
        mem1.set_budget(budget)


def test_lost_carries_the_device():
    sim = rig.open("SIM:1")
    sim.close()
    assert sim.lost == "closed"
    with pytest.raises(rig.LostError) as e:
        rig.Buffer.create(sim, 64)
    assert e.value.device is sim


def test_disk_errors_carry_the_errno(tmp_path):
    with pytest.raises(rig.DiskError) as e:
        rig.disk_open(tmp_path / "absent")
    assert e.value.code == errno.ENOENT
    assert isinstance(e.value, OSError)


def test_an_image_the_device_refuses(mem):
    with pytest.raises(rig.ImageError):
        rig.Image.load(mem, b"not code")


def test_open_of_an_unknown_driver():
    with pytest.raises(rig.InvalidError):
        rig.open("NO-SUCH-DRIVER:0")


def test_disk_into_device_memory(tmp_path, mem):
    data = bytes(range(256)) * 64
    path = tmp_path / "weights.bin"
    path.write_bytes(data)
    with rig.disk_open(path) as region, rig.Buffer.create(mem, len(data)) as b:
        assert region.device == rig.disk_device()
        rig.copy(region, b)
        assert b.read_bytes() == data


def test_disk_sync_of_a_written_file(tmp_path, mem):
    path = tmp_path / "checkpoint.bin"
    path.write_bytes(bytes(8192))
    data = bytes(range(256)) * 32
    with rig.disk_open(path, rig.DiskMode.READ_WRITE) as region, rig.Buffer.create(mem, len(data)) as b:
        b.write_bytes(data)
        rig.copy(b, region)
        rig.disk_sync(region)
    assert path.read_bytes() == data
    with rig.disk_open(path) as read_only:
        with pytest.raises(rig.InvalidError):
            rig.disk_sync(read_only)


def test_claims_and_early_free(mem):
    b = rig.Buffer.create(mem, 4096)
    assert b.claim(rig.Access.READ) in (rig.Claim.CLAIMED, rig.Claim.WAIT)
    assert not b.free(), "a claimed buffer is not freed"
    b.release_claim()
    assert b.claim_begin() is True
    b.claim_end()
    assert b.free("done") is True
    assert b.dead == "done"
    b.close()


def test_values_per_device(mem):
    made = []
    key = rig.LocalKey(lambda d: made.append(d) or {"device": d.name})
    assert key.get(mem) == {"device": "MEM:0"}
    assert key.get(mem) == {"device": "MEM:0"} and made == [mem]


def test_points_and_timelines(mem):
    p = mem.point(mem.submitted)
    assert p.device is mem and p.value == mem.submitted
    p.wait()
    assert mem.signaled() >= p.value
    with pytest.raises(ValueError):
        mem.point(rig.POINT_VALUE_MAX + 1)


def test_a_failed_process_refuses_opens():
    from conftest import run_python

    child = run_python("import rig\n"
                       "rig.fail('the test failed the process')\n"
                       "assert rig.failure() == 'the test failed the process'\n"
                       "try:\n"
                       "    rig.open('SIM:0')\n"
                       "except rig.OpenError as e:\n"
                       "    print('refused:', e.message)\n")
    assert child.returncode == 0, child.stderr
    assert "refused:" in child.stdout and "the test failed the process" in child.stdout


def test_holds_consume_and_share(mem):
    b = rig.Buffer.create(mem, 256)
    b.fill(1)
    assert b.claim_begin() is True
    fresh = b.claim_consume("donated")
    assert b.dead == "donated" and fresh.dead is None
    assert fresh.access == rig.Access.READ_WRITE, "an exclusive hold's buffer admits writes"
    b.claim_end()
    fresh.claim_hold()
    assert not fresh.free(), "a held buffer is not freed"
    fresh.claim_unhold()
    fresh.claim_share()
    assert not fresh.free(), "shared memory is outside the claims"
    b.close()
    fresh.close()
