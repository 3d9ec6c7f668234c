#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""stall-stderr FLAG -- PROGRAM [ARG]...

Runs PROGRAM with its stderr on a pipe of 4 KiB and copies that pipe to
our own stderr, except while the file FLAG exists: then nobody reads the
pipe, as with a log reader that stopped.  Signals TERM, INT, USR1 and
HUP are passed on to PROGRAM; the exit status is PROGRAM's (128 + N when
a signal N ended it).  For the integration tests (test_control_flood.py).

Exit status of its own: 0 after -h / --help, 2 for a usage error (one
line), 1 when PROGRAM cannot be started.
"""
import fcntl
import os
import signal
import subprocess
import sys
import threading
import time

F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)


def main(argv):
    if len(argv) > 1 and argv[1] in ("-h", "--help"):
        sys.stdout.write("usage: " + __doc__)
        return 0
    if len(argv) < 4 or argv[2] != "--" or argv[1].startswith("-"):
        sys.stderr.write("stall-stderr: expected FLAG -- PROGRAM [ARG]... "
                         "(see --help)\n")
        return 2
    flag, cmd = argv[1], argv[3:]
    r, w = os.pipe()
    fcntl.fcntl(w, F_SETPIPE_SZ, 4096)
    try:
        child = subprocess.Popen(cmd, stderr=w)
    except OSError as e:
        os.close(r)
        os.close(w)
        sys.stderr.write(f"stall-stderr: {cmd[0]}: {e.strerror}\n")
        return 1
    os.close(w)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: child.send_signal(s))

    def copy():
        while True:
            while os.path.exists(flag):
                time.sleep(0.01)
            chunk = os.read(r, 65536)
            if not chunk:
                return
            os.write(2, chunk)
    t = threading.Thread(target=copy, daemon=True)
    t.start()
    rc = child.wait()
    t.join(30)
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
