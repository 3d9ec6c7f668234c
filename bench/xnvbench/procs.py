# SPDX-License-Identifier: BSD-3-Clause
"""Processes, CPUs and host resources of a benchmark run.

Everything started goes through Proc (xnv.procs.Proc), which keeps its
output in a log file and is always stopped by its PID (signal, wait,
SIGKILL, wait); nothing is ever killed by name.  Host changes (hugepages, a
hugetlbfs mount, a veth pair) are undone by whoever made them, in reverse
order.
"""
import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import xnv
import xnv.procs
import xnv.telemetry
from xnv.hugepages import FREE_HUGE, HUGE_DIR, NR_HUGE, hugetlbfs_mounts, \
    mount_hugetlbfs, umount
from xnv.prefix import runtime_dir
from xnv.procs import stop_all, tail, wait_until  # noqa: F401 (bench imports them from here)

# Something could not be started or measured (never a low number).  The
# xnv package's failures (a wait timed out, a telemetry socket went quiet)
# are the same kind of failure, so they are one class.
BenchError = xnv.Error


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


# --------------------------------------------------------------------------
# processes and their threads

class Proc(xnv.procs.Proc):
    """One child process; stdout and stderr go to <logdir>/<name>.log.
    stop_sig: the signal that makes it exit cleanly (testpmd: SIGINT);
    thread: the comm of its data-path thread (None: the main thread)."""

    def __init__(self, name, argv, logdir, stop_sig=signal.SIGTERM,
                 thread=None):
        # stdin stays an open pipe: testpmd exits at EOF on it.
        super().__init__(name, argv, Path(logdir) / ("%s.log" % name),
                         stdin="pipe", stop_sig=stop_sig, thread=thread)


def pinned(cpu, argv):
    """argv run under taskset on one CPU (the PID stays the program's)."""
    return ["taskset", "-c", str(cpu), *argv]


# --------------------------------------------------------------------------
# DPDK: runtime directories and telemetry

DPDK_RUN = Path(runtime_dir())     # /var/run/dpdk for root


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


class Telemetry(xnv.telemetry.Telemetry):
    """The telemetry socket of a DPDK process started with
    --file-prefix PREFIX; reads the standard /ethdev/ counters.
    tel("CMD[,PARAMS]") is the data of the reply (None: an unknown
    command); a lost connection or a silence is a BenchError."""

    def __init__(self, prefix, procs, timeout=20):
        path = DPDK_RUN / prefix / "dpdk_telemetry.v2"
        wait_until(path.is_socket, timeout, "telemetry socket %s" % path,
                   procs=procs)
        # a starved process answers late
        super().__init__(path, timeout=15, who="telemetry %s" % path)

    def __call__(self, cmd):
        name, _, params = cmd.partition(",")
        return self.call(name, params or None)

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
                          timeout, "port %s" % dev_name, procs=procs)[0]

    def opackets(self, port):
        return self("/ethdev/stats,%d" % port)["opackets"]


# --------------------------------------------------------------------------
# host resources

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
        if why is None and not hugetlbfs_mounts():
            HUGE_DIR.mkdir(exist_ok=True)
            r = mount_hugetlbfs(HUGE_DIR)
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
            umount(HUGE_DIR)
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
