# SPDX-License-Identifier: BSD-3-Clause
"""examples/firewall: first match wins, per-rule hits, default policy,
stateful replies.  A Python model of the same rules decides every packet;
the NF must pass exactly the allowed ones, in order, and count exactly
the same hits per rule."""
import ipaddress
import random
import time

import pytest
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

from nfrun import NfSpec, assert_bad_file, parse_counters, run_nfs, \
    run_two_phases

RULES = """\
# test rules
deny  proto tcp dport 23
allow proto tcp src 10.0.0.0/8 dport 80
allow proto udp dst 192.0.2.0/24 dport 53-54

deny  src 10.9.0.0/16                        # after rule 3: 3 wins for DNS
allow proto icmp
allow src 2001:db8::/32 proto tcp sport 1024-65535 dport 443
allow dst 10.100.0.0/16
"""
PROTO = {"tcp": 6, "udp": 17, "icmp": 1}
# Explicit MACs: scapy would otherwise resolve them (ARP) when building.
ETH = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def model_rules():
    rules = []
    for line in RULES.splitlines():
        w = line.split("#")[0].split()
        if not w:
            continue
        r = {"allow": w[0] == "allow"}
        for k, v in zip(w[1::2], w[2::2]):
            if k in ("src", "dst"):
                r[k] = ipaddress.ip_network(v)
            elif k == "proto":
                r[k] = PROTO[v]
            else:
                lo, _, hi = v.partition("-")
                r[k] = (int(lo), int(hi or lo))
        rules.append(r)
    return rules


# (ver, proto, src, dst, sport, dport); ports None for ICMP / fragments
FLOWS = [
    (4, 6, "10.1.0.1", "198.51.100.1", 40000, 80),       # rule 2
    (4, 6, "172.16.0.1", "198.51.100.1", 40001, 23),     # rule 1
    (4, 6, "10.1.0.1", "198.51.100.1", 40002, 23),       # rule 1, not 2
    (4, 17, "10.5.0.1", "192.0.2.53", 5353, 53),         # rule 3
    (4, 17, "10.9.0.1", "192.0.2.53", 5354, 54),         # rule 3 before 4
    (4, 17, "10.9.0.1", "192.0.2.99", 99, 99),           # rule 4
    (4, 1, "172.16.0.9", "10.9.9.9", None, None),        # rule 5
    (6, 6, "2001:db8::1", "2001:db8:2::1", 5000, 443),   # rule 6
    (6, 6, "2001:db8::1", "2001:db8:2::1", 80, 443),     # sport: default
    (6, 17, "2001:db9::1", "2001:db8:2::1", 5000, 443),  # default
    (4, 17, "172.16.0.2", "10.100.1.1", 7, 7),           # rule 7
    (4, 6, "10.1.0.2", "10.200.0.1", 1, 80),             # rule 2
    (4, 17, "10.100.3.3", "10.100.3.3", 7, 7),           # rule 7, its own reply
]


def frame(f, rnd, seq):
    ver, proto, src, dst, sport, dport = f
    l3 = IP(src=src, dst=dst, id=seq) if ver == 4 else IPv6(src=src, dst=dst)
    if proto == 6:
        l4 = TCP(sport=sport, dport=dport, seq=seq)
    elif proto == 17:
        l4 = UDP(sport=sport, dport=dport)
    else:
        l4 = ICMP(id=seq & 0xFFFF)
    return bytes(Ether(**ETH) / l3 / l4 / Raw(bytes(rnd.randrange(40))))


def traffic(n=500, seed=5):
    """Flows, their replies, a later fragment, ARP: (frame, model key)."""
    rnd = random.Random(seed)
    out = []
    for seq in range(n):
        f = rnd.choice(FLOWS)
        if f[4] is not None and rnd.random() < 0.4:       # the reply
            f = (f[0], f[1], f[3], f[2], f[5], f[4])
        out.append((frame(f, rnd, seq), f))
    frag = IP(src="10.1.0.1", dst="198.51.100.1", proto=6, frag=10)
    out.insert(7, (bytes(Ether(**ETH) / frag / Raw(bytes(20))),
                   (4, 6, "10.1.0.1", "198.51.100.1", None, None)))
    out.insert(9, (bytes(Ether(**ETH) / ARP()), None))
    return out


def model(pkts, stateful, default_allow):
    rules = model_rules()
    hits, state, allowed = [0] * len(rules), set(), []
    c = dict(default_hits=0, state_replies=0, not_ip=0, allowed=0, denied=0)
    for fr, k in pkts:
        if k is None:
            c["not_ip"] += 1
            c["denied"] += 1
            continue
        ver, proto, src, dst, sport, dport = k
        tracked = stateful and sport is not None and proto in (6, 17)
        if tracked and (ver, proto, dst, src, dport, sport) in state:
            c["state_replies"] += 1
            allow = True
        else:
            for i, r in enumerate(rules):
                if ("proto" in r and r["proto"] != proto or
                        "src" in r and ipaddress.ip_address(src) not in r["src"] or
                        "dst" in r and ipaddress.ip_address(dst) not in r["dst"]):
                    continue
                if ("sport" in r or "dport" in r) and (
                        sport is None or
                        not r.get("sport", (0, 65535))[0] <= sport <= r.get("sport", (0, 65535))[1] or
                        not r.get("dport", (0, 65535))[0] <= dport <= r.get("dport", (0, 65535))[1]):
                    continue
                hits[i] += 1
                allow = r["allow"]
                break
            else:
                c["default_hits"] += 1
                allow = default_allow
            if allow and tracked:
                state.add(k)
        c["allowed" if allow else "denied"] += 1
        if allow:
            allowed.append(fr)
    return allowed, hits, c


