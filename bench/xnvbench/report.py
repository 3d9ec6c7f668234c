# SPDX-License-Identifier: BSD-3-Clause
"""Results: results.csv, results.md (tables, ratios, goals), PNG plots.

Rows are dicts with the CSV_FIELDS keys; throughput rows have mpps_*,
latency rows have p50_us .. and load_pct.  Everything here reads rows
only, so a results.csv can be turned into the report again
(bench.py --report-only DIR).
"""
import csv
import statistics
from pathlib import Path

CSV_FIELDS = ["system", "config", "size", "chain_len", "mpps_median",
              "mpps_min", "mpps_max", "reps", "disturbed", "cores",
              "polling", "ns_per_pkt", "load_pct", "offered_mpps",
              "sent_mpps",
              "p50_us", "p99_us", "p999_us", "max_us", "lost", "cdf_us",
              "idle_cpu_pct", "handler_ns", "note"]
# handler_ns: an example NF's handler alone, ns per packet (nf-cost-NAME)
# cdf_us: latency (us) at these fractions of the samples (latency.py)
CDF_AT = (.10, .25, .50, .75, .90, .95, .99, .999, 1.0)

# Systems in the order of the tables and plots, with a one-line gloss.
SYSTEMS = {
    "limit": "raw gntshare ring round trip (ring-rt), touches 64 B",
    "xennetvm": "net_null -> xnv-core -> NF(s) -> xnv-core -> net_null",
    "memif-zc": "testpmd net_null <-> memif server | testpmd on a "
                "zero-copy memif client",
    "memif-copy": "the same, the client copying too",
    "vhost-user": "testpmd net_null <-> net_vhost | testpmd on "
                  "net_virtio_user",
    "af_packet": "testpmd net_null <-> af_packet/veth | testpmd on "
                 "af_packet/veth (kernel copies: the local stand-in for "
                 "Xen netfront/netback)",
    "netfront": "real Xen: testpmd af_packet <-> bridge <-> netback | "
                "netfront in a DomU (bench/xen)",
    "sriov": "real Xen: testpmd on a VF <-> NIC switch <-> VF in a DomU "
             "(bench/xen)",
}
ALL_PEERS = ("memif-zc", "memif-copy", "vhost-user", "af_packet", "netfront",
             "sriov")
GOAL_RATIO = {"memif-zc": 2.5, "memif-copy": 3.5, "vhost-user": 3.0,
              "af_packet": 50.0}
GOAL_LIMIT_PCT = 60.0
GOAL_DOM0_NS = 30.0
GOAL_P99_US = 5.0


def median_row(system, config, size, chain_len, samples, **extra):
    """A throughput row from the Samples of one configuration: median,
    min and max over its undisturbed runs when it has any (a disturbed run
    measured another process as much as ours), else over all of them."""
    clean = [s for s in samples if not s.disturbed]
    v = [s.mpps for s in clean or samples]
    row = dict(system=system, config=config, size=size, chain_len=chain_len,
               reps=len(samples), disturbed=len(samples) - len(clean))
    if v:
        med = statistics.median(v)
        row.update(mpps_median=round(med, 4), mpps_min=round(min(v), 4),
                   mpps_max=round(max(v), 4),
                   ns_per_pkt=round(1e3 / med, 2) if med else "")
    row.update(extra)
    return row


