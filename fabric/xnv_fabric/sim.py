# SPDX-License-Identifier: BSD-3-Clause
"""N simulated hosts on one machine, each a network namespace with an Open
vSwitch of its own (userspace `netdev` datapath), for multi-host service
chain tests.  Python 3 standard library only; root.

Per host H (index i in `names`, underlay IP 10.250.0.<i+1>/24):
  - netns `xnv-<tag>-H`, IPv6 off (the kernel sends nothing of its own),
    `arp_ignore=1` (only br-phy answers ARP for the underlay IP);
  - a veth `x<tag>uH` into the netns `xnvw-<tag>`, where the Linux bridge
    `x<tag>br` joins every host (the shared underlay L2 segment);
  - ovsdb-server and ovs-vswitchd (`--disable-system`: no kernel datapath)
    started by Popen inside the netns, db, sockets and logs in `rundir`;
  - `br-phy` (netdev, fail_mode=secure, `priority=0,actions=NORMAL`)
    holding the veth, the underlay IP on its internal port, MAC
    02:fa:00:00:00:<i+1>; OVS learns the route from the kernel and each
    peer's MAC is set with `tnl/neigh/set` (ARP learning works as well);
  - `br-xnv` (netdev, fail_mode=secure, no flows): internal port `xnv0`
    (ofport 1, a tap), one VXLAN port `vx-P` per other host P
    (remote_ip, key=flow, ofport 10 + P's index).
MTU: `xnv0` gets `mtu` (default 1504: a 1518-byte frame plus the outer
802.1Q tag), the underlay (veths, bridge, br-phy) `mtu` + 96 (VXLAN adds 50).
Nothing is ever killed by name: down() stops the processes up() started
by PID.  The steering flows on br-xnv are the caller's.
"""
import contextlib
import ctypes
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path

SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")
TOOLS = ("ip", "sysctl", "ovsdb-tool", "ovsdb-server", "ovs-vswitchd",
         "ovs-vsctl", "ovs-ofctl", "ovs-appctl")
BRIDGE, PORT, PHY = "br-xnv", "xnv0", "br-phy"
SUBNET = "10.250.0"
UNDERLAY_EXTRA = 96       # VXLAN's 50 bytes and two tags, with room to spare
VX_BASE = 10              # ofport of vx-P: VX_BASE + P's index
SYSCTLS = ("net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1",
           "net.ipv4.conf.all.arp_ignore=1")

SOL_PACKET, PACKET_AUXDATA = 263, 8
TP_STATUS_VLAN_VALID, TP_STATUS_VLAN_TPID_VALID = 0x10, 0x40
ETH_P_ALL, CLONE_NEWNET = 0x0003, 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)
_instances = iter(range(1 << 30))


class SimError(RuntimeError):
    """A step of Sim failed; the message is one line saying which."""


def _b36(n):
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    s = ""
    while True:
        n, r = divmod(n, 36)
        s = digits[r] + s
        if not n:
            return s


def _last_line(text):
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1] if lines else "(no output)"


def _ip(*args, timeout=10):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=timeout)


def ovs_available():
    """None if a Sim can be built here, else why not (for pytest.skip)."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, Open vSwitch)"
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        return f"missing {', '.join(missing)} (openvswitch-switch, iproute2, procps)"
    if not SCHEMA.is_file():
        return f"no OVS schema at {SCHEMA}"
    if not os.access("/dev/net/tun", os.R_OK | os.W_OK):
        return "no usable /dev/net/tun (OVS internal ports are taps)"
    probe = f"xnv-probe-{os.getpid()}"
    r = _ip("netns", "add", probe)
    if r.returncode != 0:
        return f"cannot create a network namespace: {_last_line(r.stderr)}"
    _ip("netns", "del", probe)
    return None


def in_netns(ns, fn):
    """fn() called on a thread of its own moved into netns `ns` (setns(2)
    moves only the calling thread, which then ends); returns its value.
    Sockets made there stay in that namespace."""
    out = {}

    def body():
        try:
            fd = os.open(f"/run/netns/{ns}", os.O_RDONLY)
            try:
                if _libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns to {ns}")
                out["value"] = fn()
            finally:
                os.close(fd)
        except BaseException as e:  # noqa: B036 (handed to the caller)
            out["error"] = e
    t = threading.Thread(target=body, name=f"netns-{ns}")
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def recv_frame(sock, timeout):
    """The next frame a packet_socket(rx=True) received, as it was on the
    wire: (frame, tci) with the outer VLAN tag the kernel took out of the
    data (PACKET_AUXDATA) put back in front, tci = that tag or None.
    Frames the host sent itself are skipped.  None after `timeout` s."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            data, anc, flags, addr = sock.recvmsg(1 << 16, 256)
        except socket.timeout:
            break
        if flags & socket.MSG_TRUNC:
            raise SimError(f"a frame longer than 64 KiB on {addr[0]}")
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        return wire_frame(data, anc)
    return None


