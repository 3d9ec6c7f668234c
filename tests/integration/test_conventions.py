# SPDX-License-Identifier: BSD-3-Clause
"""Command-line conventions, the same for every binary in build/bin.

- `--version` prints "PROGRAM (XenNetVM) VERSION" on stdout, exit 0; the
  version is the top Makefile's VERSION (the project's one source).
- `-h` and `--help` print a usage naming the program on stdout, exit 0.
- A bogus flag: one line on stderr naming the program, exit 2 (a usage
  error); a runtime error (no core, a missing file) exits 1.
- An NF's own options placed before `--` are refused with "NF options go
  after --"; `-- --help` lists them without a running core.
- Log lines, the core's (EAL's included) and libxnv's, start with their
  UTC time and level, whether stderr is a pipe or a file; usage errors
  are plain lines.

The test and bench tools (every tests/tools/*.c, tests/tools/stall-stderr.py
and bench/*.c: bench/flow_cost.c is build/bench/flow-cost) follow the
same exit codes: `-h` / `--help` print a usage naming the tool on stdout,
exit 0 (after `--` too, where a tool takes EAL or libxnv options first);
a usage error (unknown option, missing argument, bad number) is one line
on stderr naming the tool, exit 2; a runtime error exits 1.  They are
built here with make when missing or stale.

Each run is a plain subprocess with a scaled timeout; only the log test
starts a core (net_null ports, a fraction of a second).
"""
import datetime
import os
import re
import subprocess

import pytest

from harness import BUILD, REPO, make_built, scaled, write_config
from xnv.procs import STAMP

BIN = BUILD / "bin"
VERSION = re.search(r"^VERSION\s*:=\s*(\S+)", (REPO / "Makefile").read_text(),
                    re.M).group(1)
EXAMPLES = re.search(r"^EXAMPLES\s*:=\s*(.+)$",
                     (REPO / "examples" / "build.mk").read_text(), re.M).group(1).split()
PROGRAMS = ["xnv-core", "xnv-ctl", "xnv-xl"] + [f"xnv-{e}" for e in EXAMPLES]
NFS = [f"xnv-{e}" for e in EXAMPLES]
# An option of each NF's own (after --), for "NF options go after --".
NF_OWN = {"xnv-forwarder": None, "xnv-generator": "--count=5", "xnv-sink": "--expect=5",
          "xnv-router": "--next", "xnv-firewall": "--stateful", "xnv-lb": "--vip=10.0.0.1/32",
          "xnv-monitor": "--top=3", "xnv-dpi": "--alerts=a.txt",
          "xnv-nat": "--external=192.0.2.1"}


# The tools: name -> its binary (or script), from the source tree.
TOOLS = {**{c.stem: BUILD / "tests" / "tools" / c.stem
            for c in (REPO / "tests" / "tools").glob("*.c")},
         **{c.stem.replace("_", "-"): BUILD / "bench" / c.stem.replace("_", "-")
            for c in (REPO / "bench").glob("*.c")},
         "stall-stderr": REPO / "tests" / "tools" / "stall-stderr.py"}
# bench/nf_cost.c is built once per example NF (nf-cost-NAME, bench/build.mk);
# their command lines are the same: the firewall's stands for all.
TOOLS["nf-cost"] = BUILD / "bench" / "nf-cost-firewall"
# Tools taking other options first (EAL's, libxnv's): their own after --.
DASHDASH = ["flow-cost", "core-cost", "xnv-testnf"]
# A usage error of each: a bad number, or an option without its argument.
USAGE_ERRORS = {
    "xnv-probe": ["--socket", "/nonexistent/x.sock", "--refs", "many"],
    "xnv-hostile": ["--socket", "/nonexistent/x.sock", "--service", "s",
                    "--group", "g", "--count", "lots"],
    "xnv-bellhostile": ["--socket", "/nonexistent/x.sock", "--service", "s",
                        "--group", "g", "--flood", "--wait", "long"],
    "xnv-testnf": ["--", "--delay-us", "slow"],
    "ring-rt": ["-n", "three"],
    "wake-floor": ["-n", "three"],
    "flow-cost": ["--", "in.pcap", "rules.txt", "many"],
    "core-cost": ["--", "nf", "many"],
    "nf-cost": ["in.pcap", "many"],
    "stall-stderr": ["flag", "--"],
}
# A runtime error of each (no core, no such file, a CPU not there).
NO_CORE = "/nonexistent/xnv.sock"
RUNTIME_ERRORS = {
    "xnv-probe": ["--socket", NO_CORE],
    "xnv-hostile": ["--socket", NO_CORE, "--service", "s", "--group", "g"],
    "xnv-bellhostile": ["--socket", NO_CORE, "--service", "s", "--group", "g",
                        "--flood"],
    "xnv-testnf": ["--service", "s", "--socket", NO_CORE],
    "ring-rt": ["-c", "0", "-f", "4095", "-n", "1", "-d", "0.1", "-w", "0"],
    "wake-floor": ["-a", "0", "-b", "4095", "-n", "1"],
    "flow-cost": ["-l", "0", "--no-pci", "--no-huge", "-m", "128",
                  "--file-prefix", f"conv-{os.getpid()}",
                  "--log-level=lib.*:error", "--", "/nonexistent.pcap", "r.txt"],
    "core-cost": ["-l", "4095", "--no-huge", "-m", "128",
                  "--file-prefix", f"conv-{os.getpid()}", "--", "core"],
    "nf-cost": ["/nonexistent.pcap", "--", "--rules",
                str(REPO / "examples" / "firewall" / "sample" / "rules.txt")],
    "stall-stderr": ["flag", "--", "/nonexistent/program"],
}


