# SPDX-License-Identifier: BSD-3-Clause
"""The model test_flow_property.py checks the flow director against: rules
and packets as the test means them (`Rule`, `Packet`: what the core reads
from a frame), the naive matcher written from the documented semantics
(dom0-core/flow_rule.h, flow_key.h), not from the C code (`matches()`,
`ranked()`, `verdict()`), and random rule sets (`rand_pools()`,
`rand_rules()`): wildcards, prefixes of every length (host bits sometimes
left set: the core clears them), port ranges, priorities with many ties,
proto any / name / number, vlan any / none / id, in_port, exact 5-tuples
and duplicates of them; keys in random order, `any` sometimes written
out.  The random packets are flowpackets.py's."""
import ipaddress

IN_PORTS = ("in0", "in1")
DEFAULT = {"in0": "d0", "in1": "d1"}          # each input port's chain
OUTS = ("o1", "o2", "o3", "o4")
VERDICTS = (*OUTS, "drop")
TCP, UDP, SCTP, ICMP, ICMP6, GRE, ESP, FRAG6 = 6, 17, 132, 1, 58, 47, 50, 44
PROTO_NAMES = {ICMP: "icmp", TCP: "tcp", UDP: "udp", GRE: "gre", ESP: "esp",
               ICMP6: "icmp6", SCTP: "sctp"}
PRIO_DEFAULT = 32768
WIDTH = {4: 32, 6: 128}


# --------------------------------------------------------------------------
# the model: rules, packets, the naive matcher

class Rule:
    """What a rule matches, as the test means it (None: any)."""

    def __init__(self, name):
        self.name = name
        self.prio = PRIO_DEFAULT
        self.in_port = self.vlan = self.proto = None   # vlan: int or "none"
        self.family = 0
        self.src = self.dst = None      # (address int, prefix length)
        self.sport = self.dport = None  # (first, last)
        self.chain = "drop"
        self.keys = {}                  # the section, as written

    def exact_key(self):
        """The 5-tuple of an exact rule (flow.c's hash kind), else None."""
        w = WIDTH.get(self.family)
        if (w is None or self.src is None or self.dst is None or
                self.src[1] != w or self.dst[1] != w or
                self.proto not in (TCP, UDP, SCTP) or
                self.sport is None or self.sport[0] != self.sport[1] or
                self.dport is None or self.dport[0] != self.dport[1] or
                self.vlan is not None or self.in_port is not None):
            return None
        return (self.family, self.src[0], self.dst[0], self.proto,
                self.sport[0], self.dport[0])

    def text(self):
        return f"[flow {self.name}] " + " ".join(
            f"{k}={v}" for k, v in self.keys.items())


class Packet:
    """A frame and what the core reads from it (flow_key.h): kind is
    "other" (not IP), "frag" (IP, ports not read), "ip" (no ports: not
    TCP/UDP/SCTP or L4 cut short) or "ports"."""

    def __init__(self, seq, in_port):
        self.seq, self.in_port = seq, in_port
        self.kind = "other"
        self.vlan = None                # outer VLAN id, None: untagged
        self.family = None
        self.proto = None
        self.src = self.dst = 0
        self.sport = self.dport = 0
        self.frame = b""
        self.note = ""                  # how it was made

    def describe(self):
        f = f"seq {self.seq} in {self.in_port} {self.kind} vlan={self.vlan}"
        if self.family:
            fam = ipaddress.IPv4Address if self.family == 4 else \
                ipaddress.IPv6Address
            f += (f" IPv{self.family} proto={self.proto} {fam(self.src)} -> "
                  f"{fam(self.dst)}")
            if self.kind == "ports":
                f += f" sport={self.sport} dport={self.dport}"
        return f"{f} ({self.note}); {len(self.frame)} B: {self.frame.hex()}"


def in_prefix(addr, pfx, w):
    a, n = pfx
    return n == 0 or (addr >> (w - n)) == (a >> (w - n))


def matches(r, p):
    """Does rule r match packet p?  flow_rule.h, read literally."""
    if p.kind == "other":
        return False            # rules match IPv4 and IPv6 only
    if r.in_port is not None and r.in_port != p.in_port:
        return False
    if r.vlan == "none":
        if p.vlan is not None:
            return False
    elif r.vlan is not None and r.vlan != p.vlan:
        return False
    if r.proto is not None and r.proto != p.proto:
        return False
    if r.family and r.family != p.family:
        return False
    w = WIDTH[p.family]
    if r.src is not None and not in_prefix(p.src, r.src, w):
        return False
    if r.dst is not None and not in_prefix(p.dst, r.dst, w):
        return False
    if r.sport is not None or r.dport is not None:
        if p.kind != "ports":   # ports never match what was not read
            return False
        if r.sport is not None and not r.sport[0] <= p.sport <= r.sport[1]:
            return False
        if r.dport is not None and not r.dport[0] <= p.dport <= r.dport[1]:
            return False
    return True


