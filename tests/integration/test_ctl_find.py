# SPDX-License-Identifier: BSD-3-Clause
"""How xnv-ctl finds a core (dom0-core/python/xnv/locate.py): the pointer
file the core writes next to its NF socket (removed at a clean exit), so
that any spelling of the socket path names the core; the telemetry socket
or runtime directory given instead; with no socket, the only core running,
and with several a list and exit 2 (a usage error: choose one); no core,
or a pointer left by a dead core, one line and exit 1.  Each core runs
with its own RUNTIME_DIRECTORY, so the cores other programs on this
machine run are not in sight."""
import json
import os
import re
import signal

from harness import CTL_BIN, nf_env, wait_until, write_config

TIMEOUT = ("--timeout", "30")


def core_env(env):
    """The environment of the cores and xnv-ctl: a private runtime dir."""
    rt = env.sockdir / "rt"
    rt.mkdir(exist_ok=True)
    return {**nf_env(), "RUNTIME_DIRECTORY": str(rt)}


def start(env, sock, name):
    cfg = write_config(env.path(f"{name}.ini"), [
        ("core", {"socket": sock}),
        ("group g", {"pool_bufs": 1024}),
        ("port p", {"dev": f"net_null{name[-1]}", "group": "g"}),
    ])
    core = env.start_core(cfg, socket=sock, stats_json=None, duration=300,
                          name=name, env=core_env(env))
    core.wait_ready()
    return core


def ctl(env, *args):
    return env.run([CTL_BIN, *TIMEOUT, *args], timeout=120, env=core_env(env))


def socket_of(env, *args):
    """The socket of the core `xnv-ctl ARGS info` reached."""
    r = ctl(env, *args, "info", "--json")
    assert r.returncode == 0 and r.stderr == "", (args, r.stderr)
    return json.loads(r.stdout)["socket"]


def test_any_spelling_of_the_socket_finds_the_core(xnv):
    d = xnv.sockdir / "d"
    d.mkdir()
    sock = d / "xnv.sock"
    core = start(xnv, sock, "core0")
    ptr = (xnv.sockdir / "d" / "xnv.sock.ctl")
    text = ptr.read_text()
    assert f"pid={core.pid}\n" in text, text
    (xnv.sockdir / "link").symlink_to(d)
    rel = os.path.relpath(sock, xnv.dir)        # xnv-ctl runs in xnv.dir
    spellings = [str(sock), rel, "./" + rel, str(d) + "//xnv.sock",
                 str(sock) + "/", str(xnv.sockdir / "link" / "xnv.sock"),
                 str(core.runtime_dir()), str(core.runtime_dir() / "dpdk_telemetry.v2")]
    for s in spellings:
        assert socket_of(xnv, "--socket", s) == str(sock), s
    # $XNV_SOCKET takes any spelling too
    r = xnv.run([CTL_BIN, *TIMEOUT, "info", "--json"], timeout=120,
                env={**core_env(xnv), "XNV_SOCKET": rel})
    assert r.returncode == 0 and json.loads(r.stdout)["socket"] == str(sock), r.stderr
    # the only core running: no socket needed
    assert socket_of(xnv) == str(sock)
    # a clean exit removes the pointer
    core.stop()
    assert not ptr.exists()


def test_several_cores_are_listed(xnv):
    socks = [xnv.sockdir / f"c{i}.sock" for i in (0, 1)]
    cores = [start(xnv, s, f"core{i}") for i, s in enumerate(socks)]
    r = ctl(xnv, "info")
    assert r.returncode == 2 and r.stdout == "", r
    lines = r.stderr.splitlines()
    assert lines[0] == "xnv-ctl: 2 xnv-cores are running: choose one with --socket PATH"
    for s, c in zip(socks, cores):
        assert any(ln.strip().startswith(f"--socket {s} ") and
                   str(c.runtime_dir()) in ln for ln in lines[1:]), r.stderr
    assert len(lines) == 3, r.stderr
    # naming one works
    assert socket_of(xnv, "--socket", socks[1]) == str(socks[1])


def test_no_core_and_a_stale_pointer_say_so(xnv):
    r = ctl(xnv, "info")
    assert r.returncode == 1 and r.stdout == ""
    assert re.fullmatch(r"xnv-ctl: no xnv-core running \(none at /run/xnv/xnv\.sock, "
                        r"no telemetry socket answering in \S+/rt/dpdk\)\n", r.stderr), r.stderr
    # a core killed hard leaves its pointer: its pid is checked
    sock = xnv.sockdir / "dead.sock"
    core = start(xnv, sock, "core0")
    core.signal(signal.SIGKILL)
    ptr = xnv.sockdir / "dead.sock.ctl"
    wait_until(lambda: not core.alive(), 30, "the core to die")
    assert ptr.exists()
    r = ctl(xnv, "--socket", sock, "info")
    assert r.returncode == 1 and r.stdout == ""
    assert f"{ptr} names pid {core.pid}, which is gone: is it running with " \
           f"--socket {sock}?" in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1
