"""A callback's exception reaches the caller: host access, probe and values
per device; a later callback's goes to sys.unraisablehook."""

import sys

import pytest

import rig


class Boom(Exception):
    pass


def test_an_exception_in_a_read_reaches_the_caller(mem):
    with rig.Buffer.create(mem, 64) as b:
        def f(view):
            raise Boom("from the callback")

        with pytest.raises(Boom, match="from the callback"):
            b.read(f)
        assert b.read(lambda view: bytes(view[:2])) == b.read_bytes(n=2)


def test_an_exception_in_a_write_reaches_the_caller(mem):
    with rig.Buffer.create(mem, 64) as b:
        b.fill(0)

        def f(view):
            view[0] = 7
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            b.write(f)
        assert b.read_bytes(n=1) == b"\x07"


def test_a_view_of_a_callback_ends_with_it(mem):
    kept = []
    with rig.Buffer.create(mem, 64) as b:
        b.read(kept.append)
        with pytest.raises(ValueError):
            kept[0][0]  # released: no read of bytes that may go


def test_an_exception_in_an_init_reaches_get():
    def init(device):
        raise Boom(device.name)

    key = rig.LocalKey(init)
    with pytest.raises(Boom, match="MEM:1"):
        key.get(rig.open("MEM:1"))


def test_a_release_callback_reports_to_the_unraisable_hook(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda args: seen.append(args.exc_value))
    data = bytearray(16)

    def release():
        raise Boom("released")

    b = rig.Buffer.of_memory(data, on_release=release)
    b.close()
    assert len(seen) == 1 and isinstance(seen[0], Boom)
