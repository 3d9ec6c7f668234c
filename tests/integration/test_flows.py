# SPDX-License-Identifier: BSD-3-Clause
"""The flow director (dom0-core/flow.c) and live chain changes, through the
control commands (/xnv/flow/add, /xnv/flow/del, /xnv/chain/set) on the
core's telemetry socket:
  - a rule added at run time moves exactly its flow (IPv4 and IPv6) to its
    chain, and the flow comes back to the default chain when it is deleted;
    non-IP packets and fragments stay on the default chain;
  - /xnv/flow/add answers what /xnv/flow/info says: every field as text
    ("any" for a wildcard, addresses as prefixes), priority a number;
  - bad rules are refused with {"error": <one line naming the field>} and
    change nothing; the table holds 4096 exact rules, added at run time or
    from [flow NAME] sections, and refuses one more;
  - /xnv/chain/set under traffic changes the default path without losing a
    packet, and packets already on their way finish the chain they began.
The NFs are xnv-testnf (tests/tools/xnv-testnf.c), which count the flows
they see (--flows; SIGUSR1 writes the counts while they run).  Wildcards,
prefixes, ranges, VLANs, priorities and `flow reload` are the
test_flow_rules_*.py files'."""
import re
import signal
import time

import pytest

from harness import (CORE_BIN, Telemetry, dump_flows, nf_info, read_flows, scaled,
                     start_named_core, start_testnf, wait_until, write_config)
from traffic import flow_packets, flow_str, read_pcap, write_pcap


def flows_config(env, name, in_dev, out_dev, chain=None, services=("fwd-a", "fwd-b"),
                 **core):
    port_in = {"dev": in_dev, "group": "g"}
    if chain:
        port_in["chain"] = chain
    return write_config(env.path(f"{name}.ini"), [
        ("core", {"socket": env.sockdir / f"{name}.sock", **core}),
        ("group g", {"pool_bufs": 8192}),
        ("port in", port_in),
        ("port out", {"dev": out_dev, "group": "g"}),
        *[(f"service {s}", {}) for s in services],
    ])


def start_nf(env, core, service, **kw):
    nf = start_testnf(env, service, "g", service, socket=core.socket, **kw)
    core.wait_attached(nf)
    return nf


def spec_of(flow, chain):
    """A /xnv/flow/add parameter matching a flow named as flow_str()."""
    proto, src, sport, dst, dport = flow.split()
    return f"proto={proto} src={src} dst={dst} sport={sport} dport={dport} chain={chain}"


def exact_reply(rid, flow, chain, hits):
    """/xnv/flow/info (and /xnv/flow/add) of the exact rule spec_of(flow)
    added at run time: every field as text, addresses as host prefixes."""
    proto, src, sport, dst, dport = flow.split()
    host = "/128" if ":" in src else "/32"
    return {"id": rid, "name": "", "priority": 32768, "in_port": "any",
            "vlan": "any", "proto": proto, "src": src + host, "dst": dst + host,
            "sport": sport, "dport": dport, "chain": chain, "hits": hits}


# --------------------------------------------------------------------------
# a rule moves exactly its flow; deleted, the flow comes back

