# SPDX-License-Identifier: BSD-3-Clause
"""xnv-ctl's command line, against a real core (ctlenv.py's scenario): bad
input, to the commands and to flow add / del / clear / reload / list, is
one line on stderr, exit 1 (the core refused) or 2 (usage), and changes
nothing; every command's --help."""
import re

import pytest

from ctlenv import added, ctl, no_flows  # noqa: F401 (fixtures)
from harness import CTL_BIN


# --------------------------------------------------------------------------
# bad input: one line on stderr, exit != 0, nothing changed

BAD = [
    (["bogus"], 2, r"xnv-ctl: argument COMMAND: invalid choice: 'bogus' .*"),
    ([], 2, r"xnv-ctl: the following arguments are required: COMMAND .*"),
    (["flow"], 2, r"xnv-ctl flow: the following arguments are required: .*"),
    (["chain", "set", "nosuch", "fwd-b -> out"], 1, r"xnv-ctl: no port named 'nosuch'"),
    (["chain", "set", "in", "fwd-x -> out"], 1, r"xnv-ctl: chain step 'fwd-x' is not .*"),
    (["chain", "set", "in"], 2, r"xnv-ctl: chain set: usage: chain set PORT STEPS"),
    (["chain", "set", "in", "fwd-b", "-"], 2,      # what the shell leaves of: fwd-b -> out
     r"xnv-ctl: chain set: chain ends in '-': quote it .*"),
    (["watch", "--count", "-1"], 2, r"xnv-ctl watch: argument --count: '-1' is not an integer >= 0 .*"),
    (["watch", "--interval", "0"], 2, r"xnv-ctl watch: argument --interval: '0' is not a number > 0 .*"),
    (["nfs", "extra"], 2, r"xnv-ctl: unrecognized arguments: extra .*"),
]


@pytest.mark.parametrize("argv,status,msg", BAD, ids=[" ".join(a) or "-" for a, _, _ in BAD])
def test_bad_input(ctl, argv, status, msg):
    before = ctl.state()
    r = ctl.run(*argv)
    assert (r.returncode, r.stdout) == (status, ""), (r.returncode, r.stdout, r.stderr)
    assert len(r.stderr.splitlines()) == 1 and re.fullmatch(msg, r.stderr.strip()), r.stderr
    assert ctl.state() == before
    assert ctl.core.alive()


# The rules in force while BAD_FLOW runs: an exact one and a wildcard one.
EXACT = ["proto=udp", "src=10.7.0.1", "dst=10.7.0.2", "sport=1", "dport=2"]
WILD = ["priority=5", "vlan=9"]
RULE = r"xnv-ctl: flow rule: "

