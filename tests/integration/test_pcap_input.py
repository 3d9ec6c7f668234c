# SPDX-License-Identifier: BSD-3-Clause
"""Captures from elsewhere as port input (net_pcap rx_pcap=).

(a) An rx_pcap that cannot be read as an Ethernet capture (missing, not
    a pcap, a header cut short, another link type) is refused before EAL
    starts: one line naming the port, the file and what is wrong, exit 1,
    no socket, no statistics.
(b) An empty capture with --idle-exit ends the run (status 0) and says
    that no packet was received.
(c) Frames larger than one buffer of the port's group are dropped and
    counted as multiseg, with one line per port naming the frame's
    length, the group's buf_size and the key to raise."""
import os
import re
import struct

import pytest
from scapy.layers.inet import IP, UDP
from scapy.utils import wrpcap

from harness import CORE_BIN, run_pcap_chain, write_config
from test_bad_input import NOISE
from traffic import make_traffic, write_pcap


def pcap_header(linktype, magic=0xA1B2C3D4):
    return struct.pack("<IHHiIII", magic, 2, 4, 0, 0, 65535, linktype)


def raw_ip_pcap(path):
    """A real raw-IP capture (link type 101), as tcpdump -i tun0 makes."""
    wrpcap(str(path), [IP(dst="10.0.0.1") / UDP() / b"x" * 20], linktype=101)


# id: (writes the rx_pcap file (None: no file), what the one line says
#      after "port in: rx_pcap <file>: ", from its start)
BAD_FILES = {
    "missing": (None, r"No such file or directory"),
    "text": (lambda p: p.write_text("just some text, not a capture\n"),
             r"not a pcap file: it starts with bytes 6a 75 73 74, not a pcap "
             r"magic number \(a1b2c3d4 or a1b23c4d, either byte order\)"),
    "truncated": (lambda p: p.write_bytes(pcap_header(1)[:10]),
                  r"10 bytes, shorter than a pcap file header \(24 bytes\)"),
    "empty-file": (lambda p: p.write_bytes(b""),
                   r"0 bytes, shorter than a pcap file header"),
    "pcapng": (lambda p: p.write_bytes(b"\x0a\x0d\x0d\x0a" + bytes(28)),
               r"a pcapng file, not pcap \(convert it: editcap -F pcap IN OUT\)"),
    "raw-ip": (raw_ip_pcap,
               r"link type 101 \(raw IP\), not Ethernet \(1\): ports carry "
               r"Ethernet frames"),
    "dlt-null": (lambda p: p.write_bytes(pcap_header(0)),
                 r"link type 0 \(BSD loopback, DLT_NULL\), not Ethernet"),
    "sll-big-endian": (
        lambda p: p.write_bytes(struct.pack(">IHHiIII", 0xA1B23C4D, 2, 4, 0,
                                            0, 65535, 113)),
        r"link type 113 \(Linux cooked, SLL\), not Ethernet"),
}


def pcap_config(xnv, in_pcap, group_keys=None, rx_start="immediately"):
    """port in (rx_pcap) -> service fwd-a -> port out (tx_pcap)."""
    return write_config(xnv.path("pcap.ini"), [
        ("group g", {"pool_bufs": 1024, **(group_keys or {})}),
        ("service fwd-a", {}),
        ("port in", {"dev": f"net_pcap0,rx_pcap={in_pcap}", "group": "g",
                     "chain": "fwd-a -> out", "rx_start": rx_start}),
        ("port out", {"dev": f"net_pcap1,tx_pcap={xnv.path('out.pcap')}",
                      "group": "g"}),
    ])


@pytest.mark.parametrize("case", BAD_FILES, ids=list(BAD_FILES))
def test_bad_rx_pcap_refused_before_start(xnv, case):
    make, what = BAD_FILES[case]
    in_pcap = xnv.path(f"{case}.pcap")
    if make is not None:
        make(in_pcap)
    cfg = pcap_config(xnv, in_pcap)
    r = xnv.run([CORE_BIN, "-l", "0", "--", "--config", cfg, "--socket",
                 xnv.socket, "--duration", "5"])
    lines = r.stderr.splitlines()
    errors = [line for line in lines if not NOISE.search(line)]
    assert r.returncode == 1, r
    assert len(errors) == 1, r.stderr
    assert re.match(rf"xnv-core: {re.escape(str(cfg))}:\d+: port in: rx_pcap "
                    rf"{re.escape(str(in_pcap))}: "
                        + what, errors[0]), errors[0]
    assert not any(line.startswith("EAL") for line in lines), r.stderr
    assert "xnv-core statistics" not in r.stdout
    assert not os.path.lexists(xnv.socket)
    assert not xnv.path("out.pcap").exists()


def test_tx_pcap_written_as_ethernet_is_not_checked(xnv):
    """tx_pcap files are DPDK's to write (as Ethernet): a missing one is
    fine, an existing non-Ethernet one is overwritten."""
    in_pcap = write_pcap(xnv.path("in.pcap"), [])
    out = xnv.path("out.pcap")
    out.write_bytes(pcap_header(101))
    r = xnv.run([CORE_BIN, "-l", "0", "--", "--config", pcap_config(xnv, in_pcap),
                 "--socket", xnv.socket, "--duration", "0.3"])
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[20:24] == struct.pack("<I", 1)


def test_empty_capture_ends_with_idle_exit(xnv):
    """Nothing ever received: --idle-exit counts from when rx started,
    not from a first packet that never comes (before: ran to --duration)."""
    in_pcap = write_pcap(xnv.path("empty.pcap"), [])
    core = xnv.start_core(pcap_config(xnv, in_pcap), idle_exit=300,
                          duration=600)
    assert core.wait(60) == 0, core.log()[-3000:]
    log = core.log()
    assert re.search(r"^xnv-core: no packet received in 300 ms since rx "
                     r"started: stopping \(--idle-exit\)$", log, re.M), log
    assert "--duration reached" not in log
    assert core.stats()["ports"][0]["rx"] == 0


def test_frames_above_buf_size_dropped_counted_said_once(xnv):
    """The default buf_size (2176) holds 2048 bytes of frame: two larger
    frames are multiseg drops and one line on the port; the rest pass."""
    good = make_traffic(40, seed=11)
    big = [good[0][:14] + bytes(n - 14) for n in (2049, 9000)]
    frames = good[:10] + [big[0]] + good[10:30] + [big[1]] + good[30:]
    r = run_pcap_chain(xnv, frames)
    assert r["core_rc"] == 0, r["core"].log()[-3000:]
    assert r["out"] == good
    assert r["stats"]["drops"]["multiseg"] == 2, r["stats"]["drops"]
    said = [line for line in r["core"].log().splitlines() if "multiseg" in line]
    assert said == [
        "xnv-core: port in: dropped a 2049-byte frame: larger than one buffer "
        "of group blue (buf_size 2176 holds 2048 bytes of frame); raise "
        "[group blue] buf_size (at most 65472: frames up to 65344 bytes); "
        "counted as multiseg, said once"], said
