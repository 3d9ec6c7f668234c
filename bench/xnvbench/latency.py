# SPDX-License-Identifier: BSD-3-Clause
"""One-way latency through xnv-core and one NF, measured by the core.

    net_null0 (rx paced: [port in] rx_rate) -> xnv-core -> xnv-forwarder
    -> xnv-core -> net_null1, with [core] latency = on

Each packet carries the TSC of the rx burst that brought it in (in its
mbuf's private area, core memory); net_null1 records, at each tx burst,
how long each packet it sends spent in between (dom0-core/latency.h):
steering, the forwarder's rx ring, the forwarder, its tx ring, the core,
the tx burst.  That is the data path's latency, with no generator or
sink process competing for a CPU: the same two processes on the same two
CPUs as the 1-NF throughput run (xnv-core busy-polls on A, the forwarder
on B).  Percentiles are bounds of the core's log-linear histogram
buckets (at most 6.25 % high).

The maximum rate is measured first with the same setup unpaced; latency
is then measured at fractions of it: rx_rate = load x max, a warm-up,
/xnv/port/latency/reset, a window of `duration` s, /xnv/port/latency.
"""
import time

from .measure import Setup, measure, start_sides
from .procs import BenchError, Telemetry, remove_runtime_dir, stop_all, \
    wait_until
from .systems import core_side, nf_side

# /xnv/port/latency keys, as fractions: the points of the CDF
QUANTILES = (("p10_ns", .10), ("p25_ns", .25), ("p50_ns", .50),
             ("p75_ns", .75), ("p90_ns", .90), ("p95_ns", .95),
             ("p99_ns", .99), ("p999_ns", .999), ("max_ns", 1.0))


def _config(path, sock, size, pps):
    path.write_text("\n".join([
        "; written by bench/bench.py: latency through one NF",
        "[core]", "socket = %s" % sock, "latency = on",
        "[port in]", "dev = net_null0,size=%d" % size,
        "rx_rate = %d" % pps, "chain = fwd -> out",
        "[port out]", "dev = net_null1",
        "[service fwd]", ""]))
    return path


def _sides(ctx, size, pps, label, idle=None, core_extra=(), nf_extra=()):
    """idle: both sides' --idle-sleep (None: both busy-poll); core_extra,
    nf_extra: more xnv-core and libxnv options."""
    d, prefix = ctx.new_run(label)
    cfg = _config(d / "lat.ini", d / "xnv.sock", size, pps)
    mode = () if idle is None else ("--idle-sleep", idle)
    return [core_side(ctx, d, prefix, cfg, extra=(*mode, *core_extra)),
            nf_side(ctx, d, 1, "fwd", ctx.bin("xnv-forwarder"),
                    lib=(*mode, *nf_extra), busy=idle is None)], prefix, d


def max_rate(ctx, size, warmup, duration):
    """Sample of what the path carries unpaced (Mpps out of net_null1)."""
    sides, prefix, d = _sides(ctx, size, 0, "latency-max")
    return measure(Setup(sides, prefix, "net_null1", [prefix]), d, warmup,
                   duration)


def at_rate(ctx, size, pps, warmup, duration, idle=None, core_extra=(),
            nf_extra=()):
    """At pps packets/s offered: {"latency_us": {p50, p99, ...}, "cdf":
    [(us, fraction)], offered_mpps, sent_mpps, lost, samples}; idle: the
    core's and the NF's --idle-sleep (None: both busy-poll); core_extra,
    nf_extra: more xnv-core and libxnv options."""
    sides, prefix, d = _sides(ctx, size, int(pps), "latency-%d%s" % (
        pps, "" if idle is None else "-" + idle), idle, core_extra,
        nf_extra)
    procs = start_sides(sides, d)
    try:
        tel = Telemetry(prefix, procs)
        try:
            def out():
                return tel("/xnv/port/info,1")
            wait_until(lambda: out()["tx"] > 0, 30, "packets out of port "
                       "out at %d pps" % pps, procs)
            time.sleep(warmup)
            stats0 = tel("/xnv/stats")
            r = tel("/xnv/port/latency/reset,1")
            if r.get("reset") != "ok":
                raise BenchError("latency_reset: %s" % r)
            tx0, t0 = out()["tx"], time.monotonic()
            time.sleep(duration)
            lat = tel("/xnv/port/latency,1")
            tx1, t1 = out()["tx"], time.monotonic()
            stats1 = tel("/xnv/stats")
        finally:
            tel.close()
    finally:
        try:
            stop_all(procs)
        finally:
            remove_runtime_dir(prefix)
    if "error" in lat or lat.get("count", 0) == 0:
        raise BenchError("latency run at %d pps: %s (logs in %s)"
                         % (pps, lat, d))
    drops = sum(v - stats0.get(k, 0) for k, v in stats1.items()
                if k.startswith("drop_"))
    us = {k[:-3]: lat[k] / 1e3 for k, _ in QUANTILES}
    return {"latency_us": us, "samples": lat["count"],
            "cdf": [(lat[k] / 1e3, q) for k, q in QUANTILES],
            "offered_mpps": pps / 1e6,
            "sent_mpps": (tx1 - tx0) / (t1 - t0) / 1e6, "lost": drops}
