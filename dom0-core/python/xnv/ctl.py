# SPDX-License-Identifier: BSD-3-Clause
"""xnv-ctl: the operator's client of xnv-core's control plane.

It speaks DPDK telemetry v2: a SOCK_SEQPACKET unix socket at
<runtime dir>/dpdk/<prefix>/dpdk_telemetry.v2 that greets with a JSON object,
then answers each request "CMD[,PARAMS]" with one JSON object {CMD: data}.
Which core: locate.py (the pointer file a core writes next to its NF
socket, or the only core running); its commands are listed in dom0-core/CONTROL.md.  Run by
dom0-core/xnv-ctl; Python 3 standard library only.
"""
import argparse
import json
import os
import signal
import sys
import time

from .locate import LocateError, locate
from .telemetry import NotListening, Telemetry, TelemetryError
from .version import version

DEFAULT_SOCKET = "/run/xnv/xnv.sock"
TIMEOUT_S = 5.0         # default --timeout; the core gives up on a command after 2 s
# A flow rule's fields (flow_rule.h), in the order the core writes them;
# every one may be left out (or given as `any`): it then matches anything.
MATCH_KEYS = ("priority", "in_port", "vlan", "proto", "src", "dst", "sport", "dport")
PROTOS = ("tcp", "udp", "icmp", "icmp6", "sctp", "gre", "esp")   # names the core knows
FLOW_PAGE = 500         # flow_cmds.c: ids per /xnv/flow/list reply


class CtlError(Exception):
    """A one-line failure: printed as "xnv-ctl: MSG", exit with `status`."""
    def __init__(self, msg, status=1):
        super().__init__(msg)
        self.status = status


# --------------------------------------------------------------------------
# finding and talking to the core

class Core:
    """One telemetry connection to xnv-core, opened by the first call."""

    def __init__(self, path, hint, timeout):
        self.path, self.hint, self.timeout, self.tel = path, hint, timeout, None

    def call(self, cmd, param=None, check=True):
        """Run CMD; its data, or CtlError on {"error": ...} if check."""
        try:
            if self.tel is None:
                self.tel = Telemetry(self.path, self.timeout)
            data = self.tel.call(cmd, param)
        except NotListening:
            raise CtlError(f"no xnv-core answering at {self.path} ({self.hint})", 2) from None
        except TelemetryError as e:
            raise CtlError(str(e)) from None
        if data is None:
            raise CtlError(f"the core does not know {cmd} (not an xnv-core, or an older one)")
        if check and isinstance(data, dict) and "error" in data:
            raise CtlError(data["error"])
        return data

    def infos(self, what):
        """Every /xnv/WHAT/info, for the ids of /xnv/WHAT/list (an object
        that went away in between is left out)."""
        out = [self.call(f"/xnv/{what}/info", i, check=False)
               for i in self.ids(what)]
        return [d for d in out if "error" not in d]

    def ids(self, what):
        """The ids of /xnv/WHAT/list; the flow list comes in pages of
        FLOW_PAGE (telemetry arrays hold 512): a full page asks for more."""
        if what != "flow":
            return self.call(f"/xnv/{what}/list")
        out, start = [], 1
        while True:
            page = self.call("/xnv/flow/list", start)
            out += page
            if len(page) < FLOW_PAGE:
                return out
            start = page[-1] + 1


def connect(args):
    """The core the options name (locate.py); CtlError (exit 2) when there
    is no single one."""
    sock = getattr(args, "socket", None) or os.environ.get("XNV_SOCKET")
    try:
        found = locate(sock, getattr(args, "file_prefix", None), DEFAULT_SOCKET)
    except LocateError as e:
        raise CtlError(str(e), 2) from None
    return Core(found.path, found.hint, getattr(args, "timeout", TIMEOUT_S))


# --------------------------------------------------------------------------
# output

def table(headers, rows, out=None):
    """Columns two spaces apart, numbers right-aligned; printed, or its
    lines appended to `out`."""
    rows = [[str(c) for c in r] for r in rows]
    width = [max(map(len, col)) for col in zip(headers, *rows)]
    right = [bool(rows) and all(r[i].isdigit() for r in rows) for i in range(len(headers))]
    lines = ["  ".join(c.rjust(w) if rt else c.ljust(w)
                       for c, w, rt in zip(r, width, right)).rstrip() for r in [headers, *rows]]
    if out is None:
        print("\n".join(lines))
    else:
        out += lines