def rules_traffic():
    """IPv4 UDP and IPv6 TCP flows, plus, for one flow of each: its IP
    fragments, and (IPv4) the same frame with a non-IP ethertype."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.inet6 import IPv6, IPv6ExtHdrFragment
    from scapy.layers.inet import TCP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw

    v4 = flow_packets(30, 2, base=100)
    v6 = flow_packets(10, 2, proto="tcp", v6=True, base=200)
    t4, t6 = flow_str(v4[3]), flow_str(v6[5])
    _, src4, sport4, dst4, dport4 = t4.split()
    _, src6, sport6, dst6, dport6 = t6.split()
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    extra = [
        # first fragment: the UDP header (ports of the rule) is there
        eth / IP(src=src4, dst=dst4, flags="MF", id=7) /
        UDP(sport=int(sport4), dport=int(dport4)) / Raw(b"f" * 48),
        eth / IP(src=src4, dst=dst4, proto=17, frag=7, id=7) / Raw(b"g" * 40),
        eth / IPv6(src=src6, dst=dst6) / IPv6ExtHdrFragment(m=1, id=9, nh=6) /
        TCP(sport=int(sport6), dport=int(dport6)) / Raw(b"h" * 40),
    ]
    non_ip = v4[3][:12] + b"\x88\xb5" + v4[3][14:]
    pkts = v4 + v6 + [bytes(p) for p in extra] + [non_ip]
    return pkts, t4, t6


@pytest.fixture(scope="module")
def rules(xnv_module):
    env = xnv_module
    pkts, t4, t6 = rules_traffic()
    in_pcap = write_pcap(env.path("rules-in.pcap"), pkts)
    # packets arrive as fast as the core takes them: an NF that waits for a
    # CPU on a loaded machine must not make them stall drops
    cfg = flows_config(env, "rules", f"net_pcap0,rx_pcap={in_pcap},infinite_rx=1",
                       "net_null1", chain="fwd-a -> out", stall_timeout_ms=10000)
    core = start_named_core(env, cfg, "rules")
    a, b = start_nf(env, core, "fwd-a"), start_nf(env, core, "fwd-b")
    spec4, spec6 = spec_of(t4, "fwd-b->out"), spec_of(t6, "fwd-b -> out")
    res = dict(pkts=pkts, t4=t4, t6=t6, spec4=spec4, spec6=spec6)

    with Telemetry(core) as t:
        def hits(rid):
            return t("/xnv/flow/info", rid)["hits"]

        def a_rx_grows(by):
            start = nf_info(t, "fwd-a")["rx"]
            wait_until(lambda: nf_info(t, "fwd-a")["rx"] >= start + by, 20,
                       f"fwd-a to receive {by} more packets")

        a_rx_grows(20 * len(pkts))
        res["a0"] = dump_flows(a)
        res["add4"] = t("/xnv/flow/add", spec4)
        res["add6"] = t("/xnv/flow/add", spec6)
        id4, id6 = res["add4"]["id"], res["add6"]["id"]
        res["list"] = t("/xnv/flow/list")
        res["info"] = {"/xnv/info": t("/xnv/info")}
        wait_until(lambda: min(hits(id4), hits(id6)) > 500, 20, "rule hits")
        res["a1"] = dump_flows(a)
        a_rx_grows(20 * len(pkts))
        res["a2"] = dump_flows(a)
        res["b1"] = dump_flows(b)
        res["info4"], res["info6"] = t("/xnv/flow/info", id4), t("/xnv/flow/info", id6)
        res["del4"] = t("/xnv/flow/del", id4)
        res["del6"] = t("/xnv/flow/del", id6)
        res["list_after"] = t("/xnv/flow/list")
        res["info_after"] = t("/xnv/flow/info", id4)
        res["n_flows_after"] = t("/xnv/info")["n_flows"]
        a_rx_grows(20 * len(pkts))
        res["a3"] = dump_flows(a)
        res["b_rx1"] = nf_info(t, "fwd-b")["rx"]
        a_rx_grows(20 * len(pkts))
        res["b_rx2"] = nf_info(t, "fwd-b")["rx"]
        res["drops"] = t("/xnv/stats")
    core.signal(signal.SIGTERM)
    res["rc"] = core.wait(10)
    res["nf_rcs"] = [a.wait(10), b.wait(10)]
    res["a_end"], res["b_end"] = read_flows(a.flows_path), read_flows(b.flows_path)
    return res


def others(res):
    return {flow_str(p) for p in res["pkts"]} - {res["t4"], res["t6"]}


def test_rules_traffic_as_intended(rules):
    """Before any rule, fwd-a sees every flow, the fragments and the
    non-IP frames."""
    flows = {flow_str(p) for p in rules["pkts"]}
    assert set(rules["a0"]) == flows
    assert {f.split()[0] for f in flows} == {"udp", "tcp", "frag", "eth-88b5"}
    assert len(flows) == 30 + 10 + 2 + 1


def test_rule_add_reply_and_listing(rules):
    id4, id6 = rules["add4"]["id"], rules["add6"]["id"]
    assert id4 != id6
    assert sorted(rules["list"]) == sorted([id4, id6])
    assert rules["info"]["/xnv/info"]["n_flows"] == 2
    for rid, add, info, flow in ((id4, rules["add4"], rules["info4"], rules["t4"]),
                                 (id6, rules["add6"], rules["info6"], rules["t6"])):
        # add answers what info says (traffic flows: the rule may have
        # counted a few packets by the time add replied)
        assert add == exact_reply(rid, flow, ["fwd-b", "out"], add["hits"]), add
        assert 0 <= add["hits"] <= info["hits"]
        assert info == exact_reply(rid, flow, ["fwd-b", "out"], info["hits"]), info
        assert info["hits"] > 500


@pytest.mark.parametrize("flow", ["t4", "t6"], ids=["ipv4", "ipv6"])
def test_rule_moves_its_flow_away_from_default(rules, flow):
    """After the rule, fwd-a does not see the flow any more (its count stays
    the same while fwd-a keeps receiving everything else)."""
    f, a1, a2 = rules[flow], rules["a1"], rules["a2"]
    assert a2[f] == a1[f], f"fwd-a still gets {f}: {a1[f]} -> {a2[f]}"


def test_rule_leaves_other_flows_alone(rules):
    a1, a2 = rules["a1"], rules["a2"]
    still = {f for f in others(rules) if a2.get(f, 0) > a1.get(f, 0)}
    assert still == others(rules)


def test_rule_chain_sees_only_its_flows(rules):
    """fwd-b, reached only through the rules, saw exactly the two flows."""
    assert set(rules["b1"]) == {rules["t4"], rules["t6"]}
    assert set(rules["b_end"]) == {rules["t4"], rules["t6"]}


def test_rule_hits_counted(rules):
    """Every packet that matched went to fwd-b: hits read before the rule
    was deleted <= what fwd-b got, which is what fwd-b's flows file says."""
    b = rules["b_end"]
    assert 0 < rules["info4"]["hits"] <= b[rules["t4"]]
    assert 0 < rules["info6"]["hits"] <= b[rules["t6"]]
    assert sum(b.values()) == rules["b_rx2"]


