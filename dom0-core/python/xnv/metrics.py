# SPDX-License-Identifier: BSD-3-Clause
"""xnv-ctl metrics: the core's counters as Prometheus / OpenMetrics text.

Each scrape reads the core's telemetry afresh (/xnv/stats, then every
port, NF, group and service, and each port's latency when `[core]
latency = on`) and writes it with python3-prometheus-client: the only
module of the package that needs more than the standard library, and only
when `xnv-ctl metrics` runs (ctl.py imports it then).  A scrape while the
core is not there answers `xnv_up 0` alone.  Metric names: CONTROL.md,
"Metrics".
"""
import socket
import socketserver
import threading
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import generate_latest, make_wsgi_app
from prometheus_client.core import (CollectorRegistry, CounterMetricFamily,
                                    GaugeMetricFamily, HistogramMetricFamily)

# (telemetry key, metric name, help) of each port counter
PORT_COUNTERS = (("rx", "port_rx_packets", "packets received"),
                 ("tx", "port_tx_packets", "packets sent"),
                 ("rx_missed", "port_rx_missed_packets", "packets the NIC dropped for want of room"),
                 ("rx_nombuf", "port_rx_nombuf_packets", "packets dropped for want of a buffer"),
                 ("nf_quota", "port_nf_quota_drops", "packets dropped: their NF held its quota"),
                 ("link_changes", "port_link_changes", "link state changes"),
                 ("rx_wakes", "port_rx_wakes", "sleeps of the idle core its rx interrupt ended"))
NF_COUNTERS = (("rx", "nf_rx_packets", "packets the core gave the NF"),
               ("tx", "nf_tx_packets", "packets the NF returned to be sent on"),
               ("drop", "nf_drop_packets", "packets the NF dropped"),
               ("bad", "nf_bad_descriptors", "bad descriptors the NF returned"),
               ("reclaimed", "nf_reclaimed_buffers", "buffers reclaimed from the NF"),
               ("alloc", "nf_alloc_buffers", "empty buffers given to the NF"),
               ("nf_quota", "nf_quota_drops", "packets for the NF dropped: it held its quota"),
               ("bell_kicks", "nf_doorbell_kicks", "kicks the core sent the sleeping NF"),
               ("bell_wakes", "nf_doorbell_wakes", "the NF's kicks that woke the core"),
               ("bell_spurious", "nf_doorbell_spurious", "of which the NF had nothing to send"),
               ("bell_muted", "nf_doorbell_muted", "times the core ignored the NF's kicks (flooding)"),
               ("bell_capped", "nf_doorbell_capped", "kicks to the NF sent late: 1/20000 s after the one before"))
NF_GAUGES = (("held", "nf_held_buffers", "buffers the NF holds"),
             ("rx_ring_used", "nf_rx_ring_used", "descriptors waiting in the NF's rx ring"))
SERVICE_COUNTERS = (("picks_affinity", "service_picks_affinity", "replica picks by flow"),
                    ("picks_spill", "service_picks_spill", "replica picks spilled to the least busy"),
                    ("no_instance", "service_no_instance_drops", "packets dropped: no NF attached"))


def read(core):
    """Everything a scrape shows, read from the core now."""
    snap = {"stats": core.call("/xnv/stats"), "ports": core.infos("port"),
            "nfs": core.infos("nf"), "groups": core.infos("group"),
            "services": core.infos("service"), "latency": []}
    for p in snap["ports"]:
        lat = core.call("/xnv/port/latency", p["index"], check=False)
        if isinstance(lat, dict) and "le_ns" in lat:
            snap["latency"].append(lat)
    return snap


def counters(fams, rows, spec, labels, kind=CounterMetricFamily):
    """One family per (key, name, help) of spec over rows; labels(row) ->
    [values] in the order of the label names fams[...] was made with."""
    names, values = labels
    for key, name, hlp in spec:
        fam = kind("xnv_" + name, hlp, labels=names)
        for r in rows:
            if key in r:
                fam.add_metric(values(r), r[key])
        fams.append(fam)


