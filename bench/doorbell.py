# SPDX-License-Identifier: BSD-3-Clause
"""make bench --systems doorbell: what sleeping on doorbells costs and
gives (dom0-core/doorbell.h, domu-lib/sleep.c, docs/DESIGN.md 2.3).

  busy cost    the 1-NF 64 B path (net_null, unpaced) with the core and
               the forwarder in `poll` mode, then both in `doorbell`
               mode: throughput Points, interleaved rep by rep with the
               other Points of the run; the doorbell row's note gives the
               ratio (goal: within 2 % of poll).
  wake-up      one-way latency (the core's own histogram, as the latency
               section) at 1000 packets/s through one forwarder, every
               side in `poll`, `adaptive` and `doorbell` mode: p50, p99,
               p99.9 (goal: doorbell p99 <= 20 us).
  wake floor   bench/wake_floor.c, interleaved with the above: one kick
               of the same doorbell (host mode's: the pipe the core kicks
               an NF through) at the same rate to a process asleep in
               poll() on CPU B, answered through shared memory to a
               spinner on CPU A: what one wake-up costs on this machine
               with nothing of XenNetVM around it.  A sleeping NF cannot
               be woken faster than that.  "socketpair": the same kick
               through the socketpair alone (wake-floor -s), the doorbell
               of an NF that does not ask for the pipe.
  lat 0        the doorbell wake-up and the floor again with the CPUs'
               wake-up latency held at 0 (xnv-core --cpu-latency 0,
               wake-floor -l 0: /dev/cpu_dma_latency): idle CPUs poll in
               the kernel instead of halting.
  + rt         the same with the core's lcore and the forwarder's loop
               SCHED_FIFO (--rt-priority 1 of each): a woken side runs at
               once, whatever else shares its CPU.
  density      32 forwarders in 8 chains of 4 (every NF on CPU B, the
               core on CPU A), each chain behind a port with nothing to
               receive (net_ring): the CPU time the core and the 32 NFs
               take together over a window, in `adaptive` and `doorbell`
               mode (goal, doorbell: <= 2 % of one CPU); then one chain
               fed by net_null with the other 28 NFs attached and idle,
               against the same chain alone (its rate, both ways).
"""
import os
import re
import statistics
import subprocess
import time

from xnvbench import latency, measure, systems
from xnvbench.measure import Setup, Side
from xnvbench.procs import BenchError, stop_all, remove_runtime_dir, \
    wait_until

SYSTEM = "doorbell"
MODES = ("poll", "adaptive", "doorbell")
WAKE_PPS = 1000
CHAINS, DEPTH = 8, 4
GOAL_BUSY_PCT = 98.0
GOAL_P99_US = 20.0
GOAL_IDLE_PCT = 2.0
IDLE_RUNS = (("adaptive", "adaptive", ()), ("doorbell", "doorbell", ()),
             ("doorbell, max 1000 us", "doorbell",
              ("--idle-sleep-max", "1000")))


def with_mode(setup, mode):
    """The Setup with every side's --busy-poll replaced by --idle-sleep
    MODE (the core's and each NF's)."""
    for s in setup.sides:
        s.argv = [a for x in s.argv for a in (
            ("--idle-sleep", mode) if x == "--busy-poll" else (x,))]
    return setup


def points(o, ctx, fwd, point_cls):
    """Busy cost: the 1-NF path, poll then doorbell (bench.py's Points)."""
    pts = []
    for mode in ("poll", "doorbell"):
        def run(label, mode=mode):
            setup, d = systems.xnv(ctx, 64, [fwd], label)
            return measure.measure(with_mode(setup, mode), d, o.warmup,
                                   o.duration, o.min_share)
        pts.append(point_cls(SYSTEM, "1 NF, %s" % mode, 64, 1, mode, run))
    return pts


def notes(p, pts):
    """The doorbell Point's note: its median vs the poll Point's."""
    if p.system != SYSTEM or not p.config.endswith("doorbell"):
        return []
    base = [q for q in pts if q.system == SYSTEM and q.config.endswith(
        "poll")]
    a = [s.mpps for s in p.samples]
    b = [s.mpps for q in base for s in q.samples]
    if not a or not b:
        return []
    return ["%.1f %% of poll mode's rate (goal >= %.0f %%)" % (
        100 * statistics.median(a) / statistics.median(b), GOAL_BUSY_PCT)]


