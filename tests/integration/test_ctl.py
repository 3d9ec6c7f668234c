# SPDX-License-Identifier: BSD-3-Clause
"""xnv-ctl, the operator's client of xnv-core's telemetry control plane,
against a real core with endless traffic: port in (net_null0) -> fwd-a -> port
out (net_null1), a spare service fwd-b with its own forwarder, and a second
trust group without ports.  Every command's output is checked against that
known state (and --json against the table); chain set moves real traffic;
bad inputs fail with one line and change nothing; no core, or one that does
not answer, is one clear line too; DPDK's own dpdk-telemetry.py sees the
/xnv/ commands."""
import contextlib
import itertools
import json
import re
import socket
import threading
import time
from pathlib import Path

import pytest

from harness import CTL_BIN, REPO, nf_env, wait_until, write_config

POOL_G, POOL_R = 4096, 1024
CHAIN = "fwd-a -> out"
# Patience for each reply: on a crowded machine the core's loop and its
# telemetry threads can wait seconds to run (seen with load 9 on 2 CPUs).
TIMEOUT = ("--timeout", "30")
DPDK_TELEMETRY = Path("/usr/bin/dpdk-telemetry.py")


class Ctl:
    """The running scenario, and xnv-ctl pointed at it."""

    def __init__(self, env, core, nfs):
        self.env, self.core, self.nfs = env, core, nfs

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

    def table(self, *args):
        return parse_table(self.ok(*args))

    def state(self):
        """What a bad command must leave as it was."""
        return {"flows": self.json("flow", "list"),
                "chains": {p["name"]: p["chain"] for p in self.json("ports")},
                "nfs": [(n["id"], n["name"], n["state"]) for n in self.json("nfs")]}


def parse_table(text):
    """Rows of an xnv-ctl table as dicts: columns are 2+ spaces apart."""
    lines = [re.split(r"\s{2,}", ln.strip()) for ln in text.splitlines() if ln.strip()]
    head, rows = lines[0], lines[1:]
    assert all(len(r) == len(head) for r in rows), text
    return [dict(zip(head, r)) for r in rows]


@pytest.fixture(scope="module")
def ctl(xnv_module):
    env = xnv_module
    cfg = write_config(env.path("ctl.ini"), [
        ("core", {"socket": env.socket}),
        ("group g", {"pool_bufs": POOL_G}),
        ("group r", {"pool_bufs": POOL_R}),
        ("port in", {"dev": "net_null0", "group": "g", "chain": CHAIN}),
        ("port out", {"dev": "net_null1", "group": "g"}),
        ("service fwd-a", {}),
        ("service fwd-b", {}),
    ])
    core = env.start_core(cfg, duration=600)
    core.wait_ready()
    nfs = []
    for s in ("fwd-a", "fwd-b"):        # in this order: NF ids 0 and 1
        nfs.append(env.start_nf(s, "g", f"{s}-1"))
        core.wait_attached(nfs[-1])
    wait_until(lambda: core.snapshot()["ports"]["out"]["tx"] > 10_000, 10,
               "traffic through fwd-a")
    return Ctl(env, core, nfs)


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
    assert r.returncode == 2 and r.stdout == ""
    assert re.fullmatch(r"xnv-ctl: no xnv-core answering at \S+/dpdk/xnv-[0-9a-f]{8}/"
                        rf"dpdk_telemetry\.v2 \(is it running with --socket "
                        rf"{re.escape(str(sock))}\?\)\n", r.stderr), r.stderr
    r = xnv.run([CTL_BIN, "--file-prefix", "xnv-nobody", "info"])
    assert r.returncode == 2
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
        [("0", "in", "net_null0", "g", CHAIN), ("1", "out", "net_null1", "g", "-")]
    assert [(p["index"], p["name"], p["dev"], p["group"], p["chain"]) for p in js] == \
        [(0, "in", "net_null0", "g", CHAIN.split(" -> ")), (1, "out", "net_null1", "g", [])]
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

