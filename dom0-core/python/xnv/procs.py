# SPDX-License-Identifier: BSD-3-Clause
"""Child processes of tests and benchmarks, and waiting for them.

Everything started goes through Proc, which keeps its output in files and is
always stopped by its PID (signal, wait, SIGKILL, wait).  Nothing here ever
finds or kills a process by name.
"""
import contextlib
import logging
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from . import Error

log = logging.getLogger("xnv")


class Timeout(Error):
    """wait_until (or Proc.wait) ran out of time."""


class Exited(Error):
    """A process we were waiting on exited."""


def tail(path, n=15):
    """The last n lines of a log, indented, for error messages."""
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return "    (no %s)" % path
    return "\n".join("    | " + line for line in lines[-n:])


def _time_scale():
    v = os.environ.get("XNV_TIME_SCALE", "1")
    try:
        s = float(v)
    except ValueError:
        s = 0.0
    if not 1 <= s <= 100:
        raise Error(f"XNV_TIME_SCALE={v!r}: want a number from 1 to 100 "
                    "(every timeout of the tests is multiplied by it)")
    return s


# The one scale factor of every timeout the tests and benchmarks wait
# with (XNV_TIME_SCALE, default 1: e.g. 3 on a machine busy with other
# work).  A timeout bounds a wait for something that will happen; it never
# measures a rate, so a larger one only makes a failing run slower.
TIME_SCALE = _time_scale()


def scaled(seconds):
    """`seconds` times XNV_TIME_SCALE."""
    return seconds * TIME_SCALE


def _said(seconds):
    return (f"{scaled(seconds):g} s" if TIME_SCALE == 1 else
            f"{scaled(seconds):g} s ({seconds:g} s x XNV_TIME_SCALE)")


def wait_until(fn, timeout, what, procs=(), interval=0.05):
    """Call fn() until it returns something truthy; return that value.
    Raises Timeout after `timeout` seconds (times XNV_TIME_SCALE), Exited
    as soon as one of `procs` (Procs) has exited."""
    deadline = time.monotonic() + scaled(timeout)
    while True:
        v = fn()
        if v:
            return v
        for p in procs:
            if not p.alive():
                raise Exited(f"{p.name} exited ({p.returncode}) while waiting "
                             f"for {what}:\n{tail(p.log_path)}")
        if time.monotonic() > deadline:
            raise Timeout(f"timed out after {_said(timeout)} waiting for "
                          f"{what}")
        time.sleep(interval)


def cpu_ns(pid, tid=None):
    """On-CPU nanoseconds of thread `tid` of `pid` (default: its main
    thread), from /proc schedstat; None if gone or unknown."""
    try:
        with open("/proc/%d/task/%d/schedstat" % (pid, pid if tid is None else tid)) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def stop_popen(popen, name, sig=signal.SIGTERM, grace=5.0):
    """Stop one process we started, by its PID: `sig`, wait `grace` s,
    then SIGKILL and wait.  Returns its exit status."""
    if popen.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            popen.send_signal(sig)
        try:
            popen.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            log.warning("%s (pid %d) ignored signal %d: SIGKILL", name, popen.pid, sig)
            popen.kill()
            popen.wait(timeout=grace)
    return popen.returncode


# The start of every log line of xnv-core and libxnv: its UTC time and
# level (docs/DESIGN.md, "Log lines").  stderr() leaves it out, so that
# tests compare what the line says; raw_stderr() has it.
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z "
                   r"(?:EMERG|ALERT|CRIT|ERROR|WARN|NOTICE|INFO|DEBUG) ", re.M)


def unstamped(text):
    """`text` without the time and level that start its log lines."""
    return STAMP.sub("", text)