# ---- wake-up latency ----------------------------------------------------

def wake_floor(o, ctx, extra=()):
    """One run of bench/wake_floor.c at WAKE_PPS for max(lat_duration, 2)
    s: {"p50": us, ...} as latency.at_rate's latency_us.  extra: its
    options (-l US)."""
    n = int(WAKE_PPS * max(o.lat_duration, 2.0))
    cmd = [str(ctx.build / "bench" / "wake-floor"), "-n", str(n), "-i",
           str(1000000 // WAKE_PPS), "-a", str(ctx.cpu_a), "-b",
           str(ctx.cpu_b), *extra]
    r = subprocess.run(cmd, capture_output=True, text=True,
                       timeout=60 + 2 * n / WAKE_PPS)
    m = re.search(r"n (\d+) p50_us (\S+) p99_us (\S+) p999_us (\S+) "
                  r"max_us (\S+)", r.stdout)
    if r.returncode != 0 or not m:
        raise BenchError("wake-floor failed: %s" % (r.stderr or r.stdout))
    return dict(latency_us=dict(zip(("p50", "p99", "p999", "max"), map(
        float, m.groups()[1:]))), samples=int(m.group(1)))


# The wake-up runs: (label, how): a mode of every side, or the floor;
# "+ lat 0": with the CPUs' wake-up latency held at 0 (xnv-core
# --cpu-latency 0, wake-floor -l 0: idle CPUs poll instead of halting).
WAKE_RUNS = (
    *((m, dict(idle=m)) for m in MODES),
    ("doorbell + lat 0", dict(idle="doorbell",
                              core_extra=("--cpu-latency", "0"))),
    ("doorbell + lat 0 + rt", dict(idle="doorbell",
                                   core_extra=("--cpu-latency", "0",
                                               "--rt-priority", "1"),
                                   nf_extra=("--rt-priority", "1"))),
    ("floor", dict(floor=())),
    ("floor + lat 0", dict(floor=("-l", "0"))),
    ("floor + lat 0, socketpair", dict(floor=("-l", "0", "-s"))),
)


def wake_rows(o, ctx, say):
    """p50/p99/p99.9 at WAKE_PPS for each of WAKE_RUNS, o.reps runs each,
    interleaved (run by run within a rep)."""
    runs = {name: [] for name, _ in WAKE_RUNS}
    for _ in range(o.reps):
        for name, how in WAKE_RUNS:
            if "floor" in how:
                r = wake_floor(o, ctx, how["floor"])
            else:
                r = latency.at_rate(ctx, 64, WAKE_PPS, o.warmup,
                                    max(o.lat_duration, 2.0), **how)
            say("  wake-up at %d pps, %-16s p50 %.2f p99 %.2f p99.9 %.2f "
                "us, %d samples" % (WAKE_PPS, name, r["latency_us"]["p50"],
                                    r["latency_us"]["p99"],
                                    r["latency_us"]["p999"], r["samples"]))
            runs[name].append(r)
    rows = []
    for name, how in WAKE_RUNS:
        def med(k, name=name):
            return round(statistics.median(r["latency_us"][k]
                                           for r in runs[name]), 3)
        rows.append(dict(system=SYSTEM, config="wake-up, %s" % name,
                         size=64, chain_len=1, reps=len(runs[name]),
                         offered_mpps=WAKE_PPS / 1e6, p50_us=med("p50"),
                         p99_us=med("p99"), p999_us=med("p999"),
                         max_us=med("max"), polling=how.get("idle", "-"),
                         cores="core %d, NF %d" % (ctx.cpu_a, ctx.cpu_b)))
    return rows


# ---- density -------------------------------------------------------------

def svc(k, j):
    return "c%dn%d" % (k, j)


def density_config(path, sock, fed):
    """CHAINS chains of DEPTH services; chain 0 behind net_null0 when
    `fed` (else net_ring0), the others behind net_ring ports; out is
    net_null1.  fed == "alone": chain 0 and no other chain."""
    lines = ["; written by bench/doorbell.py", "[core]", "socket = %s" % sock,
             "ring_size = 256", "[group 0]", "pool_bufs = 16384"]
    chains = 1 if fed == "alone" else CHAINS
    for k in range(chains):
        dev = "net_null0,size=64" if k == 0 and fed else "net_ring%d" % k
        lines += ["[port i%d]" % k, "dev = %s" % dev, "chain = %s" % " -> ".join(
            [*(svc(k, j) for j in range(DEPTH)), "out"])]
    lines += ["[port out]", "dev = net_null1"]
    lines += ["[service %s]" % svc(k, j) for k in range(chains)
              for j in range(DEPTH)]
    path.write_text("\n".join(lines) + "\n")
    return path


def density_setup(ctx, label, mode, fed, core_extra=()):
    d, prefix = ctx.new_run(label)
    cfg = density_config(d / "density.ini", d / "xnv.sock", fed)
    lib = ("--idle-sleep", mode)
    sides = [systems.core_side(ctx, d, prefix, cfg,
                               extra=(*lib, *core_extra))]
    chains = 1 if fed == "alone" else CHAINS
    sides += [systems.nf_side(ctx, d, k * DEPTH + j, svc(k, j),
                              ctx.bin("xnv-forwarder"), busy=False, lib=lib)
              for k in range(chains) for j in range(DEPTH)]
    sides[0].busy = False
    return Setup(sides, prefix, "net_null1", [prefix]), d, prefix


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def idle_cpu(o, ctx, mode, core_extra=()):
    """% of one CPU the core and the 32 NFs take together, all idle."""
    setup, d, prefix = density_setup(ctx, "density-idle-%s" % mode, mode,
                                     None, core_extra)
    procs = measure.start_sides(setup.sides, d)
    try:
        log = d / "xnv-core.log"
        wait_until(lambda: len(re.findall(r"attached as domain", log.read_text(
            errors="replace"))) >= CHAINS * DEPTH, 60,
            "%d NFs to attach" % (CHAINS * DEPTH), procs)
        time.sleep(max(2.0, o.warmup))
        hz = os.sysconf("SC_CLK_TCK")
        window = max(5.0, 2 * o.duration)
        t0, c0 = time.monotonic(), sum(cpu_ticks(p.pid) for p in procs)
        time.sleep(window)
        t1, c1 = time.monotonic(), sum(cpu_ticks(p.pid) for p in procs)
        if not all(p.alive() for p in procs):
            raise BenchError("a process of the density run exited (%s)" % d)
    finally:
        stop_all(procs)
        remove_runtime_dir(prefix)
    return 100.0 * (c1 - c0) / hz / (t1 - t0)


def density_rows(o, ctx, say):
    rows = []
    # The core's --idle-sleep-max: the default (2000 us), and 1000 us.
    for name, mode, extra in IDLE_RUNS:
        pct = [idle_cpu(o, ctx, mode, extra) for _ in range(o.reps)]
        say("  density, 32 idle NFs + core, %-22s %s %% of one CPU" % (
            name, " ".join("%.2f" % x for x in pct)))
        rows.append(dict(system=SYSTEM, config="32 idle NFs, %s" % name,
                         size=64, chain_len=DEPTH, reps=len(pct),
                         idle_cpu_pct=round(statistics.median(pct), 3),
                         polling=mode, note="CPU of core + 32 NFs, all "
                         "idle, %% of one CPU (min %.2f, max %.2f)" % (
                             min(pct), max(pct))))
    rates = {"alone": [], "with 28 idle": []}
    for _ in range(o.reps):
        for what, fed in (("alone", "alone"), ("with 28 idle", "fed")):
            setup, d, _ = density_setup(ctx, "density-%s" % fed,
                                        "doorbell", fed)
            s = measure.measure(setup, d, o.warmup, o.duration, o.min_share)
            say("  density, chain of 4 %-12s %.3f Mpps" % (what, s.mpps))
            rates[what].append(s.mpps)
    for what, r in rates.items():
        rows.append(dict(system=SYSTEM, config="chain of 4, %s" % what,
                         size=64, chain_len=DEPTH, reps=len(r),
                         mpps_median=round(statistics.median(r), 4),
                         mpps_min=round(min(r), 4), mpps_max=round(max(r), 4),
                         polling="doorbell"))
    return rows


def run(o, ctx, say):
    """Rows of the wake-up and density measurements."""
    return wake_rows(o, ctx, say) + density_rows(o, ctx, say)


def markdown(rows):
    """The section of results.md; "" when the section did not run."""
    rows = [r for r in rows if r.get("system") == SYSTEM]
    if not rows:
        return ""
    by = {r["config"]: r for r in rows}
    L = ["", "## Doorbells: idle NFs sleep (64 B)", ""]
    busy = [by.get("1 NF, %s" % m) for m in ("poll", "doorbell")]
    if all(b and b.get("mpps_median") not in (None, "") for b in busy):
        pct = 100 * float(busy[1]["mpps_median"]) / float(
            busy[0]["mpps_median"])
        L += ["Busy cost: 1 NF, poll %.3f Mpps, doorbell %.3f Mpps: "
              "**%.1f %%** (goal >= %.0f %%: %s)." % (
                  float(busy[0]["mpps_median"]),
                  float(busy[1]["mpps_median"]), pct, GOAL_BUSY_PCT,
                  "PASS" if pct >= GOAL_BUSY_PCT else "MISS"), ""]
    L += ["| wake-up at %d pps, all sides | p50 us | p99 us | p99.9 us | "
          "max us |" % WAKE_PPS, "|---|---|---|---|---|"]
    for name, _ in WAKE_RUNS:
        r = by.get("wake-up, %s" % name)
        if r:
            L.append("| %s | %s | %s | %s | %s |" % (
                name, r["p50_us"], r["p99_us"], r["p999_us"], r["max_us"]))
    for sfx, how in (("", "by default"),
                     (" + lat 0", "with --cpu-latency 0"),
                     (" + lat 0 + rt", "with --cpu-latency 0 and "
                      "--rt-priority 1 (core and NF)")):
        r = by.get("wake-up, doorbell" + sfx)
        f = by.get("wake-up, floor" + sfx)
        if r:
            L += ["", "Goal: doorbell p99 <= %.0f us, %s: **%s** (%s us%s)."
                  % (GOAL_P99_US, how, "PASS" if float(r["p99_us"]) <=
                     GOAL_P99_US else "MISS", r["p99_us"],
                     "; one wake-up alone (floor%s): p99 %s us" % (
                         sfx, f["p99_us"]) if f else "")]
    L += ["", "floor: bench/wake_floor.c, one kick of the same doorbell to "
          "a process asleep in poll(), no XenNetVM (socketpair: through "
          "the socketpair alone, as for an NF that does not ask for the "
          "pipe). lat 0: the CPUs' wake-up latency held at 0 (idle CPUs "
          "poll, not halt). rt: --rt-priority 1 of the core and the NF "
          "(SCHED_FIFO)."]
    L += ["", "| 32 NFs (8 chains of 4) + core, all idle | CPU, % of one |",
          "|---|---|"]
    for m, _, _ in IDLE_RUNS:
        r = by.get("32 idle NFs, %s" % m)
        if r:
            L.append("| %s | %s |" % (m, r["idle_cpu_pct"]))
    r = by.get("32 idle NFs, doorbell")
    if r:
        L += ["", "Goal: <= %.0f %% of one CPU: **%s**." % (
            GOAL_IDLE_PCT, "PASS" if float(r["idle_cpu_pct"]) <=
            GOAL_IDLE_PCT else "MISS")]
    a, w = by.get("chain of 4, alone"), by.get("chain of 4, with 28 idle")
    if a and w:
        L += ["", "One chain of 4 fed (net_null, doorbell mode): alone "
              "%.3f Mpps, with the other 28 NFs attached and idle %.3f "
              "Mpps (%.1f %%)." % (a["mpps_median"], w["mpps_median"],
                                  100 * w["mpps_median"] / a["mpps_median"])]
    return "\n".join(L) + "\n"
