# SPDX-License-Identifier: BSD-3-Clause
"""xnv-fabric's command line: plan, apply, move, status (fabric/README.md).

Every command on a host goes through one runner, `runner(argv, host,
stdin) -> Result`: `run_on_host` (the default) runs argv behind the host's
`exec` prefix with its `env`; a test may pass another to record commands.
Apply probes before it changes anything (ovs-vsctl find/list, ovs-ofctl
diff-flows, cat of the config), so a second apply changes nothing.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .plan import FABRIC_OFPORT, changes, move_order, move_steps, plan
from .topology import TUNNEL_PREFIX, TopologyError, load, parse, set_placement

PROG = "xnv-fabric"
TIMEOUT_S = 60
EOF_MARK = "XNV_FABRIC_EOF"
# the config written whole, then renamed over the old one (a reload never reads half)
WRITE_SH = 'mkdir -p "$(dirname "$1")" && cat > "$1.xnv-fabric" && mv -f "$1.xnv-fabric" "$1"'


class ApplyError(Exception):
    """A command on a host failed: one line saying which and why."""


@dataclass
class Result:
    rc: int
    out: str
    err: str


def host_argv(host, argv):
    """@p argv as run for @p host: its env (through env(1), so it crosses
    any prefix), behind its exec prefix; ssh gets one quoted command line,
    as it hands its arguments to the remote shell joined."""
    cmd = (["env"] + [f"{k}={v}" for k, v in host.env.items()] if host.env else []) + list(argv)
    if host.exec and os.path.basename(host.exec[0]) == "ssh":
        return list(host.exec) + [shlex.join(cmd)]
    return list(host.exec) + cmd


def run_on_host(argv, host, stdin=None):
    """The runner: runs argv on host, stdin given as text."""
    full = host_argv(host, argv)
    try:
        r = subprocess.run(full, input=stdin or "", capture_output=True, text=True,
                           timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        return Result(127, "", f"cannot run {full[0]}: {e}")
    return Result(r.returncode, r.stdout, r.stderr)


def first_line(text):
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "no message")


class Applier:
    """Brings hosts to their plan, one item at a time, saying what it did."""

    def __init__(self, runner, dry_run=False):
        self.runner, self.dry_run = runner, dry_run

    def say(self, host, what):
        print(f"{host.name}: {what}", flush=True)

    def show(self, host, argv, stdin=None):
        print(f"{host.name}$ {shlex.join(host_argv(host, argv))}"
              + (f" <<'{EOF_MARK}'\n{stdin}{EOF_MARK}" if stdin is not None else ""))

    def run(self, host, argv, stdin=None, ok=(0,)):
        """A command that changes something (shown instead, dry)."""
        if self.dry_run:
            self.show(host, argv, stdin)
            return Result(0, "", "")
        r = self.runner(argv, host, stdin)
        if r.rc not in ok:
            raise ApplyError(f"host {host.name}: {shlex.join(argv)}: exit {r.rc}: "
                             f"{first_line(r.err or r.out)}")
        return r

    def probe(self, host, argv, stdin=None, ok=(0,)):
        """A command that only reads (None, dry: nothing is read)."""
        return None if self.dry_run else self.run(host, argv, stdin, ok)

    def host(self, topo, hp):
        if self.dry_run:
            print(f"== host {hp.host.name} (dry run: nothing is run)")
        self.ovs(topo, hp.host)
        self.flows(hp)
        self.config(hp)

    def ovs(self, topo, host):
        have = ovs_state(self, host)
        items = ovs_items(topo, host)
        for what, want, argv in items:
            if have is not None and want in have:
                self.say(host, f"{what}: unchanged")
                continue
            self.run(host, argv)
            if not self.dry_run:
                self.say(host, f"{what}: added or updated")
        self.stale_tunnels(host, {want[0] for _, want, _ in items})

    def stale_tunnels(self, host, wanted):
        """Delete the bridge's tunnel ports (vx-NAME: ours by name) to hosts
        no longer in the topology; any other port is left alone."""
        ports = self.probe(host, vsctl(host, "list-ports", host.bridge))
        for name in [] if ports is None else ports.out.split():
            if name.startswith(TUNNEL_PREFIX) and name not in wanted:
                self.run(host, vsctl(host, "--if-exists", "del-port", host.bridge, name))
                self.say(host, f"port {name}: deleted (no such host in the topology)")

    def flows(self, hp):
        h = hp.host
        diff = self.probe(h, ofctl(h, "diff-flows", h.bridge, "/dev/stdin"), hp.flows, ok=(0, 2))
        if diff is not None and diff.rc == 0:
            self.say(h, f"flows of {h.bridge}: unchanged")
            return
        self.run(h, ofctl(h, "replace-flows", h.bridge, "-"), hp.flows)
        if not self.dry_run:
            rules = sum(ln.startswith("priority=") for ln in hp.flows.splitlines())
            self.say(h, f"flows of {h.bridge}: replaced ({rules} rules)")

    def config(self, hp):
        h, path = hp.host, hp.host.core_config
        old = None if self.dry_run else self.runner(["cat", path], h, None)
        old = old.out if old is not None and old.rc == 0 else None
        if old == hp.config:
            self.say(h, f"{path}: unchanged (no reload)")
            return
        self.run(h, ["sh", "-c", WRITE_SH, "sh", path], hp.config)
        if self.dry_run:
            self.run(h, h.ctl + ["reload"])
            return
        self.say(h, f"{path}: written")
        self.reload(h, path, old)

    def reload(self, host, path, old):
        """xnv-ctl reload; no core running is fine (it reads the file when
        it starts); a refusal puts the old file back, so the next apply
        tries again, and stops."""
        r = self.runner(host.ctl + ["reload"], host, None)
        if r.rc == 0:
            self.say(host, "xnv-core: reloaded")
            return
        why = first_line(r.err or r.out)
        if "no xnv-core" in why:
            self.say(host, f"xnv-core: not running ({why}): it reads {path} when it starts")
            return
        if old is None:
            self.runner(["rm", "-f", path], host, None)
        else:
            self.runner(["sh", "-c", WRITE_SH, "sh", path], host, old)
        raise ApplyError(f"host {host.name}: {shlex.join(host.ctl + ['reload'])}: {why} "
                         f"({path} put back as it was)")


def vsctl(host, *args):
    return ["ovs-vsctl"] + ([f"--db={host.ovs_db}"] if host.ovs_db else []) + list(args)


def ofctl(host, *args):
    return ["ovs-ofctl", "-O", "OpenFlow13"] + list(args)


def ovs_items(topo, host):
    """(what, wanted state, ovs-vsctl argv) of the bridge and each port."""
    br = host.bridge
    items = [(f"bridge {br}", ("bridge", br, host.datapath, "secure"),
              vsctl(host, "--may-exist", "add-br", br, "--", "set", "bridge", br,
                    f"datapath_type={host.datapath}", "fail_mode=secure"))]
    ports = [(host.fabric_iface, "internal", (), FABRIC_OFPORT)]
    ports += [(o.tunnel, "vxlan", (("key", "flow"), ("remote_ip", o.underlay_ip)), o.ofport)
              for o in topo.hosts.values() if o is not host]
    for name, kind, options, ofport in ports:
        argv = vsctl(host, "--may-exist", "add-port", br, name, "--", "set", "interface",
                     name, f"type={kind}", *[f"options:{k}={v}" for k, v in options],
                     f"ofport_request={ofport}")
        items.append((f"port {name}", (name, kind, options, ofport), argv))
    return items


def _ovsdb(value):
    """An OVSDB JSON datum (RFC 7047) as Python: a map as sorted pairs, an
    empty set as None."""
    if isinstance(value, list) and value and value[0] == "map":
        return tuple(sorted((k, v) for k, v in value[1]))
    if isinstance(value, list) and value and value[0] == "set":
        return _ovsdb(value[1][0]) if len(value[1]) == 1 else None
    return value


def ovs_state(applier, host):
    """The host's bridges and interfaces as ovs_items' wanted states."""
    fmt = ["--format=json", "--data=json"]
    br = applier.probe(host, vsctl(host, *fmt, "--columns=name,datapath_type,fail_mode",
                                   "find", "Bridge", f"name={host.bridge}"))
    ifs = applier.probe(host, vsctl(host, *fmt, "--columns=name,type,options,ofport_request",
                                    "list", "Interface"))
    if br is None:
        return None
    try:
        rows = [("bridge", *row) for row in json.loads(br.out)["data"]]
        rows += json.loads(ifs.out)["data"]
    except (ValueError, KeyError, TypeError) as e:
        raise ApplyError(f"host {host.name}: ovs-vsctl: unexpected output ({e})") from None
    return {tuple(_ovsdb(v) for v in row) for row in rows}


# --------------------------------------------------------------------------
# commands

def selected(topo, plans, only):
    if only is None:
        return list(plans.values())
    if only not in plans:
        raise TopologyError(f"{topo.path}: no host {only!r} (hosts: {', '.join(plans)})")
    return [plans[only]]


def cmd_plan(args, runner):
    topo = load(args.topology)
    for hp in selected(topo, plan(topo), args.host):
        h = hp.host
        print(f"=== host {h.name} (underlay {h.underlay_ip}): xnv-core config, "
              f"written to {h.core_config}")
        print(hp.config)
        print(f"=== host {h.name}: OpenFlow rules of {h.bridge} "
              f"(ovs-ofctl -O OpenFlow13 replace-flows {h.bridge} FILE)")
        print(hp.flows)
    return 0


def cmd_apply(args, runner):
    topo = load(args.topology)
    applier = Applier(runner, args.dry_run)
    for hp in selected(topo, plan(topo), args.host):
        applier.host(topo, hp)
    return 0


def cmd_move(args, runner):
    topo = load(args.topology)
    for kind, name, known in (("service", args.service, topo.services),
                              ("host", args.host, topo.hosts)):
        if name not in known:
            raise TopologyError(f"{topo.path}: no {kind} {name!r} ({kind}s: {', '.join(known)})")
    if topo.services[args.service].host == args.host:
        print(f"{args.service} is on {args.host} already: nothing to do")
        return 0
    text = Path(args.topology).read_bytes().decode("utf-8")
    new_text = set_placement(text, args.service, args.host, topo.path)
    new_topo = parse(new_text, topo.path)
    old_plans, new_plans = plan(topo), plan(new_topo)
    order = move_order(old_plans, new_plans)
    print(f"move {args.service}: {topo.services[args.service].host} -> {args.host}; "
          f"hosts in this order: {', '.join(order)}")
    for name in order:
        for line in changes(old_plans[name], new_plans[name]) or ["nothing changes"]:
            print(f"{name}: {line}")
    if args.dry_run:
        print(f"would rewrite {args.topology}: [services] {args.service} -> {args.host}")
    else:
        write_file(args.topology, new_text)
        print(f'{args.topology}: [services] {args.service} = "{args.host}"')
    applier = Applier(runner, args.dry_run)
    for name, hp in move_steps(new_topo, old_plans, new_plans):
        if hp is not new_plans[name]:
            print(f"{name}: keeping its old hops until the other hosts are done")
        applier.host(new_topo, hp)
    return 0


def write_file(path, text):
    """@p text into @p path through a rename, keeping the file's mode."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except OSError:
        os.unlink(tmp)
        raise


