"""bench/: the report is made from rows alone (ratios, goals, plots), the
example NFs with a bench.args are found, flow-cost measures a rule set and
names a bad rule, core-cost moves packets in both its modes, nf-cost runs
an example NF's own handler (and state) over a pcap, and (opt-in, ~1 min, needs root and dpdk-testpmd:
XNV_BENCH_TEST=1) `bench.py --quick` runs end to end."""
import os
import re
import subprocess
import sys

import pytest

from harness import BUILD, REPO, make_built, scaled

sys.path.insert(0, str(REPO / "bench"))
from xnvbench import report, systems  # noqa: E402


def row(system, mpps, size=64, config="1 NF", chain_len=1, **kw):
    return dict(system=system, config=config, size=size,
                chain_len=chain_len, mpps_median=mpps, mpps_min=mpps * 0.9,
                mpps_max=mpps * 1.1, reps=3, disturbed=0, **kw)


ROWS = [row("limit", 20.0, config="ring-rt"), row("xennetvm", 10.0),
        row("xennetvm", 8.0, size=1518),
        row("xennetvm", 9.0, config="chain of 1"),
        row("xennetvm", 6.0, config="chain of 2", chain_len=2),
        row("xennetvm", 50.0, config="core only", chain_len=0),
        row("xennetvm", 90.0, config="core only, 2 workers", chain_len=0),
        row("port-io", 100.0, config="testpmd net_null -> net_null",
            chain_len=0),
        row("memif-zc", 5.0), row("memif-copy", 2.0),
        row("vhost-user", 2.0), row("vhost-user", 1.0, size=1518),
        row("af_packet", 0.1),
        row("nf:forwarder", 9.5, config="alone"),
        row("nf:forwarder", 6.3, config="after a forwarder", chain_len=2),
        row("nf:router", 7.6, config="alone", handler_ns=27.3),
        row("nf:router", 5.67, config="after a forwarder", chain_len=2),
        dict(system="latency", config="1 NF", size=64, chain_len=1,
             load_pct=50, offered_mpps=1.0, p50_us=2.0, p99_us=4.0,
             p999_us=9.0, max_us=20.0, lost=0,
             cdf_us="0.5 1.0 2.0 2.5 3.0 3.5 4.0 9.0 20.0"),
        dict(system="latency", config="1 NF", size=64, chain_len=1,
             load_pct="unpaced", offered_mpps="", sent_mpps=9.0, p50_us=3.0,
             p99_us=7.0, p999_us=60.0, max_us=900.0, lost=0,
             cdf_us="1.0 2.0 3.0 3.5 4.0 5.0 7.0 60.0 900.0")]


def test_goals_are_ratios_of_the_rows():
    g = {name: (measured, verdict)
         for name, measured, verdict, _ in report.goals(report.Results(ROWS))}
    assert g["XenNetVM 1-NF >= 2.5x memif-zc (64 B)"] == ("2.00x", "MISS")
    assert g["XenNetVM 1-NF >= 3.5x memif-copy (64 B)"] == ("5.00x", "PASS")
    assert g["XenNetVM 1-NF >= 3x vhost-user (64 B)"] == ("5.00x", "PASS")
    assert g["XenNetVM 1-NF >= 50x af_packet (64 B)"] == ("100.00x", "PASS")
    assert g["XenNetVM 1-NF >= 60 % of the raw ring"] == ("50 %", "MISS")
    # 1000/50 - 1000/100 = 10 ns
    assert g["Dom0 work <= 30 ns/packet"] == ("10.0 ns", "PASS")
    assert g["p99 latency through 1 NF at 50 % load <= 5 us"] == \
        ("4.0 us", "PASS")


