# SPDX-License-Identifier: BSD-3-Clause
"""An NF's own counters, live (xnv_nf_stat_register in <xnv/nf.h>, the
stats area of its ring region in gntshare/proto.h): each of firewall,
dpi, lb and nat, run with its bench.args on the benchmark's packets and
garbage, shows its counters through `xnv-ctl nf stats` while it runs
(growing while packets pass), the same values it prints at exit; and a
hostile NF scribbling over its stats area (names without NUL, escape
bytes, quotes, repeats, random bytes, huge values, a random header) leaves
the core running and its replies, `nf stats` and `metrics`, well-formed,
showing the valid slots alone."""
import json
import re
import sys

import pytest
from prometheus_client.parser import text_string_to_metric_families

from harness import BUILD, CTL_BIN, REPO, wait_until, write_config
from nfrun import core_section, nf_bin, parse_counters
from test_nf_garbage import bench_packets, garbage
from traffic import write_pcap

TIMEOUT = ("--timeout", "30")
HOSTILE_BIN = BUILD / "tests" / "tools" / "xnv-hostile"


def ctl(env, *args):
    r = env.run([CTL_BIN, "--socket", env.socket, *TIMEOUT, *args], timeout=120)
    assert r.returncode == 0 and r.stderr == "", (args, r.returncode, r.stderr)
    return r.stdout


def nf_stats(env, name):
    return json.loads(ctl(env, "nf", "stats", name, "--json"))


@pytest.mark.parametrize("nf", ["firewall", "dpi", "lb", "nat"])
def test_nf_counters_live_match_the_exit_print(xnv, nf):
    args = (REPO / "examples" / nf / "bench.args").read_text().split()
    args = [str(REPO / a) if a.startswith("examples/") else a for a in args]
    pkts = bench_packets(300) + garbage(300)
    cfg = write_config(xnv.path("s.ini"), [
        core_section(xnv),
        ("group g", {"pool_bufs": 2048}),
        ("port out", {"dev": "net_null0", "group": "g"}),
        ("port in", {"dev": f"net_pcap1,rx_pcap={write_pcap(xnv.path('in.pcap'), pkts)}",
                     "group": "g", "chain": f"{nf} -> out", "rx_rate": 1000}),
        (f"service {nf}", {}),
    ])
    core = xnv.start_core(cfg, duration=300)
    core.wait_ready()
    p = xnv.start_nf(nf, "g", f"{nf}-1", binary=nf_bin(nf), extra=("--", *args))
    core.wait_attached(p)
    seen = []

    def all_in():
        seen.append(nf_stats(xnv, f"{nf}-1")["stats"]["packets"])
        return seen[-1] == len(pkts)
    wait_until(all_in, 60, f"{nf} counting {len(pkts)} packets")
    assert seen == sorted(seen), seen           # only grows
    live = nf_stats(xnv, f"{nf}-1")
    assert live["state"] == "attached" and live["stats_invalid"] == 0, live
    # the table says the same
    rows = dict(ln.split() for ln in ctl(xnv, "nf", "stats", f"{nf}-1").splitlines()[1:])
    assert {k: int(v) for k, v in rows.items()} == live["stats"]
    p.stop()
    assert p.returncode == 0, p.stderr()
    out = p.stdout()
    printed = parse_counters(out)
    for m in re.finditer(r"^firewall: rule (\d+) hits (\d+) ", out, re.M):
        printed[f"rule{m.group(1)}_hits"] = int(m.group(2))
    assert live["stats"], out
    for k, v in live["stats"].items():
        assert printed[k] == v, (k, v, printed)
    # every counter the NF prints is published (firewall: rules while slots last)
    assert {k for k in printed if not k.startswith("rule")} <= set(live["stats"]), \
        (printed, live)


def test_hostile_stats_area_leaves_the_core_sound(xnv):
    if not HOSTILE_BIN.exists():
        pytest.skip(f"{HOSTILE_BIN} not built (make check-integration builds it)")
    cfg = write_config(xnv.path("h.ini"), [
        core_section(xnv),
        ("group g", {"pool_bufs": 1024}),
        ("port in", {"dev": "net_null0", "group": "g"}),
        ("service evil", {}),
    ])
    core = xnv.start_core(cfg, duration=300)
    core.wait_ready()
    h = xnv.start("hostile", [HOSTILE_BIN, "--socket", xnv.socket, "--service", "evil",
                              "--group", "g", "--name", "evil-1", "--stats", "--wait", "600"])
    h.wait_output(r"^ATTACH ", 30, stream="out")
    values = set()
    for _ in range(20):
        s = nf_stats(xnv, "evil-1")
        assert set(s["stats"]) == {"good", "good2"}, s
        assert s["stats"]["good"] == 2**64 - 1
        assert s["stats_invalid"] == 13, s
        values.add(s["stats"]["good2"])
        # the other views stay well-formed too
        info = json.loads(ctl(xnv, "nfs", "--json"))
        assert [n["name"] for n in info] == ["evil-1"]
    assert len(values) > 1          # read afresh each time
    r = xnv.run([sys.executable, CTL_BIN, "--socket", xnv.socket, *TIMEOUT, "metrics"],
                timeout=120)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    stats = {s.labels["stat"]: s.value for f in text_string_to_metric_families(r.stdout)
             for s in f.samples if s.name == "xnv_nf_stat_total"}
    assert set(stats) == {"good", "good2"} and stats["good"] == float(2**64 - 1), stats
    assert core.alive() and "quarantin" not in core.log()
    h.stop()
    # gone: no stats area any more, the reply still whole
    wait_until(lambda: nf_stats(xnv, "evil-1")["state"] != "attached", 30, "evil-1 gone")
