# SPDX-License-Identifier: BSD-3-Clause
"""xnv-fabric (fabric/README.md) without Open vSwitch, root or a running core.

- plan: the A -> B -> A chain of fabric/examples/two-hosts.toml (a's port
  `in` chain `fw -> fab:18`, b's `hop.18 = ids -> fab:19`, a's `hop.19 =
  lb -> out`), every step on one host (no fabric step, only the drop
  rule), entry and exit on different hosts, a chain over three hosts; the
  OpenFlow rules and ovs-vsctl commands each host gets; every generated
  config passes `xnv-core --check-config`.
- move: the topology file changes in the service's host string only (each
  way of writing it), hosts applied in the order that keeps loss small.
- apply: through a recorded runner standing for the hosts (`FakeHosts`,
  the one fake here): a second apply only reads; a core not running is
  said and skipped, a refused reload puts the file back; `--dry-run` runs
  nothing and prints every command with its host.
- bad topologies: one line "FILE: what is wrong", exit 2, nothing run.
- the command line: `--help` everywhere, a bogus flag one line (exit 2),
  a command that cannot run exit 1.
"""
import json
import re
import subprocess
import sys

import pytest

from harness import BUILD, REPO, scaled

FABRIC = REPO / "fabric"
TOOL = FABRIC / "xnv-fabric"
EXAMPLE = FABRIC / "examples" / "two-hosts.toml"
sys.path.insert(0, str(FABRIC))

from xnv_fabric import cli, plan as planmod, topology  # noqa: E402


def topo_text(tmp_path, services, chains, hosts=("a", "b"), host_extra=""):
    """A topology: hosts with ports in, in2, out (net_null), services
    {name: host}, chains [(name, entry, steps, exit)]."""
    out = ["[groups.blue]"]
    for i, h in enumerate(hosts):
        out += [f"[hosts.{h}]", f'underlay_ip = "10.250.0.{i + 1}"',
                f'core_config = "{tmp_path}/{h}/xnv.ini"', 'fabric_dev = "net_null9"',
                host_extra, f"[hosts.{h}.ports]", 'in = "net_null0"', 'in2 = "net_null1"',
                'out = "net_null2"']
    out += ["[services]"] + [f'{s} = "{h}"' for s, h in services.items()]
    for name, entry, steps, exit_ in chains:
        out += [f"[chains.{name}]", f'entry = "{entry}"',
                "steps = [" + ", ".join(f'"{s}"' for s in steps) + "]", f'exit = "{exit_}"']
    return "\n".join(out) + "\n"


def make(tmp_path, services, chains, **kw):
    path = tmp_path / "topo.toml"
    path.write_text(topo_text(tmp_path, services, chains, **kw))
    topo = topology.load(path)
    return topo, planmod.plan(topo)


def ini(text):
    """{section: {key: value}} of an xnv-core config, comments dropped."""
    out, sec = {}, None
    for line in text.splitlines():
        line = line.split(";")[0].strip()
        if line.startswith("["):
            sec = out.setdefault(line[1:-1], {})
        elif line and not line.startswith("#"):
            k, v = line.split("=", 1)
            sec[k.strip()] = v.strip()
    return out


def rules(flows):
    return [ln for ln in flows.splitlines() if ln and not ln.startswith("#")]


def send(hop, ofport):
    return (f"priority=100,in_port=1,dl_vlan={hop},actions=pop_vlan,"
            f"set_field:{hop}->tun_id,output:{ofport}")


def receive(ofport):
    return (f"priority=90,in_port={ofport},tun_id=0/0xfffffffffffff000,actions=push_vlan:0x8100,"
            f"move:NXM_NX_TUN_ID[0..11]->NXM_OF_VLAN_TCI[0..11],output:1")


def hops(hp):
    return {n: s.text for n, s in hp.hops.items()}


# --------------------------------------------------------------------------
# plan

