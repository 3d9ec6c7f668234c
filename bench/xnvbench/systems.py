# SPDX-License-Identifier: BSD-3-Clause
"""The systems compared, each as a Setup of the same shape:

    net_null source -> [traffic side, CPU A] -> NF side [CPU B] -> back to
    the traffic side -> net_null sink, counted there

  xnv         xnv-core (CPU A): net_null0 -> chain of NFs -> net_null1;
              the NFs (xnv-forwarder or any example NF) on CPU B
  memif-zc    testpmd (CPU A): net_null0 <-> net_memif server;
              testpmd io loop (CPU B) on a net_memif zero-copy client
  memif-copy  the same with the client copying too
  vhost-user  testpmd (CPU A): net_null0 <-> net_vhost;
              testpmd io loop (CPU B) on net_virtio_user
  af_packet   testpmd (CPU A): net_null0 <-> net_af_packet on one end of a
              veth pair; testpmd io loop (CPU B) with net_af_packet on the
              other end (the kernel copies each way: the local stand-in
              for Xen netfront/netback)
  port-io     testpmd (CPU A) alone: net_null0 -> net_null1: what the
              two net_null ports cost per packet, for the Dom0 estimate

A Ctx holds what all setups of one bench run share: binaries, CPUs, the
work directory, hugepages or not, the veth pair.
"""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from .measure import Setup, Side, testpmd
from .procs import eal_mem, pinned

# system -> (traffic-side vdev, NF-side vdev); {d}: run dir, {a}/{b}: veth
MEMIF = "net_memif0,socket={d}/memif.sock,socket-abstract=no,role="
PEERS = {
    "memif-zc": (MEMIF + "server", MEMIF + "client,zero-copy=yes"),
    "memif-copy": (MEMIF + "server", MEMIF + "client"),
    "vhost-user": ("net_vhost0,iface={d}/vhost.sock,queues=1",
                   "net_virtio_user0,path={d}/vhost.sock,queues=1"),
    "af_packet": ("net_af_packet0,iface={a},qdisc_bypass=1",
                  "net_af_packet0,iface={b},qdisc_bypass=1"),
}
NEEDS_HUGE = ("memif-zc", "vhost-user")	# share memory by hugepage fd


class Ctx:
    def __init__(self, build, tmp, cpu_a, cpu_b, huge, veth=None):
        self.build = Path(build)
        self.tmp = Path(tmp)
        self.cpu_a, self.cpu_b = cpu_a, cpu_b
        self.huge = huge		# a Hugepages
        self.veth = veth		# a VethPair or None
        self.n = 0

    def new_run(self, label):
        """A fresh directory (sockets, config, logs) and a unique DPDK
        file prefix stem for one run."""
        self.n += 1
        d = self.tmp / ("%03d-%s" % (self.n, label.replace(" ", "_")))
        d.mkdir(parents=True)
        return d, "xnv-bench-%d-%d" % (os.getpid(), self.n)

    def mem(self):
        return eal_mem(self.huge.ensure())

    def bin(self, name):
        return self.build / "bin" / name


def core_config(path, sock, size, services, ports=None, workers=1):
    """xnv-core config: net_null0 (size B) -> services -> net_null1;
    workers: [core] workers (lcores polling the ports)."""
    chain = " -> ".join([*services, "out"])
    ports = ports or [("in", "net_null0,size=%d" % size, chain),
                      ("out", "net_null1", None)]
    lines = ["; written by bench/bench.py", "[core]", "socket = %s" % sock]
    if workers > 1:
        lines.append("workers = %d" % workers)
    for name, dev, ch in ports:
        lines += ["[port %s]" % name, "dev = %s" % dev]
        if ch:
            lines.append("chain = %s" % ch)
    for s in dict.fromkeys(services):
        lines.append("[service %s]" % s)
    Path(path).write_text("\n".join(lines) + "\n")
    return path


def core_side(ctx, d, prefix, cfg, extra=(), both=False):
    """xnv-core on CPU A, busy-polling (it has that CPU to itself); both:
    on A and B (its second worker on B, whose share is not checked)."""
    lcores = "%d,%d" % (ctx.cpu_a, ctx.cpu_b) if both else ctx.cpu_a
    argv = [ctx.bin("xnv-core"), "-l", lcores, *ctx.mem(),
            "--file-prefix", prefix, "--", "--config", cfg,
            "--socket", d / "xnv.sock", "--duration", 900, "--busy-poll",
            *extra]
    return Side("xnv-core", argv, ctx.cpu_a)


def nf_side(ctx, d, i, service, binary, args=(), busy=True, cpu=None,
            lib=()):
    """One NF (CPU B unless told), once the core's socket is there;
    lib: libxnv options, args: the NF's own (after "--")."""
    cpu = ctx.cpu_b if cpu is None else cpu
    argv = [binary, "--service", service, "--name", "%s-%d" % (service, i),
            "--socket", d / "xnv.sock", *lib]
    if busy:
        argv.append("--busy-poll")
    if args:
        argv += ["--", *args]
    return Side("nf%d-%s" % (i, Path(binary).name), pinned(cpu, argv), cpu,
                after=(d / "xnv.sock").exists, busy=busy)


