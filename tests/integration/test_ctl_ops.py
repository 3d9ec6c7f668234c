# SPDX-License-Identifier: BSD-3-Clause
"""xnv-ctl commands that change the core's state (dom0-core/ctl_ops.c):
`clear` sets the counters back to 0 and says what it keeps, `chain unset`
stops a port's rx (and `chain set` starts it again), `nf kick` detaches an
NF so that one with --reattach comes back as a new NF and one without
exits 0; each bad input is one line, exit 1 (the core refused) or 2
(usage), and changes nothing.  Traffic: port in (a replayed pcap, paced)
-> fwd-a -> port out (net_null)."""
import json

from ctlenv import TIMEOUT, CtlClient, flow_frames
from harness import CTL_BIN, FWD_BIN, Telemetry, wait_until, write_config
from traffic import write_pcap


class Ctl(CtlClient):
    def port(self, name):
        return {p["name"]: p for p in self.json("ports")}[name]

    def fails(self, status, *args):
        """The one line a refused command prints; the state it left."""
        before = self.json("ports"), [(n["id"], n["state"]) for n in self.json("nfs")]
        r = self.run(*args)
        assert r.returncode == status and r.stdout == "", (args, r)
        assert len(r.stderr.splitlines()) == 1, r.stderr
        after = self.json("ports"), [(n["id"], n["state"]) for n in self.json("nfs")]
        assert [p["chain"] for p in before[0]] == [p["chain"] for p in after[0]]
        assert before[1] == after[1]
        return r.stderr


def scenario(env, reattach=True):
    pcap = write_pcap(env.path("in.pcap"), flow_frames())
    cfg = write_config(env.path("ops.ini"), [
        ("core", {"socket": env.socket}),
        ("group g", {"pool_bufs": 2048}),
        ("port in", {"dev": f"net_pcap0,rx_pcap={pcap},infinite_rx=1", "group": "g",
                     "chain": "fwd-a -> out", "rx_rate": 5000}),
        ("port out", {"dev": "net_null1", "group": "g"}),
        ("service fwd-a", {}),
    ])
    core = env.start_core(cfg, duration=300)
    core.wait_ready()
    nf = env.start_nf("fwd-a", "g", "fwd-a-1", binary=FWD_BIN,
                      extra=("--reattach",) if reattach else ())
    core.wait_attached(nf)
    ctl = Ctl(env)
    wait_until(lambda: ctl.port("out")["tx"] > 500, 30, "traffic through fwd-a")
    return core, nf, ctl


def test_clear_chain_unset_and_kick(xnv):
    core, nf, ctl = scenario(xnv)
    # chain unset: rx stops; unset again, or of no port, refused
    assert ctl.ok("chain", "unset", "in") == "port in: no chain, rx stopped (tx only)\n"
    assert ctl.port("in")["chain"] == []
    t = Telemetry(core, 30)
    still = []

    def quiet():            # rx, and out's tx, the same twice in a row
        still.append((t("/xnv/port/info", 0)["rx"], t("/xnv/port/info", 1)["tx"]))
        return len(still) > 1 and still[-1] == still[-2]
    wait_until(quiet, 30, "rx to stop")
    assert "port in has no chain (tx only already)" in ctl.fails(1, "chain", "unset", "in")
    assert "no port named 'nosuch'" in ctl.fails(1, "chain", "unset", "nosuch")
    assert "required: PORT" in ctl.fails(2, "chain", "unset")

    # clear, with nothing moving: every counter it resets reads 0
    assert ctl.port("in")["rx"] > 0
    out = ctl.ok("clear").splitlines()
    assert out[0] == "counters cleared: ports, NFs, groups, services, drops", out
    assert out[1].startswith("not reset: held (buffers held now: a state); "), out
    for p in ctl.json("ports"):
        assert (p["rx"], p["tx"], p["rx_missed"], p["rx_nombuf"]) == (0, 0, 0, 0), p
    for n in ctl.json("nfs"):
        assert (n["rx"], n["tx"], n["drop"], n["bad"], n["alloc"]) == (0,) * 5, n
    st = ctl.json("stats")
    assert st["rx"] == st["tx"] == st["nf_rx"] == st["nf_tx"] == 0, st
    assert all(v == 0 for k, v in st.items() if k.startswith("drop_")), st
    assert all(s["picks_affinity"] == 0 for s in ctl.json("services"))
    kept = ctl.json("clear")["kept"]
    assert "flow rule hits (reset when a rule is put in force)" in kept
    rx = 0
    # chain set starts it again
    ctl.ok("chain", "set", "in", "fwd-a -> out")
    wait_until(lambda: ctl.port("in")["rx"] > rx + 100, 30, "rx again")

    # nf kick: it comes back (--reattach) as a new NF of the same name
    old = ctl.json("nfs")[0]
    r = ctl.json("nf", "kick", "fwd-a-1")
    assert r == {"id": old["id"], "name": "fwd-a-1"}
    wait_until(lambda: [n for n in ctl.json("nfs") if n["state"] == "attached"], 30,
               "fwd-a-1 back")
    nfs = {n["id"]: n for n in ctl.json("nfs")}
    new = [n for n in nfs.values() if n["state"] == "attached"]
    assert len(new) == 1 and new[0]["name"] == "fwd-a-1" and new[0]["id"] != old["id"]
    if old["id"] in nfs:        # the old record, while it is still on record
        assert nfs[old["id"]]["reason"] == "kicked by the operator (xnv-ctl nf kick)"
    assert nf.alive() and not new[0]["quarantined"]
    tx = ctl.port("out")["tx"]
    wait_until(lambda: ctl.port("out")["tx"] > tx + 100, 30, "traffic after the kick")
    assert "kicked by the operator" in core.log()
    assert "no attached NF 'nosuch'" in ctl.fails(1, "nf", "kick", "nosuch")
    t.close()


