# SPDX-License-Identifier: BSD-3-Clause
"""xnv-ctl's command line: options, subcommands, their help (ctl.py holds
the commands and main()).  Python 3 standard library only."""
import argparse
import sys

from .ctl import (DEFAULT_SOCKET, TIMEOUT_S, cmd_chain_set, cmd_chain_unset, cmd_clear, cmd_control, cmd_domains, cmd_fabric, cmd_flow_add, cmd_flow_clear, cmd_flow_del, cmd_flow_list, cmd_flow_reload, cmd_groups, cmd_info, cmd_latency, cmd_metrics, cmd_nf_kick, cmd_nf_release, cmd_nf_stats, cmd_nfs, cmd_ports, cmd_reload, cmd_services, cmd_show_config, cmd_stats, cmd_watch, cmd_workers)
from .version import version


def listen_addr(text):
    """argparse type of --listen: HOST:PORT ([::1]:PORT for IPv6)."""
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"'{text}' is not HOST:PORT (e.g. 127.0.0.1:9405)")
    return host, int(port)


def seconds(text):
    """argparse type of --interval, --timeout: a finite number > 0."""
    try:
        v = float(text)
    except ValueError:
        v = 0.0
    if not 0 < v < float("inf"):
        raise argparse.ArgumentTypeError(f"'{text}' is not a number > 0")
    return v


def count(text):
    """argparse type of --count: an integer >= 0."""
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer >= 0")
    return int(text)


class Parser(argparse.ArgumentParser):
    def error(self, message):       # one line, not usage + message
        sys.stderr.write(f"{self.prog}: {message} (see {self.prog} --help)\n")
        sys.exit(2)


def common_options():
    """The options valid before or after the subcommand."""
    S = argparse.SUPPRESS
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--socket", metavar="PATH", default=S,
                        help="xnv-core's NF socket, any spelling (or its telemetry "
                        f"socket) (default: $XNV_SOCKET, else {DEFAULT_SOCKET}'s core, "
                        "else the only core running)")
    common.add_argument("--file-prefix", metavar="P", default=S,
                        help="the core's DPDK file-prefix instead (xnv-XXXXXXXX)")
    common.add_argument("--json", action="store_true", default=S,
                        help="machine output: the same data as JSON")
    common.add_argument("--timeout", type=seconds, default=S, metavar="S",
                        help=f"give up on a reply after S seconds; a busy core is asked "
                        f"again meanwhile (default {TIMEOUT_S:g})")
    return common


def adder(common):
    """add(parent, name, fn, help, **kw): a subcommand running fn."""
    def add(parent, name, fn, hlp, **kw):
        sp = parent.add_parser(name, parents=[common], help=hlp, description=hlp,
                               formatter_class=argparse.RawDescriptionHelpFormatter, **kw)
        sp.set_defaults(fn=fn)
        return sp
    return add


def add_views(sub, add):
    """The read-only views, and watch."""
    add(sub, "info", cmd_info, "core summary")
    add(sub, "ports", cmd_ports, "ports: device, group, counters, chain")
    add(sub, "groups", cmd_groups, "trust groups: pool size, free buffers, copies")
    lt = add(sub, "latency", cmd_latency,
             "per port: rx-to-tx latency of the packets it sent ([core] latency = on)")
    lt.add_argument("--reset", action="store_true",
                    help="empty the histograms after reading them")
    add(sub, "workers", cmd_workers,
        "[core] workers: per lcore, its NFs, packets received, sent, "
        "steered to other lcores, dropped")
    add(sub, "fabric", cmd_fabric,
        "fabric hops: the chain each takes here, packets in and out")
    add(sub, "services", cmd_services, "services: NF instances and replica picks")
    add(sub, "nfs", cmd_nfs, "NFs: service, group, state, counters, rx ring use")
    add(sub, "domains", cmd_domains,
        "domains with NFs or a quarantine: NFs, grant frames, quarantine")
    add(sub, "stats", cmd_stats, "totals and core drop counters")
    add(sub, "clear", cmd_clear, "counters back to 0: ports, NFs, groups, services, drops",
        epilog="Not reset: buffers held and link state (states), flow rule hits, "
        "latency\nhistograms (latency --reset), control counters, log_dropped, the "
        "NFs' own\ncounters (nf stats), af_packet kernel ring drops.\nexample:\n"
        "  xnv-ctl clear")
    add(sub, "control", cmd_control,
        "control plane: NF requests, refusals, limits hit")
    m = add(sub, "metrics", cmd_metrics,
            "Prometheus / OpenMetrics text of every counter (python3-prometheus-client)",
            epilog="Without --listen: one exposition on stdout (e.g. for node-exporter's "
            "textfile\ncollector). With it: an HTTP server; every scrape reads the core "
            "afresh\n(xnv_up 0 while it is not there). Metric names: CONTROL.md.\n"
            "example:\n  xnv-ctl metrics --listen 127.0.0.1:9405")
    m.add_argument("--listen", type=listen_addr, default=None, metavar="HOST:PORT",
                   help="serve HTTP at HOST:PORT (port 0: any free port, printed)")
    w = add(sub, "watch", cmd_watch, "live rates: port and NF packets/s, drops/s")
    w.add_argument("--interval", type=seconds, default=1.0, metavar="S",
                   help="seconds between refreshes (default 1)")
    w.add_argument("--count", type=count, default=0, metavar="N",
                   help="stop after N refreshes (default: until Ctrl-C)")