def test_example_a_b_a_chain():
    topo = topology.load(EXAMPLE)
    plans = planmod.plan(topo)
    a, b = ini(plans["a"].config), ini(plans["b"].config)
    assert a["port in"]["chain"] == "fw -> fab:18"
    assert b["port fab"] == {"dev": "net_af_packet9,iface=xnv0", "group": "blue",
                             "fabric": "vlan", "hop.18": "ids -> fab:19"}
    assert a["port fab"]["hop.19"] == "lb -> out" and "hop.18" not in a["port fab"]
    assert "chain" not in a["port out"] and "port in" not in b
    for conf in (a, b):     # every service on every host, with its id
        assert {k: v for k, v in conf.items() if k.startswith("service ")} == {
            "service fw": {"id": "1"}, "service ids": {"id": "2"}, "service lb": {"id": "3"}}
        assert conf["group blue"] == {"pool_bufs": "8192"}
    assert rules(plans["a"].flows) == [send(18, 11), receive(11), "priority=0,actions=drop"]
    assert rules(plans["b"].flows) == [send(19, 10), receive(10), "priority=0,actions=drop"]


def test_all_steps_on_one_host(tmp_path):
    topo, plans = make(tmp_path, {"fw": "a", "ids": "a", "lb": "a"},
                       [("web", "a:in", ["fw", "ids", "lb"], "a:out")], hosts=("a",))
    conf = ini(plans["a"].config)
    assert conf["port in"]["chain"] == "fw -> ids -> lb -> out"
    assert conf["port fab"] == {"dev": "net_null9", "group": "blue", "fabric": "vlan"}
    assert "fab:" not in plans["a"].config
    assert rules(plans["a"].flows) == ["priority=0,actions=drop"]
    assert [w for w, _, _ in cli.ovs_items(topo, topo.hosts["a"])] == ["bridge br-xnv", "port xnv0"]


def test_entry_and_exit_on_different_hosts(tmp_path):
    _, plans = make(tmp_path, {"fw": "a", "ids": "b", "lb": "b"},
                    [("one", "a:in", ["fw", "ids"], "b:out"),
                     ("two", "a:in2", ["ids", "lb"], "b:out"),
                     ("three", "b:in", [], "a:out")])
    a, b = ini(plans["a"].config), ini(plans["b"].config)
    assert a["port in"]["chain"] == "fw -> fab:18"          # chain 0: hops 17..
    assert a["port in2"]["chain"] == "fab:33"               # chain 1: 33.., step 0 elsewhere
    assert b["port in"]["chain"] == "fab:49"                # chain 2, no step: its exit is hop 49
    assert hops(plans["b"]) == {18: "ids -> out", 33: "ids -> lb -> out"}
    assert hops(plans["a"]) == {49: "out"}
    assert rules(plans["a"].flows)[:2] == [send(18, 11), send(33, 11)]
    assert rules(plans["b"].flows)[0] == send(49, 10)


def test_three_hosts(tmp_path):
    topo, plans = make(tmp_path, {"fw": "a", "ids": "b", "lb": "c"},
                       [("web", "a:in", ["fw", "ids", "lb"], "a:out")], hosts=("a", "b", "c"))
    assert ini(plans["a"].config)["port in"]["chain"] == "fw -> fab:18"
    assert (hops(plans["a"]), hops(plans["b"]), hops(plans["c"])) == (
        {20: "out"}, {18: "ids -> fab:19"}, {19: "lb -> fab:20"})
    assert rules(plans["a"].flows) == [send(18, 11), receive(11), receive(12),
                                       "priority=0,actions=drop"]
    assert rules(plans["b"].flows)[0] == send(19, 12)
    assert rules(plans["c"].flows)[:3] == [send(20, 10), receive(10), receive(11)]
    argv = {w: a for w, _, a in cli.ovs_items(topo, topo.hosts["b"])}
    assert argv["port vx-c"] == [
        "ovs-vsctl", "--may-exist", "add-port", "br-xnv", "vx-c", "--", "set", "interface",
        "vx-c", "type=vxlan", "options:key=flow", "options:remote_ip=10.250.0.3",
        "ofport_request=12"]
    assert argv["bridge br-xnv"][-2:] == ["datapath_type=netdev", "fail_mode=secure"]
    assert set(argv) == {"bridge br-xnv", "port xnv0", "port vx-a", "port vx-c"}