def test_non_ip_and_fragments_take_default_chain(rules):
    """Frames that carry the rule's addresses but no port to match (IPv4
    and IPv6 fragments, a non-IP ethertype) stay on the default chain."""
    a1, a2 = rules["a1"], rules["a2"]
    odd = [f for f in others(rules) if f.split()[0] in ("frag", "eth-88b5")]
    assert len(odd) == 3
    for f in odd:
        assert a2[f] > a1[f], f
        assert f not in rules["b_end"]


def test_rule_deleted_flow_back_to_default(rules):
    assert rules["del4"] == {"id": rules["add4"]["id"]}
    assert rules["del6"] == {"id": rules["add6"]["id"]}
    assert rules["list_after"] == [] and rules["n_flows_after"] == 0
    assert "error" in rules["info_after"]
    for f in (rules["t4"], rules["t6"]):
        assert rules["a3"][f] > rules["a2"][f], f
    # and fwd-b gets nothing any more
    assert rules["b_rx2"] == rules["b_rx1"]


def test_rules_clean_run(rules):
    s = rules["drops"]
    assert s["drop_no_instance"] == s["drop_stall"] == s["drop_bad_desc"] == 0, s
    assert s["drop_chain_end"] == s["drop_chain_drop"] == 0, s
    assert rules["rc"] == 0 and rules["nf_rcs"] == [0, 0]


# --------------------------------------------------------------------------
# bad rules change nothing; the table holds 4096 rules

GOOD = "proto=udp src=10.0.0.1 dst=10.0.0.2 sport=1000 dport=53 chain=fwd-b->out"


@pytest.fixture(scope="module")
def idle(xnv_module):
    """A core without traffic (port in has no chain) and one rule."""
    env = xnv_module
    cfg = flows_config(env, "idle", "net_null0", "net_null1")
    core = start_named_core(env, cfg, "idle")
    t = Telemetry(core)
    first = t("/xnv/flow/add", GOOD)
    assert first == {"id": 1, "name": "", "priority": 32768, "in_port": "any",
                     "vlan": "any", "proto": "udp", "src": "10.0.0.1/32",
                     "dst": "10.0.0.2/32", "sport": "1000", "dport": "53",
                     "chain": ["fwd-b", "out"], "hits": 0}, first
    yield core, t
    t.close()


