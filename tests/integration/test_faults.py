# SPDX-License-Identifier: BSD-3-Clause
"""Faults: NFs that stop, die again and again, and a core that restarts.

(a) Heartbeat: an NF stopped with SIGSTOP while it holds packets is
    declared dead after heartbeat_timeout_ms and its buffers reclaimed
    (there is no socket hang-up to say so: the process still exists); on
    SIGCONT it finds itself detached and exits with a clear line.  With
    heartbeat_timeout_ms = 0 the same stop is waited out.
(b) kill -9 loop: two replicas of a service under traffic; 20 times one of
    them is killed and restarted.  Each time the other takes over all the
    flows, every buffer comes home, the restarted one gets its slot back;
    the core never stops.
(c) Core restart: an NF with --reattach reports the loss and attaches
    again to the next core on the same socket (after SIGKILL and after a
    clean stop of the core); one without exits with a clear line.
Also: packets parked for room when a port's chain is unset still finish."""
import re
import signal
import time

import pytest

from harness import (FWD_BIN, Telemetry, nf_infos, start_named_core, start_testnf,
                     wait_until, write_config)
from traffic import flow_packets, write_pcap

POOL = 4096


def chain_config(env, name, in_dev="net_null0", services=("fwd",), **core):
    return write_config(env.path(f"{name}.ini"), [
        ("core", {"socket": env.sockdir / f"{name}.sock", "ring_size": 256, **core}),
        ("group g", {"pool_bufs": POOL}),
        ("port in", {"dev": in_dev, "group": "g",
                     "chain": " -> ".join([*services, "out"])}),
        ("port out", {"dev": "net_null1", "group": "g"}),
        *[(f"service {s}", {}) for s in services],
    ])


def grows(t, name, by, timeout=30):
    start = nf_infos(t)[name]["rx"]
    wait_until(lambda: nf_infos(t)[name]["rx"] >= start + by, timeout,
               f"{name} to receive {by} more packets")


def pool_full(t, held_by_port=0, timeout=5):
    """Until every buffer of group 0 is home (but the `held_by_port` a pcap
    port with infinite_rx keeps for itself); returns /xnv/group/info."""
    def full():
        g = t("/xnv/group/info", 0)
        return g if g["free"] + held_by_port == g["pool_bufs"] else None
    return wait_until(full, timeout, "every buffer back in the pool")


def test_parked_packets_finish_after_chain_unset(xnv):
    """A slow NF's ring is full, so the port's next packets wait in the
    core (parked) for room; `chain unset` stops the port's rx and the NF
    then goes away: the parked packets still finish (to the NF while it
    is there, then dropped: its service has no instance), and every
    buffer comes home.  Kept for ever before."""
    core = start_named_core(xnv, chain_config(xnv, "park", ring_size=64),
                            "park")
    nf = start_testnf(xnv, "fwd", "g", "fwd-1", delay_us=1000, flows=False,
                      socket=core.socket)
    core.wait_attached(nf)
    with Telemetry(core) as t:
        grows(t, "fwd-1", 100)      # its ring full, the port parked
        assert "error" not in t("/xnv/chain/unset", "in")
        nf.stop()
        assert nf.returncode == 0, nf.stderr()
        pool_full(t, timeout=10)


# --------------------------------------------------------------------------
# (a) heartbeat

@pytest.mark.parametrize("timeout_ms", [500, 0], ids=["hb-500ms", "hb-off"])
def test_heartbeat_stopped_nf(xnv, timeout_ms):
    core = start_named_core(xnv, chain_config(xnv, "hb", heartbeat_timeout_ms=timeout_ms),
                            "hb")
    nf = start_testnf(xnv, "fwd", "g", "fwd-1", flows=False, socket=core.socket)
    core.wait_attached(nf)
    with Telemetry(core) as t:
        grows(t, "fwd-1", 10_000)
        nf.signal(signal.SIGSTOP)
        t0 = time.monotonic()
        if timeout_ms == 0:
            time.sleep(1.5)
            assert nf_infos(t)["fwd-1"]["state"] == "attached"
            # not detached for it (a loaded machine may still stop the
            # core itself: its "stood still" line names the heartbeat too)
            assert not re.search(r"detached: no heartbeat", core.log()), \
                core.log()
            nf.signal(signal.SIGCONT)
            grows(t, "fwd-1", 10_000)       # it simply goes on
            return
        m = core.wait_output(r"NF fwd-1 \(domain \d+\) detached: (no heartbeat for "
                             r"(\d+) ms while holding (\d+) buffers \(NF hung or "
                             r"stopped\)); .*, (\d+) buffers reclaimed", 10)
        took = time.monotonic() - t0
        assert timeout_ms <= int(m.group(2)) and int(m.group(3)) > 0, m.group(0)
        assert int(m.group(4)) == int(m.group(3)), m.group(0)
        assert took < timeout_ms / 1000 + 4, took     # timeout + reclaim, generously
        g = pool_full(t)
        info = nf_infos(t)["fwd-1"]
        assert info["state"] == "gone" and info["quarantined"] == 0, info
        assert info["reason"] == m.group(1)
        assert nf.alive()               # stopped, not dead: only the core let go
        nf.signal(signal.SIGCONT)
        rc = nf.wait(10)
        assert g["free"] == POOL
    assert rc == 1
    assert re.search(r"^xnv: fwd-1: detached by the core: no heartbeat for \d+ ms",
                     nf.stderr(), re.M), nf.stderr()
    assert core.alive()