def test_generated_configs_pass_check_config(tmp_path):
    core = BUILD / "bin" / "xnv-core"
    if not core.exists():
        pytest.skip(f"no {core}")
    _, plans = make(tmp_path, {"fw": "a", "ids": "b", "lb": "c"},
                    [("web", "a:in", ["fw", "ids", "lb"], "a:out"),
                     ("back", "c:in", ["lb", "fw"], "b:out")], hosts=("a", "b", "c"))
    for name, hp in plans.items():
        path = tmp_path / f"{name}.ini"
        path.write_text(hp.config)
        r = subprocess.run([str(core), "--check-config", str(path)], capture_output=True,
                           text=True, timeout=scaled(30))
        assert (r.returncode, r.stdout.splitlines()[-1:]) == (0, [f"{path}: ok"]), r


# --------------------------------------------------------------------------
# the recorded runner

class FakeHosts:
    """The one fake of these tests, for the command generation only: it
    stands for every host's shell, records each command (host, argv,
    stdin) and keeps what the commands change (files, OVS bridges and
    interfaces, flow tables) so a second apply finds them as the first
    left them.  No OVS and no xnv-core run; ovs-ofctl diff-flows is a text
    comparison here."""

    def __init__(self, reload=(0, "")):
        self.calls, self.files, self.flows = [], {}, {}
        self.bridges, self.ifaces = {}, {}
        self.reload = reload

    def __call__(self, argv, host, stdin=None):
        self.calls.append((host.name, list(argv), stdin))
        tool = {"cat": self.cat, "sh": self.write, "rm": self.rm, "ovs-vsctl": self.vsctl,
                "ovs-ofctl": self.ofctl}.get(argv[0], self.ctl)
        rc, out, err = tool(host.name, [a for a in argv[1:] if not a.startswith("--db=")], stdin)
        return cli.Result(rc, out, err)

    def cat(self, h, args, _):
        text = self.files.get((h, args[0]))
        return (0, text, "") if text is not None else (1, "", f"cat: {args[0]}: No such file")

    def write(self, h, args, stdin):
        self.files[(h, args[-1])] = stdin
        return 0, "", ""

    def rm(self, h, args, _):
        self.files.pop((h, args[-1]), None)
        return 0, "", ""

    def vsctl(self, h, args, _):
        if args[0] == "list-ports":     # every port of the host is on its bridge here
            return 0, "".join(f"{n}\n" for hh, n in self.ifaces if hh == h), ""
        if args[:2] == ["--if-exists", "del-port"]:
            self.ifaces.pop((h, args[3]), None)
            return 0, "", ""
        if "find" in args or "list" in args:
            table = self.bridges if "find" in args else self.ifaces
            return 0, json.dumps({"data": [r for (hh, _), r in table.items() if hh == h]}), ""
        cmd = " ".join(args).replace("--may-exist ", "")
        for sub in cmd.split(" -- "):
            words = sub.split()
            if words[0] == "add-br":
                self.bridges.setdefault((h, words[1]), [words[1], ["set", []], ["set", []]])
            elif words[0] == "add-port":
                self.ifaces.setdefault((h, words[2]), [words[2], "", ["map", []], ["set", []]])
            else:
                self.set_columns(h, words[1], words[2], dict(w.split("=", 1) for w in words[3:]))
        return 0, "", ""

    def set_columns(self, h, table, name, kv):
        if table == "bridge":
            row = self.bridges[(h, name)]
            row[1:] = [kv["datapath_type"], kv["fail_mode"]]
            return
        row = self.ifaces[(h, name)]
        row[1], row[3] = kv["type"], int(kv["ofport_request"])
        row[2] = ["map", sorted([k[8:], v] for k, v in kv.items() if k.startswith("options:"))]

    def ofctl(self, h, args, stdin):
        cmd, br = args[2], next(a for a in args[3:] if not a.startswith("-"))
        if cmd == "diff-flows":
            return (0 if self.flows.get((h, br)) == stdin else 2), "", ""
        if cmd == "replace-flows":
            self.flows[(h, br)] = stdin
            return 0, "", ""
        return 0, self.flows.get((h, br), ""), ""

    def ctl(self, h, args, _):
        if args == ["reload"]:
            return self.reload[0], "", self.reload[1]
        return 0, json.dumps([{"name": "in", "rx": 5, "tx": 0}]), ""

    def changing(self):
        """(host, what) of each command that changes something, in order."""
        return [(h, w) for h, a, _ in self.calls if (w := self.what(a))]

    @staticmethod
    def what(argv):
        if argv[0] in ("sh", "rm") or argv[-1] == "reload":
            return argv[0] if argv[-1] != "reload" else "reload"
        return next((w for w in ("add-br", "add-port", "del-port", "replace-flows")
                     if w in argv), None)


