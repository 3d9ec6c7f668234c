#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""make demo-fabric: a 3-NF chain placed across 2 hosts, simulated on this
machine (fabric/README.md): hosts a and b are network namespaces, each
with its own Open vSwitch (userspace datapath) and xnv-core, joined by
VXLAN.  Chain web: pcap in on a -> fw (xnv-firewall, a; denies ICMP) ->
mon (xnv-monitor, b) -> fwd (xnv-forwarder, a) -> pcap out on a.

Placed and programmed by `xnv-fabric apply` from one topology file;
prints the per-host, per-hop table; ends by itself and leaves nothing
behind (namespaces, bridges, processes: stopped by PID).  Root.

usage: demo_fabric.py [--build DIR] [--count N] [--rate PPS] [--keep DIR]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TOP / "fabric"), str(TOP / "dom0-core" / "python"),
                str(TOP / "scripts")]

from xnv.procs import Proc, stop_all, wait_until  # noqa: E402
from xnv_fabric.sim import Sim, SimError, ovs_available  # noqa: E402
from xnv_fabric.simdeploy import Deployment  # noqa: E402

PLACEMENT = {"fw": "a", "mon": "b", "fwd": "a"}
CHAIN = {"web": ("a:in", ["fw", "mon", "fwd"], "a:out")}
NFS = {"fw": ("xnv-firewall", ["--", "--default", "allow", "--non-ip", "allow",
                               "--rules", "{dir}/fw.rules"]),
       "mon": ("xnv-monitor", ["--", "--top", "3"]),
       "fwd": ("xnv-forwarder", [])}


def args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(TOP / "build"), help="build directory (build)")
    ap.add_argument("--count", type=int, default=2000, help="packets (2000)")
    ap.add_argument("--rate", type=int, default=5000, help="packets/s into the chain (5000)")
    ap.add_argument("--keep", metavar="DIR", help="keep configs, logs and pcaps in DIR")
    return ap.parse_args()


def read_pcap(path):
    from scapy.utils import rdpcap
    return [bytes(p) for p in rdpcap(str(path))]


def run(d, work, count, rate):
    from gen_pcap import make_packets
    from scapy.utils import wrpcap
    pin, pout = work / "in.pcap", work / "out.pcap"
    wrpcap(str(pin), make_packets(count, 32, 1))
    (work / "fw.rules").write_text("deny proto icmp\n")
    d.ports = {"a": {"in": {"dev": f"net_pcap0,rx_pcap={pin}", "rx_rate": rate},
                     "out": f"net_pcap1,tx_pcap={pout}"}}
    d.write_topology()
    r = d.fabric("apply", d.topo)
    print(r.stdout, end="")
    if r.returncode != 0:
        raise SystemExit(f"demo-fabric: xnv-fabric apply failed: {r.stderr.strip()}")
    for core in d.start_cores().values():
        core.wait_output(r"NFs attach on ", 30)
    for s in ("mon", "fwd", "fw"):          # fw last: its port starts with it
        binary, extra = NFS[s]
        h = PLACEMENT[s]
        d.start_nf(s, h, binary, [x.format(dir=work) for x in extra])
        d.cores[h].wait_output(rf"NF {s}-{h} \(pid \d+\) attached", 30)
    t0 = time.monotonic()
    wait_until(lambda: ctl_port(d, "a", "in")["rx"] == count, 60 + 2 * count / rate,
               "every packet into the chain", procs=list(d.cores.values()))
    time.sleep(1.0)                         # the last ones home; OVS counters folded
    return pin, pout, time.monotonic() - t0


def is_icmp(f):
    """ICMP over untagged IPv4 or IPv6 (what gen_pcap.py writes)."""
    return (f[12:14] == b"\x08\x00" and f[23] == 1) or \
        (f[12:14] == b"\x86\xdd" and f[20] == 58)


def ctl_json(d, host, *cmd):
    import json
    r = subprocess.run([*d.ctl(host), "--json", *cmd], capture_output=True, text=True,
                       timeout=30)
    if r.returncode != 0:
        raise SystemExit(f"demo-fabric: xnv-ctl on {host}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def ctl_port(d, host, name):
    return next(p for p in ctl_json(d, host, "ports") if p["name"] == name)


def report(d, pin, pout, secs):
    print("\nper host and hop (xnv-ctl fabric on each host):")
    print(f"  {'HOST':5}{'HOP':>5}  {'RX':>6}{'TX':>6}  CHAIN HERE")
    hops = {h: ctl_json(d, h, "fabric") for h in d.sim.hosts}
    for h, hs in hops.items():
        for hop, x in sorted(hs.items(), key=lambda kv: int(kv[0])):
            chain = " -> ".join(x["chain"]) or "(sent to another host)"
            print(f"  {h:5}{hop:>5}  {x['rx']:>6}{x['tx']:>6}  {chain}")
    # tagged by one core, never received by the other: lost between them
    net = sum(x["tx"] - hops[o].get(k, {}).get("rx", 0) for h, hs in hops.items()
              for o in hops if o != h for k, x in hs.items())
    print("\nNFs:")
    for h in d.sim.hosts:
        for nf in ctl_json(d, h, "nfs"):
            print(f"  {h:5}{nf['name']:8} rx {nf['rx']:>6}  tx {nf['tx']:>6}  "
                  f"dropped {nf['drop']}")
    st = d.fabric("status", d.topo)
    print("\nxnv-fabric status:\n" + st.stdout)
    d.stop()
    sent, got = read_pcap(pin), read_pcap(pout)
    passed = [f for f in sent if not is_icmp(f)]
    icmp = len(sent) - len(passed)
    same = set(got) <= set(passed)
    print(f"XenNetVM fabric demo: {len(sent)} packets in on host a, fw (a) -> mon (b) -> "
          f"fwd (a), {len(got)} out on host a in {secs:.1f} s; the firewall denied "
          f"{icmp} ICMP; lost between the hosts: {net}; the rest byte-identical: "
          f"{'yes' if same else 'NO'}")
    if net:
        print("demo-fabric: the simulated hosts' Open vSwitch did not keep up (a busy "
              "machine?): try a lower --rate")
    return 0 if same and len(got) == len(passed) - net else 1


def main():
    a = args()
    if os.geteuid() != 0:
        raise SystemExit("demo-fabric: needs root (network namespaces, Open vSwitch)")
    why = ovs_available()
    if why:
        raise SystemExit(f"demo-fabric: {why} (make deps installs openvswitch-switch)")
    work = Path(a.keep or tempfile.mkdtemp(prefix="xnv-fabric-demo-"))
    work.mkdir(parents=True, exist_ok=True)
    procs = []

    def start(name, argv):
        p = Proc(name, argv, work / f"{name}.out", work / f"{name}.err")
        procs.append(p)
        return p
    sim = Sim(("a", "b"), workdir=work / "sim")
    d = Deployment(sim, a.build, work / "f", start, {}, CHAIN, PLACEMENT)
    d.stop = lambda: stop_all(procs)
    try:
        sim.up()
        rc = report(d, *run(d, work, a.count, a.rate))
    except SimError as e:
        raise SystemExit(f"demo-fabric: {e}")
    finally:
        stop_all(procs)
        sim.down()
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("demo-fabric: namespaces, bridges and processes removed"
          + (f"; configs and logs kept in {work}" if a.keep else ""))
    return rc


if __name__ == "__main__":
    sys.exit(main())
