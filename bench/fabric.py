# SPDX-License-Identifier: BSD-3-Clause
"""make bench --systems fabric: a service chain's hops to another host
against the same hops within one host (fabric/README.md), side by side in
one run.

Two simulated hosts a and b (fabric/xnv_fabric/sim.py: a network
namespace each with its own Open vSwitch, userspace datapath, joined by
VXLAN), an xnv-core in each, placed by `xnv-fabric apply` from one
topology (simdeploy.py).  Steps fw -> ids -> lb, every one an
xnv-forwarder, fw and lb on a, ids with an NF on both hosts.
`xnv-fabric move TOPO ids a|b` (a live reload: the same processes for
the whole run) switches between
  intra-host hop   ids on a: fw -> ids -> lb all on host a;
  inter-host hop   ids on b: a -> b -> a, two hops across hosts, each
                   xnv-core's af_packet fabric port, its host's OVS, VXLAN
                   over the underlay, the other OVS, the other fabric port;
alternating rep by rep (intra, inter; inter, intra; ...).

  rate      chain web, a:in -> fw -> ids -> lb -> a:out: port in loops
            the bench's 64 B UDP pcap (256 flows), unpaced; out is
            net_null.  a's out tx over --duration s, after max(0.5,
            --warmup) s to settle after the move: Mpps, median, min, max
            per placement; inter / intra.  The notes: what both cores
            dropped (drop_* counters) and, inter, the share of what a's
            core sent to b that did not come back (the hop counters).
  latency   chain ping, a:probe -> fw -> ids -> lb -> a:probe (probe:
            net_af_packet on one end of a veth pair inside a's namespace):
            a Python probe on the other end sends one 64 B frame, waits
            for it back (LAT_TIMEOUT), then the next, at most one per
            LAT_GAP: LAT_N round trips per placement per rep after
            LAT_WARM uncounted.  p50 / p99 / p99.9 / max of every rep's
            samples together.  The rate traffic is stopped first: chain
            web taken out of the topology, `xnv-fabric apply` reloads a's
            core with no chain on port in, which stops its rx.  The
            probe's own cost (Python, the kernel, the veth) is in both
            placements alike: the difference is the hops'.

Cores in their default --idle-sleep doorbell mode with --idle-sleep-max
CORE_SLEEP_MAX_US (ports have no doorbell: an idle core polls them that
often, which bounds what a frame arriving at a fabric or probe port
waits; the default 2000 us would add up to 2 ms per arrival), the NFs in
theirs.  CPU: the machine's two CPUs are shared by everything: a's core
on CPU 0, b's on CPU 1 (simdeploy), the four NFs, both OVS daemons and
the probe where the scheduler puts them.  The numbers are relative.
"""
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from xnvbench import report, systems
from xnvbench.measure import Sample
from xnvbench.procs import BenchError, Proc, stop_all, wait_until

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fabric"))
from xnv_fabric.plan import hop  # noqa: E402
from xnv_fabric.sim import Sim, SimError, ovs_available  # noqa: E402
from xnv_fabric.simdeploy import Deployment  # noqa: E402
from xnv.ctl import Core, CtlError  # noqa: E402
from xnv.locate import from_socket  # noqa: E402

SYSTEM = "fabric"
STEPS = ["fw", "ids", "lb"]
CHAINS = {"ping": ("a:probe", STEPS, "a:probe"),       # first: hops 17..
          "web": ("a:in", STEPS, "a:out")}             # hops 33..
WEB = list(CHAINS).index("web")
PLACES = (("intra-host hop", "a"), ("inter-host hop", "b"))
VETH = ("xnvp0", "xnvp1")           # the core's end, the probe's end
CORE_SLEEP_MAX_US = 50
LAT_N, LAT_WARM, LAT_GAP, LAT_TIMEOUT = 400, 40, 0.001, 0.2
CORES = "core a CPU 0, core b CPU 1; NFs, OVS: any"
QUANTILES = (("p50_us", .50), ("p99_us", .99), ("p999_us", .999),
             ("max_us", 1.0))


def lat_config(config):
    return "latency, " + config.replace(" hop", "")


