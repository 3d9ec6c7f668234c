# SPDX-License-Identifier: BSD-3-Clause
"""Bad input: each mistake gives one clear error line naming the problem,
a non-zero exit, nothing started (no statistics, no socket) and nothing
left running.  Core side (config file, command line) and NF side."""
import os
import re

import pytest

from harness import CORE_BIN, FWD_BIN

# Lines that are not errors: DPDK's own start-up log, and xnv-core's
# informational lines (hugepage notice, pools and ports being set up).
NOISE = re.compile(r"^(EAL|TELEMETRY): |"
                   r"^xnv-core: (fewer than 64 free 2 MiB hugepages|no hugetlbfs "
                   r"mounted): DPDK runs with --no-huge$|"
                   r"^xnv-core: group \S+: pool of |"
                   r"^xnv-core: port \d+ \S+: .* \(driver |"
                   r"^xnv-core: (no free 2 MiB hugepages|region .*hugepages not available)")

GOOD = {   # a valid config, by section, that each case breaks in one place
    "core": "[core]\nring_size = 256\n",
    "group": "[group g]\npool_bufs = 1024\n",
    "in": "[port in]\ndev = net_null0\ngroup = g\nchain = fwd-a -> out\n",
    "out": "[port out]\ndev = net_null1\ngroup = g\n",
    "svc": "[service fwd-a]\n",
}


def config(**changes):
    """GOOD with some sections replaced (or removed with None)."""
    parts = {**GOOD, **changes}
    return "".join(v for v in parts.values() if v is not None)


