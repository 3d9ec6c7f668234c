# SPDX-License-Identifier: BSD-3-Clause
"""Lifecycle with endless traffic (net_null0 -> fwd-a -> fwd-b -> net_null1):
(a) SIGTERM to the core, (b) SIGKILL to the core and a new core on the same
socket, (c) SIGKILL to one NF while traffic flows, (d) that NF restarted,
(e) a second core on the socket of a live one."""
import os
import re
import signal
import time
from pathlib import Path

import pytest

from harness import (CORE_BIN, hugetlbfs_mounts, listing,
                     wait_until, write_config)

POOL_BUFS = 4096
BURST = 64              # [core] burst default: most a pending list holds
NF_GONE = re.compile(r"detached by the core: (xnv-core is shutting down|"
                     r"core closed the connection)")


def null_config(env):
    return write_config(env.path("null.ini"), [
        ("core", {"socket": env.socket}),
        ("group g", {"pool_bufs": POOL_BUFS}),
        ("port in", {"dev": "net_null0", "group": "g",
                     "chain": "fwd-a -> fwd-b -> out"}),
        ("port out", {"dev": "net_null1", "group": "g"}),
        ("service fwd-a", {}),
        ("service fwd-b", {}),
    ])


def start_null_chain(env, cfg, suffix="1", core_name="core"):
    """Core + fwd-a + fwd-b, returned once packets come out of port out."""
    core = env.start_core(cfg, name=core_name)
    core.wait_ready()
    nfs = [env.start_nf(s, "g", f"{s}-{suffix}") for s in ("fwd-a", "fwd-b")]
    atts = [core.wait_attached(nf) for nf in nfs]
    wait_until(lambda: core.snapshot()["ports"]["out"]["tx"] > 10_000, 10,
               "traffic through fwd-a and fwd-b")
    return core, nfs, atts


def runtime_dir(core):
    """The EAL runtime directory this core logged; it must exist now."""
    m = re.search(r"EAL runtime directory (\S+)", core.log())
    assert m, core.log()[-2000:]
    path = Path(m.group(1))
    assert path.is_dir(), f"{path} does not exist while the core runs"
    return path


def assert_no_runtime_dir_left(path):
    wait_until(lambda: not path.exists(), 3, f"{path} to go away")


def check_conservation(st):
    """Every packet received went out of a port or is in a drop counter
    (the core's or an NF's verdict)."""
    ports = {p["name"]: p for p in st["ports"]}
    lost = (ports["in"]["rx"] - ports["out"]["tx"] - sum(st["drops"].values())
            - sum(n["drop"] for n in st["nfs"]))
    assert lost == 0, st


def nf_exit_ok(nf, rc, expect=0):
    """The NF left by itself with a clear line: status 0 when the core shut
    down cleanly, 1 when it died."""
    assert rc is not None and rc >= 0, f"{nf.name}: killed by signal {-rc}"
    assert rc == expect, f"{nf.name}: exit status {rc}, expected {expect}"
    assert NF_GONE.search(nf.stderr()), nf.stderr()


# --------------------------------------------------------------------------
# (a) SIGTERM to the core

@pytest.fixture(scope="module")
def sigterm(xnv_module):
    env = xnv_module
    huge_before = listing(hugetlbfs_mounts())
    core, nfs, _ = start_null_chain(env, null_config(env))
    rte_dir = runtime_dir(core)
    t0 = time.monotonic()
    core.signal(signal.SIGTERM)
    rc = core.wait(10)
    took = time.monotonic() - t0
    nf_rcs = [nf.wait(10) for nf in nfs]
    return dict(core=core, rc=rc, took=took, nfs=nfs, nf_rcs=nf_rcs,
                rte_dir=rte_dir, huge_before=huge_before)


def test_sigterm_core_exits_0_quickly(sigterm):
    assert sigterm["rc"] == 0, sigterm["core"].log()[-3000:]
    assert sigterm["took"] < 5
    assert "xnv-core statistics after" in sigterm["core"].stdout()


def test_sigterm_nfs_exit_by_themselves(sigterm):
    for nf, rc in zip(sigterm["nfs"], sigterm["nf_rcs"]):
        nf_exit_ok(nf, rc)


def test_sigterm_socket_removed(sigterm):
    assert not os.path.lexists(sigterm["core"].socket)


def test_sigterm_no_hugepage_files_left(sigterm):
    if not sigterm["huge_before"]:
        pytest.skip("no hugetlbfs mounted")
    assert listing(sigterm["huge_before"]) == sigterm["huge_before"]