def run(*argv, **kw):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                          timeout=scaled(30), **kw)


def test_every_binary_is_covered():
    """Nothing in build/bin is left out of the lists below (tests' tools
    are built elsewhere)."""
    assert sorted(p.name for p in BIN.iterdir()) == sorted(PROGRAMS)
    assert set(NF_OWN) == set(NFS)


@pytest.mark.parametrize("prog", PROGRAMS)
def test_version(prog):
    r = run(BIN / prog, "--version")
    assert (r.returncode, r.stdout, r.stderr) == (0, f"{prog} (XenNetVM) {VERSION}\n", "")


@pytest.mark.parametrize("flag", ["-h", "--help"])
@pytest.mark.parametrize("prog", PROGRAMS)
def test_help(prog, flag):
    r = run(BIN / prog, flag)
    assert r.returncode == 0, r.stderr
    assert re.search(rf"usage: \S*{prog}\b", r.stdout), r.stdout


@pytest.mark.parametrize("prog", PROGRAMS)
def test_bogus_flag_is_a_usage_error(prog):
    r = run(BIN / prog, "--bogus-flag")
    assert r.returncode == 2, r
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and prog in lines[0], r.stderr


@pytest.mark.parametrize("prog", NFS)
def test_nf_own_options_before_dashdash(prog):
    """An NF option given among libxnv's: said where it goes, exit 2, no
    core asked (the socket does not exist)."""
    r = run(BIN / prog, "--service", "s", "--socket", "/nonexistent/x.sock",
            NF_OWN[prog] or "--count=5")
    assert r.returncode == 2, r
    assert "NF options go after --" in r.stderr and prog in r.stderr, r.stderr
    assert "xnv-core" not in r.stderr, r.stderr


@pytest.mark.parametrize("prog", [p for p in NFS if NF_OWN[p] is not None])
def test_nf_help_after_dashdash_needs_no_core(prog):
    """`-- --help`: the NF's own options, exit 0, no service, no core."""
    r = run(BIN / prog, "--", "--help")
    assert r.returncode == 0, r
    assert "options" in r.stdout and "xnv-core" not in r.stderr, r


@pytest.mark.parametrize("prog", NFS)
def test_nf_bad_own_option_is_a_usage_error(prog):
    """No core asked: the socket does not exist."""
    r = run(BIN / prog, "--service", "s", "--socket", "/nonexistent/x.sock", "--",
            "--bogus-flag")
    assert r.returncode == 2, r
    assert "--bogus-flag" in r.stderr, r.stderr


def test_runtime_errors_exit_1(tmp_path):
    sock = tmp_path / "none.sock"
    r = run(BIN / "xnv-forwarder", "--service", "s", "--socket", sock)
    assert r.returncode == 1 and "no xnv-core running" in r.stderr, r
    r = run(BIN / "xnv-ctl", "--socket", sock, "--timeout", "1", "info")
    assert r.returncode == 1 and r.stderr.startswith("xnv-ctl: no xnv-core"), r
    r = run(BIN / "xnv-core", "--", "--config", tmp_path / "missing.ini")
    assert r.returncode == 1 and "missing.ini" in r.stderr, r
    r = run(BIN / "xnv-xl", "create", "--dry-run", tmp_path / "missing.cfg")
    assert r.returncode == 1 and r.stderr.startswith("xnv-xl: "), r