@pytest.mark.parametrize("spec,error", [
    (GOOD, "rule 1 matches the same at the same priority"),
    (GOOD.replace("fwd-b->out", "drop"),
     "rule 1 matches the same at the same priority"),
    (GOOD.replace("10.0.0.1", "10.0.0.300"),
     "flow rule: src '10.0.0.300' is not an IPv4 or IPv6 address[/prefix length]"),
    (GOOD.replace("dst=10.0.0.2", "dst=2001:db8::x"),
     "flow rule: dst '2001:db8::x' is not an IPv4 or IPv6 address[/prefix length]"),
    (GOOD.replace("fwd-b->out", "nosuch->out"),
     "chain step 'nosuch' is not a declared service, a port, or 'drop'"),
    (GOOD.replace("dst=10.0.0.2", "dst=2001:db8::2"),
     "flow rule: src= and dst= are of different families (IPv4 and IPv6)"),
    (GOOD.replace(" chain=fwd-b->out", ""), "flow rule: no chain=STEPS"),
    (GOOD.replace("proto=udp ", ""),
     "flow rule: sport/dport need proto tcp, udp or sctp"),
    (GOOD.replace("proto=udp", "proto=xyz"),
     "flow rule: proto 'xyz' is not a name (tcp, udp, icmp, icmp6, sctp, gre, "
     "esp), 0..255 or any"),
    (GOOD.replace("dport=53", "dport=65536"),
     "flow rule: dport '65536' is not a port, a range FIRST-LAST of ports "
     "(0..65535) or any"),
    (GOOD.replace("dport=53", "colour=3"),
     "flow rule: unknown field 'colour' (priority, in_port, vlan, proto, src, "
     "dst, sport, dport, chain)"),
], ids=["duplicate", "duplicate-other-chain", "bad-ipv4", "bad-ipv6",
        "unknown-service", "mixed-families", "no-chain", "ports-without-proto",
        "bad-proto", "bad-port", "unknown-key"])
def test_bad_rule_refused_table_unchanged(idle, spec, error):
    core, t = idle
    before = (t("/xnv/flow/list"), t("/xnv/flow/info", 1))
    reply = t("/xnv/flow/add", spec)
    assert reply == {"error": error}, reply
    assert (t("/xnv/flow/list"), t("/xnv/flow/info", 1)) == before
    assert t("/xnv/info")["n_flows"] == 1
    assert core.alive()


def test_delete_unknown_rule_refused(idle):
    core, t = idle
    assert t("/xnv/flow/del", 99) == {"error": "no flow rule 99"}
    assert t("/xnv/flow/del", "x") == {"error": "no flow rule x"}
    assert t("/xnv/flow/list") == [1]


def test_rule_info_as_added(idle):
    """A rule with long (uncompressed) IPv6 addresses and a 3-step chain is
    listed with its fields: addresses in their usual form, the chain as
    step names."""
    core, t = idle
    spec = ("proto=tcp src=2001:0db8:0000:0000:0000:0000:0000:0001 "
            "dst=2001:0db8:0000:0000:0000:0000:0000:0002 sport=1000 dport=443 "
            "chain=fwd-a -> fwd-b -> out")
    added = t("/xnv/flow/add", spec)
    rid = added["id"]
    try:
        assert t("/xnv/flow/info", rid) == added == {
            "id": rid, "name": "", "priority": 32768, "in_port": "any",
            "vlan": "any", "proto": "tcp", "src": "2001:db8::1/128",
            "dst": "2001:db8::2/128", "sport": "1000", "dport": "443",
            "chain": ["fwd-a", "fwd-b", "out"], "hits": 0}
        assert sorted(t("/xnv/flow/list")) == [1, rid]
    finally:
        assert t("/xnv/flow/del", rid) == {"id": rid}
    assert t("/xnv/flow/list") == [1]


MAX_FLOWS = 4096
NOT_TAKEN = "xnv-core did not answer"


def add_rule(t, spec):
    """/xnv/flow/add, asked again while the reply is NOT_TAKEN: the core's
    loop did not take the command's chain within its 2 s (a loaded
    machine) and nothing changed, but the reply lacks the "busy": 1 that
    makes Telemetry ask again (test_flow_rules_commands.py::
    test_flow_add_with_loop_stalled)."""
    deadline = time.monotonic() + scaled(60)
    while True:
        r = t("/xnv/flow/add", spec)
        if r.get("error") != NOT_TAKEN or time.monotonic() > deadline:
            return r


