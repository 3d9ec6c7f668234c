# SPDX-License-Identifier: BSD-3-Clause
"""NFs that break the doorbell protocol on purpose (host mode;
gntshare/ring.h "Sleeping on a ring", dom0-core/doorbell.h).

One core per mode, with a legitimate chain (port in: net_null paced at
rx_rate = 20000 -> fwd, an xnv-forwarder sleeping on its doorbell -> port
out) and, in another trust group, xnv-bellhostile (tests/tools) as
service evil on a paced port of its own (evin -> evil -> evout), so that
the core publishes to it.  Its modes:

  flood        kicks the core's doorbell in a tight loop, sends nothing
  never-wake   keeps its rx sleep word at ASLEEP | the core's rx producer
               for ever (kick me after every burst), takes every packet
               and hands it back as a drop
  kick-closed  closes both its doorbell fds right after attaching, then
               sleeps 1 ms at a time saying so in its sleep word

The core listens to doorbells only when it is idle, and at 20000 packets
a second (one every 50 us) it never is: its idle ladder (spins, pauses,
yields) is longer than the gap.  So each mode runs two windows: busy
(the rates above: the core publishes to the hostile NF as fast as it
can, kicks included) then quiet (both ports' rx_rate lowered to QUIET
with /xnv/reload: the core sleeps between packets, and so hears every
kick and sees a closed end).  The flooder never takes its rx ring, and
packets parked for a full ring keep the core busy (waiting for room is
not idleness): its port's chain is unset for the quiet window.  Across
the windows (counters compared, never a rate):
(a) the legitimate chain keeps delivering: port out's tx grows across
    each window, and again once the hostile NF is gone;
(b) the core counted what it should: flood, its kicks were muted
    (bell_muted >= 1) and the spurious wake-ups they cost stay within
    XNV_BELL_SPURIOUS_MAX per second (+2 seconds: the windows at both
    ends); never-wake, it was kicked, and no more than XNV_BELL_KICKS_MAX
    per second (+2), a sooner one sent late and counted in bell_capped;
    kick-closed, the closed end woke the core once (or twice) and never
    again although
    the core slept on its doorbells all through the quiet window;
(c) the core is alive, answers telemetry, keeps the NF attached, says each
    of its two doorbell warnings at most once (once when it counted it),
    and stops cleanly (exit 0).
The bounds are upper bounds: a loaded machine only makes the counts
smaller.  Waits are scaled (XNV_TIME_SCALE)."""
import logging
import re
import signal
import time

import pytest

from harness import (BUILD, Telemetry, make_built, nf_info, scaled, wait_until,
                     write_config)

BELLHOSTILE_BIN = BUILD / "tests" / "tools" / "xnv-bellhostile"
MODES = ("flood", "never-wake", "kick-closed")
RATE = 20_000               # pps of the legitimate chain (port in), busy
EVIL_RATE = 50_000          # pps of the hostile NF's port, busy
QUIET = 100                 # pps of both, quiet: the core sleeps between
WINDOW_S = 3.0              # each window, at least
SPURIOUS_MAX = 1000         # dom0-core/doorbell.h XNV_BELL_SPURIOUS_MAX
KICKS_MAX = 20_000          # dom0-core/doorbell.h XNV_BELL_KICKS_MAX
CLOSED_WAKES_MAX = 2        # kick-closed: the end's EOF (+ a kick before)
OUT = 1                     # port indices: declaration order
BELL = ("rx", "drop", "bell_kicks", "bell_wakes", "bell_spurious", "bell_muted",
        "bell_capped")
MUTED_LINE = "NF evil kicks the core's doorbell with nothing to send"
CAPPED_LINE = "NF evil sleeps and wakes more often than"


def config(env, mode, rate=RATE, evil_rate=EVIL_RATE):
    """The mode's config file (written again with other rates: the same
    path, for /xnv/reload)."""
    return write_config(env.path(f"{mode}.ini"), [
        ("core", {"socket": env.sockdir / f"{mode}.sock"}),
        ("group A", {"pool_bufs": 4096}),
        ("group B", {"pool_bufs": 4096}),
        ("port in", {"dev": "net_null0", "group": "A", "rx_rate": rate,
                     "chain": "fwd -> out"}),
        ("port out", {"dev": "net_null1", "group": "A"}),
        ("port evin", {"dev": "net_null2", "group": "B",
                       "rx_rate": evil_rate, "chain": "evil -> evout"}),
        ("port evout", {"dev": "net_null3", "group": "B"}),
        ("service fwd", {}),
        ("service evil", {}),
    ])


def start_bellhostile(env, core, mode):
    p = env.start(f"evil-{mode}", [BELLHOSTILE_BIN, "--socket", core.socket,
                                   "--service", "evil", "--group", "B",
                                   "--name", "evil", f"--{mode}"], stdin="pipe")
    p.nf_name = "evil"
    return p


def out_tx(t):
    return t("/xnv/port/info", OUT)["tx"]


def sample(t):
    """Port out's tx and both NFs' counters, with the time just before
    and just after they were read."""
    t0 = time.monotonic()
    s = {"out_tx": out_tx(t), "fwd": nf_info(t, "fwd"), "evil": nf_info(t, "evil")}
    s["t0"], s["t1"] = t0, time.monotonic()
    return s


log = logging.getLogger("xnv-it")


def quiet_until(mode):
    """What the quiet window waits for besides its length: the core heard
    the flood and muted it; the closed end woke it."""
    key = {"flood": "bell_muted", "kick-closed": "bell_wakes"}.get(mode)
    return (lambda t: nf_info(t, "evil")[key] >= 1) if key else (lambda t: True)