def test_sigterm_no_dpdk_runtime_dir_left(sigterm):
    assert_no_runtime_dir_left(sigterm["rte_dir"])


def test_sigterm_counters_add_up(sigterm):
    st = sigterm["core"].stats()
    (g,) = st["groups"]
    assert g["free"] == g["pool_bufs"] == POOL_BUFS
    assert [n["state"] for n in st["nfs"]] == ["gone", "gone"]
    assert {p["name"]: p for p in st["ports"]}["out"]["tx"] > 10_000


def test_sigterm_every_packet_accounted_for(sigterm):
    check_conservation(sigterm["core"].stats())


# --------------------------------------------------------------------------
# (b) SIGKILL to the core, then a new core on the same socket

@pytest.fixture(scope="module")
def sigkill(xnv_module):
    env = xnv_module
    cfg = null_config(env)
    core, nfs, _ = start_null_chain(env, cfg)
    rte_dir = runtime_dir(core)
    core.signal(signal.SIGKILL)
    rc = core.wait(5)
    t0 = time.monotonic()
    nf_rcs = [nf.wait(10) for nf in nfs]
    nfs_took = time.monotonic() - t0
    stale = os.path.exists(core.socket) and core.socket.is_socket()
    core2, nfs2, _ = start_null_chain(env, cfg, suffix="2", core_name="core2")
    rte_dir2 = runtime_dir(core2)
    snap = core2.snapshot()
    core2.signal(signal.SIGTERM)
    rc2 = core2.wait(10)
    return dict(core=core, rc=rc, nfs=nfs, nf_rcs=nf_rcs, nfs_took=nfs_took,
                stale=stale, core2=core2, rc2=rc2, nfs2=nfs2, snap=snap,
                nf2_rcs=[nf.wait(10) for nf in nfs2], rte_dir=rte_dir,
                rte_dir2=rte_dir2)


def test_sigkill_core_dies(sigkill):
    assert sigkill["rc"] == -signal.SIGKILL


def test_sigkill_nfs_exit_by_themselves(sigkill):
    assert sigkill["nfs_took"] < 5
    for nf, rc in zip(sigkill["nfs"], sigkill["nf_rcs"]):
        nf_exit_ok(nf, rc, expect=1)
        assert "core closed the connection" in nf.stderr()


def test_sigkill_leaves_stale_socket(sigkill):
    assert sigkill["stale"]


def test_new_core_removes_stale_socket(sigkill):
    sock = sigkill["core"].socket
    assert f"removed stale socket {sock} (its core is gone)" in sigkill["core2"].log()


def test_new_core_works(sigkill):
    snap = sigkill["snap"]
    assert snap["ports"]["out"]["tx"] > 10_000
    assert snap["nfs"]["fwd-a-2"]["rx"] > 0 and snap["nfs"]["fwd-b-2"]["rx"] > 0
    assert sigkill["rc2"] == 0
    for nf, rc in zip(sigkill["nfs2"], sigkill["nf2_rcs"]):
        nf_exit_ok(nf, rc)
    assert not os.path.lexists(sigkill["core2"].socket)


def test_new_core_cleans_dpdk_runtime_dir(sigkill):
    """The killed core's runtime directory is reused (same socket, same
    directory) and removed by the next core's clean exit."""
    assert sigkill["rte_dir2"] == sigkill["rte_dir"]
    assert_no_runtime_dir_left(sigkill["rte_dir"])


# --------------------------------------------------------------------------
# (c) SIGKILL to fwd-a while traffic flows, (d) fwd-a restarted

@pytest.fixture(scope="module")
def nf_kill(xnv_module):
    env = xnv_module
    core, (fa, fb), (att_a, _) = start_null_chain(env, null_config(env))
    fa.signal(signal.SIGKILL)
    fa_rc = fa.wait(5)
    gone = core.wait_output(
        rf"NF fwd-a-1 \(domain {att_a['dom']}\) detached: connection closed "
        r"\(NF exited or died\); .*, (\d+) buffers reclaimed", 5)
    # fwd-a has no instance now: its packets are dropped, counted
    s1 = core.snapshot()
    time.sleep(0.3)
    s2 = core.snapshot()
    alive = dict(core=core.alive(), fb=fb.alive())
    # (d) restart it
    fa2 = env.start_nf("fwd-a", "g", "fwd-a-2")
    core.wait_attached(fa2)
    s3 = core.snapshot()

    def fa2_busy():
        s = core.snapshot()
        return s if s["nfs"]["fwd-a-2"]["rx"] > s3["nfs"]["fwd-a-2"]["rx"] + 10_000 else None
    s4 = wait_until(fa2_busy, 10, "traffic through fwd-a-2")
    core.signal(signal.SIGTERM)
    rc = core.wait(10)
    return dict(core=core, rc=rc, fa_rc=fa_rc, reclaimed=int(gone.group(1)),
                s1=s1, s2=s2, s3=s3, s4=s4, alive=alive, fb=fb, fa2=fa2,
                fb_rc=fb.wait(10), fa2_rc=fa2.wait(10), stats=core.stats())


