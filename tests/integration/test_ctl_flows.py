# SPDX-License-Identifier: BSD-3-Clause
"""xnv-ctl changing what the core does, against a real core with endless
traffic (ctlenv.py's scenario: port in -> fwd-a -> port out, a spare
service fwd-b): flow add (the rule printed as understood, every field),
list (every field, hits), del, clear, reload ([flow NAME] sections; bad
ones refused whole, naming the line), the examples of --help; rules and
chain set move real traffic between fwd-a and fwd-b."""
import re
import shlex
import time

from ctlenv import CHAIN, DNS, WEB, added, ctl, no_flows  # noqa: F401 (fixtures)
from harness import wait_until


# --------------------------------------------------------------------------
# flow rules

FIELDS = ("priority", "in_port", "vlan", "proto", "src", "dst", "sport", "dport")
COLUMNS = ("PRIO", "IN_PORT", "VLAN", "PROTO", "SRC", "DST", "SPORT", "DPORT")
ANY = {"priority": "32768", **{k: "any" for k in FIELDS[1:]}}


def rule_text(**fields):
    """A rule as xnv-ctl prints it: every field written, `any` by default."""
    fields = {**ANY, **{k: str(v) for k, v in fields.items()}}
    return " ".join(f"{k}={fields[k]}" for k in FIELDS)


def row_of(rule, chain, rid, name="-"):
    """The `flow list` row of a rule written as rule_text() writes it, but
    its hits."""
    fields = dict(kv.split("=", 1) for kv in rule.split())
    return {"ID": str(rid), "NAME": name, **{c: fields[k] for c, k in zip(COLUMNS, FIELDS)},
            "CHAIN": chain}


def no_hits(row):
    return {k: v for k, v in row.items() if k != "HITS"}


# argv of flow add, the rule as the core understood it, its chain
UNDERSTOOD = [
    (["udp", "src=10.0.0.1", "dst=10.0.0.2", "dport=53", "chain", "drop"],
     rule_text(proto="udp", src="10.0.0.1/32", dst="10.0.0.2/32", dport=53), "drop"),
    (["proto=udp", "src=10.0.0.1", "dst=10.0.0.2", "sport=1000", "dport=53",
      "chain=fwd-b -> out"],
     rule_text(proto="udp", src="10.0.0.1/32", dst="10.0.0.2/32", sport=1000, dport=53),
     "fwd-b -> out"),
    # a prefix's host bits cleared; an address limits the rule to its family
    (["priority=7", "in_port=in", "vlan=none", "proto=6", "src=10.9.8.7/8",
      "sport=1000-2000", "chain", "fwd-a", "fwd-b", "out"],
     rule_text(priority=7, in_port="in", vlan="none", proto="tcp", src="10.0.0.0/8",
               dst="0.0.0.0/0", sport="1000-2000"), "fwd-a -> fwd-b -> out"),
    (["proto=200", "dst=2001:DB8::1:2/64", "chain", "out"],
     rule_text(proto=200, src="::/0", dst="2001:db8::/64"), "out"),
    (["vlan=100", "proto=47", "chain=out"], rule_text(vlan=100, proto="gre"), "out"),
    # fields quoted as one argument; `any` is a field left out
    (["src=10.0.0.3 dst=10.0.0.4", "tcp", "sport=2000", "dport=any", "vlan=any", "chain",
      "fwd-a,out"],
     rule_text(proto="tcp", src="10.0.0.3/32", dst="10.0.0.4/32", sport=2000), "fwd-a -> out"),
    (["priority=0", "chain", "drop"], rule_text(priority=0), "drop"),
]


