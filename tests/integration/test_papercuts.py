# SPDX-License-Identifier: BSD-3-Clause
"""Small things a newcomer or an operator trips over, each shown working:

- `make help` names every target the Makefile declares (.PHONY);
- the sample NF in <xnv/nf.h>'s opening comment builds as shown and exits
  0 on --help and --version, 2 on a bad option;
- `--reattach` waits for a core that is not running yet, and attaches
  once one starts;
- `make demo` puts back the hugepage count it raised;
- the router's and the dpi's sample files do something with the traffic
  the repository ships (scripts/gen_pcap.py): routed out of the `out`
  port, alerts raised.
"""
import os
import re
import shutil
import subprocess

import sys

import pytest

from harness import BUILD, REPO, scaled, write_config
from nfrun import NfSpec, run_nfs

sys.path.insert(0, str(REPO / "scripts"))
import gen_pcap  # noqa: E402

HEADER = REPO / "domu-lib" / "include" / "xnv" / "nf.h"


def test_make_help_names_every_target():
    db = subprocess.run(["make", "-C", REPO, "-pnq", "help"], capture_output=True,
                        text=True, timeout=scaled(60)).stdout
    phony = re.search(r"^\.PHONY: (.*)$", db, re.M).group(1).split()
    assert len(phony) >= 15, phony
    r = subprocess.run(["make", "-s", "-C", REPO, "help"], capture_output=True,
                       text=True, timeout=scaled(60))
    assert r.returncode == 0, r.stderr
    missing = [t for t in phony
               if not re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", r.stdout)]
    assert missing == [], r.stdout
    assert "SAN=1" in r.stdout
    # no line cut in the middle: every line is whole text of the header
    assert not r.stdout.rstrip().endswith(":"), r.stdout


def header_example():
    """The @code block of nf.h's opening comment, as C."""
    text = HEADER.read_text()
    block = text[text.index("@code") + len("@code"):text.index("@endcode")]
    return "\n".join(re.sub(r"^ \*( |$)", "", ln) for ln in block.splitlines()) + "\n"


def test_header_example_builds_and_exits_0_on_help(tmp_path):
    if shutil.which("pkg-config") is None:
        pytest.skip("no pkg-config")
    src = tmp_path / "my_nf.c"
    src.write_text(header_example())
    env = {**os.environ, "PKG_CONFIG_PATH": str(BUILD / "lib" / "pkgconfig")}
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "--static", "libxnv"],
                           capture_output=True, text=True, env=env, check=True).stdout.split()
    san = ["-fsanitize=address,undefined"] if "san" in BUILD.name else []
    exe = tmp_path / "my_nf"
    r = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", *san,
                        "-o", exe, src, *flags], capture_output=True, text=True,
                       timeout=scaled(120))
    assert r.returncode == 0, r.stderr
    for flag in ("--help", "-h"):
        r = subprocess.run([exe, flag], capture_output=True, text=True, timeout=scaled(20))
        assert r.returncode == 0 and "--service NAME" in r.stdout, r
    r = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=scaled(20))
    assert r.returncode == 0 and r.stdout.startswith("my_nf (XenNetVM) "), r
    r = subprocess.run([exe, "--nosuch"], capture_output=True, text=True, timeout=scaled(20))
    assert r.returncode == 2 and "--nosuch" in r.stderr, r
    r = subprocess.run([exe, "--service", "s", "--socket", tmp_path / "no.sock"],
                       capture_output=True, text=True, timeout=scaled(20))
    assert r.returncode == 1 and "no xnv-core running" in r.stderr, r


def test_reattach_waits_for_the_first_core(xnv):
    """An NF started with --reattach before any core waits (one line),
    then attaches to the core that starts later and forwards."""
    nf = xnv.start_nf("fwd-a", "blue", "early", extra=["--reattach"])
    nf.wait_output(r"^xnv: early: --reattach: waiting for xnv-core at "
                   + re.escape(str(xnv.socket)) + "$", 10)
    assert nf.alive()
    cfg = write_config(xnv.path("core.ini"), [
        ("group blue", {"pool_bufs": 1024}),
        ("port in", {"dev": "net_null0", "group": "blue", "chain": "fwd-a -> out"}),
        ("port out", {"dev": "net_null1", "group": "blue"}),
        ("service fwd-a", {}),
    ])
    core = xnv.start_core(cfg)
    core.wait_ready()
    nf.wait_output(r"^xnv: early: attached as domain \d+", 20)
    assert "refused" not in nf.stderr(), nf.stderr()
    core.wait_attached(nf, 20)


def test_demo_puts_the_hugepage_count_back(tmp_path):
    """demo.sh raises a hugepage count below 64 for its pool, says so and
    puts it back at exit (here a file stands for nr_hugepages, so the
    machine's own count is left alone)."""
    count = tmp_path / "nr_hugepages"
    count.write_text("8\n")
    env = {**os.environ, "XNV_DEMO_COUNT": "200", "XNV_DEMO_HUGEPAGES": str(count)}
    r = subprocess.run(["bash", REPO / "scripts" / "demo.sh"], capture_output=True,
                       text=True, env=env, timeout=scaled(180))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"demo: {count} 8 -> 64 for the pool (put back at exit)" in r.stdout, r.stdout
    assert f"demo: {count} back to 8" in r.stdout, r.stdout
    assert count.read_text().strip() == "8"
    assert "identical to the input" in r.stdout, r.stdout


def shipped_traffic(n=300):
    return [bytes(p) for p in gen_pcap.make_packets(n, 32, 1)]


def test_router_sample_routes_out_of_the_out_port(xnv):
    """The router README's line (no --next), ports in (0) and out (1):
    every packet of the shipped traffic has a route and leaves by out."""
    sample = REPO / "examples" / "router" / "sample"
    pkts = shipped_traffic()
    run = run_nfs(xnv, pkts, [NfSpec("router", ("--routes", sample / "routes.txt",
                                                "--neigh", sample / "neigh.txt"))])
    assert run.core_rc == 0 and run.nf_rcs == {"router": 0}
    assert len(run.outs[0]) == len(pkts), run.counters
    assert run.counters["router"]["routed"] == len(pkts), run.counters


def test_dpi_sample_rules_match_the_shipped_traffic(xnv, tmp_path):
    """The dpi README's line: the sample's alert rules fire on the shipped
    traffic's HTTP requests (each of the three), and nothing is dropped."""
    rules = REPO / "examples" / "dpi" / "sample" / "rules.txt"
    alerts = tmp_path / "alerts.log"
    pkts = shipped_traffic()
    run = run_nfs(xnv, pkts, [NfSpec("dpi", ("--rules", rules, "--alerts", alerts))])
    assert run.core_rc == 0 and run.nf_rcs == {"dpi": 0}
    c = run.counters["dpi"]
    assert c["matched"] > 0 and c["dropped"] == 0, c
    assert len(run.outs[0]) == len(pkts)
    fired = set(re.findall(r" id=(\d+) ", alerts.read_text()))
    assert fired == {"1001", "1003", "1004"}, alerts.read_text()[:500]