def write_runs(path, points):
    """runs.csv: every kept run, [(system, config, size, [Sample])]."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["system", "config", "size", "run", "mpps", "disturbed",
                    "cpu_shares"])
        for system, config, size, samples in points:
            for i, s in enumerate(samples, 1):
                w.writerow([system, config, size, i, round(s.mpps, 4),
                            int(s.disturbed), " ".join(
                                "%s=%.2f" % (k, v) for k, v in
                                s.shares.items() if v is not None)])


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in CSV_FIELDS})


def read_csv(path):
    def num(v):
        try:
            return int(v)
        except ValueError:
            try:
                return float(v)
            except ValueError:
                return v
    with open(path, newline="") as f:
        return [{k: num(v) for k, v in r.items()} for r in csv.DictReader(f)]


def merge_runs(rows):
    """One row per configuration: rows of single runs (bench/xen appends
    one per run) become their median, min, max and count."""
    groups = {}
    for r in rows:
        key = (r["system"], r["config"], r["size"], r["chain_len"],
               r.get("load_pct", ""))
        groups.setdefault(key, []).append(r)
    out = []
    for g in groups.values():
        v = [r["mpps_median"] for r in g if r.get("mpps_median", "") != ""]
        if len(g) == 1 or not v:
            out.append(g[0])
            continue
        med = statistics.median(v)
        out.append(dict(g[0], mpps_median=med, mpps_min=min(v),
                        mpps_max=max(v), reps=len(v),
                        ns_per_pkt=round(1e3 / med, 2) if med else ""))
    return out


class Results:
    """Look-ups over the rows."""

    def __init__(self, rows):
        self.rows = merge_runs(rows)
        self.peers = [p for p in ALL_PEERS
                      if any(r["system"] == p for r in self.rows)]

    def get(self, system, config=None, size=64, chain_len=None):
        for r in self.rows:
            if (r["system"] == system and r["size"] == size and
                    (config is None or r["config"] == config) and
                    (chain_len is None or r["chain_len"] == chain_len) and
                    r.get("mpps_median", "") != ""):
                return r
        return None

    def mpps(self, *a, **kw):
        r = self.get(*a, **kw)
        return None if r is None else r["mpps_median"]

    def xnv1(self, size=64):
        return self.mpps("xennetvm", "1 NF", size)

    def latency(self):
        return [r for r in self.rows if r.get("p50_us", "") != "" and
                r["system"] == "latency"]


def _f(x, fmt="%.3f"):
    return "n/a" if x is None or x == "" else fmt % x


def _verdict(ok):
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


def goals(res):
    """[(goal, measured, verdict, how)]."""
    out = []
    x = res.xnv1()
    for peer, want in GOAL_RATIO.items():
        p = res.mpps(peer)
        ratio = x / p if x and p else None
        out.append(("XenNetVM 1-NF >= %gx %s (64 B)" % (want, peer),
                    _f(ratio, "%.2fx"),
                    _verdict(None if ratio is None else ratio >= want),
                    "Mpps %s / %s" % (_f(x), _f(p))))
    lim = res.mpps("limit")
    pct = 100 * x / lim if x and lim else None
    out.append(("XenNetVM 1-NF >= %g %% of the raw ring" % GOAL_LIMIT_PCT,
                _f(pct, "%.0f %%"), _verdict(pct and pct >= GOAL_LIMIT_PCT),
                "Mpps %s / Mdesc/s %s" % (_f(x), _f(lim))))
    d = dom0_ns(res)
    out.append(("Dom0 work <= %g ns/packet" % GOAL_DOM0_NS,
                _f(d["core_only"], "%.1f ns"),
                _verdict(None if d["core_only"] is None else
                         d["core_only"] <= GOAL_DOM0_NS),
                "core-only %s ns - port I/O %s ns (see below)"
                % (_f(d["core_total"], "%.1f"), _f(d["port_io"], "%.1f"))))
    p99 = next((r["p99_us"] for r in res.latency()
                if r["load_pct"] == 50), None)
    out.append(("p99 latency through 1 NF at 50 %% load <= %g us"
                % GOAL_P99_US, _f(p99, "%.1f us"),
                _verdict(None if p99 is None else p99 <= GOAL_P99_US),
                "core rx burst -> forwarder -> core tx burst"))
    return out


def dom0_ns(res):
    """Per-packet CPU time of the core's CPU (ns = 1000 / Mpps when that
    CPU is the bottleneck), and the same less the two net_null ports."""
    def ns(m):
        return 1e3 / m if m else None
    core, nf1, pio = (ns(res.mpps("xennetvm", "core only")),
                      ns(res.xnv1()), ns(res.mpps("port-io")))
    sub = (lambda a: a - pio if a is not None and pio is not None
           else None)
    return dict(core_total=core, nf1_total=nf1, port_io=pio,
                core_only=sub(core), with_nf=sub(nf1))


def markdown(res, meta):
    """results.md: what ran, the tables, the goals."""
    L = ["# XenNetVM benchmarks, %s" % meta["when"], "",
         "Machine: %s. Load average before / after: %s / %s. "
         "Commit %s. %s %s." % (meta["machine"], meta["load_before"],
                                meta["load_after"], meta["commit"],
                                meta["mode"],
                                meta.get("disturbed", "")),
         ""]
    x = res.xnv1()
    lim = res.mpps("limit")
    L += ["## 64 B, one NF", "",
          "| system | path | Mpps median (min..max) | reps | % of limit "
          "| XenNetVM / it |", "|---|---|---|---|---|---|"]
    for sysname in ("limit", "xennetvm", *res.peers):
        r = res.get(sysname, "1 NF" if sysname == "xennetvm" else None)
        if r is None:
            L.append("| %s | %s | not measured | | | |"
                     % (sysname, SYSTEMS[sysname]))
            continue
        m = r["mpps_median"]
        L.append("| %s | %s | %.3f (%.3f..%.3f) | %d%s | %s | %s |" % (
            sysname, SYSTEMS[sysname], m, r["mpps_min"], r["mpps_max"],
            r["reps"], " (%d disturbed%s)" % (
                r["disturbed"], ", not in the median" if r["disturbed"] <
                r["reps"] else ", all") if r.get("disturbed") else "", _f(100 * m / lim if lim else None,
                                          "%.0f %%"),
            _f(x / m if x else None, "%.2fx")))
    L += ["", "## Goals (measured, not tuned to)", "",
          "| goal | measured | verdict | from |", "|---|---|---|---|"]
    L += ["| %s | %s | **%s** | %s |" % g for g in goals(res)]
    L += size_table(res) + chain_table(res) + nf_table(res)
    L += latency_table(res) + dom0_table(res) + workers_table(res)
    return "\n".join(L) + "\n"


def workers_table(res):
    """The core-only path on one lcore and on two ([core] workers = 2)."""
    one = res.mpps("xennetvm", "core only")
    two = res.mpps("xennetvm", "core only, 2 workers")
    if two is None:
        return []
    return ["", "## Several lcores (core only, 64 B)", "",
            "| xnv-core | Mpps | vs 1 worker |", "|---|---|---|",
            "| 1 worker (CPU A) | %s | 1.00x |" % _f(one),
            "| 2 workers (CPUs A and B) | %s | %s |"
            % (_f(two), _f(two / one if one else None, "%.2fx")), "",
            "Each worker polls its own rx queue of net_null0 and sends "
            "on its own tx queue of net_null1 (dom0-core/worker.h)."]


def size_table(res):
    sizes = sorted({r["size"] for r in res.rows
                    if r["system"] in ("xennetvm", *res.peers)})
    L = ["", "## Mpps by packet size (1 NF)", "",
         "| system | " + " | ".join("%d B" % s for s in sizes) + " |",
         "|---|" + "---|" * len(sizes)]
    for sysname in ("xennetvm", *res.peers):
        cells = [_f(res.mpps(sysname, "1 NF" if sysname == "xennetvm"
                             else None, s)) for s in sizes]
        L.append("| %s | %s |" % (sysname, " | ".join(cells)))
    return L


def chain_table(res):
    rows = sorted((r for r in res.rows if r["system"] == "xennetvm" and
                   r["config"].startswith("chain")),
                  key=lambda r: r["chain_len"])
    if not rows:
        return []
    base = rows[0]["mpps_median"] if rows[0].get("mpps_median") else None
    L = ["", "## Chains (64 B; NFs share CPU B, the default --idle-sleep doorbell)", "",
         "| NFs | Mpps median (min..max) | vs 1 NF |", "|---|---|---|"]
    for r in rows:
        m = r.get("mpps_median")
        L.append("| %d | %s (%s..%s) | %s |" % (
            r["chain_len"], _f(m), _f(r.get("mpps_min")),
            _f(r.get("mpps_max")), _f(m / base if m and base else None,
                                       "%.2f")))
    return L


def nf_table(res):
    rows = [r for r in res.rows if r["system"].startswith("nf:")]
    if not rows:
        return []
    L = ["", "## Example NFs (64 B; ratio to the forwarder in the same "
         "position, same run)", "",
         "| NF | position | Mpps | / forwarder | handler alone, ns/packet |",
         "|---|---|---|---|---|"]
    for r in rows:
        # The forwarder's own row in the same position (same source port:
        # the looped UDP pcap); the xennetvm rows run on net_null frames.
        ref = res.mpps("nf:forwarder", r["config"])
        m = r.get("mpps_median")
        h = r.get("handler_ns")
        L.append("| %s | %s | %s | %s | %s |" % (
            r["system"][3:], r["config"], _f(m),
            _f(m / ref if m and ref else None, "%.2f"),
            _f(h, "%.1f")))
    if any(r.get("handler_ns") not in (None, "") for r in rows):
        L += ["", "handler alone: bench/nf_cost.c, the NF's own handler "
              "on the same pcap, no core and no rings, best of 300 rounds "
              "on CPU B: a figure the machine's noise does not move much."]
    return L


UNPACED = "unpaced"	# a latency row's load_pct with net_null0 not paced


def load_label(load):
    """A latency row's load as the tables and the plot say it."""
    return UNPACED if load == UNPACED else "%s %%" % load


