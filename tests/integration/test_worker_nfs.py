# SPDX-License-Identifier: BSD-3-Clause
"""NFs polled by other workers than the main lcore ([service] worker,
dom0-core/worker.h, worker_steer.c).

With [core] workers = 2 the NFs of a service with `worker = 1` are polled
by the second lcore: their rings, the validation of what they return,
their doorbells.  A packet resolved on one lcore for an NF of the other
crosses on the ring between the two, in order; a port an lcore has no tx
queue of is sent on by the main lcore.  The chains below cross both ways;
every input file's packets must come out unchanged and in their order,
and every counter add up.  A hostile NF on the second lcore is
quarantined exactly as on the main one (worker 0 does it, the second
lcore parked), a killed one is reclaimed and its replacement polled by
the same lcore, and idle NFs of both lcores sleep on their doorbells."""
import os
import re
import signal
import time

import pytest

from harness import (BUILD, CTL_BIN, Telemetry, cpu_ticks, nf_info,
                     read_pcap, scaled, wait_until, watch_dozing_sender,
                     write_config, write_pcap)
from test_workers import worker_line
from traffic import make_traffic

N_A, N_B = 3000, 2000
HOSTILE_BIN = BUILD / "tests" / "tools" / "xnv-hostile"
GEN_BIN = BUILD / "bin" / "xnv-generator"
EAL2 = ("-l", "0,1")


def two_queue_config(env, chain, out_queues):
    """Port in: two rx_pcap files (queue 0 the main lcore's, queue 1 the
    second's); port out: one or two tx_pcap files (tx queues); services
    f0 (worker 0) and f1 (worker 1)."""
    a = write_pcap(env.path("a.pcap"), make_traffic(N_A, 0x5A))
    b = write_pcap(env.path("b.pcap"), make_traffic(N_B, 0x5B))
    tx = ",".join(f"tx_pcap={env.path(f'o{q}.pcap')}"
                  for q in range(out_queues))
    cfg = write_config(env.path("wnf.ini"), [
        # Every packet must come out: none dropped as stall while an NF
        # waits for a CPU on a loaded machine (the default is 500 ms).
        ("core", {"socket": env.socket, "workers": 2,
                  "stall_timeout_ms": 20000}),
        # Buffers for 2 NFs' rings, the rings between the lcores and
        # what waits: a pcap port short of buffers loses frames
        # (rx_nombuf).
        ("group blue", {"pool_bufs": 16384}),
        ("port in", {"dev": f"net_pcap0,rx_pcap={a},rx_pcap={b}",
                     "group": "blue", "chain": chain}),
        ("port out", {"dev": f"net_pcap1,{tx}", "group": "blue"}),
        ("service f0", {}),
        ("service f1", {"worker": 1}),
    ])
    return cfg, read_pcap(a), read_pcap(b)


def stats_of(st, kind, name):
    (x,) = [x for x in st[kind] if x["name"] == name]
    return x


@pytest.mark.parametrize("chain", ["f0 -> f1 -> out", "f1 -> f0 -> out"])
@pytest.mark.parametrize("out_queues", [1, 2])
def test_chain_crosses_between_workers(xnv, chain, out_queues):
    """Both input queues' packets go through an NF of each lcore, in
    either order, and out of a port with one tx queue (the main lcore
    sends) or two (each lcore its own): all of them, unchanged, each
    input's in its order; the NFs say which lcore polls them; every
    packet is counted once by its port, its NFs and its out port."""
    cfg, a, b = two_queue_config(xnv, chain, out_queues)
    core = xnv.start_core(cfg, idle_exit=800, eal=EAL2)
    core.wait_ready()
    nfs = {s: xnv.start_nf(s, "blue", f"{s}-nf") for s in ("f0", "f1")}
    for nf in nfs.values():
        core.wait_attached(nf)
    with Telemetry(core) as t:
        assert nf_info(t, "f0-nf")["worker"] == 0
        assert nf_info(t, "f1-nf")["worker"] == 1
        w = t("/xnv/workers")
    assert w["1"]["nfs"] == 1, w
    assert core.wait(60) == 0, core.log()[-3000:]
    st = core.stats()
    assert stats_of(st, "ports", "in")["rx_nombuf"] == 0, st["ports"]
    out = []
    for q in range(out_queues):
        out += read_pcap(xnv.path(f"o{q}.pcap"))
    assert sorted(out) == sorted(a + b)
    sa, sb = set(a), set(b)
    assert [p for p in out if p in sa] == a
    assert [p for p in out if p in sb] == b
    # Worker 1 resolves queue 1's packets itself, steers to f0 what is
    # for it, sends on its own tx queue when there is one.
    n = N_A + N_B
    want = {("f0 -> f1 -> out", 1): (0, N_B + n),
            ("f0 -> f1 -> out", 2): (n, N_B),
            ("f1 -> f0 -> out", 1): (0, n),
            ("f1 -> f0 -> out", 2): (0, n)}[(chain, out_queues)]
    assert worker_line(core.log()) == want, core.log()[-2000:]
    assert stats_of(st, "ports", "in")["rx"] == N_A + N_B
    assert stats_of(st, "ports", "out")["tx"] == N_A + N_B
    for s in ("f0", "f1"):
        n = stats_of(st, "nfs", f"{s}-nf")
        assert n["rx"] == n["tx"] == N_A + N_B, n
    assert sum(st["drops"].values()) == 0, st["drops"]