# id: (config text or None for no file, extra CLI args, regex the one
#      error line must match, starts DPDK before failing)
CASES = {
    "line-without-equals": (
        config(out="[port out]\ndev = net_null1\nthis line has no equals sign\n"),
        (), r"config error: \S+\.ini:\d+: expected 'key = value' or "
            r"'\[section\]', got 'this line has no equals sign'", False),
    "empty-value": (
        config(group="[group g]\npool_bufs = 1024\nallow_uids =\n"),
        (), r"config error: \S+\.ini:5: empty value \(leave the key out "
            r"instead\)$", False),
    "header-without-bracket": (
        config(svc="[service fwd-a\n"),
        (), r"config error: \S+\.ini:\d+: section header without closing '\]'", False),
    "unknown-section": (
        config(svc="[service fwd-a]\n[widget w]\nsize = 3\n"),
        (), r"config error: .*\[widget w\]: unknown section kind 'widget'", False),
    "unknown-bare-section": (
        config(svc="[service fwd-a]\n[ports]\n"),
        (), r"config error: .*\[ports\]: unknown section \(expected", False),
    "unknown-key": (
        config(group="[group g]\npool_bufs = 1024\ncolour = blue\n"),
        (), r"config error: .*\[group g\]: unknown key 'colour'", False),
    "rx-interrupt-not-a-word": (
        config(out="[port out]\ndev = net_null1\ngroup = g\nrx_interrupt = yes\n"),
        (), r"config error: .*\[port out\] rx_interrupt = yes: expected 'on' "
            r"or 'off'$", False),
    "unknown-device": (
        config(out="[port out]\ndev = net_bogus0\ngroup = g\n"),
        (), r"port out: cannot probe device 'net_bogus0'", True),
    "chain-missing-service": (
        config(**{"in": "[port in]\ndev = net_null0\ngroup = g\n"
                        "chain = fwd-a -> fwd-x -> out\n"}),
        (), r"config error: .*\[port in\] "
            r"chain step 'fwd-x' is not a declared service", False),
    # [flow NAME] sections (dom0-core/config_flow.c): refused while the file
    # is read, before DPDK, in one line naming the section and the field
    "flow-unknown-key": (
        config(svc="[service fwd-a]\n[flow dns]\nproto = udp\ncolour = blue\n"
                   "chain = fwd-a -> out\n"),
        (), r"config error: \S+\.ini:\d+: \[flow dns\]: unknown field 'colour' "
            r"\(priority, in_port, vlan, proto, src, dst, sport, dport, chain\)$",
        False),
    "flow-no-chain": (
        config(svc="[service fwd-a]\n[flow dns]\nproto = udp\ndport = 53\n"),
        (), r"config error: \S+\.ini:\d+: \[flow dns\]: no chain \(chain = STEPS\)$",
        False),
    "flow-port-range-backwards": (
        config(svc="[service fwd-a]\n[flow dns]\nproto = udp\ndport = 53-20\n"
                   "chain = fwd-a -> out\n"),
        (), r"config error: \S+\.ini:\d+: \[flow dns\]: dport '53-20' is not a port, "
            r"a range FIRST-LAST of ports \(0\.\.65535\) or any$", False),
    "flow-vlan-4096": (
        config(svc="[service fwd-a]\n[flow dns]\nvlan = 4096\nchain = out\n"),
        (), r"config error: \S+\.ini:\d+: \[flow dns\]: vlan '4096' is not "
            r"0\.\.4095, none or any$", False),
    "flow-unknown-in-port": (
        config(svc="[service fwd-a]\n[flow dns]\nin_port = nosuch\nchain = out\n"),
        (), r"config error: \S+\.ini:\d+: \[flow dns\]: in_port 'nosuch' is not a "
            r"port of this core$", False),
    "flow-key-twice": (
        config(svc="[service fwd-a]\n[flow dns]\nproto = udp\nproto = tcp\n"
                   "chain = out\n"),
        (), r"config error: \S+\.ini:\d+: \[flow dns\]: proto given twice "
            r"\(first on line 14\)$", False),
    "flow-mixed-families": (
        config(svc="[service fwd-a]\n[flow dns]\nsrc = 10.0.0.1\ndst = ::1\n"
                   "chain = out\n"),
        (), r"config error: \S+\.ini:\d+: \[flow dns\]: src= and dst= are of "
            r"different families \(IPv4 and IPv6\)$", False),
    "flow-value-with-space": (
        config(svc="[service fwd-a]\n[flow dns]\nsrc = 10.0.0.1 10.0.0.2\n"
                   "chain = out\n"),
        (), r"config error: \S+\.ini:\d+: \[flow dns\]: src '10\.0\.0\.1 10\.0\.0\.2' "
            r"has a space$", False),
    "flow-declared-twice": (
        config(svc="[service fwd-a]\n[flow dns]\nchain = out\n[flow dns]\n"
                   "chain = drop\n"),
        (), r"config error: \S+\.ini:\d+: \[flow dns\]: declared twice "
            r"\(first on line 13\)$", False),
    "flow-chain-unknown-step": (
        config(svc="[service fwd-a]\n[flow dns]\nproto = udp\n"
                   "chain = fwd-a -> fwd-x -> out\n"),
        (), r"config error: \S+\.ini:\d+: \[flow dns\]: chain: chain step 'fwd-x' "
            r"is not a declared service, a port, or 'drop'$", False),
    "flow-chain-unknown-first-step": (
        config(svc="[service fwd-a]\n[flow dns]\nchain = fwd-x -> out\n"),
        (), r"config error: \S+\.ini:\d+: \[flow dns\]: chain: chain step 'fwd-x' "
            r"is not a declared service, a port, or 'drop'$", False),
    "ring-size-not-power-of-two": (
        config(core="[core]\nring_size = 1000\n"),
        (), r"config error: .*\[core\] ring_size = 1000: must be a power of two", False),
    "error-budget-not-a-number": (
        config(core="[core]\nerror_budget = lots\n"),
        (), r"config error: .*\[core\] error_budget = lots: expected a number "
            r"from 0 to 100000000$", False),
    "error-budget-negative": (
        config(core="[core]\nerror_budget = -1\n"),
        (), r"config error: .*\[core\] error_budget = -1: expected a number", False),
    "heartbeat-too-long": (
        config(core="[core]\nheartbeat_timeout_ms = 600001\n"),
        (), r"config error: .*\[core\] heartbeat_timeout_ms = 600001: expected a "
            r"number from 0 to 600000$", False),
    "heartbeat-with-unit": (
        config(core="[core]\nheartbeat_timeout_ms = 1s\n"),
        (), r"config error: .*\[core\] heartbeat_timeout_ms = 1s: expected a number",
        False),
    "log-buffer-too-small": (
        config(core="[core]\nlog_buffer_kib = 4\n"),
        (), r"config error: .*\[core\] log_buffer_kib = 4: expected a number "
            r"from 8 to 65536$", False),
    "max-held-too-big": (
        config(core="[core]\nmax_held = 4194305\n"),
        (), r"config error: .*\[core\] max_held = 4194305: expected a number "
            r"from 0 to 4194304$", False),
    "max-held-negative": (
        config(core="[core]\nmax_held = -64\n"),
        (), r"config error: .*\[core\] max_held = -64: expected a number", False),
    "hoard-timeout-too-long": (
        config(core="[core]\nhoard_timeout_ms = 600001\n"),
        (), r"config error: .*\[core\] hoard_timeout_ms = 600001: expected a "
            r"number from 0 to 600000$", False),
    "hoard-timeout-with-unit": (
        config(core="[core]\nhoard_timeout_ms = 2s\n"),
        (), r"config error: .*\[core\] hoard_timeout_ms = 2s: expected a number",
        False),
    "max-nfs-per-domain-zero": (
        config(core="[core]\nmax_nfs_per_domain = 0\n"),
        (), r"config error: .*\[core\] max_nfs_per_domain = 0: expected a "
            r"number from 1 to 64$", False),
    "max-grant-frames-per-domain-word": (
        config(core="[core]\nmax_grant_frames_per_domain = many\n"),
        (), r"config error: .*\[core\] max_grant_frames_per_domain = many: "
            r"expected a number from 0 to 16777216$", False),
    "on-hostile-unknown": (
        config(core="[core]\non_hostile = shoot\n"),
        (), r"config error: .*\[core\] on_hostile = shoot: expected refuse, "
            r"pause or destroy$", False),
    "on-hostile-pause-in-host-mode": (
        config(core="[core]\non_hostile = pause\n"),
        (), r"config error: \S+\.ini:2: \[core\] on_hostile = pause: the host "
            r"backend cannot pause or destroy a domain \(xen can\); use refuse$",
        False),
    "nf-pools-unknown": (
        config(core="[core]\nnf_pools = mine\n"),
        (), r"config error: .*\[core\] nf_pools = mine: expected 'group' or "
            r"'own'$", False),
    "bad-number": (
        config(group="[group g]\npool_bufs = abc\n"),
        (), r"config error: .*\[group g\] pool_bufs = abc: expected a number", False),
    "allow-uids-unknown-user": (
        config(group="[group g]\npool_bufs = 1024\nallow_uids = 0 no-such-user-xnv\n"),
        (), r"config error: .*\[group g\] allow_uids = 0 no-such-user-xnv: no such "
            r"user 'no-such-user-xnv'$", False),
    "allow-uids-not-a-number": (
        config(group="[group g]\npool_bufs = 1024\nallow_uids = 10x0\n"),
        (), r"config error: .*\[group g\] allow_uids = 10x0: '10x0' is neither a "
            r"user number nor a name$", False),
    "allow-gids-unknown-group": (
        config(svc="[service fwd-a]\nallow_gids = no-such-group-xnv\n"),
        (), r"config error: .*\[service fwd-a\] allow_gids = no-such-group-xnv: no "
            r"such group 'no-such-group-xnv'$", False),
    "may-send-to-unknown-group": (
        config(group="[group g]\npool_bufs = 1024\nmay_send_to = g nosuch\n"),
        (), r"config error: .*\[group g\] may_send_to = g nosuch: no such "
            r"\[group\] 'nosuch'$", False),
    "socket-mode-not-octal": (
        config(core="[core]\nsocket_mode = 0680\n"),
        (), r"config error: .*\[core\] socket_mode = 0680: expected an octal mode "
            r"from 0600 to 0777, such as 0660$", False),
    "socket-mode-too-wide": (
        config(core="[core]\nsocket_mode = 1777\n"),
        (), r"config error: .*\[core\] socket_mode = 1777: expected an octal", False),
    "socket-group-unknown": (
        config(core="[core]\nsocket_mode = 0660\nsocket_group = no-such-group-xnv\n"),
        (), r"config error: .*\[core\] socket_group = no-such-group-xnv: no such "
            r"group 'no-such-group-xnv'$", False),
    "socket-group-mode-keeps-it-out": (
        config(core="[core]\nsocket_group = root\n"),
        (), r"config error: .*\[core\] socket_group = root: socket_mode 0600 does "
            r"not let that group connect", False),
    "missing-config-file": (
        None, ("--config", "/nonexistent/xnv.ini"),
        r"config error: /nonexistent/xnv\.ini: No such file or directory", False),
    "missing-config-option": (
        None, (), r"--config FILE is required", False),
    "unknown-cli-flag": (
        config(), ("--frobnicate",),
        r"unknown or incomplete option '--frobnicate'", False),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_core_rejects(xnv, case):
    text, extra, expect, starts_dpdk = CASES[case]
    args = []
    if text is not None:
        cfg = xnv.path("bad.ini")
        cfg.write_text(text)
        args = ["--config", cfg]
    argv = [CORE_BIN, "-l", "0", "--", *args, *extra, "--socket", xnv.socket]
    r = xnv.run(argv, timeout=30)     # the process has exited when this returns
    lines = r.stderr.splitlines()
    errors = [line for line in lines if not NOISE.search(line)]
    # EAL prints its own view of a failed probe; ours is the xnv-core line
    ours = [line for line in errors if line.startswith("xnv-core: ")]
    assert r.returncode not in (0, None) and r.returncode > 0, r
    assert len(ours) == 1, f"expected one error line, got:\n{r.stderr}"
    assert re.search(expect, ours[0]), ours[0]
    if not starts_dpdk:
        # fails before DPDK is touched: nothing else on stderr at all
        assert errors == ours, r.stderr
        assert not any(line.startswith("EAL:") for line in lines), r.stderr
    assert "xnv-core statistics" not in r.stdout, r.stdout
    assert not os.path.lexists(xnv.socket)


def test_core_socket_path_not_a_socket(xnv):
    """A file in the way of the socket is an error, and is left alone."""
    cfg = xnv.path("good.ini")
    cfg.write_text(config())
    xnv.socket.write_text("not a socket\n")
    r = xnv.run([CORE_BIN, "-l", "0", "--", "--config", cfg, "--socket", xnv.socket])
    assert r.returncode == 1
    ours = [line for line in r.stderr.splitlines() if not NOISE.search(line)]
    assert ours == [f"xnv-core: {xnv.socket} exists and is not a socket"], r.stderr
    assert xnv.socket.read_text() == "not a socket\n"
    assert "xnv-core statistics" not in r.stdout


def test_core_config_error_names_line(xnv):
    """The line number in a syntax error is the offending line's."""
    text = "[core]\nring_size = 256\n\n; comment\n[port in]\ndev = net_null0\noops\n"
    cfg = xnv.path("bad.ini")
    cfg.write_text(text)
    r = xnv.run([CORE_BIN, "--", "--config", cfg, "--socket", xnv.socket])
    assert r.returncode == 1
    assert f"{cfg}:7: expected 'key = value'" in r.stderr, r.stderr


def test_core_help(xnv):
    r = xnv.run([CORE_BIN, "--", "--help"])
    assert r.returncode == 0
    assert r.stdout.startswith("usage: xnv-core"), r.stdout
    assert "--config FILE" in r.stdout


# --------------------------------------------------------------------------
# NF side

def test_nf_without_service(xnv):
    r = xnv.run([FWD_BIN, "--socket", xnv.socket])
    assert r.returncode > 0
    assert r.stderr.splitlines() == [
        "xnv: no service given: use --service NAME or XNV_SERVICE"], r.stderr
    assert r.stdout == ""


def test_nf_unknown_option(xnv):
    r = xnv.run([FWD_BIN, "--service", "fwd-a", "--frobnicate"])
    assert r.returncode > 0
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "unknown or incomplete option '--frobnicate'" in lines[0], lines


def test_nf_alloc_beyond_any_ring(xnv):
    """libxnv refuses more than the largest ring before it asks the core
    (which refuses more than its own ring size: test_quota.py)."""
    r = xnv.run([FWD_BIN, "--service", "fwd-a", "--alloc", "65537",
                 "--socket", xnv.socket])
    assert r.returncode > 0
    assert r.stderr.splitlines() == [
        "xnv: --alloc 65537: expected a number from 0 to 65536 (and no more "
        "than xnv-core's ring_size)"], r.stderr


def test_nf_no_core(xnv):
    """Nothing listens on the socket: one line saying so, and that no
    core is running (nothing refused the NF)."""
    r = xnv.run([FWD_BIN, "--service", "fwd-a", "--socket", xnv.socket])
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert len(lines) == 1, lines
    assert f"no xnv-core running: nothing listens on {xnv.socket}" in lines[0], lines
    assert "refused" not in lines[0], lines


def test_nf_help(xnv):
    r = xnv.run([FWD_BIN, "--help"])
    assert r.returncode == 0
    assert r.stdout.startswith("usage: "), r.stdout
    for opt in ("--service NAME", "--group NAME", "--name NAME", "--socket PATH"):
        assert opt in r.stdout
    assert r.stderr == ""


def test_baseline_config_is_valid(xnv):
    """The config each case above breaks in one place does start."""
    cfg = xnv.path("good.ini")
    cfg.write_text(config())
    r = xnv.run([CORE_BIN, "-l", "0", "--", "--config", cfg, "--socket",
                 xnv.socket, "--duration", "0.2"])
    assert r.returncode == 0, r.stderr
    assert "xnv-core statistics" in r.stdout
