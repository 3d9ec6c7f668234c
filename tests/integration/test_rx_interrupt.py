# SPDX-License-Identifier: BSD-3-Clause
"""A port's rx interrupt wakes the idle core (docs/CONFIG.md
`rx_interrupt`, dom0-core/port_intr.c).

A net_tap port (root and /dev/net/tun; skipped without them: DPDK makes
its kernel interface, whose packets the PMD reads from a file that is
readable while packets wait) with the chain `fwd -> t`, an
xnv-forwarder, everything in the default --idle-sleep doorbell mode and
the core's longest sleep at its maximum (--idle-sleep-max 1 s), so that
a sleep nothing ends lasts a second:
  - the port's start line says its rx interrupt wakes the idle core;
    frames sent into the interface one at a time, the core idle before
    each, all come back unchanged (the interrupt's event read by DPDK
    takes no packet from the tap), and the port's rx_wakes counts the
    sleeps they ended: at least one (/xnv/port/info, the stats JSON);
  - with `rx_interrupt = off` the same frames still come back (net_tap
    also signals each arrival to the process, which ends the sleep, or
    its timeout does) and rx_wakes stays 0, so the count above is the
    interrupt's; a net_pcap port beside it (one frame, dropped), which
    has none, says so in its start line and counts none either;
  - a paced tap port (rx_rate) is never woken by its interrupt (its
    packets wait on purpose) and its frames come back;
  - with two workers the tap has two queues, each one's interrupt in its
    worker's own set: the second lcore's sleeps are ended by its queue,
    and, idle, it sleeps a second at a time where the main lcore wakes
    every --idle-sleep-max for the control plane.
"""
import logging
import time

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from harness import ctl, scaled, thread_files, write_config
from traffic import write_pcap
from vethpair import Peer, ip, tap_name  # noqa: F401 (tap_name: a fixture)

log = logging.getLogger("xnv-it")

FRAMES = 5


def config(xnv, tap, intr, keys):
    one = write_pcap(xnv.path("one.pcap"), [frame(99)])
    port = {"dev": f"net_tap0,iface={tap}", "group": "g", "chain": "fwd -> t",
            **keys}
    if intr is not None:
        port["rx_interrupt"] = intr
    return write_config(xnv.path(f"intr-{intr}.ini"), [
        ("group g", {"pool_bufs": 2048}),
        ("port t", port),
        ("port n", {"dev": f"net_pcap0,rx_pcap={one}", "group": "g",
                    "chain": "drop"}),
        ("service fwd", {}),
    ])


def frame(i):
    return bytes(Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01") /
                 IP(src="10.0.0.1", dst="10.0.0.2") /
                 UDP(sport=4000 + i, dport=9) / (b"rx interrupt %02d" % i))


def start_chain(xnv, core, tap):
    """The core started on `tap`: the interface up without kernel traffic
    of its own (IPv6 router solicitations would wake the core too), the
    NF of service fwd attached, the port's rx started."""
    core.wait_ready()
    ip("link", "set", tap, "up")
    with open(f"/proc/sys/net/ipv6/conf/{tap}/disable_ipv6", "w") as f:
        f.write("1")
    nf = xnv.start_nf("fwd", "g", "fwd-1")
    core.wait_attached(nf, timeout=30)
    core.wait_output(r"port t: rx started", 10)


