# SPDX-License-Identifier: BSD-3-Clause
"""The runners of `make bench` (bench/bench.py):

  procs     processes by PID, thread CPU time, DPDK telemetry, hugepages, veth
  measure   Side / Setup and the one throughput measurement all systems share
  systems   the Setups: XenNetVM, memif, vhost-user, af_packet, port I/O
  latency   generator -> xnv-core -> forwarder -> sink, at fractions of max
  report    results.csv, results.md (ratios, goals), plots, README section
"""