def hostile_windows(env, t, mode, evil):
    """Samples before, between and after the busy and the quiet window."""
    evil.wait_output(r"^MODE ", 20, stream="out")
    if mode != "flood":         # it takes what its port sends
        wait_until(lambda: nf_info(t, "evil")["rx"] > 0, 20, "evil to receive")
    s = [sample(t)]
    time.sleep(scaled(WINDOW_S))
    s.append(sample(t))
    config(env, mode, QUIET, QUIET)
    assert "error" not in t("/xnv/reload"), "reload refused"
    if mode == "flood":
        assert "error" not in t("/xnv/chain/unset", "evin")
    time.sleep(scaled(WINDOW_S))
    wait_until(lambda: quiet_until(mode)(t), 30, f"the core to hear {mode}")
    s.append(sample(t))
    for w, (a, b) in (("busy", s[:2]), ("quiet", s[1:])):
        log.info("%s, %s window (%.1f s): out tx +%d, evil %s", mode, w,
                 b["t1"] - a["t0"], b["out_tx"] - a["out_tx"],
                 {k: b["evil"][k] - a["evil"][k] for k in BELL})
    return s


@pytest.fixture(scope="module")
def made():
    """make check-integration makes the tool; a direct run too."""
    make_built(BELLHOSTILE_BIN)


@pytest.fixture(scope="module", params=MODES)
def run(request, made, xnv_module):
    env, mode = xnv_module, request.param
    core = env.start_core(config(env, mode), socket=env.sockdir / f"{mode}.sock",
                          duration=180, name=mode)
    core.wait_ready()
    fwd = env.start_nf("fwd", "A", "fwd", socket=core.socket)
    core.wait_attached(fwd)
    res = dict(mode=mode, core=core)
    with Telemetry(core) as t:
        wait_until(lambda: out_tx(t) > 0, 20, "the legitimate chain to deliver")
        evil = start_bellhostile(env, core, mode)
        core.wait_attached(evil)
        res["samples"] = hostile_windows(env, t, mode, evil)
        res["before"], res["after"] = res["samples"][0], res["samples"][-1]
        res["alive"] = core.alive()
        res["info"] = t("/xnv/info")
        evil.close_stdin()
        res["evil_rc"] = evil.wait(20)
        last = res["after"]["out_tx"]
        res["later"] = wait_until(lambda: (lambda n: n if n > last else 0)(out_tx(t)),
                                  20, "port out to go on after the hostile NF")
    res["evil"] = evil
    core.signal(signal.SIGTERM)
    res["rc"] = core.wait(30)
    res["fwd_rc"] = fwd.wait(10)
    return res


def delta(res, who, key):
    return res["after"][who][key] - res["before"][who][key]


def elapsed(res):
    """The longest the window between the two samples can have been."""
    return res["after"]["t1"] - res["before"]["t0"]


def test_legitimate_chain_keeps_delivering(run):
    busy, quiet, a = run["samples"]
    assert busy["out_tx"] < quiet["out_tx"] < a["out_tx"] < run["later"], \
        [s["out_tx"] for s in run["samples"]]
    assert a["fwd"]["state"] == "attached" and a["fwd"]["bad"] == 0, a["fwd"]


def test_core_counted_the_misbehaviour(run):
    mode, a, e = run["mode"], run["after"]["evil"], elapsed(run)
    assert a["doorbell"] == 1 and a["state"] == "attached", a
    if mode == "flood":
        assert a["bell_muted"] >= 1, a
        spurious = delta(run, "evil", "bell_spurious")
        assert 0 < spurious <= SPURIOUS_MAX * (e + 2), (spurious, e, a)
    elif mode == "never-wake":
        kicks = delta(run, "evil", "bell_kicks")
        assert kicks > 0, a                 # it was listened to at all
        assert kicks <= KICKS_MAX * (e + 2), (kicks, e, a)
    else:
        assert 1 <= a["bell_wakes"] <= CLOSED_WAKES_MAX, a
    if mode != "flood":     # served: every packet back as a drop at once
        assert delta(run, "evil", "drop") > 0, a
        assert a["held"] <= a["ring_size"] and a["bad"] == 0, a


def test_core_alive_and_answering(run):
    assert run["alive"] and run["info"], run["core"].log()[-3000:]
    assert run["rc"] == 0, run["core"].log()[-3000:]
    assert run["fwd_rc"] == 0


def test_warnings_said_at_most_once(run):
    log, a = run["core"].log(), run["after"]["evil"]
    muted = len(re.findall(MUTED_LINE, log))
    capped = len(re.findall(CAPPED_LINE, log))
    # at most once; and said by the time it was counted
    assert muted <= 1 and capped <= 1, log[-3000:]
    assert muted == 1 or a["bell_muted"] == 0, log[-3000:]
    assert capped == 1 or a["bell_capped"] == 0, log[-3000:]


def test_hostile_nf_ran_to_stdin_eof(run):
    out = run["evil"].stdout()
    assert run["evil_rc"] == 0, out
    assert re.search(r"^ATTACH ok domain=\d+ bell=yes ", out, re.M), out
    assert re.search(r"^END stdin-eof$", out, re.M), out
    assert out.rstrip().endswith("RESULT ok"), out
    if run["mode"] == "flood":
        m = re.search(r"^KICKS (\d+) failed=(\d+)$", out, re.M)
        assert m and int(m.group(1)) > SPURIOUS_MAX, out
    if run["mode"] == "kick-closed":
        assert re.search(r"^BELL closed$", out, re.M), out
    if run["mode"] == "never-wake":     # the pipe an NF of this tree asks
        assert re.search(r"^BELL jammed kind=pipe pipe_bytes=4096$", out,
                         re.M), out
