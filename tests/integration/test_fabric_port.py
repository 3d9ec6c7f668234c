# SPDX-License-Identifier: BSD-3-Clause
"""A fabric port (`fabric = vlan`, dom0-core/fabric.h) on a real veth
pair (root; skipped without it), the peer playing the local Open vSwitch.

xnv-core: [port in] (pcap) `fwd-a -> fab:18`; [port fab] (af_packet on
end A) `hop.18 = fwd-a -> fab:19`, `hop.20 = fwd-a -> out`; [port out]
(pcap).  It shows: a PORT:HOP step sends each frame of every kind
(802.1Q, QinQ, 802.1ad, IPv6, ARP, LLC/SNAP) out of the fabric port
with one outer 802.1Q tag, vid = hop, pushed in front and the frame
otherwise byte-identical; a frame arriving with hop 18 has its tag taken
off and resumes at hop 18's chain (back out tagged 19); one with hop 20
leaves by [port out] exactly as it was inside the tag; frames with no
tag, a hop this host does not have (99) or 4095 are dropped and counted
as `fabric_hop`, never steered; `/xnv/fabric` counts each hop's rx and
tx (`xnv-ctl fabric` too); `xnv-ctl reload` changes the hops live (one removed: its frames now
dropped; one added: taken)."""
import re

import pytest

from harness import CTL_BIN, ctl, read_pcap, wait_until, write_config, write_pcap
from test_af_packet import frame_kinds, marker
from vethpair import Peer, round_trip, veth  # noqa: F401 (veth: a fixture)


def tagged(vid, frame):
    """`frame` with an outer 802.1Q tag of `vid` pushed in front."""
    return frame[:12] + b"\x81\x00" + vid.to_bytes(2, "big") + frame[12:]


def inner_frames():
    """Every kind of frame of the af_packet test, small enough that one
    more tag still fits the veth's MTU of 1504."""
    return [f for fs in frame_kinds().values() for f in fs if len(f) <= 1518]


def fabric_config(xnv, veth, hops, pcap_in):
    return write_config(xnv.path("fab.ini"), [
        ("group g", {"pool_bufs": 4096}),
        ("port fab", {"dev": f"net_af_packet0,iface={veth.a}", "group": "g",
                      "fabric": "vlan", **hops}),
        ("port in", {"dev": f"net_pcap0,rx_pcap={pcap_in}", "group": "g",
                     "chain": "fwd-a -> fab:18"}),
        ("port out", {"dev": f"net_pcap1,tx_pcap={xnv.path('out.pcap')}",
                      "group": "g"}),
        ("service fwd-a", {}),
    ])


HOPS = {"hop.18": "fwd-a -> fab:19", "hop.20": "fwd-a -> out"}


@pytest.fixture
def fabric(xnv, veth):
    """(core, peer, frames sent by [port in]): the core up, fwd-a attached,
    the peer listening on end B before [port in] sends anything."""
    veth.mtu(1504)
    frames = inner_frames()
    pcap_in = xnv.path("in.pcap")
    write_pcap(pcap_in, frames)
    peer = Peer(veth.b)
    core = xnv.start_core(fabric_config(xnv, veth, HOPS, pcap_in))
    core.wait_ready()
    core.wait_attached(xnv.start_nf("fwd-a", "g", "fwd-a-1"))
    core.wait_output(r"port fab: rx started \(a fabric port\)", 10)
    yield core, peer, frames
    peer.close()


def test_hop_step_pushes_one_tag_and_nothing_else(fabric):
    core, peer, frames = fabric
    back = peer.collect(len(frames))
    assert back == [tagged(18, f) for f in frames]
    hops = ctl(core, "/xnv/fabric")
    assert hops["18"] == {"port": "fab", "chain": ["fwd-a", "fab:19"],
                          "rx": 0, "tx": len(frames)}, hops


def test_arrivals_resume_at_their_hop(xnv, fabric):
    core, peer, frames = fabric
    peer.collect(len(frames))          # what [port in] sent, tagged 18
    peer.got.clear()
    peer.send([tagged(18, f) for f in frames])
    assert peer.collect(len(frames)) == [tagged(19, f) for f in frames]
    peer.send([tagged(20, f) for f in frames] + [tagged(20, marker())])
    wait_until(lambda: ctl(core, "/xnv/port/info", 2)["tx"] ==
               len(frames) + 1, 30, "hop 20's frames out of [port out]",
               procs=[core])
    hops = ctl(core, "/xnv/fabric")
    assert (hops["18"]["rx"], hops["19"]["tx"]) == (len(frames),) * 2, hops
    assert hops["20"]["rx"] == len(frames) + 1, hops
    assert hops["19"]["port"] == "" and hops["19"]["chain"] == [], hops
    rows = xnv.run([CTL_BIN, "--socket", xnv.socket, "fabric"]).stdout
    n = len(frames)
    assert re.search(rf"^ *18 +fab +{n} +{n} +fwd-a -> fab:19$", rows, re.M), rows
    assert re.search(rf"^ *19 +- +0 +{n} +-$", rows, re.M), rows
    core.stop()
    assert read_pcap(xnv.path("out.pcap")) == frames + [marker()]


