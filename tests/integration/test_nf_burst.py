# SPDX-License-Identifier: BSD-3-Clause
"""libxnv's burst API (xnv_nf_run_burst(), <xnv/nf.h>): the packets and
verdicts of the per-packet handler, a burst at a time.

xnv-testnf --drop-odd-sport gives each packet a verdict by its content
(dropped when its source port is odd, next step otherwise), so a verdict
written to another packet's slot of the array shows in the output.  One
pcap (IPv4 UDP and IPv6 TCP flows, odd and even source ports interleaved)
goes port in -> t -> out, once with --loop run (xnv_nf_run()) and once
with --loop burst (xnv_nf_run_burst()):
  - out holds exactly the even-port packets of the input, in order, byte
    for byte, both ways;
  - the core counts the NF's drops, the odd-port packets, and no other;
  - the burst handler got bursts of more than one packet, never more than
    XNV_BURST_MAX (32), and every packet in one of them.
"""
import re

import pytest

from harness import nf_env, pcap_chain_config
from harness import testnf_bin as _testnf_bin
from traffic import flow_packets, read_pcap, write_pcap

BURST_MAX = 32      # <xnv/nf.h> XNV_BURST_MAX


def sport(frame):
    """The TCP/UDP source port of an untagged IPv4 / IPv6 frame."""
    l4 = 14 + (20 if frame[12:14] == b"\x08\x00" else 40)
    return int.from_bytes(frame[l4:l4 + 2], "big")


def traffic():
    v4 = flow_packets(40, 60, base=300)                   # UDP, 1324..1363
    v6 = flow_packets(11, 100, proto="tcp", v6=True, base=7)
    out = []
    for i in range(max(len(v4), len(v6))):
        out += [p[i] for p in (v4, v6) if i < len(p)]
    return out


@pytest.mark.parametrize("loop", ["run", "burst"])
def test_burst_verdicts_land_on_their_packets(xnv, loop):
    packets = traffic()
    kept = [p for p in packets if sport(p) % 2 == 0]
    assert 0 < len(kept) < len(packets)
    out_pcap = xnv.path("out.pcap")
    cfg = pcap_chain_config(xnv, write_pcap(xnv.path("in.pcap"), packets),
                            out_pcap, services=("t",), group="g")
    core = xnv.start_core(cfg, idle_exit=500)
    core.wait_ready()
    nf = xnv.start("t-1", [_testnf_bin(), "--service", "t", "--group", "g",
                           "--name", "t-1", "--socket", xnv.socket, "--",
                           "--loop", loop, "--drop-odd-sport"], env=nf_env())
    nf.nf_name = "t-1"
    core.wait_attached(nf)
    assert core.wait(60) == 0, core.log()[-3000:]
    nf.wait(10)
    out = read_pcap(out_pcap)
    assert len(out) == len(kept)
    assert out == kept
    st = core.stats()
    t = next(n for n in st["nfs"] if n["name"] == "t-1")
    assert t["bad"] == 0 and not t["quarantined"], t
    assert t["rx"] == len(packets) and t["tx"] == len(kept), t
    assert t["drop"] == len(packets) - len(kept), t
    assert sum(st["drops"].values()) == 0, st["drops"]
    assert {g["name"]: g["free"] for g in st["groups"]} == {"g": 4096}
    m = re.search(r"bursts (\d+) packets (\d+) largest (\d+)", nf.stderr())
    if loop == "run":
        assert m is None
        return
    assert m, nf.stderr()[-2000:]
    bursts, pkts, largest = map(int, m.groups())
    assert pkts == len(packets)
    assert 1 < largest <= BURST_MAX
    assert bursts < pkts
