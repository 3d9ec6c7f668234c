# SPDX-License-Identifier: BSD-3-Clause
"""An NF's buffer quota and hoarding (dom0-core/quota.h, guard.c).

(a) Hoarder: xnv-hostile --hoard takes every packet and never returns one,
    heartbeat alive, in the same group as a good forwarder on another
    port.  It stops at its quota (2 x ring_size + a burst), packets
    past it are dropped and counted (nf_quota, on its port), it is
    quarantined after hoard_timeout_ms with its reason, and every buffer
    comes home; the good NF's port meanwhile loses nothing (rx_nombuf 0,
    every packet out).
(b) The same with --alloc: its free ring is refilled up to its quota, not
    past it, and it is quarantined the same way.
(c) An honest NF at its quota (max_held small, a slow forwarder under an
    endless source) keeps returning: drops are nf_quota, it is never
    taken for a hoarder.
(d) alloc_bufs above the ring size (or not below max_held) is refused at
    attach with one line, on the core's side and the NF's.
Counts only: nothing here depends on how fast the loaded machine is."""
import re
import time

import pytest

from harness import (BUILD, Telemetry, nf_info, nf_infos, start_named_core,
                     start_testnf, wait_until, write_config)
from traffic import flow_packets, read_pcap, write_pcap

HOSTILE_BIN = BUILD / "tests" / "tools" / "xnv-hostile"
RING = 256
POOL = 2048
QUOTA = 2 * RING + 256      # a hoarder's default quota: full rings, a burst
HOARD_MS = 4000             # long enough for the good NF's traffic to pass
N_GOOD = 5000               # packets of the good NF's port


def hostile(env, core, name, service, *args, attached=True):
    """xnv-hostile in group g; with `attached`, once it has attached."""
    if not HOSTILE_BIN.exists():
        pytest.skip(f"{HOSTILE_BIN} not built (make check-integration builds it)")
    p = env.start(name, [HOSTILE_BIN, "--socket", core.socket, "--service",
                         service, "--group", "g", "--name", name,
                         *map(str, args)])
    if attached:
        p.wait_output(r"^ATTACH ", 20, stream="out")
    return p


def port(t, idx):
    return t("/xnv/port/info", idx)


def pool_full(t, timeout=10):
    """Until every buffer of group g is home; returns /xnv/group/info."""
    def full():
        g = t("/xnv/group/info", 0)
        return g if g["free"] == g["pool_bufs"] else None
    return wait_until(full, timeout, "every buffer back in the pool")


def hoarded(core, name, held, timeout):
    """The core's warning that NF `name` was quarantined as a hoarder of
    `held` buffers; returns the match (group 1: reason, 2: ms)."""
    return core.wait_output(
        rf"NF {name} \(domain \d+, pid \d+\) (quarantined: held {held} buffers "
        r"\(its quota\) for (\d+) ms without returning any)$", timeout)


def check_quarantined(t, nf, name, reason):
    """`nf` (an xnv-hostile) was told why, the core says it is gone."""
    assert nf.wait(30) == 0, nf.stdout()
    assert f"DETACHED reason={reason}\n" in nf.stdout(), nf.stdout()
    info = nf_info(t, name)
    assert info["state"] == "gone" and info["quarantined"] == 1, info
    assert info["reason"] == reason and info["held"] == 0, info


# --------------------------------------------------------------------------
# (a) a hoarder next to a good NF, one group

