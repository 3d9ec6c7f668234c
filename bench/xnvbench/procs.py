# SPDX-License-Identifier: BSD-3-Clause
"""Processes, CPUs and host resources of a benchmark run.

Everything started goes through Proc, which keeps its output in a log file
and is always stopped by its PID (signal, wait, SIGKILL, wait); nothing is
ever killed by name.  Host changes (hugepages, a hugetlbfs mount, a veth
pair) are undone by whoever made them, in reverse order.
"""
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


class BenchError(Exception):
    """Something could not be started or measured (never a low number)."""


def say(msg=""):
    print(msg, flush=True)


def run_main(main, name):
    """sys.exit(main()), with one line on stderr instead of a traceback
    for a BenchError or ^C.  SIGTERM (make or CI stopping us) unwinds like
    an exception, so every finally block stops what it started."""
    signal.signal(signal.SIGTERM, lambda sig, frame: sys.exit(143))
    try:
        sys.exit(main())
    except BenchError as e:
        print("%s: FAILED: %s" % (name, e), file=sys.stderr, flush=True)
        sys.exit(1)
    except KeyboardInterrupt:
        print("%s: interrupted" % name, file=sys.stderr, flush=True)
        sys.exit(130)


def tail(path, n=15):
    """The last n lines of a log, indented, for error messages."""
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return "    (no %s)" % path
    return "\n".join("    | " + line for line in lines[-n:])


def wait_until(fn, timeout, what, procs=()):
    """Call fn() until it returns something truthy; return it.  Fails after
    timeout seconds, or as soon as one of procs has exited."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        for p in procs:
            if not p.alive():
                raise BenchError("%s exited (%s) while waiting for %s:\n%s"
                                 % (p.name, p.popen.returncode, what,
                                    tail(p.log)))
        if time.monotonic() > deadline:
            raise BenchError("timed out after %.0f s waiting for %s"
                             % (timeout, what))
        time.sleep(0.02)


# --------------------------------------------------------------------------
# processes and their threads

class Proc:
    """One child process; stdout and stderr go to <logdir>/<name>.log.
    stop_sig: the signal that makes it exit cleanly (testpmd: SIGINT)."""

    def __init__(self, name, argv, logdir, stop_sig=signal.SIGTERM,
                 thread=None):
        self.name = name
        self.argv = [str(a) for a in argv]
        self.log = Path(logdir) / ("%s.log" % name)
        self.stop_sig = stop_sig
        self.thread = thread	# comm of the data-path thread; None: main
        with open(self.log, "w") as f:
            f.write("$ %s\n" % " ".join(self.argv))
            f.flush()
            # stdin stays an open pipe: testpmd exits at EOF on it.
            self.popen = subprocess.Popen(self.argv, stdout=f,
                                          stderr=subprocess.STDOUT,
                                          stdin=subprocess.PIPE)
        self.pid = self.popen.pid

    def alive(self):
        return self.popen.poll() is None

    def stop(self, grace=5.0):
        """Ask it to exit (stop_sig), then SIGKILL; by PID only."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                self.popen.send_signal(self.stop_sig)
            try:
                self.popen.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                say("  %s (pid %d) ignored signal %d: SIGKILL"
                    % (self.name, self.pid, self.stop_sig))
                self.popen.kill()
                self.popen.wait(timeout=grace)
        if self.popen.stdin:
            with contextlib.suppress(OSError):
                self.popen.stdin.close()
        return self.popen.returncode

    def tid(self):
        """TID of the data-path thread (the main thread unless .thread
        names another one by its comm); None if not there (yet)."""
        if self.thread is None:
            return self.pid
        with contextlib.suppress(OSError):
            for t in os.listdir("/proc/%d/task" % self.pid):
                comm = Path("/proc/%d/task/%s/comm" % (self.pid, t))
                with contextlib.suppress(OSError):
                    if comm.read_text().strip() == self.thread:
                        return int(t)
        return None

    def cpu_ns(self):
        """On-CPU nanoseconds of the data-path thread (None if unknown)."""
        tid = self.tid()
        if tid is None:
            return None
        try:
            with open("/proc/%d/task/%d/schedstat" % (self.pid, tid)) as f:
                return int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return None


def pinned(cpu, argv):
    """argv run under taskset on one CPU (the PID stays the program's)."""
    return ["taskset", "-c", str(cpu), *argv]


def stop_all(procs):
    """Stop every process, last started first; report what resisted."""
    errors = []
    for p in reversed(procs):
        try:
            p.stop()
        except Exception as e:		# go on with the others
            errors.append("%s: %s" % (p.name, e))
    if errors:
        raise BenchError("could not stop: %s" % "; ".join(errors))


# --------------------------------------------------------------------------
# DPDK: runtime directories and telemetry

DPDK_RUN = Path("/var/run/dpdk")


def remove_runtime_dir(prefix):
    """EAL's runtime directory of a file prefix: what a killed process
    leaves (telemetry sockets; in-memory mode keeps nothing else there)."""
    d = DPDK_RUN / prefix
    if d.is_dir():
        for f in d.iterdir():
            if f.is_socket() or f.name in ("config", "fbarray_memseg"):
                with contextlib.suppress(OSError):
                    f.unlink()
        with contextlib.suppress(OSError):
            d.rmdir()