def test_core_stopped_detaches_nobody(xnv):
    core = start_named_core(xnv, chain_config(xnv, "stall", heartbeat_timeout_ms=500),
                            "stall")
    nfs = [start_testnf(xnv, "fwd", "g", f"fwd-{i}", flows=False, socket=core.socket)
           for i in (1, 2)]
    for nf in nfs:
        core.wait_attached(nf)
    said = re.compile(r"xnv-core itself stood still for \d+ ms: the heartbeat "
                      r"and hoard deadlines of 2 NFs start again")
    with Telemetry(core) as t:
        grows(t, "fwd-1", 10_000)
        for k in range(1, 4):
            core.signal(signal.SIGSTOP)
            time.sleep(2)               # 4 x the heartbeat timeout
            core.signal(signal.SIGCONT)
            wait_until(lambda: len(said.findall(core.log())) >= k, 10,
                       f"stop {k} to be said")
            grows(t, "fwd-1", 10_000)
        infos = nf_infos(t)
    assert all(infos[f"fwd-{i}"]["state"] == "attached" for i in (1, 2)), infos
    assert "heartbeat" not in re.sub(r"heartbeat and hoard deadlines", "", core.log())
    assert "without returning any" not in core.log()
    assert all(nf.alive() for nf in nfs)


def test_first_heartbeat_gets_a_grace(xnv):
    """An NF that attached but has not beaten once is still starting (a Xen
    guest maps its rings after the core's answer): it holds packets for
    10 x heartbeat_timeout_ms before it is declared dead, then it goes."""
    core = start_named_core(xnv, chain_config(xnv, "hb0", heartbeat_timeout_ms=300),
                            "hb0")
    probe = xnv.start_probe("--socket", core.socket, "--service", "fwd",
                            "--group", "g", "--hold",
                            name="silent", stdin="pipe")
    core.wait_output(r"NF silent \(pid \d+\) attached", 10)
    t0 = time.monotonic()
    with Telemetry(core) as t:
        wait_until(lambda: nf_infos(t)["silent"]["held"] > 0, 10,
                   "packets held by the silent NF")
        time.sleep(1.2)             # 4 x the timeout: still given time
        assert nf_infos(t)["silent"]["state"] == "attached"
    m = core.wait_output(r"NF silent \(domain \d+\) detached: no heartbeat for "
                         r"(\d+) ms while holding \d+ buffers \(NF never "
                         r"started polling\)", 10)
    assert 3000 <= int(m.group(1)) and time.monotonic() - t0 < 3 + 5
    probe.wait(10)
    assert "end=detached" in probe.stdout()


# --------------------------------------------------------------------------
# (b) kill -9, 20 times, with 2 replicas

KILLS = 20


@pytest.fixture(scope="module")
def kill_loop(xnv_module):
    env = xnv_module
    pkts = flow_packets(64, 4, base=7000)
    in_pcap = write_pcap(env.path("kill-in.pcap"), pkts)
    cfg = chain_config(env, "kill", in_dev=f"net_pcap0,rx_pcap={in_pcap},infinite_rx=1",
                       services=("rep",), spill_threshold=100)
    core = start_named_core(env, cfg, "kill")
    reps = [None, None]

    def start(slot, i):
        nf = start_testnf(env, "rep", "g", f"rep{slot}-{i}", flows=False,
                          socket=core.socket)
        core.wait_attached(nf)
        reps[slot] = nf
        return nf

    start(0, 0)
    start(1, 0)
    res = dict(core=core, rounds=[], port_held=len(pkts))
    with Telemetry(core) as t:
        grows(t, reps[1].nf_name, 10_000)
        for i in range(1, KILLS + 1):
            slot = i % 2
            victim, other = reps[slot], reps[1 - slot]
            before = nf_infos(t)
            victim.signal(signal.SIGKILL)
            rc = victim.wait(5)
            m = core.wait_output(rf"NF {victim.nf_name} \(domain \d+\) detached: "
                                 r"connection closed .*, (\d+) buffers reclaimed", 5)
            svc = t("/xnv/service/info", 1)
            grows(t, other.nf_name, 5_000)          # it has every flow now
            t("/xnv/chain/set", "in drop")          # let everything come home
            # net_pcap's infinite_rx keeps a copy of the input in the pool
            g = pool_full(t, held_by_port=len(pkts))
            t("/xnv/chain/set", "in rep->out")
            new = start(slot, i)
            grows(t, new.nf_name, 5_000)
            after = nf_infos(t)
            res["rounds"].append(dict(
                rc=rc, reclaimed=int(m.group(1)), svc=svc, pool=g, before=before,
                after=after, victim=victim.nf_name, other=other.nf_name,
                new=new.nf_name))
        res["alive"] = core.alive()
        res["svc"] = t("/xnv/service/info", 1)
    core.signal(signal.SIGTERM)
    res["rc"] = core.wait(20)
    res["nf_rcs"] = [nf.wait(10) for nf in reps]
    res["stats"] = core.stats()
    return res


