# SPDX-License-Identifier: BSD-3-Clause
"""xnv-core on two lcores ([core] workers = 2, dom0-core/worker.h).

A net_pcap port with two rx_pcap files has two rx queues: queue 0 is the
main lcore's, queue 1 the worker's.  With a port-only chain the worker
sends what it receives itself, on tx queue 1 (the second tx_pcap file);
with an NF of the main lcore in the chain it steers its packets to it,
and they leave through tx queue 0, each input file's packets in their
order; flow rules it applies itself (its own verdict cache and hit
counters, flow.c; a fabric port's hops: test_fabric_port.py).  The
counters of both lcores add up in the core's report.  (NFs of other
lcores: test_worker_nfs.py.)"""
import os
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from harness import (BUILD, CTL_BIN, cpu_ticks, ctl, read_pcap, scaled, wait_until,
                     thread_files, write_config, write_pcap)
from traffic import flow_key, make_traffic
from vethpair import round_trip, veth  # noqa: F401 (veth: a fixture)

N_A, N_B = 3000, 2000


def two_queue_config(env, chain, workers=2, more=(), b_frames=None, core=()):
    a = write_pcap(env.path("a.pcap"), make_traffic(N_A, 0xA))
    b = write_pcap(env.path("b.pcap"), make_traffic(N_B, 0xB)
                   if b_frames is None else b_frames)
    cfg = write_config(env.path("workers.ini"), [
        # every packet must come out, none dropped as stall on a loaded
        # machine (the default is 500 ms)
        ("core", {"socket": env.socket, "workers": workers,
                  "stall_timeout_ms": 20000, **dict(core)}),
        ("group blue", {"pool_bufs": 4096}),
        ("port in", {"dev": f"net_pcap0,rx_pcap={a},rx_pcap={b}",
                     "group": "blue", "chain": chain}),
        ("port out", {"dev": f"net_pcap1,tx_pcap={env.path('oa.pcap')},"
                             f"tx_pcap={env.path('ob.pcap')}",
                      "group": "blue"}),
        ("service fwd", {}),
        *more,
    ])
    return cfg, read_pcap(a), read_pcap(b)


def worker_line(log):
    """(sent itself, steered to other workers) of worker 1's exit line."""
    m = re.search(r"worker 1 \(lcore 1\): (\d+) packets sent itself, "
                  r"(\d+) steered to other workers", log)
    assert m, log[-2000:]
    return tuple(int(x) for x in m.groups())


def port(stats, name):
    return next(p for p in stats["ports"] if p["name"] == name)


def test_port_chain_runs_on_both_lcores(xnv):
    """Each queue's packets leave on the same lcore's tx queue, unchanged
    and in order; the worker says how many it sent; the counters add up."""
    cfg, a, b = two_queue_config(xnv, "out")
    core = xnv.start_core(cfg, idle_exit=500, eal=("-l", "0,1"))
    assert core.wait(60) == 0, core.log()[-3000:]
    log = core.log()
    assert "worker 1 on lcore 1: rx and tx queue 1" in log
    assert "2 rx queues, 2 tx queues" in log
    assert read_pcap(xnv.path("oa.pcap")) == a
    assert read_pcap(xnv.path("ob.pcap")) == b
    assert worker_line(log) == (N_B, 0)
    st = core.stats()
    assert port(st, "in")["rx"] == N_A + N_B
    assert port(st, "out")["tx"] == N_A + N_B


def test_nf_chain_crosses_to_the_main_lcore(xnv):
    """The NF is the main lcore's (its service's worker is 0): the worker
    resolves its packets and steers them to it; all arrive, each input
    queue's packets in their order."""
    cfg, a, b = two_queue_config(xnv, "fwd -> out")
    core = xnv.start_core(cfg, idle_exit=500, eal=("-l", "0,1"))
    core.wait_ready()
    nf = xnv.start_nf("fwd", "blue", "fwd-1")
    core.wait_attached(nf)
    assert core.wait(60) == 0, core.log()[-3000:]
    out = read_pcap(xnv.path("oa.pcap"))
    assert read_pcap(xnv.path("ob.pcap")) == []
    assert sorted(out) == sorted(a + b)
    sa, sb = set(a), set(b)
    assert [p for p in out if p in sa] == a
    assert [p for p in out if p in sb] == b
    assert worker_line(core.log()) == (0, N_B)
    st = core.stats()
    assert port(st, "in")["rx"] == N_A + N_B
    assert port(st, "out")["tx"] == N_A + N_B