def null_config(env, name, chain, services, **core):
    cfg = write_config(env.path(f"{name}.ini"), [
        ("core", {"socket": env.socket, "workers": 2, **core}),
        ("group g", {"pool_bufs": 4096}),
        ("port in", {"dev": "net_null0", "group": "g", "chain": chain}),
        ("port out", {"dev": "net_null1", "group": "g"}),
        *[(f"service {s}", {"worker": w}) for s, w in services],
    ])
    return cfg


def forwarding(t, name):
    """Until NF `name` has forwarded 10000 packets (Telemetry `t`)."""
    wait_until(lambda: nf_info(t, name)["tx"] > 10000, 20,
               f"{name} forwarding")


def one_nf_of_worker1(xnv, name, **core_keys):
    """A core on both lcores, endless traffic through service f1 of the
    second lcore, NF `name` attached: (core, NF)."""
    cfg = null_config(xnv, name, "f1 -> out", [("f1", 1)], **core_keys)
    core = xnv.start_core(cfg, eal=EAL2)
    core.wait_ready()
    nf = xnv.start_nf("f1", "g", name)
    core.wait_attached(nf)
    return core, nf


def test_killed_nf_of_a_worker_is_reclaimed_and_replaced(xnv):
    """Endless traffic through an NF of the second lcore: killed, it is
    detached, what it held comes home, and its replacement is polled by
    the same lcore and forwards; at the end every packet received was
    sent or dropped, and the pool is full."""
    core, nf = one_nf_of_worker1(xnv, "f1-a")
    with Telemetry(core) as t:
        forwarding(t, "f1-a")
        nf.signal(signal.SIGKILL)
        nf.wait(10)
        wait_until(lambda: nf_info(t, "f1-a")["state"] == "gone", 20,
                   "f1-a detached")
        nf2 = xnv.start_nf("f1", "g", "f1-b")
        core.wait_attached(nf2)
        assert nf_info(t, "f1-b")["worker"] == 1
        forwarding(t, "f1-b")
        gone = nf_info(t, "f1-a")
    assert gone["held"] == 0 and gone["worker"] == 0, gone
    nf2.signal(signal.SIGTERM)
    assert nf2.wait(20) == 0, nf2.stderr()
    core.stop()
    st = core.stats()
    drops = st["drops"]
    assert stats_of(st, "ports", "in")["rx"] == \
        stats_of(st, "ports", "out")["tx"] + sum(drops.values()), st
    g = st["groups"][0]
    assert g["free"] == g["pool_bufs"], g


def test_stopped_nf_of_a_worker_declared_dead(xnv):
    """An NF of the second lcore stopped (SIGSTOP) under traffic while it
    holds buffers: its lcore's watch finds its heartbeat standing still
    and worker 0 detaches it as the main lcore's own, with the same
    words; what it held comes home."""
    core, nf = one_nf_of_worker1(xnv, "f1-a", heartbeat_timeout_ms=500)
    with Telemetry(core) as t:
        forwarding(t, "f1-a")
        nf.signal(signal.SIGSTOP)
        m = core.wait_output(r"NF f1-a \(domain \d+\) detached: (no heartbeat "
                             r"for (\d+) ms while holding (\d+) buffers \(NF "
                             r"hung or stopped\)); .*, (\d+) buffers reclaimed",
                             10)
        info = nf_info(t, "f1-a")
    assert int(m.group(2)) >= 500 and m.group(3) == m.group(4), m.group(0)
    assert info["state"] == "gone" and info["quarantined"] == 0, info
    assert info["reason"] == m.group(1) and info["worker"] == 0, info
    nf.signal(signal.SIGCONT)
    assert nf.wait(10) == 1
    assert "detached by the core: no heartbeat for" in nf.stderr()
    assert core.alive()
    core.stop()


