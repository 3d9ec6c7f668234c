# SPDX-License-Identifier: BSD-3-Clause
"""The manual pages (docs/man) render, and say what the programs do.

- Each page renders with groff (-man -ww: every warning) and with
  `man --warnings -l` without a single warning.
- Every option a program's --help prints is on its page: xnv-core(8),
  xnv-ctl(8) (its subcommands' help too), xnv-xl(8), and libxnv(3) for
  the options libxnv parses (xnv-forwarder --help prints exactly those);
  every command xnv-ctl --help lists has its entry in xnv-ctl(8).
"""
import re
import shutil
import subprocess

import pytest

from harness import BUILD, CTL_BIN, CORE_BIN, FWD_BIN, REPO, scaled

MAN = REPO / "docs" / "man"
PAGES = sorted(p.name for p in MAN.glob("*.[0-9]"))


def run(argv, **kw):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                          timeout=scaled(60), **kw)


def text_of(page):
    """The page as plain ASCII text (no overstrikes)."""
    r = run(["groff", "-man", "-Tascii", "-P-cbou", MAN / page])
    assert r.returncode == 0, r.stderr
    return r.stdout


def options(help_text):
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-h)\b", help_text))


def test_every_program_has_a_page():
    assert PAGES == ["libxnv.3", "xnv-core.8", "xnv-ctl.8", "xnv-xl.8"]


@pytest.mark.parametrize("page", PAGES)
def test_renders_without_warnings(page):
    r = run(["groff", "-man", "-Tutf8", "-ww", "-z", MAN / page])
    assert r.returncode == 0 and r.stderr == "", r.stderr
    name = page.rsplit(".", 1)[0]
    assert re.search(rf"^NAME\n\s+{re.escape(name)} - ", text_of(page), re.M)


@pytest.mark.skipif(shutil.which("man") is None, reason="man-db not installed")
@pytest.mark.parametrize("page", PAGES)
def test_man_l_renders_without_warnings(page):
    r = run(["man", "--warnings", "-l", MAN / page], env={"MANPAGER": "cat",
            "PATH": "/usr/bin:/bin", "MANWIDTH": "80", "LANG": "C.UTF-8"})
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "SYNOPSIS" in r.stdout


def help_of(argv):
    r = run([*argv, "--help"])
    assert r.returncode == 0, r.stderr
    return r.stdout + r.stderr


@pytest.mark.parametrize("page,argvs", [
    ("xnv-core.8", [[CORE_BIN]]),
    ("xnv-ctl.8", [[CTL_BIN], [CTL_BIN, "flow"], [CTL_BIN, "watch"],
                    [CTL_BIN, "latency"]]),
    ("xnv-xl.8", [[BUILD / "bin" / "xnv-xl"]]),
    ("libxnv.3", [[FWD_BIN]]),
])
def test_every_option_in_help_is_on_the_page(page, argvs):
    text = text_of(page)
    helped = set().union(*(options(help_of(a)) for a in argvs))
    assert helped, "no option found in --help"
    missing = sorted(o for o in helped
                     if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text))
    assert not missing, f"{page} does not mention {missing}"


def test_every_xnv_ctl_command_is_on_its_page():
    text = text_of("xnv-ctl.8")
    cmds = re.findall(r"^    ([a-z][a-z-]*)(?: |$)", help_of([CTL_BIN]), re.M)
    assert len(cmds) >= 10, cmds
    missing = [c for c in cmds if not re.search(rf"^ {{7}}{c}\b", text, re.M)]
    assert not missing, f"xnv-ctl.8 does not describe {missing}"