def note_row(why):
    return dict(system=SYSTEM, config="inter-host hop", size=64,
                chain_len=len(STEPS), reps=0, note=str(why)[:200])


# ---- the deployment -----------------------------------------------------

def deploy(ctx, d, sim, start):
    """The veth pair in a, the topology applied, cores and NFs started
    (ids on b and a, lb, fw last: port in starts with it), ids placed on
    a.  The Deployment, with .tel {host: xnv.ctl.Core}."""
    a = sim.hosts["a"]
    a.run("ip", "link", "add", VETH[0], "type", "veth", "peer", "name",
          VETH[1])
    for v in VETH:
        a.run("ip", "link", "set", v, "up")
    pcap = systems.udp_pcap(d / "udp64.pcap")
    ports = {"a": {"probe": "net_af_packet1,iface=%s" % VETH[0],
                   "in": "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap,
                   "out": "net_null1"}}
    dep = Deployment(sim, ctx.build, d / "f", start, ports, dict(CHAINS),
                     {"fw": "a", "ids": "a", "lb": "a"})
    dep.write_topology()
    fabric(dep, "apply")
    for core in dep.start_cores(("--idle-sleep-max",
                                 str(CORE_SLEEP_MAX_US))).values():
        core.wait_output(r"NFs attach on ", 30)
    for s, h in (("ids", "b"), ("ids", "a"), ("lb", "a"), ("fw", "a")):
        dep.start_nf(s, h)
        dep.cores[h].wait_output(r"NF %s-%s \(pid \d+\) attached" % (s, h),
                                 30)
    dep.tel = {h: Core(from_socket(str(dep.socket(h))).path, h, 5.0)
               for h in sim.hosts}
    return dep


def fabric(dep, *args):
    """xnv-fabric ARGS[0] TOPO ARGS[1:]; BenchError when it fails."""
    r = dep.fabric(args[0], dep.topo, *args[1:])
    if r.returncode != 0:
        raise BenchError("xnv-fabric %s: %s" % (" ".join(args), (
            r.stderr or r.stdout).strip()[-300:]))


def place(dep, host, settle):
    """ids onto `host` (xnv-fabric move), then `settle` s."""
    if dep.placement["ids"] != host:
        fabric(dep, "move", "ids", host)
        dep.placement["ids"] = host
    time.sleep(settle)


def call(dep, host, cmd, what=None):
    try:
        core = dep.tel[host]
        return core.infos(what) if what else core.call(cmd)
    except CtlError as e:
        raise BenchError("host %s: %s: %s" % (host, cmd, e)) from None


# ---- rate ----------------------------------------------------------------

def counters(dep):
    """(time, a's out tx, {(host, hop): (rx, tx)}, both cores' drops)."""
    out = next(p["tx"] for p in call(dep, "a", "ports", "port")
               if p["name"] == "out")
    t = time.monotonic()
    hops, drops = {}, 0
    for h in dep.sim.hosts:
        for k, v in call(dep, h, "/xnv/fabric").items():
            hops[(h, int(k))] = (v["rx"], v["tx"])
        drops += sum(v for k, v in call(dep, h, "/xnv/stats").items()
                     if k.startswith("drop_"))
    return t, out, hops, drops


def lost_between_hosts(h0, h1):
    """% of what a sent to b that did not come back, from the hop
    counters of two counters() (None when a sent nothing to b)."""
    def d(host, k, i):
        return h1.get((host, k), (0, 0))[i] - h0.get((host, k), (0, 0))[i]
    to_b, back = hop(WEB, 1), hop(WEB, 2)
    sent = d("a", to_b, 1)
    if sent <= 0:
        return None
    return 100.0 * (sent - d("b", to_b, 0) + d("b", back, 1) -
                    d("a", back, 0)) / sent


