#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""stall-stderr FLAG -- PROGRAM [ARG]...

Runs PROGRAM with its stderr on a pipe of 4 KiB and copies that pipe to
our own stderr, except while the file FLAG exists: then nobody reads the
pipe, as with a log reader that stopped.  Signals TERM, INT, USR1 and
HUP are passed on to PROGRAM; the exit status is PROGRAM's (128 + N when
a signal N ended it).  For the integration tests (test_control_flood.py).
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
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write(__doc__)
        return 2
    flag, cmd = argv[1], argv[3:]
    r, w = os.pipe()
    fcntl.fcntl(w, F_SETPIPE_SZ, 4096)
    child = subprocess.Popen(cmd, stderr=w)
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
