# SPDX-License-Identifier: BSD-3-Clause
"""Running the example NFs (examples/) in the integration tests.

run_nfs() sends a list of frames from a pcap port through a chain of
example NFs and collects what leaves each of `n_out` pcap ports; the core
stops by itself once idle.  Port indices, as the NFs' XNV_OUT() sees them:
0 is "in", 1..n_out are "out0".. (config order).  Every process is started
through the XnvEnv, so it is stopped by PID at teardown.
"""
import re
from dataclasses import dataclass, field

from harness import BUILD, write_config
from traffic import read_pcap, write_pcap

REPO_EXAMPLES = BUILD.parent / "examples"


def nf_bin(name):
    return BUILD / "bin" / f"xnv-{name}"


@dataclass
class NfSpec:
    """One NF of the chain: example binary `name`, its own arguments
    (after `--`), the service it provides (default: its name)."""
    name: str
    args: tuple = ()
    service: str = ""

    def __post_init__(self):
        self.service = self.service or self.name


@dataclass
class NfRun:
    core: object
    core_rc: int
    nfs: dict                    # service -> Proc
    nf_rcs: dict                 # service -> exit status
    outs: list                   # frames out of port 1, 2, ...
    stats: dict
    counters: dict = field(default_factory=dict)   # service -> {name: n}

    def lines(self, service):
        """The NF's stdout lines, without their "NF: " prefix."""
        return [line.split(": ", 1)[1] for line in
                self.nfs[service].stdout().splitlines() if ": " in line]


def parse_counters(text):
    """{counter: value} from "nf: COUNTER N" lines."""
    out = {}
    for m in re.finditer(r"^\w+: (\w+) (\d+)$", text, re.M):
        out[m.group(1)] = int(m.group(2))
    return out


def core_section(env):
    """[core] of the tests' configs.  The machine is shared: an NF may be
    off the CPU for a while, and a packet must wait for it rather than be
    dropped after the default 500 ms (the tests count every packet)."""
    return ("core", {"socket": env.socket, "stall_timeout_ms": 20000})


def nf_config(env, in_pcap, services, n_out, pool_bufs=4096):
    return write_config(env.path("nfs.ini"), [
        core_section(env),
        ("group g", {"pool_bufs": pool_bufs}),
        ("port in", {"dev": f"net_pcap0,rx_pcap={in_pcap}", "group": "g",
                     "chain": " -> ".join([*services, "out0"])}),
        *[(f"port out{i}", {"dev": f"net_pcap{i + 1},tx_pcap="
                            f"{env.path(f'out{i}.pcap')}", "group": "g"})
          for i in range(n_out)],
        *[(f"service {s}", {}) for s in services],
    ])


def run_nfs(env, packets, specs, n_out=1, timeout=60):
    """packets -> port in -> specs[0] -> specs[1] ... -> out0 (unless an
    NF sends elsewhere).  Waits for the core to stop by itself."""
    in_pcap = write_pcap(env.path("in.pcap"), packets)
    services = [s.service for s in specs]
    core = env.start_core(nf_config(env, in_pcap, services, n_out),
                          idle_exit=500)
    core.wait_ready()
    nfs = {}
    for s in specs:
        nfs[s.service] = env.start_nf(s.service, "g", s.service,
                                      binary=nf_bin(s.name),
                                      extra=("--", *s.args))
    for nf in nfs.values():
        core.wait_attached(nf)
    rc = core.wait(timeout)
    nf_rcs = {s: nf.wait(10) for s, nf in nfs.items()}
    run = NfRun(core, rc, nfs, nf_rcs,
                [read_pcap(env.path(f"out{i}.pcap")) for i in range(n_out)],
                core.stats())
    run.counters = {s: parse_counters(nf.stdout()) for s, nf in nfs.items()}
    return run


def run_bad_file(env, name, args):
    """The NF with its own arguments `args`, no core needed (files are
    read before attaching).  Returns the CompletedProcess."""
    return env.run([nf_bin(name), "--service", name, "--socket",
                    env.sockdir / "none.sock", "--", *args], timeout=20)


def assert_bad_file(env, name, option, text, line, msg, fname="rules.txt"):
    """The NF with `text` as the file of `option` must exit 1, its first
    line on stderr naming the file and `line`, and saying `msg`."""
    path = env.path(fname)
    path.write_text(text)
    r = run_bad_file(env, name, [option, path])
    assert r.returncode == 1, r
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"{path}:{line}: ") and msg in first, r.stderr


def rechecksummed(frame):
    """`frame` with every checksum scapy knows recomputed from scratch."""
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.l2 import Ether
    p = Ether(frame)
    for layer in (IP, TCP, UDP):
        if not p.haslayer(layer):
            continue
        if layer is UDP and p.haslayer(IP) and p[UDP].chksum == 0:
            continue                    # sent without a checksum
        del p[layer].chksum
    return bytes(p)


def run_two_phases(env, spec, phase1, phase2, between, timeout=20):
    """Send `phase1` through the NF of `spec`, wait until it has all been
    handled, call between(nf) (e.g. rewrite a file and SIGHUP, or sleep),
    then send `phase2` the same way.  Phase 2 comes from a second pcap
    port whose chain starts with a forwarder "gate": its rx starts only
    when the gate attaches, after between().  Returns (nf, frames out in
    phase 1, frames out in phase 2); the core is stopped, the NF gone."""
    from harness import FWD_BIN, wait_until
    pcaps = [write_pcap(env.path(f"phase{i}.pcap"), p)
             for i, p in ((1, phase1), (2, phase2))]
    cfg = write_config(env.path("phases.ini"), [
        core_section(env),
        ("group g", {"pool_bufs": 2048}),
        ("port in1", {"dev": f"net_pcap0,rx_pcap={pcaps[0]}", "group": "g",
                      "chain": f"{spec.service} -> out"}),
        ("port in2", {"dev": f"net_pcap1,rx_pcap={pcaps[1]}", "group": "g",
                      "chain": f"gate -> {spec.service} -> out"}),
        ("port out", {"dev": f"net_pcap2,tx_pcap={env.path('out.pcap')}",
                      "group": "g"}),
        (f"service {spec.service}", {}), ("service gate", {}),
    ])
    core = env.start_core(cfg)
    core.wait_ready()
    nf = env.start_nf(spec.service, "g", spec.service, binary=nf_bin(spec.name),
                      extra=("--", *spec.args))
    core.wait_attached(nf)

    def handled(n):
        # every packet the NF got is back (passed on or dropped): rx
        # alone reaches n while the NF still holds some of them
        s = core.snapshot()
        rec = s["nfs"][spec.service]
        return rec["rx"] == n and rec["tx"] + rec["drop"] == n and \
            s["ports"]["out"]["tx"] == rec["tx"] and rec["tx"]
    n1 = wait_until(lambda: handled(len(phase1)), timeout, "phase 1")
    between(nf)
    core.wait_attached(env.start_nf("gate", "g", "gate", binary=FWD_BIN))
    wait_until(lambda: handled(len(phase1) + len(phase2)), timeout, "phase 2")
    core.stop()
    assert nf.wait(10) == 0, nf.stderr()
    out = read_pcap(env.path("out.pcap"))
    return nf, out[:n1], out[n1:]
