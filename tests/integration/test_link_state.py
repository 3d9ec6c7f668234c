# SPDX-License-Identifier: BSD-3-Clause
"""Port link state: a port whose link goes down and up again (a net_tap
port: DPDK creates its kernel interface, the test sets it down and up
with `ip link`) gets one log line per change, and its counters
(`link_up`, `link_changes`) follow in /xnv/port/info, xnv-ctl ports and
the stats JSON.  Ports whose link never changes (net_null) count none.
Packets sent towards a port whose link is down are dropped as
`link_down`."""
import logging
import os
import re
import subprocess

import pytest

from harness import CTL_BIN, ctl, wait_until, write_config, write_pcap
from vethpair import ip_link, tap_name  # noqa: F401 (tap_name: a fixture)

log = logging.getLogger("xnv-it")


def test_link_down_and_up_logged_and_counted(tap_name, xnv):
    cfg = write_config(xnv.path("link.ini"), [
        ("group g", {"pool_bufs": 1024}),
        ("port t", {"dev": f"net_tap0,iface={tap_name}", "group": "g"}),
        ("port n", {"dev": "net_null0", "group": "g"}),
    ])
    core = xnv.start_core(cfg)
    core.wait_ready()
    t, n = ctl(core, "/xnv/port/info", 0), ctl(core, "/xnv/port/info", 1)
    assert (t["link_up"], t["link_changes"]) == (1, 0), t
    assert (n["link_up"], n["link_changes"]) == (1, 0), n

    assert ip_link("set", tap_name, "down").returncode == 0
    core.wait_output(r"^xnv-core: port t: link down$", 10)
    assert ctl(core, "/xnv/port/info", 0)["link_up"] == 0
    rows = xnv.run([CTL_BIN, "--socket", xnv.socket, "ports"]).stdout
    assert re.search(r"^\s*0\s+t\s.*\sdown\s", rows, re.M), rows

    assert ip_link("set", tap_name, "up").returncode == 0
    core.wait_output(r"^xnv-core: port t: link up, \S.* (full|half)-duplex$", 10)
    t = ctl(core, "/xnv/port/info", 0)
    assert (t["link_up"], t["link_changes"]) == (1, 2), t

    assert core.stop() == 0
    ports = {p["name"]: p for p in core.stats()["ports"]}
    assert (ports["t"]["link_up"], ports["t"]["link_changes"]) == (1, 2)
    assert (ports["n"]["link_up"], ports["n"]["link_changes"]) == (1, 0)
    lines = [ln for ln in core.log().splitlines() if ": link " in ln]
    assert len(lines) == 2, lines


def test_packets_to_a_down_port_are_link_down_drops(tap_name, xnv):
    """A chain step towards a port whose link is down drops what it sends
    there under its own reason (`link_down`), at once: nothing waits
    for room that will not come, nothing is counted as sent."""
    frames = [bytes([0x02] * 6 + [0x04] * 6 + [0x08, 0x00]) + bytes(50 + i)
              for i in range(40)]
    in_pcap = write_pcap(xnv.path("in.pcap"), frames)
    cfg = write_config(xnv.path("down.ini"), [
        ("core", {"socket": xnv.socket}),
        ("group g", {"pool_bufs": 4096}),  # the tap's rx queue fills 1024
        ("port in", {"dev": f"net_pcap0,rx_pcap={in_pcap}", "group": "g",
                     "chain": "fwd -> t", "rx_start": "chain-ready"}),
        ("port t", {"dev": f"net_tap0,iface={tap_name}", "group": "g"}),
        ("service fwd", {}),
    ])
    core = xnv.start_core(cfg)
    core.wait_ready()
    assert ip_link("set", tap_name, "down").returncode == 0
    core.wait_output(r"^xnv-core: port t: link down$", 10)
    nf = xnv.start_nf("fwd", "g", "fwd-1")
    core.wait_attached(nf)
    wait_until(lambda: ctl(core, "/xnv/port/info", 0)["rx"] == len(frames),
               30, "the capture read", procs=[core])
    wait_until(lambda: core_drops(core).get("link_down") == len(frames),
               30, "every frame counted as a link_down drop", procs=[core])
    assert ctl(core, "/xnv/port/info", 1)["tx"] == 0
    assert core.stop() == 0
    st = core.stats()
    assert st["drops"]["link_down"] == len(frames), st["drops"]
    assert st["drops"]["stall"] == 0, st["drops"]


def core_drops(core):
    st = ctl(core, "/xnv/stats")
    return {k[5:]: v for k, v in st.items() if k.startswith("drop_")}