def keyvals(d):
    table(["KEY", "VALUE"], [[k, v] for k, v in d.items()])


def ids(lst):
    return ",".join(map(str, lst)) or "-"


def flow_rule_text(f):
    """A rule (a /xnv/flow/info dict) as `flow add` takes it back, every
    field written (`any` for a wildcard)."""
    return " ".join(f"{k}={f[k]}" for k in MATCH_KEYS)


def chain_text(steps):
    return " -> ".join(steps) or "-"


def show(args, data, human):
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2))
    else:
        human(data)


# --------------------------------------------------------------------------
# commands

def cmd_info(core, args):
    show(args, core.call("/xnv/info"), keyvals)


def cmd_stats(core, args):
    show(args, core.call("/xnv/stats"), keyvals)


def cmd_control(core, args):
    show(args, core.call("/xnv/control"), keyvals)


def link_text(p):
    """up / down (a core without link counters: -)."""
    return {1: "up", 0: "down"}.get(p.get("link_up"), "-")


def cmd_ports(core, args):
    show(args, core.infos("port"), lambda ps: table(
        ["ID", "NAME", "DEV", "GROUP", "RX", "TX", "MISSED", "NOMBUF", "LINK",
         "CHAIN"],
        [[p["index"], p["name"], p["dev"], p["group"], p["rx"], p["tx"],
          p["rx_missed"], p["rx_nombuf"], link_text(p), chain_text(p["chain"])]
         for p in ps]))


def cmd_latency(core, args):
    """Needs [core] latency = on (the core's error says so otherwise)."""
    lat = [core.call("/xnv/port/latency", i) for i in core.ids("port")]
    if args.reset:
        for p in lat:
            core.call("/xnv/port/latency/reset", p["index"])
    us = [("P50_US", "p50_ns"), ("P99_US", "p99_ns"), ("P99.9_US", "p999_ns"),
          ("MAX_US", "max_ns")]
    show(args, lat, lambda ps: table(
        ["ID", "PORT", "PACKETS", *(h for h, _ in us)],
        [[p["index"], p["name"], p["count"],
          *("%.2f" % (p[k] / 1e3) for _, k in us)] for p in ps]))


def cmd_groups(core, args):
    show(args, core.infos("group"), lambda gs: table(
        ["ID", "NAME", "POOL", "FREE", "COPIES_IN", "COPIES_TO"],
        [[g["index"], g["name"], g["pool_bufs"], g["free"], g["copies_in"],
          ids(g["copies_to"])] for g in gs]))


def cmd_services(core, args):
    show(args, core.infos("service"), lambda ss: table(
        ["ID", "NAME", "INSTANCES", "AFFINITY", "SPILL", "NO_INSTANCE"],
        [[s["id"], s["name"], ids(s["instances"]), s["picks_affinity"],
          s["picks_spill"], s["no_instance"]] for s in ss]))


def cmd_nfs(core, args):
    show(args, core.infos("nf"), lambda ns: table(
        ["ID", "NAME", "SERVICE", "GROUP", "INST", "STATE", "RX", "TX", "DROP",
         "BAD", "HELD", "RX_RING"],
        [[n["id"], n["name"], n["service"], n["group"], n["instance"],
          "quarantined" if n.get("quarantined") else n["state"],
          n["rx"], n["tx"], n["drop"], n["bad"], n["held"],
          f'{n["rx_ring_used"]}/{n["ring_size"]}'] for n in ns]))


def cmd_domains(core, args):
    show(args, core.infos("domain"), lambda ds: table(
        ["DOMAIN", "NAME", "NFS", "FRAMES", "BUSY", "QUARANTINED", "REFUSED", "REASON"],
        [[d["domain"], d["name"], f'{d["nfs"]}/{d["max_nfs"]}',
          f'{d["frames"]}/{d["max_frames"]}', d["busy_frames"],
          "yes" if d["quarantined"] else "no", d["refused"], d["reason"]] for d in ds]))


