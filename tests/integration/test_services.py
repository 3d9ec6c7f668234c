# SPDX-License-Identifier: BSD-3-Clause
"""Replicas of a service (dom0-core/service.c): flows hash to buckets owned
by instance slots (rendezvous), a replica's flows stay on it, spill to the
least busy replica above [core] spill_threshold, a restarted replica takes
its slot and its flows back, NFs come and go under traffic.

The replicas are xnv-testnf NFs (tests/tools/xnv-testnf.c): each writes
the flows it saw (--flows), on exit or on SIGUSR1.  Where the replicas must
all be there before the first packet, the port starts with no chain (rx
not polled) and gets one with /xnv/chain/set once they have attached."""
import collections
import signal
import time

import pytest

from harness import (Telemetry, dump_flows, nf_infos, read_flows, start_named_core,
                     start_testnf, wait_until, write_config)
from traffic import first_difference, flow_packets, flow_str, read_pcap, write_pcap

SERVICE_ID = 1          # "rep": the first service declared


def replica_config(env, name, in_dev, out_dev, chain=None, spill=100,
                   ring_size=1024, pool_bufs=8192, rx_start=None,
                   services=("rep",), **core):
    """port in -> [chain] ; port out ; services.  Each scenario has its own
    socket (env.sockdir/NAME.sock), so one that failed half-way leaves no
    core in the way of the next."""
    port_in = {"dev": in_dev, "group": "g"}
    if chain:
        port_in["chain"] = chain
    if rx_start:
        port_in["rx_start"] = rx_start
    return write_config(env.path(f"{name}.ini"), [
        ("core", {"socket": env.sockdir / f"{name}.sock", "ring_size": ring_size,
                  "spill_threshold": spill, **core}),
        ("group g", {"pool_bufs": pool_bufs}),
        ("port in", port_in),
        ("port out", {"dev": out_dev, "group": "g"}),
        *[(f"service {s}", {}) for s in services],
    ])


def start_replicas(env, core, n, service="rep", opts=None):
    """n xnv-testnf replicas, attached one after the other (so replica i
    takes instance slot i); opts: {i: start_testnf keywords}."""
    reps = []
    for i in range(n):
        nf = start_testnf(env, service, "g", f"{service}-{i}",
                          socket=core.socket, **(opts or {}).get(i, {}))
        core.wait_attached(nf)
        reps.append(nf)
    return reps


def port_info(t, idx):
    return t("/xnv/port/info", idx)


def wait_out_tx(t, n, timeout):
    return wait_until(lambda: port_info(t, 1)["tx"] >= n, timeout,
                      f"{n} packets out of port out")


def stop_all(core, nfs, timeout=10):
    """SIGTERM to the core; its NFs exit by themselves (status 0) and write
    their flows files."""
    core.signal(signal.SIGTERM)
    rc = core.wait(timeout)
    return rc, [nf.wait(timeout) for nf in nfs]


def pcap_replicas_run(env, name, packets, n_reps, spill, ring_size=1024,
                      burst=None, rep_opts=None, timeout=60):
    """port in (pcap, no chain) ; n replicas attach ; chain in: rep -> out ;
    every packet out ; service info ; SIGTERM."""
    in_pcap = write_pcap(env.path(f"{name}-in.pcap"), packets)
    out_pcap = env.path(f"{name}-out.pcap")
    extra = {"burst": burst} if burst else {}
    cfg = replica_config(env, name, f"net_pcap0,rx_pcap={in_pcap}",
                         f"net_pcap1,tx_pcap={out_pcap}", spill=spill,
                         ring_size=ring_size, **extra)
    core = start_named_core(env, cfg, name)
    reps = start_replicas(env, core, n_reps, opts=rep_opts)
    with Telemetry(core) as t:
        assert port_info(t, 0)["rx"] == 0, "rx must wait for the chain"
        chain = t("/xnv/chain/set", "in rep->out")
        t0 = time.monotonic()
        wait_out_tx(t, len(packets), timeout)
        took = time.monotonic() - t0
        svc = t("/xnv/service/info", SERVICE_ID)
        nfs = nf_infos(t)
    rc, nf_rcs = stop_all(core, reps)
    return dict(core=core, rc=rc, reps=reps, nf_rcs=nf_rcs, chain=chain,
                svc=svc, nfs=nfs, took=took, stats=core.stats(), in_=packets,
                out=read_pcap(out_pcap),
                flows={nf.nf_name: read_flows(nf.flows_path) for nf in reps})


