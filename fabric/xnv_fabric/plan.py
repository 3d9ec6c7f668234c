# SPDX-License-Identifier: BSD-3-Clause
"""What each host gets (fabric/README.md): its xnv-core config and the
OpenFlow rules of its bridge, from a `Topology`; and, for a move, what
changes on each host and in which order the hosts are applied.

Hop numbering: `hop(ci, i) = 16 * (ci + 1) + i + 1` resumes chain ci (its
0-based place in the file) at step i; i == len(steps) is the chain's exit.
So the first chain's hops are 17.. (its step 1 is hop 18), hops 1..16 are
never used, and 255 chains of up to 8 steps end at hop 4089 (a VLAN id is
at most 4094).  Between xnv-core and its switch the hop is an outer 802.1Q
tag, between hosts the VXLAN VNI.
"""
from dataclasses import dataclass, field
from pathlib import Path

FABRIC_OFPORT = 1           # xnv-core's fabric interface on the bridge
MAX_CORE_STEPS = 8          # xnv-core: a chain or hop.N of at most 8 steps
MAX_CORE_HOPS = 256         # xnv-core: hop.N keys in one config
MAX_VALUE = 255             # xnv-core: characters in one value
SEND = ("priority=100,in_port={fab},dl_vlan={hop},"
        "actions=pop_vlan,set_field:{hop}->tun_id,output:{out}")
RECEIVE = ("priority=90,in_port={tunnel},tun_id=0/0xfffffffffffff000,"
           "actions=push_vlan:0x8100,move:NXM_NX_TUN_ID[0..11]->NXM_OF_VLAN_TCI[0..11],"
           "output:{fab}")
DROP = "priority=0,actions=drop"


def hop(ci, i):
    """The hop resuming chain @p ci (0-based) at step @p i (0..len(steps))."""
    return 16 * (ci + 1) + i + 1


@dataclass
class Steps:
    """One xnv-core chain: its steps and where it comes from (a comment)."""
    steps: list
    label: str

    @property
    def text(self):
        return " -> ".join(self.steps)


@dataclass
class HostPlan:
    host: object                                  # topology.Host
    entries: dict = field(default_factory=dict)   # port -> Steps (its chain key)
    hops: dict = field(default_factory=dict)      # hop -> Steps (fabric port's hop.N)
    sends: dict = field(default_factory=dict)     # hop -> (target host, label)
    config: str = ""
    flows: str = ""


def plan(topo):
    """{host name: HostPlan}, in file order; TopologyError for a chain
    xnv-core would not take (too long on one host, too many hops)."""
    plans = {name: HostPlan(h) for name, h in topo.hosts.items()}
    for chain in topo.chains:
        _place_chain(topo, chain, plans)
    for hp in plans.values():
        if len(hp.hops) > MAX_CORE_HOPS:
            topo.fail(f"host {hp.host.name} receives {len(hp.hops)} hops: "
                      f"xnv-core takes at most {MAX_CORE_HOPS}")
        hp.config = render_config(topo, hp)
        hp.flows = render_flows(topo, hp)
    return plans


def _label(chain, i):
    if i == len(chain.steps):
        return f"chain {chain.name}: its exit"
    return f"chain {chain.name} from step {i} ({chain.steps[i]})"


def _place_chain(topo, chain, plans):
    """The entry port's chain key and every hop.N the chain needs."""
    where = [topo.services[s].host for s in chain.steps] + [chain.exit[0]]
    entry_host, entry_port = chain.entry
    plans[entry_host].entries[entry_port] = _rest(topo, chain, 0, entry_host, where,
                                                  plans, f"chain {chain.name}")
    before = entry_host
    for i, here in enumerate(where):
        if here != before:
            plans[here].hops[hop(chain.index, i)] = _rest(topo, chain, i, here, where,
                                                          plans, _label(chain, i))
        before = here


def _rest(topo, chain, i, host, where, plans, label):
    """The rest of @p chain from step @p i on @p host: its steps there,
    then the exit port or the fabric step to the next host (recorded in
    that host's sends)."""
    n, j, steps = len(chain.steps), i, []
    while j < n and where[j] == host:
        steps.append(chain.steps[j])
        j += 1
    if where[j] == host:
        steps.append(chain.exit[1])
    else:
        h = hop(chain.index, j)
        steps.append(f"{topo.hosts[host].fabric_port}:{h}")
        plans[host].sends[h] = (where[j], _label(chain, j))
    rest = Steps(steps, label)
    if len(steps) > MAX_CORE_STEPS or len(rest.text) > MAX_VALUE:
        topo.fail(f"[chains.{chain.name}]: on host {host}, '{rest.text}' is {len(steps)} "
                  f"steps: xnv-core takes at most {MAX_CORE_STEPS} (and {MAX_VALUE} characters); "
                  f"place a step on another host or use fewer")
    return rest


# --------------------------------------------------------------------------
# the files

def _section(header, pairs):
    return [f"[{header}]"] + [f"{k} = {v}" for k, v in pairs]


def _keyed(steps):
    """A chain value with its origin as a trailing comment."""
    return f"{steps.text}    ; {steps.label}"