def exact_spec(i):
    """Exact rule i of the 4096: one UDP 5-tuple each."""
    return (f"proto=udp src=10.9.{i // 256}.{i % 256} dst=10.10.0.1 "
            f"sport={1000 + i} dport=53")


def list_all(t):
    """Every rule id: the list comes in pages of at most 500 ids
    (CONTROL.md)."""
    listed, start = [], 1
    while True:
        page = t("/xnv/flow/list", start)
        assert isinstance(page, list) and len(page) <= 500, page
        listed += page
        if len(page) < 500:
            return listed
        start = page[-1] + 1


def test_flow_table_holds_4096_rules(xnv):
    """4096 rules over one connection, then one more: "flow table full",
    and the rules that were there are still there.  Exact rules: each add
    is one hash insert, whatever the table holds."""
    cfg = flows_config(xnv, "full", "net_null0", "net_null1")
    core = start_named_core(xnv, cfg, "full")
    added, error = [], None
    with Telemetry(core) as t:
        for i in range(MAX_FLOWS + 1):
            r = add_rule(t, exact_spec(i) + " chain=fwd-b->out")
            if "error" in r:
                error = r["error"]
                break
            added.append(r["id"])
        n_flows = t("/xnv/info")["n_flows"]
        listed = list_all(t)
        last = t("/xnv/flow/info", added[-1]) if added else None
    assert len(added) == MAX_FLOWS and error == "flow table full (4096 rules)", \
        f"{len(added)} rules added, then: {error!r}"
    assert n_flows == MAX_FLOWS
    assert sorted(listed) == sorted(added)
    assert last["id"] == added[-1] and last["sport"] == str(1000 + MAX_FLOWS - 1)
    assert "(4096 rules, exact)" in core.log()


def config_rules(env, name, n):
    """flows_config() with n [flow rN] sections, exact rule i each."""
    cfg = flows_config(env, name, "net_null0", "net_null1")
    text = [cfg.read_text()]
    for i in range(n):
        proto, src, dst, sport, dport = (kv.split("=")[1] for kv in exact_spec(i).split())
        text.append(f"[flow r{i}]\nproto = {proto}\nsrc = {src}\ndst = {dst}\n"
                    f"sport = {sport}\ndport = {dport}\nchain = fwd-b -> out\n")
    cfg.write_text("\n".join(text))
    return cfg


def test_flow_table_4096_rules_from_config(xnv):
    """4096 [flow rN] sections load at start: n_flows 4096, ids in file
    order, each rule named after its section; a 4097th section is refused
    before the core starts, in one line naming it."""
    cfg = config_rules(xnv, "fromcfg", MAX_FLOWS)
    core = start_named_core(xnv, cfg, "fromcfg")
    with Telemetry(core) as t:
        n_flows = t("/xnv/info")["n_flows"]
        listed = list_all(t)
        first, last = t("/xnv/flow/info", 1), t("/xnv/flow/info", MAX_FLOWS)
        more = t("/xnv/flow/add", exact_spec(MAX_FLOWS) + " chain=fwd-b->out")
    assert n_flows == MAX_FLOWS
    assert listed == list(range(1, MAX_FLOWS + 1))
    assert first == {"id": 1, "name": "r0", "priority": 32768, "in_port": "any",
                     "vlan": "any", "proto": "udp", "src": "10.9.0.0/32",
                     "dst": "10.10.0.1/32", "sport": "1000", "dport": "53",
                     "chain": ["fwd-b", "out"], "hits": 0}, first
    assert (last["name"], last["src"], last["sport"]) == \
        ("r4095", "10.9.15.255/32", "5095"), last
    assert more == {"error": "flow table full (4096 rules)"}, more
    assert re.search(r"4096 flow rules from the config \(4096 exact\)", core.log())
    core.signal(signal.SIGTERM)
    assert core.wait(10) == 0

    over = config_rules(xnv, "overcfg", MAX_FLOWS + 1)
    r = xnv.run([CORE_BIN, "-l", "0", "--", "--config", over, "--socket",
                 xnv.sockdir / "over.sock"])
    ours = [line for line in r.stderr.splitlines() if line.startswith("xnv-core: ")]
    assert r.returncode not in (0, None) and r.returncode > 0, r
    assert len(ours) == 1 and re.fullmatch(
        rf"xnv-core: config error: {re.escape(str(over))}:\d+: \[flow r4096\]: more "
        r"than 4096 flow rules", ours[0]), r.stderr
    assert "xnv-core statistics" not in r.stdout