def test_apply_twice_changes_nothing_the_second_time(tmp_path, capsys):
    path = tmp_path / "t.toml"
    path.write_text(EXAMPLE.read_text())
    fake = FakeHosts()
    assert cli.main(["apply", str(path)], runner=fake) == 0
    assert sorted(fake.changing()) == sorted(
        [(h, w) for h in "ab" for w in ("add-br", "add-port", "add-port", "replace-flows",
                                         "sh", "reload")])
    first = capsys.readouterr().out
    assert "a: xnv-core: reloaded" in first and "b: flows of br-xnv: replaced (3 rules)" in first
    assert "hop.18 = ids -> fab:19" in fake.files[("b", "/etc/xnv/xnv.ini")]
    fake.calls.clear()
    assert cli.main(["apply", str(path)], runner=fake) == 0
    assert fake.changing() == []
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 10 and all(ln.endswith("unchanged") or ln.endswith("(no reload)")
                                  for ln in out), out


def test_apply_deletes_tunnels_to_hosts_gone(tmp_path, capsys):
    """A host taken out of the topology: the next apply deletes its tunnel
    port on the others (a port not named by xnv-fabric stays), then a
    third apply changes nothing."""
    path = tmp_path / "t.toml"
    services, chains = {"fw": "a", "ids": "b"}, [("web", "a:in", ["fw", "ids"], "a:out")]
    path.write_text(topo_text(tmp_path, services, chains, hosts=("a", "b", "c")))
    fake = FakeHosts()
    assert cli.main(["apply", str(path)], runner=fake) == 0
    fake.ifaces[("a", "eth9")] = ["eth9", "", ["map", []], ["set", []]]
    assert ("a", "vx-c") in fake.ifaces and ("b", "vx-c") in fake.ifaces
    path.write_text(topo_text(tmp_path, services, chains, hosts=("a", "b")))
    capsys.readouterr()
    fake.calls.clear()
    assert cli.main(["apply", str(path)], runner=fake) == 0
    out = capsys.readouterr().out
    assert "a: port vx-c: deleted (no such host in the topology)" in out
    assert "b: port vx-c: deleted (no such host in the topology)" in out
    assert sorted(n for h, n in fake.ifaces if h in "ab") == [
        "eth9", "vx-a", "vx-b", "xnv0", "xnv0"]
    assert [c for c in fake.calls if "del-port" in c[1]] == [
        ("a", ["ovs-vsctl", "--if-exists", "del-port", "br-xnv", "vx-c"], None),
        ("b", ["ovs-vsctl", "--if-exists", "del-port", "br-xnv", "vx-c"], None)]
    fake.calls.clear()
    assert cli.main(["apply", str(path)], runner=fake) == 0
    assert fake.changing() == []


def test_apply_without_a_core_and_with_a_refused_reload(tmp_path, capsys):
    path = tmp_path / "t.toml"
    path.write_text(topo_text(tmp_path, {"fw": "a"}, [("web", "a:in", ["fw"], "b:out")]))
    none = FakeHosts(reload=(1, "xnv-ctl: no xnv-core running (none at /run/xnv/xnv.sock)"))
    assert cli.main(["apply", str(path)], runner=none) == 0
    assert "a: xnv-core: not running (xnv-ctl: no xnv-core running" in capsys.readouterr().out
    conf = str(tmp_path / "a" / "xnv.ini")
    assert "chain = fw -> fab:18" in none.files[("a", conf)]
    refusing = FakeHosts(reload=(1, "xnv-ctl: reload refused: [service x]: a section added"))
    refusing.files[("a", conf)] = "old\n"
    assert cli.main(["apply", str(path)], runner=refusing) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "reload refused" in err[0] and "put back" in err[0], err
    assert refusing.files[("a", conf)] == "old\n"
    assert not any(h == "b" for h, _, _ in refusing.calls)   # stopped at a


