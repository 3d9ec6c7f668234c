# SPDX-License-Identifier: BSD-3-Clause
"""Every directory README names every source file of its directory.

STYLE.md: a directory is a module and its README says what lives there.
For each tracked README.md, every tracked file directly in that directory
that is a source or a script must appear in it by name:
  - *.c, *.h, *.py, *.sh;
  - any other file tracked as executable (mode 100755), e.g. dom0-core/xnv-ctl.
A C pair may be named together as `stem.[ch]`.  Files come from
`git ls-files`, so build output never counts; nothing is built or run.
"""
import re
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCE_SUFFIXES = {".c", ".h", ".py", ".sh"}


def tracked():
    """(path, mode) of every tracked file, paths relative to the repo."""
    out = subprocess.run(["git", "-C", str(REPO), "ls-files", "-s", "-z"],
                         capture_output=True, text=True, check=True).stdout
    for entry in filter(None, out.split("\0")):
        meta, path = entry.split("\t", 1)
        yield Path(path), meta.split()[0]


def sources_by_readme():
    """{README path: [source files directly beside it]}, READMEs only."""
    files = list(tracked())
    readmes = {p for p, _ in files if p.name == "README.md"}
    listed = defaultdict(list)
    for path, mode in files:
        readme = path.parent / "README.md"
        if readme not in readmes:
            continue
        if path.suffix in SOURCE_SUFFIXES or (mode == "100755"
                                              and path.suffix == ""):
            listed[readme].append(path.name)
    return {r: sorted(listed[r]) for r in sorted(readmes)}


def named(text, filename):
    """True if @p filename appears in @p text as a whole name, or as
    `stem.[ch]` for a .c/.h file."""
    edge = r"(?<![\w.-]){}(?![\w-])"
    if re.search(edge.format(re.escape(filename)), text):
        return True
    stem, dot, ext = filename.rpartition(".")
    return bool(dot and ext in ("c", "h") and
                re.search(edge.format(re.escape(stem + ".[ch]")), text))


CASES = sources_by_readme()


def test_readmes_are_found():
    # a broken git call or a moved test would make every case vanish
    assert Path("README.md") in CASES and Path("dom0-core/README.md") in CASES


@pytest.mark.parametrize("readme", list(CASES), ids=str)
def test_readme_lists_every_source_file(readme):
    text = (REPO / readme).read_text(encoding="utf-8")
    missing = [f for f in CASES[readme] if not named(text, f)]
    assert not missing, (f"{readme} does not name {', '.join(missing)}: "
                         f"add a line saying what each one does")
