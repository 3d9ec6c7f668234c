# SPDX-License-Identifier: BSD-3-Clause
"""Which telemetry socket is the core the operator means.

A core writes a pointer file next to its NF socket once its telemetry
listens (dom0-core/ctl_pointer.c): the socket's real path plus ".ctl",
holding "telemetry=PATH" and "pid=N" lines; it removes it at a clean exit.
So a socket path, however it is typed (relative, "//", a symlink, a
trailing slash), names one core: its real path names the pointer file.
Also taken for --socket: the telemetry socket itself, or the core's EAL
runtime directory.  A core without a pointer file (an older one, one that
could not write it) is found by the file-prefix hash of the path as given
(prefix.py).  With no socket at all: the default socket's core, else the
only xnv-core running (every DPDK runtime directory is looked at); with
several, the caller is told which there are.
"""
import glob
import os

from .prefix import TELEMETRY_SOCKET, file_prefix, telemetry_path
from .telemetry import Telemetry, TelemetryError

POINTER_SUFFIX = ".ctl"
PROBE_TIMEOUT_S = 2.0


class Found:
    """A core's telemetry socket, and what to tell the operator when it does
    not answer there (`hint`)."""

    def __init__(self, path, hint):
        self.path, self.hint = path, hint


class LocateError(Exception):
    """No single core: the message (its first line says why); `status` 1
    when there is none, 2 when there are several to choose from."""

    def __init__(self, msg, status):
        super().__init__(msg)
        self.status = status


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:     # somebody else's process: alive
        return True
    return True


def read_pointer(path):
    """(telemetry path, pid) from a pointer file, or None when there is no
    such file or it is not one."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            kv = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
        return kv["telemetry"], int(kv["pid"])
    except (OSError, KeyError, ValueError):
        return None


def pointer_of(sock):
    """The pointer file a core with NF socket `sock` writes (real path)."""
    return os.path.realpath(sock) + POINTER_SUFFIX


def from_socket(sock):
    """The core `sock` names: an NF socket (any spelling), its pointer file,
    the core's runtime directory, or its telemetry socket."""
    if os.path.isdir(sock) and os.path.exists(os.path.join(sock, TELEMETRY_SOCKET)):
        return Found(os.path.join(sock, TELEMETRY_SOCKET), f"runtime directory {sock}")
    if os.path.basename(os.path.normpath(sock)) == TELEMETRY_SOCKET:
        return Found(os.path.normpath(sock), "the telemetry socket given")
    ptr = pointer_of(sock)
    found = read_pointer(ptr)
    if found is not None:
        tel, pid = found
        if pid_alive(pid):
            return Found(tel, f"pointer file {ptr}, pid {pid}")
        stale = f"{ptr} names pid {pid}, which is gone: "
    else:
        stale = ""
    # An older core: its file-prefix hashes the path as it was given.
    for spelling in (sock, os.path.realpath(sock), os.path.abspath(sock)):
        tel = telemetry_path(file_prefix(spelling))
        if os.path.exists(tel):
            return Found(tel, f"{stale}is it running with --socket {spelling}?")
    return Found(telemetry_path(file_prefix(sock)),
                 f"{stale}is it running with --socket {sock}?")


def runtime_dirs():
    """Where EAL puts the files of the processes we may mean: under
    $RUNTIME_DIRECTORY alone when it is set (a systemd service's, as EAL
    itself prefers it), else root's, the user's and /tmp's."""
    if os.environ.get("RUNTIME_DIRECTORY"):
        return [os.path.join(os.environ["RUNTIME_DIRECTORY"], "dpdk")]
    out = []
    for d in ("/var/run", os.environ.get("XDG_RUNTIME_DIR"), "/tmp"):
        if d and os.path.join(d, "dpdk") not in out:
            out.append(os.path.join(d, "dpdk"))
    return out


def running_cores():
    """[(telemetry path, /xnv/info)] of every xnv-core that answers."""
    cores = []
    for d in runtime_dirs():
        for tel in sorted(glob.glob(os.path.join(d, "*", TELEMETRY_SOCKET))):
            try:
                with Telemetry(tel, PROBE_TIMEOUT_S) as t:
                    info = t.call("/xnv/info", busy_timeout=PROBE_TIMEOUT_S)
            except TelemetryError:
                continue
            if isinstance(info, dict) and "socket" in info:
                cores.append((tel, info))
    return cores


def only_core(default_socket):
    """The default socket's core when it runs, else the only one running."""
    found = from_socket(default_socket)
    if os.path.exists(found.path):
        return found
    cores = running_cores()
    if len(cores) == 1:
        tel, info = cores[0]
        return Found(tel, f"the only xnv-core running (socket {info['socket']})")
    if not cores:
        raise LocateError(f"no xnv-core running (none at {default_socket}, no "
                          f"telemetry socket answering in {', '.join(runtime_dirs())})", 1)
    lines = [f"{len(cores)} xnv-cores are running: choose one with --socket PATH"]
    lines += [f"  --socket {info['socket']}    (telemetry {tel})" for tel, info in cores]
    raise LocateError("\n".join(lines), 2)


def locate(socket=None, prefix=None, default_socket="/run/xnv/xnv.sock"):
    """The Found core for --socket / --file-prefix / neither."""
    if prefix is not None:
        return Found(telemetry_path(prefix), f"is it running with --file-prefix {prefix}?")
    if socket is not None:
        return from_socket(socket)
    return only_core(default_socket)