class Telemetry:
    """The telemetry socket of a DPDK process started with
    --file-prefix PREFIX; reads the standard /ethdev/ counters."""

    def __init__(self, prefix, procs, timeout=20):
        path = DPDK_RUN / prefix / "dpdk_telemetry.v2"
        wait_until(path.is_socket, timeout, "telemetry socket %s" % path,
                   procs)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.settimeout(15)	# a starved process answers late
        try:
            self.sock.connect(str(path))
            self.max_len = int(json.loads(self.sock.recv(4096))
                               .get("max_output_len", 16384))
        except (OSError, ValueError) as e:
            self.sock.close()
            raise BenchError("telemetry %s: %s" % (path, e))

    def __call__(self, cmd):
        try:
            self.sock.send(cmd.encode())
            return json.loads(self.sock.recv(self.max_len + 1024))[
                cmd.split(",")[0]]
        except (OSError, ValueError, KeyError) as e:	# incl. time-outs
            raise BenchError("telemetry %s: no answer (%s)" % (cmd, e))

    def port_id(self, dev_name):
        """ethdev port id of the device named dev_name (e.g. net_null1),
        None while there is none."""
        for pid in self("/ethdev/list") or []:
            if self("/ethdev/info,%d" % pid).get("name") == dev_name:
                return pid
        return None

    def wait_port(self, dev_name, timeout, procs=()):
        """port_id(dev_name) once the device is there."""
        return wait_until(lambda: [self.port_id(dev_name)]
                          if self.port_id(dev_name) is not None else None,
                          timeout, "port %s" % dev_name, procs)[0]

    def opackets(self, port):
        return self("/ethdev/stats,%d" % port)["opackets"]

    def close(self):
        self.sock.close()


# --------------------------------------------------------------------------
# host resources

NR_HUGE = Path("/proc/sys/vm/nr_hugepages")
FREE_HUGE = Path("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages")
HUGE_DIR = Path("/dev/hugepages")


def hugetlbfs_mounted():
    with open("/proc/mounts") as f:
        return any(line.split()[2] == "hugetlbfs" for line in f
                   if len(line.split()) > 2)


class Hugepages:
    """Keep `want` free 2 MiB hugepages and a hugetlbfs mount, checked
    before every run (other sessions on the machine may change both).
    Undone at close(): the mount we made, nr_hugepages we raised."""

    def __init__(self, want):
        self.want = want
        self.old_nr = None
        self.mounted = False
        self.ok = False
        self.said = False

    def ensure(self):
        """True when DPDK can use hugepages now; logs why not once."""
        why = None
        try:
            free = int(FREE_HUGE.read_text())
            if free < self.want:
                cur = int(NR_HUGE.read_text())
                if self.old_nr is None:
                    self.old_nr = cur
                NR_HUGE.write_text(str(cur + self.want - free))
                free = int(FREE_HUGE.read_text())
            if free < self.want:
                why = "only %d free 2 MiB hugepages (wanted %d)" % (
                    free, self.want)
        except (OSError, ValueError) as e:
            why = "cannot reserve hugepages: %s" % e
        if why is None and not hugetlbfs_mounted():
            HUGE_DIR.mkdir(exist_ok=True)
            r = subprocess.run(["mount", "-t", "hugetlbfs", "-o",
                                "pagesize=2M", "nodev", str(HUGE_DIR)],
                               capture_output=True, text=True, timeout=10)
            if r.returncode == 0:
                self.mounted = True
            else:
                why = "cannot mount hugetlbfs: %s" % r.stderr.strip()
        if why and not self.said:
            say("bench: hugepages unavailable, falling back to --no-huge "
                "(memif zero-copy and vhost-user need hugepages and are "
                "skipped): %s" % why)
            self.said = True
        self.ok = why is None
        return self.ok

    def close(self):
        if self.mounted:
            subprocess.run(["umount", str(HUGE_DIR)], capture_output=True,
                           timeout=10)
        if self.old_nr is not None:
            with contextlib.suppress(OSError):
                NR_HUGE.write_text(str(self.old_nr))


def eal_mem(huge):
    """EAL memory options, the same for every DPDK process of a run:
    in-memory hugepages in one file per segment list (memif zero-copy
    and vhost-user share memory by fd), else plain memory."""
    if huge:
        return ["--in-memory", "--single-file-segments"]
    return ["--no-huge", "-m", "512", "--no-shconf"]


class VethPair:
    """A veth pair made for this run (root), deleted at close().  IPv6 is
    off on both ends so the kernel sends nothing of its own on them."""

    def __init__(self, tag, mtu=1600):
        self.names = ("xnvb%sa" % tag, "xnvb%sb" % tag)
        self.made = False
        self.mtu = mtu

    def _ip(self, *args):
        r = subprocess.run(["ip", *args], capture_output=True, text=True,
                           timeout=10)
        if r.returncode != 0:
            raise BenchError("ip %s: %s" % (" ".join(args), r.stderr.strip()))

    def open(self):
        # DPDK 22.11's af_packet PMD names its fanout group pid ^ ifindex:
        # two testpmds started one after the other (pids n, n+1) on ends
        # with ifindexes i, i+1 can pick the same group, and the second
        # fails to probe.  Ends whose ifindexes differ in bit 14 avoid it.
        a, b = self.names
        idx = 10000 + os.getpid() % 5000
        try:
            self._ip("link", "add", a, "index", str(idx), "type", "veth",
                     "peer", "name", b, "index", str(idx + 16384))
        except BenchError:		# an index in use: any will do
            self._ip("link", "add", a, "type", "veth", "peer", "name", b)
        self.made = True
        for n in self.names:
            with contextlib.suppress(OSError):
                Path("/proc/sys/net/ipv6/conf/%s/disable_ipv6" % n) \
                    .write_text("1")
            self._ip("link", "set", n, "mtu", str(self.mtu), "up")
        return self

    def close(self):
        if self.made:
            self.made = False
            subprocess.run(["ip", "link", "del", self.names[0]],
                           capture_output=True, timeout=10)
