# SPDX-License-Identifier: BSD-3-Clause
"""What the xnv-ctl tests (test_ctl_*.py) share: xnv-ctl pointed at a core
(`CtlClient`), and the scenario most of them run against, the module
fixture `ctl`: a real core with endless traffic, port in (a pcap of two
IPv4 flows, `flow_frames()`, replayed) -> fwd-a -> port out (net_null1), a
spare service fwd-b with its own forwarder, and a second trust group
without ports (`Ctl`: the scenario and xnv-ctl pointed at it).  Also the
table parser (`parse_table()`), `added()` (the id, rule and chain of `flow
add`'s line) and the fixture `no_flows` (a test that starts and ends with
no flow rules).  A test module imports the fixtures it uses."""
import json
import re

import pytest

from harness import CTL_BIN, wait_until, write_config
from traffic import write_pcap

POOL_G, POOL_R = 4096, 1024
CHAIN = "fwd-a -> out"
# The traffic of port in: two flows (proto, src, sport, dst, dport).
DNS = ("udp", "10.0.0.1", 1000, "10.0.0.2", 53)
WEB = ("tcp", "10.0.0.3", 2000, "10.0.0.4", 80)
# Patience for each reply: on a crowded machine the core's loop and its
# telemetry threads can wait seconds to run (seen with load 9 on 2 CPUs).
TIMEOUT = ("--timeout", "30")


class CtlClient:
    """xnv-ctl pointed at the core on the env's socket."""

    def __init__(self, env):
        self.env = env

    def run(self, *args):
        return self.env.run([CTL_BIN, "--socket", self.env.socket, *TIMEOUT, *args],
                            timeout=120)

    def ok(self, *args):
        """stdout of a command that must succeed quietly."""
        r = self.run(*args)
        assert r.returncode == 0 and r.stderr == "", (args, r.returncode, r.stderr)
        return r.stdout

    def json(self, *args):
        return json.loads(self.ok(*args, "--json"))


class Ctl(CtlClient):
    """The running scenario, and xnv-ctl pointed at it."""

    def __init__(self, env, core, nfs, cfg, sections, dev_in):
        super().__init__(env)
        self.core, self.nfs = core, nfs
        self.cfg, self.sections, self.dev_in = cfg, sections, dev_in

    def write_flows(self, flows):
        """The core's config file again, with these [flow NAME] sections
        ([(name, {key: value})]) after its own: what `flow reload` reads."""
        write_config(self.cfg, self.sections + [(f"flow {n}", kv) for n, kv in flows])


    def table(self, *args):
        return parse_table(self.ok(*args))

    def state(self):
        """What a bad command must leave as it was (hit counters may grow)."""
        return {"flows": [{k: v for k, v in f.items() if k != "hits"}
                          for f in self.json("flow", "list")],
                "n_flows": self.json("info")["n_flows"],
                "chains": {p["name"]: p["chain"] for p in self.json("ports")},
                "nfs": [(n["id"], n["name"], n["state"]) for n in self.json("nfs")]}

    def flows(self):
        """flow list's table, and its --json, by id (the table first: hits
        only grow)."""
        rows = {r["ID"]: r for r in self.table("flow", "list")}
        return rows, {str(f["id"]): f for f in self.json("flow", "list")}

    def hits(self, rid):
        return {f["id"]: f["hits"] for f in self.json("flow", "list")}[rid]


def parse_table(text):
    """Rows of an xnv-ctl table as dicts: columns are 2+ spaces apart."""
    lines = [re.split(r"\s{2,}", ln.strip()) for ln in text.splitlines() if ln.strip()]
    head, rows = lines[0], lines[1:]
    assert all(len(r) == len(head) for r in rows), text
    return [dict(zip(head, r)) for r in rows]


def flow_frames():
    """One frame of each of DNS and WEB."""
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw

    out = []
    for proto, src, sport, dst, dport in (DNS, WEB):
        l4 = (UDP if proto == "udp" else TCP)(sport=sport, dport=dport)
        out.append(bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") /
                         IP(src=src, dst=dst) / l4 / Raw(b"x" * 32)))
    return out


@pytest.fixture(scope="module")
def ctl(xnv_module):
    env = xnv_module
    pcap = write_pcap(env.path("ctl-in.pcap"), flow_frames())
    dev_in = f"net_pcap0,rx_pcap={pcap},infinite_rx=1"
    sections = [
        ("core", {"socket": env.socket}),
        ("group g", {"pool_bufs": POOL_G}),
        ("group r", {"pool_bufs": POOL_R}),
        ("port in", {"dev": dev_in, "group": "g", "chain": CHAIN}),
        ("port out", {"dev": "net_null1", "group": "g"}),
        ("service fwd-a", {}),
        ("service fwd-b", {}),
    ]
    cfg = write_config(env.path("ctl.ini"), sections)
    core = env.start_core(cfg, duration=600)
    core.wait_ready()
    nfs = []
    for s in ("fwd-a", "fwd-b"):        # in this order: NF ids 0 and 1
        nfs.append(env.start_nf(s, "g", f"{s}-1"))
        core.wait_attached(nfs[-1])
    wait_until(lambda: core.snapshot()["ports"]["out"]["tx"] > 10_000, 10,
               "traffic through fwd-a")
    return Ctl(env, core, nfs, cfg, sections, dev_in)


def added(out):
    """(id, rule, chain) of `flow add`'s line."""
    m = re.fullmatch(r"added flow rule (\d+): (priority=.*) chain (.*)\n", out)
    assert m, out
    return int(m.group(1)), m.group(2), m.group(3)


@pytest.fixture
def no_flows(ctl):
    """The test starts without flow rules; it leaves none, and the config
    file without [flow] sections."""
    assert ctl.json("flow", "list") == []
    yield
    ctl.write_flows([])
    r = ctl.run("flow", "clear")
    assert r.returncode == 0, r.stderr
    assert ctl.json("flow", "list") == [] and ctl.json("info")["n_flows"] == 0
