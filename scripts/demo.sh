#!/usr/bin/env bash
# make demo: 10 000 packets from a pcap through a chain of two forwarder
# NFs (separate processes, zero copy through the shared pool) and out to a
# pcap, in host mode.  Stops by itself; prints a summary.  Leaves the
# machine as it found it: a hugepage count it raised is put back at exit.
#   XNV_DEMO_COUNT      packets (default 10000)
#   XNV_DEMO_HUGEPAGES  the hugepage count to raise (default
#                       /proc/sys/vm/nr_hugepages; tests give a file)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
bin="$top/build/bin"
py="$top/.venv/bin/python"
work="$top/build/demo"
sock="$work/xnv.sock"
count=${XNV_DEMO_COUNT:-10000}
hp=${XNV_DEMO_HUGEPAGES:-/proc/sys/vm/nr_hugepages}
hp_old=
pids=()

cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ -n "$hp_old" ]; then
		if echo "$hp_old" > "$hp"; then
			echo "demo: $hp back to $hp_old"
		else
			echo "demo: could not put $hp back to $hp_old" >&2
		fi
	fi
}
trap cleanup EXIT

[ -x "$py" ] || { echo "demo: no Python venv: run 'make deps' first" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"

# 2 MiB pages for the pool when we can get them (root); else 4 KiB, logged.
# Said, and undone at exit.
if [ -w "$hp" ] && [ "$(cat "$hp")" -lt 64 ]; then
	old=$(cat "$hp")
	if echo 64 > "$hp" 2>/dev/null; then
		hp_old=$old
		echo "demo: $hp $old -> 64 for the pool (put back at exit)"
	fi
fi

echo "demo: generating $count packets (scapy) ..."
"$py" "$top/scripts/gen_pcap.py" "$work/in.pcap" --count "$count" --flows 32

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
