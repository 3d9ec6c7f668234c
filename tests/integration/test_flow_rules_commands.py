# SPDX-License-Identifier: BSD-3-Clause
"""The flow commands' replies, from a real core with a rule table
(flowrules.py's config, no traffic).  What is proved:
  - bad rules: one line naming the field, nothing changed; /xnv/flow/info's
    fields, given back to /xnv/flow/add, are the same rule;
  - flow add and flow reload asked while the main loop is stalled (its
    thread stopped with ptrace): "busy": 1 and nothing changed."""
import sys
import textwrap

import pytest

from flowrules import call, rules_config
from harness import Telemetry, scaled, start_named_core, wait_until


# --------------------------------------------------------------------------
# bad rules: one line naming the field, nothing changed

@pytest.fixture(scope="module")
def idle(xnv_module):
    """A core without traffic and three rules (one exact, one from the
    config)."""
    env = xnv_module
    cfg = rules_config(env, "idle", [("dns", {"proto": "udp", "dport": 53, "chain": "o1"})])
    core = start_named_core(env, cfg, "idle")
    with Telemetry(core) as t:
        for spec in ("proto=tcp src=10.0.0.1 dst=10.0.0.2 sport=1 dport=2 chain=o2",
                     "priority=7 in_port=in2 vlan=12 proto=132 src=2001:db8::/32 "
                     "sport=5-6 chain=o3 -> drop"):
            assert "id" in call(t, "/xnv/flow/add", spec)
        yield core, t


def table(t):
    ids = t("/xnv/flow/list")
    return ids, [t("/xnv/flow/info", i) for i in ids], t("/xnv/info")["n_flows"]


BAD_RULES = {
    "unknown-field": ("proto=udp colour=red chain=o1",
                      "flow rule: unknown field 'colour' (priority, in_port, vlan, proto, "
                      "src, dst, sport, dport, chain)"),
    "field-twice": ("proto=udp dport=53 proto=tcp chain=o1", "flow rule: proto given twice"),
    "any-twice": ("src=any src=10.0.0.1 chain=o1", "flow rule: src given twice"),
    "not-key-value": ("proto=udp 53 chain=o1", "flow rule: '53' is not KEY=VALUE"),
    "empty-value": ("proto= chain=o1", "flow rule: 'proto=' is not KEY=VALUE"),
    "prefix-33": ("src=10.0.0.0/33 chain=o1",
                  "flow rule: src '10.0.0.0/33' is not an IPv4 or IPv6 address[/prefix length]"),
    "prefix-129": ("dst=2001:db8::/129 chain=o1",
                   "flow rule: dst '2001:db8::/129' is not an IPv4 or IPv6 address[/prefix "
                   "length]"),
    "prefix-signed": ("dst=10.0.0.0/+8 chain=o1",
                      "flow rule: dst '10.0.0.0/+8' is not an IPv4 or IPv6 address[/prefix "
                      "length]"),
    "range-backwards": ("proto=udp dport=2000-1000 chain=o1",
                        "flow rule: dport '2000-1000' is not a port, a range FIRST-LAST of "
                        "ports (0..65535) or any"),
    "range-open": ("proto=udp sport=1000- chain=o1",
                   "flow rule: sport '1000-' is not a port, a range FIRST-LAST of ports "
                   "(0..65535) or any"),
    "ports-without-proto": ("dst=10.0.0.1 dport=53 chain=o1",
                            "flow rule: sport/dport need proto tcp, udp or sctp"),
    "ports-with-icmp": ("proto=icmp sport=1 chain=o1",
                        "flow rule: sport/dport need proto tcp, udp or sctp"),
    "vlan-4096": ("vlan=4096 chain=o1", "flow rule: vlan '4096' is not 0..4095, none or any"),
    "vlan-negative": ("vlan=-1 chain=o1", "flow rule: vlan '-1' is not 0..4095, none or any"),
    "unknown-in-port": ("in_port=eth0 chain=o1",
                        "flow rule: in_port 'eth0' is not a port of this core"),
    "in-port-service": ("in_port=gate chain=o1",
                        "flow rule: in_port 'gate' is not a port of this core"),
    "mixed-families": ("src=10.0.0.1 dst=2001:db8::1 chain=o1",
                       "flow rule: src= and dst= are of different families (IPv4 and IPv6)"),
    "mixed-families-0": ("src=::/0 dst=0.0.0.0/0 chain=o1",
                         "flow rule: src= and dst= are of different families (IPv4 and IPv6)"),
    "priority-65536": ("priority=65536 chain=o1", "flow rule: priority '65536' is not 0..65535"),
    "priority-any": ("priority=any chain=o1", "flow rule: priority 'any' is not 0..65535"),
    "proto-256": ("proto=256 chain=o1",
                  "flow rule: proto '256' is not a name (tcp, udp, icmp, icmp6, sctp, gre, "
                  "esp), 0..255 or any"),
    "no-chain": ("proto=udp", "flow rule: no chain=STEPS"),
    "empty-chain": ("proto=udp chain=", "chain has an empty step"),
    "chain-unknown": ("proto=udp chain=o1 -> o9",
                      "chain step 'o9' is not a declared service, a port, or 'drop'"),
    "same-rule": ("proto=tcp src=10.0.0.1 dst=10.0.0.2 sport=1 dport=2 chain=o5",
                  "rule 2 matches the same at the same priority"),
    "same-rule-from-config": ("dport=53 proto=udp priority=32768 chain=drop",
                              "rule 1 matches the same at the same priority"),
}


