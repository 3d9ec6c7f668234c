# SPDX-License-Identifier: BSD-3-Clause
"""The multi-host fabric simulator (`fabric/xnv_fabric/sim.py`): hosts as
network namespaces, each with an Open vSwitch of its own (userspace netdev
datapath), VXLAN between them over a shared underlay (root and OVS;
skipped with the reason otherwise).

On two hosts a and b, with the steering flows a service chain's hop would
use (installed here, not by the simulator): a frame written on a's `xnv0`
with an outer 802.1Q tag 17 leaves a's br-xnv untagged in VXLAN VNI 17
and comes out of b's `xnv0` with the outer tag 17 back (b's rule turns any
VNI below 4096 into that tag) and the inner frame byte-identical: IPv4
and IPv6, inner 802.1Q (QinQ-like), 60 to 1518 bytes.  The kernel takes
that outer tag out of what a packet socket reads (PACKET_AUXDATA has it):
`recv_frame()` puts it back.  VNI 5000 (a's rule for tag 18) reaches b
and is dropped there by the priority=0 rule, which counts exactly those
frames.  A Sim of three hosts: the ports and MTUs as documented, idle
ovs-vswitchd CPU from /proc, and `down()` leaves no namespace, process,
interface or run directory (twice in a row too); an `up()` that fails
half-way (a step failing after OVS started, an underlay MTU the kernel
refuses) says so in one line and leaves nothing either.
"""
import contextlib
import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import REPO, wait_until
from xnv.procs import TIME_SCALE

if str(REPO / "fabric") not in sys.path:
    sys.path.insert(0, str(REPO / "fabric"))
from xnv_fabric import sim as fabsim  # noqa: E402
from xnv_fabric.sim import BRIDGE, Sim, SimError, ovs_available, recv_frame  # noqa: E402

log = logging.getLogger("xnv-it")
pytestmark = pytest.mark.time_limit(90)

SRC, DST = "02:00:00:00:00:01", "02:00:00:00:00:02"
# a: tag 17 -> VNI 17, tag 18 -> VNI 5000 (no rule on b: dropped there)
A_FLOWS = """\
priority=100,in_port=xnv0,dl_vlan=17,actions=pop_vlan,set_field:17->tun_id,output:vx-b
priority=100,in_port=xnv0,dl_vlan=18,actions=pop_vlan,set_field:5000->tun_id,output:vx-b
"""
# b: any VNI < 4096 from a tunnel port -> outer 802.1Q tag, vid = VNI
B_TUNNEL = "priority=90,in_port={port},tun_id=0/0xfffffffffffff000"
B_ACTIONS = ("actions=push_vlan:0x8100,"
             "move:NXM_NX_TUN_ID[0..11]->NXM_OF_VLAN_TCI[0..11],output:xnv0")
A_VLAN = "priority=100,in_port=xnv0,dl_vlan={vid}"


@pytest.fixture(scope="module")
def ovs():
    reason = ovs_available()
    if reason:
        log.info("skipped: %s", reason)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def sim(ovs, tmp_path_factory):
    """Hosts a and b up, the steering flows above installed."""
    s = Sim(("a", "b"), workdir=tmp_path_factory.mktemp("fabric-sim"),
            timeout_scale=TIME_SCALE)
    s.up()
    try:
        a, b = s.hosts["a"], s.hosts["b"]
        a.ofctl("-O", "OpenFlow13", "add-flows", BRIDGE, "-", input=A_FLOWS)
        b_flows = [f"{B_TUNNEL.format(port=f'vx-{p}')},{B_ACTIONS}"
                   for p in s.hosts if p != "b"] + ["priority=0,actions=drop"]
        # push_vlan is OpenFlow 1.1+: add-flows refuses it in 1.0
        b.ofctl("-O", "OpenFlow13", "add-flows", BRIDGE, "-", input="\n".join(b_flows))
        yield s
    finally:
        s.down()


def n_packets(host, match):
    """n_packets of the one flow of br-xnv with exactly this match
    (dump-flows --strict refuses a priority in OVS 3.1: compared here)."""
    want = set(match.replace('"', "").split(","))
    out = host.ofctl("--names", "-O", "OpenFlow13", "dump-flows", BRIDGE).stdout
    counts = [int(re.search(r"n_packets=(\d+)", ln).group(1)) for ln in out.splitlines()
              if " actions=" in ln and set(ln.split(" actions=")[0].split()[-1]
                                          .replace('"', "").split(",")) == want]
    assert len(counts) == 1, f"host {host.name}: {match}: {out}"
    return counts[0]


