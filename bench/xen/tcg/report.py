#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""make bench-xen: results.csv and results.md from the "system size rep
pps" lines bench/xen/tcg/scenario.sh printed in the emulated Dom0.

usage: report.py XB_RESULTS_TXT OUT_DIR"""
import statistics
import sys
from pathlib import Path

LABEL = "emulated (TCG): ratio only"
CONFIG = {
    "xnv": "net_null0 -> xnv-core (Dom0) -> xnv-forwarder (PV DomU, "
           "granted pool, polled rings) -> xnv-core -> net_null1",
    "netfront": "net_null0 -> testpmd (Dom0) -> af_packet/veth -> bridge "
                "-> vif (netback) -> netfront eth0 -> testpmd macswap "
                "(PV DomU, af_packet) -> back -> net_null0",
}


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    runs = {}		# (system, size) -> Mpps of each window, in order
    for n, line in enumerate(Path(argv[1]).read_text().splitlines(), 1):
        f = line.split()
        if (len(f) != 4 or f[0] not in CONFIG or not f[1].isdigit()
                or not f[3].isdigit()):
            sys.exit("%s:%d: not 'system size rep pps': %r" % (argv[1], n, line))
        runs.setdefault((f[0], int(f[1])), []).append(int(f[3]) / 1e6)
    if not runs:
        sys.exit("%s: no results (did the emulated boot finish?)" % argv[1])
    out = Path(argv[2])
    out.mkdir(parents=True, exist_ok=True)
    csv = ["system,config,size,chain_len,mpps_median,mpps_min,mpps_max,"
           "reps,disturbed,cores"]
    med = {}
    for (system, size), v in sorted(runs.items()):
        med[system, size] = statistics.median(v)
        csv.append("%s,%s,%d,1,%.6f,%.6f,%.6f,%d,,%s" % (
            system, LABEL, size, med[system, size], min(v), max(v), len(v),
            "QEMU TCG -smp 2: Dom0 2 vCPUs + DomU 1 vCPU"))
    (out / "results.csv").write_text("\n".join(csv) + "\n")
    md = ["# XenNetVM vs netfront/netback under Xen, %s" % LABEL, "",
          "One emulated boot (QEMU TCG, no KVM): Xen 4.17, PV Dom0 (2 vCPUs),",
          "one PV DomU (1 vCPU) per path, 2 emulated CPUs in all.  Absolute",
          "rates are those of an emulator and mean nothing; only the ratio of",
          "the two paths measured in the same boot does.  The windows of the",
          "two paths alternate (one path frozen while the other runs); the",
          "ratio is the median of the ratios of paired windows, with their",
          "range.", ""]
    for s, text in CONFIG.items():
        md.append("- **%s**: %s" % (s, text))
    md += ["", "| size (B) | xnv kpps | netfront kpps | xnv / netfront "
           "(range) | windows |", "|---:|---:|---:|---:|---:|"]
    for size in sorted({k[1] for k in runs}):
        xs, ns = runs.get(("xnv", size), []), runs.get(("netfront", size), [])
        pairs = [x / n for x, n in zip(xs, ns) if n > 0]
        ratio = ("%.1fx (%.1f-%.1f)" % (statistics.median(pairs), min(pairs),
                                        max(pairs)) if pairs else "n/a")
        kpps = ["%.1f" % (med[s, size] * 1e3) if (s, size) in med else "-"
                for s in ("xnv", "netfront")]
        md.append("| %d | %s | %s | %s | %d |" % (size, *kpps, ratio,
                                                  len(pairs)))
        print("bench-xen: %d B: xnv %s kpps, netfront %s kpps, xnv/netfront "
              "%s, %s" % (size, *kpps, ratio, LABEL))
    md.append("")
    (out / "results.md").write_text("\n".join(md))
    print("bench-xen: %s/results.csv, results.md" % out)


if __name__ == "__main__":
    main(sys.argv)
