#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench-smoke: raw gntshare ring round trip vs xnv-core + 1 forwarder NF.

A benchmark, not a test: it measures both numbers side by side on the same
two CPUs (runs interleaved raw, 1-NF, raw, 1-NF, ... so that machine noise
hits both alike) and prints their ratio.  It fails only when something could
not be run or measured, never because of a number.  See bench/README.md.

  raw   build/bench/ring-rt -n 1: "core" thread on CPU 0, "NF" thread on
        CPU 1, Mdesc/s of round trips (A -> NF touches 64 B -> B).
  1-NF  xnv-core -l 0 (CPU 0): net_null0 (64 B) -> fwd -> net_null1, one
        xnv-forwarder --busy-poll under taskset -c 1 (CPU 1); Mpps =
        tx of port "out" / traffic_s from --stats-json.  traffic_s starts
        at the first packet received, i.e. after the NF attached (rx waits
        for it: rx_start = chain-ready), and ends at the last packet sent
        before --duration, so EAL and NF start-up are outside the window.

Each run also reports the CPU share of both sides (on-CPU time of the
pinned threads / wall time, from /proc/PID/task/TID/schedstat or the
thread CPU clock); a run below --min-share was disturbed by another process
on those CPUs and is repeated (--retries, within --budget seconds).

Usage: smoke.py --build DIR [--reps N] [--raw-seconds S] [--warmup S]
                [--nf-seconds S] [--eal-mem OPTS] [--core-cpu N]
                [--nf-cpu N] [--min-share F] [--retries N] [--budget S]
                [--keep]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from xnvbench.measure import ring_limit
from xnvbench.procs import BenchError, Proc, run_main, say, stop_all, tail, \
    wait_until
from xnv.procs import cpu_ns  # importing xnvbench put xnv on sys.path

CONFIG = """\
; bench-smoke: 64 B packets from net_null0 through one forwarder to net_null1
[port in]
dev = net_null0,size=64
chain = fwd -> out
[port out]
dev = net_null1
[service fwd]
"""


def shares(pids, t_from, t_to):
    """Fraction of wall time each process's main thread was on a CPU
    between monotonic times t_from and t_to (sleeps until then)."""
    def sample():
        return time.monotonic(), [cpu_ns(p) for p in pids]
    time.sleep(max(0.0, t_from - time.monotonic()))
    w0, c0 = sample()
    time.sleep(max(0.0, t_to - time.monotonic()))
    w1, c1 = sample()
    return [None if a is None or b is None or w1 <= w0 else
            (b - a) * 1e-9 / (w1 - w0) for a, b in zip(c0, c1)]


