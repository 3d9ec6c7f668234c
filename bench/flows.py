# SPDX-License-Identifier: BSD-3-Clause
"""make bench --systems flows: what flow rules (dom0-core/flow.c) cost on
the 1-NF path.

Every row is the xennetvm 1-NF setup at 64 B (xnv-core busy-polling on
CPU A, one xnv-forwarder on CPU B), fed the example NFs' traffic: 256
UDP/IPv4 flows looped from a pcap (net_null's all-zero frames are not IP,
and rules never look at them).  Only the [flow NAME] sections appended to
the core's config differ:

  0 rules                     the reference: no rule, no classification
  N wildcard rules            N = 1, 100, 4096: IPv4 5-tuples with src
                              and dst prefixes (/8../32, mostly around
                              the traffic's own addresses) and port
                              ranges; every dport range leaves out the
                              traffic's port 9, so none matches but the
                              tries are walked to the last field
  4096 + catch-all hit        4095 of those, and `priority = 0` with no
                              field: every packet is classified by the
                              tries and takes the catch-all's chain
  4096, random sport ranges   the 4096 wildcard rules, 30 % of them with
                              an arbitrary source port range: rte_acl
                              refuses the set whole, the core builds it
                              in parts and looks a packet up part by part
  4096 exact (hash)           4096 exact 5-tuples (the rte_hash path),
                              256 of them the traffic's flows
  4096 exact + in_port        the same rules with `in_port = in`: no
                              longer exact, so in the tries

A rule that matches sends its packets along the port's own chain
(s1 -> out): the rows differ in classification only.  Each row's note
carries the core's "built in X ms" for its rule set (the rte_acl build
at start, median over the reps) and, when it was split, into how many
parts.  Each rule set's row also has "classify alone": flow-cost
(bench/flow_cost.c) on the same pcap and rules, the flow director's ns
per packet away from port I/O and the NF, best of many short rounds (a
figure that holds on a busy machine, where the rates do not).
"""
import ipaddress
import random
import re
import statistics
import subprocess
import sys

from xnvbench import measure, systems

SYSTEM = "flows"
CHAIN = "s1 -> out"             # systems.xnv's chain for one NF
BASE = "0 rules"
WILD_4096 = "4096 wildcard rules"
SPLIT = "4096, random sport ranges"
GOAL_PCT = 85.0                 # 4096 wildcard rules vs 0 rules (the issue)
BUILD_RE = re.compile(r"(\d+) flow rules from the config \((\d+) exact\), "
                      r"built in ([0-9.]+) ms")
COST_RE = re.compile(r"classify ([0-9.]+) ns/packet")
FLOW_COST_RE = re.compile(r"packets: ([0-9.]+) ns per packet")
PARTS_RE = re.compile(r"flow rules in tries: (\d+) IPv4 and (\d+) IPv6 sets")


def traffic_flows(pcap):
    """(src, dst, sport, dport) of each UDP/IPv4 flow of the pcap."""
    from scapy.all import IP, UDP, rdpcap
    return sorted({(p[IP].src, p[IP].dst, p[UDP].sport, p[UDP].dport)
                   for p in rdpcap(str(pcap)) if UDP in p})


def wildcard(n, flows, rnd):
    """n rules that the traffic does not match: dport ranges never hold
    its ports, the prefixes mostly hold its addresses."""
    dports = {f[3] for f in flows}
    rules = []
    while len(rules) < n:
        src, dst, _, _ = rnd.choice(flows)
        r = {"proto": "udp" if rnd.random() < 0.75 else "tcp"}
        if rnd.random() < 0.6:
            a = src if rnd.random() < 0.7 else str(ipaddress.IPv4Address(
                rnd.getrandbits(32)))
            r["src"] = "%s/%d" % (a, rnd.randint(8, 32))
        a = dst if rnd.random() < 0.8 else str(ipaddress.IPv4Address(
            rnd.getrandbits(32)))
        r["dst"] = "%s/%d" % (a, rnd.randint(8, 32))
        x = rnd.random()        # source ports: any, or the usual halves
        if x < 0.3:
            r["sport"] = "1024-65535" if x < 0.2 else "0-1023"
        lo = rnd.randrange(max(dports) + 1, 65536)
        hi = min(65535, lo + rnd.choice((0, 15, 255, 1023, 20000)))
        r["dport"] = "%d-%d" % (lo, hi) if hi > lo else str(lo)
        r["priority"] = str(rnd.choice((100, 1000, 32768, 40000)))
        r["chain"] = "drop"     # never taken: a match would show as loss
        rules.append(r)
    return rules


def random_sports(rules, rnd):
    """The same rules, 30 % of them with an arbitrary source port range
    (start anywhere above 1023, up to 4096 wide)."""
    out = []
    for r in rules:
        r = dict(r)
        if rnd.random() < 0.3:
            lo = rnd.randrange(1024, 65536)
            r["sport"] = "%d-%d" % (lo, min(65535, lo + rnd.randrange(4096)))
        out.append(r)
    return out


def exact(n, flows, in_port=None):
    """n exact UDP 5-tuples; the first len(flows) are the traffic's."""
    rules = []
    for i in range(n):
        src, dst, sport, dport = flows[i % len(flows)]
        if i >= len(flows):     # the same hosts, ports nobody sends from
            sport = 20000 + i
        r = {"proto": "udp", "src": src, "dst": dst, "sport": str(sport),
             "dport": str(dport), "chain": CHAIN}
        if in_port:
            r["in_port"] = in_port
        rules.append(r)
    return rules