def cmd_nf_release(core, args):
    r = core.call("/xnv/nf/release", str(args.domain))
    show(args, r, lambda r: print(
        f'{r["name"]}: released (was quarantined: {r["was"]}; '
        f'{r["refused"]} attaches refused meanwhile)'))


def find_nf(core, name):
    """The /xnv/nf/info of the NF called `name` (or with that id); the
    attached one when a gone one had the name too."""
    nfs = [n for n in core.infos("nf") if n["name"] == name or str(n["id"]) == name]
    nfs.sort(key=lambda n: n["state"] != "attached")
    if not nfs:
        raise CtlError(f"no NF named '{name}' (see xnv-ctl nfs)")
    return nfs[0]


def cmd_nf_stats(core, args):
    """The counters an NF publishes itself (xnv_nf_stat_register)."""
    n = find_nf(core, args.name)
    if "stats" not in n:
        raise CtlError("the core does not show NF counters (an older xnv-core)")
    r = {"id": n["id"], "name": n["name"], "state": n["state"], "stats": n["stats"],
         "stats_invalid": n["stats_invalid"]}

    def human(r):
        table(["STAT", "VALUE"], [[k, v] for k, v in r["stats"].items()])
        if r["stats_invalid"]:
            print(f"({r['stats_invalid']} slots with a bad or repeated name not shown)")
    show(args, r, human)


def cmd_flow_list(core, args):
    show(args, core.infos("flow"), lambda fs: table(
        ["ID", "NAME", "PRIO", "IN_PORT", "VLAN", "PROTO", "SRC", "DST", "SPORT",
         "DPORT", "HITS", "CHAIN"],
        [[f["id"], f["name"] or "-", *(f[k] for k in MATCH_KEYS), f["hits"],
          chain_text(f["chain"])] for f in fs]))


def steps_text(tokens, what):
    """'fwd-a -> out', or words 'fwd-a out' / 'fwd-a,out' -> 'fwd-a -> out'."""
    text = " ".join(tokens)
    if text.rstrip().endswith("-"):     # chain a -> b unquoted: the shell took "> b"
        raise CtlError(f"{what}: chain ends in '-': quote it ('fwd-a -> out'), "
                       "the shell reads '>' as a redirection", 2)
    parts = text.split("->") if "->" in text else text.replace(",", " ").split()
    parts = [p.strip() for p in parts]
    if not any(parts):
        raise CtlError(f"{what}: no chain steps given (e.g. 'fwd-a -> out')", 2)
    return " -> ".join(parts)


def flow_spec(tokens):
    """MATCH... chain STEPS -> the /xnv/flow/add param.  Only the keys are
    checked here (a usage error, exit 2); the core checks the values and
    names the one that is wrong."""
    match, steps, in_chain = [], [], False
    for arg in tokens:
        if in_chain:
            steps.append(arg)
            continue
        for t in arg.split():       # 'src=A dst=B' quoted as one argument
            if in_chain:
                steps.append(t)
            elif t == "chain" or t.startswith("chain="):
                in_chain = True
                steps.append(t[6:])
            elif t in PROTOS:
                match.append(f"proto={t}")
            elif "=" in t and t.split("=", 1)[0] in MATCH_KEYS:
                match.append(t)
            else:
                raise CtlError(f"flow add: '{t}' is not KEY=VALUE with KEY one of "
                               f"{', '.join(MATCH_KEYS)}, nor 'chain'", 2)
    if not in_chain:
        raise CtlError("flow add: missing chain STEPS (e.g. chain 'fwd-b -> out')", 2)
    return " ".join(match + ["chain=" + steps_text(steps, "flow add")])


def cmd_flow_add(core, args):
    """Prints the rule as the core understood it (wildcards, prefixes)."""
    r = core.call("/xnv/flow/add", flow_spec(args.spec))
    show(args, r, lambda r: print(f"added flow rule {r['id']}: {flow_rule_text(r)} "
                                  f"chain {chain_text(r['chain'])}"))