def tagged(vid, frame):
    """`frame` with an outer 802.1Q tag of `vid` in front."""
    return frame[:12] + b"\x81\x00" + vid.to_bytes(2, "big") + frame[12:]


def inner_frames():
    """The inner frames, each of its exact size and distinct: IPv4/UDP,
    802.1Q vid 5 in front of IPv4/UDP, IPv6/UDP; 60 to 1518 bytes."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Dot1Q, Ether
    from scapy.packet import Raw

    eth = Ether(src=SRC, dst=DST)
    udp4 = IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1000, dport=2000)
    udp6 = IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=1000, dport=2000)
    heads = [eth / udp4, eth / Dot1Q(vlan=5) / udp4, eth / udp6]
    frames = []
    for head in heads:
        for size in (60, 333, 1518):
            n = size - len(head)
            if n >= 0:
                frames.append(bytes(head / Raw(bytes([len(frames)]) * n)))
    assert len(set(frames)) == len(frames)
    return frames


def collect(sock, n, seconds=10):
    """(frame, tci) of the next `n` frames on `sock`, fewer if time runs out."""
    got, deadline = [], time.monotonic() + seconds * TIME_SCALE
    while len(got) < n and time.monotonic() < deadline:
        r = recv_frame(sock, deadline - time.monotonic())
        if r is not None:
            got.append(r)
    return got


def mismatches(got, sent):
    """A line per frame sent and not back as sent, or back and not sent,
    and per kind of frame (its inner EtherType) out of order.  Frames of
    different kinds may pass each other: OVS takes the first packet of each
    new datapath flow through an upcall while the others go on."""
    out = [f"sent, not back: frame {i} ({len(f)} B)"
           for i, f in enumerate(sent) if f not in got]
    out += [f"back, not sent: {len(f)} B {f[:24].hex()}" for f in got if f not in sent]
    for kind in {f[16:18] for f in sent}:
        order = [f for f in got if f[16:18] == kind]
        if order != [f for f in sent if f[16:18] == kind and f in got]:
            out.append(f"frames of inner type 0x{kind.hex()} out of order")
    return out


def test_tagged_frames_cross_intact(sim):
    """Outer tag 17 on a's xnv0 -> VNI 17 -> outer tag 17 on b's xnv0."""
    a, b = sim.hosts["a"], sim.hosts["b"]
    sent = [tagged(17, f) for f in inner_frames()]
    rule_b = B_TUNNEL.format(port="vx-a")
    base_a, base_b = n_packets(a, A_VLAN.format(vid=17)), n_packets(b, rule_b)
    with contextlib.closing(b.packet_socket()) as rx, \
            contextlib.closing(a.packet_socket(rx=False)) as tx:
        for f in sent:
            assert tx.send(f) == len(f)
        got = collect(rx, len(sent))
        extra = recv_frame(rx, 0.3)
    frames = [f for f, _ in got]
    assert not mismatches(frames, sent), mismatches(frames, sent)
    assert extra is None, f"an unexpected frame on b's xnv0: {extra[0][:64].hex()}"
    # the kernel took the outer tag out of the data, the auxdata held it
    assert [tci for _, tci in got] == [17] * len(sent)
    wait_until(lambda: (n_packets(a, A_VLAN.format(vid=17)) - base_a,
                        n_packets(b, rule_b) - base_b) == (len(sent),) * 2,
               10, f"{len(sent)} packets counted by a's tag-17 rule and b's VNI rule")


def test_vni_above_4095_is_dropped_and_counted(sim):
    """VNI 5000 matches no tunnel rule on b: priority=0 drops and counts it."""
    a, b = sim.hosts["a"], sim.hosts["b"]
    sent = [tagged(18, f) for f in inner_frames()[:4]]
    rule_b = B_TUNNEL.format(port="vx-a")
    base = (n_packets(a, A_VLAN.format(vid=18)), n_packets(b, rule_b),
            n_packets(b, "priority=0"))
    with contextlib.closing(b.packet_socket()) as rx, \
            contextlib.closing(a.packet_socket(rx=False)) as tx:
        for f in sent:
            assert tx.send(f) == len(f)
        wait_until(lambda: n_packets(b, "priority=0") - base[2] >= len(sent), 10,
                   f"{len(sent)} drops counted on b")
        extra = recv_frame(rx, 0.3)
    assert extra is None, f"a VNI 5000 frame on b's xnv0: {extra[0][:64].hex()}"
    now = (n_packets(a, A_VLAN.format(vid=18)), n_packets(b, rule_b),
           n_packets(b, "priority=0"))
    assert [n - m for n, m in zip(now, base)] == [len(sent), 0, len(sent)]
    assert "tun_id=0x1388" in b.appctl("dpctl/dump-flows").stdout


def cpu_ticks(pid):
    """utime + stime of every thread of `pid`, in clock ticks (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def leftovers(s, popens):
    """Whatever of Sim `s` is still there (an empty list when nothing)."""
    netns = os.listdir("/run/netns") if os.path.isdir("/run/netns") else []
    out = [f"netns {n}" for n in netns if s.tag in n.split("-")]
    out += [f"pid {p.pid}" for p in popens if p.poll() is None]
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout
    out += [f"link {ln.split()[0]}" for ln in links.splitlines() if f"x{s.tag}" in ln]
    out += [f"dir {h.rundir}" for h in s.hosts.values() if h.rundir.exists()]
    return out


def test_three_hosts_up_and_down(ovs, tmp_path):
    """Ports, MTUs, idle CPU; down() twice leaves nothing."""
    s = Sim(("a", "b", "c"), workdir=tmp_path, timeout_scale=TIME_SCALE)
    t0 = time.monotonic()
    s.up()
    t_up = time.monotonic() - t0
    popens = [p for _, p in s.procs]
    try:
        assert len(popens) == 6 and all(p.poll() is None for p in popens)
        for h in s.hosts.values():
            ports = {p: int(h.vsctl("get", "interface", p, "ofport").stdout)
                     for p in ["xnv0"] + [f"vx-{o}" for o in s.hosts if o != h.name]}
            assert ports == {"xnv0": 1, **{f"vx-{o.name}": 10 + o.index
                                           for o in s.hosts.values() if o is not h}}
            links = h.run("ip", "-o", "link").stdout
            assert re.search(r" xnv0: .* mtu 1504 .*state UNKNOWN", links), links
            assert re.search(rf" {h.veth}@\S+: .* mtu 1600 .*state UP", links), links
        ticks0 = {p.pid: cpu_ticks(p.pid) for p in popens}
        time.sleep(5)
        cpu = {f"{label} ({p.pid})": (cpu_ticks(p.pid) - ticks0[p.pid])
               / os.sysconf("SC_CLK_TCK") / 5 for label, p in s.procs}
        log.info("idle CPU over 5 s (fraction of one CPU): %s",
                 ", ".join(f"{k} {v:.3f}" for k, v in cpu.items()))
        assert all(v < 0.1 for v in cpu.values()), cpu
    finally:
        t0 = time.monotonic()
        s.down()
        t_down = time.monotonic() - t0
    log.info("Sim of 3 hosts: up() %.2f s, down() %.2f s", t_up, t_down)
    s.down()
    assert not leftovers(s, popens), leftovers(s, popens)


@pytest.mark.parametrize("how", ["after-ovs-started", "bridge-mtu"])
def test_failed_up_leaves_nothing(ovs, tmp_path, monkeypatch, how):
    started = []

    def boom(self, h):
        started.extend(p for _, p in self.procs)
        raise SimError(f"host {h.name}: injected failure")

    if how == "after-ovs-started":
        monkeypatch.setattr(fabsim.Sim, "_tunnel_neighbours", boom)
        s, want = Sim(("a", "b"), workdir=tmp_path), "host a: injected failure"
    else:
        s = Sim(("a", "b"), workdir=tmp_path, mtu=65500)
        want = f"ip -n {s.wire_ns} link add {s.wire_br} mtu 65596 type bridge: "
    with pytest.raises(SimError) as e:
        s.up()
    msg = str(e.value)
    assert want in msg and "\n" not in msg, msg
    assert len(started) == (4 if how == "after-ovs-started" else 0)
    assert not s.procs and not leftovers(s, started), leftovers(s, started)
