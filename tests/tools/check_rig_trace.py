#!/usr/bin/env python3
"""Checks rig-trace: check_rig_trace.py PATH_TO_RIG_TRACE PATH_TO_TARGET.

Starts the target (trace_target.c), attaches rig-trace to it with
--totals, lets the target do its known work, and asserts that rig-trace's
totals for the target's MEM:7 are exactly that work.  Exits 77 (skipped)
where rig-trace cannot trace here: not root, or no BPF or uprobes."""
import os
import re
import subprocess
import sys
import time

SKIPPED = 77
EXPECTED = {"submits": 100, "launches": 0, "copies": 10, "copy_bytes": 40960,
            "fills": 5, "fill_bytes": 40960, "waits": 7, "waits_failed": 0,
            "allocs": 3, "alloc_bytes": 2 * 4096 + 8192, "frees": 3, "free_bytes": 2 * 4096 + 8192}


def main(trace, target_path):
    if os.geteuid() != 0:
        print("skipped: rig-trace needs root (or CAP_BPF and CAP_PERFMON)")
        return SKIPPED
    target = subprocess.Popen([target_path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        if target.stdout.readline().strip() != "ready":
            print("the target did not start")
            return 1
        tracer = subprocess.Popen([trace, "-p", str(target.pid), "--totals"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        # rig-trace says on stderr once its probes are attached.
        attached = tracer.stderr.readline()
        if "tracing process" not in attached:
            out, err = tracer.communicate(timeout=30)
            if tracer.returncode == SKIPPED:
                print("skipped: " + (attached + err).strip())
                return SKIPPED
            print("rig-trace did not attach (exit %s): %s%s" % (tracer.returncode, attached, err))
            return 1
        target.stdin.write("go\n")
        target.stdin.close()
        if target.wait(timeout=60) != 0:
            print("the target failed")
            return 1
        out, err = tracer.communicate(timeout=30)
    finally:
        if target.poll() is None:
            target.kill()
    if tracer.returncode != 0:
        print("rig-trace exited %d: %s" % (tracer.returncode, err))
        return 1
    line = next((l for l in out.splitlines() if l.startswith("pid=%d device=MEM:7 " % target.pid)), None)
    if line is None:
        print("no totals for the target's MEM:7 in:\n" + out)
        return 1
    counts = dict(re.findall(r"(\w+)=(\S+)", line))
    wrong = {k: (counts.get(k), v) for k, v in EXPECTED.items() if counts.get(k) != str(v)}
    if wrong:
        print("rig-trace counted %s (counted, made) in: %s" % (wrong, line))
        return 1
    print("rig-trace counted exactly the target's work: " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
