#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# install-smoke.sh [--direct] [--debs DIR] [--keep]
# The packages end to end, without installing them on this machine:
#   1. make deb (or take the .debs in DIR)
#   2. extract xnv-core, xnv-tools and libxnv0 into a temporary root
#      (dpkg-deb -x: no maintainer scripts, nothing outside the root)
#   3. start xnv-core with its unit's ExecStart= line (paths into the
#      root) and wait for READY=1 on a NOTIFY_SOCKET of our own: under
#      systemd-run when PID 1 is systemd (unless --direct), else directly
#   4. start NFs fwd-a and fwd-b as xnv-nf@.service would (its ExecStart=,
#      the sample /etc/xnv/nf files), and
#   5. show xnv-ctl's port counters moving; stop everything by PID.
# The sample config's socket goes into the temporary directory; without an
# xnv group on this machine its socket_group / allow_gids lines are left
# out, and the NFs run as the caller (the unit says User=xnv).
# Exit 0 when the counters moved, 1 otherwise, 2 for a usage error.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
direct=0 keep=0 debs=
while [ $# -gt 0 ]; do
	case $1 in
	--direct) direct=1 ;;
	--keep) keep=1 ;;
	--debs) debs=${2:?--debs DIR}; shift ;;
	*) echo "install-smoke: unknown argument '$1' (--direct, --debs DIR, --keep)" >&2
	   exit 2 ;;
	esac
	shift
done
scale=${XNV_TIME_SCALE:-1}
say() { echo "install-smoke: $*"; }

if [ -z "$debs" ]; then
	make -C "$here" deb
	debs=$here/build/deb
fi
tmp=$(mktemp -d /tmp/xnv-smoke-XXXXXX)
root=$tmp/root pids=() units=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	for p in "${units[@]}"; do systemctl stop "$p" 2>/dev/null || true; done
	[ "$keep" = 1 ] && say "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT

for p in xnv-core xnv-tools libxnv0; do
	f=$(ls "$debs"/${p}_*.deb)
	dpkg-deb -x "$f" "$root"
	say "extracted $(basename "$f")"
done

# A unit's ExecStart= with its paths moved into the root.
exec_start() {
	sed -n 's/^ExecStart=//p' "$root/lib/systemd/system/$1" |
		sed -e "s|/usr/|$root/usr/|g" -e "s|/etc/|$root/etc/|g"
}

sock=$tmp/run/xnv.sock
ini=$root/etc/xnv/xnv.ini
sed -i "s|^socket = .*|socket = $sock|" "$ini"
if ! getent group xnv >/dev/null; then
	sed -i -e '/^socket_group/d' -e '/^allow_gids/d' "$ini"
	say "no xnv group here: socket_group and allow_gids left out"
fi

read -r -a core_cmd <<< "$(exec_start xnv-core.service)"
read -r -a nf_cmd <<< "$(exec_start xnv-nf@.service)"
nf_env=(XNV_NF_DIR="$root/etc/xnv/nf" XNV_LIBEXEC="$root/usr/libexec/xnv"
	XNV_SOCKET="$sock")

if [ "$direct" = 0 ] && [ "$(cat /proc/1/comm)" = systemd ]; then
	# systemd-run returns once the Type=notify unit is active: READY=1
	say "PID 1 is systemd: systemd-run ${core_cmd[*]}"
	units+=(xnv-smoke-core)
	systemd-run --unit=xnv-smoke-core -p Type=notify "${core_cmd[@]}"
	say "xnv-core is ready (READY=1, systemd)"
	for n in fwd-a fwd-b; do
		units+=("xnv-smoke-nf-$n")
		systemd-run --unit="xnv-smoke-nf-$n" -p After=xnv-smoke-core.service \
			"${nf_env[@]/#/--setenv=}" "${nf_cmd[@]/\%i/$n}"
	done
else
	# READY=1 on a datagram socket of our own
	notify=$tmp/notify
	python3 - "$notify" "$((30 * scale))" > "$tmp/ready" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1]); s.settimeout(float(sys.argv[2]))
while "READY=1" not in s.recv(4096).decode().splitlines():
    pass
print("READY=1")
PY
	listener=$!
	for _ in $(seq $((100 * scale))); do
		[ -S "$notify" ] && break
		sleep 0.05
	done
	say "starting: ${core_cmd[*]}"
	NOTIFY_SOCKET=$notify "${core_cmd[@]}" > "$tmp/core.log" 2>&1 &
	pids+=($!)
	if ! wait "$listener" || [ "$(cat "$tmp/ready")" != READY=1 ]; then
		say "xnv-core never said READY=1"; tail -20 "$tmp/core.log"
		exit 1
	fi
	say "xnv-core is ready (READY=1)"
	for n in fwd-a fwd-b; do
		say "starting NF $n: ${nf_cmd[*]/\%i/$n}"
		env "${nf_env[@]}" "${nf_cmd[@]/\%i/$n}" > "$tmp/$n.log" 2>&1 &
		pids+=($!)
	done
fi

# A busy core withdraws a command and xnv-ctl asks again (--timeout).
ctl() { "$root/usr/sbin/xnv-ctl" --socket "$sock" --timeout $((10 * scale)) "$@"; }
sent() { ctl --json ports | python3 -c '
import json, sys
d = json.load(sys.stdin)
ports = d.get("ports", d) if isinstance(d, dict) else d
print(sum(p["tx"] for p in ports if p["name"] == "out"))' 2>/dev/null; }
first= second=
for _ in $(seq $((40 * scale))); do
	n=$(sent) || n=
	if [ -z "$first" ]; then first=$n
	elif [ -n "$n" ]; then second=$n; [ "$second" -gt "$first" ] && break
	fi
	sleep 0.5
done
first=${first:-0} second=${second:-0}
ctl ports || true
if [ "$second" -gt "$first" ]; then
	say "counters moved: port out sent $first, then $second packets"
	exit 0
fi
say "counters did not move (port out sent $first)"
tail -5 "$tmp"/*.log 2>/dev/null || true
exit 1
