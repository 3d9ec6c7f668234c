# SPDX-License-Identifier: BSD-3-Clause
"""Three example NFs chained by the core's config: port in -> firewall ->
router (--next) -> monitor -> port out.  The firewall, router and monitor
models of their own tests predict, together, the exact output frames and
every NF's counters."""
import ipaddress
import json

import pytest

from nfrun import NfSpec, run_nfs
from test_nf_firewall import RULES, model, traffic
from test_nf_monitor import true_key
from test_nf_router import expect

ROUTES = """\
0.0.0.0/0        via 192.0.2.1  port 1
10.100.0.0/16    drop
::/0             via fe80::1    port 1
"""
NEIGH = """\
192.0.2.1  02:00:00:00:01:01
fe80::1    02:00:00:00:02:61
port 1     02:aa:00:00:00:01
"""


@pytest.fixture(scope="module")
def chained(xnv_module):
    d = xnv_module.dir
    for name, text in (("rules.txt", RULES), ("routes.txt", ROUTES),
                       ("neigh.txt", NEIGH)):
        (d / name).write_text(text)
    pkts = traffic()
    run = run_nfs(xnv_module, [p for p, _ in pkts], [
        NfSpec("firewall", ("--rules", d / "rules.txt")),
        NfSpec("router", ("--routes", d / "routes.txt", "--neigh",
                          d / "neigh.txt", "--next")),
        NfSpec("monitor", ("--report", d / "report.json"))])
    return pkts, run, (d / "report.json")


def predicted(pkts):
    allowed, hits, fw = model(pkts, stateful=False, default_allow=False)
    routes = [(ipaddress.ip_network(w[0]), "drop" if w[1] == "drop" else 1,
               None if w[1] == "drop" else ipaddress.ip_address(w[2]))
              for w in (line.split() for line in ROUTES.splitlines())]
    neigh = {ipaddress.ip_address(w[0]): w[1]
             for w in (line.split() for line in NEIGH.splitlines()) if w[0] != "port"}
    out, why = [], {}
    for f in allowed:
        port, res = expect(f, routes, neigh)
        if port is None:
            why[res] = why.get(res, 0) + 1
        else:
            out.append(res)
    return out, hits, fw, why


def test_chain_output_is_firewall_then_router(chained):
    pkts, run, _ = chained
    out, _, fw, why = predicted(pkts)
    assert run.core_rc == 0 and all(rc == 0 for rc in run.nf_rcs.values())
    assert 0 < len(out) < fw["allowed"] < len(pkts)
    assert set(why) == {"blackhole"}            # all else is routable
    assert run.outs[0] == out


def test_chain_every_nf_counts_what_reached_it(chained):
    pkts, run, report = chained
    out, hits, fw, why = predicted(pkts)
    c = run.counters
    assert c["firewall"]["packets"] == len(pkts)
    assert c["firewall"]["allowed"] == fw["allowed"]
    got_hits = [int(l.split()[3]) for l in run.lines("firewall") if l.startswith("rule ")]
    assert got_hits == hits
    assert c["router"]["packets"] == fw["allowed"]
    assert (c["router"]["routed"], c["router"]["blackhole"]) == (len(out), why["blackhole"])
    rep = json.loads(report.read_text())
    assert rep["packets"] == c["monitor"]["packets"] == len(out)
    truth = {}
    for f in out:
        pk, by = truth.get(true_key(f), (0, 0))
        truth[true_key(f)] = (pk + 1, by + len(f))
    assert {(f["proto"], f["src"], f["sport"], f["dst"], f["dport"]):
            (f["packets"], f["bytes"]) for f in rep["flow_list"]} == truth
    nfs = {n["name"]: n for n in run.stats["nfs"]}
    assert nfs["firewall"]["tx"] == fw["allowed"]
    assert nfs["router"]["tx"] == nfs["monitor"]["rx"] == len(out)
