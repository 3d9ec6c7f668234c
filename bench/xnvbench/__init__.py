# SPDX-License-Identifier: BSD-3-Clause
"""The runners of `make bench` (bench/bench.py):

  procs     processes by PID, thread CPU time, DPDK telemetry, hugepages, veth
  measure   Side / Setup and the one throughput measurement all systems share
  systems   the Setups: XenNetVM, memif, vhost-user, af_packet, port I/O
  latency   generator -> xnv-core -> forwarder -> sink, at fractions of max
  report    results.csv, results.md (ratios, goals), plots, README section

procs builds on the xnv package (dom0-core/python/README.md: Proc,
wait_until, telemetry, hugepages); importing xnvbench puts it on sys.path,
the one place the bench scripts do.
"""
import os
import sys

_XNV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                    "dom0-core", "python")
if os.path.abspath(_XNV) not in sys.path:
    sys.path.insert(0, os.path.abspath(_XNV))