def cpus_allowed(pid):
    try:
        with open("/proc/%d/task/%d/status" % (pid, pid)) as f:
            for line in f:
                if line.startswith("Cpus_allowed_list:"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def pct(x):
    return "  ?" if x is None else "%3.0f" % (100 * x)


def run_raw(a, ring_rt, tmp):
    s = ring_limit(ring_rt, a.core_cpu, a.nf_cpu, a.warmup, a.raw_seconds,
                   Path(tmp))
    out = (Path(tmp) / "ring-rt.log").read_text()
    return s.mpps, list(s.shares.values()), out


def nf_argvs(a, build, d, prefix):
    """xnv-core and xnv-forwarder command lines of one 1-NF run in d."""
    cfg = os.path.join(d, "bench.ini")
    with open(cfg, "w") as f:
        f.write(CONFIG)
    sock = os.path.join(d, "xnv.sock")
    core = [os.path.join(build, "bin", "xnv-core"), "-l", str(a.core_cpu),
            *a.eal_mem.split(), "--file-prefix", prefix,
            "--", "--config", cfg, "--socket", sock,
            "--duration", str(a.nf_seconds),
            "--stats-json", os.path.join(d, "stats.json")]
    nf = ["taskset", "-c", str(a.nf_cpu),
          os.path.join(build, "bin", "xnv-forwarder"), "--service", "fwd",
          "--socket", sock, "--busy-poll"]
    return core, nf, sock


def run_pair(a, build, d, prefix):
    """Start xnv-core, then the forwarder once the core's socket is there;
    wait until both have ended.  Returns the CPU shares of both sides and
    the core's exit status.  Both are stopped by PID whatever happens."""
    core_cmd, nf_cmd, sock = nf_argvs(a, build, d, prefix)
    procs = []
    try:
        core = Proc("core", core_cmd, d)
        procs.append(core)
        wait_until(lambda: os.path.exists(sock), 15,
                   "xnv-core to open %s" % sock, procs=[core], interval=0.01)
        t_sock = time.monotonic()
        nf = Proc("nf", nf_cmd, d)
        procs.append(nf)
        # CPU share of both sides from 0.3 s after the NF started to
        # 0.3 s before the core's --duration ends (its clock started
        # before the socket appeared).
        time.sleep(0.3)
        pins = (cpus_allowed(core.pid), cpus_allowed(nf.pid))
        if pins != (str(a.core_cpu), str(a.nf_cpu)):
            say("bench-smoke: warning: core / NF main threads may run "
                "on CPUs %s / %s, expected %d / %d"
                % (pins + (a.core_cpu, a.nf_cpu)))
        share = shares([core.pid, nf.pid], time.monotonic(),
                       t_sock + a.nf_seconds - 0.3)
        limit = a.nf_seconds + 15
        try:
            core.popen.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            raise BenchError("xnv-core did not stop within %.0f s "
                             "(--duration %s):\n%s"
                             % (limit, a.nf_seconds, tail(core.log_path)))
        # The forwarder exits by itself once the core detached it.
        try:
            nf.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            raise BenchError("xnv-forwarder did not exit after the "
                             "core stopped:\n%s" % tail(nf.log_path))
        return share, core.returncode
    finally:
        stop_all(procs)
        # Normally removed by xnv-core itself; not if it was killed.
        for run_dir in ("/var/run/dpdk", os.environ.get(
                "XDG_RUNTIME_DIR", "/tmp") + "/dpdk"):
            try:
                os.rmdir(os.path.join(run_dir, prefix))
            except OSError:
                pass


def nf_result(a, d):
    """Mpps, seconds of traffic and packets of the 1-NF run in d, from
    its --stats-json; BenchError if nothing went through the NF."""
    core_log, nf_log = os.path.join(d, "core.log"), os.path.join(d, "nf.log")
    stats = os.path.join(d, "stats.json")
    try:
        with open(stats) as f:
            st = json.load(f)
    except (OSError, ValueError) as e:
        raise BenchError("cannot read %s: %s\n%s" % (stats, e, tail(core_log)))
    ports = {p["name"]: p for p in st["ports"]}
    tx, secs = ports["out"]["tx"], st["traffic_s"]
    nfs = st["nfs"]
    if secs <= 0 or tx == 0 or len(nfs) != 1:
        raise BenchError("no traffic went through the NF (tx %d over %.3f s, "
                         "%d NFs):\ncore:\n%s\nNF:\n%s"
                         % (tx, secs, len(nfs), tail(core_log), tail(nf_log)))
    if secs < 0.5 * a.nf_seconds:
        say("bench-smoke: warning: only %.2f s of traffic out of %s s "
            "(slow NF attach?)" % (secs, a.nf_seconds))
    # Buffers an NF held at detach ("reclaimed") and packets parked at
    # shutdown are the end of the run, not losses of the data path.
    lost = sum(v for k, v in st["drops"].items()
               if k not in ("reclaimed", "shutdown"))
    if lost:
        say("bench-smoke: warning: core dropped %d packets: %s"
            % (lost, st["drops"]))
    return tx / secs / 1e6, secs, tx


def run_nf(a, build, tmp, rep):
    """One 1-NF run: (Mpps, seconds of traffic, packets, CPU shares)."""
    d = os.path.join(tmp, "nf%d" % rep)
    os.mkdir(d)
    # A file prefix of our own: xnv-core rmdir()s its EAL runtime directory
    # at exit, and with the default prefix ("rte") that can pull the
    # directory from under another xnv-core starting at the same moment
    # (EAL init then fails in telemetry).
    prefix = "xnv-bench-%d-%d" % (os.getpid(), rep)
    share, rc = run_pair(a, build, d, prefix)
    if rc != 0:
        raise BenchError("xnv-core failed (exit %d):\n%s"
                         % (rc, tail(os.path.join(d, "core.log"))))
    mpps, secs, tx = nf_result(a, d)
    return mpps, secs, tx, share


def spread(v):
    return statistics.median(v), min(v), max(v)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--raw-seconds", type=float, default=3.0)
    ap.add_argument("--warmup", type=float, default=0.5)
    ap.add_argument("--nf-seconds", type=float, default=3.5,
                    help="xnv-core --duration (traffic starts when the NF "
                    "has attached)")
    ap.add_argument("--eal-mem", default="--no-huge -m 512 --no-shconf",
                    help="EAL memory options for xnv-core (default: what it "
                    "picks itself without a hugetlbfs mount; fixed so that a "
                    "hugetlbfs mounted by someone else cannot change the "
                    "mode between runs)")
    ap.add_argument("--core-cpu", type=int, default=0)
    ap.add_argument("--nf-cpu", type=int, default=1)
    ap.add_argument("--min-share", type=float, default=0.9,
                    help="CPU share below which a run counts as disturbed")
    ap.add_argument("--retries", type=int, default=2,
                    help="repeats of a disturbed run")
    ap.add_argument("--budget", type=float, default=90,
                    help="no repeat starts after this many seconds")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary directory (configs, logs, JSON)")
    return ap.parse_args()


def check_setup(a, build):
    """BenchError unless the binaries, taskset, the CPUs and the options
    allow a run."""
    for exe in (os.path.join(build, "bench", "ring-rt"),
                os.path.join(build, "bin", "xnv-core"),
                os.path.join(build, "bin", "xnv-forwarder")):
        if not os.access(exe, os.X_OK):
            raise BenchError("%s missing: run make first" % exe)
    if shutil.which("taskset") is None:
        raise BenchError("taskset (util-linux) is needed to pin the NF")
    cpus = os.sched_getaffinity(0)
    if a.core_cpu == a.nf_cpu or not {a.core_cpu, a.nf_cpu} <= cpus:
        raise BenchError("needs two distinct usable CPUs %d and %d (have %s)"
                         % (a.core_cpu, a.nf_cpu, sorted(cpus)))
    if (a.reps < 1 or a.raw_seconds <= 0 or a.warmup < 0 or
            a.nf_seconds < 1.5 or a.retries < 0):
        raise BenchError("need --reps >= 1, --raw-seconds > 0, --warmup >= 0,"
                         " --nf-seconds >= 1.5, --retries >= 0")


def one_run(a, kind, build, tmp, first, n_nf):
    """One raw or 1-NF run: (value, CPU shares, description, extra)."""
    if kind == "raw":
        v, sh, out = run_raw(a, os.path.join(build, "bench", "ring-rt"), tmp)
        if first:
            say("  " + out.splitlines()[0])
        return v, sh, "raw ring round trip  %8.3f Mdesc/s" % v, ""
    v, secs, tx, sh = run_nf(a, build, tmp, n_nf)
    return (v, sh, "xnv-core + 1 NF      %8.3f Mpps    " % v,
            "  (%d pkts in %.3f s of traffic)" % (tx, secs))


def run_all(a, build, tmp):
    """--reps pairs of runs, raw and 1-NF interleaved; a disturbed run is
    repeated (--retries, within --budget).  {kind: [(value, clean)]}."""
    t_begin = time.monotonic()
    est = {"raw": a.raw_seconds + a.warmup + 1, "nf": a.nf_seconds + 2}
    runs = {"raw": [], "nf": []}	# (value, clean)
    n_nf = 0
    for rep in range(1, a.reps + 1):
        for kind in ("raw", "nf"):
            for attempt in range(a.retries + 1):
                n_nf += kind == "nf"
                v, sh, what, extra = one_run(
                    a, kind, build, tmp, not runs["raw"] and attempt == 0, n_nf)
                clean = all(x is not None and x >= a.min_share for x in sh)
                last = (attempt == a.retries or time.monotonic() +
                        est[kind] > t_begin + a.budget)
                say("  run %d/%d  %s  CPU share %s %% / %s %%%s%s"
                    % (rep, a.reps, what, pct(sh[0]), pct(sh[1]), extra,
                       "" if clean else "  DISTURBED" +
                       ("" if last else ", repeating")))
                if clean or last:
                    runs[kind].append((v, clean))
                    break
    return runs


def summary(a, runs):
    """The table of medians and the closing ratio line."""
    raw = [v for v, _ in runs["raw"]]
    nf = [v for v, _ in runs["nf"]]
    bad = sum(not c for k in runs for _, c in runs[k])
    rm, rlo, rhi = spread(raw)
    nm, nlo, nhi = spread(nf)
    say("")
    say("  %-34s %10s %20s" % ("path (CPU %d + CPU %d)" % (a.core_cpu,
                                                          a.nf_cpu),
                                "median", "min .. max"))
    say("  %-34s %10.3f %9.3f .. %-9.3f" % ("raw ring round trip [Mdesc/s]",
                                             rm, rlo, rhi))
    say("  %-34s %10.3f %9.3f .. %-9.3f" % ("xnv-core + 1 forwarder [Mpps]",
                                             nm, nlo, nhi))
    pairs = sorted(100 * n / r for n, r in zip(nf, raw))
    say("  %-34s %10.0f %9.0f .. %-9.0f" % ("ratio within each pair [%]",
                                             statistics.median(pairs),
                                             pairs[0], pairs[-1]))
    if bad:
        say("  warning: %d of these runs were disturbed (another process on "
            "CPU %d or %d): the numbers are noisy" % (bad, a.core_cpu,
                                                     a.nf_cpu))
    say("bench-smoke: 1-NF/raw = %d %%" % int(100.0 * nm / rm + 0.5))


def main():
    a = parse_args()
    build = os.path.abspath(a.build)
    check_setup(a, build)
    tmp = tempfile.mkdtemp(prefix="xnv-bench-")
    say("bench-smoke: %d runs of each, interleaved; core side on CPU %d, NF "
        "side on CPU %d; work dir %s" % (a.reps, a.core_cpu, a.nf_cpu, tmp))
    say("  CPU share = time the core / NF side was on its CPU during the "
        "measured window;\n  a run below %.0f %% was disturbed by other "
        "load and is repeated (at most %d times, within %.0f s)."
        % (100 * a.min_share, a.retries, a.budget))
    ok = False
    try:
        runs = run_all(a, build, tmp)
        ok = True
    finally:
        if a.keep or not ok:
            say("bench-smoke: logs kept in %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    summary(a, runs)
    return 0


if __name__ == "__main__":
    run_main(main, "bench-smoke")