def latency_table(res):
    lat = res.latency()
    if not lat:
        return []
    top = res.mpps("latency-max")
    L = ["", "## One-way latency through 1 NF (64 B, us)", "",
         "Measured by xnv-core: rx burst of net_null0 -> forwarder -> tx "
         "burst of net_null1. Loads are %% of what this path carried "
         "unpaced: %s Mpps (median); the unpaced row is the path as its "
         "own bottleneck (what stands queued in front of it)." % _f(top), "",
         "| load | offered Mpps | sent Mpps | p50 | p99 | p99.9 | max | lost |",
         "|---|---|---|---|---|---|---|---|"]
    for r in lat:
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            load_label(r["load_pct"]), "-" if r["load_pct"] == UNPACED
            else _f(r["offered_mpps"]),
            _f(r.get("sent_mpps")),
            _f(r["p50_us"], "%.1f"),
            _f(r["p99_us"], "%.1f"), _f(r["p999_us"], "%.1f"),
            _f(r["max_us"], "%.1f"), r.get("lost", "")))
    return L


def dom0_table(res):
    d = dom0_ns(res)
    lim = res.mpps("limit")
    return ["", "## Dom0 time per packet (CPU A, 64 B)", "",
            "| what | ns/packet |", "|---|---|",
            "| xnv-core, no NF (net_null -> core -> net_null) | %s |"
            % _f(d["core_total"], "%.1f"),
            "| xnv-core with 1 NF (CPU A is the bottleneck) | %s |"
            % _f(d["nf1_total"], "%.1f"),
            "| port I/O alone (testpmd net_null -> net_null) | %s |"
            % _f(d["port_io"], "%.1f"),
            "| **xnv-core's own work, no NF** (first - third) | %s |"
            % _f(d["core_only"], "%.1f"),
            "| xnv-core's own work with 1 NF (second - third) | %s |"
            % _f(d["with_nf"], "%.1f"), "",
            "ring-rt's core thread does no port I/O. Without the port I/O "
            "above, CPU A would carry 1000 / (second - third) = %s Mpps "
            "with 1 NF, %s of the raw ring (for reading the limit ratio; "
            "not a goal)." % (_f(1e3 / d["with_nf"] if d["with_nf"] else
                                 None), _f(100 * 1e3 / d["with_nf"] / lim
                                           if d["with_nf"] and lim
                                           else None, "%.0f %%"))]