FLOW_RE = {k: re.compile(rf"\b{k}=(\w+)") for k in ("n_packets", "priority", "dl_vlan", "in_port")}


def rule_name(line, ofports):
    """What a dump-flows line is, in fabric words."""
    f = {k: (m.group(1) if (m := r.search(line)) else "") for k, r in FLOW_RE.items()}
    out = re.search(r"output:(\w+)", line)
    to = ofports.get(out.group(1), out.group(1)) if out else "?"
    if f["priority"] == "100":
        return f"hop {f['dl_vlan']} out to {to}"
    if f["priority"] == "90":
        return f"in from {ofports.get(f['in_port'], f['in_port'])}"
    return "drop" if f["priority"] == "0" else line.split("actions=")[0].strip()


def table(rows):
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())


def cmd_status(args, runner):
    """Best effort: each host's rule counters and its core's port counters."""
    topo = load(args.topology)
    rules, ports, notes = [["HOST", "RULE", "PACKETS"]], [["HOST", "PORT", "RX", "TX"]], []
    ofports = {str(h.ofport): h.name for h in topo.hosts.values()}
    for hp in selected(topo, plan(topo), args.host):
        h = hp.host
        r = runner(ofctl(h, "dump-flows", "--no-names", h.bridge), h, None)
        if r.rc != 0:
            notes.append(f"{h.name}: ovs-ofctl: {first_line(r.err)}")
        for line in (r.out.splitlines() if r.rc == 0 else []):
            if "n_packets=" in line:
                rules.append([h.name, rule_name(line, ofports),
                              FLOW_RE["n_packets"].search(line).group(1)])
        r = runner(h.ctl + ["--json", "ports"], h, None)
        try:
            ports += [[h.name, p["name"], p["rx"], p["tx"]] for p in json.loads(r.out)]
        except (ValueError, KeyError, TypeError):
            notes.append(f"{h.name}: {shlex.join(h.ctl)}: {first_line(r.err or r.out)}")
    table(rules)
    print()
    table(ports)
    print("\n".join(["", *notes]) if notes else "", end="")
    return 0