def ports(stats):
    return {p["name"]: p for p in stats["ports"]}


# --------------------------------------------------------------------------
# affinity: 1000 UDP flows over 3 replicas, no spill

N_FLOWS, PER_FLOW, N_REPS = 1000, 5, 3


@pytest.fixture(scope="module")
def affinity(xnv_module):
    pkts = flow_packets(N_FLOWS, PER_FLOW)
    return pcap_replicas_run(xnv_module, "affinity", pkts, N_REPS, spill=100)


def test_affinity_traffic_as_intended(affinity):
    assert affinity["chain"] == {"port": "in", "chain": ["rep", "out"]}
    flows = collections.Counter(flow_str(p) for p in affinity["in_"])
    assert len(flows) == N_FLOWS and set(flows.values()) == {PER_FLOW}
    assert [n["instance"] for n in affinity["nfs"].values()] == [0, 1, 2]


def test_affinity_each_flow_on_exactly_one_replica(affinity):
    seen = collections.defaultdict(list)
    for name, flows in affinity["flows"].items():
        for f, n in flows.items():
            seen[f].append((name, n))
    expected = {flow_str(p) for p in affinity["in_"]}
    assert set(seen) == expected
    split = {f: v for f, v in seen.items() if len(v) != 1}
    assert not split, f"{len(split)} flows on more than one replica, e.g. " \
                      f"{list(split.items())[:3]}"
    assert all(v[0][1] == PER_FLOW for v in seen.values())


def test_affinity_spread_within_20_percent(affinity):
    even = N_FLOWS / N_REPS
    per = {name: len(f) for name, f in affinity["flows"].items()}
    assert sum(per.values()) == N_FLOWS
    for name, n in per.items():
        assert abs(n - even) <= 0.2 * even, f"{name}: {n} flows; all: {per}"


def test_affinity_every_packet_out(affinity):
    st = affinity["stats"]
    assert affinity["rc"] == 0 and affinity["nf_rcs"] == [0] * N_REPS
    assert ports(st)["in"]["rx"] == ports(st)["out"]["tx"] == len(affinity["in_"])
    assert sorted(affinity["out"]) == sorted(affinity["in_"])
    assert all(v == 0 for v in st["drops"].values()), st["drops"]
    assert st["groups"][0]["free"] == st["groups"][0]["pool_bufs"]


def test_affinity_no_spill(affinity):
    svc = affinity["svc"]
    assert svc["name"] == "rep" and len(svc["instances"]) == N_REPS
    assert svc["picks_spill"] == 0, svc
    assert svc["picks_affinity"] >= len(affinity["in_"]), svc
    assert svc["no_instance"] == 0


def test_affinity_per_flow_order_kept(affinity):
    def by_flow(pkts):
        d = collections.defaultdict(list)
        for p in pkts:
            d[flow_str(p)].append(p)
        return d
    fin, fout = by_flow(affinity["in_"]), by_flow(affinity["out"])
    bad = [f for f in fin if first_difference(fin[f], fout[f])]
    assert not bad, f"{len(bad)} flows reordered, e.g. {bad[:3]}"


# --------------------------------------------------------------------------
# every replica full: packets wait (backpressure), nothing is lost, and
# each packet is one pick

@pytest.fixture(scope="module")
def full(xnv_module):
    pkts = flow_packets(30, 10, base=3000)
    slow = {"delay_us": 500}
    return pcap_replicas_run(xnv_module, "full", pkts, 2, spill=50, ring_size=64,
                             burst=32, rep_opts={0: slow, 1: slow})


def test_full_replicas_lose_nothing(full):
    st = full["stats"]
    assert ports(st)["out"]["tx"] == len(full["in_"])
    assert all(v == 0 for v in st["drops"].values()), st["drops"]
    assert sorted(full["out"]) == sorted(full["in_"])