def test_kill_loop_core_never_stops(kill_loop):
    assert len(kill_loop["rounds"]) == KILLS
    assert kill_loop["alive"] and kill_loop["rc"] == 0, kill_loop["core"].log()[-3000:]
    assert kill_loop["nf_rcs"] == [0, 0]
    assert all(r["rc"] == -signal.SIGKILL for r in kill_loop["rounds"])


def test_kill_loop_other_replica_takes_over(kill_loop):
    for r in kill_loop["rounds"]:
        assert r["svc"]["instances"] == [r["before"][r["other"]]["id"]], r["svc"]


def test_kill_loop_pool_full_each_time(kill_loop):
    for r in kill_loop["rounds"]:
        assert r["pool"]["pool_bufs"] == POOL, r["pool"]
    for g in kill_loop["stats"]["groups"]:      # the port still holds its copy
        assert g["free"] + kill_loop["port_held"] == g["pool_bufs"] == POOL, g


def test_kill_loop_restart_takes_the_slot(kill_loop):
    for r in kill_loop["rounds"]:
        assert r["after"][r["new"]]["instance"] == r["before"][r["victim"]]["instance"]
    assert len(kill_loop["svc"]["instances"]) == 2


def test_kill_loop_counters_add_up(kill_loop):
    st = kill_loop["stats"]
    ports = {p["name"]: p for p in st["ports"]}
    assert ports["in"]["rx"] == ports["out"]["tx"] + sum(st["drops"].values()), st
    victims = {r["victim"]: r["reclaimed"] for r in kill_loop["rounds"]}
    assert {n["name"]: n["reclaimed"] for n in st["nfs"] if n["name"] in victims} == victims
    assert st["drops"]["bad_desc"] == 0 and all(n["held"] == 0 for n in st["nfs"])


# --------------------------------------------------------------------------
# (c) xnv-core restarts under attached NFs

def test_core_restart_reattach(xnv):
    cfg = chain_config(xnv, "re")
    core = start_named_core(xnv, cfg, "re")
    sock = core.socket
    keep = xnv.start_nf("fwd", "g", "fwd-keep", socket=sock, extra=("--reattach",))
    once = xnv.start_nf("fwd", "g", "fwd-once", socket=sock)
    for nf in (keep, once):
        core.wait_attached(nf)
    with Telemetry(core) as t:
        grows(t, "fwd-keep", 5_000)
    # 1. the core dies
    core.signal(signal.SIGKILL)
    core.wait(5)
    assert once.wait(10) == 1
    assert "xnv: fwd-once: detached by the core: core closed the connection" in \
        once.stderr().splitlines(), once.stderr()
    assert "waiting for xnv-core" not in once.stderr()
    keep.wait_output(r"^xnv: fwd-keep: detached by the core: core closed the connection$", 10)
    keep.wait_output(rf"^xnv: fwd-keep: --reattach: waiting for xnv-core at {re.escape(str(sock))}$", 10)
    assert keep.alive()
    # 2. a new core on the same socket: fwd-keep comes back and forwards
    core2 = start_named_core(xnv, cfg, "re")
    keep.wait_output(r"^xnv: fwd-keep: re-attached as domain \d+$", 15)
    core2.wait_output(r"NF fwd-keep \(pid \d+\) attached as domain", 5)
    with Telemetry(core2) as t:
        grows(t, "fwd-keep", 5_000)
    # 3. a clean stop and start: the same again
    core2.signal(signal.SIGTERM)
    assert core2.wait(10) == 0
    keep.wait_output(r"detached by the core: xnv-core is shutting down", 10)
    assert keep.alive()
    core3 = start_named_core(xnv, cfg, "re")
    core3.wait_output(r"NF fwd-keep \(pid \d+\) attached as domain", 15)
    with Telemetry(core3) as t:
        grows(t, "fwd-keep", 5_000)
    assert len(re.findall(r"re-attached as domain", keep.stderr())) == 2
    # 4. stopped while waiting for a core: exits 0
    core3.signal(signal.SIGTERM)
    assert core3.wait(10) == 0
    keep.wait_output(r"--reattach: waiting for xnv-core", 10)
    keep.signal(signal.SIGTERM)
    assert keep.wait(10) == 0


def test_reattach_env_bad_value(xnv):
    r = xnv.run([FWD_BIN, "--service", "fwd", "--socket", xnv.socket],
                env={"PATH": "/usr/bin:/bin", "XNV_REATTACH": "yes"})
    assert r.returncode > 0
    assert r.stderr.splitlines() == ["xnv: XNV_REATTACH=yes: expected 0 or 1"], r.stderr