def test_flow_add_prints_the_rule_as_understood(ctl, no_flows):
    want = {}
    for argv, rule, chain in UNDERSTOOD:
        rid, text, steps = added(ctl.ok("flow", "add", *argv))
        assert (text, steps) == (rule, chain), argv
        want[str(rid)] = row_of(rule, chain, rid)
    assert len(want) == len(UNDERSTOOD)
    rows, js = ctl.flows()
    assert {i: no_hits(r) for i, r in rows.items()} == want
    assert ctl.json("info")["n_flows"] == len(UNDERSTOOD)
    for i, f in js.items():     # --json: the same, priority a number
        assert set(f) == {"id", "name", *FIELDS, "chain", "hits"}
        assert f["name"] == "" and f["priority"] == int(rows[i]["PRIO"])
        assert [f[k] for k in FIELDS[1:]] == [rows[i][c] for c in COLUMNS[1:]]
        assert " -> ".join(f["chain"]) == rows[i]["CHAIN"]
        assert 0 <= int(rows[i]["HITS"]) <= f["hits"]
    # the same rule, written otherwise: refused, names the rule
    first = next(i for i, r in want.items() if r["CHAIN"] == "drop" and r["DPORT"] == "53")
    r = ctl.run("flow", "add", "proto=17", "dst=10.0.0.2/32", "src=10.0.0.1", "dport=53-53",
                "in_port=any", "chain", "fwd-a", "out")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == f"xnv-ctl: rule {first} matches the same at the same priority\n"
    # at another priority it is another rule; --json: the core's reply
    js = ctl.json("flow", "add", "udp", "src=10.0.0.1", "dst=10.0.0.2", "dport=53",
                  "priority=1", "chain", "drop")
    assert js == {"id": js["id"], "name": "", "priority": 1, "in_port": "any", "vlan": "any",
                  "proto": "udp", "src": "10.0.0.1/32", "dst": "10.0.0.2/32", "sport": "any",
                  "dport": "53", "chain": ["drop"], "hits": 0}
    assert str(js["id"]) not in want
    for i in [*want, str(js["id"])]:
        assert ctl.ok("flow", "del", i) == f"removed flow rule {i}\n"
    assert ctl.table("flow", "list") == [] and ctl.json("flow", "list") == []
    assert ctl.json("info")["n_flows"] == 0
    r = ctl.run("flow", "del", first)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", f"xnv-ctl: no flow rule {first}\n")


def test_flow_hits_and_traffic(ctl, no_flows):
    """An exact rule (WEB) and a wildcard one (DNS's port) move their flows
    to fwd-b and count them; a rule matching nothing counts nothing;
    cleared, the traffic is back on the port's chain."""
    proto, src, sport, dst, dport = WEB
    web, _, _ = added(ctl.ok("flow", "add", f"proto={proto}", f"src={src}", f"dst={dst}",
                             f"sport={sport}", f"dport={dport}", "chain", "fwd-b -> out"))
    dns, _, _ = added(ctl.ok("flow", "add", "udp", f"dport={DNS[4]}", "chain", "fwd-b", "out"))
    idle, _, _ = added(ctl.ok("flow", "add", "vlan=7", "chain", "drop"))
    wait_until(lambda: min(ctl.hits(web), ctl.hits(dns)) > 1000, 30, "hits of both rules")
    wait_until(lambda: switched_to(ctl, "fwd-b-1", "fwd-a-1"), 30,
               "fwd-b's rx to grow and fwd-a's to stop")
    rows, js = ctl.flows()
    assert 1000 < int(rows[str(web)]["HITS"]) <= js[str(web)]["hits"]
    assert 1000 < int(rows[str(dns)]["HITS"]) <= js[str(dns)]["hits"]
    assert rows[str(idle)]["HITS"] == "0" and js[str(idle)]["hits"] == 0
    assert no_hits(rows[str(dns)]) == row_of(rule_text(proto="udp", dport=53), "fwd-b -> out",
                                             dns)
    assert ctl.ok("flow", "clear") == "flow rules cleared: 3 removed\n"
    wait_until(lambda: switched_to(ctl, "fwd-a-1", "fwd-b-1"), 30,
               "fwd-a's rx to grow and fwd-b's to stop")


def test_flow_clear(ctl, no_flows):
    for spec in (["udp", "src=10.0.0.1", "dst=10.0.0.2", "sport=9", "dport=9"],   # exact
                 ["src=10.0.0.0/8", "vlan=3"], ["tcp", "dst=2001:db8::/48", "dport=1-1023"]):
        added(ctl.ok("flow", "add", *spec, "chain", "drop"))
    assert ctl.json("info")["n_flows"] == 3
    assert ctl.ok("flow", "clear") == "flow rules cleared: 3 removed\n"
    assert ctl.table("flow", "list") == [] and ctl.json("flow", "list") == []
    assert ctl.json("info")["n_flows"] == 0
    assert ctl.json("flow", "clear") == {"removed": 0}
    assert ctl.ok("flow", "clear") == "flow rules cleared: 0 removed\n"
    # a cleared table takes rules again
    rid, _, _ = added(ctl.ok("flow", "add", "udp", "src=10.0.0.1", "dst=10.0.0.2", "sport=9",
                             "dport=9", "chain", "drop"))
    assert [f["id"] for f in ctl.json("flow", "list")] == [rid]