def plots(res, outdir):
    """mpps_vs_size.png, mpps_vs_chain.png, latency.png; [] without
    matplotlib (the tables are still written)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for sysname in ("xennetvm", *res.peers):
        pts = sorted((r["size"], r) for r in res.rows
                     if r["system"] == sysname and r.get("mpps_median")
                     and (sysname != "xennetvm" or r["config"] == "1 NF"))
        if pts:
            ax.errorbar([s for s, _ in pts], [r["mpps_median"] for _, r in pts],
                        yerr=[[r["mpps_median"] - r["mpps_min"] for _, r in pts],
                              [r["mpps_max"] - r["mpps_median"] for _, r in pts]],
                        marker="o", capsize=3, label=sysname)
    lim = res.mpps("limit")
    if lim:
        ax.axhline(lim, color="grey", ls="--", label="raw ring limit")
    ax.set(xscale="log", yscale="log", xlabel="packet size (B)",
           ylabel="Mpps (median, min..max)",
           title="1 NF, 2 CPUs: traffic side on A, NF on B")
    ax.set_xticks([64, 128, 256, 512, 1024, 1518])
    ax.set_xticklabels(["64", "128", "256", "512", "1024", "1518"])
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    made.append(_save(fig, outdir / "mpps_vs_size.png", plt))

    ch = sorted((r["chain_len"], r) for r in res.rows
                if r["system"] == "xennetvm" and r.get("mpps_median") and
                r["config"].startswith("chain"))
    if ch:
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.bar([str(n) for n, _ in ch], [r["mpps_median"] for _, r in ch],
               yerr=[[r["mpps_median"] - r["mpps_min"] for _, r in ch],
                     [r["mpps_max"] - r["mpps_median"] for _, r in ch]],
               capsize=4, color="tab:blue")
        ax.set(xlabel="NFs in the chain (all on CPU B, --idle-sleep doorbell)",
               ylabel="Mpps (64 B)", title="XenNetVM chain length")
        made.append(_save(fig, outdir / "mpps_vs_chain.png", plt))

    lat = [r for r in res.latency() if r.get("cdf_us")]
    if lat:		# CDF: fraction of packets at or under a latency
        fig, ax = plt.subplots(figsize=(6, 4))
        for r in lat:
            xs = [float(x) for x in str(r["cdf_us"]).split()]
            ax.step(xs, CDF_AT[:len(xs)], where="post", marker="o", ms=3,
                    label=load_label(r["load_pct"]) if
                    r["load_pct"] == UNPACED else "%s load (%.2f Mpps)" % (
                        load_label(r["load_pct"]), float(r["offered_mpps"])))
        ax.set(xscale="log", xlabel="one-way latency (us)",
               ylabel="fraction of packets", ylim=(0, 1.02),
               title="xnv-core rx -> forwarder -> xnv-core tx (64 B)")
        ax.axvline(GOAL_P99_US, color="grey", ls="--", label="5 us goal")
        ax.legend(fontsize=8)
        made.append(_save(fig, outdir / "latency.png", plt))
    return made


def _save(fig, path, plt):
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path).name


EXPLAIN = """
## What each number is