def render_config(topo, hp):
    """The host's xnv-core config (docs/CONFIG.md): the same groups and
    services on every host, its own ports, its fabric port with its hops."""
    h = hp.host
    out = [f"# xnv-core config of host {h.name}, written by xnv-fabric from "
           f"{Path(topo.path).name}: edit the topology, not this file"]
    if h.core:
        out += _section("core", h.core.items())
    for g, keys in topo.groups.items():
        out += _section(f"group {g}", keys.items())
    for p in h.ports.values():
        pairs = [("dev", p.dev)] + ([("group", p.group)] if p.group else [])
        pairs += list(p.keys.items())
        if p.name in hp.entries:
            pairs.append(("chain", _keyed(hp.entries[p.name])))
        out += _section(f"port {p.name}", pairs)
    pairs = [("dev", h.fabric_dev)] + ([("group", h.fabric_group)] if h.fabric_group else [])
    pairs += [("fabric", "vlan")]
    pairs += [(f"hop.{n}", _keyed(s)) for n, s in sorted(hp.hops.items())]
    out += _section(f"port {h.fabric_port}", pairs)
    for s in topo.services.values():
        out += _section(f"service {s.name}", [("id", s.id)])
    return "\n".join(out) + "\n"


def render_flows(topo, hp):
    """The host's OpenFlow rules (ovs-ofctl -O OpenFlow13 replace-flows):
    each hop it sends to its host's tunnel, every tunnel to xnv-core."""
    h = hp.host
    others = [o for o in topo.hosts.values() if o is not h]
    ports = "".join(f", {o.ofport} = {o.tunnel}" for o in others)
    out = [f"# OpenFlow rules of bridge {h.bridge} on host {h.name}, written by xnv-fabric",
           f"# ports: {FABRIC_OFPORT} = {h.fabric_iface} (xnv-core's {h.fabric_port}){ports}"]
    for n, (target, label) in sorted(hp.sends.items()):
        out += [f"# hop {n} to host {target}: {label}",
                SEND.format(fab=FABRIC_OFPORT, hop=n, out=topo.hosts[target].ofport)]
    for o in others:
        out += [f"# from host {o.name}: the VNI (below 4096) as the outer tag, to xnv-core",
                RECEIVE.format(tunnel=o.ofport, fab=FABRIC_OFPORT)]
    out += ["# anything else (VNIs from 4096 on too): dropped, counted", DROP]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# a move: what changes where, and the order of the hosts

def changes(old, new):
    """Lines saying how host plan @p new differs from @p old."""
    lines = []
    for port in sorted(old.entries.keys() | new.entries.keys()):
        a, b = old.entries.get(port), new.entries.get(port)
        if (a and a.text) != (b and b.text):
            lines.append(f"[port {port}] chain: {a.text if a else '(none)'}"
                         f"  =>  {b.text if b else '(none)'}")
    for n in sorted(old.hops.keys() | new.hops.keys()):
        a, b = old.hops.get(n), new.hops.get(n)
        if a is None:
            lines.append(f"+ hop.{n} = {b.text}")
        elif b is None:
            lines.append(f"- hop.{n} = {a.text}")
        elif a.text != b.text:
            lines.append(f"hop.{n}: {a.text}  =>  {b.text}")
    for n in sorted(old.sends.keys() | new.sends.keys()):
        a, b = old.sends.get(n, (None,))[0], new.sends.get(n, (None,))[0]
        if a != b:
            lines.append(f"OVS: hop {n} " + (f"to {b}" if b else "no longer sent")
                         + (f" (was to {a})" if a and b else ""))
    return lines


def _rank(old, new):
    """0: only starts receiving; 1: starts receiving and changes what it
    sends; 2: changes what it sends; 3: only stops receiving; 4: nothing."""
    adds = bool(new.hops.keys() - old.hops.keys())
    sends = any(old.entries.get(p) and new.entries.get(p)
                and old.entries[p].text != new.entries[p].text
                for p in old.entries.keys() | new.entries.keys())
    sends |= any(old.hops[n].text != new.hops[n].text
                 for n in old.hops.keys() & new.hops.keys())
    sends |= any(old.sends[n][0] != new.sends[n][0]
                 for n in old.sends.keys() & new.sends.keys())
    sends |= old.entries.keys() != new.entries.keys()
    if adds:
        return 1 if sends else 0
    if sends:
        return 2
    return 3 if old.hops.keys() - new.hops.keys() else 4


def move_order(old_plans, new_plans):
    """Host names in the order a move applies them: first those that start
    receiving new hops (so they take them), then those whose chains send
    elsewhere, then the rest (those that stop receiving), file order within."""
    names = list(new_plans)
    return sorted(names, key=lambda n: (_rank(old_plans[n], new_plans[n]), names.index(n)))


def _keeping(topo, old, new):
    """@p new still taking the hops only @p old takes (and sending where
    those send): what a host that starts or changes sending gets first,
    while the others may still send it the old hops."""
    kept = {n: old.hops[n] for n in old.hops.keys() - new.hops.keys()}
    if not kept:
        return new
    hp = HostPlan(new.host, dict(new.entries), {**kept, **new.hops}, {**old.sends, **new.sends})
    hp.config, hp.flows = render_config(topo, hp), render_flows(topo, hp)
    return hp


def move_steps(topo, old_plans, new_plans):
    """[(host name, HostPlan)] to apply in turn for a move to @p topo: the
    hosts in move_order, where one that starts receiving or changes what it
    sends also stops receiving, still taking its old hops; the final plans
    of those last (so old hops go once nobody sends them)."""
    order = move_order(old_plans, new_plans)
    first = [(n, _keeping(topo, old_plans[n], new_plans[n])) for n in order
             if _rank(old_plans[n], new_plans[n]) < 3]
    later = [n for n, hp in first if hp is not new_plans[n]]
    rest = [n for n in order if n not in dict(first)]
    return first + [(n, new_plans[n]) for n in rest + later]
