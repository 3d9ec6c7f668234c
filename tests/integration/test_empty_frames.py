# SPDX-License-Identifier: BSD-3-Clause
"""Zero-length buffers: one rule (gntshare/proto.h, gnts_desc_len_ok) for
libxnv and the core's validator, and no empty frame ever handed to an NF.

(a) A capture with zero-length frames among ordinary ones goes through a
    2-NF chain: the empty frames are dropped and counted at rx
    (drops.empty), the NFs are charged nothing and stay attached, the
    ordinary frames come out intact and in order.  Before, each empty
    frame came back from the first NF as a "bad descriptor" and 1500 of
    them got a plain forwarder quarantined.
(b) An NF that allocates buffers and hands them back unused (length 0,
    XNV_DROP), 10^5 times, is charged nothing (before: ~1000/s of that
    quarantined it)."""
from harness import nf_env, run_pcap_chain, write_config
from harness import testnf_bin as _testnf_bin  # not collected as a test
from traffic import make_traffic

N_EMPTY, N_GOOD = 1500, 500
N_ALLOC_DROPS = 100_000


def stats_nf(stats, name):
    return next(n for n in stats["nfs"] if n["name"] == name)


def test_zero_length_frames_dropped_at_rx_not_charged(xnv):
    good = make_traffic(N_GOOD, seed=7)
    frames = []
    for i, p in enumerate(good):
        frames += [b""] * 3 + [p]
    frames = frames[:N_EMPTY + N_GOOD]
    assert frames.count(b"") == N_EMPTY
    r = run_pcap_chain(xnv, frames)
    st = r["stats"]
    for name in ("fwd-a-1", "fwd-b-1"):
        nf = stats_nf(st, name)
        assert nf["bad"] == 0 and not nf["quarantined"], nf
    assert r["core_rc"] == 0, r["core"].log()[-3000:]
    assert st["drops"].get("empty") == N_EMPTY, st["drops"]
    assert r["out"] == good
    assert "quarantined" not in r["core"].log()


def test_empty_buffers_handed_back_are_not_bad(xnv):
    cfg = write_config(xnv.path("empty.ini"), [
        ("group g", {"pool_bufs": 1024}),
        ("service t", {}),
        ("port out", {"dev": "net_null0", "group": "g"}),
    ])
    core = xnv.start_core(cfg)
    core.wait_ready()
    nf = xnv.start("t-1", [_testnf_bin(), "--service", "t", "--group", "g",
                           "--name", "t-1", "--socket", xnv.socket,
                           "--alloc", "64", "--", "--empty-drops",
                           N_ALLOC_DROPS], env=nf_env())
    nf.wait_output(rf"empty drops {N_ALLOC_DROPS}$", 120)
    assert nf.alive(), nf.stderr()
    core.stop()
    st = stats_nf(core.stats(), "t-1")
    assert st["bad"] == 0 and not st["quarantined"], st
    assert "quarantined" not in core.log()