def test_odd_frames_of_a_worker_dropped_there(xnv):
    """Empty and oversize frames among the second queue's packets, a
    port-only chain: the second lcore counts and drops them itself (the
    oversize ones said once, for the port), sends the rest on its own tx
    queue in order, and steers nothing to the main lcore."""
    good = make_traffic(N_B, 0xB)
    big = [good[0][:14] + bytes(n - 14) for n in (2049, 9000)]
    frames = []
    for i, p in enumerate(good):
        frames += [b""] * (i % 50 == 7) + [big[i // 1000]] * (i % 1000 == 500)
        frames.append(p)
    n_empty = frames.count(b"")
    cfg, a, _ = two_queue_config(xnv, "out", b_frames=frames)
    core = xnv.start_core(cfg, idle_exit=500, eal=("-l", "0,1"))
    assert core.wait(60) == 0, core.log()[-3000:]
    assert read_pcap(xnv.path("oa.pcap")) == a
    assert read_pcap(xnv.path("ob.pcap")) == good
    assert worker_line(core.log()) == (N_B, 0)
    st = core.stats()
    assert port(st, "in")["rx"] == N_A + len(frames)
    assert port(st, "out")["tx"] == N_A + N_B
    assert (st["drops"].get("empty"), st["drops"].get("multiseg")) == \
        (n_empty, 2), st["drops"]
    said = [ln for ln in core.log().splitlines() if "counted as multiseg" in ln]
    assert len(said) == 1, said
    assert "port in: dropped a 2049-byte frame" in said[0], said


def test_latency_histograms_of_both_lcores(xnv):
    """[core] latency on, a port-only chain: each lcore stamps its
    queue's packets and sends them itself on its own tx queue (nothing
    steered to the main lcore), recording into a histogram of its own;
    /xnv/port/latency counts every packet of both, and a reset empties
    both."""
    cfg, a, b = two_queue_config(xnv, "out", core={"latency": "on"})
    core = xnv.start_core(cfg, eal=("-l", "0,1"))
    core.wait_ready()
    wait_until(lambda: ctl(core, "/xnv/port/info", "1")["tx"] == N_A + N_B,
               60, "every packet out")
    lat = ctl(core, "/xnv/port/latency", "1")
    assert lat["count"] == N_A + N_B, lat
    assert 0 < lat["p50_ns"] <= lat["max_ns"], lat
    assert ctl(core, "/xnv/port/latency/reset", "1")["reset"] == "ok"
    assert ctl(core, "/xnv/port/latency", "1")["count"] == 0
    core.stop()
    assert read_pcap(xnv.path("oa.pcap")) == a
    assert read_pcap(xnv.path("ob.pcap")) == b
    assert worker_line(core.log()) == (N_B, 0)


def exact_rule(frame, name):
    """A [flow] section: the exact 5-tuple of an IPv4 TCP frame, dropped."""
    _, src, dst, proto, sport, dport = flow_key(frame)
    return (f"flow {name}", {"proto": proto, "src": socket.inet_ntoa(src),
                             "dst": socket.inet_ntoa(dst), "sport": sport,
                             "dport": dport, "chain": "drop"})


def first_tcp4(frames):
    return next(p for p in frames if flow_key(p)[0] == 4 and flow_key(p)[3] == 6)


def test_flow_rules_on_both_lcores(xnv):
    """Each lcore applies the flow rules to what its own queue takes: UDP
    dropped by a wildcard rule (the tries), one TCP flow of each queue by
    an exact rule (the hash); each queue's other packets leave on the
    same lcore's tx queue, in order.  Nothing is steered to the main lcore,
    and each rule's hits (every lcore's summed) are its packets of both
    queues."""
    a, b = make_traffic(N_A, 0xA), make_traffic(N_B, 0xB)
    ta, tb = flow_key(first_tcp4(a)), flow_key(first_tcp4(b))
    rules = [("flow udp", {"proto": "udp", "chain": "drop"}),
             exact_rule(first_tcp4(a), "ta"), exact_rule(first_tcp4(b), "tb")]
    cfg, a, b = two_queue_config(xnv, "out", more=rules)
    core = xnv.start_core(cfg, eal=("-l", "0,1"))
    core.wait_ready()

    def kept(frames):
        return [p for p in frames if flow_key(p)[3] != 17 and flow_key(p) not in (ta, tb)]
    kept_a, kept_b = kept(a), kept(b)
    assert 0 < len(kept_a) < N_A and 0 < len(kept_b) < N_B
    wait_until(lambda: ctl(core, "/xnv/port/info", "1")["tx"] >= len(kept_a) + len(kept_b),
               60, "the kept packets out")
    hits = [ctl(core, "/xnv/flow/info", str(i))["hits"] for i in (1, 2, 3)]
    core.stop()
    assert worker_line(core.log()) == (len(kept_b), 0)
    assert read_pcap(xnv.path("oa.pcap")) == kept_a
    assert read_pcap(xnv.path("ob.pcap")) == kept_b
    both = a + b
    assert hits == [sum(flow_key(p)[3] == 17 for p in both),
                    sum(flow_key(p) == ta for p in both),
                    sum(flow_key(p) == tb for p in both)], hits
    assert hits[1] > 0 and hits[2] > 0
    st = core.stats()
    assert st["drops"]["chain_drop"] == N_A + N_B - len(kept_a) - len(kept_b)


def test_rule_changes_while_both_lcores_classify(xnv):
    """A rule that drops everything from port in added and deleted 40
    times under endless traffic on both queues (two pcaps looped): each
    change returns (it waits for both lcores to leave the old rule set,
    flow.c), both lcores dropped by the rule and forwarded without it,
    every packet is accounted for, and the last change leaves no rule."""
    a = write_pcap(xnv.path("a.pcap"), make_traffic(64, 0xA))
    b = write_pcap(xnv.path("b.pcap"), make_traffic(64, 0xB))
    cfg = write_config(xnv.path("loop.ini"), [
        ("core", {"socket": xnv.socket, "workers": 2}),
        ("group g", {"pool_bufs": 4096}),
        ("port in", {"dev": f"net_pcap0,rx_pcap={a},rx_pcap={b},infinite_rx=1",
                     "group": "g", "chain": "out"}),
        ("port out", {"dev": "net_null1", "group": "g"}),
    ])
    core = xnv.start_core(cfg, eal=("-l", "0,1"))
    core.wait_ready()
    for _ in range(40):
        r = ctl(core, "/xnv/flow/add", "in_port=in chain=drop")
        assert r.get("id") == 1, r
        time.sleep(0.01)
        assert ctl(core, "/xnv/flow/del", "1") == {"id": 1}
        time.sleep(0.01)
    assert ctl(core, "/xnv/flow/list") == []
    w = ctl(core, "/xnv/workers")
    assert w["1"]["drops"] > 0 and w["1"]["sent"] > 0, w
    assert w["1"]["steered"] == 0, w
    core.stop()
    st = core.stats()
    assert st["drops"].get("chain_drop", 0) > 0, st["drops"]
    assert port(st, "in")["rx"] == port(st, "out")["tx"] + sum(st["drops"].values()), st


@pytest.mark.skipif(BUILD.name == "build-san", reason=(
    "with one of its two rx_pcap files unused, net_pcap leaves libpcap's "
    "handle of it unfreed at exit (LeakSanitizer: 2712 bytes from "
    "libpcap), which fails the core's exit"))
def test_one_worker_keeps_one_queue(xnv):
    """The default: one lcore, one queue per port (the second rx_pcap
    file is never read)."""
    cfg, a, b = two_queue_config(xnv, "out", workers=1)
    core = xnv.start_core(cfg, idle_exit=500)
    assert core.wait(60) == 0, core.log()[-3000:]
    assert read_pcap(xnv.path("oa.pcap")) == a
    assert port(core.stats(), "in")["rx"] == N_A
    assert "worker 1" not in core.log()


def test_more_workers_than_lcores_refused(xnv):
    cfg, _, _ = two_queue_config(xnv, "out", workers=2)
    core = xnv.start_core(cfg, eal=("-l", "0"))
    assert core.wait(30) == 1
    errs = [ln for ln in core.log().splitlines() if "[core] workers" in ln]
    assert len(errs) == 1, core.log()[-2000:]
    assert ("[core] workers = 2 needs 2 lcores, EAL gave 1: start "
            "xnv-core with as many, such as -l 0-1") in errs[0]


def null_core(xnv):
    """A core on two lcores, endless net_null traffic `in` -> `out`."""
    cfg = write_config(xnv.path("null.ini"), [
        ("core", {"socket": xnv.socket, "workers": 2}),
        ("group g", {"pool_bufs": 4096}),
        ("port in", {"dev": "net_null0", "group": "g", "chain": "out"}),
        ("port out", {"dev": "net_null1", "group": "g"}),
    ])
    core = xnv.start_core(cfg, eal=("-l", "0,1"))
    core.wait_ready()
    return core


def test_chain_changes_while_both_lcores_forward(xnv):
    """Control commands change what the worker reads only while it waits
    (its barrier): a port's chain switched between `out` and `drop` 40
    times under endless net_null traffic.  Both ways were taken by both
    lcores, and every packet received is accounted for: sent or dropped."""
    core = null_core(xnv)
    for i in range(40):
        r = ctl(core, "/xnv/chain/set", f"in {'drop' if i % 2 == 0 else 'out'}")
        assert "error" not in r, r
    # the workers' own view, live: telemetry and xnv-ctl
    w = ctl(core, "/xnv/workers")
    assert (w["workers"], w["main_lcore"], w["1"]["lcore"]) == (2, 0, 1), w
    # the drop step too: resolved and dropped by the worker itself
    assert w["1"]["sent"] > 0 and w["1"]["drops"] > 0, w
    assert w["1"]["steered"] == 0, w
    # the main lcore's own row: its queue, its sends and drops
    assert w["0"]["lcore"] == 0 and w["0"]["steered"] == 0, w
    for k in ("0", "1"):
        assert w[k]["rx"] >= w[k]["sent"] + w[k]["drops"] > 0, w
    r = xnv.run([CTL_BIN, "--socket", xnv.socket, "workers"])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("2 worker(s); the main lcore (0) runs the "
                               "control plane"), r.stdout
    assert lines[1].split() == ["WORKER", "LCORE", "NFS", "RX", "SENT",
                                "STEERED", "DROPS"], r.stdout
    assert [ln.split()[:3] for ln in lines[2:4]] == [["0", "0", "0"],
                                                     ["1", "1", "0"]], r.stdout
    core.stop()
    sent, steered = worker_line(core.log())
    assert sent > 0 and steered == 0, (sent, steered)
    st = core.stats()
    drops = st["drops"]
    assert drops.get("chain_drop", 0) > 0, drops
    assert port(st, "in")["rx"] == port(st, "out")["tx"] + sum(drops.values()), st


def test_idle_workers_sleep(xnv):
    """No traffic: both lcores back off and sleep (the main one on its
    doorbells, woken by a worker that hands it packets), so the core
    takes a small part of one CPU, not the two CPUs of two spinners."""
    cfg = write_config(xnv.path("idle.ini"), [
        ("core", {"socket": xnv.socket, "workers": 2}),
        ("group g", {"pool_bufs": 4096}),
        ("port in", {"dev": "net_null0,no-rx=1", "group": "g",
                     "chain": "out"}),
        ("port out", {"dev": "net_null1,no-rx=1", "group": "g"}),
    ])
    core = xnv.start_core(cfg, eal=("-l", "0,1"))
    core.wait_ready()
    hz = os.sysconf("SC_CLK_TCK")
    time.sleep(scaled(1.0))
    t0, c0 = time.monotonic(), cpu_ticks([core.pid])
    time.sleep(scaled(3.0))
    t1, c1 = time.monotonic(), cpu_ticks([core.pid])
    used = (c1 - c0) / hz / (t1 - t0)
    assert used < 0.25, f"idle core on two lcores took {100 * used:.1f} % of a CPU"
    assert core.alive()


def test_queues_of_a_paced_port_and_a_reload(xnv):
    """A paced port keeps one rx queue (one budget) and still gets a tx
    queue per worker; `workers` cannot change live: a reload that changes
    it is refused in one line and nothing changes."""
    cfg = write_config(xnv.path("paced.ini"), [
        ("core", {"socket": xnv.socket, "workers": 2}),
        ("group g", {"pool_bufs": 4096}),
        ("port in", {"dev": "net_null0", "group": "g", "chain": "out",
                     "rx_rate": 1000}),
        ("port out", {"dev": "net_null1", "group": "g"}),
    ])
    core = xnv.start_core(cfg, eal=("-l", "0,1"))
    core.wait_ready()
    log = core.log()
    assert re.search(r"port 0 in: .*rx \+ tx, 1 rx queue, 2 tx queues", log), log
    assert re.search(r"port 1 out: .*2 rx queues \(RSS\), 2 tx queues", log), log
    text = cfg.read_text()
    cfg.write_text(text.replace("workers = 2", "workers = 1"))
    r = ctl(core, "/xnv/reload")
    assert r == {"error": "reload refused: [core] workers cannot change "
                          "live (restart the core)"}, r
    assert ctl(core, "/xnv/config")["workers"] == 2
    core.stop()
    assert worker_line(core.log()) == (0, 0)  # a paced port: queue 0


@pytest.mark.parametrize("rules", [False, True], ids=["chain", "flow-rule"])
def test_af_packet_queues_on_two_lcores(xnv, veth, rules):
    """A real interface: an af_packet port with two queue pairs (the
    kernel spreads flows over its two sockets by hash), chain back out of
    the same port, on two lcores.  Frames of 32 UDP flows, a third of them
    802.1Q-tagged, sent on the veth's other end: all come back byte for
    byte (tags put back), each flow in order, and the second lcore
    received some of them.  With a flow rule that drops the flows to
    10.0.1.0/28, each lcore applies it to what its socket took: the other
    flows come back, nothing is steered to the main lcore."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Dot1Q, Ether
    cfg = write_config(xnv.path("afp2.ini"), [
        ("core", {"socket": xnv.socket, "workers": 2}),
        ("group g", {"pool_bufs": 4096}),
        ("port p", {"dev": f"net_af_packet0,iface={veth.a},qpairs=2",
                    "group": "g", "chain": "p"}),
        *([("flow low", {"dst": "10.0.1.0/28", "chain": "drop"})] if rules else []),
    ])
    core = xnv.start_core(cfg, eal=("-l", "0,1"))
    core.wait_ready()
    assert re.search(r"port 0 p: .*2 rx queues, 2 tx queues", core.log())
    frames = []
    for i in range(20):
        for fl in range(32):
            eth = Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01")
            if fl % 3 == 0:
                eth = eth / Dot1Q(vlan=100 + fl)
            pkt = eth / IP(src="10.0.0.1", dst="10.0.1.%d" % (fl + 1)) / \
                UDP(sport=1000 + fl, dport=2000) / (b"%04d" % i + bytes(20))
            frames.append(bytes(pkt))
    kept = [f for i, f in enumerate(frames) if not rules or i % 32 + 1 >= 16]
    flow = {f: i % 32 for i, f in enumerate(frames)}
    round_trip(veth.b, frames, kept, flow.get)
    core.stop()
    sent, steered = worker_line(core.log())
    assert sent > 0, "the second lcore sent nothing"
    assert steered == 0, (sent, steered)
    st = core.stats()
    assert port(st, "p")["rx"] == len(frames), st
    assert port(st, "p")["tx"] == len(kept), st


def test_af_packet_more_queues_than_workers_refused(xnv, veth):
    cfg = write_config(xnv.path("afp3.ini"), [
        ("core", {"socket": xnv.socket, "workers": 2}),
        ("port p", {"dev": f"net_af_packet0,iface={veth.a},qpairs=3",
                    "chain": "p"}),
    ])
    core = xnv.start_core(cfg, eal=("-l", "0,1"))
    assert core.wait(30) == 1
    assert re.search(r"port p: qpairs=3: xnv-core polls one queue per worker"
                     r" \(\[core\] workers = 2\), frames the kernel hands "
                     r"the other queues would never be read; use "
                     r"qpairs=1\.\.2$", core.log(), re.M), core.log()[-1500:]


WALL = 0x40000000     # waitpid's __WALL: a thread of a traced process


def thread_of(pid, name):
    """The id of process `pid`'s thread called `name`."""
    for tid, (comm,) in thread_files(pid, "comm").items():
        if comm.strip() == name:
            return tid
    raise AssertionError(f"no thread {name} in process {pid}")


class ThreadStop:
    """Only thread `tid` stopped while inside (ptrace: PTRACE_SEIZE, then
    PTRACE_INTERRUPT stops that thread alone, PTRACE_DETACH resumes it)."""
    SEIZE, INTERRUPT, DETACH = 0x4206, 0x4207, 17

    def __init__(self, tid):
        import ctypes
        self.tid = tid
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long,
                                     ctypes.c_void_p, ctypes.c_void_p]

    def _call(self, req):
        import ctypes
        if self.libc.ptrace(req, self.tid, None, None) != 0:
            raise OSError(ctypes.get_errno(), f"ptrace {req:#x} {self.tid}")

    def __enter__(self):
        self._call(self.SEIZE)
        try:
            self._call(self.INTERRUPT)
            os.waitpid(self.tid, WALL)      # stopped
        except BaseException:
            self._call(self.DETACH)
            raise
        return self

    def __exit__(self, *exc):
        self._call(self.DETACH)


def test_a_worker_that_does_not_park_is_said(xnv):
    """The second lcore's thread stopped (ptrace, that thread alone) for
    about 2 s while a control command waits for every lcore to park: the
    core says which worker has not parked, then how long it took; the
    command then answers and the traffic goes on."""
    core = null_core(xnv)
    tid = thread_of(core.pid, "rte-worker-1")
    got = {}
    ask = threading.Thread(target=lambda: got.update(
        r=ctl(core, "/xnv/workers", timeout=30)))
    with ThreadStop(tid):
        t0 = time.monotonic()
        ask.start()
        core.wait_output(r"worker 1 \(lcore 1\) has not parked in 1 s: "
                         r"control commands wait for it", 20)
        time.sleep(max(0.0, 2.0 - (time.monotonic() - t0)))
    ask.join(scaled(60))
    assert got["r"]["1"]["lcore"] == 1, got
    m = core.wait_output(r"worker 1 parked after (\d+\.\d) s", 20)
    assert float(m.group(1)) >= 1.0, m.group(0)
    sent = ctl(core, "/xnv/workers")["1"]["sent"]
    wait_until(lambda: ctl(core, "/xnv/workers")["1"]["sent"] > sent, 20,
               "the second lcore sending again")
    # SIGUSR1's table, made with the workers parked, printed after
    snap = core.snapshot()
    assert snap["ports"]["in"]["rx"] > 0 and "out" in snap["ports"], snap
    core.stop()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_stdout_nobody_reads_stops_no_lcore(xnv, veth, workers):
    """The core's stdout a FIFO nobody reads, SIGUSR1 until it is full:
    the table's own thread blocks writing it, every lcore goes on sending
    (its tx queue of an af_packet port, counted by the peer's rx_packets),
    the control plane answers, the tables asked for meanwhile are skipped
    and said.  Once the FIFO is read, the exit table follows the last
    SIGUSR1 table whole."""
    import fcntl
    import termios
    fifo = xnv.path("stdout.fifo")
    os.mkfifo(fifo)
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    cfg = write_config(xnv.path("fifo.ini"), [
        ("core", {"socket": xnv.socket, "workers": workers}),
        ("group g", {"pool_bufs": 4096}),
        ("port in", {"dev": "net_null0", "group": "g", "chain": "out"}),
        ("port out", {"dev": f"net_af_packet0,iface={veth.a},qpairs={workers}",
                      "group": "g"}),
    ])
    eal = ("-l", ",".join(str(i) for i in range(workers)))
    core = xnv.start_core(cfg, eal=eal, wrapper=(
        "sh", "-c", f'exec "$@" > {fifo}', "sh"))
    out = xnv.path("stdout.txt")
    drain = threading.Thread(target=lambda: subprocess.run(
        ["sh", "-c", f"cat {fifo} > {out}"]))
    try:
        core.wait_ready()
        for _ in range(400):
            core.signal(signal.SIGUSR1)
            time.sleep(0.005)
        buf = bytearray(4)
        wait_until(lambda: fcntl.ioctl(rfd, termios.FIONREAD, buf) == 0 and
                   int.from_bytes(buf, "little") >= 60000, 20,
                   "the FIFO full of tables")
        core.signal(signal.SIGUSR1)
        core.wait_output(r"SIGUSR1: the last table is still being written", 20)
        rx = Path(f"/sys/class/net/{veth.b}/statistics/rx_packets")
        before = int(rx.read_text())
        time.sleep(scaled(1.0))
        after = int(rx.read_text())
        assert after > before, "the data path stopped with stdout"
        assert ctl(core, "/xnv/workers")["workers"] == workers
    finally:
        drain.start()       # the table's writes go through: it stops
        core.stop()
        drain.join(scaled(30))
        os.close(rfd)
    text = Path(out).read_text()
    # the writer thread's tables are whole, then the exit table, last
    assert text.endswith(text[text.rindex("xnv-core statistics after"):])
    tables = text.split("xnv-core statistics after")[1:]
    assert len(tables) >= 2 and all("core drops:" in t for t in tables[-2:])
    assert "stdout took the table;" in core.log()
