# SPDX-License-Identifier: BSD-3-Clause
"""examples/dpi: Aho-Corasick payload matching.  Every alert (packet,
rule, offset of the first occurrence) equals what a naive search of each
payload finds: patterns at the start and end of the payload, the whole
payload, overlapping ones, a pattern that is a suffix of another, equal
patterns, binary patterns; no alert on near misses or on bytes outside
the payload (headers, non-IP frames).  Drop rules drop."""
import random
import re
import struct

import pytest
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

from nfrun import NfSpec, assert_bad_file, run_nfs

RULES = r"""# test rules
alert "attack"            id 101
alert "ttack"             id 102   # a suffix of rule 1
alert "tac"               id 103   # inside rule 1
drop  hex:DEADbeef        id 104
alert "abab"              id 105   # overlaps itself in "ababab"
alert "\x00\x01\xff"      id 106
drop  "evil"              id 107
alert "a b#c"             id 108   # blank and '#' inside quotes
alert "attack"                     # same pattern again, id = rule number
"""
PATTERNS = [b"attack", b"ttack", b"tac", b"\xde\xad\xbe\xef", b"abab",
            b"\x00\x01\xff", b"evil", b"a b#c", b"attack"]
IDS = [101, 102, 103, 104, 105, 106, 107, 108, 9]
DROP = {3, 6}                                   # rule indices (0-based)
ETH = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")

CASES = [b"attack and more", b"and more attack", b"attack", b"attattack",
         b"ababab", b"attac", b"atack", b"ttac k", b"evi", b"EVIL", b"ta c",
         b"\xde\xad\xbe", b"xx\xde\xad\xbe\xefyy", b"a b c", b"a b#c",
         b"\x00\x01\xff", b"\x00\x01\xfe", b"attack evil", b"", b"e" * 50 +
         b"evil", b"tacattackevil\x00\x01\xffababab"]


def payload(frame):
    """The bytes the DPI scans: after the TCP/UDP header (else after the
    IP header), up to the end of the IP packet; None if not IP."""
    etype = struct.unpack_from(">H", frame, 12)[0]
    if etype == 0x0800:
        ihl, tot, proto = (frame[14] & 15) * 4, struct.unpack_from(">H", frame, 16)[0], frame[23]
        l4, end = 14 + ihl, 14 + tot
    elif etype == 0x86DD:
        proto, l4 = frame[20], 54
        end = 54 + struct.unpack_from(">H", frame, 18)[0]
    else:
        return None
    hdr = (frame[l4 + 12] >> 4) * 4 if proto == 6 else 8 if proto == 17 else 0
    return frame[l4 + hdr:end]


def traffic(seed=3):
    rnd = random.Random(seed)
    out = []
    for i, body in enumerate(CASES * 2):
        kind = i % 4
        if kind == 0:
            l34 = IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1000 + i, dport=53)
        elif kind == 1:
            l34 = IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=1000 + i, dport=80)
        elif kind == 2:
            l34 = IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=1000 + i, dport=53)
        else:
            l34 = IP(src="10.0.0.1", dst="10.0.0.2") / ICMP(id=i)
        out.append(bytes(Ether(**ETH) / l34 / Raw(body)))
    alphabet = b"atckebvilx\xde\xad\xbe\xef\x00\x01\xff #"
    for i in range(300):
        body = bytes(rnd.choice(alphabet) for _ in range(rnd.randrange(0, 80)))
        out.append(bytes(Ether(**ETH) / IP(src="10.0.0.3", dst="10.0.0.4") /
                         UDP(sport=2000 + i, dport=9) / Raw(body)))
    # patterns only outside the payload: never an alert
    out.append(bytes(Ether(src="65:76:69:6c:00:01", dst="02:00:00:00:00:02") /
                     IP(src="101.118.105.108", dst="10.0.0.2") /
                     UDP(sport=24948, dport=29793) / Raw(b"clean")))   # "ta","ta"
    out.append(bytes(Ether(**ETH) / ARP()) + b"attack evil")            # not IP
    return out


def expected(pkts):
    alerts, hits, passed = set(), [0] * len(PATTERNS), []
    for n, f in enumerate(pkts, 1):
        pl = payload(f)
        drop = False
        for r, pat in enumerate(PATTERNS):
            if pl is not None and pat in pl:
                alerts.add((n, r + 1, IDS[r], pl.find(pat)))
                hits[r] += 1
                drop |= r in DROP
        if not drop:
            passed.append(f)
    return alerts, hits, passed


@pytest.fixture(scope="module")
def inspected(xnv_module):
    (xnv_module.dir / "rules.txt").write_text(RULES)
    pkts = traffic()
    alerts = xnv_module.path("alerts.log")
    run = run_nfs(xnv_module, pkts, [NfSpec("dpi", (
        "--rules", xnv_module.dir / "rules.txt", "--alerts", alerts))])
    return pkts, run, alerts.read_text().splitlines()