All runs use the same two CPUs: **CPU A** runs the side that owns the
ports (xnv-core, or the testpmd traffic side), **CPU B** the NF side.
Packets are counted where they end after the round trip, through DPDK
telemetry, over a fixed window after a warm-up; Mpps = packets / window.

- **limit** (ring-rt): one thread on A enqueues 16-byte descriptors on a
  gntshare ring, one on B dequeues them, reads and writes the first 64 B
  of each packet and returns them on a second ring; round trips per
  second. No DPDK, no ports, no validation: the ceiling of the shared
  ring. It only touches 64 B, so it is measured at 64 B only.
- **xennetvm 1 NF**: xnv-core (A, --busy-poll) takes mbufs from net_null0
  (size S), hands each to one xnv-forwarder (B, --busy-poll) through its
  rx ring, validates what comes back on its tx ring, sends it to
  net_null1; counted: net_null1 tx. Its rate does not depend on the
  size: nothing copies or touches the payload (net_null does not write
  it, the forwarder does not read it), while memif, vhost-user and
  af_packet copy every byte at least once.
- **xennetvm chain of N**: the same with N forwarders, all on B, in the
  default `--idle-sleep doorbell` mode (they back off when idle and sleep
  on their doorbells, so they can share B).
- **xennetvm core only**: net_null0 -> xnv-core -> net_null1, no NF: the
  core's per-packet cost with the port work included (A only).
