#!/usr/bin/env python3
"""Checks the `rig` command-line tool: check_rig.py CHECK PATH_TO_RIG.

CHECK is one of the keys of CHECKS.
Exits non-zero, saying why, when the tool's exit status or output is not
what its help and rig.h state.
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

INT64_MAX = 2**63 - 1
DEMO_BYTES = 1 << 20
PROPERTY_TYPES = {
    "arch": str,
    "instruction_set": str,
    "bus": (str, type(None)),
    "runs_on_host": bool,
    "alignment": int,
    "cache_bytes": int,
    "budget": int,
}


class CheckFailed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


def run_rig(rig, *args):
    """Runs rig with args; returns (exit status, stdout, stderr)."""
    done = subprocess.run([rig, *args], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, done.stderr


def run_rig_ok(rig, *args):
    status, out, err = run_rig(rig, *args)
    expect(status == 0, f"rig {' '.join(args)} exited {status}: {err}")
    return out


def check_entry(entry):
    expect(isinstance(entry, dict), f"entry {entry!r} is not an object")
    expect(isinstance(entry.get("name"), str) and entry["name"],
           f"entry {entry!r} has no name")
    expect(isinstance(entry.get("available"), bool),
           f"{entry['name']}: 'available' is not a boolean")
    if not entry["available"]:
        expect(isinstance(entry.get("reason"), str) and entry["reason"],
               f"{entry['name']}: unavailable without a reason")
        return
    for key, kind in PROPERTY_TYPES.items():
        expect(key in entry, f"{entry['name']}: no '{key}'")
        # bool is an int in Python: keep the two apart.
        expect(isinstance(entry[key], kind)
               and (kind is bool or not isinstance(entry[key], bool)),
               f"{entry['name']}: '{key}' is {entry[key]!r}")


def expected_instruction_set(arch):
    if arch.startswith("x86-64"):
        return "x86_64"
    if arch.startswith("arm64"):
        return "arm64"
    return arch


def check_host(cpu):
    expect(cpu["available"], f"CPU unavailable: {cpu.get('reason')}")
    expect(cpu["runs_on_host"] is True, "CPU does not run on the host")
    expect(cpu["alignment"] == 16, f"CPU alignment {cpu['alignment']}, not 16")
    expect(cpu["bus"] is None, f"CPU has bus {cpu['bus']!r}")
    expect(cpu["instruction_set"] == expected_instruction_set(cpu["arch"]),
           f"CPU arch {cpu['arch']!r} with instruction set "
           f"{cpu['instruction_set']!r}")
    expect(cpu["budget"] == INT64_MAX,
           f"CPU budget {cpu['budget']} at start, not INT64_MAX")


def check_memory_device(mem, cpu):
    name = mem["name"]
    expect(mem["available"], f"{name} unavailable: {mem.get('reason')}")
    for key, value in [("arch", "memory"), ("instruction_set", "memory"),
                       ("bus", None), ("runs_on_host", True),
                       ("alignment", 64), ("budget", INT64_MAX),
                       ("cache_bytes", cpu["cache_bytes"])]:
        expect(mem[key] == value, f"{name}: {key} is {mem[key]!r}, not {value!r}")


def text_listing_names(text):
    """The device names of `rig devices`: its lines that are not indented,
    "NAME" or "NAME: unavailable: why"."""
    names = []
    for line in text.splitlines():
        if line and not line.startswith(" "):
            names.append(line.split(": unavailable: ")[0])
    return names


def check_devices_json(rig):
    listing = json.loads(run_rig_ok(rig, "devices", "--json"))
    expect(isinstance(listing, list), "the listing is not a JSON array")
    for entry in listing:
        check_entry(entry)
    by_name = {entry["name"]: entry for entry in listing}
    expect(len(by_name) == len(listing), "a device is listed twice")
    for name in ("CPU", "MEM:0", "MEM:1"):
        expect(name in by_name, f"{name} not listed: {sorted(by_name)}")
    check_host(by_name["CPU"])
    for name in ("MEM:0", "MEM:1"):
        check_memory_device(by_name[name], by_name["CPU"])
    text_names = text_listing_names(run_rig_ok(rig, "devices"))
    expect(text_names == [entry["name"] for entry in listing],
           f"`rig devices` lists {text_names}, --json lists {list(by_name)}")


def check_demo(rig):
    lines = run_rig_ok(rig, "demo").splitlines()
    expect(lines, "the demo printed nothing")
    expect(lines[-1] == f"demo: ok ({DEMO_BYTES} bytes verified)",
           f"last line: {lines[-1]!r}")
    copy_line = re.compile(r"^demo: copy (\S+) -> (\S+), point (.+):(\d+)$")
    hops = []
    for line in lines:
        match = copy_line.match(line)
        if match:
            source, destination, point_device, _ = match.groups()
            expect(point_device in ("CPU", "MEM:0", "MEM:1"),
                   f"point on {point_device!r} in {line!r}")
            hops.append((source, destination))
    expect(hops == [("CPU", "MEM:0"), ("MEM:0", "MEM:1"), ("MEM:1", "CPU")],
           f"copies {hops}")


def check_usage(rig):
    for args in ([], ["no-such-command"], ["devices", "--no-such-option"],
                 ["demo", "extra"]):
        status, out, err = run_rig(rig, *args)
        expect(status == 2, f"rig {' '.join(args)} exited {status}, not 2")
        expect("usage:" in err, f"rig {' '.join(args)}: no usage on stderr")
        expect(out == "", f"rig {' '.join(args)} wrote {out!r} on stdout")
    # A usage error names what was wrong.
    for args, said in ((["devices", "--no-such-option"], "unknown option '--no-such-option'"),
                       (["demo", "extra"], "unexpected argument 'extra'"),
                       (["share", "--service"], "option '--service' needs a value"),
                       (["load", "f", "--device", "MEM:0", "--offset", "x"], "--offset takes a size"),
                       (["load", "f"], "no --device NAME"),
                       (["drop"], "which client?"),
                       (["drop", "x1"], "'x1' is not a client's id"),
                       (["drop", "0"], "'0' is not a client's id"),
                       (["clients", "--no-such-option"], "unknown option '--no-such-option'"),
                       (["metrics", "extra"], "unexpected argument 'extra'"),
                       (["no-such-command"], "unknown command 'no-such-command'")):
        status, out, err = run_rig(rig, *args)
        expect(status == 2 and said in err, f"rig {' '.join(args)}: exit {status}, {said!r} not in {err!r}")
    for flag in ("--help", "help"):
        help_text = run_rig_ok(rig, flag)
        for word in ("usage:", "devices", "demo", "load", "share", "version", "--version", "clients", "drop",
                     "metrics"):
            expect(word in help_text, f"{flag} does not mention {word!r}")
    for flag in ("version", "--version"):
        version = run_rig_ok(rig, flag).strip()
        expect(re.fullmatch(r"rig \d+\.\d+\.\d+ \(librig \d+\.\d+\.\d+\)", version),
               f"{flag}: version line {version!r}")


def check_share_fails(rig):
    """rig share ends, failing, when one of its processes fails: here the
    filler cannot connect (no rigd at the socket), and the reader, which
    waits for the filler's token, sees the filler's end of the pipe close.
    Before the fix each child held the other's pipe ends and the reader
    waited forever."""
    with tempfile.TemporaryDirectory() as directory:
        status, out, err = run_rig(rig, "share", "--service", os.path.join(directory, "no-rigd.sock"))
    expect(status == 1, f"rig share without rigd exited {status}: {err}")
    expect("rig share: filler: connect" in err, f"the filler's failure is not said: {err!r}")


LOADED_LINE = re.compile(r"^loaded (\d+) in (\d+\.\d+) s: (\d+\.\d+) GB/s$")
LOAD_FILE_BYTES = 3 * (1 << 20) + 12345


def write_load_file(directory):
    """A file of LOAD_FILE_BYTES whose bytes differ from their neighbours'
    and from those 4 KiB away, so a shifted load shows."""
    path = os.path.join(directory, "load.bin")
    pattern = bytes((i * 7 + (i >> 12) * 13) & 0xFF for i in range(1 << 16))
    with open(path, "wb") as f:
        whole, rest = divmod(LOAD_FILE_BYTES, len(pattern))
        f.write(pattern * whole + pattern[:rest])
    return path


def check_load_lines(args, out, loaded_bytes):
    lines = out.splitlines()
    expect(len(lines) == 2, f"rig {' '.join(args)} printed {lines!r}")
    match = LOADED_LINE.match(lines[0])
    expect(match, f"rig {' '.join(args)}: first line {lines[0]!r}")
    expect(int(match.group(1)) == loaded_bytes,
           f"rig {' '.join(args)} loaded {match.group(1)} bytes, "
           f"not {loaded_bytes}")
    expect(lines[1] == "verified",
           f"rig {' '.join(args)}: last line {lines[1]!r}")


def check_load_onto(rig, device):
    """`rig load --verify` of a whole file and of a range onto device."""
    with tempfile.TemporaryDirectory() as directory:
        path = write_load_file(directory)
        args = ["load", path, "--device", device, "--verify"]
        check_load_lines(args, run_rig_ok(rig, *args), LOAD_FILE_BYTES)
        args = ["load", path, "--device", device, "--offset", "1K",
                "--length", "2M", "--verify"]
        check_load_lines(args, run_rig_ok(rig, *args), 2 << 20)
        # The range to the file's end.
        args = ["load", path, "--device", device, "--offset", "5",
                "--verify"]
        check_load_lines(args, run_rig_ok(rig, *args), LOAD_FILE_BYTES - 5)


def check_load_mem(rig):
    check_load_onto(rig, "MEM:0")


def check_load_sim(rig):
    check_load_onto(rig, "SIM:0")


def check_load_errors(rig):
    with tempfile.TemporaryDirectory() as directory:
        path = write_load_file(directory)
        for args in (["load"], ["load", path], ["load", "--device", "MEM:0"],
                     ["load", path, "--device", "MEM:0", "--length", "2X"],
                     ["load", path, "--device", "MEM:0", "--offset", "-1"],
                     ["load", path, "--device"]):
            status, out, err = run_rig(rig, *args)
            expect(status == 2, f"rig {' '.join(args)} exited {status}, not 2")
            expect("usage:" in err, f"rig {' '.join(args)}: no usage on stderr")
            expect(out == "", f"rig {' '.join(args)} wrote {out!r} on stdout")
        missing = os.path.join(directory, "missing.bin")
        for args, why in (
                (["load", missing, "--device", "MEM:0"], "RIG_EIO"),
                (["load", path, "--device", "MEM:0", "--length", "4M"],
                 "RIG_EINVAL")):
            status, out, err = run_rig(rig, *args)
            expect(status == 1, f"rig {' '.join(args)} exited {status}, not 1")
            expect(why in err, f"rig {' '.join(args)}: stderr {err!r} "
                   f"does not name {why}")
            expect(out == "", f"rig {' '.join(args)} wrote {out!r} on stdout")


TENSOR_LINE = re.compile(r"^  (\S+) (\S+) \[([0-9, ]*)\] (\d+) bytes$")
SAFETENSORS_LOADED = re.compile(r"^loaded (\d+) bytes of (\d+) tensors from (\d+) files "
                                r"in \d+\.\d+ s: \d+\.\d+ GB/s$")


def tensor_bytes(seed, n):
    """n bytes that differ from their neighbours, different per seed."""
    return bytes((i * 7 + seed * 31 + (i >> 12) * 13) & 0xFF for i in range(n))


def write_safetensors(path, tensors, header=None, cut=0):
    """A safetensors file of tensors (name, dtype, shape, bytes), their
    bytes one after another; header replaces the JSON text, cut drops
    bytes from the end."""
    entries, offset = {}, 0
    for name, dtype, shape, data in tensors:
        entries[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = header if header is not None else json.dumps(entries).encode()
    whole = struct.pack("<Q", len(text)) + text + b"".join(t[3] for t in tensors)
    with open(path, "wb") as f:
        f.write(whole[:len(whole) - cut])
    return path


def checkpoint_shards(directory):
    """Two shards: one whose data starts unaligned, with a tensor of odd
    size before a large one (a part of it O_DIRECT can read) and an empty
    tensor; one of a 4-byte dtype whose header pads the data onto 8 bytes."""
    first = [("embed.weight", "U8", [4097], tensor_bytes(1, 4097)),
             ("empty.bias", "F32", [0, 3], b""),
             ("layer.weight", "BF16", [1024, 1536], tensor_bytes(2, 1024 * 1536 * 2))]
    second = [("head.weight", "F32", [64, 1000], tensor_bytes(3, 64 * 1000 * 4)),
              ("head.bias", "I64", [7], tensor_bytes(4, 56))]
    paths = [write_safetensors(os.path.join(directory, "model-1.safetensors"), first),
             write_safetensors(os.path.join(directory, "model-2.safetensors"), second)]
    return paths, first + second


def check_safetensors_output(args, out, tensors, files):
    """The per-file and per-tensor lines and the total, then 'verified'."""
    lines = out.splitlines()
    expect(lines and lines[-1] == "verified", f"rig {' '.join(args)}: last line not 'verified' in {lines!r}")
    total = SAFETENSORS_LOADED.match(lines[-2]) if len(lines) >= 2 else None
    expect(total, f"rig {' '.join(args)}: no total line in {lines!r}")
    size = sum(len(t[3]) for t in tensors)
    expect((int(total.group(1)), int(total.group(2)), int(total.group(3))) == (size, len(tensors), files),
           f"rig {' '.join(args)}: total {lines[-2]!r}, not {size} bytes of {len(tensors)} tensors")
    printed = [TENSOR_LINE.match(line) for line in lines if line.startswith("  ")]
    expect(all(printed), f"rig {' '.join(args)}: a tensor line is malformed in {lines!r}")
    seen = {(m.group(1), m.group(2), m.group(3), int(m.group(4))) for m in printed}
    wanted = {(n, d, ", ".join(map(str, sh)), len(b)) for n, d, sh, b in tensors}
    expect(seen == wanted, f"rig {' '.join(args)} printed tensors {sorted(seen)}, not {sorted(wanted)}")


def check_load_safetensors(rig):
    """`rig load --safetensors --verify` of a checkpoint of two shards, a
    buffer per tensor and an arena per file, onto MEM:0 and SIM:0."""
    with tempfile.TemporaryDirectory() as directory:
        paths, tensors = checkpoint_shards(directory)
        for device in ("MEM:0", "SIM:0", "CPU"):
            for extra in ([], ["--arena"]):
                args = ["load", "--safetensors", *paths, "--device", device, "--verify", *extra]
                check_safetensors_output(args, run_rig_ok(rig, *args), tensors, len(paths))


def check_load_safetensors_errors(rig):
    """Malformed checkpoints are refused with RIG_EIO, naming the file and
    what is wrong, before anything loads or prints; usage errors exit 2."""
    with tempfile.TemporaryDirectory() as directory:
        good, tensors = checkpoint_shards(directory)
        one = [tensors[0]]
        lying = json.dumps({"embed.weight": {"dtype": "U8", "shape": [4097],
                                             "data_offsets": [0, 8192]}}).encode()
        cases = [
            (write_safetensors(os.path.join(directory, "cut.safetensors"), one, cut=100),
             "the file holds"),
            (write_safetensors(os.path.join(directory, "lies.safetensors"), one, header=lying),
             "data_offsets"),
            (write_safetensors(os.path.join(directory, "cut-json.safetensors"), one,
                               header=b"{" + b" " * 10), "not JSON"),
            (write_safetensors(os.path.join(directory, "not-json.safetensors"), one, header=b"[1, 2]"),
             "object"),
        ]
        # A header count past the file's end.
        big = os.path.join(directory, "count.safetensors")
        with open(big, "wb") as f:
            f.write(struct.pack("<Q", 1 << 40) + b"{}")
        cases.append((big, "does not fit"))
        for path, said in cases:
            args = ["load", "--safetensors", good[0], path, "--device", "MEM:0", "--verify"]
            status, out, err = run_rig(rig, *args)
            expect(status == 1, f"rig {' '.join(args)} exited {status}, not 1")
            expect("RIG_EIO" in err and path in err and said in err,
                   f"rig {' '.join(args)}: stderr {err!r} does not name RIG_EIO, the file and {said!r}")
            expect(out == "", f"rig {' '.join(args)} wrote {out!r} on stdout")
        for args in (["load", "--safetensors", "--device", "MEM:0"],
                     ["load", good[0], good[1], "--device", "MEM:0"],
                     ["load", good[0], "--device", "MEM:0", "--arena"],
                     ["load", "--safetensors", good[0], "--device", "MEM:0", "--offset", "4K"]):
            status, out, err = run_rig(rig, *args)
            expect(status == 2 and "usage:" in err and out == "",
                   f"rig {' '.join(args)} exited {status}, stderr {err!r}")


def check_share(rig):
    """The service's main job through the rigd of the test fixture
    (RIG_SERVICE): two processes share a buffer, each prints what it saw
    (PROXY-03: the served device runs both processes' work), and rig devices
    lists the served devices as NAME@rigd."""
    service = os.environ.get("RIG_SERVICE", "")
    expect(service, "RIG_SERVICE names no rigd")
    out = run_rig_ok(rig, "share", "--service", service)
    token = re.search(r"^filler \(pid \d+\): 4 MiB on MEM:0@rigd set to the pattern, "
                      r"shared as token ([0-9a-f]{16})$", out, flags=re.M)
    expect(token, f"no filler line with a token in {out!r}")
    for line in (f"imported token {token.group(1)}: 4194304 bytes, every one the filler's pattern",
                 "set the second half to 0xa5",
                 "sees its first half unchanged and the reader's 0xa5 in the second",
                 "rig share: two processes shared MEM:0@rigd's memory through rigd"):
        expect(line in out, f"{line!r} not in {out!r}")
    names = text_listing_names(run_rig_ok(rig, "devices", "--service", service))
    expect("MEM:0@rigd" in names and "SIM:0@rigd" in names, f"rig devices --service lists {names}")


def check_rigd_cli(rigd):
    """rigd --help and --version answer and exit 0 before opening anything;
    a usage error names the bad argument, shows the usage and exits 2."""
    help_text = run_rig_ok(rigd, "--help")
    for word in ("usage: rigd", "--socket", "--devices", "--config", "--foreground", "--version", "rigd(8)"):
        expect(word in help_text, f"rigd --help does not mention {word!r}")
    version = run_rig_ok(rigd, "--version").strip()
    expect(re.fullmatch(r"rigd \d+\.\d+\.\d+ \(librig \d+\.\d+\.\d+\)", version),
           f"rigd --version line {version!r}")
    for args, said in ((["--no-such-option"], "unknown argument --no-such-option"),
                       (["--socket"], "--socket needs a value")):
        status, out, err = run_rig(rigd, *args)
        expect(status == 2 and said in err and "usage: rigd" in err,
               f"rigd {' '.join(args)}: exit {status}, {said!r} or the usage not in {err!r}")


def check_man_page(rig):
    """rig(1) documents every command and option that rig --help lists."""
    page = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "man", "rig.1"),
                encoding="utf-8").read().replace("\\-", "-")
    help_text = run_rig_ok(rig, "--help")
    commands = re.findall(r"^  ([a-z]+)\b", help_text, flags=re.M)
    expect(len(commands) >= 6, f"--help lists only {commands}")
    for command in commands:
        expect(re.search(rf"^\.(?:B|BR|BI) \"?{command}\b", page, flags=re.M),
               f"rig(1) has no entry for the command {command!r}")
    for option in sorted(set(re.findall(r"--[a-z]+", help_text))):
        expect(option in page, f"rig(1) does not document {option}")


CHECKS = {
    "man_page": check_man_page,
    "rigd_cli": check_rigd_cli,
    "share": check_share,
    "share_fails": check_share_fails,
    "devices_json": check_devices_json,
    "demo": check_demo,
    "usage": check_usage,
    "load_mem": check_load_mem,
    "load_sim": check_load_sim,
    "load_errors": check_load_errors,
    "load_safetensors": check_load_safetensors,
    "load_safetensors_errors": check_load_safetensors_errors,
}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in CHECKS:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(CHECKS)}}} PATH_TO_RIG")
    try:
        CHECKS[sys.argv[1]](sys.argv[2])
    except (CheckFailed, json.JSONDecodeError, subprocess.TimeoutExpired) as e:
        sys.exit(f"FAIL {sys.argv[1]}: {e}")
    print(f"PASS {sys.argv[1]}")


if __name__ == "__main__":
    main()