def test_full_each_packet_picked_once(full):
    svc = full["svc"]
    picked = sum(n["rx"] for n in full["nfs"].values())
    assert picked == len(full["in_"])
    assert svc["picks_affinity"] + svc["picks_spill"] == picked, svc


# --------------------------------------------------------------------------
# spill: one slow replica, small rings, threshold 50 %

SPILL_FLOWS, SPILL_PER_FLOW, SLOW_US = 200, 20, 2000


@pytest.fixture(scope="module")
def spill(xnv_module):
    pkts = flow_packets(SPILL_FLOWS, SPILL_PER_FLOW, base=5000)
    return pcap_replicas_run(xnv_module, "spill", pkts, 3, spill=50, ring_size=64,
                             burst=32, rep_opts={0: {"delay_us": SLOW_US}})


def test_spill_happens(spill):
    svc = spill["svc"]
    assert svc["picks_spill"] > 0, svc
    assert svc["no_instance"] == 0


def test_spill_slow_replica_gets_less(spill):
    rx = {n: i["rx"] for n, i in spill["nfs"].items()}
    assert sum(rx.values()) == len(spill["in_"]), rx
    assert rx["rep-0"] < len(spill["in_"]) / 6, rx
    # the slow replica's flows went on elsewhere: seen by it and another
    slow = set(spill["flows"]["rep-0"])
    others = set(spill["flows"]["rep-1"]) | set(spill["flows"]["rep-2"])
    assert slow & others, "no flow of the slow replica spilled"


def test_spill_loses_nothing(spill):
    st = spill["stats"]
    assert spill["rc"] == 0
    assert all(v == 0 for v in st["drops"].values()), st["drops"]
    assert ports(st)["in"]["rx"] == ports(st)["out"]["tx"] == len(spill["in_"])
    assert ports(st)["in"]["rx_missed"] == ports(st)["in"]["rx_nombuf"] == 0
    assert sorted(spill["out"]) == sorted(spill["in_"])
    assert sum(n["drop"] for n in st["nfs"]) == 0
    assert st["groups"][0]["free"] == st["groups"][0]["pool_bufs"]


# --------------------------------------------------------------------------
# a restarted replica takes its slot and its flows back

RESTART_FLOWS = 64


@pytest.fixture(scope="module")
def restart(xnv_module):
    env = xnv_module
    pkts = flow_packets(RESTART_FLOWS, 4, base=9000)
    in_pcap = write_pcap(env.path("restart-in.pcap"), pkts)
    cfg = replica_config(env, "restart",
                         f"net_pcap0,rx_pcap={in_pcap},infinite_rx=1",
                         "net_null1", spill=100)
    core = start_named_core(env, cfg, "restart")
    r0, r1 = start_replicas(env, core, 2)
    res = dict(core=core, all=[flow_str(p) for p in pkts])
    with Telemetry(core) as t:
        def nf_rx_at_least(name, n):
            wait_until(lambda: nf_infos(t)[name]["rx"] >= n, 20,
                       f"{name} to receive {n} packets")
        t("/xnv/chain/set", "in rep->out")
        nf_rx_at_least("rep-1", 20 * len(pkts))
        res["before"] = nf_infos(t)
        res["s0"], res["s1"] = dump_flows(r0), dump_flows(r1)
        # r1 dies: its flows move to r0
        r1.signal(signal.SIGKILL)
        res["r1_rc"] = r1.wait(5)
        core.wait_output(r"NF rep-1 \(domain \d+\) detached: connection closed", 5)
        rx0 = nf_infos(t)["rep-0"]["rx"]
        nf_rx_at_least("rep-0", rx0 + 20 * len(pkts))
        res["alone"] = dump_flows(r0)
        res["svc_alone"] = t("/xnv/service/info", SERVICE_ID)
        # a new instance of the service: the free slot, the same flows
        r1b = start_testnf(env, "rep", "g", "rep-1b", socket=core.socket)
        core.wait_attached(r1b)
        nf_rx_at_least("rep-1b", 20 * len(pkts))
        res["back1"] = dump_flows(r0)
        nf_rx_at_least("rep-1b", nf_infos(t)["rep-1b"]["rx"] + 20 * len(pkts))
        res["back2"] = dump_flows(r0)
        res["after"] = nf_infos(t)
        res["svc"] = t("/xnv/service/info", SERVICE_ID)
    res["rc"], res["nf_rcs"] = stop_all(core, [r0, r1b])
    res["r1b"] = read_flows(r1b.flows_path)
    res["stats"] = core.stats()
    return res


