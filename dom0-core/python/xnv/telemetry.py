# SPDX-License-Identifier: BSD-3-Clause
"""A DPDK telemetry v2 client.

DPDK telemetry is a SOCK_SEQPACKET unix socket at
<runtime dir>/<file-prefix>/dpdk_telemetry.v2 (see prefix.py) that greets
with a JSON object (version, pid, max_output_len), then answers each request
"CMD[,PARAMS]" with one JSON object {CMD: data}; data is null for a command
it does not know.  xnv-core's /xnv/ commands are listed in
dom0-core/CONTROL.md; any DPDK process answers the /ethdev/ ones.

xnv-core runs a command between bursts.  If its loop does not get there in
time (a starved CPU) it withdraws the command unrun and says so with
{"error": "xnv-core did not answer within N s", "busy": 1}: then it is safe
to ask again, which call() does until busy_timeout.
"""
import json
import logging
import socket
import time

from . import Error

log = logging.getLogger("xnv")


class TelemetryError(Error):
    """The telemetry connection failed (one line saying how)."""


class NotListening(TelemetryError):
    """Nothing listens at the socket's path (no such process, or gone)."""


class Telemetry:
    """One connection to a DPDK process's telemetry socket at `path`.
    `timeout`: seconds for the connection and for each reply; `who` names
    the peer in error messages.  Raises TelemetryError (NotListening when
    nothing is there); t(cmd, params) is t.call(cmd, params)."""

    BUSY = "xnv-core did not answer within"     # ctl.c's withdrawn command

    def __init__(self, path, timeout=5.0, who="xnv-core"):
        self.path, self.timeout, self.who = str(path), timeout, who
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.settimeout(timeout)
        try:
            self._connect()
            greeting = self._recv()
        except BaseException:
            self.sock.close()
            raise
        self.max_len = int(greeting.get("max_output_len", 16384)
                           if isinstance(greeting, dict) else 16384)

    def _connect(self):
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                self.sock.connect(self.path)
                return
            except BlockingIOError:     # telemetry's listen backlog (1) is full
                if time.monotonic() > deadline:
                    raise TelemetryError(f"{self.who} accepted no connection at "
                                         f"{self.path} within {self.timeout:g} s") from None
                time.sleep(0.01)
            except OSError as e:
                raise NotListening(f"nothing listens at {self.path} "
                                   f"({e.strerror})") from None

    def _recv(self):
        try:
            raw = self.sock.recv(max(1 << 20, getattr(self, "max_len", 0) + 1024))
        except socket.timeout:
            raise TelemetryError(f"{self.who} did not answer within "
                                 f"{self.timeout:g} s") from None
        except OSError as e:
            raise TelemetryError(f"telemetry connection failed: {e.strerror}") from None
        if not raw:
            raise TelemetryError(f"{self.who} closed the telemetry connection")
        try:
            return json.loads(raw)
        except ValueError:
            raise TelemetryError(f"not a JSON reply: {raw[:80]!r}") from None

    def _busy(self, data):
        return isinstance(data, dict) and bool(
            data.get("busy") or str(data.get("error", "")).startswith(self.BUSY))

    def call(self, cmd, params=None, busy_timeout=None):
        """The data of CMD's reply: None for a command the peer does not
        know, {"error": ...} for a failed /xnv/ command.  A command the core
        withdrew as busy is asked again for up to busy_timeout seconds
        (default: the connection's timeout), then its busy reply returned."""
        msg = (cmd if params is None else f"{cmd},{params}").encode()
        deadline = time.monotonic() + (self.timeout if busy_timeout is None else busy_timeout)
        while True:
            try:
                self.sock.send(msg)
            except OSError as e:
                raise TelemetryError(f"telemetry connection failed: {e.strerror}") from None
            reply = self._recv()
            data = reply.get(cmd) if isinstance(reply, dict) else None
            if not self._busy(data) or time.monotonic() > deadline:
                return data
            log.info("telemetry %s: %s; asking again", cmd, data.get("error", "busy"))

    __call__ = call

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
