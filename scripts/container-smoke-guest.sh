#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# container-smoke-guest.sh: the operator's first steps, run by systemd
# inside the container scripts/container-smoke.sh boots (PID 1 there is
# systemd).  The packages are installed by apt; nothing here knows the
# build tree.
#   1. build an NF out of tree with `pkg-config libxnv` (libxnv-dev) and
#      make it xnv-nf@fwd-b's program (/etc/xnv/nf/fwd-b.conf)
#   2. systemctl start xnv-core (Type=notify: returns at READY=1), then
#      xnv-nf@fwd-a (the packaged forwarder) and xnv-nf@fwd-b, as user xnv
#   3. xnv-ctl nfs shows both attached; xnv-ctl ports: port "out" sends
#   4. xnv-ctl metrics --listen: the scrape's port "out" counter moves
#   5. systemctl stop xnv-core: the unit ends cleanly (Result=success)
# One line per step, "SMOKE: ok - ..." or "SMOKE: FAIL - ...", then
# "SMOKE: N passed, N failed" in $out; the journal of the units after it.
# Then the container powers off.  SCALE (file /etc/xnv-smoke.scale) times
# every wait.
set -uo pipefail

out=/var/log/xnv-smoke.result
scale=$(cat /etc/xnv-smoke.scale 2>/dev/null || echo 1)
npass=0 nfail=0
: > "$out"
ok()   { echo "SMOKE: ok - $*" >> "$out"; npass=$((npass + 1)); }
fail() { echo "SMOKE: FAIL - $*" >> "$out"; nfail=$((nfail + 1)); }
finish() {
	echo "SMOKE: $npass passed, $nfail failed" >> "$out"
	{
		echo "---- journal"
		journalctl --no-pager -o short-monotonic -u xnv-core -u 'xnv-nf@*' \
			-u xnv-smoke 2>&1 | tail -80
	} >> "$out"
	sync
	systemctl --no-block poweroff
	exit 0
}
trap finish EXIT

# 1. an out-of-tree NF, built against the installed libxnv
# /root/mynf.c: tests/integration/oot_nf.c, put there by container-smoke.sh
src=/root/mynf.c
# shellcheck disable=SC2046
if gcc -O2 -o /usr/local/bin/mynf "$src" $(pkg-config --cflags --libs libxnv) \
	> /root/mynf.log 2>&1 && /usr/local/bin/mynf --help >> /root/mynf.log 2>&1; then
	ok "an NF builds with pkg-config libxnv and answers --help"
	sed -i 's|^NF=.*|NF=/usr/local/bin/mynf|' /etc/xnv/nf/fwd-b.conf
else
	fail "an NF builds with pkg-config libxnv: $(tail -3 /root/mynf.log | tr '\n' ' ')"
fi

# 2. the units
state() { systemctl show -p ActiveState --value "$1"; }
if timeout $((60 * scale)) systemctl start xnv-core && [ "$(state xnv-core)" = active ]; then
	ok "systemctl start xnv-core: active (READY=1)"
else
	fail "systemctl start xnv-core: $(state xnv-core)"
	exit
fi
systemctl start xnv-nf@fwd-a xnv-nf@fwd-b
for n in fwd-a fwd-b; do
	u=xnv-nf@$n
	[ "$(state "$u")" = active ] && [ "$(systemctl show -p User --value "$u")" = xnv ] &&
		ok "systemctl start $u: active, user xnv" ||
		fail "systemctl start $u: $(state "$u")"
done

# 3. xnv-ctl: both NFs attached, port "out" sends
ctl() { xnv-ctl --timeout $((10 * scale)) "$@"; }
attached=0
for _ in $(seq $((40 * scale))); do
	attached=$(ctl --json nfs 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
nfs = d.get("nfs", d) if isinstance(d, dict) else d
print(len([n for n in nfs if n["name"] in ("fwd-a", "fwd-b")]))' 2>/dev/null || echo 0)
	[ "$attached" = 2 ] && break
	sleep 0.5
done
[ "$attached" = 2 ] && ok "xnv-ctl nfs: fwd-a and fwd-b attached" ||
	fail "xnv-ctl nfs: $attached of fwd-a, fwd-b attached"

port_out_tx() { ctl --json ports | python3 -c '
import json, sys
d = json.load(sys.stdin)
ports = d.get("ports", d) if isinstance(d, dict) else d
print(sum(p["tx"] for p in ports if p["name"] == "out"))'; }
a=$(port_out_tx 2>/dev/null || echo 0) b=$a
for _ in $(seq $((40 * scale))); do
	sleep 0.5
	b=$(port_out_tx 2>/dev/null || echo "$a")
	[ "$b" -gt "$a" ] && break
done
[ "$b" -gt "$a" ] && ok "xnv-ctl ports: port out sent $a, then $b packets" ||
	fail "xnv-ctl ports: port out stayed at $a packets"

# 4. the metrics endpoint
xnv-ctl metrics --listen 127.0.0.1:9405 > /root/metrics.log 2>&1 &
mpid=$!
scrape() { python3 - <<'EOF'
import re, sys, urllib.request
t = urllib.request.urlopen("http://127.0.0.1:9405/metrics", timeout=5).read().decode()
m = re.search(r'^xnv_port_tx_packets_total\{port="out"\} (\S+)$', t, re.M)
print(int(float(m.group(1))) if m else -1)
EOF
}
m1=-1 m2=-1
for _ in $(seq $((40 * scale))); do
	m1=$(scrape 2>/dev/null) && [ "$m1" -ge 0 ] && break
	sleep 0.25
done
sleep 1
m2=$(scrape 2>/dev/null || echo -1)
[ "$m1" -ge 0 ] && [ "$m2" -gt "$m1" ] &&
	ok "metrics: xnv_port_tx_packets_total{port=\"out\"} $m1, then $m2" ||
	fail "metrics: xnv_port_tx_packets_total{port=\"out\"} $m1, then $m2 ($(tail -2 /root/metrics.log | tr '\n' ' '))"
kill "$mpid" 2>/dev/null
wait "$mpid" 2>/dev/null

# 5. a clean stop
systemctl stop xnv-nf@fwd-a xnv-nf@fwd-b xnv-core
res=$(systemctl show -p Result --value xnv-core)
[ "$res" = success ] && [ "$(state xnv-core)" = inactive ] &&
	ok "systemctl stop xnv-core: inactive, Result=$res" ||
	fail "systemctl stop xnv-core: $(state xnv-core), Result=$res"
