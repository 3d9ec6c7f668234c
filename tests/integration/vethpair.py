# SPDX-License-Identifier: BSD-3-Clause
"""A veth pair of one test (root; the fixture skips without it) and a peer
on its end B that sends frames and captures what comes back as it was on
the wire: shared by the af_packet and doorbell tests; the name of a
net_tap port's interface (tap_name).  A Peer works on either."""
import logging
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from harness import REPO, scaled, wait_until

sys.path.insert(0, str(REPO / "fabric"))
from xnv_fabric.sim import ETH_P_ALL, PACKET_AUXDATA, SOL_PACKET, wire_frame  # noqa: E402

log = logging.getLogger("xnv-it")

_seq = iter(range(1 << 20))


def ip(*args):
    return subprocess.run(["ip", *args], capture_output=True, text=True,
                          timeout=scaled(10))


class Veth:
    """A veth pair of this test alone: end `a` for xnv-core, end `b` for
    the test; IPv6 off on both so the kernel sends nothing of its own."""

    def __init__(self):
        tag = f"{os.getpid() % 100000}{next(_seq)}"
        self.a, self.b = f"xnvaf{tag}a", f"xnvaf{tag}b"
        r = ip("link", "add", self.a, "type", "veth", "peer", "name", self.b)
        if r.returncode != 0:
            raise OSError(r.stderr.strip())
        for n in (self.a, self.b):
            Path(f"/proc/sys/net/ipv6/conf/{n}/disable_ipv6").write_text("1")
            assert ip("link", "set", n, "up").returncode == 0

    def mtu(self, mtu, ends="ab"):
        for e in ends:
            r = ip("link", "set", getattr(self, e), "mtu", str(mtu))
            assert r.returncode == 0, r.stderr

    def promiscuity(self):
        out = ip("-d", "link", "show", self.a).stdout
        return int(re.search(r"promiscuity (\d+)", out).group(1))

    def close(self):
        ip("link", "del", self.a)


@pytest.fixture
def veth():
    if os.geteuid() != 0:
        reason = "needs root for a veth pair and af_packet sockets"
        log.info("skipped: %s", reason)
        pytest.skip(reason)
    try:
        v = Veth()
    except OSError as e:
        log.info("skipped: no veth pair: %s", e)
        pytest.skip(f"cannot create a veth pair: {e}")
    yield v
    v.close()


def ip_link(*args):
    return ip("link", *args)


@pytest.fixture
def tap_name():
    """A kernel interface name of this test alone; removed afterwards if
    xnv-core (whose net_tap makes it) left it behind.  Ask for it before
    `xnv`: torn down after the core is stopped."""
    if os.geteuid() != 0 or not os.path.exists("/dev/net/tun"):
        reason = "needs root and /dev/net/tun for a net_tap port"
        log.info("skipped: %s", reason)
        pytest.skip(reason)
    name = f"xnvlk{os.getpid() % 100000}"
    yield name
    if ip_link("show", name).returncode == 0:
        ip_link("del", name)
        pytest.fail(f"interface {name} left behind by xnv-core")


class Peer:
    """End B: sends frames, captures the ones that come back as they were
    on the wire (an outer VLAN tag the kernel took out put back from the
    auxdata, with its TPID)."""

    def __init__(self, ifname):
        self.tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.tx.bind((ifname, 0))
        self.rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                                socket.htons(ETH_P_ALL))
        self.rx.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
        self.rx.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
        self.rx.bind((ifname, ETH_P_ALL))
        self.rx.settimeout(0.2)
        self.got = []

    def send(self, frames):
        for f in frames:
            assert self.tx.send(f) == len(f)

    def _recv(self):
        data, anc, flags, addr = self.rx.recvmsg(1 << 16, 256)
        assert not flags & socket.MSG_TRUNC
        if addr[2] == socket.PACKET_OUTGOING:
            return None
        return wire_frame(data, anc)[0]

    def collect(self, n, timeout=30):
        """Until `n` frames came back in all (Timeout otherwise)."""
        def more():
            try:
                while len(self.got) < n:
                    f = self._recv()
                    if f is not None:
                        self.got.append(f)
            except socket.timeout:
                pass
            return len(self.got) >= n
        wait_until(more, timeout, f"{n} frames back on the peer "
                   f"({len(self.got)} so far)")
        return self.got

    def close(self):
        self.tx.close()
        self.rx.close()


def round_trip(iface, sent, want, flow_of):
    """`sent` sent on `iface`, as many frames collected back as `want`
    holds: the frames of `want`, each flow's (`flow_of(frame)`) in its
    order there.  Returns what came back."""
    peer = Peer(iface)
    try:
        peer.send(sent)
        back = peer.collect(len(want))
    finally:
        peer.close()
    assert sorted(back) == sorted(want)
    for fl in {flow_of(f) for f in want}:
        mine = [f for f in want if flow_of(f) == fl]
        assert [f for f in back if flow_of(f) == fl] == mine, f"flow {fl}"
    return back
