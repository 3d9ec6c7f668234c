# SPDX-License-Identifier: BSD-3-Clause
"""The EAL file-prefix hash, pinned: xnv-core computes it in C
(xnv_eal_prefix, dom0-core/eal_args.c) and xnv-ctl finds the core's
telemetry socket with the Python copy (xnv.prefix.file_prefix).
tests/unit/test_prefix.c pins the C side to the same strings: change one
side only and one of the two tests fails."""
import pytest

from xnv.prefix import file_prefix

# The same table as tests/unit/test_prefix.c.
PINNED = [
    ("/run/xnv/xnv.sock", "xnv-4680a967"),      # the default --socket
    ("xnv.sock", "xnv-6a65f77b"),               # relative: hashed as given
    ("/tmp/caf\u00e9/xnv.sock", "xnv-923d4d31"),  # bytes >= 0x80 (UTF-8)
    ("", "xnv-811c9dc5"),                       # FNV-1a 32's offset basis
]


@pytest.mark.parametrize("path,prefix", PINNED, ids=[p or "empty" for p, _ in PINNED])
def test_file_prefix_pinned(path, prefix):
    assert file_prefix(path) == prefix