def rate_phase(o, dep, say):
    """({config: [Sample]}, {config: [% lost between hosts]}, {config:
    packets both cores dropped in its windows})."""
    got = {c: [] for c, _ in PLACES}
    lost = {c: [] for c, _ in PLACES}
    drops = {c: 0 for c, _ in PLACES}
    wait_until(lambda: counters(dep)[1] > 0, 30, "a's port out to send",
               procs=list(dep.cores.values()))
    for rep in range(o.reps):
        for config, host in PLACES[::1 if rep % 2 == 0 else -1]:
            place(dep, host, max(0.5, o.warmup))
            t0, n0, h0, x0 = counters(dep)
            time.sleep(o.duration)
            t1, n1, h1, x1 = counters(dep)
            got[config].append(Sample((n1 - n0) / (t1 - t0) / 1e6, n1 - n0,
                                      t1 - t0, {}, False))
            drops[config] += x1 - x0
            x = lost_between_hosts(h0, h1)
            lost[config] += [] if x is None else [x]
            say("  fabric rate, %-15s %7.3f Mpps, cores dropped %d%s" % (
                config, got[config][-1].mpps, x1 - x0, "" if x is None
                else ", %.1f %% of what a sent to b not back" % x))
    return got, lost, drops


def rate_rows(got, lost, drops):
    rows = [report.median_row(SYSTEM, c, 64, len(STEPS), got[c],
                              polling="doorbell", cores=CORES)
            for c, _ in PLACES]
    for r, (c, host) in zip(rows, PLACES):
        note = ["ids on host %s" % host]
        if r is not rows[0] and rows[0]["mpps_median"]:
            note.append("%.3f of the intra-host rate" % (
                r["mpps_median"] / rows[0]["mpps_median"]))
        if lost[c]:
            note.append("%.1f %% of what a sent to b not back (median)"
                        % statistics.median(lost[c]))
        r["note"] = "; ".join(note + ["the cores dropped %d" % drops[c]])
    return rows


# ---- latency -------------------------------------------------------------

def probe_frame():
    """A 60-byte (64 B on the wire) UDP/IPv4 frame; its last 8 bytes are
    the probe's sequence number."""
    from scapy.all import Ether, IP, UDP, Raw
    return bytes(Ether(src="02:00:00:00:00:0a", dst="02:00:00:00:00:0b") /
                 IP(src="192.0.2.254", dst="10.9.0.1", ttl=64) /
                 UDP(sport=40000, dport=9, chksum=0) / Raw(b"\0" * 18))


def round_trip(sock, frame, timeout):
    """Send `frame`, wait for it back; seconds, or None after `timeout`."""
    t0 = time.perf_counter()
    sock.send(frame)
    deadline = t0 + timeout
    while (left := deadline - time.perf_counter()) > 0:
        sock.settimeout(left)
        try:
            data, addr = sock.recvfrom(2048)
        except socket.timeout:
            break
        if addr[2] != socket.PACKET_OUTGOING and data[52:60] == frame[52:]:
            return time.perf_counter() - t0
    return None


def probe_run(sock, head, first, n):
    """n round trips, at most one per LAT_GAP: ([us], lost)."""
    out, lost = [], 0
    for seq in range(first, first + n):
        t = time.perf_counter()
        rtt = round_trip(sock, head + seq.to_bytes(8, "big"), LAT_TIMEOUT)
        if rtt is None:
            lost += 1
        else:
            out.append(rtt * 1e6)
        time.sleep(max(0.0, t + LAT_GAP - time.perf_counter()))
    return out, lost


def latency_phase(o, dep, say):
    """Rate traffic off, then ({config: [us] of every rep}, {config:
    frames that did not come back})."""
    dep.chains = {k: v for k, v in dep.chains.items() if k != "web"}
    dep.write_topology()
    fabric(dep, "apply")
    rtts = {c: [] for c, _ in PLACES}
    lost = {c: 0 for c, _ in PLACES}
    head, seq = probe_frame()[:52], 1
    sock = dep.sim.hosts["a"].packet_socket(VETH[1])
    try:
        for rep in range(o.reps):
            for config, host in PLACES[::1 if rep % 2 == 0 else -1]:
                place(dep, host, max(0.5, o.warmup))
                if not probe_run(sock, head, seq, LAT_WARM)[0]:
                    raise BenchError("no probe frame came back through "
                                     "a:probe (%s)" % config)
                v, n = probe_run(sock, head, seq + LAT_WARM, LAT_N)
                seq += LAT_WARM + LAT_N
                rtts[config] += v
                lost[config] += n
                say("  fabric latency, %-15s p50 %.1f p99 %.1f us, %d "
                    "samples, %d lost" % (config, quantile(v, .5),
                                          quantile(v, .99), len(v), n))
    finally:
        sock.close()        # an open socket keeps the namespace
    return rtts, lost


