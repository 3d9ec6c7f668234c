# SPDX-License-Identifier: BSD-3-Clause
"""The topology file of xnv-fabric (fabric/README.md): parse and validate.

`load(path)` gives a `Topology`, or raises `TopologyError` whose text is
one line, "FILE: what is wrong", for the first problem found: every
reference resolved, every name valid, unknown keys refused.
`set_placement(text, service, host)` is the one edit `xnv-fabric move`
makes to a topology file: that service's host, the rest byte for byte.
"""
import ipaddress
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,31}\Z")   # xnv-core names: under 32
IFNAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,15}\Z")  # a Linux interface name
TUNNEL_PREFIX = "vx-"       # host NAME's tunnel port on the others: vx-NAME
HOST_NAME_MAX = 12          # its tunnel port vx-NAME is an interface name too
MAX_STEPS = 8               # hop(ci, i) = 16 * (ci + 1) + i + 1 (plan.py): i = 0..8
MAX_CHAINS = 255
MAX_SERVICES = 64           # xnv-core's limits (docs/CONFIG.md)
MAX_GROUPS = 16
MAX_PORTS = 16              # the host's own ports and its fabric port
INI_KEY_RE = re.compile(r"[a-z_]{1,63}\Z")

TOP_KEYS = ("hosts", "services", "chains", "core", "groups")
HOST_DEFAULTS = {"underlay_ip": None, "exec": [], "env": {}, "ovs_db": "",
                 "bridge": "br-xnv", "datapath": "netdev", "fabric_iface": "xnv0",
                 "fabric_port": "fab", "fabric_dev": "", "fabric_group": "",
                 "core_config": "/etc/xnv/xnv.ini", "ctl": ["xnv-ctl"],
                 "core": {}, "ports": {}}


class TopologyError(Exception):
    """One line: "FILE: what is wrong"."""


# A port's own xnv-core keys a topology may give (chain, fabric and hop.N
# are the tool's).
PORT_KEYS = ("rx_rate", "rx_desc", "tx_desc", "rx_start")


@dataclass
class Port:
    name: str
    dev: str
    group: str | None
    keys: dict          # of PORT_KEYS, as the config's text


@dataclass
class Host:
    name: str
    index: int                  # in file order: its tunnel port's ofport is 10 + index
    underlay_ip: str
    exec: list
    env: dict
    ovs_db: str
    bridge: str
    datapath: str
    fabric_iface: str
    fabric_port: str
    fabric_dev: str
    fabric_group: str | None
    core_config: str
    ctl: list
    core: dict                  # [core] keys: the file's [core] and the host's
    ports: dict = field(default_factory=dict)   # name -> Port, in file order

    @property
    def tunnel(self):
        return f"{TUNNEL_PREFIX}{self.name}"

    @property
    def ofport(self):
        """The ofport of this host's tunnel port on every other host."""
        return 10 + self.index


@dataclass
class Service:
    name: str
    host: str
    id: int


@dataclass
class Chain:
    name: str
    index: int                  # in file order, 0-based: its hops are 16 * (index + 1) + 1 ...
    entry: tuple                # (host, port)
    steps: list
    exit: tuple                 # (host, port)


@dataclass
class Topology:
    path: str
    core: dict
    groups: dict                # name -> {key: value}, in file order
    hosts: dict                 # name -> Host, in file order
    services: dict              # name -> Service, in file order
    chains: list

    def fail(self, what):
        raise TopologyError(f"{self.path}: {what}")


