# SPDX-License-Identifier: BSD-3-Clause
"""Idle NFs sleep on their doorbells, and a packet for one still gets
through (issue: busy NFs poll, idle NFs sleep).

32 forwarders in 8 chains of 4 behind one af_packet port on a veth pair
(root; skipped without it), steered by UDP destination port (flow rules),
every side in its default --idle-sleep doorbell mode:
  - all idle: the CPU time the core and the 32 NFs take together over a
    window (read from /proc) is a small part of one CPU: nobody spins
    (32 spinners on this machine's CPUs would take all of them), and
    the core's control thread waits on its sockets instead of napping;
  - then a burst of frames for one chain, picked at random, comes back
    whole through its four NFs, which the core kicked awake, and no other
    chain saw a packet.
An NF with an event loop of its own (xnv-testnf --loop epoll) waits in
epoll_wait() on xnv_nf_fd() after xnv_nf_arm(), and the core's kick ends
the wait.  A generator NF the idle core leaves dozing (not polled) kicks
the core with each packet it sends.  Bad --idle-sleep values are usage
errors for the core and for libxnv.
"""
import logging
import os
import random
import re
import struct
import time

import pytest

import harness
from harness import BUILD, CORE_BIN, FWD_BIN, Telemetry, cpu_ticks, nf_info, nf_infos, \
    scaled, thread_files, watch_dozing_sender, write_config
from vethpair import Peer, veth  # noqa: F401 (veth: a fixture)

log = logging.getLogger("xnv-it")

CHAINS, DEPTH = 8, 4
BASE_DPORT = 1000
SRC, DST = "02:00:00:00:00:02", "02:00:00:00:00:01"


def svc(k, j):
    return f"c{k}n{j}"


def chain(k):
    return " -> ".join([*(svc(k, j) for j in range(DEPTH)), "p"])


def config(xnv, iface):
    sections = [
        ("core", {"ring_size": 256}),
        ("group g", {"pool_bufs": 16384}),
        ("port p", {"dev": f"net_af_packet0,iface={iface}", "group": "g",
                    "chain": chain(0)}),
    ]
    for k in range(1, CHAINS):
        sections.append((f"flow to-c{k}", {"proto": "udp",
                                          "dport": BASE_DPORT + k,
                                          "chain": chain(k)}))
    sections += [(f"service {svc(k, j)}", {}) for k in range(CHAINS)
                 for j in range(DEPTH)]
    return write_config(xnv.path("density.ini"), sections)


def control_wakes(pid):
    """Context switches of the core's control thread (xnv-control): how
    often it went to sleep, i.e. woke."""
    for comm, status in thread_files(pid, "comm", "status").values():
        if comm.strip() != "xnv-control":
            continue
        st = dict(line.split(":", 1) for line in status.splitlines()
                  if ":" in line)
        return int(st["voluntary_ctxt_switches"]) + \
            int(st["nonvoluntary_ctxt_switches"])
    raise AssertionError(f"core {pid} has no xnv-control thread")


def idle_window(pids, core_pid, wait, window):
    """After `wait` s, over `window` s: the share of one CPU that `pids`
    took together, and the core's control-thread wake-ups a second."""
    hz = os.sysconf("SC_CLK_TCK")
    time.sleep(wait)
    t0, c0, w0 = time.monotonic(), cpu_ticks(pids), control_wakes(core_pid)
    time.sleep(window)
    t1, c1, w1 = time.monotonic(), cpu_ticks(pids), control_wakes(core_pid)
    return (c1 - c0) / hz / (t1 - t0), (w1 - w0) / (t1 - t0)


def frames(k, n):
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    return [bytes(Ether(src=SRC, dst=DST) /
                  IP(src="10.0.0.1", dst="10.0.0.2") /
                  UDP(sport=2000 + i, dport=BASE_DPORT + k) /
                  (b"burst %03d" % i)) for i in range(n)]


