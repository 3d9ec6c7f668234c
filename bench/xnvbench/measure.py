# SPDX-License-Identifier: BSD-3-Clause
"""One throughput measurement, the same for every system.

A Setup is a list of processes (Sides) started in order, and one DPDK
port whose transmitted packets are counted: the port where packets end
after their round trip (net_null "out" of xnv-core, or the net_null port
of the testpmd traffic side).  measure() starts the sides, waits until
packets arrive there, lets it run `warmup` seconds, then reads the port's
counter through DPDK telemetry at the start and the end of a window of
`duration` seconds: Mpps = packets / seconds of that window.  Start-up and
shutdown are outside the window, and the window is the same fixed length
for every system.

It also reads the on-CPU time of each side's data-path thread over the
window ("CPU share"): everything busy-polls, so a share well below 100 %
means another process took that CPU and the run is marked disturbed.
"""
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from .procs import (BenchError, Proc, Telemetry, remove_runtime_dir,
                    stop_all, wait_until)


@dataclass
class Side:
    """One process of a setup."""
    name: str
    argv: list
    cpu: int
    stop_sig: int = signal.SIGTERM
    thread: str = None		# comm of its data-path thread (None: main)
    after: object = None	# callable: true once it may start
    busy: bool = True		# busy-polls: its share must stay ~100 %


@dataclass
class Setup:
    """What one run of a configuration starts and counts."""
    sides: list
    count_prefix: str		# --file-prefix of the process counted
    count_dev: str		# ...and the device whose tx is counted
    prefixes: list = field(default_factory=list)	# all DPDK prefixes
    # (prefix, dev) of the NF side's port, read over the same window: no
    # more can come back than the NF sent (a check of the count itself)
    cross: tuple = None
    # prefix -> ports it must have: EAL goes on when a vdev fails to
    # probe, and a testpmd left with net_null alone forwards it to itself
    n_ports: dict = field(default_factory=dict)


@dataclass
class Sample:
    mpps: float
    packets: int
    seconds: float
    shares: dict		# side name -> CPU share over the window
    disturbed: bool
    bad: str = None		# why the count cannot be trusted


TESTPMD_WORKER = "rte-worker-1"	# its one forwarding lcore (DPDK 22.11)
BURST = 64		# packets per burst: xnv-core's default, for all


def testpmd(prefix, cpu, vdevs, mem, loop=False):
    """A Side running dpdk-testpmd with io forwarding on one CPU: EAL's
    main lcore (idle, waiting on stdin) and the one forwarding lcore are
    both pinned to `cpu`.  loop: what a port receives goes back out of
    the same port (the NF of a pair); else ports are paired (0 <-> 1)."""
    argv = ["dpdk-testpmd", "--lcores", "0@%d,1@%d" % (cpu, cpu),
            "--file-prefix", prefix, "--no-pci", *mem]
    for v in vdevs:
        argv += ["--vdev", v]
    argv += ["--", "--forward-mode=io", "--nb-cores=1", "--burst=%d" % BURST,
             "--total-num-mbufs=16384", "--no-mlockall"]
    if loop:
        argv.append("--port-topology=loop")
    return dict(argv=argv, cpu=cpu, stop_sig=signal.SIGINT,
                thread=TESTPMD_WORKER)


def start_sides(sides, logdir, timeout=30):
    """Start the sides in order, each once its .after() holds; return
    their Procs (stop them with stop_all, also after an exception: the
    list is filled as they start)."""
    procs = []
    try:
        for s in sides:
            if s.after:
                wait_until(s.after, timeout, "%s to be able to start"
                           % s.name, procs)
            procs.append(Proc(s.name, s.argv, logdir, s.stop_sig, s.thread))
    except BaseException:
        stop_all(procs)
        raise
    return procs


def _sample(tels, procs):
    return (time.monotonic(),
            [t.opackets(t.port) for t in tels if hasattr(t, "port")],
            {p.name: p.cpu_ns() for p in procs})


