# SPDX-License-Identifier: BSD-3-Clause
"""The data path's verdict cache (dom0-core/flow_path.c) never outlives a
rule change: flows the core has already seen (their verdicts cached) take
the new way as soon as a rule is added or deleted, exact (the hash,
changed in place) or wildcard (a new set of tries), and come back when it
goes.

Twelve UDP/IPv4 flows f0..f11 loop through port in (default chain fwd-a);
xnv-testnf counts the flows each NF sees.  The flows run a while before
each change, so every verdict is cached when it happens:

  phase     rules in force (and `proto=tcp chain=drop`,    flows at fwd-b
            which none matches, from the start)
  sentinel  exact f0 -> fwd-b                              f0
  wildcard  + udp dport 54 -> fwd-b (f1 f4 f7 f10)         f0 f1 f4 f7 f10
  override  + exact f4, priority 40000 -> fwd-a            f0 f1 f7 f10
  del-exact - the override                                 f0 f1 f4 f7 f10
  del-wild  - the wildcard                                 f0

A phase's flows are the ones that grew at each NF between two dumps taken
once the change has had time to drain the rings (SETTLE packets out)."""
import signal

import pytest

from harness import Telemetry, dump_flows, wait_until
from test_flows import flows_config, spec_of, start_named_core, start_nf
from traffic import flow_packets, flow_str, write_pcap

N_FLOWS = 12
SETTLE = 20000          # packets out before a phase's first dump (rings drain)


def phase_flows(t, a, b):
    """({flows that grew at fwd-a}, {at fwd-b}) over SETTLE packets out,
    counted from SETTLE packets after the change."""
    def out_tx():
        return t("/xnv/port/info", 1)["tx"]

    def after(n):
        start = out_tx()
        wait_until(lambda: out_tx() >= start + n, 30,
                   f"{n} more packets out of port out")
    after(SETTLE)
    a1, b1 = dump_flows(a), dump_flows(b)
    after(SETTLE)
    a2, b2 = dump_flows(a), dump_flows(b)
    return ({f for f, n in a2.items() if n > a1.get(f, 0)},
            {f for f, n in b2.items() if n > b1.get(f, 0)})


@pytest.fixture(scope="module")
def cache(xnv_module):
    env = xnv_module
    pkts = flow_packets(N_FLOWS, 1, base=0)
    names = [flow_str(p) for p in pkts]
    pcap = write_pcap(env.path("cache-in.pcap"), pkts)
    cfg = flows_config(env, "cache", f"net_pcap0,rx_pcap={pcap},infinite_rx=1",
                       "net_null1", chain="fwd-a -> out", stall_timeout_ms=10000)
    core = start_named_core(env, cfg, "cache")
    a, b = start_nf(env, core, "fwd-a"), start_nf(env, core, "fwd-b")
    res = {"names": names}
    with Telemetry(core) as t:
        def add(spec):
            r = t("/xnv/flow/add", spec)
            assert "id" in r, r
            return r["id"]

        def delete(rid):
            r = t("/xnv/flow/del", rid)
            assert "error" not in r, r

        # a rule no packet matches: from here on the core classifies,
        # and caches each flow's "no rule"
        add("proto=tcp chain=drop")
        start = t("/xnv/port/info", 1)["tx"]
        wait_until(lambda: t("/xnv/port/info", 1)["tx"] > start + SETTLE, 30,
                   "traffic through fwd-a before any rule")
        add(spec_of(names[0], "fwd-b -> out"))
        res["sentinel"] = phase_flows(t, a, b)
        wild = add("proto=udp dport=54 chain=fwd-b->out")
        res["wildcard"] = phase_flows(t, a, b)
        over = add("priority=40000 " + spec_of(names[4], "fwd-a -> out"))
        res["override"] = phase_flows(t, a, b)
        delete(over)
        res["del-exact"] = phase_flows(t, a, b)
        delete(wild)
        res["del-wild"] = phase_flows(t, a, b)
        res["stats"] = t("/xnv/stats")
    core.signal(signal.SIGTERM)
    res["rc"] = core.wait(10)
    return res


AT_B = {
    "sentinel": (0,),
    "wildcard": (0, 1, 4, 7, 10),
    "override": (0, 1, 7, 10),
    "del-exact": (0, 1, 4, 7, 10),
    "del-wild": (0,),
}


@pytest.mark.parametrize("phase", list(AT_B))
def test_rule_change_applies_to_cached_flows(cache, phase):
    names = cache["names"]
    at_a, at_b = cache[phase]
    want_b = {names[i] for i in AT_B[phase]}
    assert at_b == want_b, f"{phase}: fwd-b saw {sorted(at_b)}"
    assert at_a == set(names) - want_b, f"{phase}: fwd-a saw {sorted(at_a)}"


def test_cache_run_clean(cache):
    drops = {k: v for k, v in cache["stats"].items()
             if k.startswith("drop_") and v}
    assert not drops, drops
    assert cache["rc"] == 0