@pytest.fixture(scope="session")
def tools():
    """Every tool, built by make where it is missing or stale."""
    make_built(*[p for p in TOOLS.values()
                  if p.suffix != ".py" and p.is_relative_to(REPO)])
    return TOOLS


def test_every_tool_is_covered():
    assert set(TOOLS) == set(USAGE_ERRORS) == set(RUNTIME_ERRORS), TOOLS
    assert set(DASHDASH) <= set(TOOLS)


@pytest.mark.parametrize("tool, flag", [
    (t, f) for t in sorted(TOOLS) for f in ("-h", "--help")] + [
    (t, f"-- {f}") for t in DASHDASH for f in ("-h", "--help")])
def test_tool_help(tools, tool, flag):
    r = run(tools[tool], *flag.split())
    assert (r.returncode, r.stderr) == (0, ""), r
    assert re.search(rf"usage: \S*{tool}\b", r.stdout), r.stdout


@pytest.mark.parametrize("argv", [["--bogus-flag"], "usage-error"],
                         ids=["bogus-flag", "bad-value"])
@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_tool_usage_error(tools, tool, argv):
    r = run(tools[tool], *(USAGE_ERRORS[tool] if argv == "usage-error" else argv))
    assert (r.returncode, r.stdout) == (2, ""), r
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and tool in lines[0], r.stderr


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_tool_runtime_error_exits_1(tools, tool):
    if tool in ("flow-cost", "core-cost") and BUILD.name != "build":
        pytest.skip(f"{tool} starts DPDK: the plain build only (test_bench.py)")
    r = run(tools[tool], *RUNTIME_ERRORS[tool])
    assert r.returncode == 1, r
    # said on stderr (xnv-probe reports on stdout)
    assert r.stderr.strip() or "RESULT FAIL" in r.stdout, r


def test_libxnv_reports_the_same_version():
    """libxnv's xnv_version() is the NFs' --version (checked above) and
    libxnv.pc's Version: one source."""
    pc = (BUILD / "lib" / "pkgconfig" / "libxnv.pc").read_text()
    assert re.search(rf"^Version: {re.escape(VERSION)}$", pc, re.M), pc


def assert_stamped(text, who):
    """Every line starts with a stamp of about now; `who` speaks in one."""
    lines = text.splitlines()
    assert lines and all(STAMP.match(ln) for ln in lines), \
        [ln for ln in lines if not STAMP.match(ln)][:5]
    now = datetime.datetime.now(datetime.timezone.utc)
    for ln in lines:
        t = datetime.datetime.strptime(ln[:23], "%Y-%m-%dT%H:%M:%S.%f").replace(
            tzinfo=datetime.timezone.utc)
        assert abs((now - t).total_seconds()) < scaled(600), ln
    assert any(re.match(rf"\S+ [A-Z]+ {who}: ", ln) for ln in lines), lines[:5]


@pytest.mark.parametrize("stderr_to", ["pipe", "file"])
def test_log_lines_carry_time_and_level(tmp_path, stderr_to):
    cfg = write_config(tmp_path / "c.ini", [
        ("core", {"socket": tmp_path / "s.sock"}),
        ("group blue", {"pool_bufs": 1024}),
        ("port in", {"dev": "net_null0", "group": "blue"}),
    ])
    argv = [BIN / "xnv-core", "-l", "0", "--", "--config", cfg, "--duration", "0.2"]
    if stderr_to == "pipe":
        r = run(*argv)
        err = r.stderr
    else:
        with open(tmp_path / "core.err", "w") as f:
            r = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE,
                               stderr=f, text=True, timeout=scaled(30))
        err = (tmp_path / "core.err").read_text()
    assert r.returncode == 0, err
    assert_stamped(err, "EAL")
    assert re.search(r"^\S+ INFO xnv-core: port 0 in: net_null0", err, re.M), err
    # libxnv: a runtime error is a log line (ERROR), a usage error is not
    r = run(BIN / "xnv-forwarder", "--service", "s", "--socket", tmp_path / "none.sock")
    assert_stamped(r.stderr, "xnv")
    assert re.match(r"\S+ ERROR xnv: s-\d+: no xnv-core running", r.stderr), r.stderr
    r = run(BIN / "xnv-forwarder", "--alloc", "x")
    assert r.returncode == 2 and r.stderr.startswith("xnv: --alloc x: "), r.stderr