def test_flow_add_list_del(ctl):
    match = "proto=udp src=10.0.0.1 dst=10.0.0.2 sport=1000 dport=53"
    out = ctl.ok("flow", "add", *match.split(), "chain=fwd-b -> out")
    rid = int(re.fullmatch(r"added flow rule (\d+)\n", out).group(1))
    try:
        (row,) = ctl.table("flow", "list")
        assert row == {"ID": str(rid), "HITS": "0", "MATCH": match, "CHAIN": "fwd-b -> out"}
        (js,) = ctl.json("flow", "list")
        assert (js["id"], js["chain"], js["hits"]) == (rid, ["fwd-b", "out"], 0)
        assert (js["proto"], js["src"], js["dst"], js["sport"], js["dport"]) == \
            (17, "10.0.0.1", "10.0.0.2", 1000, 53)
        assert ctl.json("info")["n_flows"] == 1
        # the same flow again: refused, names the rule
        r = ctl.run("flow", "add", *match.split(), "chain", "fwd-a", "out")
        assert (r.returncode, r.stdout) == (1, "")
        assert r.stderr == f"xnv-ctl: a rule for this flow exists (id {rid})\n"
        # another flow, steps as words, proto as a word, IPv6, --json
        r2 = ctl.json("flow", "add", "tcp", "src=2001:db8::1", "dst=2001:db8::2",
                      "dport=80", "chain", "fwd-a", "fwd-b", "out")
        assert set(r2) == {"id"} and r2["id"] != rid
        rows = {r["ID"]: r for r in ctl.table("flow", "list")}
        assert rows[str(r2["id"])]["MATCH"] == "proto=tcp src=2001:db8::1 dst=2001:db8::2 dport=80"
        assert rows[str(r2["id"])]["CHAIN"] == "fwd-a -> fwd-b -> out"
        assert ctl.ok("flow", "del", str(r2["id"])) == f"removed flow rule {r2['id']}\n"
    finally:
        out = ctl.run("flow", "del", str(rid))
    assert (out.returncode, out.stdout) == (0, f"removed flow rule {rid}\n")
    assert ctl.table("flow", "list") == [] and ctl.json("flow", "list") == []
    assert ctl.json("info")["n_flows"] == 0
    r = ctl.run("flow", "del", str(rid))
    assert (r.returncode, r.stderr) == (1, f"xnv-ctl: no flow rule {rid}\n")


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
    (["flow", "del", "999"], 1, r"xnv-ctl: no flow rule 999"),
    (["flow", "del", "x"], 2, r"xnv-ctl flow del: argument ID: invalid int value: 'x' .*"),
    (["flow", "add", "proto=udp", "src=10.0.0.x", "dst=10.0.0.2", "chain", "fwd-b -> out"],
     1, r"xnv-ctl: flow spec: '10\.0\.0\.x' is not an IPv4 or IPv6 address"),
    (["flow", "add", "proto=udp", "src=10.0.0.1", "dst=10.0.0.2", "chain", "nosuch -> out"],
     1, r"xnv-ctl: chain step 'nosuch' is not a declared service, a port, or 'drop'"),
    (["flow", "add", "proto=udp", "dst=10.0.0.2", "chain", "fwd-b -> out"],
     1, r"xnv-ctl: flow spec needs src=, dst= and proto="),
    (["flow", "add", "proto=udp", "src=10.0.0.1", "dst=10.0.0.2"],
     2, r"xnv-ctl: flow add: missing chain STEPS .*"),
    (["flow", "add", "prot=udp", "chain", "out"], 2, r"xnv-ctl: flow add: 'prot=udp' is not KEY=VALUE .*"),
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


@pytest.mark.parametrize("argv", [[], ["info"], ["ports"], ["groups"], ["services"],
                                  ["nfs"], ["stats"], ["control"], ["watch"], ["flow"], ["flow", "list"],
                                  ["flow", "add"], ["flow", "del"], ["chain"],
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
    documented = set(re.findall(r"^\| `(/xnv/[a-z/]+)`",
                                (REPO / "dom0-core" / "CONTROL.md").read_text(), re.M))
    assert "/xnv/nf/list" in listing["/"]
    assert {c for c in listing["/"] if c.startswith("/xnv/")} == documented
    assert len(documented) == 21
    assert info["/xnv/info"]["socket"] == str(ctl.env.socket)
    assert info["/xnv/info"]["n_nfs"] == 2