def test_idle_nfs_sleep_and_a_burst_gets_through(xnv, veth):
    core = xnv.start_core(config(xnv, veth.a), duration=300)
    core.wait_ready()
    nfs = []
    for k in range(CHAINS):
        for j in range(DEPTH):
            nf = xnv.start_nf(svc(k, j), "g", f"{svc(k, j)}-1")
            nfs.append(nf)
    for nf in nfs:
        core.wait_attached(nf, timeout=30)
    core.wait_output(r"port p: rx started", 10)
    with Telemetry(core) as t:
        infos = nf_infos(t)
    assert len(infos) == CHAINS * DEPTH
    assert all(i["doorbell"] == 1 for i in infos.values()), infos

    # All idle: settle, then a window of CPU time.
    pids = [core.pid, *(nf.pid for nf in nfs)]
    wait = scaled(1.0)
    window = scaled(3.0)
    used, wakes = idle_window(pids, core.pid, wait, window)
    log.info("idle: core + %d NFs took %.2f %% of one CPU over %.1f s",
             len(nfs), 100 * used, window)
    # Spinners would take every CPU (~100 % each); sleepers next to
    # nothing, loaded machine or not.
    assert used < 0.25, f"idle core + NFs took {100 * used:.1f} % of a CPU"
    # The core's control thread waits on its sockets (and wakes at least
    # every 100 ms): not a 1 ms nap, which was 1000 wake-ups a second.
    log.info("idle: the control thread woke %.0f times a second", wakes)
    assert wakes < 50, f"idle control thread woke {wakes:.0f} times a second"
    # Between its own waits the idle core leaves every NF asleep: their
    # rings are not polled (they kick when they send).
    with Telemetry(core) as t:
        dozing = sorted(n for n, i in nf_infos(t).items() if i["dozing"])
    assert len(dozing) == len(nfs), dozing

    # A burst for one chain picked at random.
    k = random.randrange(CHAINS)
    burst = frames(k, 64)
    peer = Peer(veth.b)
    try:
        peer.send(burst)
        back = peer.collect(len(burst), timeout=30)
    finally:
        peer.close()
    assert sorted(back) == sorted(burst), f"chain c{k}: frames changed"
    with Telemetry(core) as t:
        infos = nf_infos(t)
    for name, info in infos.items():
        want = len(burst) if name.startswith(f"c{k}n") else 0
        assert info["rx"] == want, (name, info)
    # Its first NF slept (the core kicked it), as did the rest of the
    # chain behind it.
    assert infos[f"{svc(k, 0)}-1"]["bell_kicks"] >= 1, infos

    # Woken, the chain sleeps again: the kick that woke each NF is read
    # before it next sleeps (domu-lib/sleep.c), so no doorbell is left
    # readable under a poll() that would return at once for ever.
    used, _ = idle_window(pids, core.pid, wait, window)
    log.info("idle again: core + %d NFs took %.2f %% of one CPU",
             len(nfs), 100 * used)
    assert used < 0.25, f"after the burst: {100 * used:.1f} % of a CPU"


def test_nf_with_its_own_event_loop(xnv, veth):
    cfg = write_config(xnv.path("epoll.ini"), [
        ("group g", {"pool_bufs": 4096}),
        ("port p", {"dev": f"net_af_packet0,iface={veth.a}", "group": "g",
                    "chain": "ev -> p"}),
        ("service ev", {}),
    ])
    core = xnv.start_core(cfg)
    core.wait_ready()
    nf = xnv.start_nf("ev", "g", "ev-1", binary=harness.testnf_bin(),
                      extra=("--", "--loop", "epoll"))
    core.wait_attached(nf)
    core.wait_output(r"port p: rx started", 10)
    peer = Peer(veth.b)
    try:
        for round_ in range(3):
            # Idle until the NF waits in epoll (the core then kicks it).
            with Telemetry(core) as t:
                kicks = nf_info(t, "ev-1")["bell_kicks"]
            time.sleep(scaled(0.3))
            burst = frames(0, 16)
            peer.got = []
            peer.send(burst)
            back = peer.collect(len(burst), timeout=30)
            assert sorted(back) == sorted(burst), round_
            with Telemetry(core) as t:
                assert nf_info(t, "ev-1")["bell_kicks"] > kicks, round_
    finally:
        peer.close()
    nf.stop()
    m = re.search(r"epoll waits (\d+) woken (\d+)", nf.stderr())
    assert m and int(m.group(2)) >= 3, nf.stderr()[-2000:]


