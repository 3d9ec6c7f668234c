#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""make soak: mixed traffic with NF churn for SOAK_SECONDS (default 600),
then: no buffer leaked, core memory flat.  Not part of make check.

Traffic (host mode, core on CPU 0, NFs on CPU 1):
  - null port `in` -> service fwd (2 replicas, group blue) -> null port `out`
  - generator NF (group red, --alloc) -> service sink (group blue): every
    packet crosses groups (copied), and sink counts it
Churn, in turn every CHURN seconds: kill -9 a replica of fwd and start it
again; SIGTERM the sink and start it again; kill -9 the generator and start
it again.  Every 10 s: counters and the core's RSS.  At the end, with the
traffic stopped (generator gone, fwd replicas gone so null traffic is
dropped at once): every pool buffer free, and RSS growth after warm-up below
SOAK_RSS_MB (default 8).  Prints one line per sample and a verdict line
"soak: PASS ..." / "soak: FAIL ..."; exit 1 on FAIL.
"""
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from harness import BUILD, XnvEnv, write_config  # noqa: E402

GEN = BUILD / "bin" / "xnv-generator"
SINK = BUILD / "bin" / "xnv-sink"


def rss_kb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def soak_config(cfg):
    return write_config(cfg, [
        ("core", {"ring_size": 256, "stall_timeout_ms": 2000}),
        ("group blue", {"pool_bufs": 8192}),
        ("group red", {"pool_bufs": 2048, "may_send_to": "blue"}),  # gen -> sink
        ("port in", {"dev": "net_null0", "group": "blue",
                     "chain": "fwd -> out", "rx_start": "immediately"}),
        ("port out", {"dev": "net_null1", "group": "blue"}),
        ("service fwd", {"id": 1}), ("service sink", {"id": 2}),
        ("service gen", {"id": 3}),
    ])


class Nfs:
    """The churned NFs, all on CPU 1: fwd0 and fwd1 (replicas of fwd),
    sink, gen (the generator, red -> service sink)."""

    def __init__(self, env):
        self.env, self.tasks, self.procs = env, ["taskset", "-c", "1"], {}

    def start(self, name):
        e, sock = self.env, self.env.socket
        if name.startswith("fwd"):
            argv = [BUILD / "bin" / "xnv-forwarder", "--service", "fwd",
                    "--group", "blue", "--name", name, "--socket", sock]
        elif name == "sink":
            argv = [SINK, "--service", "sink", "--group", "blue", "--name",
                    "sink", "--socket", sock]
        else:
            argv = [GEN, "--service", "gen", "--group", "red", "--name", "gen",
                    "--alloc", "64", "--socket", sock, "--", "--to-service",
                    "2", "--rate", "20000", "--flows", "64",
                    "--count", "1000000000"]
        self.procs[name] = e.start(name, [*self.tasks, *argv])

    def churn(self, turn):
        """Turn 0, 3, ...: kill -9 a fwd replica; 1, 4, ...: SIGTERM the
        sink; 2, 5, ...: kill -9 the generator.  Each is started again."""
        kind = turn % 3
        name = ("fwd%d" % ((turn + 1) // 3 % 2), "sink", "gen")[kind]
        if kind == 1:
            self.procs[name].stop()
        else:
            self.procs[name].signal(signal.SIGKILL)
            self.procs[name].wait(5)
        self.start(name)

    def stop(self):
        for p in self.procs.values():
            p.stop()


def sample_line(t, rss, s, turns):
    return ("soak: t=%4.0fs rss=%d kB out=%d blue free %d/%d red free %d/%d "
            "restarts=%d" % (t, rss, s["ports"]["out"]["tx"],
                             s["groups"]["blue"]["free"],
                             s["groups"]["blue"]["pool_bufs"],
                             s["groups"]["red"]["free"],
                             s["groups"]["red"]["pool_bufs"], turns))


def churn_and_sample(core, nfs, seconds, churn):
    """Churn every `churn` s and sample every 10 s for `seconds`; returns
    (t0, churns, RSS after 30 s or None, RSS samples)."""
    t0 = time.time()
    next_churn, next_sample, turn, rss0, samples = t0 + churn, t0, 0, None, []
    while time.time() - t0 < seconds:
        now = time.time()
        if now >= next_churn:
            next_churn = now + churn
            nfs.churn(turn)
            turn += 1
        if now >= next_sample:
            next_sample = now + 10
            s = core.snapshot(timeout=20)
            rss = rss_kb(core.pid)
            if rss0 is None and now - t0 >= 30:
                rss0 = rss
            samples.append(rss)
            print(sample_line(now - t0, rss, s, turn), flush=True)
        time.sleep(0.2)
    return t0, turn, rss0, samples


def verdict(core, t0, turn, rss0, samples, rss_limit):
    """With the traffic stopped: pools full and RSS flat?  Prints the
    verdict line; True on PASS."""
    time.sleep(2)
    s = core.snapshot(timeout=20)
    rss = rss_kb(core.pid)
    growth = (rss - (rss0 or samples[0])) / 1024
    full = all(g["free"] == g["pool_bufs"] for g in s["groups"].values())
    ok = full and growth <= rss_limit and core.alive()
    print("soak: %s after %.0f s, %d restarts: pools %s, core RSS %d kB "
          "(%+.1f MiB since 30 s; limit %.0f), core drops %s" % (
              "PASS" if ok else "FAIL", time.time() - t0, turn,
              " ".join("%s %d/%d" % (k, g["free"], g["pool_bufs"])
                       for k, g in s["groups"].items()),
              rss, growth, rss_limit, s["drops"]))
    return ok


def main():
    seconds = float(os.environ.get("SOAK_SECONDS", "600"))
    churn = float(os.environ.get("SOAK_CHURN", "3"))
    rss_limit = float(os.environ.get("SOAK_RSS_MB", "8"))
    logdir = Path(tempfile.mkdtemp(prefix="xnv-soak-"))
    env = XnvEnv(logdir, None)
    cfg = soak_config(logdir / "soak.ini")
    ok = False
    try:
        core = env.start_core(cfg, duration=seconds + 120, eal=("-l", "0"))
        core.wait_ready()
        nfs = Nfs(env)
        for name in ("fwd0", "fwd1", "sink"):
            nfs.start(name)
        time.sleep(1)
        nfs.start("gen")
        t0, turn, rss0, samples = churn_and_sample(core, nfs, seconds, churn)
        nfs.stop()
        ok = verdict(core, t0, turn, rss0, samples, rss_limit)
    finally:
        env.close()     # every process it started, by PID
        print("soak: logs in %s" % logdir)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
