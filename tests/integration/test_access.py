# SPDX-License-Identifier: BSD-3-Clause
"""Who may attach, and with which name (host mode; dom0-core/attach.c,
config_access.c, gntshare/host_server.c).

(a) Who may join: NFs run as `nobody` (setpriv) against a core whose
    socket is 0660 in group nobody's group, in a directory the core made
    (0750, same group).  Group red keeps the default (root only), blue
    lets uid nobody in, green nobody's gid; service `guarded` allows
    root only.  nobody is refused red and `guarded` with one line naming
    only its request, joins green by gid, joins blue and forwards; root
    joins red by default.
(b) Without socket_mode a non-root NF cannot even connect: one clear
    line from libxnv.  A core run by nobody lets nobody's NFs in by
    default (that user reaches all of the core anyway).
(c) Names: a second NF with an attached NF's name is refused (the first
    keeps going, and the log never shows it leaving); an empty name is
    refused; names and services with a newline, a forged log line and
    ESC bytes give one escaped line each in the log and in the reply.
    (c) speaks the socket protocol directly (proto.h, section 3), as a
    hostile NF would."""
import grp
import os
import pwd
import re
import shutil
import signal
import socket
import stat
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

from harness import CORE_BIN, FWD_BIN, nf_env, wait_until, write_config
from traffic import first_difference, make_traffic, read_pcap, write_pcap

NOBODY = pwd.getpwnam("nobody")
NOGROUP = grp.getgrgid(NOBODY.pw_gid).gr_name
N = 500


def as_nobody(argv):
    return ["setpriv", f"--reuid={NOBODY.pw_uid}", f"--regid={NOBODY.pw_gid}",
            "--clear-groups", *map(str, argv)]