def test_dry_run_runs_nothing(tmp_path, capsys):
    def refuse(argv, host, stdin=None):
        raise AssertionError(f"ran {argv} on {host.name}")
    assert cli.main(["apply", "--dry-run", str(EXAMPLE)], runner=refuse) == 0
    out = capsys.readouterr().out
    assert "a$ ovs-vsctl --may-exist add-br br-xnv -- set bridge br-xnv datapath_type=netdev" in out
    assert ("b$ ssh root@b 'ovs-vsctl --may-exist add-port br-xnv vx-a -- set interface vx-a "
            "type=vxlan options:key=flow options:remote_ip=10.250.0.1 ofport_request=10'") in out
    assert "b$ ssh root@b 'xnv-ctl reload'" in out
    assert "hop.18 = ids -> fab:19" in out and send(19, 10) in out
    assert cli.main(["move", "--dry-run", str(EXAMPLE), "ids", "a"], runner=refuse) == 0
    assert "would rewrite" in capsys.readouterr().out
    assert "ids = \"b\"" in EXAMPLE.read_text()


def test_exec_prefix_and_env():
    host = topology.load(EXAMPLE).hosts["a"]
    host.exec, host.env = ["ip", "netns", "exec", "xnvf-a"], {"OVS_RUNDIR": "/run/a"}
    assert cli.host_argv(host, ["ovs-ofctl", "dump-flows", "br-xnv"]) == [
        "ip", "netns", "exec", "xnvf-a", "env", "OVS_RUNDIR=/run/a", "ovs-ofctl",
        "dump-flows", "br-xnv"]
    host.exec = ["/usr/bin/ssh", "-p", "22", "root@a"]
    assert cli.host_argv(host, ["cat", "/a b"]) == [
        "/usr/bin/ssh", "-p", "22", "root@a", "env OVS_RUNDIR=/run/a cat '/a b'"]


def test_status_names_each_rule(tmp_path, capsys):
    fake = FakeHosts()
    fake.flows[("a", "br-xnv")] = (
        "OFPST_FLOW reply (OF1.3) (xid=0x2):\n"
        " cookie=0x0, duration=1s, table=0, n_packets=7, n_bytes=1, priority=100,in_port=1,"
        "dl_vlan=18 actions=pop_vlan,set_field:0x12->tun_id,output:11\n"
        " cookie=0x0, duration=1s, table=0, n_packets=5, n_bytes=1, priority=90,"
        "tun_id=0/0xfffffffffffff000,in_port=11 actions=push_vlan:0x8100,output:1\n"
        " cookie=0x0, duration=1s, table=0, n_packets=2, n_bytes=1, priority=0 actions=drop\n")
    assert cli.main(["status", str(EXAMPLE), "--host", "a"], runner=fake) == 0
    out = [ln.split() for ln in capsys.readouterr().out.splitlines()]
    assert out[:4] == [["HOST", "RULE", "PACKETS"], ["a", "hop", "18", "out", "to", "b", "7"],
                       ["a", "in", "from", "b", "5"], ["a", "drop", "2"]]
    assert ["a", "in", "5", "0"] in out


# --------------------------------------------------------------------------
# move

SERVICE_FORMS = {
    "string": '[services]\nfw = "a"\nids = "b"   # the IDS\nlb = "a"\n',
    "inline": "[services]\nfw = \"a\"\nids = { id = 7, host = 'b' }\nlb = \"a\"\n",
    "table": '[services.fw]\nhost = "a"\n[services.ids]\nhost = "b"\nid = 7\n'
             '[services.lb]\nhost = "a"\n',
    "dotted": '[services]\nfw.host = "a"\nids.host = "b"\nlb.host = "a"\n',
}