def run(xnv, tap, intr, **keys):
    """Frames one at a time into an idle core: what came back and the
    port's counters (live, then in the stats JSON).  keys: more of the
    tap port's."""
    core = xnv.start_core(config(xnv, tap, intr, keys), duration=120,
                          extra=["--idle-sleep-max", "1000000"])
    start_chain(xnv, core, tap)
    peer = Peer(tap)
    sent, took = [], []
    try:
        for i in range(FRAMES):
            time.sleep(scaled(0.3))     # the core and the NF fall asleep
            sent.append(frame(i))
            t0 = time.monotonic()
            peer.send([sent[-1]])
            peer.collect(len(sent), timeout=30)
            took.append(time.monotonic() - t0)
    finally:
        peer.close()
    # Said, not asserted (a loaded machine; and net_tap's own rx signal
    # ends the core's sleep whatever rx_interrupt says): the round trips.
    log.info("rx_interrupt %s: round trips %s ms", intr or "on (default)",
             " ".join(f"{1000 * x:.2f}" for x in took))
    live = ctl(core, "/xnv/port/info", 0), ctl(core, "/xnv/port/info", 1)
    assert core.stop() == 0
    ports = {p["name"]: p for p in core.stats()["ports"]}
    return core, sent, peer.got, live, ports


def test_rx_interrupt_wakes_the_idle_core(tap_name, xnv):  # noqa: F811
    core, sent, got, live, ports = run(xnv, tap_name, None)
    assert got == sent, "frames lost or changed"
    t_line = next(ln for ln in core.log().splitlines() if "port 0 t:" in ln)
    assert "rx interrupt wakes the idle core" in t_line, t_line
    t, n = live
    log.info("rx_wakes: tap %d (%d frames), net_pcap %d", t["rx_wakes"],
             FRAMES, n["rx_wakes"])
    assert 1 <= t["rx_wakes"] <= FRAMES * 4, t
    assert ports["t"]["rx_wakes"] >= t["rx_wakes"]
    assert n["rx_wakes"] == 0 and ports["n"]["rx_wakes"] == 0
    n_line = next(ln for ln in core.log().splitlines() if "port 1 n:" in ln)
    assert "no rx interrupt (polled when idle)" in n_line, n_line


def test_rx_interrupt_off_polls_on_the_timeout(tap_name, xnv):  # noqa: F811
    core, sent, got, live, ports = run(xnv, tap_name, "off")
    assert got == sent, "frames lost or changed"
    lines = core.log().splitlines()
    t_line = next(ln for ln in lines if "port 0 t:" in ln)
    n_line = next(ln for ln in lines if "port 1 n:" in ln)
    assert "rx interrupt" not in t_line, t_line
    assert live[0]["rx_wakes"] == 0 and ports["t"]["rx_wakes"] == 0
    assert live[1]["rx_wakes"] == 0 and ports["n"]["rx_wakes"] == 0
    assert "no rx interrupt" in n_line, n_line   # asked: rx_interrupt on


def test_paced_port_interrupt_not_armed(tap_name, xnv):  # noqa: F811
    """rx_rate: the port's packets wait on purpose, so its interrupt
    (it has one, as its line says) would end every sleep: not enabled;
    the frames come back all the same."""
    core, sent, got, live, ports = run(xnv, tap_name, None, rx_rate=1000)
    assert got == sent, "frames lost or changed"
    t_line = next(ln for ln in core.log().splitlines() if "port 0 t:" in ln)
    assert "rx interrupt wakes the idle core" in t_line, t_line
    assert live[0]["rx_wakes"] == 0 and ports["t"]["rx_wakes"] == 0


def sleeps(pid):
    """{thread name: times it slept (voluntary context switches)} of
    process `pid`."""
    out = {}
    for comm, status in thread_files(pid, "comm", "status").values():
        n = next(int(ln.split()[1]) for ln in status.splitlines()
                 if ln.startswith("voluntary_ctxt_switches"))
        out[comm.strip()] = out.get(comm.strip(), 0) + n
    return out