def test_what_was_not_measured_is_neither_pass_nor_miss():
    rows = [r for r in ROWS if r["system"] != "memif-zc"]
    rows = [r for r in rows if r["system"] not in ("latency", "port-io")]
    g = {n: v for n, _, v, _ in report.goals(report.Results(rows))}
    assert g["XenNetVM 1-NF >= 2.5x memif-zc (64 B)"] == "n/a"
    assert g["Dom0 work <= 30 ns/packet"] == "n/a"
    assert g["p99 latency through 1 NF at 50 % load <= 5 us"] == "n/a"


def test_csv_markdown_and_plots(tmp_path):
    report.write_csv(tmp_path / "results.csv", ROWS)
    res = report.Results(report.read_csv(tmp_path / "results.csv"))
    meta = dict(when="now", machine="m", load_before="1", load_after="2",
                commit="c", mode="x")
    md = report.markdown(res, meta)
    assert "| memif-zc |" in md and "2.00x" in md and "**MISS**" in md
    # each NF against the forwarder's own row in the same position
    # and its handler alone (nf-cost) where measured, through the CSV
    assert "| forwarder | alone | 9.500 | 1.00 | n/a |" in md
    assert "| router | alone | 7.600 | 0.80 | 27.3 |" in md
    assert "| router | after a forwarder | 5.670 | 0.90 | n/a |" in md
    # the core-only path on two lcores against one
    assert "| 2 workers (CPUs A and B) | 90.000 | 1.80x |" in md
    # latency at a load, and unpaced (nothing offered to say)
    assert "| 50 % | 1.000 | n/a | 2.0 | 4.0 | 9.0 | 20.0 | 0 |" in md
    assert "| unpaced | - | 9.000 | 3.0 | 7.0 | 60.0 | 900.0 | 0 |" in md
    made = report.plots(res, tmp_path)
    assert set(made) == {"mpps_vs_size.png", "mpps_vs_chain.png",
                         "latency.png"}
    for png in made:
        assert (tmp_path / png).read_bytes()[:4] == b"\x89PNG"


