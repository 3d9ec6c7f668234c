# SPDX-License-Identifier: BSD-3-Clause
"""xnv-ctl metrics (dom0-core/python/xnv/metrics.py): Prometheus text of a
running core with traffic (port in, a replayed pcap -> fwd-a -> port out,
latency on), scraped over HTTP between two reads of the core's telemetry:
every counter lies between the two reads, and grows from one scrape to the
next; the latency histogram's buckets are cumulative and end at its count;
OpenMetrics when asked for; one exposition on stdout without --listen; a
bad --listen is a usage error; a core gone is `xnv_up 0`."""
import re
import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from ctlenv import flow_frames
from harness import CTL_BIN, Telemetry, wait_until, write_config
from traffic import write_pcap

TIMEOUT = ("--timeout", "30")


def samples(text):
    """{(name, frozenset(labels)): value} of an exposition."""
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def telemetry(t):
    """What the scrape is checked against: {(name, labels): value}."""
    out = {}
    st = t("/xnv/stats")
    out[("xnv_rx_packets_total", frozenset())] = st["rx"]
    out[("xnv_tx_packets_total", frozenset())] = st["tx"]
    for k, v in st.items():
        if k.startswith("drop_"):
            out[("xnv_core_drops_total", frozenset({("reason", k[5:])}))] = v
    for i in t("/xnv/port/list"):
        p = t("/xnv/port/info", i)
        lab = frozenset({("port", p["name"])})
        out[("xnv_port_rx_packets_total", lab)] = p["rx"]
        out[("xnv_port_tx_packets_total", lab)] = p["tx"]
        lat = t("/xnv/port/latency", i)
        out[("xnv_port_latency_seconds_count", lab)] = lat["count"]
    for i in t("/xnv/nf/list"):
        n = t("/xnv/nf/info", i)
        lab = frozenset({("id", str(n["id"])), ("nf", n["name"]),
                         ("service", n["service"]), ("group", n["group"])})
        out[("xnv_nf_rx_packets_total", lab)] = n["rx"]
        out[("xnv_nf_tx_packets_total", lab)] = n["tx"]
    return out


def scrape(url, accept=None):
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.headers.get("Content-Type"), r.read().decode()


def test_metrics_between_two_telemetry_reads(xnv):
    pcap = write_pcap(xnv.path("in.pcap"), flow_frames())
    cfg = write_config(xnv.path("m.ini"), [
        ("core", {"socket": xnv.socket, "latency": "on"}),
        ("group g", {"pool_bufs": 2048}),
        ("port in", {"dev": f"net_pcap0,rx_pcap={pcap},infinite_rx=1", "group": "g",
                     "chain": "fwd-a -> out", "rx_rate": 20000}),
        ("port out", {"dev": "net_null1", "group": "g"}),
        ("service fwd-a", {}),
    ])
    core = xnv.start_core(cfg, duration=300)
    core.wait_ready()
    nf = xnv.start_nf("fwd-a", "g", "fwd-a-1")
    core.wait_attached(nf)
    t = Telemetry(core, 30)
    wait_until(lambda: t("/xnv/port/latency", 1)["count"] > 100, 30, "traffic")

    # a bad --listen: one line, exit 2, nothing served
    r = xnv.run([sys.executable, CTL_BIN, "--socket", xnv.socket, "metrics",
                 "--listen", "localhost"])
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r
    assert "'localhost' is not HOST:PORT" in r.stderr
    # one exposition on stdout
    r = xnv.run([sys.executable, CTL_BIN, "--socket", xnv.socket, *TIMEOUT, "metrics"],
                timeout=120)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert samples(r.stdout)[("xnv_up", frozenset())] == 1

    srv = xnv.start("metrics", [sys.executable, CTL_BIN, "--socket", xnv.socket, *TIMEOUT,
                                "metrics", "--listen", "127.0.0.1:0"])
    m = srv.wait_output(r"serving metrics on (http://127\.0\.0\.1:\d+/metrics)", 30)
    url = m.group(1)
    prev = None
    for _ in range(3):
        before = telemetry(t)
        ctype, text = scrape(url)
        after = telemetry(t)
        assert ctype.startswith("text/plain"), ctype
        got = samples(text)
        assert got[("xnv_up", frozenset())] == 1
        for key, lo in before.items():
            assert key in got, (key, sorted(k for k in got if k[0] == key[0]))
            assert lo <= got[key] <= after[key], (key, lo, got[key], after[key])
        assert got[("xnv_port_tx_packets_total", frozenset({("port", "out")}))] > 0
        # the histogram: cumulative buckets up to +Inf == count
        lab = frozenset({("port", "out")})
        buckets = sorted((float(dict(k[1])["le"]), v) for k, v in got.items()
                         if k[0] == "xnv_port_latency_seconds_bucket"
                         and ("port", "out") in k[1])
        assert len(buckets) == 16 and buckets[-1][0] == float("inf")
        assert all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])), buckets
        assert buckets[-1][1] == got[("xnv_port_latency_seconds_count", lab)]
        assert got[("xnv_port_latency_seconds_sum", lab)] > 0
        if prev is not None:        # counters only grow
            for key, v in prev.items():
                if key[0].endswith("_total") or key[0].endswith("_count"):
                    assert got.get(key, v) >= v, (key, v, got.get(key))
        prev = got
    # OpenMetrics when asked for
    ctype, text = scrape(url, "application/openmetrics-text; version=1.0.0")
    assert ctype.startswith("application/openmetrics-text"), ctype
    assert text.endswith("# EOF\n")
    line = [ln for ln in text.splitlines() if ln.startswith("xnv_nf_rx_packets_total")]
    assert len(line) == 1 and re.fullmatch(
        r'xnv_nf_rx_packets_total\{group="g",id="0",nf="fwd-a-1",service="fwd-a"\} '
        r'[0-9.e+]+', line[0]), line
    # the core gone: xnv_up 0, still serving
    t.close()
    nf.stop()
    core.stop()
    _, text = scrape(url)
    assert samples(text) == {("xnv_up", frozenset()): 0}
    srv.stop()
    assert srv.returncode == 0