def test_rx_interrupts_wake_each_worker(tap_name, xnv):  # noqa: F811
    """[core] workers = 2: the tap port has two queues, each worker's
    interrupt in that worker's own set.  Frames of many flows, one at a
    time into idle lcores (the kernel spreads them over the two queues by
    hash): all come back unchanged, the port says its interrupts wake the
    idle workers, and the second lcore's sleeps were ended by its own
    queue's interrupt (its rx_wakes in /xnv/workers), the port's count
    being both lcores'."""
    port = {"dev": f"net_tap0,iface={tap_name}", "group": "g",
            "chain": "fwd -> t"}
    cfg = write_config(xnv.path("intr-w2.ini"), [
        ("core", {"workers": 2}),
        ("group g", {"pool_bufs": 4096}),
        ("port t", port),
        ("service fwd", {"worker": 1}),
    ])
    core = xnv.start_core(cfg, duration=120, eal=("-l", "0,1"),
                          extra=["--idle-sleep-max", "1000000"])
    start_chain(xnv, core, tap_name)
    peer = Peer(tap_name)
    sent = []
    try:
        for i in range(4 * FRAMES):
            time.sleep(scaled(0.2))     # both lcores and the NF asleep
            sent.append(frame(i))
            peer.send([sent[-1]])
            peer.collect(len(sent), timeout=30)
    finally:
        peer.close()
    w = ctl(core, "/xnv/workers")
    t = ctl(core, "/xnv/port/info", 0)
    assert core.stop() == 0
    assert peer.got == sent, "frames lost or changed"
    t_line = next(ln for ln in core.log().splitlines() if "port 0 t:" in ln)
    assert "2 rx queues" in t_line and \
        "rx interrupts wake the idle workers" in t_line, t_line
    log.info("rx_wakes: port %d, worker 1 %d (%d frames)", t["rx_wakes"],
             w["1"]["rx_wakes"], len(sent))
    assert w["1"]["rx_wakes"] >= 1, w
    assert t["rx_wakes"] >= w["1"]["rx_wakes"], (t, w)


def second_lcore_asleep(xnv, tap):
    """A core on two lcores, the tap's queue 1 and NF fwd the second's,
    both lcores left idle long enough to sleep."""
    cfg = write_config(xnv.path("intr-long.ini"), [
        ("core", {"workers": 2}),
        ("group g", {"pool_bufs": 4096}),
        ("port t", {"dev": f"net_tap0,iface={tap}", "group": "g",
                    "chain": "fwd -> t"}),
        ("service fwd", {"worker": 1}),
    ])
    core = xnv.start_core(cfg, duration=120, eal=("-l", "0,1"))
    start_chain(xnv, core, tap)
    time.sleep(scaled(1.0))
    return core


def test_worker_with_interrupts_only_sleeps_long(tap_name, xnv):  # noqa: F811
    """Idle, with the default --idle-sleep-max (2 ms): the main lcore
    wakes that often (it runs the control plane), the second lcore, whose
    only port queue has an interrupt, sleeps until one fires or a second
    has passed: a few sleeps in 3 s against hundreds."""
    core = second_lcore_asleep(xnv, tap_name)
    before = sleeps(core.pid)
    time.sleep(3.0)
    after = sleeps(core.pid)
    waits = {k: after[k] - before.get(k, 0) for k in after}
    log.info("sleeps in 3 s: %s", waits)
    assert core.stop() == 0
    assert waits["rte-worker-1"] <= 10, waits
    assert waits["xnv-core"] >= 100, waits   # the 2 ms timer, for contrast


def test_rule_changes_wait_for_no_sleeping_worker(tap_name, xnv):  # noqa: F811
    """The second lcore sleeps up to a second at a time (above); a flow
    rule change waits until every lcore has left the old rule set
    (flow.c), and a sleeping one holds none: 20 changes, each its own
    grace period, take about what the control commands take, not 20 of
    the worker's sleeps."""
    core = second_lcore_asleep(xnv, tap_name)
    t0 = time.monotonic()
    for _ in range(10):
        assert ctl(core, "/xnv/flow/add", "proto=udp chain=drop")["id"] == 1
        assert ctl(core, "/xnv/flow/del", "1") == {"id": 1}
    took = time.monotonic() - t0
    log.info("20 rule changes, the second lcore asleep: %.2f s", took)
    assert core.stop() == 0
    assert took < scaled(5.0), f"20 rule changes took {took:.1f} s"
