# SPDX-License-Identifier: BSD-3-Clause
"""xnv-ctl's views, against a real core with endless traffic (ctlenv.py's
scenario: port in -> fwd-a -> port out, a spare service fwd-b, a second
trust group without ports): how xnv-ctl finds the core (--socket,
--file-prefix, $XNV_SOCKET); no core, or one that does not answer (a
silent, busy or foreign telemetry socket), is one clear line; every
read-only view (info, nfs, ports, groups, services, stats, control) against
that known state, and --json against the table; watch, as blocks and as
JSON lines; DPDK's own dpdk-telemetry.py sees the /xnv/ commands, the ones
the core's command table and CONTROL.md list."""
import contextlib
import itertools
import json
import re
import socket
import threading
import time
from pathlib import Path

import pytest

from ctlenv import CHAIN, POOL_G, POOL_R, TIMEOUT, ctl, parse_table  # noqa: F401 (fixture)
from harness import CTL_BIN, REPO, nf_env

DPDK_TELEMETRY = Path("/usr/bin/dpdk-telemetry.py")


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
# live views

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
    assert len(table) == 33     # a new command: a row in CONTROL.md, and here
    assert {"/xnv/flow/clear", "/xnv/flow/reload"} <= set(rows)
    assert info["/xnv/info"]["socket"] == str(ctl.env.socket)
    assert info["/xnv/info"]["n_nfs"] == 2
