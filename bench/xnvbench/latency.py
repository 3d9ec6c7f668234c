# SPDX-License-Identifier: BSD-3-Clause
"""One-way latency through xnv-core and one NF (net_ring0 without
arguments is a loopback port: its rx and tx share one ring).

    xnv-generator --out loop -> xnv-core -> port "loop" (net_ring: what is
    sent out comes straight back in) -> chain: fwd -> sink
    (xnv-forwarder)                          (xnv-sink --report JSON)

The generator writes CLOCK_MONOTONIC into each packet as it builds it; the
sink reads the clock when its handler sees the packet and reports p50,
p99, p99.9 and max of the differences (same host clock, no skew).  So a
sample covers: generator's tx ring, the core, the loop port, the core,
the forwarder's rings and the forwarder, the core, the sink's rx ring.

The maximum rate is measured first with the same processes and an
unthrottled generator (packets counted out of the loop port, as in
measure.py); latency is then measured at fractions of it with
`--rate`, one run of `duration` seconds each.

Placement on two CPUs: xnv-core busy-polls on CPU A, which it has to
itself as in every throughput run; the forwarder, the generator and the
sink share CPU B and poll adaptively (they back off when idle, so they
can share it).  Four processes on two CPUs: the samples include what this
sharing costs (bench/README.md discusses it); a host with more CPUs gives
the instruments their own (bench.py --lat-cpus GEN,SINK).
"""
import json
import re

from .measure import Setup, measure, start_sides
from .procs import BenchError, remove_runtime_dir, stop_all, wait_until
from .systems import core_side, nf_side


def _config(path, sock):
    path.write_text("\n".join([
        "; written by bench/bench.py: latency through one NF",
        "[core]", "socket = %s" % sock,
        "[port loop]", "dev = net_ring0",
        "chain = fwd -> sink",
        "[service gen]", "[service fwd]", "[service sink]", ""]))
    return path


def _sides(ctx, size, gen_args, expect, label):
    """The four processes in start order (the generator once the
    forwarder and the sink have attached), the DPDK prefix, the run dir.
    expect: packets after which the sink writes sink.json and exits."""
    d, prefix = ctx.new_run(label)
    sink_args = ["--expect", expect, "--report", d / "sink.json"] \
        if expect else []
    cfg = _config(d / "lat.ini", d / "xnv.sock")
    core = core_side(ctx, d, prefix, cfg)
    core_log = d / ("%s.log" % core.name)
    gen = nf_side(ctx, d, 3, "gen", ctx.bin("xnv-generator"),
                  ["--size", size, "--out", 0, *gen_args], busy=False,
                  cpu=ctx.cpu_gen, lib=["--alloc", 512])
    gen.after = lambda: core_log.read_text().count("attached as domain") >= 2
    return [core,
            nf_side(ctx, d, 1, "fwd", ctx.bin("xnv-forwarder"), busy=False),
            nf_side(ctx, d, 2, "sink", ctx.bin("xnv-sink"), sink_args,
                    busy=False, cpu=ctx.cpu_sink),
            gen], prefix, d


def max_rate(ctx, size, warmup, duration):
    """Sample of the Mpps the generator gets through, unthrottled."""
    sides, prefix, d = _sides(ctx, size, ["--count", 10 ** 12], None,
                              "latency-max")
    return measure(Setup(sides, prefix, "net_ring0", [prefix]), d, warmup,
                   duration)


def at_rate(ctx, size, pps, duration):
    """The sink's report (latency_us: p50, p99, p999, max) at pps
    packets/s for `duration` s, plus offered_mpps and sent_mpps."""
    count = max(1000, int(pps * duration))
    sides, prefix, d = _sides(
        ctx, size, ["--count", count, "--rate", int(pps)], count,
        "latency-%d" % pps)
    procs = start_sides(sides, d)
    try:
        core, _, sink, gen = procs
        wait_until(lambda: not gen.alive(), duration + 30,
                   "the generator to send %d packets" % count, [core])
        try:
            wait_until(lambda: not sink.alive(), 5, "the sink to finish")
        except BenchError:
            sink.stop()		# some were lost: it reports what it saw
        m = re.search(r"sent (\d+) packets of \d+ B in ([0-9.]+) s",
                      gen.log.read_text())
    finally:
        try:
            stop_all(procs)
        finally:
            remove_runtime_dir(prefix)
    try:
        r = json.loads((d / "sink.json").read_text())
    except (OSError, ValueError) as e:
        raise BenchError("no sink report in %s: %s" % (d, e))
    if m is None or r["packets"] == 0:
        raise BenchError("latency run at %d pps moved nothing (logs in %s)"
                         % (pps, d))
    r["offered_mpps"] = pps / 1e6
    r["sent_mpps"] = int(m.group(1)) / float(m.group(2)) / 1e6
    return r
