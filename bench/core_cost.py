#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""xnv-core's instructions per packet, by function: core-cost under callgrind.

A benchmark tool, not a test.  Runs build/bench/core-cost (bench/core_cost.c:
the core's data path on one thread, an NF played in-process for `nf`)
under `valgrind --tool=callgrind`, counting only inside the main loop's
data-path calls (xnv_rx_port, xnv_rx_nf: --toggle-collect), and prints the
instructions per packet of each function (inlined code counted where it
is inlined), port I/O (net_null's rx and tx, the mempool) on a line of its
own.  Instruction counts do not depend on what else runs on the machine:
two runs of one build give the same figures, so two builds compare on a
busy machine where rates do not.  See bench/README.md, "Where the cycles
go".

Usage: core_cost.py [--build DIR] [--modes core,nf] [--rounds N] [--keep DIR]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict

TOGGLES = ("xnv_rx_port", "xnv_rx_nf")
# Whose code a line of callgrind_annotate is, when it has no function of
# ours: the object it is in.
PORT_IO = ("librte_net_null", "librte_mempool", "librte_mbuf",
           "librte_ethdev", "ld-linux")   # ld-linux: the PMD's TLS lookups
LINE = re.compile(r"^\s*([\d,]+)\s+(?:\([\d. %]+\)\s+)?(\S+?):(\S+)\s*(?:\[(.*)\])?$")


def group_of(fn, obj):
    """The row a line counts in: our function, port I/O, or libc's."""
    obj = os.path.basename(obj or "")
    if any(obj.startswith(p) for p in PORT_IO):
        return "port I/O (net_null rx/tx, mempool)"
    if obj.startswith("libc"):
        return "libc (%s)" % re.sub(r"_(avx|evex|sse|erms).*", "", fn)
    return fn


def measure(core_cost, mode, rounds, out_dir):
    """(packets, {row: instructions}) of one mode."""
    out = os.path.join(out_dir, "callgrind.%s" % mode)
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
            *["--toggle-collect=" + t for t in TOGGLES],
            core_cost, "-l", "0", "--no-huge", "-m", "512", "--no-shconf",
            "--file-prefix", "core-cost-cg-%d" % os.getpid(),
            "--log-level=lib.*:error", "--", mode, str(rounds)]
    r = subprocess.run(argv, capture_output=True, text=True)
    m = re.search(r"\((\d+) with the warm-up\)", r.stdout)
    if r.returncode != 0 or m is None:
        sys.exit("core_cost.py: %s failed (exit %d):\n%s%s" % (
            " ".join(argv), r.returncode, r.stdout[-2000:], r.stderr[-2000:]))
    ann = subprocess.run(["callgrind_annotate", "--inclusive=no",
                          "--threshold=100", "--auto=no", out],
                         capture_output=True, text=True, check=True).stdout
    rows = defaultdict(int)
    for ln in ann.splitlines():
        g = LINE.match(ln)
        if g is None or g.group(2) == "PROGRAM" or "TOTALS" in ln:
            continue
        rows[group_of(g.group(3), g.group(4))] += int(g.group(1).replace(",", ""))
    return int(m.group(1)), rows


def main():
    ap = argparse.ArgumentParser(
        description="xnv-core's instructions per packet by function "
                    "(core-cost under callgrind; bench/README.md)")
    ap.add_argument("--build", default="build", help="build directory "
                    "(default build; core-cost made there with make)")
    ap.add_argument("--modes", default="core,nf",
                    help="core-cost modes, comma-separated (default core,nf)")
    ap.add_argument("--rounds", type=int, default=10,
                    help="core-cost rounds of 1024 passes (default 10)")
    ap.add_argument("--keep", metavar="DIR",
                    help="keep the callgrind files in DIR")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error("--rounds: at least 1")
    core_cost = os.path.join(a.build, "bench", "core-cost")
    r = subprocess.run(["make", core_cost], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("core_cost.py: make %s failed:\n%s" % (core_cost,
                                                       r.stderr[-2000:]))
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = a.keep or tmp
        os.makedirs(out_dir, exist_ok=True)
        for mode in a.modes.split(","):
            pkts, rows = measure(core_cost, mode, a.rounds, out_dir)
            total = sum(rows.values())
            print("core-cost %s: %d packets, %.1f instructions per packet"
                  % (mode, pkts, total / pkts))
            for name, ir in sorted(rows.items(), key=lambda x: -x[1]):
                if ir / pkts >= 0.05:
                    print("  %-40s %7.1f" % (name, ir / pkts))


if __name__ == "__main__":
    main()