def test_nf_kill_core_keeps_running(nf_kill):
    assert nf_kill["fa_rc"] == -signal.SIGKILL
    assert nf_kill["alive"]["core"]
    assert nf_kill["rc"] == 0, nf_kill["core"].log()[-3000:]


def test_nf_kill_other_nf_keeps_running(nf_kill):
    assert nf_kill["alive"]["fb"]
    log = nf_kill["core"].log()
    # fwd-b was detached only at shutdown
    assert re.findall(r"NF fwd-b-1 \(domain \d+\) detached: (.*?);", log) == \
        ["xnv-core is shutting down"]
    # and it got traffic again once fwd-a was back
    assert nf_kill["s4"]["nfs"]["fwd-b-1"]["rx"] > nf_kill["s3"]["nfs"]["fwd-b-1"]["rx"]
    nf_exit_ok(nf_kill["fb"], nf_kill["fb_rc"])


def test_nf_kill_buffers_reclaimed(nf_kill):
    st = nf_kill["stats"]
    (rec,) = [n for n in st["nfs"] if n["name"] == "fwd-a-1"]
    assert rec["state"] == "gone"
    assert rec["reclaimed"] > 0 or rec["held"] == 0, rec
    assert rec["reclaimed"] == nf_kill["reclaimed"]
    assert st["drops"]["reclaimed"] >= rec["reclaimed"]


def test_nf_kill_pool_home_after_shutdown(nf_kill):
    (g,) = nf_kill["stats"]["groups"]
    assert g["free"] == g["pool_bufs"] == POOL_BUFS, g


def test_nf_kill_no_instance_drops_counted(nf_kill):
    s1, s2 = nf_kill["s1"], nf_kill["s2"]
    assert s2["drops"]["no_instance"] > s1["drops"]["no_instance"]
    # while fwd-a was gone, at most what was already past it (at most the
    # whole pool) reached port out
    assert s2["ports"]["out"]["tx"] - s1["ports"]["out"]["tx"] <= POOL_BUFS
    assert nf_kill["stats"]["drops"]["no_instance"] >= s2["drops"]["no_instance"]


def test_nf_kill_every_packet_accounted_for(nf_kill):
    check_conservation(nf_kill["stats"])


def test_restarted_nf_gets_traffic(nf_kill):
    s3, s4 = nf_kill["s3"], nf_kill["s4"]
    assert s4["nfs"]["fwd-a-2"]["rx"] > s3["nfs"]["fwd-a-2"]["rx"]
    assert s4["ports"]["out"]["tx"] > s3["ports"]["out"]["tx"]
    (rec,) = [n for n in nf_kill["stats"]["nfs"] if n["name"] == "fwd-a-2"]
    assert rec["rx"] >= s4["nfs"]["fwd-a-2"]["rx"] and rec["tx"] > 0
    nf_exit_ok(nf_kill["fa2"], nf_kill["fa2_rc"])


# --------------------------------------------------------------------------
# (e) a second core on a live core's socket

def test_second_core_on_live_socket_refused(xnv):
    cfg = null_config(xnv)
    core, nfs, _ = start_null_chain(xnv, cfg)
    r = xnv.run([CORE_BIN, "-l", "1", "--", "--config", cfg, "--socket",
                 xnv.socket, "--duration", "5"])
    assert r.returncode == 1
    # refused before EAL starts: its only line, naming the first core
    assert r.stderr.splitlines() == [
        f"xnv-core: another xnv-core (pid {core.pid}) is listening on {xnv.socket}: "
        "stop it first, or give this one another socket"], r.stderr
    assert "xnv-core statistics" not in r.stdout
    # the first core, its NFs and its socket are untouched
    assert core.alive() and all(nf.alive() for nf in nfs)
    assert xnv.socket.is_socket()
    before = core.snapshot()["ports"]["out"]["tx"]
    wait_until(lambda: core.snapshot()["ports"]["out"]["tx"] > before + 10_000,
               10, "traffic to go on")
