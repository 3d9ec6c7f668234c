# SPDX-License-Identifier: BSD-3-Clause
"""xnv-ctl: the operator's client of xnv-core's control plane.

It speaks DPDK telemetry v2: a SOCK_SEQPACKET unix socket at
<runtime dir>/dpdk/<prefix>/dpdk_telemetry.v2 that greets with a JSON object,
then answers each request "CMD[,PARAMS]" with one JSON object {CMD: data}.
Which core: locate.py (the pointer file a core writes next to its NF
socket, or the only core running); its commands are listed in dom0-core/CONTROL.md.  Run by
dom0-core/xnv-ctl; Python 3 standard library only.
"""
import json
import os
import signal
import sys
import time

from .locate import LocateError, locate
from .telemetry import NotListening, Telemetry, TelemetryError

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
            raise CtlError(f"no xnv-core answering at {self.path} ({self.hint})") from None
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
        raise CtlError(str(e), e.status) from None
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


def cmd_fabric(core, args):
    """Fabric hops (docs/CONFIG.md): a hop this host has, or one it sent
    or received on (no chain then)."""
    hops = core.call("/xnv/fabric")

    def human(hs):
        hs = dict(hs)
        more = hs.pop("more", 0)
        table(["HOP", "PORT", "RX", "TX", "CHAIN"],
              [[k, h["port"] or "-", h["rx"], h["tx"], chain_text(h["chain"]) or "-"]
               for k, h in sorted(hs.items(), key=lambda kv: int(kv[0]))])
        if more:
            print(f"... and {more} more hops (one reply holds "
                  f"{len(hs)}; hops in force come first)")
    show(args, hops, human)


def cmd_workers(core, args):
    """[core] workers: what each lcore (the main one, worker 0, too)
    received on its queues, sent, steered to other workers, the NFs it
    polls, and its drops."""
    ws = core.call("/xnv/workers")

    def human(w):
        print(f"{w['workers']} worker(s); the main lcore ({w['main_lcore']}) "
              "runs the control plane and the NFs of services of worker 0")
        rows = [[k, x["lcore"], x["nfs"], x["rx"], x["sent"], x["steered"],
                 x["drops"]]
                for k, x in sorted(w.items(), key=lambda kv: int(kv[0])
                                   if kv[0].isdigit() else -1)
                if isinstance(x, dict)]
        if rows:
            table(["WORKER", "LCORE", "NFS", "RX", "SENT", "STEERED",
                   "DROPS"], rows)
    show(args, ws, human)


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


def main(argv=None):
    """xnv-ctl's command line (default sys.argv[1:]); the exit status."""
    from .ctl_cli import build_parser     # the parser names the commands here
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

