# SPDX-License-Identifier: BSD-3-Clause
"""Per-domain budgets and quarantine (dom0-core/domain.c), host mode.

A host domain is one NF's connection, so here:
(a) max_grant_frames_per_domain below one NF's need refuses its attach
    with one line naming the key, on both sides; the core runs on, and
    the derived default is logged at start;
(b) `xnv-ctl domains` shows an attached NF's domain (its NFs, the grant
    frames it holds, no quarantine); `xnv-ctl nf release` of a domain
    that is not quarantined, or of no number, is one line and changes
    nothing;
(c) an NF that breaks the ring protocol makes its domain hostile (one
    warning with the evidence and the policy), and the quarantine ends
    with its connection: a new NF attaches.
The Xen side (a domid outliving its NFs, sticky quarantine, release,
revoked frames still mapped) is tests/xen."""
import json
import re

import pytest

from harness import (BUILD, CTL_BIN, Telemetry, nf_info, start_named_core,
                     wait_until, write_config)

HOSTILE_BIN = BUILD / "tests" / "tools" / "xnv-hostile"
TIMEOUT = ("--timeout", "30")


def config(env, name, **core):
    return write_config(env.path(f"{name}.ini"), [
        ("core", {"socket": env.sockdir / f"{name}.sock", "ring_size": 256,
                  **core}),
        ("group g", {"pool_bufs": 1024}),
        ("port in", {"dev": "net_null0", "group": "g"}),
        ("service fwd", {}),
    ])


def ctl(env, core, *args):
    return env.run([CTL_BIN, "--socket", core.socket, *TIMEOUT, *args],
                   timeout=120)


def test_frames_budget_refuses_naming_the_key(xnv):
    core = start_named_core(xnv, config(xnv, "fb", max_grant_frames_per_domain=4),
                            "fb")
    assert re.search(r"per domain: at most 8 NFs attached or draining and 4 grant "
                     r"frames \(an NF takes up to \d+\); on_hostile = refuse",
                     core.log()), core.log()[-2000:]
    nf = xnv.start_nf("fwd", "g", "greedy", socket=core.socket)
    assert nf.wait(30) != 0
    m = re.search(r"domain (\d+) would hold (\d+) grant frames \(0 now, (\d+) for "
                  r"this NF\): over max_grant_frames_per_domain = 4$", nf.stderr(),
                  re.M)
    assert m and m.group(2) == m.group(3), nf.stderr()
    assert re.search(r"attach of NF 'greedy' \(pid \d+, uid \d+, gid \d+\) refused: "
                     r"domain \d+ would hold \d+ grant frames", core.log())
    assert core.alive()
    with Telemetry(core) as t:
        assert t("/xnv/nf/list") == []
        assert t("/xnv/domain/list") == []
    assert core.stop() == 0
    derived = start_named_core(xnv, config(xnv, "fd"), "fd")
    m = re.search(r"per domain: at most 8 NFs attached or draining and (\d+) grant "
                  r"frames \(max_grant_frames_per_domain derived\) \(an NF takes up "
                  r"to (\d+)\)", derived.log())
    assert m and int(m.group(1)) == 8 * int(m.group(2)), derived.log()[-2000:]
    assert derived.stop() == 0


def test_domains_view_and_release_errors(xnv):
    core = start_named_core(xnv, config(xnv, "dv", max_nfs_per_domain=2), "dv")
    nf = xnv.start_nf("fwd", "g", "fwd0", socket=core.socket)
    core.wait_attached(nf)
    with Telemetry(core) as t:
        dom = nf_info(t, "fwd0")["domain"]
    r = ctl(xnv, core, "domains", "--json")
    assert r.returncode == 0, r.stderr
    (d,) = json.loads(r.stdout)
    assert d["domain"] == dom and d["name"] == f"domain {dom}", d
    assert d["nfs"] == 1 and d["max_nfs"] == 2 and d["quarantined"] == 0, d
    assert 0 < d["frames"] <= d["max_frames"] and d["busy_frames"] == 0, d
    table = ctl(xnv, core, "domains").stdout
    assert re.search(rf"^\s*{dom}\s+domain {dom}\s+1/2\s+{d['frames']}/{d['max_frames']}"
                     r"\s+0\s+no\s+0", table, re.M), table
    r = ctl(xnv, core, "nf", "release", str(dom))
    assert r.returncode == 1 and r.stdout == "", r
    assert r.stderr == f"xnv-ctl: domain {dom} is not quarantined\n", r.stderr
    r = ctl(xnv, core, "nf", "release", "seven")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r
    assert "invalid int value: 'seven'" in r.stderr, r.stderr
    with Telemetry(core) as t:
        assert "error" in t("/xnv/domain/info", "-1")
        assert nf_info(t, "fwd0")["state"] == "attached"
    assert nf.alive() and core.stop() == 0


def test_protocol_breaker_makes_its_domain_hostile(xnv):
    if not HOSTILE_BIN.exists():
        pytest.skip(f"{HOSTILE_BIN} not built (make check-integration builds it)")
    core = start_named_core(xnv, config(xnv, "hb"), "hb")
    evil = xnv.start("evil", [HOSTILE_BIN, "--socket", core.socket, "--service",
                              "fwd", "--group", "g", "--name", "evil", "--count",
                              "1", "--finish", "ring", "--wait", "30"])
    m = evil.wait_output(r"^ATTACH domain=(\d+) ", 30, stream="out")
    dom = m.group(1)
    line = core.wait_output(
        rf"domain {dom} is hostile: quarantined: (.*); on_hostile = refuse: its NFs "
        rf"are detached and its attaches refused until it is gone \(or released: "
        rf"xnv-ctl nf release {dom}\)$", 30)
    assert "impossible" in line.group(1), line.group(0)
    core.wait_output(rf"domain {dom} is gone: its quarantine ends \(0 attaches "
                     r"refused\)$", 30)
    assert evil.wait(30) == 0, evil.stdout()
    with Telemetry(core) as t:
        assert t("/xnv/domain/list") == []
    nf = xnv.start_nf("fwd", "g", "fwd1", socket=core.socket)
    core.wait_attached(nf)
    assert core.stop() == 0
