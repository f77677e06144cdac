"""Submissions and runs: fills and copies over slots on a memory device, and
a host launch of code clang compiles, with refs and parameters."""

import shutil
import subprocess
import struct

import pytest

import rig

KERNEL = r"""
typedef long long int64_t;
/* Params: out (read-write) at 0, factor at 8; 16 bytes.  Each thread i of
 * [first, end) multiplies out[i] by factor. */
struct scale { int64_t *out; int64_t factor; };
void scale(const struct scale *p, int64_t first, int64_t end) {
  for (int64_t i = first; i < end; i++) p->out[i] *= p->factor;
}
"""


def test_fill_then_copy_in_one_submit(mem):
    """SUB: a copy part follows a fill part of its source (one submit)."""
    with rig.Buffer.create(mem, 256) as a, rig.Buffer.create(mem, 256) as b:
        b.fill(0)
        s = rig.Submission.make(mem, [rig.FillPart(0, 0x11), rig.CopyPart(0, 1)])
        assert s.slots == 2
        run = s.take()
        run.fill(s.block(0), 0x22)
        point = run.submit([a, b])
        point.wait()
        assert a.read_bytes() == b"\x22" * 256 and b.read_bytes() == b"\x22" * 256
        s.close()


def test_a_keep_callback_runs_once_released(mem):
    kept = []
    s = rig.Submission.make(mem, [rig.FillPart(0, 1)], keep=lambda: kept.append(True))
    s.close()
    assert kept == [True]


def compile_kernel(tmp_path):
    clang = shutil.which("clang") or next((shutil.which("clang-%d" % v) for v in range(19, 13, -1)
                                           if shutil.which("clang-%d" % v)), None)
    if not clang:
        pytest.skip("no clang to compile a host kernel")
    source = tmp_path / "scale.c"
    source.write_text(KERNEL)
    obj = tmp_path / "scale.o"
    subprocess.run([clang, "-c", "-O2", "-fPIC", "--target=x86_64-none-unknown-elf", "-ffreestanding",
                    str(source), "-o", str(obj)], check=True)
    return obj.read_bytes()


def test_a_host_launch_with_a_ref_and_a_parameter(tmp_path):
    host = rig.host()
    if host.instruction_set != "x86_64":
        pytest.skip("the kernel is compiled for x86-64")
    image = rig.Image.load(host, compile_kernel(tmp_path))
    f = image.resolve("scale")
    assert f.name == "scale" and image.resolve("absent") is None
    image.close()  # the function holds its image
    out = rig.Buffer.create(host, 8 * 8)
    out.write_bytes(struct.pack("8q", *range(8)))
    s = rig.Submission.make(host, [rig.Launch(f, [rig.Ref(rig.RefKind.READ_WRITE, at=0, memory=0)], params=16)])
    k = s.block(0)
    run = s.take().groups(k, 2).threads(k, 4).int64(k, 8, 3)
    run.submit([out]).wait()
    assert struct.unpack("8q", out.read_bytes()) == tuple(3 * i for i in range(8))
    s.close()
    out.close()