@pytest.fixture(scope="module")
def nobody_bins():
    """{binary: path} of xnv-forwarder and xnv-core as nobody can run them:
    the build's when nobody can reach them, else copies in a directory of
    their own."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("running an NF as another user takes root and setpriv")
    d = Path(tempfile.mkdtemp(prefix="xnv-nobody-"))
    d.chmod(0o755)
    bins = {}
    for b in (FWD_BIN, CORE_BIN):
        if subprocess.run(as_nobody(["test", "-x", b])).returncode == 0:
            bins[b.name] = b
        else:
            bins[b.name] = Path(shutil.copy(b, d))
    yield bins
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def nobody_bin(nobody_bins):
    return nobody_bins[FWD_BIN.name]


@pytest.fixture(scope="module")
def pubdir():
    """A directory anyone may pass through (0711): the core makes its
    socket directory `run` inside."""
    d = Path(tempfile.mkdtemp(prefix="xnv-access-", dir="/tmp"))
    d.chmod(0o711)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def start_nobody(env, binary, service, group, name, sock):
    p = env.start(name, as_nobody([binary, "--service", service, "--group", group,
                                   "--name", name, "--socket", sock]),
                  env=nf_env())
    p.nf_name = name
    return p


def refusal(nf):
    """The one stderr line of an NF that exited because it was refused."""
    rc = nf.wait(10)
    lines = nf.stderr().splitlines()
    assert rc not in (0, None) and len(lines) == 1, (rc, lines)
    return lines[0]


# --------------------------------------------------------------------------
# (a) who may join

@pytest.fixture(scope="module")
def access(xnv_module, nobody_bin, pubdir):
    env = xnv_module
    pkts = make_traffic(N, 0xacce55, n_flows=8)
    sock = pubdir / "run" / "xnv.sock"
    cfg = write_config(env.path("access.ini"), [
        ("core", {"socket": sock, "socket_mode": "0660", "socket_group": NOGROUP,
                  "stall_timeout_ms": 20000}),
        ("group red", {"pool_bufs": 1024}),
        ("group blue", {"pool_bufs": 1024, "allow_uids": "0 nobody"}),
        ("group green", {"pool_bufs": 1024, "allow_gids": NOGROUP}),
        ("port in", {"dev": f"net_pcap0,rx_pcap={write_pcap(env.path('in.pcap'), pkts)}",
                     "group": "blue", "chain": "fwd -> out"}),
        ("port out", {"dev": f"net_pcap1,tx_pcap={env.path('out.pcap')}",
                      "group": "blue"}),
        ("port inR", {"dev": f"net_pcap2,rx_pcap={write_pcap(env.path('r.pcap'), [])}",
                      "group": "red", "chain": "fwd-r -> outR"}),
        ("port outR", {"dev": "net_null0", "group": "red"}),
        ("service fwd", {}), ("service fwd-r", {}), ("service spare", {}),
        ("service guarded", {"allow_uids": "0"}),
    ])
    core = env.start_core(cfg, socket=sock, duration=120, name="access")
    core.wait_ready()
    res = dict(core=core, sock=os.stat(sock), dir=os.stat(sock.parent), in_=pkts)
    res["red"] = refusal(start_nobody(env, nobody_bin, "fwd-r", "red", "nb-red", sock))
    res["guarded"] = refusal(start_nobody(env, nobody_bin, "guarded", "blue",
                                          "nb-guarded", sock))
    green = start_nobody(env, nobody_bin, "spare", "green", "nb-green", sock)
    res["green"] = core.wait_attached(green)
    green.signal(signal.SIGTERM)
    res["green_rc"] = green.wait(10)
    root_red = env.start_nf("fwd-r", "red", "root-red", socket=sock)
    res["root_red"] = core.wait_attached(root_red)
    fwd = start_nobody(env, nobody_bin, "fwd", "blue", "nb-fwd", sock)
    res["fwd"] = core.wait_attached(fwd)
    wait_until(lambda: core.snapshot()["ports"]["out"]["tx"] >= N, 30,
               f"{N} packets through nobody's NF")
    core.signal(signal.SIGTERM)
    res.update(rc=core.wait(20), stats=core.stats(), out=read_pcap(env.path("out.pcap")),
               fwd_rc=fwd.wait(10), root_red_rc=root_red.wait(10))
    return res


def test_socket_and_its_directory_let_the_group_in(access):
    s, d = access["sock"], access["dir"]
    assert stat.S_IMODE(s.st_mode) == 0o660 and s.st_gid == NOBODY.pw_gid
    assert stat.S_IMODE(d.st_mode) == 0o750 and d.st_gid == NOBODY.pw_gid


def test_uid_not_allowed_in_group_refused(access):
    msg = (f"uid {NOBODY.pw_uid} (gid {NOBODY.pw_gid}) may not join trust "
           "group red")
    assert access["red"].endswith(f"nb-red: attach refused: {msg}"), access["red"]
    lines = [ln for ln in access["core"].log().splitlines() if "nb-red" in ln]
    assert len(lines) == 1 and re.fullmatch(
        rf"xnv-core: attach of NF 'nb-red' \(pid \d+, uid {NOBODY.pw_uid}, gid "
        rf"{NOBODY.pw_gid}\) refused: {re.escape(msg)}", lines[0]), lines


def test_service_narrows_who_may_join(access):
    assert access["guarded"].endswith(
        f"attach refused: uid {NOBODY.pw_uid} (gid {NOBODY.pw_gid}) may not "
        "attach as service guarded"), access["guarded"]


def test_allowed_by_gid(access):
    assert access["green"] and access["green_rc"] == 0


def test_allowed_uid_attaches_and_forwards(access):
    assert access["rc"] == 0 and access["fwd_rc"] == 0
    (nf,) = [n for n in access["stats"]["nfs"] if n["name"] == "nb-fwd"]
    assert nf["group"] == "blue" and nf["rx"] == nf["tx"] == N, nf
    assert first_difference(access["in_"], access["out"]) is None


def test_root_joins_by_default(access):
    assert access["root_red"] and access["root_red_rc"] == 0
    (nf,) = [n for n in access["stats"]["nfs"] if n["name"] == "root-red"]
    assert nf["group"] == "red", nf


def test_refused_nfs_leave_no_record(access):
    names = {n["name"] for n in access["stats"]["nfs"]}
    assert names == {"nb-green", "root-red", "nb-fwd"}, names
    for g in access["stats"]["groups"]:
        assert g["free"] == g["pool_bufs"], g


# --------------------------------------------------------------------------
# (b) no socket_mode: a non-root NF cannot connect

def test_non_root_cannot_connect_by_default(xnv, nobody_bin, pubdir):
    sock = pubdir / "private" / "xnv.sock"
    cfg = write_config(xnv.path("private.ini"), [
        ("core", {"socket": sock}),
        ("group blue", {"pool_bufs": 1024, "allow_uids": "nobody"}),
        ("port p", {"dev": "net_null0", "group": "blue"}),
        ("service fwd", {}),
    ])
    core = xnv.start_core(cfg, socket=sock, name="private")
    core.wait_ready()
    assert stat.S_IMODE(os.stat(sock).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(sock.parent).st_mode) == 0o700
    line = refusal(start_nobody(xnv, nobody_bin, "fwd", "blue", "nb", sock))
    assert line.endswith(f"attach refused: cannot reach xnv-core at {sock}: "
                         "Permission denied (the core's [core] socket_mode and "
                         "socket_group say who may connect)"), line
    assert not re.search(r"attach of NF|attached as domain", core.log())


def test_core_own_user_joins_by_default(xnv, nobody_bins, pubdir):
    """A core run by nobody lets nobody's NFs in without allow_uids: a
    process of the core's own user can reach all of the core anyway."""
    own = pubdir / "own"
    own.mkdir()
    os.chown(own, NOBODY.pw_uid, NOBODY.pw_gid)
    sock = own / "run" / "xnv.sock"
    cfg = write_config(own / "own.ini", [
        ("core", {"socket": sock}),
        ("group blue", {"pool_bufs": 1024}),
        ("port p", {"dev": "net_null0", "group": "blue"}),
        ("service fwd", {}),
    ])
    cfg.chmod(0o644)
    # DPDK's runtime directory inside `own` too: nothing left in /tmp
    core = xnv.start_core(cfg, socket=sock, stats_json=None, name="own",
                          wrapper=[*as_nobody(["env"]), f"XDG_RUNTIME_DIR={own}"],
                          binary=nobody_bins[CORE_BIN.name],
                          eal=("-l", "0", "--no-huge", "-m", "128", "--no-shconf"))
    core.wait_ready()
    nf = start_nobody(xnv, nobody_bins[FWD_BIN.name], "fwd", "blue", "nb-own", sock)
    core.wait_attached(nf)
    nf.signal(signal.SIGTERM)
    assert nf.wait(10) == 0
    core.stop()


