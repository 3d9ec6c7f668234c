# SPDX-License-Identifier: BSD-3-Clause
"""A config that checks itself, and the first mistakes users make.

`xnv-core --check-config FILE`: exit 0 and "FILE: ok" (after its
warnings), or exit 1 and one error; every line starts with FILE:LINE.
A normal start refuses the same things in the same words before DPDK
starts; what only the backend can tell is checked for the host one
unless --backend names another.  Known vdev drivers' devargs: their
keys (dom0-core/config_devargs.c) and the interfaces they name.
docs/CONFIG.md documents exactly the keys the parser knows
(dom0-core/config_keys.c).  Before EAL too: a second core on a socket
in use (named with the first one's pid; two started at once: the
second), an unwritable --stats-json, a
socket directory that cannot be made; usage errors exit 2."""
import os
import re
import subprocess

import pytest

from harness import CORE_BIN, REPO, scaled, unstamped
from test_bad_input import NOISE, config
from traffic import read_pcap, write_pcap


def check(xnv, text, name="c.ini"):
    cfg = xnv.path(name)
    cfg.write_text(text)
    return cfg, xnv.run([CORE_BIN, "--check-config", cfg])


def start(xnv, cfg, *extra):
    """A normal start that is expected to fail before it runs."""
    return xnv.run([CORE_BIN, "-l", "0", "--", "--config", cfg, "--socket",
                    xnv.socket, "--duration", "2", *extra])


def errors_of(r):
    return [line for line in r.stderr.splitlines() if not NOISE.search(line)]


def test_good_config_ok(xnv):
    cfg, r = check(xnv, config())
    assert (r.returncode, r.stdout, r.stderr) == (0, f"{cfg}: ok\n", ""), r
    assert not os.path.lexists(xnv.socket)


def test_both_comment_styles(xnv):
    text = ("# a comment\n  # an indented one\n[core]  ; after a header\n"
            "ring_size = 256 ; after a value\n; a line\n") + config(core=None)
    cfg, r = check(xnv, text)
    assert (r.returncode, r.stdout, r.stderr) == (0, f"{cfg}: ok\n", ""), r


WARN_CFG = config(**{
    "in": "[port in]\ndev = net_null0\ngroup = g\nchain = fwd-a -> out -> fwd-a\n",
    "out": "[port out]\ndev = net_pcap1,tx_pcap=out.pcap\ngroup = g\nchain = fwd-a\n",
})


def test_warnings(xnv):
    """Allowed but likely not meant: said with the line, still ok."""
    cfg, r = check(xnv, WARN_CFG)
    assert r.returncode == 0, r
    assert r.stdout == f"{cfg}: ok\n"
    assert r.stderr.splitlines() == [
        f"{cfg}:8: warning: [port in] chain: the steps after 'out' are never "
        "reached (a packet leaves the chain at a port or a drop)",
        f"{cfg}:12: warning: [port out] chain: no port or 'drop' at its end: "
        "what 'fwd-a' passes on is dropped (counted as chain_end)",
        f"{cfg}:12: warning: [port out] chain: device net_pcap1 only sends (no "
        "rx_pcap=, rx_iface= or iface=): nothing arrives to take this chain",
    ], r.stderr


def test_fabric_hop_warnings(xnv):
    """A fabric port's hop.N chains are warned about as chains are."""
    cfg, r = check(xnv, config(out="[port out]\ndev = net_null1\ngroup = g\n"
                               "fabric = vlan\nhop.18 = out:19 -> drop\n"
                               "hop.20 = fwd-a\n", **{"in": "[port in]\n"
                               "dev = net_null0\ngroup = g\nchain = drop\n"}))
    assert r.returncode == 0, r
    assert r.stderr.splitlines() == [
        f"{cfg}:13: warning: [port out] hop.18: the steps after 'out:19' are "
        "never reached (a packet leaves the chain at a port or a drop)",
        f"{cfg}:14: warning: [port out] hop.20: no port or 'drop' at its end: "
        "what 'fwd-a' passes on is dropped (counted as chain_end)"], r.stderr


def test_warnings_on_start(xnv):
    """A normal start prints the same warnings and goes on."""
    cfg = xnv.path("w.ini")
    cfg.write_text(WARN_CFG)
    core = xnv.start_core(cfg, duration=1, stats_json=None)
    assert core.wait(30) == 0, core.log()
    assert f"xnv-core: {cfg}:8: warning: [port in] chain: the steps after " \
           "'out' are never reached" in core.log()


