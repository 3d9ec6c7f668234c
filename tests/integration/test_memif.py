# SPDX-License-Identifier: BSD-3-Clause
"""memif ports with an unmodified dpdk-testpmd (the dpdk package) as the
peer.  testpmd forwards (io, with tx retries) between a net_pcap port
(rx_pcap: a batch of known frames, tx_pcap: what comes back) and its
net_memif port; the core runs `chain = fwd -> m` on its memif port m, so
every frame goes testpmd -> core -> NF -> core -> testpmd and must come
back whole, in order, exactly once.

  - testpmd server, core client: the core starts first and waits (one
    line), connects when testpmd listens, and again after each testpmd
    restart (one line per outage), its counters going on;
  - core server, testpmd client: copying, and zero-copy (testpmd on
    hugepages); a dead socket file at the path is removed and logged;
  - refused before anything starts, one line each: the core as a
    zero-copy client, a socket somebody listens on (file or abstract), a
    path that is not a socket, a role that is neither.

testpmd runs on one CPU (EAL's main lcore and its forwarding lcore both
pinned to it), with its own --file-prefix and no PCI, driven on stdin
and stopped by PID.  Skipped without dpdk-testpmd.
"""
import contextlib
import logging
import os
import re
import shutil
import signal
import socket
import struct
import time
from pathlib import Path

import pytest

from harness import Proc, ctl, wait_until, write_config
from traffic import make_traffic, read_pcap, write_pcap
from xnv.prefix import runtime_dir

log = logging.getLogger("xnv-it")
TESTPMD = shutil.which("dpdk-testpmd")
N = 1000                # frames per batch (a memif ring holds 1024)
LINK_TIMEOUT = 60       # s: connect + handshake, with a retry, when loaded
OUT_TIMEOUT = 90        # s: a batch through testpmd, the core and an NF


@pytest.fixture
def testpmd():
    if TESTPMD is None:
        pytest.skip("needs dpdk-testpmd (Debian package dpdk) as the memif peer")
    return TESTPMD