def udp_pcap(path, n_flows=256):
    """64 B UDP/IPv4 frames to 10.0.0.0/8 port 9 (what the example NFs'
    bench.args expect), n_flows source addresses: real packets for the
    per-NF rows (net_null's frames are all zeros, not IP)."""
    from scapy.all import Ether, IP, UDP, Raw, wrpcap
    pkts = [Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") /
            IP(src="192.0.2.%d" % (i % 250 + 1), dst="10.1.%d.%d" %
               (i // 250, i % 250 + 1), ttl=64) /
            UDP(sport=1024 + i, dport=9) / Raw(b"\0" * 18)
            for i in range(n_flows)]
    wrpcap(str(path), pkts)
    return path


def xnv(ctx, size, nfs, label, src=None, workers=1):
    """xnv-core + a chain of NFs: nfs = [(binary, args)], one service
    each.  One NF busy-polls (it has CPU B to itself); several share CPU B
    in the default --idle-sleep doorbell mode (back off when idle).  src: the input port's
    device instead of net_null0 (e.g. a looping pcap).  workers 2: the
    core on CPUs A and B ([core] workers), for the core-only path."""
    d, prefix = ctx.new_run(label)
    services = ["s%d" % (i + 1) for i in range(len(nfs))]
    ports = None
    if src is not None:
        ports = [("in", src, " -> ".join([*services, "out"])),
                 ("out", "net_null1", None)]
    cfg = core_config(d / "bench.ini", d / "xnv.sock", size, services,
                      ports, workers)
    busy = len(nfs) == 1
    sides = [core_side(ctx, d, prefix, cfg, both=workers > 1)]
    sides += [nf_side(ctx, d, i + 1, s, b, a, busy)
              for i, (s, (b, a)) in enumerate(zip(services, nfs))]
    return Setup(sides, prefix, "net_null1", [prefix]), d


def peer(ctx, system, size, label):
    """A testpmd pair: traffic side on CPU A, the NF on CPU B."""
    d, prefix = ctx.new_run(label)
    names = ctx.veth.names if ctx.veth else ("", "")
    tr_dev, nf_dev = (v.format(d=d, a=names[0], b=names[1])
                      for v in PEERS[system])
    mem = ctx.mem()
    t, n = prefix + "-t", prefix + "-n"
    sides = [Side("traffic", **testpmd(t, ctx.cpu_a,
                                       ["net_null0,size=%d" % size, tr_dev],
                                       mem)),
             Side("nf", **testpmd(n, ctx.cpu_b, [nf_dev], mem, loop=True))]
    if system != "af_packet":	# the NF connects to the traffic side's socket
        sock = "memif.sock" if system.startswith("memif") else "vhost.sock"
        sides[1].after = (d / sock).exists
    return Setup(sides, t, "net_null0", [t, n],
                 cross=(n, nf_dev.split(",")[0]), n_ports={t: 2, n: 1}), d


def port_io(ctx, size, label):
    """testpmd alone on CPU A: net_null0 -> net_null1 (which receives
    nothing): one mbuf allocated and freed per packet, nothing else."""
    d, prefix = ctx.new_run(label)
    side = Side("port-io", **testpmd(prefix, ctx.cpu_a,
                                     ["net_null0,size=%d" % size,
                                      "net_null1,no-rx=1"], ctx.mem()))
    return Setup([side], prefix, "net_null1", [prefix],
                 n_ports={prefix: 2}), d


def peer_usable(ctx, system):
    """None, or why this system cannot run on this host now."""
    if system in NEEDS_HUGE and not ctx.huge.ensure():
        return "needs hugepages (shares memory by hugepage fd)"
    if system == "af_packet" and ctx.veth is None:
        return "no veth pair (needs root and iproute2)"
    return None


def example_nfs(repo, build):
    """[(name, binary, args)] for every examples/<name>/bench.args whose
    binary build/bin/xnv-<name> exists; args: its one line, split."""
    out = []
    for f in sorted(Path(repo, "examples").glob("*/bench.args")):
        name = f.parent.name
        binary = Path(build) / "bin" / ("xnv-" + name)
        if binary.exists():
            line = (f.read_text().splitlines() or [""])[0]
            out.append((name, binary, shlex.split(line)))
    return out


NF_COST_RE = re.compile(r"best of \d+ rounds: ([0-9.]+) ns per packet")


def nf_handler_ns(ctx, repo, name, args, pcap, rounds=300):
    """ns per packet of example NF `name`'s handler alone on the pcap's
    packets with its bench args (bench/nf_cost.c, best of `rounds`,
    pinned to CPU B, run from the repo as the NF is), or None: no
    nf-cost-NAME (an NF without a packet handler of nf_main's), or it
    failed (said on stderr)."""
    exe = Path(ctx.build) / "bench" / ("nf-cost-" + name)
    if not exe.exists():
        return None
    r = subprocess.run(["taskset", "-c", str(ctx.cpu_b), str(exe), str(pcap),
                        str(rounds), "--", *args], capture_output=True,
                       text=True, timeout=300, cwd=str(repo))
    m = NF_COST_RE.search(r.stdout)
    if r.returncode != 0 or not m:
        print("  nf-cost-%s failed (%d): %s" % (name, r.returncode, (
            r.stderr or r.stdout).strip()[-300:]), file=sys.stderr)
        return None
    return float(m.group(1))