def cmd_flow_del(core, args):
    r = core.call("/xnv/flow/del", args.id)
    show(args, r, lambda r: print(f"removed flow rule {r['id']}"))


def cmd_flow_clear(core, args):
    r = core.call("/xnv/flow/clear")
    show(args, r, lambda r: print(f"flow rules cleared: {r['removed']} removed"))


def cmd_flow_reload(core, args):
    r = core.call("/xnv/flow/reload")
    show(args, r, lambda r: print(f"flow rules reloaded from the config: {r['rules']} "
                                  f"in force ({r['removed']} before)"))


def cmd_chain_set(core, args):
    if not args.steps:
        raise CtlError("chain set: usage: chain set PORT STEPS", 2)
    param = f"{args.port} {steps_text(args.steps, 'chain set')}"
    show(args, core.call("/xnv/chain/set", param),
         lambda r: print(f"port {r['port']}: chain {chain_text(r['chain'])}"))


def config_sections(core):
    """[(section header, {key: value text})] of the effective config, in
    the config file's order: [core], groups, ports, services, flows."""
    def keys(d):
        out = {}
        for k, v in d.items():
            if k in ("section", "path") or v in ("", [], "any"):
                continue
            out[k] = chain_text(v) if isinstance(v, list) else str(v)
        return out
    secs = [("core", keys(core.call("/xnv/config")))]
    for kind in ("group", "port", "service"):
        for i in core.ids(kind):
            d = core.call(f"/xnv/config/{kind}", i)
            secs.append((f"{kind} {d['section']}", keys(d)))
    for f in core.infos("flow"):
        d = {k: f[k] for k in MATCH_KEYS}
        d["chain"] = f["chain"]
        secs.append((f"flow {f['name'] or 'rule' + str(f['id'])}", keys(d)))
    return secs


def cmd_show_config(core, args):
    """The config as the core runs it, in the config file's syntax."""
    path = core.call("/xnv/config")["path"]
    secs = config_sections(core)

    def human(secs):
        print(f"; xnv-core's effective config (loaded from {path}; chains and "
              "flow rules as they are now)")
        for name, kv in secs:
            print(f"\n[{name}]")
            for k, v in kv.items():
                print(f"{k} = {v}")
    show(args, dict(secs) if getattr(args, "json", False) else secs, human)


def cmd_reload(core, args):
    r = core.call("/xnv/reload")
    show(args, r, lambda r: print(f"reloaded {r['path']}: chains, rx_rate, limits; "
                                  f"{r['rules']} flow rules in force ({r['removed']} before)"))


def cmd_chain_unset(core, args):
    r = core.call("/xnv/chain/unset", args.port)
    show(args, r, lambda r: print(f"port {r['port']}: no chain, rx stopped (tx only)"))


def cmd_clear(core, args):
    r = core.call("/xnv/clear")
    show(args, r, lambda r: print(f"counters cleared: {r['cleared']}\nnot reset: "
                                  + "; ".join(r["kept"])))


def cmd_nf_kick(core, args):
    r = core.call("/xnv/nf/kick", args.name)
    show(args, r, lambda r: print(f"NF {r['name']} (id {r['id']}) detached: with "
                                  "--reattach it attaches again"))


def sample(core):
    """Counters now; NFs keyed by (id, pid): a reused id is another NF."""
    return {"t": time.monotonic(), "stats": core.call("/xnv/stats"),
            "ports": core.infos("port"),
            "nfs": {(n["id"], n["pid"]): n for n in core.infos("nf")}}


def rates(a, b):
    """Per-second rates between two samples."""
    dt = b["t"] - a["t"]

    def rate(new, old, key):
        return round(max(0, new[key] - old.get(key, new[key])) / dt)
    ports = [{"name": p["name"], "rx_pps": rate(p, q, "rx"), "tx_pps": rate(p, q, "tx")}
             for p, q in zip(b["ports"], a["ports"])]
    nfs = []
    for key, n in b["nfs"].items():
        old = a["nfs"].get(key, {})     # {}: attached since the last sample
        nfs.append({"id": n["id"], "name": n["name"], "service": n["service"],
                    "state": n["state"], "rx_pps": rate(n, old, "rx"),
                    "tx_pps": rate(n, old, "tx"), "drop_per_s": rate(n, old, "drop")})
    drops = {k[5:]: rate(b["stats"], a["stats"], k) for k in b["stats"] if k.startswith("drop_")}
    return {"time": round(time.time(), 3), "interval_s": round(dt, 3), "ports": ports,
            "nfs": nfs, "core_drops_per_s": sum(drops.values()), "drops_per_s": drops}


