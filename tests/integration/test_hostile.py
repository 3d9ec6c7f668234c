# SPDX-License-Identifier: BSD-3-Clause
"""Hostile NFs (dom0-core/validate.h, guard.c).

(a) Flood: xnv-hostile (tests/tools) attaches in group B and returns 10^6
    crafted bad descriptors (random bytes, out-of-range index, double
    return, a buffer it does not hold, offset/length outside the buffer,
    unknown action, no such port / service), then an impossible tx ring
    index, while a well-behaved NF of group A forwards a fixed offered load
    (xnv-generator at GEN_RATE pps -> fwd -> port outA).  The core stays
    up, fwd keeps >= 95 % of the rate it had without the attacker, the
    attacker ends quarantined with the reason in the stats, both pools
    are full at the end.
(b) Error budget: the same attacker against error_budget = 1000 is
    quarantined after about a thousand bad descriptors, said once in the
    log, and its buffers are home.
(c) Free ring: an attacker with --alloc writes a consumer index into its
    free ring that runs ahead of what the core produced: quarantined with
    its reason when the core next looks at the ring to refill it, buffers
    home.
The error budget is per second and [core] error_budget = 0 turns it off;
(a) runs with it off so that all 10^6 descriptors reach validation.

Rates: the good path runs at an offered load well below what one CPU
forwards, so "its rate" does not depend on how the 2 shared CPUs are
split between the processes (that would be a DoS of the shared CPU, out
of scope, see SECURITY.md), only on the core going on serving it."""
import logging
import re
import signal
import time

import pytest

from harness import (BUILD, Telemetry, nf_info, run_delay_ns, start_testnf,
                     wait_until, write_config)

HOSTILE_BIN = BUILD / "tests" / "tools" / "xnv-hostile"
GEN_BIN = BUILD / "bin" / "xnv-generator"
N_BAD = 1_000_000
GEN_RATE = 20_000           # pps offered to the good NF (the SAN build keeps up)
ATTACK_RATE = 250_000       # bad descriptors per second: 4 s of attack
POOL_A, POOL_B = 4096, 2048
FWD_ID = 1                  # service ids: declaration order
PORT_OUT_A = 2              # ports: inB 0, outB 1, outA 2
RING = 1024
STARVED = 0.05             # share of a window waited for a CPU
log = logging.getLogger("xnv-it")


def hostile_config(env, name, **core):
    return write_config(env.path(f"{name}.ini"), [
        ("core", {"socket": env.sockdir / f"{name}.sock", "ring_size": RING, **core}),
        ("group A", {"pool_bufs": POOL_A}),
        ("group B", {"pool_bufs": POOL_B}),
        ("port inB", {"dev": "net_null0", "group": "B", "chain": "evil -> outB"}),
        ("port outB", {"dev": "net_null1", "group": "B"}),
        ("port outA", {"dev": "net_null2", "group": "A"}),
        ("service fwd", {}),
        ("service gen", {}),
        ("service evil", {}),
    ])


def start_hostile(env, core, name, *args):
    if not HOSTILE_BIN.exists():
        pytest.skip(f"{HOSTILE_BIN} not built (make check-integration builds it)")
    return env.start(name, [HOSTILE_BIN, "--socket", core.socket, "--service", "evil",
                            "--group", "B", "--name", name, *map(str, args)])


def fwd_tx(t):
    return nf_info(t, "fwd")["tx"]


def counts(t):
    """(packets fwd forwarded, packets gen offered, monotonic time)."""
    return fwd_tx(t), nf_info(t, "gen")["tx"], time.monotonic()


def window(a, b):
    """(forwarded pps, offered pps) between two counts()."""
    return (b[0] - a[0]) / (b[2] - a[2]), (b[1] - a[1]) / (b[2] - a[2])


def start_good_path(env, core):
    fwd = start_testnf(env, "fwd", "A", "fwd", action=f"out:{PORT_OUT_A}",
                       flows=False, socket=core.socket)
    core.wait_attached(fwd)
    gen = env.start_nf("gen", "A", "gen", socket=core.socket, binary=GEN_BIN,
                       extra=("--alloc", "256", "--", "--count", "1000000000",
                              "--rate", GEN_RATE, "--to-service", FWD_ID))
    core.wait_attached(gen)
    return fwd, gen


def stats_nf(st, name):
    (n,) = [n for n in st["nfs"] if n["name"] == name]
    return n