def test_hoarder_held_to_quota_then_quarantined(xnv):
    in_pcap = write_pcap(xnv.path("good.pcap"), flow_packets(50, N_GOOD // 50))
    out_pcap = xnv.path("good-out.pcap")
    cfg = write_config(xnv.path("hoard.ini"), [
        ("core", {"socket": xnv.sockdir / "hoard.sock", "ring_size": RING,
                  "hoard_timeout_ms": HOARD_MS}),
        ("group g", {"pool_bufs": POOL}),
        ("port inA", {"dev": f"net_pcap0,rx_pcap={in_pcap}", "group": "g",
                      "chain": "fwd -> outA"}),
        ("port outA", {"dev": f"net_pcap1,tx_pcap={out_pcap}", "group": "g"}),
        ("port inB", {"dev": "net_null0", "group": "g", "chain": "hoard -> outB",
                      "rx_rate": 50000}),
        ("port outB", {"dev": "net_null1", "group": "g"}),
        ("service fwd", {}),
        ("service hoard", {}),
    ])
    core = start_named_core(xnv, cfg, "hoard")
    evil = hostile(xnv, core, "hoarder", "hoard", "--hoard", "--wait", 60)
    with Telemetry(core) as t:
        wait_until(lambda: nf_info(t, "hoarder")["held"] == QUOTA and
                   nf_info(t, "hoarder")["nf_quota"] > 0, 30,
                   "the hoarder to hold its quota, and more to be dropped")
        fwd = start_testnf(xnv, "fwd", "g", "fwd", flows=False, socket=core.socket)
        core.wait_attached(fwd)
        # The good NF's traffic starts while the hoarder sits at its quota.
        h = nf_info(t, "hoarder")
        assert h["state"] == "attached" and h["held"] == h["max_held"] == QUOTA, h
        wait_until(lambda: port(t, 1)["tx"] >= N_GOOD, 60, "the good NF's packets out")
        m = hoarded(core, "hoarder", QUOTA, HOARD_MS / 1000 + 30)
        assert int(m.group(2)) >= HOARD_MS, m.group(0)
        check_quarantined(t, evil, "hoarder", m.group(1))
        pool_full(t)
        in_a, out_a, in_b = port(t, 0), port(t, 1), port(t, 2)
        stats = t("/xnv/stats")
        info = nf_info(t, "hoarder")
    assert f"HOARDED n={QUOTA}\n" in evil.stdout(), evil.stdout()
    assert in_a["rx"] == N_GOOD and in_a["rx_nombuf"] == in_a["rx_missed"] == 0, in_a
    assert out_a["tx"] == N_GOOD and in_a["nf_quota"] == 0, (in_a, out_a)
    # Every packet for the hoarder past its quota was dropped and counted,
    # for it and for the port they came in on.
    assert info["nf_quota"] > 0 and in_b["nf_quota"] == info["nf_quota"], (info, in_b)
    assert stats["drop_nf_quota"] == info["nf_quota"], stats
    assert info["rx"] == QUOTA and info["reclaimed"] == QUOTA, info
    core.stop()
    assert len(read_pcap(out_pcap)) == N_GOOD


# --------------------------------------------------------------------------
# (b) hoarding through the free ring

def test_alloc_hoarder_refilled_to_quota_only(xnv):
    cfg = write_config(xnv.path("ahoard.ini"), [
        ("core", {"socket": xnv.sockdir / "ahoard.sock", "ring_size": RING,
                  "hoard_timeout_ms": 1500}),
        ("group g", {"pool_bufs": POOL}),
        ("port in", {"dev": "net_null0", "group": "g"}),
        ("service gen", {}),
    ])
    core = start_named_core(xnv, cfg, "ahoard")
    quota = QUOTA + RING            # and its alloc_bufs
    evil = hostile(xnv, core, "taker", "gen", "--hoard", "--alloc", RING,
                   "--wait", 60)
    with Telemetry(core) as t:
        wait_until(lambda: nf_info(t, "taker")["held"] == quota, 20,
                   "the taker to hold its quota")
        for _ in range(5):             # and not one more while it sits there
            i = nf_info(t, "taker")
            assert i["state"] != "attached" or i["held"] == i["alloc"] == quota, i
            time.sleep(0.1)
        m = hoarded(core, "taker", quota, 30)
        assert int(m.group(2)) >= 1500, m.group(0)
        check_quarantined(t, evil, "taker", m.group(1))
        info = nf_info(t, "taker")
        g = pool_full(t)
    assert info["alloc"] == info["reclaimed"] == quota, info
    assert g["free"] == POOL
    assert f"HOARDED n={quota}\n" in evil.stdout(), evil.stdout()


# --------------------------------------------------------------------------
# (c) an honest NF at its quota

def test_honest_nf_at_quota_is_not_a_hoarder(xnv):
    """A slow forwarder (200 us a packet) under an endless source with
    max_held = 64: always at its quota, as the watch sees it, but always
    returning.  Packets past the quota are nf_quota drops; it stays
    attached for more than 4 x hoard_timeout_ms."""
    max_held, hoard_ms = 64, 1000
    cfg = write_config(xnv.path("honest.ini"), [
        ("core", {"socket": xnv.sockdir / "honest.sock", "ring_size": RING,
                  "max_held": max_held, "hoard_timeout_ms": hoard_ms}),
        ("group g", {"pool_bufs": POOL}),
        ("port in", {"dev": "net_null0", "group": "g", "chain": "slow -> out"}),
        ("port out", {"dev": "net_null1", "group": "g"}),
        ("service slow", {}),
    ])
    core = start_named_core(xnv, cfg, "honest")
    nf = start_testnf(xnv, "slow", "g", "slow", delay_us=200, flows=False,
                      socket=core.socket)
    core.wait_attached(nf)
    with Telemetry(core) as t:
        wait_until(lambda: nf_info(t, "slow")["tx"] > 0, 20, "slow to forward")
        first = nf_info(t, "slow")
        at_quota, t0 = 0, time.monotonic()
        samples = 0
        while time.monotonic() - t0 < 4.5 * hoard_ms / 1000:
            i = nf_info(t, "slow")
            assert i["state"] == "attached", (i, core.log()[-2000:])
            assert i["held"] <= max_held, i
            at_quota += i["held"] == max_held
            samples += 1
            time.sleep(0.05)
        last = nf_info(t, "slow")
    assert at_quota > samples // 2, f"at its quota in {at_quota} of {samples} looks"
    assert last["tx"] > first["tx"] and last["nf_quota"] > first["nf_quota"], (first, last)
    assert last["quarantined"] == 0 and last["max_held"] == max_held, last
    assert "without returning any" not in core.log()
    assert nf.alive()
    assert core.stop() == 0
    st = core.stats()
    (rec,) = st["nfs"]
    (in_port, _) = st["ports"]
    assert rec["quarantined"] is False and rec["reason"] == "xnv-core is shutting down", rec
    assert in_port["nf_quota"] == rec["nf_quota"] == st["drops"]["nf_quota"], st


# --------------------------------------------------------------------------
# (d) alloc_bufs at attach

def quota_core(env, name, **core):
    cfg = write_config(env.path(f"{name}.ini"), [
        ("core", {"socket": env.sockdir / f"{name}.sock", "ring_size": RING, **core}),
        ("group g", {"pool_bufs": POOL}),
        ("port in", {"dev": "net_null0", "group": "g"}),
        ("service gen", {}),
    ])
    return start_named_core(env, cfg, name)


@pytest.mark.parametrize("alloc,max_held,words", [
    (RING + 1, 0, f"alloc_bufs {RING + 1} is more than the ring size {RING}: "
                  "a free ring holds at most that many"),
    (100, 100, "alloc_bufs 100 is not below [core] max_held 100: its free "
               "ring alone would fill its quota"),
], ids=["above-ring", "not-below-max-held"])
def test_alloc_refused_by_libxnv_nf(xnv, alloc, max_held, words):
    core = quota_core(xnv, "alloc", max_held=max_held)
    nf = xnv.start_nf("gen", "g", "gen-1", socket=core.socket,
                      extra=("--alloc", alloc))
    assert nf.wait(20) not in (0, None)
    assert nf.stderr().splitlines() == [f"xnv: gen-1: attach refused: {words}"], \
        nf.stderr()
    core.wait_output(rf"attach of NF 'gen-1' \(pid {nf.pid}, uid \d+, gid \d+\) "
                     rf"refused: {re.escape(words)}$", 10)
    with Telemetry(core) as t:
        assert nf_infos(t) == {}


def test_alloc_refused_from_raw_request(xnv):
    """The core checks what arrives, not what libxnv would send: 2^32 - 1
    straight on the socket."""
    core = quota_core(xnv, "raw")
    evil = hostile(xnv, core, "greedy", "gen", "--alloc", 0xffffffff, "--hoard",
                   attached=False)
    assert evil.wait(20) == 1      # a runtime error (the attach), not a usage one
    words = f"alloc_bufs 4294967295 is more than the ring size {RING}"
    assert re.fullmatch(rf"xnv-hostile: attach failed: {words}: a free ring holds "
                        r"at most that many\n", evil.stderr()), evil.stderr()
    assert len(re.findall(r"attach of NF 'greedy' \(pid \d+, uid \d+, gid \d+\) "
                          r"refused: " + words, core.log())) == 1, core.log()
    with Telemetry(core) as t:
        assert nf_infos(t) == {}
        assert t("/xnv/group/info", 0)["free"] == POOL
