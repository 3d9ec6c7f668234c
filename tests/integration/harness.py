# SPDX-License-Identifier: BSD-3-Clause
"""Process harness of the integration tests (host mode).

Everything a test starts (xnv-core, NFs, probes) goes through an `XnvEnv`,
which records each process and always stops it by PID at teardown
(SIGTERM, wait, SIGKILL, wait).  Nothing is ever killed by name.

Binaries come from $XNV_BUILD (set by `make check-integration`), default
<repo>/build.  The fixtures that hand out an XnvEnv are in conftest.py.
"""
import contextlib
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# The xnv package (dom0-core/python/README.md): the one place the tests
# (and tests/soak) find it.
if str(REPO / "dom0-core" / "python") not in sys.path:
    sys.path.insert(0, str(REPO / "dom0-core" / "python"))

import xnv.telemetry  # noqa: E402
from traffic import read_pcap, write_pcap  # noqa: E402
from xnv.hugepages import hugetlbfs_mounts, meminfo  # noqa: E402,F401 (tests import them from here)
from xnv.procs import Proc as _Proc, scaled, stop_all, unstamped, wait_until  # noqa: E402,F401

BUILD = Path(os.environ.get("XNV_BUILD") or REPO / "build").resolve()
CORE_BIN = BUILD / "bin" / "xnv-core"
FWD_BIN = BUILD / "bin" / "xnv-forwarder"
CTL_BIN = BUILD / "bin" / "xnv-ctl"
PROBE_SRC = REPO / "tests" / "tools" / "xnv-probe.c"

log = logging.getLogger("xnv-it")


# --------------------------------------------------------------------------
# small utilities

def wait_for_socket(path, timeout=20):
    """Until a unix socket exists at `path`."""
    path = Path(path)
    wait_until(path.is_socket, timeout, f"socket {path}")


def listing(dirs):
    """{path: sorted file names} for each existing directory in dirs."""
    return {d: sorted(os.listdir(d)) for d in dirs if os.path.isdir(d)}


def write_config(path, sections):
    """Write an xnv-core INI file.  sections: [(header, {key: value})],
    e.g. [("core", {"socket": s}), ("port in", {"dev": "net_null0"})]."""
    lines = []
    for header, keys in sections:
        lines.append(f"[{header}]")
        lines += [f"{k} = {v}" for k, v in keys.items()]
        lines.append("")
    Path(path).write_text("\n".join(lines))
    return Path(path)


def make_built(*paths):
    """Make these files of the build ($XNV_BUILD, inside the repo) with the
    repo's Makefile (SAN=1 for build-san/): nothing to do when they are up
    to date."""
    san = ["SAN=1"] if BUILD.name == "build-san" else []
    targets = [str(Path(p).relative_to(REPO)) for p in paths]
    r = subprocess.run(["make", "-C", str(REPO), *san, *targets],
                       capture_output=True, text=True, timeout=scaled(600))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]


# --------------------------------------------------------------------------
# CPU share: on a loaded machine a process may wait for a CPU; what it then
# could not do says nothing about the code under test.

