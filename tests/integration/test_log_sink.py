# SPDX-License-Identifier: BSD-3-Clause
"""The core's log never blocks its data path (dom0-core/logsink.c).

xnv-core's stderr is a pipe the test does not read (4 KiB, F_SETPIPE_SZ),
its log buffer is small ([core] log_buffer_kib = 16), and it logs a few
lines per attach / detach of an xnv-probe run, which the test repeats,
while a forwarder NF carries paced traffic (net_null -> fwd -> net_null).

(a) Stall, then read: while the log cannot go out and lines are being
    dropped, packets keep being forwarded (telemetry counters go up).
    Once read again, every line is whole and in order, each run of
    dropped lines is said by one "N log lines dropped" line in its place,
    adding up to /xnv/stats log_dropped.  SIGTERM: status 0, and the lines
    of the shutdown, DPDK's own (net_null's "Closing", at exit) included,
    come out last.
(b) Never read: SIGTERM still ends the core, status 0, within the sink's
    bounded wait at exit; DPDK's lines at teardown do not block it either.
"""
import fcntl
import os
import re
import signal
import subprocess
import threading

import pytest

from harness import CORE_BIN, wait_for_socket, wait_until, write_config
from xnv.prefix import file_prefix, telemetry_path
from xnv.procs import STAMP, stop_popen, unstamped
from xnv.telemetry import Telemetry

F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
PIPE_BYTES = 4096
LOG_KIB = 16
RX_RATE = 10000             # packets/s offered to the forwarder
# Lines of one xnv-probe run (attach, detach), whole.
ATTACH = re.compile(r"xnv-core: NF flood(\d+) \(pid \d+\) attached as domain \d+: "
                    r"service probe, group g, ring region \d+, pool region \d+ "
                    r"\(\d+ KiB\); pool: the group's \(zero copy\)")
DETACH = re.compile(r"xnv-core: NF flood(\d+) \(domain \d+\) detached: .+; "
                    r"rx 0 tx 0 drop 0 bad 0, 0 buffers reclaimed")
DROPPED = re.compile(r"xnv-core: (\d+) log lines dropped \(stderr was not being read\)")


class PipedCore:
    """xnv-core with its stderr on a pipe that nobody reads until
    read_from_now_on(); stopped by PID (xnv.procs.stop_popen)."""

    def __init__(self, env, cfg):
        r, w = os.pipe()
        fcntl.fcntl(w, F_SETPIPE_SZ, PIPE_BYTES)
        argv = [CORE_BIN, "-l", "0", "--log-level=pmd.net.null:info", "--",
                "--config", cfg, "--socket", env.socket, "--duration", 120]
        with open(env.path("core.out"), "w") as out:
            self.popen = subprocess.Popen([str(a) for a in argv], stdout=out,
                                          stderr=w, stdin=subprocess.DEVNULL,
                                          cwd=env.dir)
        os.close(w)
        self.fd, self.data, self.reader = r, bytearray(), None
        self.tpath = telemetry_path(file_prefix(str(env.socket)))
        wait_for_socket(env.socket)

    def read_from_now_on(self):
        def loop():
            while chunk := os.read(self.fd, 65536):
                self.data += chunk
        self.reader = threading.Thread(target=loop, daemon=True)
        self.reader.start()

    def raw_text(self):
        return bytes(self.data).decode(errors="replace")

    def text(self):
        """What was read, log lines without their time and level."""
        return unstamped(self.raw_text())

    def stats(self):
        with Telemetry(self.tpath) as t:
            return t.call("/xnv/stats", busy_timeout=30)

    def close(self):
        stop_popen(self.popen, "core")
        if self.reader is not None:
            self.reader.join(10)
        os.close(self.fd)