BAD_FLOW = [
    # flow add: the core names the field and what it takes
    (["add", "proto=udp", "src=10.0.0.x", "dst=10.0.0.2", "chain", "fwd-b -> out"], 1,
     RULE + r"src '10\.0\.0\.x' is not an IPv4 or IPv6 address\[/prefix length\]"),
    (["add", "dst=10.0.0.0/33", "chain", "drop"], 1,
     RULE + r"dst '10\.0\.0\.0/33' is not an IPv4 or IPv6 address\[/prefix length\]"),
    (["add", "priority=70000", "chain", "drop"], 1, RULE + r"priority '70000' is not 0\.\.65535"),
    (["add", "priority=any", "chain", "drop"], 1, RULE + r"priority 'any' is not 0\.\.65535"),
    (["add", "vlan=4096", "chain", "drop"], 1, RULE + r"vlan '4096' is not 0\.\.4095, none or any"),
    (["add", "in_port=nosuch", "chain", "drop"], 1,
     RULE + r"in_port 'nosuch' is not a port of this core"),
    (["add", "proto=bogus", "chain", "drop"], 1, RULE + r"proto 'bogus' is not a name \(tcp, .*"),
    (["add", "tcp", "sport=2000-1000", "chain", "drop"], 1,
     RULE + r"sport '2000-1000' is not a port, a range FIRST-LAST of ports \(0\.\.65535\) or any"),
    (["add", "dport=53", "chain", "drop"], 1, RULE + r"sport/dport need proto tcp, udp or sctp"),
    (["add", "icmp", "sport=7", "chain", "drop"], 1,
     RULE + r"sport/dport need proto tcp, udp or sctp"),
    (["add", "src=10.0.0.1", "dst=2001:db8::1", "chain", "drop"], 1,
     RULE + r"src= and dst= are of different families \(IPv4 and IPv6\)"),
    (["add", "udp", "proto=tcp", "chain", "drop"], 1, RULE + r"proto given twice"),
    (["add", "dport=", "udp", "chain", "drop"], 1, RULE + r"'dport=' is not KEY=VALUE"),
    # the rule in force, written otherwise
    (["add", "proto=17", "src=10.7.0.1/32", "dst=10.7.0.2", "sport=1-1", "dport=2",
      "vlan=any", "chain", "drop"], 1, r"xnv-ctl: rule \d+ matches the same at the same priority"),
    (["add", "proto=udp", "src=10.0.0.1", "dst=10.0.0.2", "chain", "nosuch -> out"], 1,
     r"xnv-ctl: chain step 'nosuch' is not a declared service, a port, or 'drop'"),
    # caught by xnv-ctl
    (["add", "proto=udp", "src=10.0.0.1", "dst=10.0.0.2"], 2,
     r"xnv-ctl: flow add: missing chain STEPS .*"),
    (["add", "udp", "chain"], 2, r"xnv-ctl: flow add: no chain steps given .*"),
    (["add", "udp", "chain", "fwd-b", "-"], 2, r"xnv-ctl: flow add: chain ends in '-'.*"),
    (["add", "prot=udp", "chain", "out"], 2, r"xnv-ctl: flow add: 'prot=udp' is not KEY=VALUE .*"),
    (["add", "dns", "chain", "out"], 2, r"xnv-ctl: flow add: 'dns' is not KEY=VALUE .*"),
    # del, clear, reload, list
    (["del", "999"], 1, r"xnv-ctl: no flow rule 999"),
    (["del", "0"], 1, r"xnv-ctl: no flow rule 0"),
    (["del", "x"], 2, r"xnv-ctl flow del: argument ID: invalid int value: 'x' .*"),
    (["del"], 2, r"xnv-ctl flow del: the following arguments are required: ID .*"),
    (["clear", "all"], 2, r"xnv-ctl: unrecognized arguments: all .*"),
    (["reload", "other.ini"], 2, r"xnv-ctl: unrecognized arguments: other\.ini .*"),
    (["list", "1"], 2, r"xnv-ctl: unrecognized arguments: 1 .*"),
    (["bogus"], 2,
     r"xnv-ctl flow: argument list\|add\|del\|clear\|reload: invalid choice: 'bogus' .*"),
]


@pytest.fixture
def two_rules(ctl, no_flows):
    """EXACT and WILD in force (neither matches the traffic)."""
    for spec in (EXACT, WILD):
        added(ctl.ok("flow", "add", *spec, "chain", "fwd-b -> out"))
    assert len(ctl.json("flow", "list")) == 2


@pytest.mark.parametrize("argv,status,msg", BAD_FLOW,
                         ids=[" ".join(a) for a, _, _ in BAD_FLOW])
def test_bad_flow_input(ctl, two_rules, argv, status, msg):
    before = ctl.state()
    r = ctl.run("flow", *argv)
    assert (r.returncode, r.stdout) == (status, ""), (r.returncode, r.stdout, r.stderr)
    assert len(r.stderr.splitlines()) == 1 and re.fullmatch(msg, r.stderr.strip()), r.stderr
    assert ctl.state() == before
    assert ctl.core.alive()


# --------------------------------------------------------------------------
# --help

@pytest.mark.parametrize("argv", [[], ["info"], ["ports"], ["groups"], ["services"],
                                  ["nfs"], ["stats"], ["control"], ["watch"], ["flow"], ["flow", "list"],
                                  ["flow", "add"], ["flow", "del"], ["flow", "clear"],
                                  ["flow", "reload"], ["chain"],
                                  ["chain", "set"]], ids=lambda a: " ".join(a) or "top")
def test_help(xnv, argv):
    r = xnv.run([CTL_BIN, *argv, "--help"])
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith(f"usage: {' '.join(['xnv-ctl', *argv])} ")
    assert "--socket PATH" in r.stdout and "--json" in r.stdout