def rates_text(r):
    lines = [time.strftime("%H:%M:%S ", time.localtime(r["time"]))
             + f"rates over {r['interval_s']:.2f} s"]
    table(["PORT", "RX_PPS", "TX_PPS"], [[p["name"], p["rx_pps"], p["tx_pps"]]
                                         for p in r["ports"]], lines)
    table(["NF", "NAME", "SERVICE", "STATE", "RX_PPS", "TX_PPS", "DROP/S"],
          [[n["id"], n["name"], n["service"], n["state"], n["rx_pps"], n["tx_pps"],
            n["drop_per_s"]] for n in r["nfs"]], lines)
    why = ", ".join(f"{k} {v}" for k, v in r["drops_per_s"].items() if v)
    lines.append(f"core drops/s: {r['core_drops_per_s']}" + (f" ({why})" if why else ""))
    return "\n".join(lines) + "\n"


def cmd_watch(core, args):
    """A block per interval: redrawn in place on a terminal, else appended
    (blank line between blocks); --json: one JSON object per line."""
    tty, n = sys.stdout.isatty(), 0
    prev = sample(core)
    while args.count == 0 or n < args.count:
        n += 1
        time.sleep(max(0.0, prev["t"] + args.interval - time.monotonic()))
        cur = sample(core)
        r = rates(prev, cur)
        if getattr(args, "json", False):
            sys.stdout.write(json.dumps(r) + "\n")
        elif tty:
            sys.stdout.write("\x1b[H\x1b[2J" + rates_text(r))
        else:
            sys.stdout.write(rates_text(r) + "\n")
        sys.stdout.flush()
        prev = cur


def listen_addr(text):
    """argparse type of --listen: HOST:PORT ([::1]:PORT for IPv6)."""
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"'{text}' is not HOST:PORT (e.g. 127.0.0.1:9405)")
    return host, int(port)


def cmd_metrics(core, args):
    """Prometheus text once on stdout, or served over HTTP (--listen)."""
    try:
        from . import metrics
    except ImportError as e:
        raise CtlError(f"metrics: needs python3-prometheus-client ({e})") from None
    collector = metrics.Collector(lambda: connect(args), CtlError)
    if args.listen is None:
        sys.stdout.write(metrics.text(collector))
        return
    host, port = args.listen
    try:
        srv = metrics.serve(collector, host, port)
    except OSError as e:
        raise CtlError(f"metrics: cannot listen on {host}:{port}: {e.strerror}") from None
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    print(f"xnv-ctl: serving metrics on http://{host}:{srv.server_address[1]}/metrics",
          file=sys.stderr, flush=True)
    with srv:
        srv.serve_forever()


# --------------------------------------------------------------------------
# command line

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
               "Errors: one line on stderr; exit 1 if the core refused, 2 for usage "
               "or no core.")
    p.add_argument("--version", action="version",
                   version=f"xnv-ctl {version()}")
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


def main(argv=None):
    """xnv-ctl's command line (default sys.argv[1:]); the exit status."""
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    for key in ("spec", "steps"):       # REMAINDER also swallows a late --json
        rest = getattr(args, key, None)
        while rest and "--json" in rest:
            rest.remove("--json")
            args.json = True
    try:
        if getattr(args, "socket", None) is not None and getattr(args, "file_prefix", None) is not None:
            raise CtlError("give --socket or --file-prefix, not both", 2)
        args.fn(connect(args), args)
    except CtlError as e:
        print(f"xnv-ctl: {e}", file=sys.stderr)
        return e.status
    except KeyboardInterrupt:       # Ctrl-C, e.g. ending a watch
        return 130
    except BrokenPipeError:         # xnv-ctl ... | head
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0