def hostile_config(env, name):
    return write_config(env.path(f"{name}.ini"), [
        ("core", {"socket": env.socket, "workers": 2,
                  "error_budget": 1000}),
        ("group A", {"pool_bufs": 4096}),
        ("group B", {"pool_bufs": 2048}),
        ("port inA", {"dev": "net_null0", "group": "A",
                      "chain": "fwd -> outA"}),
        ("port outA", {"dev": "net_null1", "group": "A"}),
        ("port inB", {"dev": "net_null2", "group": "B",
                      "chain": "evil -> outB"}),
        ("port outB", {"dev": "net_null3", "group": "B"}),
        ("service fwd", {}),
        ("service evil", {"worker": 1}),
    ])


@pytest.mark.parametrize("attack,reason", [
    (("--count", 100_000, "--finish", "none"),
     r"quarantined: \d+ bad descriptors within 1 s, over error_budget 1000 "
     r"\(last: .+\)"),
    (("--alloc", 64, "--count", 0, "--finish", "free"),
     r"quarantined: free ring consumer index impossible"),
], ids=["error-budget", "free-ring"])
def test_hostile_nf_of_a_worker_is_quarantined(xnv, attack, reason):
    """xnv-hostile on the second lcore: bad descriptors past the error
    budget, or an impossible free ring index.  That lcore stops reading
    it and worker 0 quarantines it: told why, its buffers home, its domain
    hostile; the NF of the main lcore forwards throughout."""
    if not HOSTILE_BIN.exists():
        pytest.skip(f"{HOSTILE_BIN} not built (make check-integration builds it)")
    core = xnv.start_core(hostile_config(xnv, "hostile"), eal=EAL2)
    core.wait_ready()
    fwd = xnv.start_nf("fwd", "A", "fwd")
    core.wait_attached(fwd)
    evil = xnv.start("evil", [HOSTILE_BIN, "--socket", core.socket,
                              "--service", "evil", "--group", "B",
                              "--name", "evil", *map(str, attack)])
    assert evil.wait(30) == 0, evil.stdout()
    m = re.search(r"^DETACHED reason=(.*)$", evil.stdout(), re.M)
    assert m and re.fullmatch(reason, m.group(1)), evil.stdout()
    with Telemetry(core) as t:
        info = nf_info(t, "evil")
        pool_b = t("/xnv/group/info", 1)
        tx0 = nf_info(t, "fwd")["tx"]
        wait_until(lambda: nf_info(t, "fwd")["tx"] > tx0 + 1000, 20,
                   "fwd forwarding after the quarantine")
        # Told first, reclaimed after (attach.c: its tx ring drained,
        # then xnv_rec_finish() at a control pass of worker 0).
        wait_until(lambda: t("/xnv/group/info", 1)["free"] ==
                   pool_b["pool_bufs"], 20, "its buffers home")
    assert info["quarantined"] == 1 and info["reason"] == m.group(1), info
    assert info["bad"] <= 1000 + 64, info   # one burst past the budget
    assert re.search(r"domain \d+ is hostile: quarantined", core.log())
    assert core.alive()
    core.stop()


def idle_config(env):
    return write_config(env.path("idle.ini"), [
        ("core", {"socket": env.socket, "workers": 2}),
        ("group g", {"pool_bufs": 4096}),
        ("port in", {"dev": "net_null0,no-rx=1", "group": "g",
                     "chain": "a0 -> a1 -> out"}),
        ("port out", {"dev": "net_null1,no-rx=1", "group": "g"}),
        ("service a0", {}),
        ("service a1", {"worker": 1}),
    ])