class _Reader:
    """Type and key checks, each failure one line naming FILE and where."""

    def __init__(self, path):
        self.path = path

    def fail(self, where, what):
        raise TopologyError(f"{self.path}: {where}: {what}")

    def table(self, where, value, allowed, required=()):
        if not isinstance(value, dict):
            self.fail(where, "must be a table")
        for key in value:
            if key not in allowed:
                self.fail(where, f"unknown key '{key}' (keys: {', '.join(allowed)})")
        for key in required:
            if key not in value:
                self.fail(where, f"'{key}' is missing")
        return value

    def name(self, where, value, what="name", pattern=NAME_RE):
        if not isinstance(value, str) or not pattern.match(value) or value == "drop":
            limit = ("letters, digits, '-', '_', at most 31; not 'drop'"
                     if pattern is NAME_RE else "an interface name: at most 15 of A-Za-z0-9_.-")
            self.fail(where, f"{what} {value!r} is not valid ({limit})")
        return value

    def string(self, where, value, allow_empty=False):
        if not isinstance(value, str) or (not value and not allow_empty):
            self.fail(where, "must be a non-empty string")
        if any(c in value for c in ";\n\r"):
            self.fail(where, f"{value!r}: no ';' or line break in a value")
        return value

    def argv(self, where, value, allow_empty=True):
        if not isinstance(value, list) or not all(isinstance(a, str) and a for a in value):
            self.fail(where, "must be a list of non-empty strings (an argv)")
        if not value and not allow_empty:
            self.fail(where, "must not be empty")
        return list(value)

    def ini_pairs(self, where, value):
        """A table of xnv-core keys: string, number or list values."""
        self.table(where, value, value.keys() if isinstance(value, dict) else ())
        out = {}
        for key, v in value.items():
            if not INI_KEY_RE.match(key):
                self.fail(where, f"key '{key}' is not an xnv-core key")
            items = v if isinstance(v, list) else [v]
            if not items or not all(isinstance(x, (str, int)) and not isinstance(x, bool)
                                    for x in items):
                self.fail(f"{where} {key}", "must be a string, a number or a list of them")
            text = " ".join(str(x) for x in items)
            out[key] = self.string(f"{where} {key}", text)
        return out