def nf_labels(n):
    return [str(n["id"]), n["name"], n["service"], n["group"]]


def families(snap):
    """The metric families of one snapshot."""
    fams = [GaugeMetricFamily("xnv_up", "1: the core answered this scrape", value=1)]
    st = snap["stats"]
    for key, name, hlp in (("rx", "rx_packets", "packets received by every port"),
                           ("tx", "tx_packets", "packets sent by every port"),
                           ("copies", "copied_packets", "packets copied between pools"),
                           ("log_dropped", "log_dropped_lines", "log lines dropped: stderr not read")):
        if key in st:
            fams.append(CounterMetricFamily("xnv_" + name, hlp, value=st[key]))
    drops = CounterMetricFamily("xnv_core_drops", "packets the core dropped, by reason",
                                labels=["reason"])
    for k, v in st.items():
        if k.startswith("drop_"):
            drops.add_metric([k[5:]], v)
    fams.append(drops)
    port = (["port"], lambda p: [p["name"]])
    counters(fams, snap["ports"], PORT_COUNTERS, port)
    counters(fams, snap["ports"], (("link_up", "port_link_up", "1: link up"),), port,
             GaugeMetricFamily)
    nf = (["id", "nf", "service", "group"], nf_labels)
    counters(fams, snap["nfs"], NF_COUNTERS, nf)
    counters(fams, snap["nfs"], NF_GAUGES, nf, GaugeMetricFamily)
    stat = CounterMetricFamily("xnv_nf_stat", "counters an NF publishes itself "
                               "(xnv_nf_stat_register)", labels=nf[0] + ["stat"])
    for n in snap["nfs"]:
        for k, v in (n.get("stats") or {}).items():
            stat.add_metric(nf_labels(n) + [k], v)
    fams.append(stat)
    group = (["group"], lambda g: [g["name"]])
    counters(fams, snap["groups"], (("pool_bufs", "group_pool_buffers", "buffers in the pool"),
                                    ("free", "group_free_buffers", "buffers free in the pool")),
             group, GaugeMetricFamily)
    counters(fams, snap["groups"], (("copies_in", "group_copies_in_packets",
                                     "packets copied into the group's pools"),), group)
    counters(fams, snap["services"], SERVICE_COUNTERS, (["service"], lambda s: [s["name"]]))
    lat = HistogramMetricFamily("xnv_port_latency_seconds", "rx burst to tx burst time "
                                "of the packets a port sent ([core] latency = on)",
                                labels=["port"])
    for p in snap["latency"]:
        le = sorted((int(k), v) for k, v in p["le_ns"].items())
        lat.add_metric([p["name"]], [(repr(k / 1e9), v) for k, v in le] + [("+Inf", p["count"])],
                       sum_value=p["sum_ns"] / 1e9)
    fams.append(lat)
    return fams


class Collector:
    """A prometheus_client collector over one core; `connect()` gives a
    fresh ctl.Core (telemetry connection) after a failure."""

    def __init__(self, connect, error_type):
        self.connect, self.error_type = connect, error_type
        self.core, self.lock = None, threading.Lock()

    def collect(self):
        with self.lock:     # one telemetry connection: scrapes one at a time
            try:
                if self.core is None:
                    self.core = self.connect()
                snap = read(self.core)
            except self.error_type:
                self.core = None
                return [GaugeMetricFamily("xnv_up", "1: the core answered this scrape",
                                          value=0)]
        return families(snap)


def registry(collector):
    reg = CollectorRegistry(auto_describe=False)
    reg.register(collector)
    return reg


def text(collector):
    """One exposition, as Prometheus' text format."""
    return generate_latest(registry(collector)).decode()


class _Server(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):   # no line per scrape
        pass


def serve(collector, host, port):
    """An HTTP server of /metrics (any path) at host:port (port 0: any
    free one); returns it, not yet serving (server_address holds the port)."""
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    cls = type("Server", (_Server,), {"address_family": fam})
    return make_server(host, port, make_wsgi_app(registry(collector)), cls,
                       handler_class=_QuietHandler)