def quantile(v, q):
    s = sorted(v)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def latency_rows(rtts, lost, reps):
    rows = []
    for config, host in PLACES:
        v = rtts[config]
        rows.append(dict(
            system=SYSTEM, config=lat_config(config), size=64,
            chain_len=len(STEPS), reps=reps, lost=lost[config],
            polling="doorbell", cores=CORES, note="ids on host %s; %d round "
            "trips of a Python probe, every rep together" % (host, len(v)),
            **{k: round(quantile(v, q), 1) for k, q in QUANTILES}))
    return rows


# ---- the section ---------------------------------------------------------

def run(o, ctx, say):
    """Rows of the rate and latency measurements (one row with the reason
    when simulated hosts cannot be made here)."""
    why = ovs_available()
    if why:
        say("bench: fabric not measured: %s" % why)
        return [note_row(why)]
    d, _ = ctx.new_run("fabric")
    procs = []

    def start(name, argv):
        procs.append(Proc(name, argv, d))
        return procs[-1]
    sim = Sim(("a", "b"), workdir=d / "sim")
    try:
        sim.up()
        dep = deploy(ctx, d, sim, start)
        rates = rate_phase(o, dep, say)
        lat = latency_phase(o, dep, say)
    except (SimError, OSError, subprocess.SubprocessError) as e:
        raise BenchError("fabric: %s" % e) from None
    finally:
        try:
            stop_all(procs)     # the cores first: they hold xnv0
        finally:
            sim.down()
    return rate_rows(*rates) + latency_rows(*lat, o.reps)


def markdown(rows):
    """The section of results.md; "" when the section did not run."""
    rows = [r for r in rows if r.get("system") == SYSTEM]
    if not rows:
        return ""
    by = {r["config"]: r for r in rows}
    L = ["", "## Across hosts: fw -> ids -> lb, ids on host a or b (64 B)",
         "", "| placement | Mpps median (min..max) | p50 us | p99 us | p99.9 us "
         "| max us |", "|---|---|---|---|---|---|"]
    for config, _ in PLACES:
        r, lat = by.get(config, {}), by.get(lat_config(config), {})
        rate = "n/a" if r.get("mpps_median", "") == "" else \
            "%.3f (%.3f..%.3f)" % (r["mpps_median"], r["mpps_min"],
                                   r["mpps_max"])
        L.append("| %s | %s | %s | %s | %s | %s |" % (
            config, rate, *(lat.get(k, "n/a") for k, _ in QUANTILES)))
    (a, la), (b, lb) = ((by.get(c, {}), by.get(lat_config(c), {}))
                        for c, _ in PLACES)
    if a.get("mpps_median") and b.get("mpps_median", "") != "":
        L += ["", "Inter-host / intra-host rate: **%.3f**." % (
            b["mpps_median"] / a["mpps_median"])]
        L += ["- %s: %s" % (r["config"], r["note"]) for r in (a, b)]
    if la.get("p50_us", "") != "" and lb.get("p50_us", "") != "":
        L += ["", "The two hops across hosts add p50 **%.1f us**, p99 "
              "**%.1f us** to the round trip." % (
                  lb["p50_us"] - la["p50_us"], lb["p99_us"] - la["p99_us"])]
    L += [x for r in rows if r.get("reps") == 0 and r.get("note")
          for x in ("", "Not measured: %s" % r["note"])]
    return "\n".join(L + [
        "", "Rate: a's port out, port in unpaced. Latency: a Python "
        "probe's round trip through a:probe (its own cost in both). Two "
        "CPUs for both cores, 4 NFs, both OVS: relative numbers."]) + "\n"
