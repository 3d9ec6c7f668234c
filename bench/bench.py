#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""make bench: XenNetVM side by side with memif, vhost-user and af_packet.

Every system moves packets of the same shape on the same two CPUs:
a net_null source on the traffic side (CPU A), across to an NF (CPU B),
back, and counted where they end (see xnvbench/systems.py).  Each
configuration runs --reps times for --duration seconds after --warmup,
interleaved (rep 1 of everything, then rep 2, ...) so that slow periods
of a shared machine hit all systems alike; the tables give the median and
min..max.  A run whose busy-polling threads lost their CPU to another
process is marked disturbed and repeated once while the budget allows.

Writes bench/results/<date-time>/: results.csv, results.md (tables,
ratios, goals PASS/MISS, what each number means), PNG plots, log.txt;
and points bench/results/latest at it.  See bench/README.md.
"""
import argparse
import contextlib
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import doorbell
import fabric
import flows
from xnvbench import latency, measure, report, systems
from xnvbench.procs import BenchError, Hugepages, VethPair, run_main, say

REPO = Path(__file__).resolve().parents[1]
SIZES = (64, 128, 256, 512, 1024, 1518)
LOADS = (10, 50, 90)
UNPACED = report.UNPACED	# the latency point after LOADS
ALL = ("limit", "xennetvm", "port-io", "memif-zc", "memif-copy",
       "vhost-user", "af_packet", "nfs", "latency", "flows", "doorbell",
       "fabric")


@dataclass
class Point:
    """One configuration: how to run it once, and what it gave."""
    system: str
    config: str
    size: int
    chain_len: int
    polling: str
    run: object			# callable(label) -> measure.Sample
    samples: list = field(default_factory=list)
    errors: list = field(default_factory=list)

    @property
    def failed(self):
        """Given up on after two runs that could not be measured."""
        return "; ".join(self.errors) if len(self.errors) >= 2 else None

    @property
    def label(self):
        return "%s %s %dB" % (self.system, self.config, self.size)


def handler_ns(p):
    """A Point's handler_ns (with_handler_ns()), "" when it has none."""
    ns = [s.handler_ns for s in p.samples
          if getattr(s, "handler_ns", None) is not None]
    return ns[0] if ns else ""


def with_handler_ns(ctx, name, args, run):
    """`run` (a Point's measurement), its Sample also carrying the NF's
    handler cost alone (nf-cost-NAME on the same pcap; measured once, at
    the first rep): handler_ns, None where there is none."""
    cost = {}

    def measured(label):
        if "ns" not in cost:
            cost["ns"] = systems.nf_handler_ns(
                ctx, REPO, name, args, ctx.tmp / "udp64.pcap")
        s = run(label)
        s.handler_ns = cost["ns"]
        return s
    return measured