# --------------------------------------------------------------------------
# (a) 10^6 bad descriptors and an impossible ring index

@pytest.fixture(scope="module")
def flood(xnv_module):
    env = xnv_module
    core = env.start_core(hostile_config(env, "flood", error_budget=0),
                          socket=env.sockdir / "flood.sock", duration=180,
                          name="flood")
    core.wait_ready()
    res = dict(core=core)
    fwd, gen = start_good_path(env, core)
    with Telemetry(core) as t:
        wait_until(lambda: fwd_tx(t) > GEN_RATE, 20, "the good path to forward")
        a, wait_a = counts(t), run_delay_ns((gen,))
        time.sleep(3.0)
        b, wait_b = counts(t), run_delay_ns((gen,))
        res["before"], res["offered_before"] = window(a, b)
        res["denied_before"] = (wait_b - wait_a) / 1e9 / (b[2] - a[2])
        evil = start_hostile(env, core, "evil", "--count", N_BAD,
                             "--rate", ATTACK_RATE, "--finish", "ring")
        evil.wait_output(r"^ATTACH ", 20, stream="out")
        a, wait_a = counts(t), run_delay_ns((gen,))
        evil.wait_output(r"^SENT ", 120, stream="out")
        b, wait_b = counts(t), run_delay_ns((gen,))
        res["during"], res["offered_during"] = window(a, b)
        res["attack_s"] = b[2] - a[2]
        # share of the window the generator waited for a CPU it wanted
        res["denied"] = (wait_b - wait_a) / 1e9 / res["attack_s"]
        res["evil_rc"] = evil.wait(30)
        res["evil"] = nf_info(t, "evil")
        res["pool_b"] = t("/xnv/group/info", 1)
        res["alive"] = core.alive()
    core.signal(signal.SIGTERM)
    res["rc"] = core.wait(20)
    res.update(evil=evil, evil_info=res["evil"], stats=core.stats(),
               nf_rcs=[fwd.wait(10), gen.wait(10)])
    return res


def test_flood_core_stays_up(flood):
    assert flood["alive"], flood["core"].log()[-3000:]
    assert flood["rc"] == 0, flood["core"].log()[-3000:]
    assert flood["nf_rcs"][0] == 0     # fwd; the generator exits 1 when its core goes


def test_flood_all_sent(flood):
    out = flood["evil"].stdout()
    m = re.search(r"^SENT n=(\d+) (.*)$", out, re.M)
    assert m and int(m.group(1)) == N_BAD, out
    kinds = dict(kv.split("=") for kv in m.group(2).split())
    assert len(kinds) == 7 and all(int(v) > 0 for v in kinds.values()), kinds


def test_flood_good_nf_keeps_its_rate(flood):
    """Under attack fwd forwards what it is offered, and at >= 95 % of the
    rate it had before.  The generator catches up when it fell behind,
    which can lift one window above the offered rate: the reference is
    what was offered at most.  A machine so loaded by others that it could
    not even offer the load before the attack says nothing about the core,
    nor does a generator that waited for a CPU during the attack (its
    schedstat run delay over STARVED of the window, or grown by that much:
    the attacker shares the 2 CPUs, a DoS of the shared CPU, out of scope;
    one starved of buffers by the core would not wait for a CPU): then
    only the first part is asserted (logged)."""
    before, during = flood["before"], flood["during"]
    log.warning("fwd: %.0f pps before (offered %.0f), %.0f pps during %.1f s of "
                "attack (offered %.0f); gen waited for a CPU %.1f %% of the time "
                "before, %.1f %% during", before, flood["offered_before"], during,
                flood["attack_s"], flood["offered_during"],
                100 * flood["denied_before"], 100 * flood["denied"])
    assert during >= 0.95 * flood["offered_during"], flood
    if before < 0.8 * GEN_RATE:
        log.warning("the machine did not offer %d pps before the attack: "
                    "rates not compared", GEN_RATE)
        return
    if (flood["offered_during"] < 0.95 * GEN_RATE and
            (flood["denied"] > STARVED or
             flood["denied"] > flood["denied_before"] + STARVED)):
        log.warning("the generator waited for a CPU: rates not compared")
        return
    ref = min(before, GEN_RATE)
    assert during >= 0.95 * ref, (
        f"fwd forwarded {during:.0f} pps under attack ({flood['attack_s']:.1f} s) "
        f"vs {before:.0f} pps before")