def cpu_ticks(pids):
    """utime + stime of every process in `pids`, in clock ticks."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total


def thread_files(pid, *names):
    """{tid: [text of /proc/PID/task/TID/NAME for each of `names`]} of the
    threads of process `pid`.  A thread that ends between the listing and
    the reads (the telemetry thread of a client that just left, say) is
    left out: it has nothing left to check.  {} if the process is gone."""
    out = {}
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except FileNotFoundError:
        return out
    for task in tasks:
        try:
            out[int(task.name)] = [(task / n).read_text() for n in names]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return out


def run_delay_ns(procs):
    """Nanoseconds the processes' threads spent runnable, waiting for a
    CPU (/proc/PID/task/*/schedstat): how much CPU they were denied."""
    return sum(int(sched.split()[1]) for p in procs
               for sched, in thread_files(p.pid, "schedstat").values())


def denied_share(procs, since_ns, since_t):
    """Share of the wall time since `since_t` (time.monotonic()) the
    processes waited for a CPU, from run_delay_ns() then (`since_ns`)."""
    return (run_delay_ns(procs) - since_ns) / 1e9 / (time.monotonic() - since_t)


# --------------------------------------------------------------------------
# processes

class Proc(_Proc):
    """One child process of a test, run in `logdir` with its stdout and
    stderr in <logdir>/<name>.out and .err (xnv.procs.Proc: stopped by PID)."""

    def __init__(self, name, argv, logdir, stdin=None, env=None):
        super().__init__(name, argv, Path(logdir) / f"{name}.out",
                         Path(logdir) / f"{name}.err", stdin=stdin, env=env,
                         cwd=logdir)


class Core(Proc):
    """xnv-core: its socket, its log (stderr), its counters."""

    def __init__(self, name, argv, logdir, socket, stats_json, env=None):
        self.socket = Path(socket)
        self.stats_path = stats_json
        super().__init__(name, argv, logdir, env=env)

    def log(self):
        return self.stderr()

    def wait_ready(self, timeout=20):
        """Until the NF socket is listening (and so signals are handled)."""
        self.wait_output(r"NFs attach on ", timeout)
        wait_for_socket(self.socket, timeout)

    def wait_attached(self, nf, timeout=10):
        """Until the core logs that NF `nf` (a Proc) attached; returns the
        match with groups dom, ring, pool."""
        return self.wait_output(
            rf"NF {re.escape(nf.nf_name)} \(pid {nf.pid}\) attached as domain "
            r"(?P<dom>\d+): .* ring region (?P<ring>\d+), pool region (?P<pool>\d+)",
            timeout)

    def runtime_dir(self):
        """The EAL runtime directory (named by the file-prefix) it logged."""
        m = re.search(r"EAL runtime directory (\S+)", self.log())
        assert m, self.log()[-2000:]
        return Path(m.group(1))

    def stats(self):
        """The --stats-json file written at exit."""
        return json.loads(Path(self.stats_path).read_text())

    def snapshot(self, timeout=5):
        """Counters now: SIGUSR1 makes the core print its table on stdout.
        Returns {"ports": {name: {rx, tx, missed, nombuf}}, "nfs": {name: {...}},
        "groups": {name: {...}}, "pools": {region: {...}}, "drops": {reason: n}}."""
        before = self.stdout().count("\n  core drops:")
        self.signal(signal.SIGUSR1)
        wait_until(lambda: self.stdout().count("\n  core drops:") > before,
                   timeout, "the statistics table after SIGUSR1")
        return parse_stats_table(self.stdout())


def parse_stats_table(text):
    """Parse the last table xnv_stats_print() wrote."""
    block = text[text.rindex("xnv-core statistics after"):]
    res = {"ports": {}, "nfs": {}, "groups": {}, "pools": {}, "drops": {}}
    mode = None
    for line in block.splitlines()[1:]:
        f = line.split()
        if not f:
            continue
        if f[0] == "port" and f[1] == "rx":
            mode = "ports"
        elif f[0] == "nf" and f[1] == "service":
            mode = "nfs"
        elif f[0] == "group":
            res["groups"][f[1]] = {"pool_bufs": int(f[3]), "free": int(f[5]),
                                   "copied_in": int(f[7])}
        elif f[0] == "pool":    # an NF's own pool, by region name
            res["pools"][f[1]] = {"group": f[3], "pool_bufs": int(f[4]),
                                  "free": int(f[6]), "retired": "gone;" in f}
        elif f[0] == "domain":  # a domain with NFs or a quarantine (domain.c)
            res.setdefault("domains", {})[int(f[1])] = {
                f[i]: int(f[i + 1]) for i in range(2, len(f) - 1, 2)}
        elif f[0] == "gntalloc:":
            res["gntalloc_pages"] = int(f[1])
        elif f[:2] == ["core", "drops:"]:
            res["drops"] = {f[i]: int(f[i + 1]) for i in range(2, len(f) - 1, 2)}
            break
        elif mode == "ports":
            res["ports"][f[0]] = {"rx": int(f[1]), "tx": int(f[2]),
                                  "missed": int(f[3]), "nombuf": int(f[4])}
        elif mode == "nfs":
            res["nfs"][f[0]] = dict(service=f[1], rx=int(f[2]), tx=int(f[3]),
                                    drop=int(f[4]), bad=int(f[5]),
                                    reclaimed=int(f[6]), state=f[7])
    return res


def nf_env():
    """The environment without XNV_* variables (NF options come from argv)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("XNV_")}


class XnvEnv:
    """Per-test (or per-module) workspace: a log directory, a short unique
    socket directory, and every process started, stopped at close()."""

    def __init__(self, logdir, probe_bin):
        self.dir = Path(logdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        # sun_path is 108 bytes: keep sockets in a short private directory.
        self.sockdir = Path(tempfile.mkdtemp(prefix="xnv-it-", dir="/tmp"))
        self.socket = self.sockdir / "xnv.sock"
        self.probe_bin = probe_bin
        self.procs = []
        self._names = {}

    def path(self, name):
        return self.dir / name

    def _unique(self, name):
        n = self._names.get(name, 0)
        self._names[name] = n + 1
        return name if n == 0 else f"{name}.{n}"

    def start(self, name, argv, **kw):
        p = Proc(self._unique(name), argv, self.dir, **kw)
        self.procs.append(p)
        return p

    def start_core(self, config, socket=None, idle_exit=None, duration=60,
                   stats_json="stats.json", eal=("-l", "0"), wrapper=(),
                   name="core", binary=None, env=None, extra=()):
        """[wrapper] xnv-core [EAL] -- --config F --socket S --duration D
        ... [extra]; binary: another copy of xnv-core; env: its
        environment."""
        socket = Path(socket or self.socket)
        name = self._unique(name)
        argv = [*wrapper, binary or CORE_BIN, *eal, "--", "--config", config,
                "--socket", socket, "--duration", round(scaled(duration))]
        if idle_exit is not None:
            argv += ["--idle-exit", idle_exit]
        stats = None
        if stats_json:
            stats = self.dir / f"{name}-{stats_json}"
            argv += ["--stats-json", stats]
        argv += list(extra)
        core = Core(name, argv, self.dir, socket, stats, env=env)
        self.procs.append(core)
        return core

    def start_nf(self, service, group, name, socket=None, extra=(),
                 binary=None):
        """An NF (xnv-forwarder by default) with a fixed instance name."""
        argv = [binary or FWD_BIN, "--service", service, "--group", group,
                "--name", name, "--socket", socket or self.socket, *extra]
        p = self.start(name, argv, env=nf_env())
        p.nf_name = name
        return p

    def start_probe(self, *args, name="probe", stdin=None):
        return self.start(name, [self.probe_bin, "--socket", self.socket,
                                 "--name", name, *args], stdin=stdin)

    def run(self, argv, timeout=30, env=None, input=None):
        """Run a short command to completion (killed on timeout); `input`:
        text for its stdin.  Its stderr's log lines come without their
        time and level (xnv.procs.unstamped)."""
        r = subprocess.run([str(a) for a in argv], capture_output=True,
                           text=True, timeout=scaled(timeout),
                           cwd=self.dir,
                           input=input,
                           env=env if env is not None else nf_env())
        r.stderr = unstamped(r.stderr)
        return r

    def close(self):
        alive = [p for p in self.procs if p.alive()]
        if alive:
            log.info("teardown: stopping %s", alive)
        # NFs and probes first (last started first), the cores last (they
        # would detach the NFs anyway): stop_all stops the list backwards.
        try:
            stop_all(sorted(self.procs, key=lambda p: not isinstance(p, Core)))
        finally:
            shutil.rmtree(self.sockdir, ignore_errors=True)


@contextlib.contextmanager
def xnv_env(logdir, probe_bin):
    env = XnvEnv(logdir, probe_bin)
    try:
        yield env
    finally:
        env.close()


# --------------------------------------------------------------------------
# scenarios shared by several modules

def pcap_chain_config(env, in_pcap, out_pcap, services=("fwd-a", "fwd-b"),
                      group="blue", pool_bufs=4096, name="chain.ini",
                      core_opts=None):
    """port in (pcap) -> services... -> port out (pcap), one group;
    core_opts: more [core] keys."""
    return write_config(env.path(name), [
        ("core", {"socket": env.socket, **(core_opts or {})}),
        (f"group {group}", {"pool_bufs": pool_bufs}),
        ("port in", {"dev": f"net_pcap0,rx_pcap={in_pcap}", "group": group,
                     "chain": " -> ".join([*services, "out"])}),
        ("port out", {"dev": f"net_pcap1,tx_pcap={out_pcap}", "group": group}),
        *[(f"service {s}", {}) for s in services],
    ])


def run_pcap_chain(env, packets, services=("fwd-a", "fwd-b"), group="blue",
                   pool_bufs=4096, wrapper=(), idle_exit=500, timeout=60,
                   core_opts=None):
    """Send `packets` through port -> services -> port with forwarder NFs;
    the core stops by itself (--idle-exit).  Returns a dict with the core,
    the NFs, the output packets and the final counters."""
    in_pcap = write_pcap(env.path("in.pcap"), packets)
    out_pcap = env.path("out.pcap")
    cfg = pcap_chain_config(env, in_pcap, out_pcap, services, group, pool_bufs,
                            core_opts=core_opts)
    core = env.start_core(cfg, idle_exit=idle_exit, wrapper=wrapper)
    core.wait_ready()
    nfs = [env.start_nf(s, group, f"{s}-1") for s in services]
    for nf in nfs:
        core.wait_attached(nf)
    rc = core.wait(timeout)
    nf_rcs = [nf.wait(10) for nf in nfs]
    return {"core": core, "core_rc": rc, "nfs": nfs, "nf_rcs": nf_rcs,
            "in": packets, "out": read_pcap(out_pcap), "stats": core.stats()}


# --------------------------------------------------------------------------
# control commands: DPDK telemetry socket of a running core

class Telemetry(xnv.telemetry.Telemetry):
    """One connection to a core's DPDK telemetry socket, found in the
    directory the core logs as "EAL runtime directory".  `t(cmd, params)`
    sends one command and returns the value of its reply ({"error": ...} on
    a failed /xnv/ command, None for a command telemetry does not know); a
    command the core withdrew as busy is asked again for up to 30 s."""

    def __init__(self, core, timeout=5):
        m = re.search(r"EAL runtime directory (\S+)", core.log())
        assert m, f"no EAL runtime directory in the core's log:\n{core.log()[-2000:]}"
        super().__init__(Path(m.group(1)) / "dpdk_telemetry.v2",
                         scaled(timeout))

    def __call__(self, cmd, params=None, busy_timeout=30):
        return self.call(cmd, params, scaled(busy_timeout))


def nf_infos(t):
    """{name: /xnv/nf/info} of every NF on record, over Telemetry `t`."""
    ids = t("/xnv/nf/list")
    assert isinstance(ids, list), ids
    infos = [t("/xnv/nf/info", n) for n in ids]
    assert all("name" in i for i in infos), infos
    return {i["name"]: i for i in infos}


def nf_info(t, name):
    """/xnv/nf/info of the NF called `name`."""
    info = nf_infos(t).get(name)
    assert info is not None, f"no NF {name}"
    return info


def watch_dozing_sender(core, nf, port=0):
    """While NF `nf` (a Proc: a generator sending to port index `port`)
    runs: until it has been seen dozing (doorbell.c), two of its packets
    have left the port and one of its kicks woke the core.  Returns
    (still running, packets out, its last /xnv/nf/info)."""
    tx, info = 0, {}
    seen_dozing = 0
    with Telemetry(core) as t:
        while nf.alive():
            info = nf_info(t, nf.nf_name)
            seen_dozing |= info["dozing"]
            tx = t("/xnv/port/info", port)["tx"]
            if seen_dozing and tx >= 2 and info["bell_wakes"] >= 1:
                break
            time.sleep(0.02)
    return nf.alive(), tx, info


def ctl(core, cmd, params=None, timeout=5):
    """One control command on a fresh telemetry connection, e.g.
    ctl(core, "/xnv/flow/add", "proto=udp src=.. dst=.. chain=fwd-b->out")."""
    with Telemetry(core, timeout) as t:
        return t(cmd, params)


# --------------------------------------------------------------------------
# xnv-testnf (tests/tools/xnv-testnf.c): verdict, per-packet delay, flows

TESTNF_SRC = REPO / "tests" / "tools" / "xnv-testnf.c"
_testnf_built = {}
_flows_seq = iter(range(1, 1 << 30))


def testnf_bin():
    """The xnv-testnf binary of the build (make check-integration builds
    it), else compiled once into a temporary directory."""
    built = BUILD / "tests" / "tools" / "xnv-testnf"
    if built.exists() and built.stat().st_mtime >= TESTNF_SRC.stat().st_mtime:
        return built
    if "bin" not in _testnf_built:
        out = Path(tempfile.mkdtemp(prefix="xnv-testnf-")) / "xnv-testnf"
        cmd = [os.environ.get("CC", "cc"), "-std=c11", "-D_GNU_SOURCE", "-O2",
               "-Wall", "-I", REPO / "domu-lib" / "include", "-o", out,
               TESTNF_SRC, BUILD / "lib" / "libxnv.a"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=scaled(120))
        if r.returncode != 0:       # a sanitizer build of the library
            r = subprocess.run(cmd + ["-fsanitize=address,undefined"],
                               capture_output=True, text=True, timeout=scaled(120))
        assert r.returncode == 0, f"cannot build xnv-testnf:\n{r.stderr}"
        log.warning("%s missing or stale: compiled %s", built, out)
        _testnf_built["bin"] = out
    return _testnf_built["bin"]


def start_testnf(env, service, group, name, action=None, delay_us=None,
                 flows=True, socket=None):
    """xnv-testnf as an NF of `service` in `group`.  With flows, it keeps
    per-flow counts in nf.flows_path (see read_flows, dump_flows)."""
    own = []
    if action is not None:
        own += ["--action", action]
    if delay_us:
        own += ["--delay-us", delay_us]
    flows_path = env.path(f"{name}.{next(_flows_seq)}.flows") if flows else None
    if flows:
        own += ["--flows", flows_path]
    nf = env.start_nf(service, group, name, socket=socket,
                      extra=("--", *own) if own else (), binary=testnf_bin())
    nf.flows_path = flows_path
    return nf


def read_flows(path):
    """{flow: packets} from an xnv-testnf flows file; a flow is the line
    without its count, e.g. "udp 10.0.0.1 1024 10.1.0.1 53"."""
    flows = {}
    for line in Path(path).read_text().splitlines():
        key, count = line.rsplit(" ", 1)
        flows[key] = int(count)
    return flows


def dump_flows(nf, timeout=5):
    """Ask a running xnv-testnf for its flows now (SIGUSR1; it writes at its
    next packet, so traffic must reach it) and return read_flows()."""
    path = Path(nf.flows_path)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    nf.signal(signal.SIGUSR1)
    wait_until(path.exists, timeout, f"{nf.name} to write {path}")
    return read_flows(path)


def start_named_core(env, cfg, name):
    """A core on its own socket <sockdir>/<name>.sock, started and ready."""
    core = env.start_core(cfg, socket=env.sockdir / f"{name}.sock",
                          duration=120, name=name)
    core.wait_ready()
    return core