@pytest.fixture(scope="module", params=[
    ("stateless", ()), ("stateful", ("--stateful",)),
    ("default-allow", ("--default", "allow"))], ids=lambda p: p[0])
def filtered(request, tmp_path_factory, probe_bin):
    from harness import xnv_env
    with xnv_env(tmp_path_factory.mktemp(request.param[0]), probe_bin) as env:
        (env.dir / "rules.txt").write_text(RULES)
        pkts = traffic()
        run = run_nfs(env, [p for p, _ in pkts], [NfSpec("firewall", (
            "--rules", env.dir / "rules.txt", *request.param[1]))])
        yield pkts, run, "--stateful" in request.param[1], \
            "allow" in request.param[1]


def test_firewall_passes_exactly_the_allowed_packets(filtered):
    pkts, run, stateful, dflt = filtered
    allowed, _, c = model(pkts, stateful, dflt)
    assert run.core_rc == 0 and run.nf_rcs["firewall"] == 0
    assert 0 < len(allowed) < len(pkts)
    assert run.outs[0] == allowed
    fw = run.counters["firewall"]
    assert fw["packets"] == len(pkts)
    assert {k: fw[k] for k in c} == c


def test_firewall_hits_per_rule_equal_the_model(filtered):
    pkts, run, stateful, dflt = filtered
    _, hits, _ = model(pkts, stateful, dflt)
    got = {}
    for line in run.lines("firewall"):
        w = line.split()
        if w[0] == "rule":
            got[int(w[1])] = (int(w[3]), int(w[5]))
    lines = [i + 1 for i, l in enumerate(RULES.splitlines())
             if l.split("#")[0].split()]
    assert got == {i + 1: (h, lines[i]) for i, h in enumerate(hits)}
    assert all(h > 0 for h in hits), hits


def test_firewall_stateful_lets_replies_of_allowed_flows_only(filtered):
    pkts, run, stateful, dflt = filtered
    if not stateful:
        pytest.skip("stateless run")
    _, _, c = model(pkts, True, False)
    _, _, c0 = model(pkts, False, False)
    assert c["state_replies"] > 0
    assert run.counters["firewall"]["state_replies"] == c["state_replies"]
    assert len(run.outs[0]) > c0["allowed"]          # replies got through
    # a reply of the denied flow 10.9.0.1:99 -> 192.0.2.99:99 stays out
    rep = [p for p, k in pkts if k and k[2:] == ("192.0.2.99", "10.9.0.1", 99, 99)]
    assert rep and not set(rep) & set(run.outs[0])


def test_firewall_forgets_a_flow_idle_past_the_state_timeout(xnv):
    """A reply passes while its flow is remembered, not once the flow was
    idle longer than --state-timeout (read once a burst, nfmain.h)."""
    (xnv.dir / "rules.txt").write_text("allow proto udp dport 53\n")
    ask = Ether(**ETH) / IP(src="10.0.0.1", dst="192.0.2.1") / \
        UDP(sport=5000, dport=53) / Raw(b"q")
    reply = Ether(**ETH) / IP(src="192.0.2.1", dst="10.0.0.1") / \
        UDP(sport=53, dport=5000) / Raw(b"r")
    phase1 = [bytes(ask), bytes(reply)]
    fw, out1, out2 = run_two_phases(xnv, NfSpec("firewall", (
        "--rules", xnv.dir / "rules.txt", "--stateful", "--state-timeout",
        "2")), phase1, [bytes(reply)], lambda nf: time.sleep(4))
    assert out1 == phase1
    assert out2 == []
    c = parse_counters(fw.stdout())
    assert (c["state_replies"], c["state_expired"], c["default_hits"],
            c["denied"]) == (1, 1, 1, 1), c


@pytest.mark.parametrize("text,line,msg", [
    ("allow proto tcp\npermit proto udp\n", 2, "'permit': expected allow or deny"),
    ("allow proto tcp dport\n", 1, "'dport' has no value"),
    ("\n\nallow src 10.0.0.1/8\n", 3, "host bits set"),
    ("allow dport 80\n", 1, "sport/dport need proto tcp or udp"),
    ("allow proto udp dport 90-80\n", 1, "LO > HI"),
    ("allow proto udp dport 70000\n", 1, "dport '70000'"),
    ("allow src 10.0.0.0/8 dst 2001:db8::/32\n", 1, "src is IPv4, dst is IPv6"),
    ("deny proto gre\n", 1, "expected tcp, udp"),
    ("allow from 10.0.0.0/8\n", 1, "unknown key"),
    ('allow proto "tcp\n', 1, "unterminated quoted string"),
], ids=["action", "no-value", "host-bits", "ports-proto", "range", "port",
        "family", "proto", "key", "quote"])
def test_firewall_bad_rule_file_names_file_and_line(xnv, text, line, msg):
    assert_bad_file(xnv, "firewall", "--rules", text, line, msg)
