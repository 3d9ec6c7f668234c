# SPDX-License-Identifier: BSD-3-Clause
"""The project's version, from its one place: VERSION in the top Makefile.

The build writes it next to this file (build/lib/python/xnv/VERSION); run
from the source tree, the Makefile itself is read.
"""
import re
from pathlib import Path


def version():
    here = Path(__file__).resolve().parent
    built = here / "VERSION"
    if built.is_file():
        return built.read_text().strip()
    makefile = here.parents[2] / "Makefile"
    try:
        m = re.search(r"^VERSION\s*:=\s*(\S+)", makefile.read_text(), re.M)
    except OSError:
        m = None
    return m.group(1) if m else "unknown"