def test_kick_without_reattach_exits_0(xnv):
    core, nf, ctl = scenario(xnv, reattach=False)
    ctl.ok("nf", "kick", "0")
    assert nf.wait(30) == 0, nf.stderr()
    assert "kicked by the operator" in nf.stderr()


def test_show_config_is_a_config_the_core_takes(xnv):
    """show config after live changes (chain set, a flow rule added): the
    defaults written out, the chain and the rule as they are now; a second
    core started from that output (another socket) shows the same."""
    core, nf, ctl = scenario(xnv)
    ctl.ok("chain", "set", "in", "fwd-a -> out -> drop")
    ctl.ok("flow", "add", "proto=udp", "dport=53", "chain", "fwd-a", "out")
    text = ctl.ok("show", "config")
    assert text.startswith("; xnv-core's effective config (loaded from ")
    secs = ctl.json("show", "config")
    assert list(secs) == ["core", "group g", "port in", "port out", "service fwd-a",
                          "flow rule1"], secs
    assert secs["core"]["ring_size"] == "1024" and secs["core"]["latency"] == "off"
    assert secs["core"]["socket_mode"] == "0600" and "max_held" not in secs["core"]
    assert secs["port in"]["chain"] == "fwd-a -> out -> drop"
    assert secs["port in"]["rx_rate"] == "5000" and "chain" not in secs["port out"]
    assert secs["flow rule1"] == {"priority": "32768", "proto": "udp", "dport": "53",
                                  "chain": "fwd-a -> out"}
    assert secs["group g"]["pool_bufs"] == "2048"
    cfg = xnv.path("now.ini")
    cfg.write_text(text)
    sock2 = xnv.sockdir / "second.sock"
    second = xnv.start_core(cfg, socket=sock2, duration=120, name="second")
    second.wait_ready()
    r = xnv.run([CTL_BIN, "--socket", sock2, *TIMEOUT, "show", "config", "--json"],
                timeout=120)
    assert r.returncode == 0, r.stderr
    again = json.loads(r.stdout)
    assert again["core"].pop("socket") == str(sock2)
    assert secs["core"].pop("socket") == str(xnv.socket)
    assert again == secs


def test_reload_applies_what_is_live_or_nothing(xnv):
    core, nf, ctl = scenario(xnv)
    base = xnv.path("ops.ini").read_text()

    def write(text):
        xnv.path("ops.ini").write_text(text)

    def refused(text, msg):
        write(text)
        before = ctl.ok("show", "config")
        err = ctl.fails(1, "reload")
        assert err.startswith("xnv-ctl: reload refused: ") and msg in err, err
        assert ctl.ok("show", "config") == before
    live = base.replace("chain = fwd-a -> out", "chain = out").replace(
        "rx_rate = 5000", "rx_rate = 2000") + "\n[flow dns]\nproto = udp\ndport = 53\nchain = drop\n"
    live = live.replace("[core]\n", "[core]\nerror_budget = 50\n")
    # a fixed key, a group, a section added, a bad flow, a bad file: nothing
    refused(live.replace("[core]\n", "[core]\nring_size = 2048\n"),
            "[core] ring_size cannot change live (restart the core)")
    refused(live.replace("pool_bufs = 2048", "pool_bufs = 4096"),
            "[group g] cannot change live")
    refused(live + "\n[service fwd-b]\n", "the set of groups, ports and services cannot")
    refused(live.replace("dport = 53", "dport = 70000"), "[flow dns]")
    refused(live + "\nnonsense\n", "ops.ini:")
    # what may change live: applied together
    write(live)
    assert ctl.ok("reload") == (f"reloaded {xnv.path('ops.ini')}: chains, rx_rate, "
                                "limits; 1 flow rules in force (0 before)\n")
    secs = ctl.json("show", "config")
    assert secs["port in"]["chain"] == "out" and secs["port in"]["rx_rate"] == "2000"
    assert secs["core"]["error_budget"] == "50"
    assert secs["flow dns"] == {"priority": "32768", "proto": "udp", "dport": "53",
                                "chain": "drop"}
    # the port now sends straight out: the NF gets nothing more
    rx = ctl.json("nfs")[0]["rx"]
    tx = ctl.port("out")["tx"]
    wait_until(lambda: ctl.port("out")["tx"] > tx + 200, 30, "traffic past the NF")
    assert ctl.json("nfs")[0]["rx"] <= rx + 64        # at most what was in flight
    assert "config reloaded from" in core.log()