def test_restart_replicas_split_the_flows(restart):
    s0, s1 = set(restart["s0"]), set(restart["s1"])
    assert s0 and s1 and not s0 & s1
    assert s0 | s1 == set(restart["all"])


def test_restart_killed_replicas_flows_move(restart):
    assert restart["r1_rc"] == -signal.SIGKILL
    assert set(restart["alone"]) == set(restart["all"])
    assert restart["svc_alone"]["instances"] == [restart["before"]["rep-0"]["id"]]


def test_restart_takes_the_same_slot(restart):
    before, after = restart["before"], restart["after"]
    assert before["rep-0"]["instance"] == 0 and before["rep-1"]["instance"] == 1
    assert after["rep-1"]["state"] == "gone"
    assert after["rep-1b"]["state"] == "attached"
    assert after["rep-1b"]["instance"] == before["rep-1"]["instance"]
    assert after["rep-0"]["instance"] == 0
    assert sorted(restart["svc"]["instances"]) == sorted(
        [after["rep-0"]["id"], after["rep-1b"]["id"]])


def test_restart_gets_the_same_flows_back(restart):
    assert set(restart["r1b"]) == set(restart["s1"])


def test_restart_other_replica_lets_them_go(restart):
    """Once the new instance is there, rep-0 sees no packet of its flows
    any more, and still sees its own."""
    b1, b2 = restart["back1"], restart["back2"]
    for f in restart["s1"]:
        assert b2[f] == b1[f], f"rep-0 still gets {f}"
    for f in restart["s0"]:
        assert b2[f] > b1[f], f"rep-0 no longer gets its own {f}"


def test_restart_no_spill_clean_stop(restart):
    assert restart["svc"]["picks_spill"] == 0
    assert restart["rc"] == 0 and restart["nf_rcs"] == [0, 0]
    drops = restart["stats"]["drops"]
    assert drops["stall"] == drops["no_instance"] == drops["bad_desc"] == 0, drops


# --------------------------------------------------------------------------
# NFs join and leave while traffic flows (net_null: endless, one flow)

def stats_now(t):
    s = t("/xnv/stats")
    assert "rx" in s, s
    return s


def wait_grow(t, key, by, timeout=10):
    """Until /xnv/stats[key] grew by `by`; returns the stats then, with the
    value it grew from as "<key>_from"."""
    start = stats_now(t)[key]
    s = wait_until(lambda: (lambda s: s if s[key] >= start + by else None)(
        stats_now(t)), timeout, f"{key} to grow by {by} from {start}")
    return {**s, f"{key}_from": start}


