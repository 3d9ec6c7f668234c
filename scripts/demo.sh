#!/usr/bin/env bash
# make demo: 10 000 packets from a pcap through a chain of two forwarder
# NFs (separate processes, zero copy through the shared pool) and out to a
# pcap, in host mode.  Stops by itself; prints a summary.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
bin="$top/build/bin"
py="$top/.venv/bin/python"
work="$top/build/demo"
sock="$work/xnv.sock"
pids=()

cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

[ -x "$py" ] || { echo "demo: no Python venv: run 'make deps' first" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"

# 2 MiB pages for the pool when we can get them (root); else 4 KiB, logged.
if [ -w /proc/sys/vm/nr_hugepages ] && [ "$(cat /proc/sys/vm/nr_hugepages)" -lt 64 ]; then
	echo 64 > /proc/sys/vm/nr_hugepages || true
fi

echo "demo: generating 10000 packets (scapy) ..."
"$py" "$top/scripts/gen_pcap.py" "$work/in.pcap" --count 10000 --flows 32

cat > "$work/demo.ini" <<INI
; The demo's configuration: one trust group, two ports, a chain of two NFs.
[core]
socket = $sock
[group blue]
pool_bufs = 8192
[port in]
dev = net_pcap0,rx_pcap=$work/in.pcap
group = blue
chain = fwd-a -> fwd-b -> out
[port out]
dev = net_pcap1,tx_pcap=$work/out.pcap
group = blue
[service fwd-a]
[service fwd-b]
INI

echo "demo: starting xnv-core and two forwarder NFs (logs in $work) ..."
"$bin/xnv-core" -l 0 -- --config "$work/demo.ini" --idle-exit 1000 \
	--duration 25 --stats-json "$work/stats.json" >"$work/core.log" 2>&1 &
core=$!; pids+=("$core")
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
if [ ! -S "$sock" ]; then
	echo "demo: xnv-core did not start:" >&2; cat "$work/core.log" >&2; exit 1
fi
for s in fwd-a fwd-b; do
	"$bin/xnv-forwarder" --service $s --group blue --socket "$sock" \
		2>"$work/$s.log" &
	pids+=($!)
done
rc=0; wait "$core" || rc=$?
if [ $rc -ne 0 ]; then
	echo "demo: xnv-core failed (exit $rc):" >&2; cat "$work/core.log" >&2; exit 1
fi
grep -E 'xnv-core: (group|port|NF|rx)' "$work/core.log" | sed 's/^/  /'
echo
"$py" "$top/scripts/demo_summary.py" "$work/stats.json" "$work/in.pcap" "$work/out.pcap"
