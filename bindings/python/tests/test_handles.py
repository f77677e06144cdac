"""A released handle never crashes the interpreter: a closed object refuses
use, a close during a use waits for it to end, and the collector releases
what nobody closed."""

import gc
import threading

import numpy
import pytest

import rig


def test_a_closed_buffer_refuses_every_use(mem):
    b = rig.Buffer.create(mem, 64)
    b.close()
    b.close()  # twice is harmless
    for use in (lambda: b.fill(1), lambda: b.nbytes, lambda: b.view(0, 8), lambda: b.read_bytes(),
                lambda: b.host_view(), lambda: numpy.asarray(b), lambda: b.__dlpack__(),
                lambda: rig.copy(b, b), lambda: b.wait()):
        with pytest.raises(rig.ClosedError):
            use()
    with pytest.raises(rig.ClosedError):
        with b:
            pass


def test_a_view_of_numpy_keeps_the_bytes_past_close(mem):
    b = rig.Buffer.create(mem, 4096)
    b.fill(6)
    array = numpy.asarray(b)
    b.close()
    assert b.closed
    assert b._ptr is not None, "closed with a view alive: released at once"
    assert (array == 6).all()  # the bytes are still rig's
    del array
    gc.collect()
    assert b._ptr is None, "the last view went, the reference did not"


def test_a_close_inside_a_callback_waits_for_it(mem):
    b = rig.Buffer.create(mem, 64)
    b.fill(2)
    assert b.read(lambda view: (b.close(), view[0])[1]) == 2
    with pytest.raises(rig.ClosedError):
        b.fill(1)


def test_views_outlive_a_closed_parent(mem):
    b = rig.Buffer.create(mem, 64)
    b.fill(8)
    v = b.view(16, 16)
    b.close()
    assert v.read_bytes() == b"\x08" * 16
    v.close()


def test_the_collector_releases_unclosed_buffers(mem1):
    mem1.free_cache()
    before = mem1.allocated
    for _ in range(32):
        rig.Buffer.create(mem1, 1 << 20)
    gc.collect()
    mem1.free_cache()
    assert mem1.allocated == before


def test_closes_racing_uses_from_threads(mem):
    errors = []

    def use(b):
        try:
            for _ in range(200):
                b.read_bytes(n=8)
        except rig.ClosedError:
            pass
        except BaseException as e:
            errors.append(e)

    for _ in range(20):
        b = rig.Buffer.create(mem, 64)
        t = threading.Thread(target=use, args=(b,))
        t.start()
        b.close()
        t.join()
    assert not errors


def test_a_function_of_a_closed_image_and_a_submitted_run():
    submission = rig.Submission.make(rig.open("MEM:0"), [rig.FillPart(0, 1)])
    run = submission.take()
    with rig.Buffer.create(rig.open("MEM:0"), 16) as b:
        run.submit([b]).wait()
    with pytest.raises(rig.ClosedError):
        run.fill(0, 1)
    submission.close()
    with pytest.raises(rig.ClosedError):
        submission.take()
