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


def main():
    seconds = float(os.environ.get("SOAK_SECONDS", "600"))
    churn = float(os.environ.get("SOAK_CHURN", "3"))
    rss_limit = float(os.environ.get("SOAK_RSS_MB", "8"))
    logdir = Path(tempfile.mkdtemp(prefix="xnv-soak-"))
    env = XnvEnv(logdir, None)
    cfg = logdir / "soak.ini"
    write_config(cfg, [
        ("core", {"ring_size": 256, "stall_timeout_ms": 2000}),
        ("group blue", {"pool_bufs": 8192}),
        ("group red", {"pool_bufs": 2048}),
        ("port in", {"dev": "net_null0", "group": "blue",
                     "chain": "fwd -> out", "rx_start": "immediately"}),
        ("port out", {"dev": "net_null1", "group": "blue"}),
        ("service fwd", {"id": 1}), ("service sink", {"id": 2}),
        ("service gen", {"id": 3}),
    ])
    ok = False
    try:
        core = env.start_core(cfg, duration=seconds + 120, eal=("-l", "0"))
        core.wait_ready()
        tasks = ["taskset", "-c", "1"]

        def fwd(i):
            return env.start("fwd%d" % i, [*tasks, BUILD / "bin" / "xnv-forwarder",
                             "--service", "fwd", "--group", "blue", "--name",
                             "fwd%d" % i, "--socket", env.socket])

        def sink():
            return env.start("sink", [*tasks, SINK, "--service", "sink",
                             "--group", "blue", "--name", "sink", "--socket",
                             env.socket])

        def gen():
            return env.start("gen", [*tasks, GEN, "--service", "gen", "--group",
                             "red", "--name", "gen", "--alloc", "64", "--socket",
                             env.socket, "--", "--to-service", "2",
                             "--rate", "20000", "--flows", "64",
                             "--count", "1000000000"])

        procs = {"fwd0": fwd(0), "fwd1": fwd(1), "sink": sink()}
        time.sleep(1)
        procs["gen"] = gen()
        t0 = time.time()
        next_churn, next_sample, turn, rss0, samples = t0 + churn, t0, 0, None, []
        while time.time() - t0 < seconds:
            now = time.time()
            if now >= next_churn:
                next_churn = now + churn
                kind = turn % 3
                turn += 1
                if kind == 0:
                    name = "fwd%d" % (turn // 3 % 2)
                    procs[name].signal(signal.SIGKILL)
                    procs[name].wait(5)
                    procs[name] = fwd(int(name[-1]))
                elif kind == 1:
                    procs["sink"].stop()
                    procs["sink"] = sink()
                else:
                    procs["gen"].signal(signal.SIGKILL)
                    procs["gen"].wait(5)
                    procs["gen"] = gen()
            if now >= next_sample:
                next_sample = now + 10
                s = core.snapshot(timeout=20)
                rss = rss_kb(core.pid)
                if rss0 is None and now - t0 >= 30:
                    rss0 = rss
                samples.append(rss)
                print("soak: t=%4.0fs rss=%d kB out=%d blue free %d/%d red "
                      "free %d/%d restarts=%d" % (
                          now - t0, rss, s["ports"]["out"]["tx"],
                          s["groups"]["blue"]["free"],
                          s["groups"]["blue"]["pool_bufs"],
                          s["groups"]["red"]["free"],
                          s["groups"]["red"]["pool_bufs"], turn), flush=True)
            time.sleep(0.2)
        for p in procs.values():
            p.stop()
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
    finally:
        env.close()
        print("soak: logs in %s" % logdir)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