def frames_written(path):
    """Complete frames in a pcap file being written (a last, partial one
    not counted)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return 0
    off, n = 24, 0
    while off + 16 <= len(data):
        incl = struct.unpack_from("<I", data, off + 8)[0]
        if off + 16 + incl > len(data):
            break
        off += 16 + incl
        n += 1
    return n


class PeerProc(Proc):
    """testpmd's process: its (empty) runtime directory removed once it
    is stopped, by quit() or at teardown."""

    def __init__(self, name, argv, logdir, prefix):
        self.runtime = Path(runtime_dir()) / prefix
        super().__init__(name, argv, logdir, stdin="pipe")

    def stop(self, grace=5.0):
        rc = super().stop(grace)
        with contextlib.suppress(OSError):
            self.runtime.rmdir()
        return rc


class Peer:
    """dpdk-testpmd between net_pcap0 (the batch in, what came back out)
    and net_memif0 (`memif`: its devargs), started and driven on stdin."""

    seq = 0

    def __init__(self, env, name, memif, batch, huge=False):
        Peer.seq += 1
        self.prefix = f"xnv-it-tp-{os.getpid()}-{Peer.seq}"
        self.batch = batch
        m = re.search(r"(?:^|,)socket=([^,]+)", memif)
        self.socket_file = (Path(m.group(1)) if m and "role=server" in memif
                            and "socket-abstract=no" in memif else None)
        self.out = env.path(f"{name}-out.pcap")
        in_pcap = write_pcap(env.path(f"{name}-in.pcap"), batch)
        cpu = os.cpu_count() - 1
        mem = (["--in-memory", "--single-file-segments"] if huge else
               ["--no-huge", "-m", "128", "--no-shconf"])
        argv = [TESTPMD, "--no-pci", "--no-telemetry", "--file-prefix",
                self.prefix, "--lcores", f"0@{cpu},1@{cpu}", *mem,
                "--vdev", f"net_pcap0,rx_pcap={in_pcap},tx_pcap={self.out}",
                "--vdev", f"net_memif0,{memif}", "--", "-i", "--no-flush-rx",
                "--forward-mode=io", "--nb-cores=1", "--total-num-mbufs=2048",
                "--no-mlockall"]
        self.proc = PeerProc(name, argv, env.dir, self.prefix)
        env.procs.append(self.proc)

    def cmd(self, *lines):
        self.proc.popen.stdin.write("".join(f"{x}\n" for x in lines).encode())
        self.proc.popen.stdin.flush()

    def forward(self):
        """Send the batch (tx retried for up to 10 s a burst, so that a
        slow peer loses nothing) and return what came back."""
        self.cmd("set fwd io retry", "set burst tx delay 1000 retry 10000",
                 "start")
        wait_until(lambda: frames_written(self.out) >= len(self.batch),
                   OUT_TIMEOUT, f"{len(self.batch)} frames in {self.out}",
                   procs=[self.proc])
        return read_pcap(self.out)

    def quit(self):
        """testpmd closes its ports and exits.  It may die of SIGSEGV
        doing so, a bug of DPDK 22.11's net_memif: its main thread tears
        the connection down (memif_dev_stop -> memif_disconnect) while
        its interrupt thread does the same when the core answers, nothing
        keeping the two apart.  That is logged and the socket file it
        leaves removed (the frames were checked before); any other end
        fails the test."""
        self.cmd("stop", "quit")
        self.proc.close_stdin()
        rc = self.proc.wait(30)
        self.proc.stop()
        if rc == -signal.SIGSEGV:
            log.warning("%s: SIGSEGV while closing its memif port (DPDK "
                        "memif_disconnect race)", self.proc.name)
            if self.socket_file is not None:
                self.socket_file.unlink(missing_ok=True)
            return
        assert rc == 0, self.proc.stderr()[-2000:]


def memif_core(env, dev):
    """A core whose port m (`dev`) runs `fwd -> m`, with its NF."""
    cfg = write_config(env.path("memif.ini"), [
        ("group g", {"pool_bufs": 4096}),
        ("port m", {"dev": dev, "group": "g", "chain": "fwd -> m"}),
        ("service fwd", {}),
    ])
    core = env.start_core(cfg, duration=170)
    core.wait_ready()
    nf = env.start_nf("fwd", "g", "fwd-1")
    core.wait_attached(nf)
    return core


def port_m(core):
    return ctl(core, "/xnv/port/info", 0)


def wait_link(core, up, procs=()):
    wait_until(lambda: port_m(core)["link_up"] == up, LINK_TIMEOUT,
               f"link {'up' if up else 'down'} on the core's memif port",
               procs=[core, *procs])


def round_trip(core, tp):
    """tp's batch testpmd -> core -> NF -> core -> testpmd: it comes back
    byte for byte, in order; testpmd quits afterwards."""
    wait_link(core, 1, [tp.proc])
    out = tp.forward()
    tp.quit()
    assert len(out) == N, f"{tp.proc.name}: {len(out)} of {N} frames came back"
    assert out == tp.batch, f"{tp.proc.name}: frames changed or reordered"


def through(env, core, name, memif, seed, huge=False):
    round_trip(core, Peer(env, name, memif, make_traffic(N, seed), huge))


def dead_socket_file(path):
    """What a memif server killed leaves: a socket file nobody listens on."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
        s.bind(str(path))
    assert Path(path).is_socket()


def test_core_client_waits_for_server_and_reconnects(xnv, testpmd):
    sock = xnv.sockdir / "memif.sock"
    where = f"socket={sock},socket-abstract=no"
    core = memif_core(xnv, f"net_memif0,role=client,{where}")
    core.wait_output(r"^xnv-core: port m: waiting for the memif server at "
                     rf"socket {re.escape(str(sock))}; link down until it "
                     r"listens$", 10)
    info = port_m(core)
    assert (info["link_up"], info["rx"]) == (0, 0), info
    # nobody listens for a few retry periods (1 s): still one line
    time.sleep(3)

    for i in range(2):      # testpmd restarted: the core connects again
        through(xnv, core, f"testpmd{i}", f"role=server,{where}", seed=i + 1)
        wait_link(core, 0)

    info = port_m(core)
    assert (info["rx"], info["tx"]) == (2 * N, 2 * N), info
    assert info["link_changes"] == 4, info
    assert core.stop() == 0
    drops = core.stats()["drops"]
    assert not any(drops.values()), drops
    log = core.log()
    assert log.count("waiting for the memif server") == 1, log
    gone = re.findall(rf"^xnv-core: port m: memif server at "
                      rf"{re.escape(str(sock))} went away; connecting again "
                      r"when it listens$", log, re.M)
    assert len(gone) == 2, log          # one line per outage
    # the driver was asked only once while nobody listened (at start)
    assert log.count("Failed to connect socket") == 1, log


def test_core_server_testpmd_client(xnv, testpmd):
    sock = xnv.sockdir / "memif.sock"
    where = f"socket={sock},socket-abstract=no"
    core = memif_core(xnv, f"net_memif0,role=server,{where}")
    through(xnv, core, "testpmd", f"role=client,{where}", seed=3)
    info = port_m(core)
    assert (info["rx"], info["tx"]) == (N, N), info