- **xennetvm core only, 2 workers**: the same with `[core] workers = 2`
  on A and B: each lcore polls rx queue w of net_null0 and sends on tx
  queue w of net_null1 (only A's share is checked).
- **port-io**: testpmd io forwarding net_null0 -> net_null1 on A alone:
  what allocating and freeing one mbuf through the two null ports costs.
  Subtracted from the core-only figure it estimates xnv-core's own work
  per packet (the "Dom0 work" goal); ns/packet = 1000 / Mpps, valid
  because A is the busy bottleneck in both.
- **memif-zc / memif-copy**: testpmd (A) forwards net_null0 <-> a memif
  server port; testpmd io forwarding (B) loops its memif client port
  back; zero-copy = the client hands its own buffers (the server side
  still copies: memif zero-copy is client-only). Counted: net_null0 tx.
- **vhost-user**: the same with net_vhost (A) and net_virtio_user (B);
  vhost copies each way.
- **af_packet**: the same with net_af_packet on both ends of a veth pair
  made for the run; the kernel copies each way. The local stand-in for
  Xen netfront/netback (a real Xen host: bench/xen/).
- **latency**: xnv-core with `[core] latency = on` stamps each packet
  with the TSC of its rx burst on net_null0 (paced by `[port in]
  rx_rate` to the load) and, at each tx burst of net_null1, adds the time
  each packet spent in between to a histogram (buckets at most 6.25 %
  wide; percentiles are bucket bounds). The path: steering, the
  forwarder's rx ring, the forwarder (busy-polling on B), its tx ring, the
  core (busy-polling on A). Loads are fractions of what this same setup
  carries unpaced.
- **disturbed**: a run in which a busy-polling thread of ours had less
  than 90 % of its CPU (another process ran there); repeated once. The
  median, min and max are over the undisturbed runs of a configuration
  when it has any, else over all of them; every run is in runs.csv.
"""


def update_readme(path, res, meta, pngs):
    """Replace (or add at the end) the "## Benchmarks" section of the top
    README with the key ratios and the plots of bench/results/latest."""
    x = res.xnv1()
    lines = ["## Benchmarks", "",
             "`make bench` (about 10 min, not part of `make check`) runs "
             "XenNetVM, memif, vhost-user and af_packet/veth on the same two "
             "CPUs; see `bench/README.md`. Latest run (%s, load average "
             "%s before, %s after, on a shared 2-core VM; %s):" % (
                 meta["when"], meta["load_before"], meta["load_after"],
                 meta.get("disturbed", "")), "",
             "| 64 B, 1 NF | Mpps | XenNetVM / it |", "|---|---|---|"]
    for s in ("limit", "xennetvm", *res.peers):
        m = res.mpps(s, "1 NF" if s == "xennetvm" else None)
        lines.append("| %s | %s | %s |" % (s, _f(m), _f(
            x / m if x and m else None, "%.2fx")))
    lines += ["", "| goal | measured | verdict |", "|---|---|---|"]
    lines += ["| %s | %s | %s |" % g[:3] for g in goals(res)]
    lines += [""] + ["![%s](bench/results/latest/%s)" % (p[:-4], p)
                     for p in pngs]
    lines += ["", "Full tables: `bench/results/latest/results.md`.", ""]
    text = Path(path).read_text()
    start = text.find("\n## Benchmarks\n")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + "\n".join(lines)
    else:
        end = text.find("\n## ", start + 1)
        rest = text[end:] if end >= 0 else ""
        text = text[:start + 1] + "\n".join(lines) + rest
    Path(path).write_text(text)
