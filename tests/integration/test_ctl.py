# SPDX-License-Identifier: BSD-3-Clause
"""xnv-ctl, the operator's client of xnv-core's telemetry control plane,
against a real core with endless traffic: port in (a pcap of two IPv4 flows,
replayed) -> fwd-a -> port out (net_null1), a spare service fwd-b with its
own forwarder, and a second trust group without ports.  Every command's
output is checked against that known state (and --json against the table);
flow rules (added live, or reloaded from [flow NAME] sections) and chain set
move real traffic; bad inputs fail with one line and change nothing; no
core, or one that does not answer, is one clear line too; DPDK's own
dpdk-telemetry.py sees the /xnv/ commands, the ones the core's command
table and CONTROL.md list."""
import contextlib
import itertools
import json
import re
import shlex
import socket
import threading
import time
from pathlib import Path

import pytest

from harness import CTL_BIN, REPO, nf_env, wait_until, write_config
from traffic import write_pcap

POOL_G, POOL_R = 4096, 1024
CHAIN = "fwd-a -> out"
# The traffic of port in: two flows (proto, src, sport, dst, dport).
DNS = ("udp", "10.0.0.1", 1000, "10.0.0.2", 53)
WEB = ("tcp", "10.0.0.3", 2000, "10.0.0.4", 80)
# Patience for each reply: on a crowded machine the core's loop and its
# telemetry threads can wait seconds to run (seen with load 9 on 2 CPUs).
TIMEOUT = ("--timeout", "30")
DPDK_TELEMETRY = Path("/usr/bin/dpdk-telemetry.py")


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


# --------------------------------------------------------------------------
# finding the core