def test_zero_copy_peer(xnv, testpmd, hugepages):
    if not (hugepages.pool_can_be_huge and hugepages.mounts):
        pytest.skip(f"a zero-copy memif client needs hugepages: {hugepages!r}")
    sock = xnv.sockdir / "memif.sock"
    where = f"socket={sock},socket-abstract=no"
    core = memif_core(xnv, f"net_memif0,role=server,{where}")
    through(xnv, core, "testpmd-zc", f"role=client,{where},zero-copy=yes",
            seed=4, huge=True)
    info = port_m(core)
    assert (info["rx"], info["tx"]) == (N, N), info


def test_stale_socket_file_removed(xnv, testpmd):
    sock = xnv.sockdir / "memif.sock"
    dead_socket_file(sock)
    where = f"socket={sock},socket-abstract=no"
    core = memif_core(xnv, f"net_memif0,role=server,{where}")
    core.wait_output(r"^xnv-core: port m: removed stale memif socket "
                     rf"{re.escape(str(sock))} \(nobody listened on it\)$", 5)
    through(xnv, core, "testpmd", f"role=client,{where}", seed=5)


@contextlib.contextmanager
def listener(address):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.bind(address)
        s.listen(1)
        yield s
    finally:
        s.close()


def refused(env, dev):
    """The core with memif port `dev` exits at once with one line."""
    core = env.start_core(write_config(env.path("refused.ini"), [
        ("group g", {"pool_bufs": 1024}),
        ("port m", {"dev": dev, "group": "g"}),
    ]))
    assert core.wait(30) != 0, core.log()[-2000:]
    assert "NFs attach on" not in core.log()
    assert not env.socket.exists()
    return [ln for ln in core.log().splitlines() if "port m" in ln]


def test_zero_copy_client_refused(xnv):
    sock = xnv.sockdir / "memif.sock"
    lines = refused(xnv, f"net_memif0,role=client,socket={sock},"
                         "socket-abstract=no,zero-copy=yes")
    assert lines == [
        "xnv-core: port m: a memif zero-copy client cannot share the core's "
        "packet pool (external memory) with its server: use zero-copy=no, "
        "or role=server with the peer as the zero-copy client"], lines


def test_socket_with_listener_refused(xnv):
    sock = xnv.sockdir / "memif.sock"
    with listener(str(sock)) as s:
        lines = refused(xnv, f"net_memif0,role=server,socket={sock},"
                             "socket-abstract=no")
        assert lines == [
            f"xnv-core: port m: another process listens on memif socket "
            f"{sock}: stop it or name another socket="], lines
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as c:
            c.connect(str(sock))        # left alone: still listening
        s.accept()[0].close()


def test_live_testpmd_server_refused_and_undisturbed(xnv, testpmd):
    """The check of a server's socket connects: a DPDK memif server must
    come out of it unharmed (it panics when a connection closes before
    its hello went out) and still serve a client."""
    sock = xnv.sockdir / "memif.sock"
    where = f"socket={sock},socket-abstract=no"
    tp = Peer(xnv, "testpmd", f"role=server,{where}", make_traffic(N, 6))
    wait_until(sock.is_socket, 30, f"testpmd's socket {sock}", [tp.proc])
    lines = refused(xnv, f"net_memif0,role=server,{where}")
    assert lines == [
        f"xnv-core: port m: another process listens on memif socket "
        f"{sock}: stop it or name another socket="], lines
    round_trip(memif_core(xnv, f"net_memif0,role=client,{where}"), tp)


def test_abstract_socket_with_listener_refused(xnv):
    name = f"{xnv.sockdir}/memif-abstract"
    with listener("\0" + name):
        lines = refused(xnv, f"net_memif0,role=server,socket={name}")
    assert lines == [
        f"xnv-core: port m: another process listens on memif abstract "
        f"socket {name}: stop it or name another socket="], lines


def test_path_not_a_socket_refused(xnv):
    path = xnv.sockdir / "memif.sock"
    path.write_text("not a socket\n")
    lines = refused(xnv, f"net_memif0,role=server,socket={path},"
                         "socket-abstract=no")
    assert lines == [
        f"xnv-core: port m: memif socket {path} exists and is not a socket: "
        "remove it or name another socket="], lines
    assert path.read_text() == "not a socket\n"


def test_bad_role_refused(xnv):
    lines = refused(xnv, "net_memif0,role=bogus")
    assert lines == ["xnv-core: port m (net_memif0,role=bogus): role must "
                     "be server or client"], lines