def load(path):
    """The topology in @p path (as given: errors name it so)."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TopologyError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}")
    return parse(text, str(path))


def parse(text, path):
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TopologyError(f"{path}: not TOML: {e}") from None
    r = _Reader(path)
    r.table("top level", doc, TOP_KEYS, required=("hosts", "chains"))
    core = r.ini_pairs("[core]", doc.get("core", {}))
    groups = _groups(r, doc.get("groups", {}))
    hosts = _hosts(r, doc["hosts"], core, groups)
    services = _services(r, doc.get("services", {}), hosts)
    _no_shared_names(r, hosts, services)
    chains = _chains(r, doc["chains"], hosts, services)
    return Topology(path, core, groups, hosts, services, chains)


def _groups(r, table):
    r.table("[groups]", table, table.keys() if isinstance(table, dict) else ())
    if len(table) > MAX_GROUPS:
        r.fail("[groups]", f"more than {MAX_GROUPS} groups")
    return {r.name("[groups]", g, "group name"): r.ini_pairs(f"[groups.{g}]", v)
            for g, v in table.items()}


def _group_of(r, where, value, groups):
    if value in (None, ""):
        return next(iter(groups), None)
    if value not in groups:
        r.fail(where, f"unknown group {value!r} (groups: {', '.join(groups) or 'none declared'})")
    return value


def _hosts(r, table, core, groups):
    r.table("[hosts]", table, table.keys() if isinstance(table, dict) else ())
    if not table:
        r.fail("[hosts]", "no host")
    hosts, ips = {}, {}
    for index, (name, spec) in enumerate(table.items()):
        where = f"[hosts.{name}]"
        r.name(where, name, "host name")
        if len(name) > HOST_NAME_MAX:
            r.fail(where, f"host name '{name}': at most {HOST_NAME_MAX} characters "
                          f"(its tunnel port vx-{name} is an interface name)")
        h = _host(r, where, name, index, spec, core, groups)
        if h.underlay_ip in ips:
            r.fail(f"{where} underlay_ip", f"{h.underlay_ip} is host {ips[h.underlay_ip]}'s too")
        ips[h.underlay_ip] = name
        hosts[name] = h
    return hosts


def _host(r, where, name, index, spec, core, groups):
    r.table(where, spec, HOST_DEFAULTS, required=("underlay_ip",))
    v = {**HOST_DEFAULTS, **spec}
    try:
        ip = str(ipaddress.ip_address(v["underlay_ip"]))
    except ValueError:
        r.fail(f"{where} underlay_ip", f"{v['underlay_ip']!r} is not an IP address")
    env = r.table(f"{where} env", v["env"], v["env"].keys() if isinstance(v["env"], dict) else ())
    for key, val in env.items():
        if not re.match(r"[A-Za-z_][A-Za-z0-9_]*\Z", key) or not isinstance(val, str):
            r.fail(f"{where} env", f"{key!r}: a variable name and a string value")
    if v["datapath"] not in ("netdev", "system"):
        r.fail(f"{where} datapath", f"{v['datapath']!r}: 'netdev' or 'system'")
    if not isinstance(v["core_config"], str) or not v["core_config"].startswith("/"):
        r.fail(f"{where} core_config", "must be an absolute path")
    h = Host(name, index, ip, r.argv(f"{where} exec", v["exec"]), dict(env),
             r.string(f"{where} ovs_db", v["ovs_db"], allow_empty=True),
             r.name(f"{where} bridge", v["bridge"], "bridge", IFNAME_RE), v["datapath"],
             r.name(f"{where} fabric_iface", v["fabric_iface"], "interface", IFNAME_RE),
             r.name(f"{where} fabric_port", v["fabric_port"], "port name"),
             r.string(f"{where} fabric_dev", v["fabric_dev"], allow_empty=True),
             _group_of(r, f"{where} fabric_group", v["fabric_group"], groups),
             v["core_config"], r.argv(f"{where} ctl", v["ctl"], allow_empty=False),
             {**core, **r.ini_pairs(f"{where} core", v["core"])})
    h.ports = _ports(r, f"[hosts.{name}.ports]", v["ports"], h, groups)
    h.fabric_dev = h.fabric_dev or _free_af_packet(h)
    return h


def _ports(r, where, table, host, groups):
    r.table(where, table, table.keys() if isinstance(table, dict) else ())
    if len(table) >= MAX_PORTS:
        r.fail(where, f"more than {MAX_PORTS - 1} ports (the fabric port makes {MAX_PORTS})")
    ports = {}
    for name, spec in table.items():
        r.name(where, name, "port name")
        if name == host.fabric_port:
            r.fail(where, f"port '{name}' is the host's fabric_port")
        if isinstance(spec, str):
            spec = {"dev": spec}
        r.table(f"{where} {name}", spec, ("dev", "group", *PORT_KEYS), required=("dev",))
        keys = r.ini_pairs(f"{where} {name}", {k: v for k, v in spec.items()
                                               if k in PORT_KEYS})
        ports[name] = Port(name, r.string(f"{where} {name} dev", spec["dev"]),
                           _group_of(r, f"{where} {name} group", spec.get("group"), groups),
                           keys)
    return ports


def _free_af_packet(host):
    """net_af_packetN,iface=IFACE, N the first of 9, 10, ... no port of the host uses."""
    used = {p.dev.split(",")[0] for p in host.ports.values()}
    n = 9
    while f"net_af_packet{n}" in used:
        n += 1
    return f"net_af_packet{n},iface={host.fabric_iface}"


def _services(r, table, hosts):
    r.table("[services]", table, table.keys() if isinstance(table, dict) else ())
    if len(table) > MAX_SERVICES:
        r.fail("[services]", f"more than {MAX_SERVICES} services")
    services, ids = {}, {}
    for pos, (name, spec) in enumerate(table.items(), 1):
        where = f"[services] {name}"
        r.name("[services]", name, "service name")
        if isinstance(spec, str):
            spec = {"host": spec}
        r.table(where, spec, ("host", "id"), required=("host",))
        if spec["host"] not in hosts:
            r.fail(where, f"unknown host {spec['host']!r} (hosts: {', '.join(hosts)})")
        sid = spec.get("id", pos)
        if not isinstance(sid, int) or isinstance(sid, bool) or not 1 <= sid <= 255:
            r.fail(f"{where} id", f"{sid!r} is not a number from 1 to 255")
        if sid in ids:
            r.fail(f"{where} id", f"{sid} is service '{ids[sid]}''s id too "
                                  f"(without an id a service's is its place, 1, 2, ...)")
        ids[sid] = name
        services[name] = Service(name, spec["host"], sid)
    return services


def _no_shared_names(r, hosts, services):
    for h in hosts.values():
        for port in [*h.ports, h.fabric_port]:
            if port in services:
                r.fail(f"[hosts.{h.name}]", f"port '{port}' has a service's name "
                                            f"(xnv-core: a port and a service may not share one)")


def _endpoint(r, where, value, hosts):
    if not isinstance(value, str) or value.count(":") != 1:
        r.fail(where, f"{value!r} is not HOST:PORT")
    host, port = value.split(":")
    if host not in hosts:
        r.fail(where, f"unknown host {host!r} (hosts: {', '.join(hosts)})")
    if port not in hosts[host].ports:
        r.fail(where, f"host {host} has no port {port!r} "
                      f"(ports: {', '.join(hosts[host].ports) or 'none'})")
    return host, port


def _chains(r, table, hosts, services):
    r.table("[chains]", table, table.keys() if isinstance(table, dict) else ())
    if len(table) > MAX_CHAINS:
        r.fail("[chains]", f"more than {MAX_CHAINS} chains")
    chains, entries = [], {}
    for index, (name, spec) in enumerate(table.items()):
        where = f"[chains.{name}]"
        r.name("[chains]", name, "chain name")
        r.table(where, spec, ("entry", "steps", "exit"), required=("entry", "steps", "exit"))
        entry = _endpoint(r, f"{where} entry", spec["entry"], hosts)
        if entry in entries:
            r.fail(f"{where} entry", f"{':'.join(entry)} is already chain "
                                     f"'{entries[entry]}''s entry (one chain per entry port)")
        entries[entry] = name
        steps = spec["steps"]
        if not isinstance(steps, list) or not all(isinstance(s, str) for s in steps):
            r.fail(f"{where} steps", "must be a list of service names")
        if len(steps) > MAX_STEPS:
            r.fail(f"{where} steps", f"{len(steps)} steps: at most {MAX_STEPS}")
        for s in steps:
            if s not in services:
                r.fail(f"{where} steps", f"unknown service {s!r} "
                                         f"(services: {', '.join(services) or 'none'})")
        chains.append(Chain(name, index, entry, list(steps),
                            _endpoint(r, f"{where} exit", spec["exit"], hosts)))
    return chains


# --------------------------------------------------------------------------
# move: one service's host, edited in the text

_KEY = r"""(?:[A-Za-z0-9_-]+|"[^"\\\n]*"|'[^'\n]*')"""
_DOTTED = rf"{_KEY}(?:\s*\.\s*{_KEY})*"
_HEADER_RE = re.compile(rf"\s*\[\s*({_DOTTED})\s*\]\s*(?:#.*)?$")
_PAIR_RE = re.compile(rf"\s*({_DOTTED})\s*=\s*")
_STRING_RE = re.compile(r""""[^"\\\n]*"|'[^'\n]*'""")
_INLINE_HOST_RE = re.compile(
    rf"""(?<![\w"'-])(?:host|"host"|'host')\s*=\s*({_STRING_RE.pattern})""")