def test_socket_and_file_prefix_find_the_core(ctl):
    prefix = ctl.core.runtime_dir().name
    by_socket = ctl.json("info")
    assert by_socket["socket"] == str(ctl.env.socket)
    r = ctl.env.run([CTL_BIN, "--file-prefix", prefix, "info", "--json", *TIMEOUT], timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["socket"] == str(ctl.env.socket)
    # $XNV_SOCKET, as for NFs
    r = ctl.env.run([CTL_BIN, "--json", "info", *TIMEOUT], timeout=120,
                    env={**nf_env(), "XNV_SOCKET": str(ctl.env.socket)})
    assert r.returncode == 0 and json.loads(r.stdout)["socket"] == str(ctl.env.socket)


def test_no_core_one_clear_line(xnv):
    sock = xnv.sockdir / "nobody.sock"
    r = xnv.run([CTL_BIN, "--socket", sock, "nfs"])
    assert r.returncode == 1 and r.stdout == ""
    assert re.fullmatch(r"xnv-ctl: no xnv-core answering at \S+/dpdk/xnv-[0-9a-f]{8}/"
                        rf"dpdk_telemetry\.v2 \(is it running with --socket "
                        rf"{re.escape(str(sock))}\?\)\n", r.stderr), r.stderr
    r = xnv.run([CTL_BIN, "--file-prefix", "xnv-nobody", "info"])
    assert r.returncode == 1
    assert r.stderr.endswith("(is it running with --file-prefix xnv-nobody?)\n")


BUSY = {"error": "xnv-core did not answer within 2 s", "busy": 1}  # ctl.c, loop late


def fake_telemetry(env, name, replies):
    """A telemetry socket for `xnv-ctl --file-prefix name` with
    RUNTIME_DIRECTORY=env.sockdir.  replies None: it never accepts (backlog
    full); else it greets one client and answers its requests with replies
    (an item None: the command is unknown), then goes silent."""
    path = env.sockdir / "dpdk" / name / "dpdk_telemetry.v2"
    path.parent.mkdir(parents=True)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(str(path))
    srv.listen(1)
    held = [srv]

    def serve():
        c, _ = srv.accept()
        held.append(c)
        with contextlib.suppress(OSError):      # the client left
            c.send(json.dumps({"version": "fake", "pid": 1, "max_output_len": 16384}).encode())
            for reply in replies:
                req = c.recv(1024)
                if not req:
                    return
                c.send(json.dumps({req.decode().split(",")[0]: reply}).encode())
            c.recv(1024)
    if replies is not None:
        threading.Thread(target=serve, daemon=True).start()
    else:                       # fill the backlog: more connections wait
        for _ in range(3):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            c.setblocking(False)
            try:
                c.connect(str(path))
                held.append(c)
            except BlockingIOError:
                c.close()
    return held


@pytest.mark.parametrize("replies,status,out,waits", [
    ([], 1, "xnv-ctl: xnv-core did not answer within 0.5 s", True),
    (None, 1, r"xnv-ctl: xnv-core accepted no connection at \S+ within 0.5 s", True),
    (itertools.repeat(BUSY), 1, "xnv-ctl: xnv-core did not answer within 2 s", True),
    ([BUSY, BUSY, {"version": "0.1.0"}], 0, r"KEY\s+VALUE\nversion\s+0\.1\.0", False),
    ([None], 1, r"xnv-ctl: the core does not know /xnv/info \(not an xnv-core, or an older one\)",
     False)],
    ids=["mute", "backlog-full", "always-busy", "busy-then-answer", "not-xnv"])
def test_core_not_answering(xnv, replies, status, out, waits):
    """One clear line (or the answer, once a busy core makes it) within
    about --timeout; a command the core withdrew as too late is asked again."""
    held = fake_telemetry(xnv, "xnv-fake", replies)
    try:
        t0 = time.monotonic()
        r = xnv.run([CTL_BIN, "--file-prefix", "xnv-fake", "--timeout", "0.5", "info"],
                    env={**nf_env(), "RUNTIME_DIRECTORY": str(xnv.sockdir)})
        took = time.monotonic() - t0
    finally:
        for sock in held:
            sock.close()
    assert r.returncode == status, r
    assert re.fullmatch(out, (r.stderr or r.stdout).strip()), r
    assert took < 10
    assert took >= 0.5 or not waits, "gave up before --timeout"


# --------------------------------------------------------------------------
# read-only views

def test_info(ctl):
    info = ctl.json("info")
    assert info["version"] == "0.1.0"
    assert (info["n_ports"], info["n_groups"], info["n_services"],
            info["n_nfs"], info["n_flows"]) == (2, 2, 2, 2, 0)
    kv = {r["KEY"]: r["VALUE"] for r in ctl.table("info")}
    assert kv["socket"] == str(ctl.env.socket)
    for k in ("version", "n_ports", "n_groups", "n_services", "n_nfs", "burst",
              "ring_size"):
        assert kv[k] == str(info[k])


def test_nfs(ctl):
    rows = ctl.table("nfs")
    js = ctl.json("nfs")                # after the table: counters only grow
    want = [("0", "fwd-a-1", "fwd-a"), ("1", "fwd-b-1", "fwd-b")]
    assert [(r["ID"], r["NAME"], r["SERVICE"]) for r in rows] == want
    assert [(str(n["id"]), n["name"], n["service"]) for n in js] == want
    assert [n["pid"] for n in js] == [nf.pid for nf in ctl.nfs]
    for r, n in zip(rows, js):
        assert r["GROUP"] == n["group"] == "g"
        assert r["INST"] == str(n["instance"]) == "0"
        assert r["STATE"] == n["state"] == "attached"
        for col, key in (("RX", "rx"), ("TX", "tx"), ("DROP", "drop"), ("BAD", "bad")):
            assert 0 <= int(r[col]) <= n[key]
        used, size = map(int, r["RX_RING"].split("/"))
        assert size == n["ring_size"] and 0 <= used <= size
    fa, fb = js
    assert fa["rx"] > 10_000 and fa["bad"] == 0
    assert fb["rx"] == 0, "fwd-b is on no chain yet"


def test_ports(ctl):
    rows = ctl.table("ports")
    js = ctl.json("ports")
    assert [(r["ID"], r["NAME"], r["DEV"], r["GROUP"], r["CHAIN"]) for r in rows] == \
        [("0", "in", ctl.dev_in, "g", CHAIN), ("1", "out", "net_null1", "g", "-")]
    assert [(p["index"], p["name"], p["dev"], p["group"], p["chain"]) for p in js] == \
        [(0, "in", ctl.dev_in, "g", CHAIN.split(" -> ")), (1, "out", "net_null1", "g", [])]
    assert 0 < int(rows[0]["RX"]) <= js[0]["rx"]
    assert 0 < int(rows[1]["TX"]) <= js[1]["tx"]


def test_groups(ctl):
    rows = ctl.table("groups")
    js = ctl.json("groups")
    assert [(r["ID"], r["NAME"], r["POOL"]) for r in rows] == \
        [("0", "g", str(POOL_G)), ("1", "r", str(POOL_R))]
    assert [(g["index"], g["name"], g["pool_bufs"]) for g in js] == \
        [(0, "g", POOL_G), (1, "r", POOL_R)]
    assert int(rows[1]["FREE"]) == js[1]["free"] == POOL_R, "group r is idle"
    assert 0 <= js[0]["free"] <= POOL_G
    assert [g["copies_to"] for g in js] == [[0, 0], [0, 0]]
    assert [r["COPIES_TO"] for r in rows] == ["0,0", "0,0"]


def test_services(ctl):
    rows = ctl.table("services")
    js = ctl.json("services")
    assert [(r["NAME"], r["INSTANCES"]) for r in rows] == [("fwd-a", "0"), ("fwd-b", "1")]
    assert [(s["name"], s["instances"]) for s in js] == [("fwd-a", [0]), ("fwd-b", [1])]
    assert [r["ID"] for r in rows] == [str(s["id"]) for s in js]


def test_stats(ctl):
    kv = {r["KEY"]: int(r["VALUE"]) for r in ctl.table("stats")}
    js = ctl.json("stats")
    assert set(kv) == set(js)
    assert {"rx", "tx", "nf_rx", "nf_tx", "copies", "drop_no_instance",
            "drop_bad_desc", "log_dropped"} <= set(js)
    assert 10_000 < kv["rx"] <= js["rx"] and 10_000 < kv["nf_rx"] <= js["nf_rx"]
    assert js["copies"] == js["drop_bad_desc"] == js["log_dropped"] == 0


def test_control(ctl):
    """The control plane's counters: the NFs of this fixture attached
    through callbacks run on the data path; nothing was refused."""
    kv = {r["KEY"]: r["VALUE"] for r in ctl.table("control")}
    js = ctl.json("control")
    assert set(kv) == set(js)
    assert js["backend"] == "host"
    assert js["connections"] >= 2 and js["waiting"] == 0
    assert js["requests"] >= js["callbacks"] >= 2
    assert js["refused"] == js["timed_out"] == js["evicted"] == 0
    assert js["events"] == js["events_deferred"] == 0     # xen only


def test_json_option_anywhere(ctl):
    before = ctl.run("--json", "groups")
    after = ctl.run("groups", "--json")
    assert before.returncode == after.returncode == 0
    assert [g["name"] for g in json.loads(before.stdout)] == \
        [g["name"] for g in json.loads(after.stdout)] == ["g", "r"]


# --------------------------------------------------------------------------
# flow rules

FIELDS = ("priority", "in_port", "vlan", "proto", "src", "dst", "sport", "dport")
COLUMNS = ("PRIO", "IN_PORT", "VLAN", "PROTO", "SRC", "DST", "SPORT", "DPORT")
ANY = {"priority": "32768", **{k: "any" for k in FIELDS[1:]}}


def rule_text(**fields):
    """A rule as xnv-ctl prints it: every field written, `any` by default."""
    fields = {**ANY, **{k: str(v) for k, v in fields.items()}}
    return " ".join(f"{k}={fields[k]}" for k in FIELDS)


def added(out):
    """(id, rule, chain) of `flow add`'s line."""
    m = re.fullmatch(r"added flow rule (\d+): (priority=.*) chain (.*)\n", out)
    assert m, out
    return int(m.group(1)), m.group(2), m.group(3)


def row_of(rule, chain, rid, name="-"):
    """The `flow list` row of a rule written as rule_text() writes it, but
    its hits."""
    fields = dict(kv.split("=", 1) for kv in rule.split())
    return {"ID": str(rid), "NAME": name, **{c: fields[k] for c, k in zip(COLUMNS, FIELDS)},
            "CHAIN": chain}


def no_hits(row):
    return {k: v for k, v in row.items() if k != "HITS"}


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
# live views and chain changes

def watch_blocks(text):
    """The blocks `watch` printed when stdout is not a tty."""
    blocks = [b for b in text.split("\n\n") if b.strip()]
    out = []
    for b in blocks:
        lines = b.splitlines()
        assert re.fullmatch(r"\d\d:\d\d:\d\d rates over \d+\.\d\d s", lines[0]), b
        i = next(k for k, ln in enumerate(lines) if ln.startswith("NF "))
        drops = re.fullmatch(r"core drops/s: (\d+)( \(.*\))?", lines[-1])
        assert drops, b
        out.append({"ports": {r["PORT"]: r for r in parse_table("\n".join(lines[1:i]))},
                    "nfs": {r["NAME"]: r for r in parse_table("\n".join(lines[i:-1]))},
                    "drops": int(drops.group(1))})
    return out


def test_watch_two_blocks_with_rates(ctl):
    t0 = time.monotonic()
    blocks = watch_blocks(ctl.ok("watch", "--interval", "0.3", "--count", "2"))
    took = time.monotonic() - t0
    assert len(blocks) == 2 and 0.6 <= took < 90
    for b in blocks:
        assert int(b["ports"]["in"]["RX_PPS"]) > 1000
        assert int(b["ports"]["out"]["TX_PPS"]) > 1000
        assert int(b["nfs"]["fwd-a-1"]["RX_PPS"]) > 1000
        assert int(b["nfs"]["fwd-a-1"]["TX_PPS"]) > 1000
        assert b["nfs"]["fwd-b-1"]["RX_PPS"] == "0"
        assert b["drops"] == 0


def test_watch_json_lines(ctl):
    lines = ctl.ok("watch", "--json", "--interval", "0.2", "--count", "2").splitlines()
    assert len(lines) == 2
    for r in map(json.loads, lines):
        assert 0.1 < r["interval_s"] < 60
        ports = {p["name"]: p for p in r["ports"]}
        nfs = {n["name"]: n for n in r["nfs"]}
        assert ports["in"]["rx_pps"] > 1000 and ports["out"]["tx_pps"] > 1000
        assert nfs["fwd-a-1"]["rx_pps"] > 1000 and nfs["fwd-b-1"]["rx_pps"] == 0
        assert r["core_drops_per_s"] == sum(r["drops_per_s"].values()) == 0


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


# --------------------------------------------------------------------------
# bad input: one line on stderr, exit != 0, nothing changed

BAD = [
    (["bogus"], 2, r"xnv-ctl: argument COMMAND: invalid choice: 'bogus' .*"),
    ([], 2, r"xnv-ctl: the following arguments are required: COMMAND .*"),
    (["flow"], 2, r"xnv-ctl flow: the following arguments are required: .*"),
    (["chain", "set", "nosuch", "fwd-b -> out"], 1, r"xnv-ctl: no port named 'nosuch'"),
    (["chain", "set", "in", "fwd-x -> out"], 1, r"xnv-ctl: chain step 'fwd-x' is not .*"),
    (["chain", "set", "in"], 2, r"xnv-ctl: chain set: usage: chain set PORT STEPS"),
    (["chain", "set", "in", "fwd-b", "-"], 2,      # what the shell leaves of: fwd-b -> out
     r"xnv-ctl: chain set: chain ends in '-': quote it .*"),
    (["watch", "--count", "-1"], 2, r"xnv-ctl watch: argument --count: '-1' is not an integer >= 0 .*"),
    (["watch", "--interval", "0"], 2, r"xnv-ctl watch: argument --interval: '0' is not a number > 0 .*"),
    (["nfs", "extra"], 2, r"xnv-ctl: unrecognized arguments: extra .*"),
]


@pytest.mark.parametrize("argv,status,msg", BAD, ids=[" ".join(a) or "-" for a, _, _ in BAD])
def test_bad_input(ctl, argv, status, msg):
    before = ctl.state()
    r = ctl.run(*argv)
    assert (r.returncode, r.stdout) == (status, ""), (r.returncode, r.stdout, r.stderr)
    assert len(r.stderr.splitlines()) == 1 and re.fullmatch(msg, r.stderr.strip()), r.stderr
    assert ctl.state() == before
    assert ctl.core.alive()


# The rules in force while BAD_FLOW runs: an exact one and a wildcard one.
EXACT = ["proto=udp", "src=10.7.0.1", "dst=10.7.0.2", "sport=1", "dport=2"]
WILD = ["priority=5", "vlan=9"]
RULE = r"xnv-ctl: flow rule: "

BAD_FLOW = [
    # flow add: the core names the field and what it takes
    (["add", "proto=udp", "src=10.0.0.x", "dst=10.0.0.2", "chain", "fwd-b -> out"], 1,
     RULE + r"src '10\.0\.0\.x' is not an IPv4 or IPv6 address\[/prefix length\]"),
    (["add", "dst=10.0.0.0/33", "chain", "drop"], 1,
     RULE + r"dst '10\.0\.0\.0/33' is not an IPv4 or IPv6 address\[/prefix length\]"),
    (["add", "priority=70000", "chain", "drop"], 1, RULE + r"priority '70000' is not 0\.\.65535"),
    (["add", "priority=any", "chain", "drop"], 1, RULE + r"priority 'any' is not 0\.\.65535"),
    (["add", "vlan=4096", "chain", "drop"], 1, RULE + r"vlan '4096' is not 0\.\.4095, none or any"),
    (["add", "in_port=nosuch", "chain", "drop"], 1,
     RULE + r"in_port 'nosuch' is not a port of this core"),
    (["add", "proto=bogus", "chain", "drop"], 1, RULE + r"proto 'bogus' is not a name \(tcp, .*"),
    (["add", "tcp", "sport=2000-1000", "chain", "drop"], 1,
     RULE + r"sport '2000-1000' is not a port, a range FIRST-LAST of ports \(0\.\.65535\) or any"),
    (["add", "dport=53", "chain", "drop"], 1, RULE + r"sport/dport need proto tcp, udp or sctp"),
    (["add", "icmp", "sport=7", "chain", "drop"], 1,
     RULE + r"sport/dport need proto tcp, udp or sctp"),
    (["add", "src=10.0.0.1", "dst=2001:db8::1", "chain", "drop"], 1,
     RULE + r"src= and dst= are of different families \(IPv4 and IPv6\)"),
    (["add", "udp", "proto=tcp", "chain", "drop"], 1, RULE + r"proto given twice"),
    (["add", "dport=", "udp", "chain", "drop"], 1, RULE + r"'dport=' is not KEY=VALUE"),
    # the rule in force, written otherwise
    (["add", "proto=17", "src=10.7.0.1/32", "dst=10.7.0.2", "sport=1-1", "dport=2",
      "vlan=any", "chain", "drop"], 1, r"xnv-ctl: rule \d+ matches the same at the same priority"),
    (["add", "proto=udp", "src=10.0.0.1", "dst=10.0.0.2", "chain", "nosuch -> out"], 1,
     r"xnv-ctl: chain step 'nosuch' is not a declared service, a port, or 'drop'"),
    # caught by xnv-ctl
    (["add", "proto=udp", "src=10.0.0.1", "dst=10.0.0.2"], 2,
     r"xnv-ctl: flow add: missing chain STEPS .*"),
    (["add", "udp", "chain"], 2, r"xnv-ctl: flow add: no chain steps given .*"),
    (["add", "udp", "chain", "fwd-b", "-"], 2, r"xnv-ctl: flow add: chain ends in '-'.*"),
    (["add", "prot=udp", "chain", "out"], 2, r"xnv-ctl: flow add: 'prot=udp' is not KEY=VALUE .*"),
    (["add", "dns", "chain", "out"], 2, r"xnv-ctl: flow add: 'dns' is not KEY=VALUE .*"),
    # del, clear, reload, list
    (["del", "999"], 1, r"xnv-ctl: no flow rule 999"),
    (["del", "0"], 1, r"xnv-ctl: no flow rule 0"),
    (["del", "x"], 2, r"xnv-ctl flow del: argument ID: invalid int value: 'x' .*"),
    (["del"], 2, r"xnv-ctl flow del: the following arguments are required: ID .*"),
    (["clear", "all"], 2, r"xnv-ctl: unrecognized arguments: all .*"),
    (["reload", "other.ini"], 2, r"xnv-ctl: unrecognized arguments: other\.ini .*"),
    (["list", "1"], 2, r"xnv-ctl: unrecognized arguments: 1 .*"),
    (["bogus"], 2,
     r"xnv-ctl flow: argument list\|add\|del\|clear\|reload: invalid choice: 'bogus' .*"),
]


@pytest.fixture
def two_rules(ctl, no_flows):
    """EXACT and WILD in force (neither matches the traffic)."""
    for spec in (EXACT, WILD):
        added(ctl.ok("flow", "add", *spec, "chain", "fwd-b -> out"))
    assert len(ctl.json("flow", "list")) == 2


@pytest.mark.parametrize("argv,status,msg", BAD_FLOW,
                         ids=[" ".join(a) for a, _, _ in BAD_FLOW])
def test_bad_flow_input(ctl, two_rules, argv, status, msg):
    before = ctl.state()
    r = ctl.run("flow", *argv)
    assert (r.returncode, r.stdout) == (status, ""), (r.returncode, r.stdout, r.stderr)
    assert len(r.stderr.splitlines()) == 1 and re.fullmatch(msg, r.stderr.strip()), r.stderr
    assert ctl.state() == before
    assert ctl.core.alive()


@pytest.mark.parametrize("argv", [[], ["info"], ["ports"], ["groups"], ["services"],
                                  ["nfs"], ["stats"], ["control"], ["watch"], ["flow"], ["flow", "list"],
                                  ["flow", "add"], ["flow", "del"], ["flow", "clear"],
                                  ["flow", "reload"], ["chain"],
                                  ["chain", "set"]], ids=lambda a: " ".join(a) or "top")
def test_help(xnv, argv):
    r = xnv.run([CTL_BIN, *argv, "--help"])
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith(f"usage: {' '.join(['xnv-ctl', *argv])} ")
    assert "--socket PATH" in r.stdout and "--json" in r.stdout


# --------------------------------------------------------------------------
# DPDK's own client

def test_dpdk_telemetry_py_sees_xnv_commands(ctl):
    if not DPDK_TELEMETRY.exists():
        pytest.skip(f"{DPDK_TELEMETRY} not installed (Debian package dpdk)")
    prefix = ctl.core.runtime_dir().name
    r = ctl.env.run([DPDK_TELEMETRY, "-f", prefix], input="/\n/xnv/info\n", timeout=120)
    assert r.returncode == 0, r.stderr
    listing, info = map(json.loads, r.stdout.splitlines())
    # what the core registered, its command table, CONTROL.md's rows: the same
    rows = re.findall(r"^\| `(/xnv/[a-z/]+)`", (REPO / "dom0-core" / "CONTROL.md").read_text(),
                      re.M)
    table = re.findall(r'^\s*\{ "(/xnv/[a-z/]+)",', (REPO / "dom0-core" / "ctl_cmds.c").read_text(),
                       re.M)
    assert len(rows) == len(set(rows)) and len(table) == len(set(table))
    assert "/xnv/nf/list" in listing["/"]
    assert {c for c in listing["/"] if c.startswith("/xnv/")} == set(table) == set(rows)
    assert len(table) == 31     # a new command: a row in CONTROL.md, and here
    assert {"/xnv/flow/clear", "/xnv/flow/reload"} <= set(rows)
    assert info["/xnv/info"]["socket"] == str(ctl.env.socket)
    assert info["/xnv/info"]["n_nfs"] == 2