def rule_sets(flows):
    """[(config, [rule dict])], in run order."""
    rnd = random.Random(4096)
    wild = wildcard(4096, flows, rnd)
    return [
        (BASE, []),
        ("1 wildcard rule", wild[:1]),
        ("100 wildcard rules", wild[:100]),
        (WILD_4096, wild),
        ("4096 rules, catch-all hit", wild[:4095] +
         [{"priority": "0", "chain": CHAIN}]),
        (SPLIT, random_sports(wild, random.Random(1))),
        ("4096 exact (hash)", exact(4096, flows)),
        ("4096 exact + in_port (tries)", exact(4096, flows, "in")),
    ]


def sections(rules):
    out = []
    for i, r in enumerate(rules):
        out.append("[flow b%04d]" % i)
        out += ["%s = %s" % kv for kv in r.items()]
    return "\n".join(out) + "\n" if out else ""


def classify_cost(ctx, rules, pcap, label):
    """ns per packet of the flow director alone on the pcap's packets with
    these rules (flow-cost, best of its short rounds, on CPU A), or None
    when there is no rule or flow-cost failed (said on stderr)."""
    if not rules:
        return None
    d, prefix = ctx.new_run(label + "-flow-cost")
    (d / "rules.txt").write_text("".join(
        " ".join("%s=%s" % kv for kv in r.items() if kv[0] != "chain") + "\n"
        for r in rules))
    argv = ["taskset", "-c", str(ctx.cpu_a),
            str(ctx.build / "bench" / "flow-cost"), "-l", str(ctx.cpu_a),
            "--no-pci", "--no-huge", "-m", "256", "--file-prefix", prefix,
            "--log-level=lib.*:error", "--", str(pcap), str(d / "rules.txt")]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    m = FLOW_COST_RE.search(r.stdout)
    if r.returncode != 0 or not m:
        print("  flow-cost failed (%d): %s" % (r.returncode,
              (r.stderr or r.stdout).strip()[-300:]), file=sys.stderr)
        return None
    return float(m.group(1))


def points(o, ctx, fwd, point_cls, src, pcap):
    """The Points of this section (bench.py's Point class)."""
    pts = []
    cost = {}
    for config, rules in rule_sets(traffic_flows(pcap)):
        text = sections(rules)

        def run(label, text=text, config=config, rules=rules):
            if config not in cost:
                cost[config] = classify_cost(ctx, rules, pcap, label)
            setup, d = systems.xnv(ctx, 64, [fwd], label, src)
            with open(d / "bench.ini", "a") as f:
                f.write(text)
            s = measure.measure(setup, d, o.warmup, o.duration, o.min_share)
            log = (d / "xnv-core.log").read_text(errors="replace")
            m = BUILD_RE.search(log)
            parts = PARTS_RE.search(log)
            s.build = (int(m.group(1)), int(m.group(2)),
                       float(m.group(3)), parts and parts.groups()) \
                if m else None
            s.classify_ns = cost[config]
            return s
        pts.append(point_cls(SYSTEM, config, 64, 1, "busy", run))
    return pts


def notes(p):
    """The note of a Point's row: the rule set's build, median ms."""
    if p.system != SYSTEM:
        return []
    b = [s.build for s in p.samples if getattr(s, "build", None)]
    ns = [s.classify_ns for s in p.samples
          if getattr(s, "classify_ns", None) is not None]
    cost = ["classify %.2f ns/packet (flow-cost)" % ns[0]] if ns else []
    if not b:
        return cost if p.config == BASE else ["no build line in the log"]
    split = " as %s IPv4 and %s IPv6 sets" % b[0][3] if b[0][3] else ""
    return ["%d rules (%d exact) built%s in %.1f ms (median of %d; "
            "%.1f..%.1f)" % (b[0][0], b[0][1], split,
                             statistics.median(x[2] for x in b), len(b),
                             min(x[2] for x in b), max(x[2] for x in b))] \
        + cost


def markdown(rows):
    """The section of results.md; "" when the section did not run."""
    rows = [r for r in rows if r["system"] == SYSTEM]
    if not rows:
        return ""
    base = next((r.get("mpps_median") for r in rows
                 if r["config"] == BASE), None)
    L = ["", "## Flow rules (64 B, 1 NF, 256 UDP/IPv4 flows from a pcap)",
         "", "| rules | Mpps median (min..max) | reps | vs 0 rules | "
         "rule set built (ms) | classify alone (ns/packet) |",
         "|---|---|---|---|---|---|"]
    pct = {}
    for r in rows:
        m = r.get("mpps_median")
        if m in (None, ""):
            L.append("| %s | not measured | | | | |" % r["config"])
            continue
        pct[r["config"]] = 100 * m / base if base else None
        b = re.search(r"built(?: as (\d+) IPv4 and (\d+) IPv6 sets)? in "
                      r"([0-9.]+) ms", str(r.get("note", "")))
        c = COST_RE.search(str(r.get("note", "")))
        L.append("| %s | %.3f (%.3f..%.3f) | %d%s | %s | %s | %s |" % (
            r["config"], m, r["mpps_min"], r["mpps_max"], r["reps"],
            " (%d disturbed)" % r["disturbed"] if r.get("disturbed") else "",
            "%.1f %%" % pct[r["config"]] if pct[r["config"]] else "n/a",
            "-" if not b else b.group(3) if not b.group(1) else
            "%s (%s + %s sets)" % (b.group(3), b.group(1), b.group(2)),
            c.group(1) if c else "-"))
    got = pct.get(WILD_4096)
    L += ["", "Goal: 4096 wildcard rules at most %.0f %% below the no-rule "
          "rate (>= %.0f %% of it): %s." % (
              100 - GOAL_PCT, GOAL_PCT, "not measured" if got is None else
              "**%s** (%.1f %%)" % ("PASS" if got >= GOAL_PCT else "MISS",
                                    got))]
    return "\n".join(L) + "\n"