FLOW_ADD_EPILOG = """\
MATCH: any of these KEY=VALUE fields; an omitted field (or one given as `any`)
matches anything:
  priority=N       0..65535, default 32768; the highest wins, then the older rule
  in_port=PORT     the port the packet came in on
  vlan=N|none      outermost VLAN id 0..4095; none: untagged frames only
  proto=NAME|N     tcp, udp, icmp, icmp6, sctp, gre, esp or 0..255 (or just the
                   name as a word: udp)
  src=ADDR[/LEN]   IPv4 or IPv6 address or prefix (no /LEN: one host)
  dst=ADDR[/LEN]
  sport=N[-M]      a port or a range FIRST-LAST (needs proto tcp, udp or sctp)
  dport=N[-M]
Rules match IPv4 and IPv6 packets only. Everything after 'chain' is the chain:
'fwd-b -> out', or steps as words: fwd-b out (services, ports or drop).
The rule is printed back as the core understood it, every field written.
examples:
  xnv-ctl flow add proto=udp src=10.0.0.1 dst=10.0.0.2 dport=53 chain drop
  xnv-ctl flow add tcp dst=10.1.0.0/16 dport=8000-8080 chain 'fwd-b -> out'
  xnv-ctl flow add priority=40000 in_port=in vlan=none chain fwd-a out"""


def add_steering(sub, add, common):
    """flow list|add|del|clear|reload, nf release and chain set."""
    flow = sub.add_parser("flow", help="flow rules (matching packets take their "
                          "own chain)", parents=[common]).add_subparsers(
        dest="flow_cmd", metavar="list|add|del|clear|reload", required=True)
    add(flow, "list", cmd_flow_list, "flow rules: name, every field, hits, chain")
    a = add(flow, "add", cmd_flow_add, "add a rule steering the packets it "
            "matches to a chain", epilog=FLOW_ADD_EPILOG)
    a.add_argument("spec", nargs=argparse.REMAINDER, metavar="MATCH... chain STEPS")
    d = add(flow, "del", cmd_flow_del, "remove a flow rule")
    d.add_argument("id", type=int, metavar="ID", help="rule id (see flow list)")
    add(flow, "clear", cmd_flow_clear, "remove every flow rule, at once")
    add(flow, "reload", cmd_flow_reload,
        "replace every flow rule with the config file's [flow NAME] sections",
        epilog="The core reads its config file again, only its [flow NAME] sections, "
        "and puts\nthose rules in force at once, in place of all the rules it has "
        "(rules added\nwith `flow add` too); ids are 1..N in file order. A bad "
        "section changes\nnothing.\nexample:\n  xnv-ctl flow reload")
    nf = sub.add_parser("nf", help="one NF: its counters; NF domains",
                        parents=[common]).add_subparsers(
        dest="nf_cmd", metavar="stats|kick|release", required=True)
    k = add(nf, "kick", cmd_nf_kick, "detach an NF so that it attaches again",
            epilog="The core detaches the NF as it does when it shuts down cleanly: "
            "the buffers it\nheld are reclaimed, an NF started with --reattach "
            "attaches again at once (a\nnew NF id, the core's counters of it from "
            "0, its own counters kept), one\nwithout exits 0. Its domain is not "
            "quarantined.\nexample:\n  xnv-ctl nf kick fw-1")
    k.add_argument("name", metavar="NAME", help="NF name or id (an attached NF)")
    s = add(nf, "stats", cmd_nf_stats, "the counters an NF publishes itself, live",
            epilog="NAME: the NF's name (or its id), as `xnv-ctl nfs` shows it. The NF "
            "publishes them\nwith xnv_nf_stat_register() (<xnv/nf.h>).\nexample:\n"
            "  xnv-ctl nf stats fw-1")
    s.add_argument("name", metavar="NAME", help="NF name or id")
    r = add(nf, "release", cmd_nf_release,
            "end a domain's quarantine: its NFs may attach again",
            epilog="DOMAIN: the Xen domid (host mode: the domain of the NF's "
            "connection), as `xnv-ctl domains` shows it\nexample:\n  xnv-ctl nf release 7")
    r.add_argument("domain", type=int, metavar="DOMAIN", help="domain number")
    chain = sub.add_parser("chain", help="port chains", parents=[common]).add_subparsers(
        dest="chain_cmd", metavar="set|unset", required=True)
    u = add(chain, "unset", cmd_chain_unset, "a port back to tx only: no chain, rx stopped",
            epilog="Packets already in the core finish their chain; what the port's "
            "NIC holds stays\nthere until a chain is set again (chain set).\n"
            "example:\n  xnv-ctl chain unset out")
    u.add_argument("port", metavar="PORT", help="port name")
    c = add(chain, "set", cmd_chain_set, "set a port's default chain",
            epilog="example:\n  xnv-ctl chain set in 'fwd-b -> out'    "
            "(or: xnv-ctl chain set in fwd-b out)")
    c.add_argument("port", metavar="PORT", help="port name")
    c.add_argument("steps", nargs=argparse.REMAINDER, metavar="STEPS",
                   help="services, ports or drop")