def ranked(rules):
    """Best first: the highest priority, then the earlier in the file."""
    return sorted(rules, key=lambda r: -r.prio)    # sorted() is stable


def verdict(ranked_rules, p):
    for r in ranked_rules:
        if matches(r, p):
            return r.chain
    return DEFAULT[p.in_port]


# --------------------------------------------------------------------------
# random rules

def fmt_addr(family, a, rnd):
    ip = ipaddress.IPv6Address(a) if family == 6 else ipaddress.IPv4Address(a)
    if family == 6 and rnd.random() < 0.2:
        return ip.exploded
    return str(ip)


def rand_addr_near(rnd, pool, family):
    """An address of the pool with a random number of its low bits
    changed: close to the pool's prefixes at every length."""
    w = WIDTH[family]
    a = rnd.choice(pool[family])
    k = rnd.randrange(w + 1)
    return a ^ (rnd.getrandbits(k) if k else 0)


def rand_prefix(rnd, pool, family, written):
    """(address, length) and its text; host bits are left set in the text
    half of the time (the core must clear them)."""
    w = WIDTH[family]
    a = rand_addr_near(rnd, pool, family)
    n = rnd.choice([0, w, rnd.randrange(w + 1), rnd.randrange(w + 1)])
    net = a >> (w - n) << (w - n) if n else 0
    shown = a if rnd.random() < 0.5 else net
    if n == w and rnd.random() < 0.5:
        written.append(fmt_addr(family, shown, rnd))
    else:
        written.append(f"{fmt_addr(family, shown, rnd)}/{n}")
    return (net, n)


def rand_range(rnd, port_pool):
    """(first, last) and its text."""
    x = rnd.random()
    if x < 0.4:
        p = rnd.choice(port_pool)
        return (p, p), str(p)
    if x < 0.5:
        return None, "0-65535"  # the same as any
    a = rnd.choice(port_pool + [rnd.randrange(65536)])
    b = rnd.choice([a, a + 1, a + rnd.randrange(64), a + rnd.randrange(20000),
                    65535])
    b = min(b, 65535)
    # 0-65535 is every port: `any` (flow_rule.c), not "ports read"
    return (a, b) if (a, b) != (0, 65535) else None, f"{a}-{b}"


def proto_text(rnd, proto):
    name = PROTO_NAMES.get(proto)
    return name if name and rnd.random() < 0.7 else str(proto)


PRIO_LEVELS = (0, 1, 7, 100, 1000, 32767, 32768, 32769, 40000, 65535)


def specificity(r):
    """Roughly how few packets rule r matches (0: all of them)."""
    s = 0.0
    s += 1.5 if r.in_port is not None else 0
    s += 0.5 if r.vlan == "none" else 2 if r.vlan is not None else 0
    s += 1 if r.proto is not None else 0
    for pfx in (r.src, r.dst):
        s += 4 * pfx[1] / WIDTH[r.family] if pfx else 0
    for rng in (r.sport, r.dport):
        s += 0 if rng is None else 2 if rng[0] == rng[1] else 1
    return s


def _copy_match(rnd, r, earlier):
    """An earlier rule's match (a tie or a duplicate key); its keys."""
    src = rnd.choice(earlier)
    for a in ("in_port", "vlan", "proto", "family", "src", "dst",
              "sport", "dport"):
        setattr(r, a, getattr(src, a))
    return {k: v for k, v in src.keys.items()
            if k not in ("priority", "chain")}


def _exact_match(rnd, r, pool, port_pool):
    """An exact 5-tuple (the rte_hash path); its keys."""
    keys = {}
    r.family = rnd.choice((4, 6))
    r.proto = rnd.choice((TCP, UDP, TCP, UDP, SCTP))
    for side in ("src", "dst"):
        a = rand_addr_near(rnd, pool, r.family)
        setattr(r, side, (a, WIDTH[r.family]))
        keys[side] = fmt_addr(r.family, a, rnd) + (
            f"/{WIDTH[r.family]}" if rnd.random() < 0.3 else "")
    for side in ("sport", "dport"):
        p = rnd.choice(port_pool)
        setattr(r, side, (p, p))
        keys[side] = str(p)
    keys["proto"] = proto_text(rnd, r.proto)
    if rnd.random() < 0.2:
        keys[rnd.choice(("vlan", "in_port"))] = "any"
    return keys