# id: (config text, line of the error, regex of the rest of it)
BAD = {
    "key-twice": (
        config(group="[group g]\npool_bufs = 1024\npool_bufs = 2048\n"), 5,
        r"\[group g\]: pool_bufs given twice \(first on line 4\)"),
    "section-twice": (
        config(svc="[service fwd-a]\n[group g]\npool_bufs = 64\n"), 13,
        r"\[group g\]: declared twice \(first on line 3\)"),
    "port-twice": (
        config(svc="[service fwd-a]\n[port in]\ndev = net_null2\n"), 13,
        r"\[port in\]: declared twice \(first on line 5\)"),
    "same-device": (
        config(out="[port out]\ndev = net_null0,size=128\ngroup = g\n"), 10,
        r"\[port out\] dev = net_null0,size=128: device net_null0 is \[port in\]'s "
        r"already \(line 6\): one device per port"),
    "same-pci-device": (
        config(**{"in": "[port in]\ndev = 0000:00:1F.6\ngroup = g\nchain = out\n",
                  "out": "[port out]\ndev = 00:1f.6\ngroup = g\n"}), 10,
        r"\[port out\] dev = 00:1f.6: device 0000:00:1f.6 is \[port in\]'s "
        r"already \(line 6\): one device per port"),
    "leading-zero": (
        config(core="[core]\nring_size = 0256\n"), 2,
        r"\[core\] ring_size = 0256: expected a number from 1 to 65536, "
        r"without leading zeros"),
    "hex": (
        config(group="[group g]\npool_bufs = 0x400\n"), 4,
        r"\[group g\] pool_bufs = 0x400: expected a number from 64 to 4194304$"),
    "trailing-junk": (
        config(core="[core]\nburst = 64k\n"), 2,
        r"\[core\] burst = 64k: expected a number from 1 to 256$"),
    "workers-zero": (
        config(core="[core]\nworkers = 0\n"), 2,
        r"\[core\] workers = 0: expected a number from 1 to 8$"),
    "workers-too-many": (
        config(core="[core]\nworkers = 9\n"), 2,
        r"\[core\] workers = 9: expected a number from 1 to 8$"),
    "service-worker-beyond-workers": (
        config(core="[core]\nworkers = 2\n",
               svc="[service fwd-a]\nworker = 2\n"), 13,
        r"\[service fwd-a\] worker = 2: there are only workers 0\.\.1 "
        r"\(\[core\] workers = 2\)$"),
    "service-worker-one-worker": (
        config(svc="[service fwd-a]\nworker = 1\n"), 13,
        r"\[service fwd-a\] worker = 1: there are only workers 0\.\.0 "
        r"\(\[core\] workers = 1\)$"),
    "service-worker-range": (
        config(svc="[service fwd-a]\nworker = 9\n"), 13,
        r"\[service fwd-a\] worker = 9: expected a number from 0 to 7$"),
    "out-of-range": (
        config(**{"in": "[port in]\ndev = net_null0\ngroup = g\nchain = fwd-a -> out\n"
                        "rx_desc = 16\n"}), 9,
        r"\[port in\] rx_desc = 16: expected a number from 32 to 16384$"),
    "unknown-key": (
        config(svc="[service fwd-a]\nid = 3\ncolor = red\n"), 14,
        r"\[service fwd-a\]: unknown key 'color' \(known: id, allow_uids, "
        r"allow_gids, worker\)$"),
    "unknown-section-kind": (
        config(svc="[service fwd-a]\n[widget w]\n"), 13,
        r"\[widget w\]: unknown section kind 'widget' \(expected core, group, "
        r"port, service or flow\)$"),
    "named-core": (
        config(svc="[service fwd-a]\n[core main]\n"), 13,
        r"\[core main\]: \[core\] takes no name$"),
    "interface-as-dev": (
        config(out="[port out]\ndev = eth0\ngroup = g\n"), 10,
        r"\[port out\] dev = eth0: 'eth0' is neither a DPDK vdev .* nor a PCI "
        r"address \(0000:01:00\.0\); a kernel interface is "
        r"net_af_packet0,iface=eth0$"),
    "key-before-section": (
        "ring_size = 64\n" + config(), 1,
        r"'key = value' before any \[section\]$"),
    # what the backend cannot do: --check-config and a start without
    # --backend are for the host one
    "on-hostile-pause-host": (
        config(core="[core]\non_hostile = pause\n"), 2,
        r"\[core\] on_hostile = pause: the host backend cannot pause or destroy "
        r"a domain \(xen can\); use refuse$"),
    # a known vdev driver's devargs, parsed as DPDK 22.11 parses them
    # (dom0-core/config_devargs.c); unknown drivers are left to DPDK
    "devargs-af-packet-key": (
        config(out="[port out]\ndev = net_af_packet0,ifcae=eth1\ngroup = g\n"),
        10, r"\[port out\] dev = net_af_packet0,ifcae=eth1: net_af_packet has "
            r"no key 'ifcae' \(keys: iface, qpairs, blocksz, framesz, framecnt, "
            r"qdisc_bypass\)$"),
    "devargs-null-key": (
        config(**{"in": "[port in]\ndev = net_null0,size=64,sise=64\ngroup = g\n"
                        "chain = fwd-a -> out\n"}), 6,
        r"\[port in\] dev = net_null0,size=64,sise=64: net_null has no key "
        r"'sise' \(keys: size, copy, no-rx\)$"),
    "devargs-pcap-key": (
        config(out="[port out]\ndev = net_pcap1,tx_pcapp=o.pcap\ngroup = g\n"),
        10, r"\[port out\] dev = net_pcap1,tx_pcapp=o\.pcap: net_pcap has no "
            r"key 'tx_pcapp' \(keys: rx_pcap, tx_pcap, rx_iface, rx_iface_in, "
            r"tx_iface, iface, phy_mac, infinite_rx\)$"),
    "devargs-memif-key": (
        config(out="[port out]\ndev = net_memif0,role=server,sock=/x\ngroup = g\n"),
        10, r"\[port out\] dev = net_memif0,role=server,sock=/x: net_memif has "
            r"no key 'sock' \(keys: id, role, bsize, rsize, socket, "
            r"socket-abstract, mac, zero-copy, secret\)$"),
    "devargs-ring-key": (
        config(out="[port out]\ndev = net_ring0,node=0\ngroup = g\n"),
        10, r"\[port out\] dev = net_ring0,node=0: net_ring has no key 'node' "
            r"\(keys: nodeaction, internal\)$"),
    "unknown-chain-step": (
        config(**{"in": "[port in]\ndev = net_null0\ngroup = g\n"
                        "chain = fwd-a -> fwd-x -> out\n"}), 8,
        r"\[port in\] chain step 'fwd-x' is not a declared service, a port, or "
        r"'drop'$"),
    # fabric ports (dom0-core/fabric.h)
    "fabric-kind": (
        config(out="[port out]\ndev = net_null1\ngroup = g\nfabric = vxlan\n"),
        12, r"\[port out\] fabric = vxlan: expected 'vlan' \(the hop in an "
            r"outer 802\.1Q tag\) or 'none'$"),
    "fabric-step-without-hop": (
        config(out="[port out]\ndev = net_null1\ngroup = g\nfabric = vlan\n"),
        8, r"\[port in\] chain step 'out': a fabric port is a step only with "
           r"a hop, as out:HOP$"),
    "hop-step-on-plain-port": (
        config(**{"in": "[port in]\ndev = net_null0\ngroup = g\n"
                        "chain = fwd-a -> out:18\n"}), 8,
        r"\[port in\] chain step 'out:18': 'out' is not a fabric port "
        r"\(PORT:HOP sends out of a port with fabric = vlan\)$"),
    "hop-step-number": (
        config(**{"in": "[port in]\ndev = net_null0\ngroup = g\n"
                        "chain = fwd-a -> out:0\n"},
               out="[port out]\ndev = net_null1\ngroup = g\nfabric = vlan\n"),
        8, r"\[port in\] chain step 'out:0': hop '0' is not a number from 1 "
           r"to 4094$"),
    "hop-on-plain-port": (
        config(out="[port out]\ndev = net_null1\ngroup = g\n"
                   "hop.18 = drop\n"),
        12, r"\[port out\] hop\.18: only a fabric port \(fabric = vlan\) has "
            r"hops$"),
    "hop-number": (
        config(**{"in": "[port in]\ndev = net_null0\ngroup = g\n"
                        "chain = fwd-a -> out:18\n"},
               out="[port out]\ndev = net_null1\ngroup = g\nfabric = vlan\n"
                   "hop.4095 = drop\n"),
        13, r"\[port out\] hop\.4095: hop '4095' is not a number from 1 to "
            r"4094$"),
    "hop-twice": (
        config(**{"in": "[port in]\ndev = net_null0\ngroup = g\n"
                        "chain = fwd-a -> out:18\n"},
               out="[port out]\ndev = net_null1\ngroup = g\nfabric = vlan\n"
                   "hop.18 = drop\n[port out2]\ndev = net_null2\ngroup = g\n"
                   "fabric = vlan\nhop.18 = fwd-a -> drop\n"),
        18, r"\[port out2\] hop\.18: hop 18 is \[port out\]'s already$"),
    "hop-chain": (
        config(**{"in": "[port in]\ndev = net_null0\ngroup = g\n"
                        "chain = fwd-a -> out:18\n"},
               out="[port out]\ndev = net_null1\ngroup = g\nfabric = vlan\n"
                   "hop.19 = fwd-x -> out:20\n"),
        13, r"\[port out\] hop\.19: chain step 'fwd-x' is not a declared "
            r"service, a port, or 'drop'$"),
    "fabric-port-chain": (
        config(out="[port out]\ndev = net_null1\ngroup = g\nfabric = vlan\n"
                   "chain = drop\n", **{"in": "[port in]\ndev = net_null0\n"
                                          "group = g\nchain = drop\n"}),
        13, r"\[port out\] chain: a fabric port's arrivals take their hop's "
            r"chain \(hop\.N = \.\.\.\), not the port's$"),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_errors(xnv, case):
    text, line, expect = BAD[case]
    cfg, r = check(xnv, text)
    assert r.returncode == 1, r
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert re.fullmatch(re.escape(f"{cfg}:{line}: ") + expect, lines[0]), lines[0]
    # a normal start: the same line, before DPDK starts
    r2 = start(xnv, cfg)
    assert r2.returncode == 1, r2
    assert r2.stderr.splitlines() == [f"xnv-core: config error: {lines[0]}"], r2.stderr
    assert "xnv-core statistics" not in r2.stdout
    assert not os.path.lexists(xnv.socket)


# id: (port out's dev, what the one line says after "[port out] dev = DEV: ")
MISSING_IFACES = {
    "af-packet": ("net_af_packet0,iface=xnv-nosuch0",
                  "iface=xnv-nosuch0: no such kernel interface (`ip link` "
                  "lists them)"),
    "pcap-rx-iface": ("net_pcap1,rx_iface=lo,tx_iface=xnv-nosuch0",
                      "tx_iface=xnv-nosuch0: no such kernel interface (`ip "
                      "link` lists them)"),
    "af-packet-no-name": ("net_af_packet0,iface", "iface= names no interface "
                          "(iface=eth0)"),
}


@pytest.mark.parametrize("case", MISSING_IFACES, ids=list(MISSING_IFACES))
def test_devargs_interface_missing(xnv, case):
    """A kernel interface a port's devargs name is there when the core
    starts: checked before EAL, by --check-config too."""
    dev, what = MISSING_IFACES[case]
    cfg, r = check(xnv, config(out=f"[port out]\ndev = {dev}\ngroup = g\n"))
    want = f"{cfg}:10: [port out] dev = {dev}: {what}"
    assert (r.returncode, r.stdout, r.stderr) == (1, "", want + "\n"), r
    r2 = start(xnv, cfg)
    assert r2.returncode == 1, r2
    assert r2.stderr.splitlines() == [f"xnv-core: {want}"], r2.stderr
    assert not os.path.lexists(xnv.socket)


def test_devargs_good_af_packet_on_lo(xnv):
    """Every key af_packet takes, on an interface that is there."""
    cfg, r = check(xnv, config(out="[port out]\ndev = net_af_packet0,iface=lo,"
                                   "qpairs=1,blocksz=4096,framesz=2048,"
                                   "framecnt=512,qdisc_bypass=1\ngroup = g\n"))
    assert (r.returncode, r.stdout, r.stderr) == (0, f"{cfg}: ok\n", ""), r


def test_on_hostile_checked_for_the_backend_named(xnv):
    """--check-config --backend xen: what the xen backend can do."""
    if "xen" not in xnv.run([CORE_BIN, "--help"]).stdout.split("this build has:")[-1]:
        pytest.skip("built without the xen backend")
    cfg, r = check(xnv, config(core="[core]\non_hostile = destroy\n"))
    assert r.returncode == 1 and f"{cfg}:2: [core] on_hostile = destroy: " \
        in r.stderr, r
    r = xnv.run([CORE_BIN, "--check-config", cfg, "--backend", "xen"])
    assert (r.returncode, r.stdout, r.stderr) == (0, f"{cfg}: ok\n", ""), r


def test_directory_as_config(xnv):
    r = xnv.run([CORE_BIN, "--check-config", xnv.dir])
    assert (r.returncode, r.stderr) == (1, f"{xnv.dir}: Is a directory\n"), r


def test_keys_documented():
    """docs/CONFIG.md has a row for every key of config_keys.c's tables,
    under its section, and no other key."""
    src = (REPO / "dom0-core" / "config_keys.c").read_text()
    macro = re.search(r"#define XNV_FLOW_RULE_FIELDS (.*?)\n\n",
                      (REPO / "dom0-core" / "flow_rule.h").read_text(), re.S)
    src = src.replace("XNV_FLOW_RULE_FIELDS", macro.group(1))
    code = {m.group(1): set(re.findall(r'"([\w.]+)"', m.group(2)))
            for m in re.finditer(r"const char \*const (\w+)_keys\[\] = \{(.*?)\};",
                                 src, re.S)}
    assert set(code) == {"core", "group", "port", "service", "flow"}, code
    doc, kind = {}, None
    for line in (REPO / "docs" / "CONFIG.md").read_text().splitlines():
        m = re.match(r"## \[(\w+)", line)
        if m:
            kind = m.group(1)
            doc[kind] = set()
        m = re.match(r"\| `([\w.]+)` \|", line)
        if m and kind is not None:
            doc[kind].add(m.group(1))
    assert doc == code


def test_relative_paths_from_config_dir(xnv):
    """rx_pcap= / tx_pcap= are the config's directory's, wherever the
    core is started from."""
    d = xnv.path("conf")
    d.mkdir()
    frames = [bytes([i]) * 60 for i in range(5)]
    write_pcap(d / "in.pcap", frames)
    cfg = d / "rel.ini"
    cfg.write_text(f"[core]\nsocket = {xnv.socket}\n[port in]\n"
                   "dev = net_pcap0,rx_pcap=in.pcap\nchain = out\n"
                   "[port out]\ndev = net_pcap1,tx_pcap=out.pcap\n")
    r = xnv.run([CORE_BIN, "--check-config", cfg])
    assert r.returncode == 0, r
    core = xnv.start_core(cfg, idle_exit=300, stats_json=None)
    assert core.wait(60) == 0, core.log()
    assert read_pcap(d / "out.pcap") == frames
    # a missing one is named as found: from the config's directory
    (d / "in.pcap").unlink()
    r = xnv.run([CORE_BIN, "--check-config", cfg])
    assert r.returncode == 1
    assert r.stderr == (f"{cfg}:4: port in: rx_pcap {d}/in.pcap: No such file "
                        "or directory\n"), r.stderr


def test_relative_memif_socket_file_from_config_dir(xnv):
    """A memif socket file (socket-abstract=no) is the config directory's
    too: a plain file in its place there is what the core refuses."""
    d = xnv.path("mconf")
    d.mkdir()
    (d / "m.sock").write_text("not a socket\n")
    cfg = d / "memif.ini"
    cfg.write_text(config(out="[port out]\ndev = net_memif0,role=server,"
                              "socket=m.sock,socket-abstract=no\ngroup = g\n"))
    r = start(xnv, cfg)
    assert r.returncode == 1, r
    assert f"xnv-core: port out: memif socket {d}/m.sock exists and is not a " \
           "socket" in r.stderr.splitlines()[-1], r.stderr
    assert (d / "m.sock").read_text() == "not a socket\n"


def test_second_core_refused_before_eal(xnv):
    """The same socket: refused naming the running core's pid, before EAL
    and before any device (its tx_pcap is never made); the first goes on."""
    first = xnv.path("first.ini")
    first.write_text(config())
    core = xnv.start_core(first, stats_json=None)
    core.wait_ready()
    second = xnv.path("second.ini")
    second.write_text(config(out="[port out]\ndev = net_pcap1,tx_pcap=b.pcap\n"
                                 "group = g\n"))
    r = start(xnv, second)
    assert r.returncode == 1, r
    assert r.stderr.splitlines() == [
        f"xnv-core: another xnv-core (pid {core.pid}) is listening on "
        f"{xnv.socket}: stop it first, or give this one another socket"], r.stderr
    assert not xnv.path("b.pcap").exists()
    assert core.alive() and xnv.socket.is_socket()


def test_two_cores_started_at_once(xnv):
    """Two cores on one socket started at the same moment, before either
    listens (three times): one runs, the other is refused in one line
    before EAL and before its device (its own tx_pcap is never made)."""
    for i in range(3):
        procs = []
        for side in ("a", "b"):
            cfg = xnv.path(f"race{i}{side}.ini")
            cfg.write_text(config(out=f"[port out]\ndev = net_pcap1,tx_pcap="
                                      f"race{i}{side}.pcap\ngroup = g\n"))
            procs.append(subprocess.Popen(
                [CORE_BIN, "-l", "0", "--", "--config", cfg, "--socket",
                 xnv.socket, "--duration", str(round(scaled(3)))],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        try:
            outs = [p.communicate(timeout=scaled(60)) for p in procs]
        finally:
            for p in procs:             # stopped by PID if still there
                if p.poll() is None:
                    p.kill()
                    p.wait()
        rcs = [p.returncode for p in procs]
        assert sorted(rcs) == [0, 1], (rcs, outs)
        lost = rcs.index(1)
        err = unstamped(outs[lost][1]).splitlines()
        assert len(err) == 1 and re.fullmatch(
            r"xnv-core: another xnv-core (\(pid \d+\) is listening|is "
            rf"starting) on {re.escape(str(xnv.socket))}: stop it first, or "
            r"give this one another socket", err[0]), err
        assert not xnv.path(f"race{i}{'ab'[lost]}.pcap").exists()
        assert xnv.path(f"race{i}{'ab'[1 - lost]}.pcap").exists()


def test_stats_json_unwritable(xnv):
    cfg = xnv.path("good.ini")
    cfg.write_text(config())
    for path, why in ((xnv.path("no/such/dir/st.json"), "No such file or directory"),
                      (xnv.dir, "Is a directory")):
        r = start(xnv, cfg, "--stats-json", path)
        assert r.returncode == 1, r
        assert r.stderr.splitlines() == [
            f"xnv-core: --stats-json {path}: cannot write it: {why}"], r.stderr
        assert not os.path.lexists(xnv.socket)
    # writable: nothing is left behind by the check when the run fails later
    r = start(xnv, cfg, "--stats-json", xnv.path("st.json"), "--socket",
              xnv.path("no-dir/sub/xnv.sock"))
    assert r.returncode == 1
    assert not xnv.path("st.json").exists()


def test_socket_directory_cannot_be_made(xnv):
    cfg = xnv.path("good.ini")
    cfg.write_text(config())
    blocker = xnv.path("plain-file")
    blocker.write_text("")
    for sock, d, why in (
            (xnv.path("a/b/xnv.sock"), xnv.path("a/b"), "No such file or directory"),
            (blocker / "xnv.sock", blocker, "Not a directory")):
        r = xnv.run([CORE_BIN, "-l", "0", "--", "--config", cfg, "--socket", sock])
        assert r.returncode == 1, r
        assert r.stderr.splitlines() == [
            f"xnv-core: cannot create the socket directory {d}: {why} (create it, "
            "or give [core] socket or --socket a directory this user may write)"], \
            r.stderr


@pytest.mark.parametrize("argv, expect", [
    (["-l", "0", "--config", "x.ini"],
     "xnv-core: unknown or incomplete option '-l' (EAL options go before '--', "
     "xnv-core's after it: xnv-core [EAL options] -- --config FILE)"),
    (["-l", "0", "--"],
     "xnv-core: --config FILE is required (usage: xnv-core [EAL options] -- "
     "--config FILE; see --help)"),
    (["--", "--config", "x.ini", "--socket", "rel.sock"],
     "xnv-core: --socket rel.sock: expected an absolute path"),
], ids=["no-separator", "no-config", "relative-socket"])
def test_usage_errors_exit_2(xnv, argv, expect):
    r = xnv.run([CORE_BIN, *argv])
    assert (r.returncode, r.stderr.splitlines()) == (2, [expect]), r


def test_device_dpdk_rejects_names_port_and_line(xnv):
    cfg = xnv.path("bogus.ini")
    cfg.write_text(config(out="[port out]\ndev = net_bogus0\ngroup = g\n"))
    r = start(xnv, cfg)
    assert r.returncode == 1
    ours = [line for line in errors_of(r) if line.startswith("xnv-core: ")]
    assert len(ours) == 1, r.stderr
    assert re.search(rf"port out: cannot probe device 'net_bogus0': .* "
                     rf"\({re.escape(str(cfg))}:10; a vdev is net_DRIVERn\[,key=value"
                     r"\.\.\.\], such as net_null0 or net_pcap0,rx_pcap=in\.pcap; a "
                     r"PCI device its address\)$", ours[0]), ours[0]