def test_dpi_alerts_exactly_where_a_naive_search_finds(inspected):
    pkts, run, lines = inspected
    want, _, _ = expected(pkts)
    got = set()
    for line in lines:
        m = re.match(r"alert pkt=(\d+) rule=(\d+) id=(\d+) action=(alert|drop) "
                     r"offset=(\d+) (udp|tcp|icmp) ", line)
        assert m, line
        got.add(tuple(int(m.group(i)) for i in (1, 2, 3, 5)))
        assert (m.group(4) == "drop") == (int(m.group(2)) - 1 in DROP)
    assert len(got) == len(lines)                   # one line per (pkt, rule)
    assert got == want
    assert len(want) > 50


def test_dpi_cases_that_must_and_must_not_match(inspected):
    pkts, _, lines = inspected
    by_pkt = {}
    for line in lines:
        m = re.match(r"alert pkt=(\d+) rule=(\d+) .*offset=(\d+)", line)
        by_pkt.setdefault(int(m.group(1)), set()).add((int(m.group(2)), int(m.group(3))))
    # the copy of each case sent over UDP or TCP (ICMP: its header is
    # scanned too, so offsets differ), see traffic()
    case = {body: i + 1 if i % 4 != 3 else i + len(CASES) + 1
            for i, body in enumerate(CASES)}
    assert by_pkt[case[b"attack and more"]] == {(1, 0), (2, 1), (3, 2), (9, 0)}
    assert by_pkt[case[b"and more attack"]] == {(1, 9), (2, 10), (3, 11), (9, 9)}
    assert by_pkt[case[b"attattack"]] == {(1, 3), (2, 4), (3, 5), (9, 3)}
    assert by_pkt[case[b"ababab"]] == {(5, 0)}
    assert by_pkt[case[b"a b#c"]] == {(8, 0)}
    assert by_pkt[case[b"xx\xde\xad\xbe\xefyy"]] == {(4, 2)}
    # near misses of "attack" still hold "tac"
    assert by_pkt[case[b"attac"]] == {(3, 2)}
    assert by_pkt[case[b"atack"]] == {(3, 1)}
    assert by_pkt[case[b"ttac k"]] == {(3, 1)}
    for miss in (b"evi", b"EVIL", b"ta c", b"\xde\xad\xbe", b"a b c",
                 b"\x00\x01\xfe", b""):
        assert case[miss] not in by_pkt, miss
    n = len(pkts)
    assert n - 1 not in by_pkt and n not in by_pkt  # header / non-IP only


def test_dpi_drops_exactly_the_drop_rule_matches(inspected):
    pkts, run, _ = inspected
    _, _, passed = expected(pkts)
    assert run.core_rc == 0 and run.nf_rcs["dpi"] == 0
    assert 0 < len(passed) < len(pkts)
    assert run.outs[0] == passed


def test_dpi_counters_per_rule(inspected):
    pkts, run, lines = inspected
    want, hits, passed = expected(pkts)
    got = {}
    for line in run.lines("dpi"):
        w = line.split()
        if w[0] == "rule":
            got[int(w[1])] = (int(w[3]), int(w[5]))
    assert got == {r + 1: (hits[r], IDS[r]) for r in range(len(PATTERNS))}
    c = run.counters["dpi"]
    assert c["packets"] == len(pkts) and c["not_ip"] == 1
    assert c["alerts"] == len(want) == len(lines)
    assert c["dropped"] == len(pkts) - len(passed)
    assert c["matched"] == len({a[0] for a in want})


@pytest.mark.parametrize("text,line,msg", [
    ('alert "x"\nwarn "y"\n', 2, "'warn': expected alert or drop"),
    ('alert "abc\n', 1, "unterminated quoted string"),
    ('alert hex:abc\n', 1, "even number of hex digits"),
    ('alert hex:zz\n', 1, "hex digits only"),
    ('\n# c\nalert ""\n', 3, "empty pattern"),
    ('alert "a" id x\n', 1, "expected 'id N'"),
    ('alert abc\n', 1, "expected \"text\" or hex:HEX"),
    ('alert "a\\qb"\n', 1, "unknown escape"),
    ('alert "a" id 1 extra\n', 1, "expected 'alert|drop PATTERN [id N]'"),
], ids=["action", "quote", "hex-odd", "hex-digit", "empty", "id", "bare",
        "escape", "words"])
def test_dpi_bad_rule_file_names_file_and_line(xnv, text, line, msg):
    assert_bad_file(xnv, "dpi", "--rules", text, line, msg)