def test_frames_without_a_hop_here_are_dropped_and_counted(fabric):
    core, peer, frames = fabric
    peer.collect(len(frames))
    peer.got.clear()
    f = frames[0]
    bad = [f, tagged(99, f), tagged(4095, f), tagged(0, f)]
    peer.send(bad + [tagged(20, marker())])
    wait_until(lambda: ctl(core, "/xnv/port/info", 2)["tx"] == 1, 30,
               "the marker out of [port out]", procs=[core])
    assert ctl(core, "/xnv/stats")["drop_fabric_hop"] == len(bad)
    assert "99" not in ctl(core, "/xnv/fabric")


def test_reload_changes_hops_live(xnv, fabric, veth):
    core, peer, frames = fabric
    peer.collect(len(frames))
    peer.got.clear()
    cfg = fabric_config(xnv, veth, {"hop.21": "fwd-a -> fab:19",
                                    "hop.20": "fwd-a -> out"},
                        xnv.path("in.pcap"))
    r = ctl(core, "/xnv/reload")
    assert r["path"] == str(cfg), r
    hops = ctl(core, "/xnv/fabric")
    assert hops["21"]["chain"] == ["fwd-a", "fab:19"], hops
    assert hops["18"]["chain"] == [], hops       # gone; counters kept
    f = frames[0]
    peer.send([tagged(18, f), tagged(21, f)])
    assert peer.collect(1) == [tagged(19, f)]
    wait_until(lambda: ctl(core, "/xnv/stats")["drop_fabric_hop"] == 1,
               30, "hop 18 dropped as fabric_hop", procs=[core])
    assert re.search(r"config reloaded", core.log())


def test_hops_beyond_one_reply_are_counted_not_cut(xnv):
    """256 hops (the most a config has): a telemetry reply holds 255, the
    last one is counted under "more" and xnv-ctl says so."""
    hops = {f"hop.{h}": "drop" for h in range(1, 257)}
    cfg = write_config(xnv.path("many.ini"), [
        ("port in", {"dev": "net_null0,no-rx=1", "chain": "fab:1"}),
        ("port fab", {"dev": "net_null1,no-rx=1", "fabric": "vlan", **hops}),
    ])
    core = xnv.start_core(cfg)
    core.wait_ready()
    r = ctl(core, "/xnv/fabric")
    assert r.pop("more") == 1 and len(r) == 255, r
    assert set(r) == {str(h) for h in range(1, 256)}
    rows = xnv.run([CTL_BIN, "--socket", xnv.socket, "fabric"]).stdout
    assert "... and 1 more hops" in rows, rows



def test_fabric_port_on_two_lcores(xnv, veth):
    """[core] workers = 2, the fabric port an af_packet port with two
    sockets (the kernel spreads flows over them by hash): each lcore takes
    the hop tags off what its socket took and resolves it itself (nothing
    steered to the main lcore).  Frames of 32 flows tagged 18 come back
    tagged 19, each flow in order; a third tagged 99 (no such hop) are
    dropped as fabric_hop; /xnv/fabric adds up both lcores' counts."""
    from test_workers import worker_line
    veth.mtu(1504)
    cfg = write_config(xnv.path("fab2.ini"), [
        ("core", {"workers": 2}),
        ("group g", {"pool_bufs": 4096}),
        ("port fab", {"dev": f"net_af_packet0,iface={veth.a},qpairs=2",
                      "group": "g", "fabric": "vlan", "hop.18": "fab:19"}),
    ])
    core = xnv.start_core(cfg, eal=("-l", "0,1"))
    core.wait_ready()
    core.wait_output(r"port fab: rx started \(a fabric port\)", 10)
    inner = [f for f in inner_frames() if f[12:14] == b"\x08\x00"][:1]
    assert inner, "an IPv4 frame of the af_packet test"
    frames = []
    for i in range(20):
        for fl in range(32):
            f = bytearray(inner[0])
            f[30:34] = bytes([10, 9, fl, 1])        # the flow: its IPv4 dst
            f[-4:] = i.to_bytes(4, "big")           # its sequence number
            frames.append((fl, bytes(f)))
    sent = [tagged(99 if fl % 3 == 0 else 18, f) for fl, f in frames]
    want = [tagged(19, f) for fl, f in frames if fl % 3 != 0]
    round_trip(veth.b, sent, want, lambda f: f[34:38])  # dst, past the tag
    hops = ctl(core, "/xnv/fabric")
    assert (hops["18"]["rx"], hops["19"]["tx"]) == (len(want),) * 2, hops
    assert ctl(core, "/xnv/stats")["drop_fabric_hop"] == len(sent) - len(want)
    core.stop()
    sent_w1, steered = worker_line(core.log())
    assert sent_w1 > 0 and steered == 0, (sent_w1, steered)
