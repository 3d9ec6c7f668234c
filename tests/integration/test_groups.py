# SPDX-License-Identifier: BSD-3-Clause
"""Trust groups on one chain: a packet handed to an NF of another group is
copied into that group's pool (counted: group copies_to / copies_in);
within a group it is never copied.  The chain is the operator's: it
crosses groups without any may_send_to (test_send_policy.py has NFs'
own verdicts).

  cross: port in (group A) -> fwd-a (NF in A) -> fwd-b (NF in B) -> port out (B)
  same:  the same chain with both NFs and both ports in group A

NF-originated packets (a generator's, sent by its own verdict to a sink
of another group, which A's may_send_to allows) are copied the same way."""
import json

import pytest

from harness import BUILD, FWD_BIN, write_config
from traffic import first_difference, make_traffic, read_pcap, write_pcap

N_PACKETS = 3000
SEED = 0x67727073
POOL_BUFS = 4096           # > the NFs' rings (2 x 1024): no rx_nombuf


def groups_run(env, name, nf_groups, out_group):
    """pcap -> fwd-a -> fwd-b -> pcap, the NFs in nf_groups; the core stops
    by itself once the pcap is done (--idle-exit)."""
    pkts = make_traffic(N_PACKETS, SEED, n_flows=16)
    in_pcap = write_pcap(env.path(f"{name}-in.pcap"), pkts)
    out_pcap = env.path(f"{name}-out.pcap")
    sock = env.sockdir / f"{name}.sock"
    cfg = write_config(env.path(f"{name}.ini"), [
        ("core", {"socket": sock}),
        ("group A", {"pool_bufs": POOL_BUFS}),
        ("group B", {"pool_bufs": POOL_BUFS}),
        ("port in", {"dev": f"net_pcap0,rx_pcap={in_pcap}", "group": "A",
                     "chain": "fwd-a -> fwd-b -> out"}),
        ("port out", {"dev": f"net_pcap1,tx_pcap={out_pcap}", "group": out_group}),
        ("service fwd-a", {}),
        ("service fwd-b", {}),
    ])
    core = env.start_core(cfg, socket=sock, idle_exit=500, name=name)
    core.wait_ready()
    nfs = []
    for service, group in zip(("fwd-a", "fwd-b"), nf_groups):
        nf = env.start_nf(service, group, f"{name}-{service}", socket=sock,
                          binary=FWD_BIN)
        core.wait_attached(nf)
        nfs.append(nf)
    rc = core.wait(60)
    return dict(core=core, rc=rc, nf_rcs=[nf.wait(10) for nf in nfs],
                in_=pkts, out=read_pcap(out_pcap), stats=core.stats())


def groups(stats):
    return {g["name"]: g for g in stats["groups"]}


@pytest.fixture(scope="module")
def cross(xnv_module):
    return groups_run(xnv_module, "cross", ("A", "B"), "B")


@pytest.fixture(scope="module")
def same(xnv_module):
    return groups_run(xnv_module, "same", ("A", "A"), "A")


@pytest.mark.parametrize("run", ["cross", "same"])
def test_packets_intact(request, run):
    r = request.getfixturevalue(run)
    assert r["rc"] == 0, r["core"].log()[-3000:]
    assert r["nf_rcs"] == [0, 0]
    port_in = r["stats"]["ports"][0]
    assert port_in["rx"] == N_PACKETS, port_in
    diff = first_difference(r["in_"], r["out"])
    assert diff is None, diff
    assert all(v == 0 for v in r["stats"]["drops"].values()), r["stats"]["drops"]


def test_cross_group_nfs_where_configured(cross):
    nfs = {n["name"]: n for n in cross["stats"]["nfs"]}
    assert nfs["cross-fwd-a"]["group"] == "A" and nfs["cross-fwd-b"]["group"] == "B"
    assert nfs["cross-fwd-b"]["rx"] == N_PACKETS


def test_cross_group_each_packet_copied_once(cross):
    """A -> B: every packet copied once, into B; nothing else copied."""
    g = groups(cross["stats"])
    assert g["A"]["copies_to"] == {"A": 0, "B": N_PACKETS}, g
    assert g["B"]["copies_to"] == {"A": 0, "B": 0}, g
    assert g["B"]["copies_in"] == N_PACKETS and g["A"]["copies_in"] == 0, g


def test_cross_group_pools_home(cross):
    for g in groups(cross["stats"]).values():
        assert g["free"] == g["pool_bufs"] == POOL_BUFS, g


def test_same_group_never_copied(same):
    g = groups(same["stats"])
    for name in ("A", "B"):
        assert g[name]["copies_in"] == 0, g
        assert set(g[name]["copies_to"].values()) == {0}, g
        assert g[name]["free"] == g[name]["pool_bufs"], g


def test_nf_originated_packets_cross_groups(xnv):
    """A generator in group A sends to a sink in group B (its own verdict:
    allowed by A's may_send_to): every packet is copied into B's pool once
    (counted), arrives in sequence, and both pools are full afterwards."""
    n = 2000
    cfg = write_config(xnv.path("orig.ini"), [
        ("group A", {"pool_bufs": 1024, "may_send_to": "B"}),
        ("group B", {"pool_bufs": 1024}),
        ("port null", {"dev": "net_null0", "group": "A"}),
        ("service gen", {"id": 1}), ("service sink", {"id": 2}),
    ])
    core = xnv.start_core(cfg)
    core.wait_ready()
    report = xnv.path("sink.json")
    sink = xnv.start_nf("sink", "B", "sink", binary=BUILD / "bin" / "xnv-sink",
                        extra=("--", "--expect", n, "--report", report))
    core.wait_attached(sink)
    gen = xnv.start_nf("gen", "A", "gen", binary=BUILD / "bin" / "xnv-generator",
                       extra=("--alloc=128", "--", "--count", n,
                              "--to-service", 2))
    assert gen.wait(60) == 0, gen.stderr()
    assert sink.wait(60) == 0, sink.stderr()
    core.stop()
    r = json.loads(report.read_text())
    assert (r["packets"], r["lost"], r["reordered"], r["duplicated"]) == \
        (n, 0, 0, 0)
    g = groups(core.stats())
    assert g["A"]["copies_to"]["B"] == n and g["B"]["copies_in"] == n
    assert g["A"]["free"] == g["A"]["pool_bufs"]
    assert g["B"]["free"] == g["B"]["pool_bufs"]
