#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Packets per second out of one port of a running DPDK process, read
through its telemetry socket exactly as bench.py counts them: wait for
the first packet, --warmup seconds, then the tx counter at both ends of a
--duration window.  Prints "Mpps N" (used by the bench/xen scripts).

  rate.py --prefix FILE_PREFIX --dev net_null0 [--warmup S] [--duration S]
"""
import argparse
import sys
import time

from xnvbench.procs import BenchError, Telemetry, wait_until


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", required=True,
                    help="the process's EAL --file-prefix")
    ap.add_argument("--dev", required=True,
                    help="device name of the counted port")
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--timeout", type=float, default=60.0)
    o = ap.parse_args()
    tel = Telemetry(o.prefix, [], o.timeout)
    try:
        port = tel.wait_port(o.dev, o.timeout)
        wait_until(lambda: tel.opackets(port) > 0, o.timeout,
                   "packets out of %s" % o.dev)
        time.sleep(o.warmup)
        t0, c0 = time.monotonic(), tel.opackets(port)
        time.sleep(o.duration)
        t1, c1 = time.monotonic(), tel.opackets(port)
    finally:
        tel.close()
    print("Mpps %.4f" % ((c1 - c0) / (t1 - t0) / 1e6), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as e:
        print("rate: %s" % e, file=sys.stderr)
        sys.exit(1)