@pytest.mark.parametrize("case", BAD_RULES, ids=list(BAD_RULES))
def test_bad_rule_one_line_nothing_changed(idle, case):
    core, t = idle
    spec, error = BAD_RULES[case]
    before = table(t)
    reply = t("/xnv/flow/add", spec)
    assert reply == {"error": error}, reply
    assert "\n" not in error
    assert table(t) == before
    assert core.alive()


def test_rule_fields_read_back_as_the_same_rule(idle):
    """/xnv/flow/info's fields, given back to /xnv/flow/add, are the same
    rule (refused as such): the replies say exactly what a rule matches."""
    core, t = idle
    ids, infos, _ = table(t)
    assert len(infos) == 3
    for info in infos:
        spec = " ".join(f"{k}={info[k]}" for k in ("priority", "in_port", "vlan", "proto",
                                                    "src", "dst", "sport", "dport"))
        reply = t("/xnv/flow/add", spec + " chain=drop")
        assert reply == {"error": f"rule {info['id']} matches the same at the same "
                                  f"priority"}, (info, reply)
    assert infos[0]["name"] == "dns" and infos[1]["name"] == infos[2]["name"] == ""
    assert {k: infos[2][k] for k in ("priority", "in_port", "vlan", "proto", "src", "dst",
                                     "sport", "dport", "chain")} == {
        "priority": 7, "in_port": "in2", "vlan": "12", "proto": "sctp",
        "src": "2001:db8::/32", "dst": "::/0", "sport": "5-6", "dport": "any",
        "chain": ["o3", "drop"]}


# --------------------------------------------------------------------------
# a command the core's loop did not take in time: "busy": 1 (CONTROL.md)

# Stops one thread (argv[1], a tid) with ptrace for argv[2] seconds: the
# core's main loop (its main thread), while its telemetry thread answers.
STOP_THREAD = textwrap.dedent("""
    import ctypes, os, sys, time
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    SEIZE, INTERRUPT, DETACH, WALL = 0x4206, 0x4207, 17, 0x40000000
    tid, secs = int(sys.argv[1]), float(sys.argv[2])
    for req in (SEIZE, INTERRUPT):
        if libc.ptrace(req, tid, None, None) != 0:
            sys.exit(f"ptrace {req:#x}: {os.strerror(ctypes.get_errno())}")
    os.waitpid(tid, WALL)
    print("stopped", flush=True)
    time.sleep(secs)
    libc.ptrace(DETACH, tid, None, None)
    print("resumed", flush=True)
""")
BUSY = {"error": "xnv-core did not answer within 2 s", "busy": 1}


@pytest.fixture(scope="module")
def stalled(xnv_module):
    """A core with one rule whose main loop is stopped (ptrace, its main
    thread only) while /xnv/info, /xnv/flow/add and /xnv/flow/reload are
    asked once each (no asking again): the replies, and the table before
    and once the loop runs again."""
    env = xnv_module
    cfg = rules_config(env, "stalled", [("dns", {"proto": "udp", "dport": 53, "chain": "o1"})])
    core = start_named_core(env, cfg, "stalled")
    res = {}
    with Telemetry(core, timeout=30) as t:
        res["before"] = table(t)
        # each command waits 2 s for the loop: stopped long enough for three
        stop = env.start("stop-loop", [sys.executable, "-c", STOP_THREAD, core.pid,
                                       scaled(10)])
        wait_until(lambda: "stopped" in stop.stdout() or not stop.alive(), 10,
                   "the core's main thread stopped")
        if "stopped" not in stop.stdout():
            pytest.skip(f"cannot stop a thread with ptrace: {stop.stderr().strip()}")
        res["info"] = t("/xnv/info", busy_timeout=0)
        res["stopped_after_info"] = "resumed" not in stop.stdout()
        res["add"] = t("/xnv/flow/add", "proto=tcp dport=22 chain=o2", busy_timeout=0)
        res["reload"] = t("/xnv/flow/reload", busy_timeout=0)
        assert stop.wait(30) == 0, stop.stderr()
        res["after"] = table(t)
        res["add_again"] = call(t, "/xnv/flow/add", "proto=tcp dport=23 chain=o2")
    res["alive"] = core.alive()
    return res


def test_stalled_loop_command_says_busy(stalled):
    """The mechanism: a loop command (/xnv/info) asked while the loop is
    stopped is withdrawn and says busy; the core goes on once the loop
    runs again."""
    assert stalled["stopped_after_info"], "the loop ran again before /xnv/info ended"
    assert stalled["info"] == BUSY, stalled["info"]
    assert "id" in stalled["add_again"] and stalled["alive"], stalled["add_again"]


# The flow commands run on the telemetry thread; what they need of the main
# loop (chain versions) waits 2 s for it.  With the loop stalled they finish
# once it runs again, or say busy (not run, ask again), never a bare error.


def test_flow_add_with_loop_stalled(stalled):
    r, (ids, infos, n) = stalled["add"], stalled["after"]
    if "id" in r:           # it waited for the loop and added the rule
        assert r["id"] in ids and n == stalled["before"][2] + 1, (r, ids)
    else:
        assert r.get("busy") == 1, r
        assert stalled["after"] == stalled["before"]


def test_flow_reload_with_loop_stalled(stalled):
    r = stalled["reload"]
    if "error" in r:
        assert r.get("busy") == 1, r
    else:
        assert r["rules"] == 1, r