# --------------------------------------------------------------------------
# (c) names, spoken raw

MSG = struct.Struct("<IHHiIQII160s")     # struct gnts_msg (proto.h)
REQ = struct.Struct("<32s32s32sI")       # struct gnts_attach_req
MSG_MAGIC, MSG_ATTACH, MSG_ATTACH_OK, MSG_ERROR = 0x4D564E58, 1, 2, 5
FORGED = b"a\nxnv-core: NF x quarantined\x1b["
FORGED_SVC = b"s\nxnv-core: NF y quarantined\x1b"


def raw_attach(sock, name, service=b"fwd", group=b"blue"):
    """One ATTACH; returns (reply type, status, text)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
        s.settimeout(10)
        s.connect(str(sock))
        s.send(MSG.pack(MSG_MAGIC, 1, MSG_ATTACH, 0, 0, 0, 0, 1,
                        REQ.pack(name, service, group, 0)))
        _, _, typ, status, *_, u = MSG.unpack(s.recv(MSG.size))
    return typ, status, u.split(b"\0", 1)[0].decode()


@pytest.fixture
def named(xnv):
    cfg = write_config(xnv.path("names.ini"), [
        ("group blue", {"pool_bufs": 1024}),
        ("port p", {"dev": "net_null0", "group": "blue"}),
        ("service fwd", {}),
    ])
    core = xnv.start_core(cfg)
    core.wait_ready()
    return core


def test_duplicate_name_refused(xnv, named):
    good = xnv.start_nf("fwd", "blue", "dup")
    named.wait_attached(good)
    line = refusal(xnv.start_nf("fwd", "blue", "dup"))
    assert line.endswith("dup: attach refused: an NF named dup is already "
                         "attached"), line
    assert named.snapshot()["nfs"]["dup"]["state"] == "attached"
    log = named.log()
    assert len(re.findall(r"NF dup \(pid \d+\) attached", log)) == 1, log
    assert "detached" not in log, log
    # once the first has left, the name is free again (a restart)
    good.signal(signal.SIGTERM)
    assert good.wait(10) == 0
    named.wait_output(r"NF dup \(domain \d+\) detached", 10)
    named.wait_attached(xnv.start_nf("fwd", "blue", "dup"))


def test_empty_name_refused(named):
    assert raw_attach(named.socket, b"") == (MSG_ERROR, -22, "NF name is empty")
    assert re.search(r"^xnv-core: attach of NF '' \(pid \d+, uid 0, gid 0\) "
                     r"refused: NF name is empty$", named.log(), re.M), named.log()


def test_forged_strings_are_one_escaped_line(named):
    assert raw_attach(named.socket, FORGED) == (
        MSG_ERROR, -22, "NF name may hold only letters, digits and - _ .")
    typ, _, text = raw_attach(named.socket, b"ok", service=FORGED_SVC)
    assert typ == MSG_ERROR and text == (
        r"unknown service 's\x0axnv-core: NF y quarantined\x1b' "
        "(configured: fwd)"), text
    typ, _, text = raw_attach(named.socket, b"ok2", group=FORGED_SVC)
    assert typ == MSG_ERROR and text == (
        r"unknown trust group 's\x0axnv-core: NF y quarantined\x1b' "
        "(configured: blue)"), text
    # the log thread writes the lines out soon after the replies
    wait_until(lambda: len([ln for ln in named.log().splitlines()
                            if " refused: " in ln]) >= 3, 10,
               "the three refusal lines in the log")
    log = named.log()
    assert "\x1b" not in log and not re.search(r"^xnv-core: NF [xy] quarantined",
                                               log, re.M), log
    refused = [ln for ln in log.splitlines() if " refused: " in ln]
    assert len(refused) == 3, refused
    who = r" \(pid \d+, uid 0, gid 0\) refused: "
    assert re.fullmatch(r"xnv-core: attach of NF 'a\\x0axnv-core: NF x "
                        r"quarantined\\x1b\['" + who + r"NF name may hold only "
                        r"letters, digits and - _ \.", refused[0]), refused
    assert re.fullmatch(r"xnv-core: attach of NF 'ok'" + who + r"unknown "
                        r"service 's\\x0axnv-core: NF y quarantined\\x1b' "
                        r"\(configured: fwd\)", refused[1]), refused
    assert named.alive()