def wire_frame(data, anc):
    """(frame as it was on the wire, tci or None) of what recvmsg() gave a
    packet socket with PACKET_AUXDATA: the outer VLAN tag the kernel took
    out of the data put back in front, with its TPID."""
    for level, kind, aux in anc:
        if (level, kind) != (SOL_PACKET, PACKET_AUXDATA):
            continue
        status, _, _, _, _, tci, tpid = struct.unpack("IIIHHHH", aux[:20])
        if status & TP_STATUS_VLAN_VALID:
            tpid = tpid if status & TP_STATUS_VLAN_TPID_VALID else 0x8100
            return data[:12] + struct.pack("!HH", tpid, tci) + data[12:], tci
    return data, None


class SimHost:
    """One simulated host: its netns, its OVS, its underlay address."""

    def __init__(self, sim, name, index):
        self.sim, self.name, self.index = sim, name, index
        self.ns = f"xnv-{sim.tag}-{name}"
        self.underlay_ip = f"{SUBNET}.{index + 1}"
        self.mac = f"02:fa:00:00:00:{index + 1:02x}"
        self.veth, self.wire_veth = f"x{sim.tag}u{name}", f"x{sim.tag}w{name}"
        self.rundir = Path(sim.workdir) / name
        self.db_sock = self.rundir / "db.sock"
        self.ctl = self.rundir / "ovs-vswitchd.ctl"
        self.procs = {}               # "ovsdb-server" / "ovs-vswitchd" -> Popen

    def __repr__(self):
        return f"SimHost({self.name!r}, ns={self.ns!r}, ip={self.underlay_ip})"

    def env(self):
        d = str(self.rundir)
        return {**os.environ, "OVS_RUNDIR": d, "OVS_DBDIR": d, "OVS_LOGDIR": d,
                "OVS_SYSCONFDIR": d}

    def prefix(self):
        return ["ip", "netns", "exec", self.ns]

    def run(self, *argv, check=True, timeout=None, input=None):
        """argv run on this host (in its netns, with env()); SimError with
        the command and its last line of stderr if it fails and `check`."""
        argv = [str(a) for a in argv]
        try:
            r = subprocess.run(self.prefix() + argv, env=self.env(), input=input,
                               capture_output=True, text=True,
                               timeout=timeout or self.sim.t(30))
        except subprocess.TimeoutExpired:
            raise SimError(f"host {self.name}: {' '.join(argv)}: no answer in "
                           f"{timeout or self.sim.t(30):g} s") from None
        if check and r.returncode != 0:
            raise SimError(f"host {self.name}: {' '.join(argv)}: "
                           f"{_last_line(r.stderr or r.stdout)}")
        return r

    def vsctl(self, *args, **kw):
        return self.run("ovs-vsctl", f"--db=unix:{self.db_sock}",
                        f"--timeout={max(1, round(self.sim.t(10)))}", *args, **kw)

    def ofctl(self, *args, **kw):
        return self.run("ovs-ofctl", *args, **kw)

    def appctl(self, *args, **kw):
        return self.run("ovs-appctl", "-t", self.ctl,
                        f"--timeout={max(1, round(self.sim.t(10)))}", *args, **kw)

    def packet_socket(self, ifname=PORT, rx=True):
        """An AF_PACKET socket on `ifname` of this host (opened in its
        netns): rx=True takes every frame (ETH_P_ALL) with PACKET_AUXDATA
        for recv_frame(); rx=False only sends.  Close it before down():
        an open socket keeps the namespace alive."""
        def make():
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                              socket.htons(ETH_P_ALL) if rx else 0)
            if rx:
                s.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE
                s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
            s.bind((ifname, ETH_P_ALL if rx else 0))
            return s
        return in_netns(self.ns, make)

    def _start(self, what, argv):
        """Popen of `what` inside the netns (`ip netns exec` execs it: the
        PID is the daemon's), output to rundir/<what>.out."""
        with open(self.rundir / f"{what}.out", "wb") as out:
            p = subprocess.Popen(self.prefix() + [str(a) for a in argv], env=self.env(),
                                 stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        self.procs[what] = p
        self.sim.procs.append((f"{self.name}/{what}", p))
        return p

    def _wait(self, fn, seconds, what, daemon):
        """Until fn() is true: SimError if `daemon` exits or time runs out."""
        deadline = time.monotonic() + self.sim.t(seconds)
        proc = self.procs[daemon]
        while not fn():
            if proc.poll() is not None:
                raise SimError(f"host {self.name}: {daemon} exited "
                               f"({proc.returncode}) before {what}: "
                               f"{self._log_tail(daemon)}")
            if time.monotonic() > deadline:
                raise SimError(f"host {self.name}: no {what} after "
                               f"{self.sim.t(seconds):g} s")
            time.sleep(0.02)

    def _log_tail(self, what):
        for name in (f"{what}.log", f"{what}.out"):
            with contextlib.suppress(OSError):
                text = (self.rundir / name).read_text(errors="replace")
                if text.strip():
                    return _last_line(text)
        return f"nothing in {self.rundir}"


class Sim:
    """N hosts (see the module's docstring); up() builds, down() removes."""

    def __init__(self, names=("a", "b"), workdir=None, tag=None, timeout_scale=1.0,
                 mtu=1504):
        if workdir is None:
            raise ValueError("Sim: workdir is required")
        n = next(_instances)
        self.tag = tag or _b36(os.getpid()) + (_b36(n % 36) if n else "")
        self.workdir, self.scale, self.mtu = Path(workdir), float(timeout_scale), mtu
        if not re.fullmatch(r"[a-z0-9]{1,6}", self.tag):
            raise ValueError(f"Sim: tag {self.tag!r}: want 1 to 6 of [a-z0-9]")
        if len(set(names)) != len(names) or not 1 <= len(names) <= 250:
            raise ValueError(f"Sim: host names {names!r}: want 1 to 250 distinct names")
        for h in names:
            if not re.fullmatch(r"[a-z0-9]+", h) or len(h) + len(self.tag) > 13:
                raise ValueError(f"Sim: host name {h!r}: want [a-z0-9], at most "
                                 f"{13 - len(self.tag)} characters with tag {self.tag!r}")
        self.hosts = {h: SimHost(self, h, i) for i, h in enumerate(names)}
        self.wire_ns, self.wire_br = f"xnvw-{self.tag}", f"x{self.tag}br"
        self.procs = []               # (label, Popen), in start order
        self.namespaces = []          # the ones up() created

    def t(self, seconds):
        """A timeout of `seconds` times timeout_scale."""
        return seconds * self.scale

    def __enter__(self):
        self.up()
        return self

    def __exit__(self, *exc):
        self.down()

    def up(self):
        """Build every host; SimError (one line) after undoing what was done."""
        try:
            self._check_free()
            self._wire()
            for h in self.hosts.values():
                self._host_ns(h)
            for h in self.hosts.values():
                self._start_ovs(h)
            for h in self.hosts.values():
                self._bridges(h)
            for h in self.hosts.values():
                self._tunnel_neighbours(h)
        except BaseException as e:
            self.down()
            if isinstance(e, SimError):
                raise
            if isinstance(e, (OSError, subprocess.SubprocessError)):
                raise SimError(f"Sim {self.tag}: {e}") from e
            raise

    def _check_free(self):
        for ns in [self.wire_ns] + [h.ns for h in self.hosts.values()]:
            if Path("/run/netns", ns).exists():
                raise SimError(f"netns {ns} exists already (left by an earlier run "
                               f"with tag {self.tag}?): `ip netns del {ns}`")

    def _ip(self, *args, what=None):
        """`ip args`; SimError naming `what` (default the command) if it fails."""
        r = _ip(*args, timeout=self.t(10))
        if r.returncode != 0:
            raise SimError(f"{what or 'ip ' + ' '.join(args)}: {_last_line(r.stderr)}")

    def _netns(self, ns):
        self._ip("netns", "add", ns)
        self.namespaces.append(ns)
        self._ip("-n", ns, "link", "set", "lo", "up")
        self._ip("netns", "exec", ns, "sysctl", "-qw", *SYSCTLS)

    def _wire(self):
        self._netns(self.wire_ns)
        self._ip("-n", self.wire_ns, "link", "add", self.wire_br, "mtu",
                 str(self.mtu + UNDERLAY_EXTRA), "type", "bridge")
        self._ip("-n", self.wire_ns, "link", "set", self.wire_br, "up")

    def _host_ns(self, h):
        mtu = str(self.mtu + UNDERLAY_EXTRA)
        shutil.rmtree(h.rundir, ignore_errors=True)     # ours: a crashed run's db
        h.rundir.mkdir(parents=True)
        self._netns(h.ns)
        self._ip("link", "add", h.veth, "netns", h.ns, "mtu", mtu, "type", "veth",
                 "peer", "name", h.wire_veth, "netns", self.wire_ns, "mtu", mtu,
                 what=f"host {h.name}: veth {h.veth} (MTU {mtu})")
        self._ip("-n", self.wire_ns, "link", "set", h.wire_veth, "master", self.wire_br, "up")
        self._ip("-n", h.ns, "link", "set", h.veth, "up")

    def _start_ovs(self, h):
        h.run("ovsdb-tool", "create", h.rundir / "conf.db", SCHEMA)
        h._start("ovsdb-server", [
            "ovsdb-server", h.rundir / "conf.db", f"--remote=punix:{h.db_sock}",
            f"--unixctl={h.rundir / 'ovsdb-server.ctl'}",
            f"--log-file={h.rundir / 'ovsdb-server.log'}"])
        h._wait(h.db_sock.is_socket, 10, "its socket", "ovsdb-server")
        h.vsctl("--no-wait", "init")
        h._start("ovs-vswitchd", [
            "ovs-vswitchd", f"unix:{h.db_sock}", "--disable-system",
            f"--unixctl={h.ctl}", f"--log-file={h.rundir / 'ovs-vswitchd.log'}"])
        h._wait(h.ctl.is_socket, 10, "its control socket", "ovs-vswitchd")
        h._wait(lambda: h.appctl("version", check=False).returncode == 0, 10,
                "an answer to ovs-appctl", "ovs-vswitchd")

    def _bridges(self, h):
        mtu = self.mtu + UNDERLAY_EXTRA
        h.vsctl("--", "add-br", PHY, "--", "set", "bridge", PHY, "datapath_type=netdev",
                "fail_mode=secure", f"other_config:hwaddr={h.mac}",
                "--", "set", "interface", PHY, f"mtu_request={mtu}",
                "--", "add-port", PHY, h.veth)
        h.ofctl("add-flow", PHY, "priority=0,actions=NORMAL")
        cmd = ["--", "add-br", BRIDGE, "--", "set", "bridge", BRIDGE,
               "datapath_type=netdev", "fail_mode=secure",
               "--", "add-port", BRIDGE, PORT, "--", "set", "interface", PORT,
               "type=internal", "ofport_request=1", f"mtu_request={self.mtu}"]
        for p in self.hosts.values():
            if p is not h:
                cmd += ["--", "add-port", BRIDGE, f"vx-{p.name}", "--", "set",
                        "interface", f"vx-{p.name}", "type=vxlan",
                        f"options:remote_ip={p.underlay_ip}", "options:key=flow",
                        f"ofport_request={VX_BASE + p.index}"]
        h.vsctl(*cmd)
        h.run("ip", "addr", "add", f"{h.underlay_ip}/24", "dev", PHY)
        for dev in (PHY, PORT):
            h.run("ip", "link", "set", dev, "up")

    def _tunnel_neighbours(self, h):
        """OVS's route to the underlay (learned from the kernel) and each
        peer's br-phy MAC, so that no first packet waits for ARP."""
        route = f"{SUBNET}.0/24 dev {PHY}"
        h._wait(lambda: route in h.appctl("ovs/route/show").stdout, 10,
                f"the OVS route {route}", "ovs-vswitchd")
        for p in self.hosts.values():
            if p is not h:
                h.appctl("tnl/neigh/set", PHY, p.underlay_ip, p.mac)

    def down(self):
        """Stop every process up() started (by PID: SIGTERM, wait, SIGKILL),
        delete the namespaces (their veths, taps and bridge go with them),
        remove each host's rundir.  Idempotent; never raises for what is
        already gone.  SimError at the end if something could not go."""
        errors = []
        for label, p in reversed(self.procs):
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=self.t(5))
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(timeout=self.t(5))
        self.procs.clear()
        for h in self.hosts.values():
            h.procs.clear()
        for ns in reversed(self.namespaces):
            if Path("/run/netns", ns).exists():
                r = _ip("netns", "del", ns, timeout=self.t(10))
                if r.returncode != 0:
                    errors.append(f"ip netns del {ns}: {_last_line(r.stderr)}")
        self.namespaces = [ns for ns in self.namespaces if Path("/run/netns", ns).exists()]
        for h in self.hosts.values():
            shutil.rmtree(h.rundir, ignore_errors=True)
        if errors:
            raise SimError(f"Sim {self.tag} down: {'; '.join(errors)}")