@pytest.fixture(scope="module")
def churn(xnv_module):
    env = xnv_module
    cfg = replica_config(env, "churn", "net_null0", "net_null1",
                         chain="a -> b -> out", rx_start="immediately",
                         spill=25, pool_bufs=4096, services=("a", "b"))
    core = start_named_core(env, cfg, "churn")
    res = dict(core=core)
    nfs = {}

    def start(service, name, **kw):
        nf = start_testnf(env, service, "g", name, socket=core.socket,
                          flows=False, **kw)
        core.wait_attached(nf)
        nfs[name] = nf
        return nf

    def gone(nf, sig):
        nf.signal(sig)
        nfs[nf.nf_name + "-rc"] = nf.wait(5)
        core.wait_output(rf"NF {nf.nf_name} \(domain \d+\) detached: ", 5)

    with Telemetry(core) as t:
        # no NF at all: rx goes on, every packet dropped as no_instance
        s = wait_grow(t, "drop_no_instance", 10_000)
        res["no_nf"] = wait_grow(t, "rx", 10_000)
        res["no_nf_before"] = s
        a0, b0 = start("a", "a-0"), start("b", "b-0")
        res["flowing"] = wait_grow(t, "tx", 10_000)
        a1 = start("a", "a-1")                  # second replica of a
        wait_grow(t, "tx", 10_000)
        gone(a0, signal.SIGKILL)                # a-1 takes over
        res["a0_killed"] = wait_grow(t, "tx", 10_000)
        gone(b0, signal.SIGTERM)                # b has no instance now
        nb = stats_now(t)
        res["b_gone"] = (nb, wait_grow(t, "drop_no_instance", 10_000))
        res["b_gone_tx"] = (nb["tx"], stats_now(t)["tx"])
        b1 = start("b", "b-1")
        b2 = start("b", "b-2", action="drop")   # a replica that drops all
        res["b_back"] = wait_grow(t, "tx", 10_000)
        # churn: replicas of a come and go, b-1 killed and replaced
        prev = a1
        for i in range(2, 6):
            nxt = start("a", f"a-{i}")
            gone(prev, signal.SIGKILL if i % 2 else signal.SIGTERM)
            wait_grow(t, "nf_tx", 5_000)
            prev = nxt
        gone(b1, signal.SIGKILL)
        b3 = start("b", "b-3")
        res["end"] = wait_grow(t, "tx", 10_000)
        res["svc_a"] = t("/xnv/service/info", 1)
        res["svc_b"] = t("/xnv/service/info", 2)
        res["alive"] = core.alive()
    live = [prev, b2, b3]
    res["rc"], res["nf_rcs"] = stop_all(core, live)
    res["nfs"], res["stats"] = nfs, core.stats()
    return res


def test_churn_no_instance_drops_not_stalls(churn):
    """With no NF for a step, rx goes on and the packets are counted as
    no_instance, not parked until they stall."""
    before, s = churn["no_nf_before"], churn["no_nf"]
    assert s["tx"] == 0 and s["drop_no_instance"] > before["drop_no_instance"]
    assert s["drop_stall"] == 0
    (nb, after) = churn["b_gone"]
    assert after["drop_no_instance"] >= nb["drop_no_instance"] + 10_000
    assert after["drop_stall"] == 0
    # while b was gone, at most what had passed b already went out
    tx0, tx1 = churn["b_gone_tx"]
    assert tx1 - tx0 <= 4096


def test_churn_core_survives(churn):
    assert churn["alive"] and churn["rc"] == 0, churn["core"].log()[-3000:]
    assert churn["nf_rcs"] == [0, 0, 0]
    for name in ("a-0", "a-2", "a-4", "b-1"):
        assert churn["nfs"][name + "-rc"] == -signal.SIGKILL, name
    for name in ("a-1", "a-3", "b-0"):
        assert churn["nfs"][name + "-rc"] == 0, name


def test_churn_traffic_resumes_after_each_change(churn):
    """Packets left port out again after: the first NFs attached, a-0 was
    killed (a-1 took over), b came back, the churn of a's replicas."""
    for key in ("flowing", "a0_killed", "b_back", "end"):
        assert churn[key]["tx"] >= churn[key]["tx_from"] + 10_000, key
    assert churn["svc_a"]["instances"] and len(churn["svc_b"]["instances"]) == 2


def test_churn_no_leak(churn):
    st = churn["stats"]
    (g,) = st["groups"]
    assert g["free"] == g["pool_bufs"] == 4096, g
    assert all(n["held"] == 0 for n in st["nfs"]), st["nfs"]
    assert all(n["state"] == "gone" for n in st["nfs"])


def test_churn_counters_consistent(churn):
    st = churn["stats"]
    p = ports(st)
    nf_drops = sum(n["drop"] for n in st["nfs"])
    assert p["in"]["rx"] == p["out"]["tx"] + sum(st["drops"].values()) + nf_drops, st
    assert st["drops"]["bad_desc"] == st["drops"]["stall"] == 0, st["drops"]
    assert nf_drops > 0          # b-2 dropped its share
    reclaimed = sum(n["reclaimed"] for n in st["nfs"])
    assert st["drops"]["reclaimed"] >= reclaimed