def build_parser():
    common = common_options()
    p = Parser(prog="xnv-ctl", parents=[common],
               description="Inspect and steer a running xnv-core (DPDK telemetry).",
               formatter_class=argparse.RawDescriptionHelpFormatter,
               epilog="examples:\n  xnv-ctl --socket /run/xnv/xnv.sock nfs\n"
               "  xnv-ctl flow add proto=udp src=10.0.0.1 dst=10.0.0.2 dport=53 "
               "chain 'fwd-b -> out'\n  xnv-ctl flow del 1\n  xnv-ctl flow reload\n"
               "  xnv-ctl chain set in 'fwd-a -> fwd-b -> out'\n"
               "  xnv-ctl watch --interval 1\n"
               "  xnv-ctl nf stats fw-1          (an NF's own counters, live)\n"
               "  xnv-ctl show config            (the config the core runs)\n"
               "  xnv-ctl reload                 (the file again: live parts, or nothing)\n"
               "  xnv-ctl metrics --listen 127.0.0.1:9405   (Prometheus)\n"
               "With no --socket: the default socket's core, else the only one running.\n"
               "Errors: one line on stderr; exit 2 for a usage error (several cores "
               "and no --socket too),\n1 for any other (no core, the core refused).")
    p.add_argument("--version", action="version",
                   version=f"xnv-ctl (XenNetVM) {version()}")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", required=True)
    add = adder(common)
    add_views(sub, add)
    add_steering(sub, add, common)
    add(sub, "reload", cmd_reload, "read the config file again and apply what may "
        "change live, or nothing",
        epilog="Live: each port's chain and rx_rate; [core] error_budget, "
        "heartbeat_timeout_ms,\nhoard_timeout_ms, stall_timeout_ms; the [flow NAME] "
        "sections (as `flow reload`:\nevery rule replaced). Any other difference (a "
        "key, a section added or removed)\nrefuses the whole reload, naming the first "
        "one, and nothing changes; so does a\nbad file. The socket is never read "
        "again.\nexample:\n  xnv-ctl reload")
    sh = sub.add_parser("show", help="the core's effective config",
                          parents=[common]).add_subparsers(
        dest="show_cmd", metavar="config", required=True)
    add(sh, "config", cmd_show_config, "the config as the core runs it, in the "
        "config file's syntax",
        epilog="Every key the core runs with (defaults written out; max_held and\n"
        "max_grant_frames_per_domain left out while derived), each port's chain as "
        "it\nis now, and the flow rules in force as [flow NAME] sections (a rule "
        "added with\n`flow add` as [flow ruleID]). The output is a config file "
        "xnv-core takes.\nexample:\n  xnv-ctl show config > now.ini")
    return p