# --------------------------------------------------------------------------
# /xnv/chain/set under traffic: no loss, in-flight packets finish their chain

N_LIVE, SLOW_US = 4000, 250


@pytest.fixture(scope="module")
def live(xnv_module):
    env = xnv_module
    pkts = flow_packets(40, N_LIVE // 40, base=400)
    in_pcap = write_pcap(env.path("live-in.pcap"), pkts)
    out_pcap = env.path("live-out.pcap")
    cfg = flows_config(env, "live", f"net_pcap0,rx_pcap={in_pcap}",
                       f"net_pcap1,tx_pcap={out_pcap}", chain="fwd-a -> out",
                       services=("fwd-a", "fwd-b", "fwd-c"), stall_timeout_ms=10000)
    core = start_named_core(env, cfg, "live")
    b, c = start_nf(env, core, "fwd-b"), start_nf(env, core, "fwd-c")
    a = start_nf(env, core, "fwd-a", delay_us=SLOW_US)  # rx starts now
    res = dict(pkts=pkts)
    with Telemetry(core) as t:
        wait_until(lambda: nf_info(t, "fwd-a")["rx"] >= N_LIVE // 8, 30,
                   "an eighth of the packets through fwd-a")
        res["a_at_switch"] = nf_info(t, "fwd-a")
        res["set"] = t("/xnv/chain/set", "in fwd-b->fwd-c->out")
        res["port_at_switch"] = t("/xnv/port/info", 0)
        wait_until(lambda: t("/xnv/port/info", 1)["tx"] >= N_LIVE, 60,
                   f"{N_LIVE} packets out")
        res["port_after"] = t("/xnv/port/info", 0)
        res["stats"] = t("/xnv/stats")
        res["alive"] = core.alive()
    core.signal(signal.SIGTERM)
    res["rc"] = core.wait(10)
    res["nf_rcs"] = [nf.wait(10) for nf in (a, b, c)]
    res["json"] = core.stats()
    res["out"] = read_pcap(out_pcap)
    res["flows"] = {nf.nf_name: read_flows(nf.flows_path) for nf in (a, b, c)}
    res["log"] = core.log()
    return res


def test_chain_set_reply(live):
    assert live["set"] == {"port": "in", "chain": ["fwd-b", "fwd-c", "out"]}
    assert live["port_after"]["chain"] == ["fwd-b", "fwd-c", "out"]
    assert "port in: chain set to fwd-b -> fwd-c -> out" in live["log"]


def test_chain_set_with_packets_in_flight(live):
    """The switch happened mid-run with packets waiting in fwd-a."""
    a = live["a_at_switch"]
    assert a["held"] > 0 or a["rx_ring_used"] > 0, a
    assert live["port_at_switch"]["rx"] < N_LIVE


def test_chain_set_loses_nothing(live):
    s = live["stats"]
    assert live["alive"]
    assert s["rx"] == N_LIVE and s["tx"] == N_LIVE, s
    assert all(v == 0 for k, v in s.items() if k.startswith("drop_")), s
    assert sorted(live["out"]) == sorted(live["pkts"])
    assert live["rc"] == 0 and live["nf_rcs"] == [0, 0, 0]
    g = live["json"]["groups"][0]
    assert g["free"] == g["pool_bufs"]


def test_chain_set_splits_the_traffic(live):
    """Every packet went through fwd-a (old chain) or fwd-b then fwd-c (new
    chain), never both: packets in flight finished the chain they began."""
    rx = {n: sum(f.values()) for n, f in live["flows"].items()}
    assert rx["fwd-a"] > 0 and rx["fwd-b"] > 0
    assert rx["fwd-a"] + rx["fwd-b"] == N_LIVE, rx
    assert rx["fwd-c"] == rx["fwd-b"], rx
    assert live["flows"]["fwd-c"] == live["flows"]["fwd-b"]
