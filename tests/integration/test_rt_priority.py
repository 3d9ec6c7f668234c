# SPDX-License-Identifier: BSD-3-Clause
"""--rt-priority: the data-path threads of xnv-core (its lcores) and of an
NF (the thread that runs xnv_nf_run) run SCHED_FIFO at the priority asked,
the core's control threads stay SCHED_OTHER, and packets still flow (1000
pps, so no thread here polls busy at a real-time priority for long).  A
priority out of range is a usage error of each; one this process may not
take (CAP_SYS_NICE dropped by setpriv, RLIMIT_RTPRIO 0) is refused before
anything starts, in one line that says what is missing.
"""
import shutil
import subprocess

import pytest

from harness import CORE_BIN, FWD_BIN, Telemetry, scaled, thread_files, \
    wait_until, write_config

SCHED_OTHER, SCHED_FIFO = 0, 1
PRIO = 7


def threads(pid):
    """{tid: (comm, policy, rt_priority)} of process `pid` (proc(5):
    fields 40 and 41 of stat, counted after the comm)."""
    res = {}
    for tid, (stat,) in thread_files(pid, "stat").items():
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        f = stat[stat.rindex(")") + 2:].split()
        res[tid] = (comm, int(f[38]), int(f[37]))
    return res


def config(xnv):
    return write_config(xnv.path("rt.ini"), [
        ("group g", {"pool_bufs": 1024}),
        ("port in", {"dev": "net_null0,size=64", "group": "g",
                     "chain": "fwd -> out", "rx_rate": 1000}),
        ("port out", {"dev": "net_null1", "group": "g"}),
        ("service fwd", {}),
    ])


def fifo_allowed():
    """Whether this machine lets us run SCHED_FIFO at all (a container's
    cgroup may give real-time threads no CPU time)."""
    return subprocess.run(["chrt", "-f", str(PRIO), "true"],
                          capture_output=True).returncode == 0


@pytest.mark.skipif(shutil.which("chrt") is None or not fifo_allowed(),
                    reason="SCHED_FIFO not allowed here (chrt -f failed)")
def test_data_path_threads_run_fifo(xnv):
    core = xnv.start_core(config(xnv), extra=("--rt-priority", str(PRIO)))
    core.wait_ready()
    nf = xnv.start_nf("fwd", "g", "fwd-1",
                      extra=("--rt-priority", str(PRIO)))
    core.wait_attached(nf)
    core.wait_output(rf"lcore 0 runs SCHED_FIFO at priority {PRIO}", 10)
    with Telemetry(core) as t:
        wait_until(lambda: t("/xnv/port/info", 1)["tx"] > 100, 30,
                   "packets through the forwarder")
    ct = threads(core.pid)
    lcore = [v for tid, v in ct.items() if tid == core.pid]
    assert lcore == [("xnv-core", SCHED_FIFO, PRIO)], ct
    others = {v[0]: v[1] for tid, v in ct.items() if tid != core.pid}
    assert "xnv-control" in others, ct
    assert set(others.values()) == {SCHED_OTHER}, ct
    # The NF's loop runs in its main thread (xnv-forwarder).
    wait_until(lambda: threads(nf.pid)[nf.pid][1:] == (SCHED_FIFO, PRIO),
               10, "the forwarder's loop at SCHED_FIFO")
    assert nf.stop() == 0, nf.stderr()[-2000:]


@pytest.mark.parametrize("value", ["0", "100", "high", ""])
def test_out_of_range_is_a_usage_error(xnv, value):
    r = xnv.run([CORE_BIN, "--no-huge", "--", "--config", "/nonexistent",
                 "--rt-priority", value])
    assert r.returncode == 2, r
    assert r.stderr.strip().splitlines() == [
        f"xnv-core: --rt-priority {value}: expected 1 to 99"], r.stderr
    r = xnv.run([FWD_BIN, "--service", "x", "--rt-priority", value])
    assert r.returncode == 2, r
    assert r.stderr.strip().splitlines() == [
        f"xnv: --rt-priority {value}: expected 1 to 99"], r.stderr


NO_NICE = ["setpriv", "--bounding-set", "-sys_nice", "--inh-caps",
           "-sys_nice"]


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="no setpriv")
def test_not_permitted_is_refused_in_one_line(xnv):
    why = ("SCHED_FIFO at priority %d: Operation not permitted (needs "
           "CAP_SYS_NICE, or an RLIMIT_RTPRIO of at least the priority)"
           % PRIO)
    r = xnv.run(["prlimit", "--rtprio=0", *NO_NICE, CORE_BIN, "--no-huge",
                 "--", "--config", config(xnv), "--rt-priority", str(PRIO)],
                timeout=scaled(30))
    assert r.returncode == 1, r
    assert r.stderr.strip().splitlines() == [
        f"xnv-core: --rt-priority {PRIO}: {why}"], r.stderr
    r = xnv.run(["prlimit", "--rtprio=0", *NO_NICE, FWD_BIN, "--service",
                 "x", "--rt-priority", str(PRIO)])
    assert r.returncode == 1, r
    assert r.stderr.strip().splitlines() == [
        f"xnv: --rt-priority {PRIO}: {why}"], r.stderr