class Proc:
    """One child process.  stdout goes to `out` (a path); stderr to `err`,
    or with err=None into `out` too, which then starts with the command
    line ("$ argv").  stdin: "pipe" (kept open until stop) or /dev/null.
    stop_sig: the signal that makes it exit cleanly (testpmd: SIGINT);
    thread: the comm of its data-path thread for cpu_ns() (None: main)."""

    def __init__(self, name, argv, out, err=None, stdin=None, env=None, cwd=None,
                 stop_sig=signal.SIGTERM, thread=None):
        self.name = name
        self.argv = [str(a) for a in argv]
        self.out_path = Path(out)
        self.err_path = Path(err) if err is not None else None
        self.log_path = self.err_path or self.out_path     # where errors show
        self.stop_sig, self.thread = stop_sig, thread
        with contextlib.ExitStack() as files:
            o = files.enter_context(open(self.out_path, "w"))
            if err is None:
                o.write("$ %s\n" % " ".join(self.argv))
                o.flush()
                e = subprocess.STDOUT
            else:
                e = files.enter_context(open(self.err_path, "w"))
            self.popen = subprocess.Popen(
                self.argv, stdout=o, stderr=e, env=env, cwd=cwd,
                stdin=subprocess.PIPE if stdin == "pipe" else subprocess.DEVNULL)
        self.pid = self.popen.pid
        log.info("started %s pid %d: %s", name, self.pid, " ".join(self.argv))

    def __repr__(self):
        return f"<{self.name} pid {self.pid} rc {self.popen.returncode}>"

    @property
    def returncode(self):
        return self.popen.poll()

    def alive(self):
        return self.popen.poll() is None

    def stdout(self):
        return self.out_path.read_text(errors="replace")

    def stderr(self):
        """Its stderr, log lines without their time and level."""
        return unstamped(self.raw_stderr())

    def raw_stderr(self):
        return self.log_path.read_text(errors="replace")

    def signal(self, sig):
        if self.alive():
            os.kill(self.pid, sig)

    def wait(self, timeout):
        """Exit status; Timeout if still running after `timeout` s (times
        XNV_TIME_SCALE)."""
        try:
            return self.popen.wait(timeout=scaled(timeout))
        except subprocess.TimeoutExpired:
            raise Timeout(f"{self.name} (pid {self.pid}) still running "
                          f"after {_said(timeout)}") from None

    def close_stdin(self):
        if self.popen.stdin is not None and not self.popen.stdin.closed:
            with contextlib.suppress(OSError):
                self.popen.stdin.close()

    def wait_output(self, pattern, timeout, stream="err"):
        """Wait until `pattern` (regex) appears in its stderr (or stdout);
        return the match.  Fails early (Exited) if the process exits."""
        rx = re.compile(pattern, re.M)

        def check():
            read = self.stderr if stream == "err" else self.stdout
            m = rx.search(read())
            if m is None and not self.alive():
                m = rx.search(read())       # what it wrote before exiting
                if m is None:
                    raise Exited(f"{self.name} exited ({self.returncode}) without "
                                 f"printing /{pattern}/; stderr:\n{self.stderr()[-3000:]}")
            return m
        return wait_until(check, timeout, f"/{pattern}/ from {self.name}")

    def stop(self, grace=5.0):
        """stop_sig, wait, SIGKILL, wait: by PID, never by name; then
        close its stdin."""
        rc = stop_popen(self.popen, self.name, self.stop_sig, grace)
        self.close_stdin()
        return rc

    def tid(self):
        """TID of the data-path thread (the main thread unless .thread
        names another one by its comm); None if not there (yet)."""
        if self.thread is None:
            return self.pid
        with contextlib.suppress(OSError):
            for t in os.listdir("/proc/%d/task" % self.pid):
                comm = Path("/proc/%d/task/%s/comm" % (self.pid, t))
                with contextlib.suppress(OSError):
                    if comm.read_text().strip() == self.thread:
                        return int(t)
        return None

    def cpu_ns(self):
        """On-CPU nanoseconds of the data-path thread (None if unknown)."""
        tid = self.tid()
        return None if tid is None else cpu_ns(self.pid, tid)


def stop_all(procs):
    """Stop every process, last started first; raise Error naming those
    that resisted (after trying all)."""
    errors = []
    for p in reversed(list(procs)):
        try:
            p.stop()
        except Exception as e:      # go on with the others
            errors.append(f"{p!r}: {e}")
    if errors:
        raise Error("could not stop: %s" % "; ".join(errors))