def measure(setup, logdir, warmup, duration, min_share=0.9,
            start_timeout=30):
    """Run one Setup; return a Sample.  Raises BenchError when something
    does not start, stops early, or moves no packet."""
    tels = []
    procs = start_sides(setup.sides, logdir, start_timeout)
    try:
        counted = [(setup.count_prefix, setup.count_dev)]
        if setup.cross:
            counted.append(setup.cross)
        for prefix, dev in counted:
            tel = Telemetry(prefix, procs, start_timeout)
            tels.append(tel)
            tel.port = tel.wait_port(dev, start_timeout, procs)
        for prefix, want in setup.n_ports.items():
            tel = Telemetry(prefix, procs, start_timeout)
            tels.append(tel)
            have = len(tel("/ethdev/list") or [])
            if have != want:
                raise BenchError("%s has %d ports, not %d: a device failed "
                                 "to probe (logs in %s)" % (prefix, have,
                                                            want, logdir))
        tel = tels[0]
        wait_until(lambda: tel.opackets(tel.port) > 0, start_timeout,
                   "packets out of %s" % setup.count_dev, procs)
        time.sleep(warmup)
        t0, c0, cpu0 = _sample(tels, procs)
        time.sleep(duration)
        t1, c1, cpu1 = _sample(tels, procs)
        for p in procs:
            if not p.alive():
                raise BenchError("%s stopped during the run:\n%s"
                                 % (p.name, p.log_path.read_text()[-1500:]))
    finally:
        for tel in tels:
            tel.close()
        try:
            stop_all(procs)
        finally:
            for prefix in setup.prefixes:
                remove_runtime_dir(prefix)
    n = c1[0] - c0[0]
    bad = None
    if setup.cross and n > 1.02 * (c1[1] - c0[1]) + 4096:
        bad = "counted %d, but the NF sent only %d" % (n, c1[1] - c0[1])
    if n <= 0:
        raise BenchError("no packet came back in %.1f s (logs in %s)"
                         % (duration, logdir))
    shares = {}
    for s in setup.sides:
        a, b = cpu0.get(s.name), cpu1.get(s.name)
        shares[s.name] = None if a is None or b is None else \
            (b - a) * 1e-9 / (t1 - t0)
    disturbed = any(s.busy and (shares[s.name] or 0) < min_share
                    for s in setup.sides)
    return Sample(n / (t1 - t0) / 1e6, n, t1 - t0, shares, disturbed, bad)


def ring_limit(ring_rt, cpu_a, cpu_b, warmup, duration, logdir,
               min_share=0.9):
    """One run of ring-rt (bench/ring_rt.c): round trips per second of
    the bare shared ring, "core" thread on cpu_a, "NF" thread on cpu_b
    touching the first 64 B of each packet.  It reports its own shares."""
    cmd = [str(ring_rt), "-n", "1", "-d", str(duration), "-w", str(warmup),
           "-c", str(cpu_a), "-f", str(cpu_b)]
    limit = duration + warmup + 30
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True,
                           stderr=subprocess.STDOUT, timeout=limit)
    except subprocess.TimeoutExpired:	# run() has killed it by PID
        raise BenchError("ring-rt did not finish within %.0f s" % limit)
    (logdir / "ring-rt.log").write_text(p.stdout)
    m = re.search(r"rep 1/1: ([0-9.]+) Mdesc/s.*core thread ([0-9]+) %, "
                  r"NF thread ([0-9]+) %", p.stdout)
    if p.returncode != 0 or m is None:
        raise BenchError("ring-rt failed (exit %d):\n%s"
                         % (p.returncode, p.stdout.rstrip()))
    mpps = float(m.group(1))
    shares = {"core thread": int(m.group(2)) / 100,
              "NF thread": int(m.group(3)) / 100}
    return Sample(mpps, int(mpps * 1e6 * duration), duration, shares,
                  min(shares.values()) < min_share)