def build_plan(o, ctx):
    """Every throughput configuration of this run, in run order."""
    fwd = (ctx.bin("xnv-forwarder"), ())
    pts = []
    want = o.systems

    def setup_run(make):
        return lambda label: measure.measure(*make(label), o.warmup,
                                             o.duration, o.min_share)

    def xnv(size, nfs, src=None, workers=1):
        return setup_run(lambda label: systems.xnv(ctx, size, nfs, label,
                                                   src, workers))

    ring_rt = o.build / "bench" / "ring-rt"
    if "limit" in want:
        pts.append(Point("limit", "ring-rt", 64, 1, "busy", lambda label:
                         measure.ring_limit(ring_rt, ctx.cpu_a, ctx.cpu_b,
                                            o.warmup, o.duration,
                                            ctx.new_run(label)[0],
                                            o.min_share)))
    if "xennetvm" in want:
        for size in o.sizes:
            pts.append(Point("xennetvm", "1 NF", size, 1, "busy",
                             xnv(size, [fwd])))
        for n in o.chains:
            pts.append(Point("xennetvm", "chain of %d" % n, 64, n,
                             "adaptive NFs", xnv(64, [fwd] * n)))
        pts.append(Point("xennetvm", "core only", 64, 0, "busy",
                         xnv(64, [])))
        pts.append(Point("xennetvm", "core only, 2 workers", 64, 0, "busy",
                         xnv(64, [], workers=2)))
    if "port-io" in want:
        pts.append(Point("port-io", "testpmd net_null -> net_null", 64, 0,
                         "busy", setup_run(
                             lambda label: systems.port_io(ctx, 64, label))))
    for peer in [p for p in systems.PEERS if p in want]:
        why = systems.peer_usable(ctx, peer)
        if why:
            say("bench: %s skipped: %s" % (peer, why))
            continue
        for size in o.sizes:
            pts.append(Point(peer, "1 NF", size, 1, "busy", setup_run(
                lambda label, p=peer, s=size: systems.peer(ctx, p, s,
                                                           label))))
    nfs = systems.example_nfs(REPO, o.build) if "nfs" in want else []
    if nfs:
        # Real UDP/IPv4 packets, looped by net_pcap (all rows alike,
        # forwarder included, so the ratios compare like with like).
        src = "net_pcap0,rx_pcap=%s,infinite_rx=1" % systems.udp_pcap(
            ctx.tmp / "udp64.pcap")
    for name, binary, args in nfs:
        nf = (binary, args)
        pts.append(Point("nf:" + name, "alone", 64, 1, "busy",
                         with_handler_ns(ctx, name, args, xnv(64, [nf], src))))
        pts.append(Point("nf:" + name, "after a forwarder", 64, 2,
                         "adaptive NFs", xnv(64, [fwd, nf], src)))
    if "doorbell" in want:
        pts += doorbell.points(o, ctx, fwd, Point)
    if "flows" in want:
        # flow rules: the 1-NF path fed the same UDP pcap (flows.py)
        pcap = systems.udp_pcap(ctx.tmp / "udp64-flows.pcap")
        pts += flows.points(o, ctx, fwd, Point,
                            "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap, pcap)
    return pts


def run_throughput(o, pts, deadline, stop_at):
    """Every point, rep by rep; a disturbed run is repeated once before
    `deadline`; after `stop_at` no further rep starts (one of each is
    always run), so that the whole bench stays within --max-time."""
    total = o.reps * len(pts)
    k = 0
    for rep in range(1, o.reps + 1):
        if rep > 1 and time.monotonic() > stop_at:
            say("bench: out of time (--max-time), reps %d.. not run" % rep)
            break
        for p in pts:
            k += 1
            if p.failed:
                continue
            for attempt in range(2):
                try:
                    s = p.run(p.label)
                except (BenchError, OSError, ValueError) as e:
                    p.errors.append(str(e).splitlines()[0])
                    say("  [%3d/%d] %-40s FAILED: %s%s" % (
                        k, total, p.label, e,
                        "\n    (once more)" if attempt == 0 else ""))
                    if p.failed:
                        break
                    continue
                again = (s.disturbed or s.bad) and attempt == 0 and \
                    time.monotonic() < deadline
                say("  [%3d/%d] %-40s %9.3f Mpps  CPU %s%s%s%s" % (
                    k, total, p.label, s.mpps, " ".join(
                        "%.0f%%" % (100 * v) if v is not None else "?"
                        for v in s.shares.values()),
                    "  DISTURBED" if s.disturbed else "",
                    "  NOT COUNTED: " + s.bad if s.bad else "",
                    ", again" if again else ""))
                if not again:
                    if not s.bad:
                        p.samples.append(s)
                    break


def run_latency(o, ctx, stop_at):
    """Max rate, then latency at LOADS % of it; rows for the report.
    Past `stop_at`, one run per point only."""
    def reps():
        return range(o.reps if time.monotonic() < stop_at else 1)
    maxes = []
    for _ in reps():
        s = latency.max_rate(ctx, 64, o.warmup, o.duration)
        say("  latency path, unthrottled: %.3f Mpps  CPU %s" % (
            s.mpps, " ".join("%.0f%%" % (100 * (v or 0))
                             for v in s.shares.values())))
        maxes.append(s)
    top = statistics.median(x.mpps for x in maxes)
    rows = [report.median_row("latency-max", "1 NF, unpaced", 64, 1,
                              maxes, polling="busy")]
    # Then unpaced: what a packet waits when the path is the bottleneck
    # (a queue stands in front of it; the loads measure no queue).
    for load in [*o.loads, UNPACED]:
        runs = []
        for _ in reps():
            pps = 0 if load == UNPACED else top * 1e6 * load / 100
            r = latency.at_rate(ctx, 64, pps, o.warmup, o.lat_duration)
            say("  latency %s (%.3f Mpps offered, %.3f sent): p50 %.2f"
                " p99 %.2f p99.9 %.2f us, %d samples, lost %d" % (
                    report.load_label(load), r["offered_mpps"], r["sent_mpps"],
                    r["latency_us"]["p50"], r["latency_us"]["p99"],
                    r["latency_us"]["p999"], r["samples"], r["lost"]))
            runs.append(r)

        def med(k):
            return round(statistics.median(r["latency_us"][k] for r in runs),
                         3)
        rows.append(dict(system="latency", config="1 NF", size=64,
                         chain_len=1, load_pct=load, reps=len(runs),
                         offered_mpps="" if load == UNPACED else
                         round(top * load / 100, 4),
                         sent_mpps=round(statistics.median(
                             r["sent_mpps"] for r in runs), 4),
                         p50_us=med("p50"), p99_us=med("p99"),
                         p999_us=med("p999"), max_us=med("max"),
                         lost=sum(r["lost"] for r in runs),
                         cdf_us=" ".join("%.3f" % statistics.median(
                             r["cdf"][i][0] for r in runs)
                             for i in range(len(latency.QUANTILES))),
                         polling="busy",
                         cores="core %d, NF %d" % (ctx.cpu_a, ctx.cpu_b)))
    return rows


def meta(o, load_before, huge):
    def sh(*cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except OSError:
            return "?"
    cpu = next((line.split(":", 1)[1].strip()
                for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.machine())
    return dict(when=o.stamp, machine="%s, %d CPUs, kernel %s" % (
                    cpu, os.cpu_count(), platform.release()),
                load_before=load_before, load_after=loadavg(),
                commit=sh("git", "-C", str(REPO), "describe", "--always",
                          "--dirty"),
                mode="%s; CPU A = %d, CPU B = %d; %s s per run after %s s "
                     "warm-up, %d reps%s." % (
                         "DPDK on 2 MiB hugepages (--in-memory)" if huge
                         else "DPDK without hugepages (--no-huge)",
                         o.cpus[0], o.cpus[1], o.duration, o.warmup, o.reps,
                         ", QUICK mode" if o.quick else ""))


class Tee:
    """stdout that also goes to a file (the run's log.txt)."""

    def __init__(self, out, path):
        self.out, self.f = out, open(path, "w")

    def write(self, s):
        self.out.write(s)
        self.f.write(s)

    def flush(self):
        self.out.flush()
        self.f.flush()


def loadavg():
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def parse():
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Everything runs pinned to two CPUs; needs root (hugepages, "
               "veth), dpdk-testpmd, and a built tree (make).")
    ap.add_argument("--build", default=str(REPO / "build"), type=Path)
    ap.add_argument("--out", default=str(REPO / "bench" / "results"),
                    type=Path, help="results/<date-time>/ goes here")
    ap.add_argument("--quick", action="store_true",
                    help="1 rep, short runs, 64 and 1518 B, chains 1-2")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=2.0,
                    help="counted seconds per run")
    ap.add_argument("--warmup", type=float, default=0.5)
    ap.add_argument("--lat-duration", type=float, default=2.0)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--chains", default="1,2,3,4")
    ap.add_argument("--loads", default=",".join(map(str, LOADS)),
                    help="latency loads, %% of the measured max rate")
    ap.add_argument("--cpus", default="0,1", help="CPU A,CPU B")
    ap.add_argument("--min-share", type=float, default=0.9,
                    help="CPU share under which a run is 'disturbed'")
    ap.add_argument("--budget", type=float, default=600,
                    help="no repeat of a disturbed run after this many s")
    ap.add_argument("--max-time", type=float, default=780,
                    help="no further rep starts after this many s (the "
                         "first rep of everything always runs)")
    ap.add_argument("--systems", default=",".join(ALL),
                    help="what to run (default: all of %(default)s)")
    ap.add_argument("--keep", action="store_true",
                    help="keep configs and logs of every run")
    ap.add_argument("--readme", action="store_true",
                    help="rewrite the '## Benchmarks' section of README.md")
    ap.add_argument("--report-only", type=Path, metavar="DIR",
                    help="remake results.md and plots from DIR/results.csv")
    o = ap.parse_args()
    if o.quick:
        o.reps, o.duration, o.warmup, o.lat_duration = 1, 1.0, 0.3, 0.5
        o.sizes, o.chains = "64,1518", "1,2"
    o.sizes = [int(x) for x in o.sizes.split(",")]
    o.chains = [int(x) for x in o.chains.split(",")]
    o.loads = [int(x) for x in o.loads.split(",")]
    o.cpus = [int(x) for x in o.cpus.split(",")]
    o.systems = o.systems.split(",")
    if not set(o.systems) <= set(ALL):
        ap.error("--systems: some of %s" % ",".join(ALL))
    o.build = o.build.resolve()
    if o.report_only is None:
        o.out = Path(o.out).resolve()
    o.stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M%S")
    if len(o.cpus) != 2 or o.cpus[0] == o.cpus[1] or \
            not set(o.cpus) <= os.sched_getaffinity(0):
        ap.error("--cpus: two distinct usable CPUs (have %s)"
                 % sorted(os.sched_getaffinity(0)))
    if o.reps < 1 or o.duration <= 0 or o.warmup < 0:
        ap.error("--reps >= 1, --duration > 0, --warmup >= 0")
    return o


def check_tools(o):
    need = [o.build / "bin" / b for b in ("xnv-core", "xnv-forwarder",
                                          "xnv-generator", "xnv-sink")]
    need += [o.build / "bench" / b for b in ("ring-rt", "wake-floor")]
    missing = [str(p) for p in need if not os.access(p, os.X_OK)]
    missing += [t for t in ("dpdk-testpmd", "taskset", "ip")
                if shutil.which(t) is None]
    if missing:
        raise BenchError("missing %s (make; make deps)" % ", ".join(missing))
    if os.geteuid() != 0:
        raise BenchError("needs root (hugepages, veth pair)")


def write_outputs(outdir, rows, m, readme, pts=()):
    outdir.mkdir(parents=True, exist_ok=True)
    report.write_csv(outdir / "results.csv", rows)
    (outdir / "meta.json").write_text(json.dumps(m, indent=1) + "\n")
    if pts:
        report.write_runs(outdir / "runs.csv", [
            (p.system, p.config, p.size, p.samples) for p in pts])
    res = report.Results(rows)
    md = report.markdown(res, m) + flows.markdown(rows) + \
        doorbell.markdown(rows) + fabric.markdown(rows) + report.EXPLAIN
    (outdir / "results.md").write_text(md)
    pngs = report.plots(res, outdir)
    latest = outdir.parent / "latest"
    if latest.is_symlink() or not latest.exists():
        if latest.is_symlink():
            latest.unlink()
        latest.symlink_to(outdir.name)
    if readme:
        report.update_readme(REPO / "README.md", res, m, pngs)
    return md, pngs


def remake(o):
    """--report-only: the report and plots again from a run's CSV."""
    rows = report.read_csv(o.report_only / "results.csv")
    m = dict(when=o.report_only.name, machine="?", load_before="?",
             load_after="?", commit="?", mode="(remade from CSV)")
    with contextlib.suppress(OSError, ValueError):
        m = json.loads((o.report_only / "meta.json").read_text())
    print(write_outputs(o.report_only, rows, m, o.readme)[0])
    return 0


def run_extras(o, ctx, t0):
    """The rows that are not throughput runs (latency, doorbell, fabric),
    those asked for; one that cannot be measured leaves a row saying
    why."""
    rows = []
    if "latency" in o.systems:
        try:
            rows += run_latency(o, ctx, t0 + o.max_time)
        except BenchError as e:
            say("bench: latency not measured: %s" % e)
            rows.append(dict(system="latency", config="1 NF", size=64,
                             chain_len=1, reps=0, note=str(e)[:200]))
    if "doorbell" in o.systems:
        try:
            rows += doorbell.run(o, ctx, say)
        except BenchError as e:
            say("bench: doorbell wake-up / density not measured: %s" % e)
            rows.append(dict(system="doorbell", config="wake-up",
                             size=64, chain_len=1, reps=0,
                             note=str(e)[:200]))
    if "fabric" in o.systems:
        try:
            rows += fabric.run(o, ctx, say)
        except BenchError as e:
            say("bench: fabric (across hosts) not measured: %s" % e)
            rows.append(fabric.note_row(e))
    return rows


def main():
    o = parse()
    if o.report_only:
        return remake(o)
    check_tools(o)
    # The example NFs' bench.args name their files from the repository
    # (as nf-cost runs them): run from there whatever the caller's
    # directory (--build and --out are absolute by now).
    os.chdir(REPO)
    load_before = loadavg()
    outdir = o.out / o.stamp
    tmp = Path(tempfile.mkdtemp(prefix="xnv-bench-"))
    huge = Hugepages(384)
    veth = VethPair(str(os.getpid() % 100000))
    ok = False
    outdir.mkdir(parents=True)
    sys.stdout = Tee(sys.stdout, outdir / "log.txt")
    try:
        try:
            veth.open()
        except BenchError as e:
            say("bench: no veth pair, af_packet skipped: %s" % e)
            veth = None
        ctx = systems.Ctx(o.build, tmp, *o.cpus, huge, veth)
        say("bench: load average %s; CPU A = %d (traffic side / xnv-core), "
            "CPU B = %d (NFs); %d reps x %.1f s (+%.1f s warm-up); work "
            "dir %s" % (load_before, o.cpus[0], o.cpus[1], o.reps,
                        o.duration, o.warmup, tmp))
        t0 = time.monotonic()
        pts = build_plan(o, ctx)
        say("bench: %d configurations x %d reps" % (len(pts), o.reps))
        lat_time = 0 if "latency" not in o.systems else \
            (2 + len(o.loads)) * o.reps * (o.lat_duration + 4)
        run_throughput(o, pts, t0 + o.budget, t0 + o.max_time - lat_time)
        rows = [report.median_row(p.system, p.config, p.size, p.chain_len,
                                  p.samples, polling=p.polling,
                                  cores="A=%d B=%d" % tuple(o.cpus),
                                  handler_ns=handler_ns(p),
                                  note="; ".join(p.errors + flows.notes(p) +
                                                 doorbell.notes(p, pts)))
                for p in pts]
        rows += run_extras(o, ctx, t0)
        say("bench: measured in %.0f s" % (time.monotonic() - t0))
        m = meta(o, load_before, huge.ok)
        runs = [x for p in pts for x in p.samples]
        m["disturbed"] = "Disturbed: %d of %d kept runs (a busy " \
            "thread of ours had < %.0f %% of its CPU)" % (
                sum(x.disturbed for x in runs), len(runs),
                100 * o.min_share)
        md, pngs = write_outputs(outdir, rows, m, o.readme, pts)
        print("\n" + md)
        say("bench: results in %s (%s)" % (outdir, ", ".join(
            ["results.csv", "runs.csv", "results.md", *pngs])))
        failed = [p.label for p in pts if not p.samples]
        if failed:
            say("bench: not measured: %s" % ", ".join(failed))
        ok = not failed
    finally:
        if veth:
            veth.close()
        huge.close()
        if ok and not o.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            say("bench: configs and logs kept in %s" % tmp)
    return 0 if ok else 1


if __name__ == "__main__":
    run_main(main, "bench")
