# SPDX-License-Identifier: BSD-3-Clause
"""Where a core's DPDK files are: its EAL file-prefix and runtime directory.

xnv-core picks --file-prefix xnv-<FNV-1a 32 of its NF socket path> unless it
is given one (xnv_eal_prefix in dom0-core/eal_args.c).  The two must agree:
tests/unit/test_prefix.c and tests/integration/test_prefix.py pin both to
the same strings.
"""
import os

TELEMETRY_SOCKET = "dpdk_telemetry.v2"


def file_prefix(nf_socket):
    """The EAL file-prefix xnv-core uses for this NF socket path, e.g.
    "xnv-1a2b3c4d" (FNV-1a 32 of the path's bytes, as given: not resolved)."""
    h = 2166136261
    for b in os.fsencode(nf_socket):
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return f"xnv-{h:08x}"


def runtime_dir():
    """DPDK's runtime directory, as EAL (and dpdk-telemetry.py) chooses it:
    $RUNTIME_DIRECTORY, else /var/run for root, else $XDG_RUNTIME_DIR or
    /tmp; then /dpdk."""
    d = os.environ.get("RUNTIME_DIRECTORY")
    if not d:
        d = "/var/run" if os.getuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(d, "dpdk")


def telemetry_path(prefix):
    """The telemetry socket of the DPDK process with this file-prefix."""
    return os.path.join(runtime_dir(), prefix, TELEMETRY_SOCKET)
