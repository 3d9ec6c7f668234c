# SPDX-License-Identifier: BSD-3-Clause
"""A whole fabric deployment on simulated hosts (sim.py): the topology
file for them, `xnv-fabric apply`, an xnv-core in each host's namespace
and the NFs beside them.  What the end-to-end test, `make demo-fabric`
and the bench's fabric rows run; root.

The caller owns the processes: it passes `start(name, argv)`, which
starts one and returns an object with `.pid`, `.alive()` and stops it by
PID at the caller's teardown (the tests' XnvEnv.start, the demo's own).
Each host's core gets CPU `host index % cpus` (-l N), its own socket and
config in `workdir/<host>/`; NFs connect to their host's core socket
(the unix socket is the filesystem's, not the namespace's).
"""
import os
import subprocess
import sys
from pathlib import Path

FABRIC = Path(__file__).resolve().parents[1] / "xnv-fabric"


def toml_str(v):
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


def toml_list(vs):
    return "[" + ", ".join(toml_str(v) for v in vs) + "]"


def toml_value(v):
    """A string, a number, or a table of them (inline)."""
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    return str(v) if isinstance(v, int) else toml_str(v)


class Deployment:
    """Hosts of `sim` running the chains of `chains` with services placed
    by `placement` ({service: host}); `ports` {host: {name: dev, or
    {"dev": dev, "rx_rate": n, ...}}}."""

    def __init__(self, sim, build, workdir, start, ports, chains, placement,
                 pool_bufs=8192, core_keys=None):
        self.sim, self.build, self.dir = sim, Path(build), Path(workdir)
        self.start, self.ports, self.chains = start, ports, chains
        self.placement = dict(placement)
        self.pool_bufs, self.core_keys = pool_bufs, core_keys or {}
        self.topo = self.dir / "topology.toml"
        self.cores, self.nfs = {}, {}
        for h in sim.hosts:
            (self.dir / h).mkdir(parents=True, exist_ok=True)

    def socket(self, host):
        return self.dir / host / "xnv.sock"

    def config(self, host):
        return self.dir / host / "xnv.ini"

    def ctl(self, host):
        return [str(self.build / "bin" / "xnv-ctl"), "--socket",
                str(self.socket(host))]

    def _host_toml(self, name, h):
        env = ", ".join(f"{k} = {toml_str(v)}" for k, v in
                        sorted(h.env().items()) if k.startswith("OVS_"))
        lines = [f"[hosts.{name}]", f"underlay_ip = {toml_str(h.underlay_ip)}",
                 f"exec = {toml_list(h.prefix())}", f"env = {{ {env} }}",
                 f"ovs_db = {toml_str('unix:' + str(h.db_sock))}",
                 f"core_config = {toml_str(self.config(name))}",
                 f"ctl = {toml_list(self.ctl(name))}"]
        ports = self.ports.get(name, {})
        if ports:
            lines.append(f"[hosts.{name}.ports]")
            lines += [f"{p} = {toml_value(dev)}" for p, dev in ports.items()]
        return lines

    def write_topology(self):
        """The topology file of these hosts (what an operator writes)."""
        lines = ["# written by xnv_fabric.simdeploy for simulated hosts",
                 "[core]", f"socket = {toml_str('/run/xnv/unused.sock')}",
                 *(f"{k} = {toml_str(v)}" for k, v in self.core_keys.items()),
                 "[groups.blue]", f"pool_bufs = {self.pool_bufs}"]
        for name, h in self.sim.hosts.items():
            lines += self._host_toml(name, h)
        lines.append("[services]")
        lines += [f"{s} = {toml_str(h)}" for s, h in self.placement.items()]
        for c, (entry, steps, exit_) in self.chains.items():
            lines += [f"[chains.{c}]", f"entry = {toml_str(entry)}",
                      f"steps = {toml_list(steps)}", f"exit = {toml_str(exit_)}"]
        self.topo.write_text("\n".join(lines) + "\n")
        return self.topo

    def fabric(self, *args, timeout=120):
        """xnv-fabric ARGS on the topology; CompletedProcess (text)."""
        return subprocess.run([sys.executable, str(FABRIC), *args],
                              capture_output=True, text=True, timeout=timeout)

    def start_cores(self, extra=()):
        cpus = os.cpu_count() or 1
        for i, (name, h) in enumerate(self.sim.hosts.items()):
            argv = [*h.prefix(), self.build / "bin" / "xnv-core", "-l",
                    str(i % cpus), "--", "--config", self.config(name),
                    "--socket", self.socket(name), *extra]
            self.cores[name] = self.start(f"core-{name}", [str(a) for a in argv])
        return self.cores

    def start_nf(self, service, host, binary="xnv-forwarder", extra=()):
        name = f"{service}-{host}"
        argv = [self.build / "bin" / binary, "--service", service, "--group",
                "blue", "--name", name, "--socket", self.socket(host), *extra]
        self.nfs[name] = self.start(name, [str(a) for a in argv])
        return self.nfs[name]