RELOADED = [
    ("dns", {"proto": "udp", "dport": DNS[4], "chain": "fwd-b -> out"},
     rule_text(proto="udp", dport=53), "fwd-b -> out"),
    ("web", {"priority": 100, "proto": "tcp", "dst": "10.0.0.0/8", "dport": "80-88",
             "chain": "fwd-b -> out"},
     rule_text(priority=100, proto="tcp", src="0.0.0.0/0", dst="10.0.0.0/8", dport="80-88"),
     "fwd-b -> out"),
    ("v6", {"src": "2001:db8::/32", "vlan": "none", "in_port": "in",
            "chain": "fwd-a -> fwd-b -> out"},
     rule_text(in_port="in", vlan="none", src="2001:db8::/32", dst="::/0"),
     "fwd-a -> fwd-b -> out"),
]

# [flow NAME] sections flow reload refuses (with good ones around), and
# the reply's error after "xnv-ctl: flow reload: line N: " (of the config)
BAD_RELOAD = [
    ([("bad", {"proto": "bogus", "chain": "drop"})],
     r"\[flow bad\]: proto 'bogus' is not a name \(tcp, udp, icmp, icmp6, sctp, gre, esp\), "
     r"0\.\.255 or any"),
    ([("x", {"dport": 53, "chain": "drop"})],
     r"\[flow x\]: sport/dport need proto tcp, udp or sctp"),
    ([("y", {"proto": "udp", "chain": "fwd-a -> nosuch -> out"})],
     r"\[flow y\]: chain: chain step 'nosuch' is not a declared service, a port, or 'drop'"),
    ([("z", {"proto": "udp"})], r"\[flow z\]: no chain \(chain = STEPS\)"),
    ([("w", {"proto": "udp", "color": "red", "chain": "drop"})],
     r"\[flow w\]: unknown field 'color' .*"),
    ([("v", {"in_port": "nosuch", "chain": "drop"})],
     r"\[flow v\]: in_port 'nosuch' is not a port of this core"),
    ([("dns", {"proto": "tcp", "chain": "drop"})], r"\[flow dns\]: declared twice \(first on line \d+\)"),
]


def test_flow_reload(ctl, no_flows):
    live, _, _ = added(ctl.ok("flow", "add", "priority=9", "chain", "drop"))
    ctl.write_flows([(name, keys) for name, keys, _, _ in RELOADED])
    assert ctl.ok("flow", "reload") == \
        "flow rules reloaded from the config: 3 in force (1 before)\n"
    # ids 1..3 in file order, named; the rule added live is gone
    want = {str(i): row_of(rule, chain, i, name)
            for i, (name, _, rule, chain) in enumerate(RELOADED, 1)}
    rows, js = ctl.flows()
    assert {i: no_hits(r) for i, r in rows.items()} == want, live
    assert [f["name"] for f in js.values()] == ["dns", "web", "v6"]
    assert ctl.json("info")["n_flows"] == 3
    # dns and web take the traffic (web: a prefix and a port range)
    wait_until(lambda: min(ctl.hits(1), ctl.hits(2)) > 1000, 30, "hits of dns and web")
    wait_until(lambda: switched_to(ctl, "fwd-b-1", "fwd-a-1"), 30, "traffic on fwd-b")
    assert ctl.hits(3) == 0
    r = ctl.json("flow", "reload")
    assert set(r) == {"rules", "removed", "build_us"}
    assert (r["rules"], r["removed"]) == (3, 3) and r["build_us"] >= 0
    # a bad file changes nothing: one line, the section and what is wrong
    good = [(name, keys) for name, keys, _, _ in RELOADED]
    before = ctl.state()
    for extra, msg in BAD_RELOAD:
        ctl.write_flows(good + extra)
        r = ctl.run("flow", "reload")
        assert (r.returncode, r.stdout) == (1, ""), (extra, r.stderr)
        assert re.fullmatch(r"xnv-ctl: flow reload: line \d+: " + msg + "\n",
                            r.stderr), r.stderr
        assert ctl.state() == before
    ctl.write_flows(good)
    ctl.cfg.write_text(ctl.cfg.read_text() + "[flow broken\nproto = udp\n")
    r = ctl.run("flow", "reload")
    assert (r.returncode, r.stdout) == (1, "")
    n = len(ctl.cfg.read_text().splitlines()) - 1
    assert r.stderr == (f"xnv-ctl: flow reload: line {n}: section header without "
                        "closing ']'\n"), r.stderr
    assert ctl.state() == before
    # no [flow] sections: no rules
    ctl.write_flows([])
    assert ctl.ok("flow", "reload") == \
        "flow rules reloaded from the config: 0 in force (3 before)\n"
    assert ctl.json("flow", "list") == [] and ctl.json("info")["n_flows"] == 0
    wait_until(lambda: switched_to(ctl, "fwd-a-1", "fwd-b-1"), 30, "traffic back on fwd-a")