def test_readme_section_replaced_not_duplicated(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# X\n\n## Build\n\ntext\n")
    res = report.Results(ROWS)
    meta = dict(when="t1", load_before="1", load_after="2")
    report.update_readme(readme, res, meta, ["mpps_vs_size.png"])
    report.update_readme(readme, res, dict(meta, when="t2"), [])
    text = readme.read_text()
    assert text.count("## Benchmarks") == 1 and "t2" in text
    assert "t1" not in text and text.startswith("# X\n\n## Build\n\ntext\n")


def test_median_leaves_out_disturbed_runs_when_it_can():
    from xnvbench.measure import Sample

    def smp(mpps, disturbed):
        return Sample(mpps, 1, 1.0, {}, disturbed)
    r = report.median_row("x", "1 NF", 64, 1, [smp(10, False), smp(2, True),
                                               smp(12, False)])
    assert (r["mpps_median"], r["mpps_min"], r["reps"], r["disturbed"]) == \
        (11, 10, 3, 1)
    r = report.median_row("x", "1 NF", 64, 1, [smp(2, True), smp(4, True)])
    assert (r["mpps_median"], r["disturbed"]) == (3, 2)


def test_single_runs_merge_into_one_row():
    """bench/xen appends one row per run; the report takes their median."""
    runs = [dict(system="netfront", config="1 NF", size=64, chain_len=1,
                 mpps_median=m, reps=1) for m in (0.5, 0.2, 0.3)]
    res = report.Results(runs + [row("xennetvm", 3.0)])
    r = res.get("netfront")
    assert (r["mpps_median"], r["mpps_min"], r["mpps_max"], r["reps"]) == \
        (0.3, 0.2, 0.5, 3)
    assert res.peers == ["netfront"]
    assert "| netfront |" in report.markdown(res, dict(
        when="t", machine="m", load_before="", load_after="", commit="",
        mode=""))


def test_fabric_section_from_rows_and_without_hosts(tmp_path):
    """bench/fabric.py's section: the table, the inter / intra ratio and
    the latency difference from its rows (also through results.csv); a
    run without simulated hosts is one row saying why."""
    import fabric

    def rate(config, m):
        return dict(system="fabric", config=config, size=64, chain_len=3,
                    mpps_median=m, mpps_min=m, mpps_max=m, reps=3, note="n")

    def lat(config, p50, p99):
        return dict(system="fabric", config=config, size=64, chain_len=3,
                    reps=3, p50_us=p50, p99_us=p99, p999_us=p99,
                    max_us=p99)
    rows = [rate("intra-host hop", 2.0), rate("inter-host hop", 0.05),
            lat("latency, intra-host", 200.0, 400.0),
            lat("latency, inter-host", 650.0, 1000.0)]
    report.write_csv(tmp_path / "results.csv", rows)
    for rs in (rows, report.read_csv(tmp_path / "results.csv")):
        md = fabric.markdown(rs)
        assert "| inter-host hop | 0.050 (0.050..0.050) | 650.0 |" in md
        assert "rate: **0.025**" in md and "p50 **450.0 us**" in md
    assert fabric.markdown([row("xennetvm", 1.0)]) == ""
    md = fabric.markdown([fabric.note_row("needs root")])
    assert "Not measured: needs root" in md and "| n/a |" in md


def test_example_nfs_with_bench_args_are_found():
    found = {name: args for name, _, args in
             systems.example_nfs(REPO, BUILD)}
    assert found.get("forwarder") == []


@pytest.mark.skipif(os.environ.get("XNV_BENCH_TEST") != "1",
                    reason="XNV_BENCH_TEST=1 runs bench.py --quick (~1 min)")
def test_quick_bench_runs(tmp_path):
    r = subprocess.run([sys.executable, REPO / "bench" / "bench.py",
                        "--quick", "--build", BUILD, "--out", tmp_path],
                       capture_output=True, text=True, timeout=scaled(600))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (run,) = [p for p in tmp_path.iterdir() if not p.is_symlink()]
    for f in ("results.csv", "results.md", "log.txt", "mpps_vs_size.png"):
        assert (run / f).exists(), f
    assert "## Goals" in (run / "results.md").read_text()


# --------------------------------------------------------------------------
# flow-cost (bench/flow_cost.c): make bench's "classify alone" column

def flow_cost(tmp_path, rules, *extra):
    """Run flow-cost (built by `make` on the plain build) on 64 UDP packets
    of 8 flows with `rules` (lines); (returncode, stdout + stderr)."""
    from traffic import flow_packets, write_pcap
    if BUILD.name != "build":
        pytest.skip("flow-cost is built for the plain build only")
    r = subprocess.run(["make", "-C", str(REPO), "build/bench/flow-cost"],
                       capture_output=True, text=True, timeout=scaled(300))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    pcap = write_pcap(tmp_path / "in.pcap", flow_packets(8, 8))
    (tmp_path / "rules.txt").write_text("".join(l + "\n" for l in rules))
    r = subprocess.run([str(REPO / "build" / "bench" / "flow-cost"), "-l", "0",
                        "--no-pci", "--no-huge", "-m", "128", "--file-prefix",
                        "flow-cost-%d" % os.getpid(), "--log-level=lib.*:error",
                        "--", str(pcap), str(tmp_path / "rules.txt"), *extra],
                       capture_output=True, text=True, timeout=scaled(120))
    return r.returncode, r.stdout + r.stderr


def test_flow_cost_measures_a_rule_set(tmp_path):
    rc, out = flow_cost(tmp_path, ["# a comment", "proto=udp dport=53",
                                   "src=10.0.0.0/8 priority=7"], "20")
    assert rc == 0, out
    assert re.search(r"flow-cost: 2 rules, 64 packets: [0-9.]+ ns per "
                     r"packet \(best of 20 rounds\)", out), out


def test_flow_cost_bad_rule_is_one_line(tmp_path):
    rc, out = flow_cost(tmp_path, ["proto=udp dport=99999"])
    assert rc == 1, out
    assert re.search(r"flow-cost: rule 1: .*dport", out), out


# --------------------------------------------------------------------------
# core-cost (bench/core_cost.c): the core's data path alone, per packet

@pytest.mark.parametrize("mode", ["core", "nf"])
def test_core_cost_moves_packets(mode):
    """Both modes set the core up (an NF attached in-process for `nf`),
    move packets through it, say how many and what each cost, and tear
    everything down (exit 0)."""
    if BUILD.name != "build":
        pytest.skip("core-cost is built for the plain build only")
    r = subprocess.run(["make", "-C", str(REPO), "build/bench/core-cost"],
                       capture_output=True, text=True, timeout=scaled(300))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    r = subprocess.run([str(REPO / "build" / "bench" / "core-cost"), "-l", "0",
                        "--no-huge", "-m", "256", "--file-prefix",
                        "core-cost-%d" % os.getpid(), "--log-level=lib.*:error",
                        "--", mode, "3"],
                       capture_output=True, text=True, timeout=scaled(120))
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    m = re.search(rf"core-cost: {mode}: (\d+) packets \(\d+ with the warm-up\): "
                  r"[0-9.]+ ns per packet \(best of 3 rounds\), [0-9.]+ median", out)
    assert m and int(m.group(1)) > 0, out


# --------------------------------------------------------------------------
# nf-cost-NAME (bench/nf_cost.c): an example NF's handler alone, per packet

def nf_cost(name, tmp_path, nf_args, rounds="5"):
    """nf-cost-NAME (built by make, SAN=1 for the ASan build) on 64 UDP/IPv4 packets of 8 flows
    (10.2.0.x -> 10.200.0.y): (returncode, stdout, stderr)."""
    from traffic import flow_packets, write_pcap
    exe = BUILD / "bench" / f"nf-cost-{name}"
    make_built(exe)		# no DPDK in it: the ASan build too
    pcap = write_pcap(tmp_path / "in.pcap", flow_packets(8, 8))
    r = subprocess.run([str(exe), str(pcap), rounds, "--", *nf_args],
                       capture_output=True, text=True, timeout=scaled(120))
    return r.returncode, r.stdout, r.stderr


def test_nf_cost_runs_the_nfs_own_handler(tmp_path):
    """The nat's handler, its options and its table: 64 packets a round,
    every one translated, one mapping per flow kept across the rounds."""
    rc, out, err = nf_cost("nat", tmp_path, ["--external", "192.0.2.1",
                                            "--internal", "10.0.0.0/8"])
    assert rc == 0, out + err
    assert re.search(r"nf-cost: nat, 64 packets, best of 5 rounds: "
                     r"[0-9.]+ ns per packet", out), out
    assert "nf-cost: nat verdicts: next 64 out 0 drop 0 other 0" in out, out
    assert "nat: out 320\n" in out and "nat: new_mappings 8\n" in out, out


def test_nf_cost_firewall_counts_rule_hits(tmp_path):
    """What the firewall publishes once attached (its rules' hits) is
    stood in for; a rule that denies UDP drops every packet."""
    (tmp_path / "rules.txt").write_text("deny proto udp\n")
    rc, out, err = nf_cost("firewall", tmp_path,
                           ["--rules", str(tmp_path / "rules.txt")])
    assert rc == 0, out + err
    assert "nf-cost: firewall verdicts: next 0 out 0 drop 64 other 0" in out
    assert "firewall: denied 320\n" in out, out


def test_nf_cost_nf_usage_error_is_the_nfs(tmp_path):
    """The NF checks its own options as it would run: nat without
    --external says so, exit 2."""
    rc, out, err = nf_cost("nat", tmp_path, ["--internal", "10.0.0.0/8"])
    assert rc == 2 and "--external" in err, (out, err)