@pytest.fixture
def piped(xnv, probe_bin):
    """A PipedCore with a forwarder NF carrying traffic; `flood(n)` runs
    xnv-probe once (attach, exit: a few lines of log)."""
    cfg = write_config(xnv.path("log.ini"), [
        ("core", {"socket": xnv.socket, "log_buffer_kib": LOG_KIB}),
        ("group g", {"pool_bufs": 4096}),
        ("port in", {"dev": "net_null0", "group": "g", "chain": "fwd -> out",
                     "rx_rate": RX_RATE}),
        ("port out", {"dev": "net_null1", "group": "g"}),
        ("service fwd", {}),
        ("service probe", {}),
    ])
    core = PipedCore(xnv, cfg)
    try:
        xnv.start_nf("fwd", "g", "fwd")
        wait_until(lambda: core.stats()["tx"] > 0, 20, "traffic through fwd")

        def flood(n):
            r = xnv.run([probe_bin, "--socket", xnv.socket, "--service", "probe",
                         "--group", "g", "--name", f"flood{n}"])
            assert r.returncode == 0, r.stdout + r.stderr
        core.flood = flood
        yield core
    finally:
        core.close()


def flood_until_dropping(core):
    """xnv-probe runs until the core drops log lines (its stderr is not
    read: the pipe, then the thread's chunk, then the buffer fill up).
    Returns how many runs it took."""
    n = 0
    while n < 3000:
        for _ in range(10):
            core.flood(n)
            n += 1
        if core.stats()["log_dropped"] > 0:
            return n
    pytest.fail(f"no log line dropped after {n} xnv-probe runs")


def test_stalled_stderr_does_not_stop_the_data_path(piped):
    n = flood_until_dropping(piped)
    # stderr still not read: packets keep going through the NF and the
    # control plane answers
    before = piped.stats()
    wait_until(lambda: piped.stats()["tx"] > before["tx"] + RX_RATE // 10, 30,
               "packets forwarded while stderr is stalled")
    for k in range(n, n + 20):         # and NFs still attach
        piped.flood(k)
    assert piped.stats()["log_dropped"] > before["log_dropped"]

    piped.read_from_now_on()
    # the drops are said once everything held before them is out
    wait_until(lambda: DROPPED.search(piped.text()), 20, "the dropped-lines line")
    last = n + 25
    for k in range(n + 20, last):      # lines logged after the reader is back
        piped.flood(k)
    wait_until(lambda: re.search(rf"NF flood{last - 1} \(domain", piped.text()),
               20, "the last run's detach line")
    dropped = piped.stats()["log_dropped"]
    lines = piped.text().splitlines()
    # every line, the notices of dropped ones included, has its time and
    # level
    raw = piped.raw_text().splitlines()
    assert len(raw) == len(lines) and all(STAMP.match(ln) for ln in raw), \
        [ln for ln in raw if not STAMP.match(ln)][:5]

    # each run of drops said once, in its place, adding up
    notes = [int(m.group(1)) for m in map(DROPPED.fullmatch, lines) if m]
    assert notes and all(k > 0 for k in notes), lines[-50:]
    assert sum(notes) == dropped
    # every line whole: one "xnv-core:" at the start of each, the probe
    # lines match in full; runs attach in order, leave in order, and each
    # attaches before it leaves (a run may attach before the previous
    # one's exit is noticed)
    where = {ATTACH: {}, DETACH: {}}
    for i, line in enumerate(lines):
        assert line.count("xnv-core:") <= 1, line
        assert "xnv-core:" not in line or line.startswith("xnv-core: "), line
        if "flood" in line:
            m = ATTACH.fullmatch(line) or DETACH.fullmatch(line)
            assert m, f"cut or mixed line: {line!r}"
            where[m.re][int(m.group(1))] = i
    for rx in where:
        runs = list(where[rx])
        assert runs == sorted(runs), (rx.pattern, runs)
    assert all(where[ATTACH][k] < where[DETACH][k]
               for k in where[ATTACH].keys() & where[DETACH].keys())
    assert all(k in where[ATTACH] and k in where[DETACH]
               for k in range(n + 20, last)), "lines after the stall missing"

    piped.popen.send_signal(signal.SIGTERM)
    assert piped.popen.wait(30) == 0
    piped.reader.join(10)
    text = piped.text()
    shutdown = text.index("detached: xnv-core is shutting down")
    assert text.rfind("Closing null ethdev") > shutdown, text[-2000:]
    assert text.endswith("\n")


def test_never_read_stderr_does_not_hang_the_exit(piped):
    flood_until_dropping(piped)
    piped.popen.send_signal(signal.SIGTERM)
    # the shutdown logs (NF detach, net_null's close): held or dropped,
    # the exit waits for stderr a bounded time (XNV_LOGSINK_STOP_MS)
    assert piped.popen.wait(30) == 0