def _wild_ports_and_links(rnd, r, keys, vids):
    """in_port and vlan of a wildcard rule, into r and keys."""
    x = rnd.random()
    if x < 0.1:
        r.in_port = rnd.choice(IN_PORTS)
    elif x < 0.12:
        r.in_port = rnd.choice(OUTS)        # receives nothing
    elif x < 0.17:
        keys["in_port"] = "any"
    if r.in_port:
        keys["in_port"] = r.in_port
    x = rnd.random()
    if x < 0.1:
        r.vlan, keys["vlan"] = "none", "none"
    elif x < 0.3:
        r.vlan = rnd.choice(vids)
        keys["vlan"] = str(r.vlan)
    elif x < 0.35:
        keys["vlan"] = "any"


def _wild_match(rnd, r, pool, port_pool, vids):
    """A wildcard match: any field may be left out; its keys."""
    keys = {}
    _wild_ports_and_links(rnd, r, keys, vids)
    fam = rnd.choice((0, 4, 4, 6, 6))
    if fam:
        written = []
        sides = rnd.choice((("src",), ("dst",), ("src", "dst")))
        for side in sides:
            setattr(r, side, rand_prefix(rnd, pool, fam, written))
            keys[side] = written[-1]
        r.family = fam
    x = rnd.random()
    if x < 0.35:
        if rnd.random() < 0.2:
            keys["proto"] = "any"
    else:
        r.proto = rnd.choice((TCP, TCP, UDP, UDP, SCTP, ICMP, ICMP6, GRE,
                              ESP, 0, FRAG6, 255, rnd.randrange(256)))
        keys["proto"] = proto_text(rnd, r.proto)
    if r.proto in (TCP, UDP, SCTP):
        for side in ("sport", "dport"):
            if rnd.random() < 0.45:
                rng, txt = rand_range(rnd, port_pool)
                setattr(r, side, rng)
                keys[side] = txt
            elif rnd.random() < 0.1:
                keys[side] = "any"
    return keys


def _prioritize(rnd, r, keys):
    """Priorities on a few levels (ties), the narrower rules mostly
    higher: broad rules at the top would decide every packet alone."""
    spec = specificity(r)
    top = len(PRIO_LEVELS) - 1 if spec >= 2 else PRIO_LEVELS.index(
        PRIO_DEFAULT)
    level = max(0, min(top, round(spec * 1.5 + rnd.gauss(0, 1.5))))
    if r.exact_key() and rnd.random() < 0.5:
        # any level: the hash's rule must also lose to better wildcards
        level = rnd.randrange(len(PRIO_LEVELS))
    r.prio = PRIO_LEVELS[level]
    if rnd.random() < 0.15 and level > 0:   # between two levels
        r.prio = rnd.randint(PRIO_LEVELS[level - 1], r.prio)
    if r.prio != PRIO_DEFAULT or rnd.random() < 0.3:
        keys["priority"] = str(r.prio)


def rand_rule(rnd, i, pool, port_pool, vids, earlier, exact_share=0.15):
    r = Rule(f"r{i:04d}")
    if earlier and rnd.random() < 0.05:
        keys = _copy_match(rnd, r, earlier)
    elif rnd.random() < exact_share:
        keys = _exact_match(rnd, r, pool, port_pool)
    else:
        keys = _wild_match(rnd, r, pool, port_pool, vids)
    _prioritize(rnd, r, keys)
    r.chain = rnd.choice(VERDICTS)
    items = list(keys.items())
    rnd.shuffle(items)                  # key order does not matter
    r.keys = dict(items)
    r.keys["chain"] = r.chain
    return r


def rand_pools(rnd):
    pool = {4: [rnd.getrandbits(32) for _ in range(6)] +
            [0x0A000001, 0xC0A80101, 0, 0xFFFFFFFF],
            6: [rnd.getrandbits(128) for _ in range(6)] +
            [0x20010DB8 << 96 | 1, 0xFE80 << 112 | 0x1234, 0, (1 << 128) - 1]}
    ports = [0, 1, 53, 80, 443, 1023, 1024, 8080, 65534, 65535] + \
        [rnd.randrange(65536) for _ in range(6)]
    vids = [0, 1, 10, 100, 4095, rnd.randrange(4096)]
    return pool, ports, vids


def rand_rules(rnd, n, pool, port_pool, vids, exact_share=0.15):
    """n rules; never two with the same match and priority (the core
    refuses such a pair: config_flow.c)."""
    rules, seen = [], set()
    while len(rules) < n:
        r = rand_rule(rnd, len(rules), pool, port_pool, vids, rules,
                      exact_share)
        key = (r.prio, r.in_port, r.vlan, r.proto, r.family,
               *(p if p and p[1] else None for p in (r.src, r.dst)),
               r.sport, r.dport)        # a /0 is the family alone
        if key not in seen:
            seen.add(key)
            rules.append(r)
    return rules