@pytest.mark.parametrize("form", SERVICE_FORMS)
def test_move_rewrites_only_the_placement(tmp_path, form):
    base = topo_text(tmp_path, {}, [("web", "a:in", ["fw", "ids", "lb"], "a:out")],
                     hosts=("a", "b", "c")).replace("[services]\n", "")
    path = tmp_path / "t.toml"
    path.write_bytes((SERVICE_FORMS[form] + base).encode())
    before = path.read_bytes().splitlines(keepends=True)
    assert cli.main(["move", str(path), "ids", "c"], runner=FakeHosts()) == 0
    after = path.read_bytes().splitlines(keepends=True)
    changed = [(x, y) for x, y in zip(before, after) if x != y]
    assert len(before) == len(after) and len(changed) == 1, changed
    assert changed[0][1] == changed[0][0].replace(b"b", b"c", 1)
    assert topology.load(path).services["ids"].host == "c"


def test_move_order_and_steps(tmp_path, capsys):
    path = tmp_path / "t.toml"
    path.write_text(topo_text(tmp_path, {"fw": "a", "ids": "b", "lb": "c"},
                              [("web", "a:in", ["fw", "ids", "lb"], "a:out")],
                              hosts=("a", "b", "c")))
    fake = FakeHosts()
    assert cli.main(["apply", str(path)], runner=fake) == 0
    fake.calls.clear()
    assert cli.main(["move", str(path), "ids", "c"], runner=fake) == 0
    out = capsys.readouterr().out
    # c takes hop 18 first (and keeps 19 while b may still send it), then a
    # sends 18 to c (a rule of its switch), then b stops, then c drops 19
    assert "hosts in this order: c, a, b" in out
    assert fake.changing() == [("c", "sh"), ("c", "reload"), ("a", "replace-flows"),
                               ("b", "replace-flows"), ("b", "sh"), ("b", "reload"),
                               ("c", "sh"), ("c", "reload")]
    c_writes = [ini(s)["port fab"] for h, a, s in fake.calls if h == "c" and a[0] == "sh"]
    assert [sorted(k for k in w if k.startswith("hop.")) for w in c_writes] == [
        ["hop.18", "hop.19"], ["hop.18"]]
    assert c_writes[-1]["hop.18"] == "ids -> lb -> fab:20"
    assert "a: OVS: hop 18 to c (was to b)" in out and "b: - hop.18 = ids -> fab:19" in out


def test_move_back_onto_the_entry_host(tmp_path):
    """All on a, ids moved to b: b first (it takes hop 18), then a."""
    old = topology.parse(topo_text(tmp_path, {"fw": "a", "ids": "a", "lb": "a"},
                                   [("web", "a:in", ["fw", "ids", "lb"], "a:out")]), "t")
    new = topology.parse(topo_text(tmp_path, {"fw": "a", "ids": "b", "lb": "a"},
                                   [("web", "a:in", ["fw", "ids", "lb"], "a:out")]), "t")
    assert planmod.move_order(planmod.plan(old), planmod.plan(new)) == ["b", "a"]
    assert planmod.move_order(planmod.plan(new), planmod.plan(old)) == ["a", "b"]


# --------------------------------------------------------------------------
# bad topologies and the command line

def fabric(*args):
    return subprocess.run([str(TOOL), *map(str, args)], capture_output=True, text=True,
                          timeout=scaled(30))