# --------------------------------------------------------------------------
# the command line

class Parser(argparse.ArgumentParser):
    def error(self, message):
        """A usage error: one line naming the program, exit 2."""
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser():
    p = Parser(prog=PROG, description="Place service chains on several hosts joined by Open "
               "vSwitch and VXLAN: each host's xnv-core config and bridge (fabric/README.md).")
    sub = p.add_subparsers(dest="cmd", metavar="plan|apply|move|status", required=True)
    def per_host(name, fn, hlp):
        c = sub.add_parser(name, help=hlp)
        c.add_argument("topology", help="the topology file (TOML)")
        c.add_argument("--host", help="only this host")
        c.set_defaults(fn=fn)
        return c
    per_host("plan", cmd_plan, "print each host's xnv-core config and OpenFlow rules")
    c = per_host("apply", cmd_apply, "bring each host to its plan: bridge, ports, "
                 "rules, xnv-core config (reloaded when it changed)")
    c.add_argument("--dry-run", action="store_true",
                   help="print each command (with its host) and file, run nothing")
    c = sub.add_parser("move", help="place SERVICE on HOST: rewrite the topology, "
                       "apply the hosts in an order that keeps loss small")
    c.add_argument("topology", help="the topology file (TOML); its [services] entry is edited")
    c.add_argument("service")
    c.add_argument("host")
    c.add_argument("--dry-run", action="store_true",
                   help="print what would change and each command, touch nothing")
    c.set_defaults(fn=cmd_move)
    per_host("status", cmd_status, "packets per OpenFlow rule and per xnv-core port, "
             "per host (best effort)")
    return p


def main(argv=None, runner=run_on_host):
    """Exit status: 0 done, 1 a command on a host failed, 2 a usage error
    or a bad topology (one line, nothing applied)."""
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args, runner)
    except TopologyError as e:
        print(e, file=sys.stderr)
        return 2
    except BrokenPipeError:         # xnv-fabric plan ... | head
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ApplyError, OSError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