def _key_parts(dotted):
    return [p.strip().strip("\"'") for p in re.findall(_KEY, dotted)]


def _host_span(path, value, service):
    """(start, end) of the host string in @p value (text after `=`) if the
    key @p path, a list of keys, places @p service; else None."""
    if path == ["services", service]:
        m = _STRING_RE.match(value)
        if m:
            return m.span()
        if value.startswith("{"):
            m = _INLINE_HOST_RE.search(value)
            return m.span(1) if m else None
    if path == ["services", service, "host"]:
        m = _STRING_RE.match(value)
        return m.span() if m else None
    return None


def set_placement(text, service, host, path="topology"):
    """@p text with @p service placed on @p host: only the host string of
    its `[services]` entry changes (in any of the forms fabric/README.md
    shows); the result is parsed again and must differ in nothing else."""
    lines = text.splitlines(keepends=True)
    table = []
    for n, line in enumerate(lines):
        m = _HEADER_RE.match(line)
        if m and not line.lstrip().startswith("[["):
            table = _key_parts(m.group(1))
            continue
        m = _PAIR_RE.match(line)
        if not m:
            continue
        span = _host_span(table + _key_parts(m.group(1)), line[m.end():], service)
        if span:
            start, end = m.end() + span[0], m.end() + span[1]
            quote = line[start]
            lines[n] = f"{line[:start]}{quote}{host}{quote}{line[end:]}"
            return _checked_edit(text, "".join(lines), service, host, path)
    raise TopologyError(f"{path}: [services] {service}: cannot find its host in the text "
                        f"(write it as {service} = \"HOST\" or with host = \"HOST\")")


def _checked_edit(old, new, service, host, path):
    before, after = tomllib.loads(old), tomllib.loads(new)
    spec = before["services"][service]
    if isinstance(spec, str):
        before["services"][service] = host
    else:
        spec["host"] = host
    if before != after:
        raise TopologyError(f"{path}: [services] {service}: editing its host "
                            f"would change more than the host")
    return new
