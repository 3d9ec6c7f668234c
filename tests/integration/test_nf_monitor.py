# SPDX-License-Identifier: BSD-3-Clause
"""examples/monitor: per-flow packets and bytes equal the true counts of
the input pcap (computed here), every packet passes untouched, the top
flows printed on exit are the largest ones."""
import json
import socket
import struct

import pytest
from scapy.layers.l2 import ARP, Ether

from nfrun import NfSpec, run_bad_file, run_nfs
from traffic import make_traffic

TOP = 5


def true_key(frame):
    """The monitor's flow of a frame (ICMP and others: ports 0), or a
    class for what is not a flow."""
    if len(frame) < 14:
        return "not_ip"
    etype = struct.unpack_from(">H", frame, 12)[0]
    if etype == 0x0800:
        if len(frame) < 34:
            return "malformed"
        af, proto, src, dst, l4 = (socket.AF_INET, frame[23], frame[26:30],
                                   frame[30:34], 14 + (frame[14] & 15) * 4)
    elif etype == 0x86DD:
        af, proto, src, dst, l4 = (socket.AF_INET6, frame[20], frame[22:38],
                                   frame[38:54], 54)
    else:
        return "not_ip"
    sport = dport = 0
    if proto in (6, 17):
        sport, dport = struct.unpack_from(">HH", frame, l4)
    name = {6: "tcp", 17: "udp", 1: "icmp", 58: "icmpv6"}.get(proto, f"ip{proto}")
    return (name, socket.inet_ntop(af, src), sport, socket.inet_ntop(af, dst), dport)


@pytest.fixture(scope="module")
def monitored(xnv_module):
    pkts = make_traffic(3000, seed=11, n_flows=40, v6_flows=10, max_len=600)
    pkts += [bytes(Ether(src="02:00:00:00:00:01", dst="ff:ff:ff:ff:ff:ff") /
                   ARP()), bytes(64),
             bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02",
                         type=0x0800)) + b"\x45" + bytes(9)]
    report = xnv_module.path("report.json")
    run = run_nfs(xnv_module, pkts, [NfSpec("monitor", (
        "--top", TOP, "--report", report))])
    truth = {}
    for p in pkts:
        k = true_key(p)
        pk, by = truth.get(k, (0, 0))
        truth[k] = (pk + 1, by + len(p))
    return pkts, run, json.loads(report.read_text()), truth


def test_monitor_passes_every_packet_untouched(monitored):
    pkts, run, _, _ = monitored
    assert run.core_rc == 0 and run.nf_rcs["monitor"] == 0
    assert run.outs[0] == pkts


def test_monitor_flow_counts_equal_the_pcap(monitored):
    pkts, _, rep, truth = monitored
    got = {(f["proto"], f["src"], f["sport"], f["dst"], f["dport"]):
           (f["packets"], f["bytes"]) for f in rep["flow_list"]}
    want = {k: v for k, v in truth.items() if isinstance(k, tuple)}
    assert len(want) == 40
    assert got == want
    for f in rep["flow_list"]:
        assert 0 < f["first_ns"] <= f["last_ns"]


def test_monitor_totals_equal_the_pcap(monitored):
    pkts, run, rep, truth = monitored
    want = {"packets": len(pkts), "bytes": sum(map(len, pkts)), "flows": 40,
            "not_ip": truth["not_ip"][0], "not_ip_bytes": truth["not_ip"][1],
            "malformed": truth["malformed"][0], "untracked": 0}
    assert {k: rep[k] for k in want} == want
    assert {k: run.counters["monitor"][k] for k in want} == want


def test_monitor_top_flows_are_the_largest(monitored):
    _, run, _, truth = monitored
    flows = sorted(((v[1], v[0], k) for k, v in truth.items()
                    if isinstance(k, tuple)), reverse=True)
    lines = [l for l in run.lines("monitor") if l.split()[0].isdigit()]
    assert len(lines) == TOP
    for rank, (line, (by, pk, k)) in enumerate(zip(lines, flows), 1):
        w = line.split()
        assert int(w[0]) == rank
        assert (w[1], w[2], int(w[3]), w[4], int(w[5])) == k
        assert (int(w[7]), int(w[9])) == (pk, by)


def test_monitor_bad_options(xnv):
    r = run_bad_file(xnv, "monitor", ["--top", "0"])
    assert r.returncode == 2 and "--top '0'" in r.stderr
    r = run_bad_file(xnv, "monitor", ["--bogus"])
    assert r.returncode == 2 and "unknown option" in r.stderr