def test_flood_every_bad_descriptor_caught(flood):
    st = stats_nf(flood["stats"], "evil")
    m = re.search(r" foreign=(\d+) ", flood["evil"].stdout())
    # All but what was still in its tx ring when it broke the ring.  A
    # "foreign" index (in range, not in the attacker's hands) may name a
    # buffer still in its rx ring, which it does own: that return is fine.
    assert N_BAD - int(m.group(1)) - RING <= st["bad"] <= N_BAD, st
    assert all(st["bad_kinds"][k] > 0 for k in
               ("index", "owner", "bounds", "action", "dest")), st["bad_kinds"]
    assert flood["stats"]["drops"]["bad_desc"] == st["bad"]


def test_flood_attacker_quarantined_with_reason(flood):
    reason = "quarantined: tx ring producer index impossible"
    assert flood["evil_rc"] == 0, flood["evil"].stdout()
    assert f"DETACHED reason={reason}" in flood["evil"].stdout()
    info = flood["evil_info"]
    assert info["state"] == "gone" and info["quarantined"] == 1, info
    assert info["reason"] == reason
    st = stats_nf(flood["stats"], "evil")
    assert st["quarantined"] is True and st["reason"] == reason, st
    assert st["held"] == 0
    log = flood["core"].log()
    assert len(re.findall(r"NF evil \(domain \d+, pid \d+\) quarantined: ", log)) == 1, log


def test_flood_no_buffer_leak(flood):
    b = flood["pool_b"]
    assert b["free"] == b["pool_bufs"] == POOL_B, b      # while running
    for g in flood["stats"]["groups"]:
        assert g["free"] == g["pool_bufs"], g
    assert stats_nf(flood["stats"], "fwd")["bad"] == 0


# --------------------------------------------------------------------------
# (b) the error budget

def test_error_budget_quarantines(xnv):
    core = xnv.start_core(hostile_config(xnv, "budget", error_budget=1000),
                          name="budget", socket=xnv.sockdir / "budget.sock")
    core.wait_ready()
    evil = start_hostile(xnv, core, "evil", "--count", 100_000, "--finish", "none")
    assert evil.wait(30) == 0, evil.stdout()
    out = evil.stdout()
    m = re.search(r"^DETACHED reason=(.*)$", out, re.M)
    assert m, out
    assert re.fullmatch(r"quarantined: \d+ bad descriptors within 1 s, over "
                        r"error_budget 1000 \(last: .+\)", m.group(1)), m.group(1)
    with Telemetry(core) as t:
        info = nf_info(t, "evil")
        pool_b = t("/xnv/group/info", 1)
    assert info["quarantined"] == 1 and info["reason"] == m.group(1), info
    assert 1000 < info["bad"] <= 1000 + 64, info      # one burst past it at most
    assert pool_b["free"] == pool_b["pool_bufs"], pool_b
    warnings = [line for line in core.log().splitlines() if "quarantined" in line]
    # the warning, its domain found hostile (domain.c), the detach line
    assert len(warnings) == 3, warnings
    assert any(re.search(r"domain \d+ is hostile: quarantined: \d+ bad "
                         r"descriptors", w) for w in warnings), warnings
    assert core.alive()
    core.signal(signal.SIGTERM)
    assert core.wait(20) == 0
    st = stats_nf(core.stats(), "evil")
    assert st["quarantined"] is True and st["held"] == 0, st


# --------------------------------------------------------------------------
# (c) the free ring's consumer index, which the NF owns

def test_free_ring_index_quarantines(xnv):
    core = xnv.start_core(hostile_config(xnv, "free"), name="free",
                          socket=xnv.sockdir / "free.sock")
    core.wait_ready()
    evil = start_hostile(xnv, core, "evil", "--alloc", 64, "--count", 0,
                         "--finish", "free")
    assert evil.wait(30) == 0, evil.stdout()
    reason = "quarantined: free ring consumer index impossible"
    assert f"DETACHED reason={reason}\n" in evil.stdout(), evil.stdout()
    with Telemetry(core) as t:
        info = nf_info(t, "evil")
        pool_b = t("/xnv/group/info", 1)
    assert info["quarantined"] == 1 and info["reason"] == reason, info
    assert info["alloc"] >= 64 and info["held"] == 0, info
    assert pool_b["free"] == pool_b["pool_bufs"], pool_b
    log = core.log()
    assert len(re.findall(rf"NF evil \(domain \d+, pid \d+\) {reason}$", log,
                          re.M)) == 1, log
    assert core.alive()