def test_idle_nfs_of_both_workers_doze(xnv):
    """No traffic: four NFs on each lcore, both lcores asleep on their
    own NFs' doorbells (every NF dozing), the whole core a small part of
    one CPU."""
    core = xnv.start_core(idle_config(xnv), eal=EAL2)
    core.wait_ready()
    nfs = [xnv.start_nf(s, "g", f"{s}-{i}") for s in ("a0", "a1")
           for i in range(4)]
    for nf in nfs:
        core.wait_attached(nf)
    with Telemetry(core) as t:
        wait_until(lambda: all(nf_info(t, nf.nf_name)["dozing"]
                               for nf in nfs), 20, "every NF dozing")
        workers = {nf.nf_name: nf_info(t, nf.nf_name)["worker"] for nf in nfs}
    assert sorted(workers.values()) == [0] * 4 + [1] * 4, workers
    hz = os.sysconf("SC_CLK_TCK")
    t0, c0 = time.monotonic(), cpu_ticks([core.pid])
    time.sleep(scaled(3.0))
    t1, c1 = time.monotonic(), cpu_ticks([core.pid])
    used = (c1 - c0) / hz / (t1 - t0)
    assert used < 0.25, f"idle core on two lcores took {100 * used:.1f} % of a CPU"
    r = xnv.run([CTL_BIN, "--socket", xnv.socket, "workers"])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[1].split() == ["WORKER", "LCORE", "NFS", "RX", "SENT",
                                "STEERED", "DROPS"], r.stdout
    assert [ln.split()[:3] for ln in lines[2:4]] == [["0", "0", "4"],
                                                     ["1", "1", "4"]], r.stdout
    core.stop()


def test_dozing_generator_of_a_worker_wakes_it(xnv):
    """A generator on the second lcore, 10 packets a second to a port with
    one tx queue: between packets both lcores sleep (timeout 1 s) and the
    generator dozes; each packet it sends kicks the second lcore, which
    steers it to the main lcore, whose kick wakes it to send: the packets
    leave while the generator runs."""
    out = xnv.path("gen.pcap")
    cfg = write_config(xnv.path("gen.ini"), [
        ("core", {"socket": xnv.socket, "workers": 2}),
        ("group g", {"pool_bufs": 1024}),
        ("port out", {"dev": f"net_pcap0,tx_pcap={out}", "group": "g"}),
        ("service gen", {"worker": 1}),
    ])
    core = xnv.start_core(cfg, eal=EAL2, extra=["--idle-sleep-max", "1000000"])
    core.wait_ready()
    gen = xnv.start_nf("gen", "g", "gen-1", binary=GEN_BIN, extra=(
        "--alloc=64", "--", "--count", 40, "--rate", 10, "--size", 64,
        "--out", 0))
    core.wait_attached(gen)
    running, tx, info = watch_dozing_sender(core, gen)
    assert running, f"the generator ended first: {tx} packets had left, " \
        f"{info}"
    assert info["worker"] == 1, info
    assert gen.wait(60) == 0, gen.stderr()
    core.stop()
    assert core.stats()["ports"][0]["tx"] == 40, core.stats()
    assert worker_line(core.log())[1] == 40


def test_chain_versions_swept_with_packets_between_workers(xnv):
    """Endless traffic through an NF of each lcore while the port's chain
    is set 4600 times to a chain not seen before (more than the table of
    chain versions holds, so its sweep runs, with packets parked on both
    lcores and on the rings between them, which it looks at in place):
    every set takes, and afterwards the traffic goes on and every packet
    received was sent or dropped."""
    xs = [(f"x{i}", i % 2) for i in range(8)]     # services with no NF
    cfg = null_config(xnv, "sweep", "f0 -> f1 -> out",
                      [("f0", 0), ("f1", 1), *xs])
    core = xnv.start_core(cfg, eal=EAL2, duration=300)
    core.wait_ready()
    for s in ("f0", "f1"):
        core.wait_attached(xnv.start_nf(s, "g", f"{s}-nf"))
    names = [x for x, _ in xs]
    chains = [" -> ".join(("f0", "f1", *p, "out")) for p in
              [(a, b, c, d) for a in names for b in names for c in names
               for d in names] + [(a, b, c) for a in names for b in names
                                  for c in names]]
    assert len(chains) == 4608
    with Telemetry(core) as t:
        forwarding(t, "f1-nf")
        for ch in chains:
            r = t("/xnv/chain/set", f"in {ch}")
            assert "error" not in r, (ch, r)
        r = t("/xnv/chain/set", "in f0 -> f1 -> out")
        assert "error" not in r, r
        tx0 = t("/xnv/port/info", 1)["tx"]
        wait_until(lambda: t("/xnv/port/info", 1)["tx"] > tx0 + 10000, 20,
                   "traffic out again")
    core.stop()
    st = core.stats()
    drops = st["drops"]
    assert drops["no_instance"] > 0, drops
    assert stats_of(st, "ports", "in")["rx"] == \
        stats_of(st, "ports", "out")["tx"] + sum(drops.values()), st