def test_bad_idle_sleep_is_a_usage_error(xnv):
    r = xnv.run([CORE_BIN, "--no-huge", "--", "--config", "/nonexistent",
                 "--idle-sleep", "sometimes"])
    assert r.returncode == 2, r
    assert r.stderr.strip().splitlines() == [
        "xnv-core: --idle-sleep sometimes: expected poll, adaptive or "
        "doorbell"], r.stderr
    r = xnv.run([CORE_BIN, "--no-huge", "--", "--config", "/nonexistent",
                 "--idle-sleep-max", "10"])
    assert r.returncode == 2, r
    assert "--idle-sleep-max 10: expected 50 to 1000000 (us)" in r.stderr
    r = xnv.run([FWD_BIN, "--service", "x", "--idle-sleep", "sometimes"])
    assert r.returncode == 2, r
    assert r.stderr.strip().splitlines() == [
        "xnv: --idle-sleep sometimes: expected poll, adaptive or doorbell"], \
        r.stderr
    env = {**os.environ, "XNV_IDLE_SLEEP": "never"}
    r = xnv.run([FWD_BIN, "--service", "x"], env=env)
    assert r.returncode == 2, r
    assert "--idle-sleep never: expected" in r.stderr, r.stderr


def test_dozing_nf_that_sends_wakes_the_core(xnv):
    """A generator sending 10 packets a second to a port: between them
    the idle core leaves it dozing (its rings not polled, the core's
    timeout 1 s), and each packet it sends kicks the core awake: they
    leave the port while it runs, not when it exits and is drained."""
    out = xnv.path("dozing.pcap")
    cfg = write_config(xnv.path("dozing.ini"), [
        ("group g", {"pool_bufs": 1024}),
        ("port out", {"dev": f"net_pcap0,tx_pcap={out}", "group": "g"}),
        ("service gen", {}),
    ])
    core = xnv.start_core(cfg, extra=["--idle-sleep-max", "1000000"])
    core.wait_ready()
    gen = xnv.start_nf("gen", "g", "gen-1", binary=BUILD / "bin" /
                       "xnv-generator", extra=(
                           "--alloc=64", "--", "--count", 40, "--rate", 10,
                           "--size", 64, "--out", 0))
    core.wait_attached(gen)
    running, tx_while_running, info = watch_dozing_sender(core, gen)
    assert running, "the generator ended first: " \
        f"{tx_while_running} packets had left, {info}"
    assert gen.wait(60) == 0, gen.stderr()
    core.stop()
    assert core.stats()["ports"][0]["tx"] == 40, core.stats()


CPU_LATENCY = "/dev/cpu_dma_latency"


def cpu_latency_now():
    """The kernel's current CPU wake-up latency target, in us (PM QoS:
    the lowest any holder asked for)."""
    with open(CPU_LATENCY, "rb") as f:
        return struct.unpack("i", f.read(4))[0]


def test_cpu_latency_held_while_the_core_runs(xnv):
    """--cpu-latency US: /dev/cpu_dma_latency says US while the core runs,
    and what it said before once the core is stopped."""
    try:
        before = cpu_latency_now()
    except OSError as e:
        pytest.skip(f"{CPU_LATENCY}: {e}")
    want = 7
    if before <= want:
        pytest.skip(f"{CPU_LATENCY} is {before} us already (held by "
                    f"another process): nothing to see")
    cfg = write_config(xnv.path("lat.ini"), [
        ("port p", {"dev": "net_null0", "chain": "p"})])
    core = xnv.start_core(cfg, extra=["--cpu-latency", want])
    core.wait_ready()
    core.wait_output(r"CPU wake-up latency held at 7 us", 10)
    assert cpu_latency_now() == want
    core.stop()
    assert core.returncode == 0, core.stderr()
    assert cpu_latency_now() == before


def test_bad_cpu_latency_is_a_usage_error(xnv):
    for bad in ("-1", "1000001", "soon", ""):
        r = xnv.run([CORE_BIN, "--no-huge", "--", "--config", "/nonexistent",
                     "--cpu-latency", bad])
        assert r.returncode == 2, r
        assert r.stderr.strip().splitlines() == [
            f"xnv-core: --cpu-latency {bad}: expected 0 to 1000000 (us)"], \
            r.stderr