GOOD = ({"fw": "a", "ids": "b"}, [("web", "a:in", ["fw", "ids"], "a:out")])
BAD = {
    "unknown service": (lambda t: t.replace('["fw", "ids"]', '["fw", "nope"]'),
                        "[chains.web] steps: unknown service 'nope' (services: fw, ids)"),
    "more than 8 steps": (lambda t: t.replace('["fw", "ids"]', '["fw", "ids"' + ', "fw"' * 7 + "]"),
                          "[chains.web] steps: 9 steps: at most 8"),
    "bad name": (lambda t: t.replace('fw = "a"', '"f w" = "a"'),
                 "[services]: service name 'f w' is not valid"),
    "unknown host": (lambda t: t.replace('ids = "b"', 'ids = "z"'),
                     "[services] ids: unknown host 'z' (hosts: a, b)"),
    "unknown entry host": (lambda t: t.replace('entry = "a:in"', 'entry = "q:in"'),
                           "[chains.web] entry: unknown host 'q' (hosts: a, b)"),
    "duplicate entry port": (lambda t: t + '[chains.more]\nentry = "a:in"\nsteps = []\n'
                                           'exit = "b:out"\n',
                             "[chains.more] entry: a:in is already chain 'web''s entry"),
    "unknown key": (lambda t: t.replace("[hosts.b]\n", "[hosts.b]\ncolour = 1\n"),
                    "[hosts.b]: unknown key 'colour' (keys: underlay_ip, exec, "),
    "9 steps on one host": (lambda t: t.replace('["fw", "ids"]', '["fw"' + ', "fw"' * 7 + "]"),
                            "[chains.web]: on host a, 'fw -> fw -> fw -> fw -> fw -> fw -> fw "
                            "-> fw -> out' is 9 steps: xnv-core takes at most 8"),
    "not TOML": (lambda t: t + "[[[\n", "not TOML: "),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_topology_is_one_line(tmp_path, case):
    edit, expected = BAD[case]
    path = tmp_path / "bad.toml"
    path.write_text(edit(topo_text(tmp_path, *GOOD)))
    for args in (["plan", path], ["apply", path], ["move", path, "fw", "b"]):
        r = fabric(*args)
        assert (r.returncode, r.stdout) == (2, ""), r
        assert len(r.stderr.splitlines()) == 1, r.stderr
        assert r.stderr.startswith(f"{path}: {expected}"), r.stderr
    assert not (tmp_path / "a").exists()


def test_move_refuses_unknown_names(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(topo_text(tmp_path, *GOOD))
    r = fabric("move", path, "nope", "a")
    assert (r.returncode, r.stderr) == (2, f"{path}: no service 'nope' (services: fw, ids)\n")
    r = fabric("move", path, "fw", "zz")
    assert (r.returncode, r.stderr) == (2, f"{path}: no host 'zz' (hosts: a, b)\n")
    r = fabric("move", path, "fw", "a")
    assert (r.returncode, r.stdout) == (0, "fw is on a already: nothing to do\n")


@pytest.mark.parametrize("args", [[], ["plan"], ["apply"], ["move"], ["status"]])
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help(args, flag):
    r = fabric(*args, flag)
    assert (r.returncode, r.stderr) == (0, ""), r
    assert re.search(r"usage: xnv-fabric\b", r.stdout), r.stdout


@pytest.mark.parametrize("args", [["--bogus-flag"], ["plan", EXAMPLE, "--bogus-flag"],
                                  ["apply", "--bogus-flag", EXAMPLE], ["move", EXAMPLE],
                                  ["frobnicate"]])
def test_usage_error_is_one_line(args):
    r = fabric(*args)
    assert (r.returncode, r.stdout) == (2, ""), r
    assert len(r.stderr.splitlines()) == 1 and "xnv-fabric" in r.stderr, r.stderr


def test_plan_of_the_example_and_a_runtime_error(tmp_path):
    r = fabric("plan", EXAMPLE)
    assert r.returncode == 0, r
    assert [ln for ln in r.stdout.splitlines() if ln.startswith("===")] == [
        "=== host a (underlay 10.250.0.1): xnv-core config, written to /etc/xnv/xnv.ini",
        "=== host a: OpenFlow rules of br-xnv (ovs-ofctl -O OpenFlow13 replace-flows br-xnv FILE)",
        "=== host b (underlay 10.250.0.2): xnv-core config, written to /etc/xnv/xnv.ini",
        "=== host b: OpenFlow rules of br-xnv (ovs-ofctl -O OpenFlow13 replace-flows br-xnv FILE)"]
    assert fabric("plan", EXAMPLE, "--host", "b").stdout.count("=== host b") == 2
    path = tmp_path / "t.toml"
    path.write_text(topo_text(tmp_path, *GOOD, host_extra='exec = ["/nonexistent/ssh"]'))
    r = fabric("apply", path)
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, r
    assert r.stderr.startswith("xnv-fabric: host a: ovs-vsctl ") and "/nonexistent/ssh" in r.stderr
