# SPDX-License-Identifier: BSD-3-Clause
"""What xnv-core.service relies on, shown without systemd (PID 1 here need
not be systemd; the units themselves: test_install.py, systemd-analyze).

- With NOTIFY_SOCKET naming a unix datagram socket the test owns, the core
  sends READY=1 once, and at that moment the NF socket accepts a
  connection and both ports are up (xnv-ctl ports); SIGTERM then brings
  STOPPING=1 before it exits 0.  A core whose config is refused sends
  nothing.
- [core] socket_mode / socket_group are applied to the socket and to the
  directory the core makes for it; a group that does not exist is one
  line, exit status 1 or 2, and nothing is created.
- The sample config (packaging/xnv.ini) starts, its socket 0660 in its
  group, and the two NFs of its chain attach.
"""
import grp
import json
import os
import pwd
import re
import signal
import socket
import stat
import subprocess

import pytest

from harness import CORE_BIN, CTL_BIN, REPO, nf_env, scaled, write_config

NOGROUP = grp.getgrgid(pwd.getpwnam("nobody").pw_gid).gr_name


def null_config(env, core=None, path="null.ini"):
    return write_config(env.path(path), [
        ("core", {"socket": env.socket, **(core or {})}),
        ("group blue", {"pool_bufs": 1024}),
        ("port in", {"dev": "net_null0", "group": "blue", "chain": "fwd-a -> out",
                     "rx_rate": 1000}),
        ("port out", {"dev": "net_null1", "group": "blue"}),
        ("service fwd-a", {}),
    ])


@pytest.fixture
def notify_sock(xnv):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = xnv.sockdir / "notify"
    s.bind(str(path))
    s.settimeout(scaled(30))
    yield s, path
    s.close()


def built_with_libsystemd():
    r = subprocess.run(["ldd", str(CORE_BIN)], capture_output=True, text=True)
    return "libsystemd" in r.stdout


needs_sd = pytest.mark.skipif(not built_with_libsystemd(),
                              reason="xnv-core built without libsystemd "
                              "(apt-get install libsystemd-dev, rebuild)")


def core_env(path):
    return dict(os.environ, NOTIFY_SOCKET=str(path))


@needs_sd
def test_ready_only_once_the_socket_accepts_and_stopping_on_sigterm(xnv, notify_sock):
    sock, path = notify_sock
    core = xnv.start_core(null_config(xnv), env=core_env(path))
    msg = sock.recv(4096).decode()
    # at READY=1 an NF can connect at once, and every port is up
    nf = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    nf.connect(str(xnv.socket))
    nf.close()
    assert "READY=1" in msg.splitlines(), msg
    r = xnv.run([CTL_BIN, "--socket", xnv.socket, "--json", "ports"], timeout=60,
                env=nf_env())
    assert r.returncode == 0, r.stderr
    ports = json.loads(r.stdout)
    ports = ports.get("ports", ports) if isinstance(ports, dict) else ports
    assert sorted(p["name"] for p in ports) == ["in", "out"]
    assert all(p["link_up"] for p in ports), ports
    core.signal(signal.SIGTERM)
    msg = sock.recv(4096).decode()
    assert msg.splitlines() == ["STOPPING=1"], msg
    assert core.wait(30) == 0
    sock.settimeout(0.2)
    with pytest.raises(socket.timeout):
        sock.recv(4096)


def test_refused_config_sends_nothing(xnv, notify_sock):
    sock, path = notify_sock
    cfg = null_config(xnv, core={"ring_size": 1000})
    core = xnv.start_core(cfg, env=core_env(path))
    assert core.wait(30) == 1
    sock.settimeout(0.2)
    with pytest.raises(socket.timeout):
        sock.recv(4096)


def test_socket_mode_and_group_applied(xnv):
    xnv.socket = xnv.sockdir / "run" / "xnv.sock"
    core = xnv.start_core(null_config(xnv, core={"socket_mode": "0660",
                                                 "socket_group": NOGROUP}))
    core.wait_ready(30)
    gid = grp.getgrnam(NOGROUP).gr_gid
    st = os.stat(xnv.socket)
    assert (stat.S_IMODE(st.st_mode), st.st_gid) == (0o660, gid)
    st = os.stat(xnv.socket.parent)
    assert (stat.S_IMODE(st.st_mode), st.st_gid) == (0o750, gid)


def test_unknown_socket_group_refused_nothing_created(xnv):
    xnv.socket = xnv.sockdir / "run" / "xnv.sock"
    core = xnv.start_core(null_config(xnv, core={"socket_mode": "0660",
                                                 "socket_group": "no-such-group-xnv"}))
    assert core.wait(30) in (1, 2)
    err = core.stderr().strip().splitlines()
    assert len(err) == 1 and "socket_group = no-such-group-xnv" in err[0], err
    assert not xnv.socket.parent.exists()
    


def test_sample_config_starts_and_lets_its_group_in(xnv):
    """packaging/xnv.ini as shipped, but for its socket path and with an
    existing group standing in for xnv (which this machine may lack)."""
    text = (REPO / "packaging" / "xnv.ini").read_text()
    text = re.sub(r"^socket = .*$", f"socket = {xnv.socket}", text, flags=re.M)
    text, n = re.subn(r"^((?:socket_group|allow_gids) = )xnv$", rf"\g<1>{NOGROUP}",
                      text, flags=re.M)
    assert n == 2
    cfg = xnv.path("sample.ini")
    cfg.write_text(text)
    core = xnv.start_core(cfg)
    core.wait_ready(30)
    st = os.stat(xnv.socket)
    assert (stat.S_IMODE(st.st_mode), st.st_gid) == (0o660, grp.getgrnam(NOGROUP).gr_gid)
    for name in ("fwd-a", "fwd-b"):
        core.wait_attached(xnv.start_nf(name, "blue", name), 30)