def test_flow_reload_names_a_bad_first_step(ctl, no_flows):
    ctl.write_flows([("y", {"proto": "udp", "chain": "nosuch -> out"})])
    r = ctl.run("flow", "reload")
    assert (r.returncode, r.stdout) == (1, "")
    n = len(ctl.cfg.read_text().splitlines())     # its chain = line, the last
    assert r.stderr == (f"xnv-ctl: flow reload: line {n}: [flow y]: chain: chain step "
                        "'nosuch' is not a declared service, a port, or 'drop'\n"), r.stderr


def help_examples(text, cmd="xnv-ctl flow add "):
    """The example command lines of a --help text, as argv after xnv-ctl."""
    return [shlex.split(ln.strip())[1:] for ln in text.splitlines()
            if ln.strip().startswith(cmd)]


def test_flow_add_help_examples_work(ctl, no_flows):
    text = ctl.ok("flow", "add", "--help")
    assert "an omitted field (or one given as `any`) matches anything" in " ".join(text.split())
    assert "xnv-ctl flow add proto=udp src=10.0.0.1 dst=10.0.0.2 dport=53 chain drop\n" in text
    examples = help_examples(text) + help_examples(ctl.ok("--help"))
    assert len(examples) >= 4
    for argv in examples:
        added(ctl.ok(*argv))
        ctl.ok("flow", "clear")
    assert ctl.ok("flow", "reload", "--help").count("[flow NAME]") >= 1



# --------------------------------------------------------------------------
# chain changes

def nf_rx(ctl):
    return {n: v["rx"] for n, v in ctl.core.snapshot()["nfs"].items()}


def switched_to(ctl, new, old):
    """Counters (SIGUSR1 table: not the telemetry path) show traffic on `new`
    and none on `old` over 0.3 s."""
    a = nf_rx(ctl)
    time.sleep(0.3)
    b = nf_rx(ctl)
    return b[new] > a[new] + 1000 and b[old] == a[old]


def test_chain_set_moves_traffic(ctl):
    try:
        assert ctl.ok("chain", "set", "in", "fwd-b -> out") == "port in: chain fwd-b -> out\n"
        assert ctl.table("ports")[0]["CHAIN"] == "fwd-b -> out"
        assert ctl.json("ports")[0]["chain"] == ["fwd-b", "out"]
        wait_until(lambda: switched_to(ctl, "fwd-b-1", "fwd-a-1"), 30,
                   "fwd-b's rx to grow and fwd-a's to stop")
        # the telemetry view agrees
        a = {n["name"]: n["rx"] for n in ctl.json("nfs")}
        time.sleep(0.2)
        b = {n["name"]: n["rx"] for n in ctl.json("nfs")}
        assert b["fwd-b-1"] > a["fwd-b-1"] and b["fwd-a-1"] == a["fwd-a-1"]
        # and back, steps given as words
        assert ctl.ok("chain", "set", "in", "fwd-a", "out") == f"port in: chain {CHAIN}\n"
        wait_until(lambda: switched_to(ctl, "fwd-a-1", "fwd-b-1"), 30,
                   "fwd-a's rx to grow and fwd-b's to stop")
    finally:
        ctl.run("chain", "set", "in", CHAIN)
    assert [p["chain"] for p in ctl.json("ports")] == [CHAIN.split(" -> "), []]
    assert ctl.core.alive()
