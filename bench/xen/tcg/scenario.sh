#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# make bench-xen, inside the emulated Dom0 (run by tests/xen/dom0-init.sh
# when the boot is a bench boot).  The same traffic source, DPDK net_null
# in Dom0, pushed through one NF in a PV DomU two ways:
#   xnv       net_null0 -> xnv-core (Dom0, --backend xen) -> xnv-forwarder
#             in DomU nf-a (granted pool, polled rings) -> xnv-core -> net_null1
#   netfront  net_null0 -> testpmd (Dom0, mac fwd) -> net_af_packet on veth
#             xnvx0 | xnvx1 in bridge xnvbr0 -> vif (netback) -> eth0
#             (netfront) of DomU nf-net running testpmd macswap on
#             net_af_packet -> back the same way -> net_null0
# Counted where the packets end (xnv: port tx of net_null1 from the core's
# table; netfront: testpmd's Tx-pps of net_null0), after a warm-up.
# Prints "XB-RESULT system size rep pps" lines and XT-CHECK lines.
# Knobs on the Dom0 kernel command line: xb_sizes=64:1024 xb_reps=3
# xb_win=4 (counted seconds) xb_warm=2.
LOG=/tmp/core.log
. /usr/bin/xt-lib.sh
SIZES=64:1024 REPS=3 WIN=4 WARM=2
for a in $(cat /proc/cmdline); do
	case $a in
	xb_sizes=*) SIZES=${a#xb_sizes=} ;;
	xb_reps=*) REPS=${a#xb_reps=} ;;
	xb_win=*) WIN=${a#xb_win=} ;;
	xb_warm=*) WARM=${a#xb_warm=} ;;
	esac
done
SIZES=$(echo "$SIZES" | tr : ' ')	# not commas: QEMU splits -initrd at them
up() { cut -d' ' -f1 /proc/uptime; }
GUEST_MAC=00:16:3e:78:6e:01
PIDS=""
stop_pid() {	# stop_pid PID: ask, then insist; only processes we started
	kill -TERM "$1" 2>/dev/null
	wait_for 20 sh -c "! kill -0 $1 2>/dev/null" || kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# ---- the network of the netfront path ----------------------------------------
for m in llc stp bridge veth xen-netback; do insmod /lib/modules/$m.ko || RC=1; done
# iproute2 by path: busybox sh runs its own applet for a bare "ip"
IP=/usr/bin/ip
$IP link add xnvbr0 type bridge && $IP link add xnvx0 type veth peer name xnvx1 &&
	$IP link set xnvx1 master xnvbr0 && $IP link set xnvbr0 up && $IP link set xnvx0 up &&
	$IP link set xnvx1 up
check netfront-network $? "modules llc stp bridge veth xen-netback, bridge xnvbr0 with veth xnvx0|xnvx1"

# The netfront DomU boots once and is paused while xnv is measured, so its
# polling testpmd takes no CPU from the other path.
xl create -q /domU/nf-net.cfg
wait_for 120 sh -c "xl list nf-net >/dev/null 2>&1 && ls /sys/class/net/xnvbr0/brif | grep -q vif"
check netfront-vif $? "ports of xnvbr0: $(ls /sys/class/net/xnvbr0/brif | tr '\n' ' ')"
wait_for 120 grep -q "xb-netfront-ready" /var/log/xen/console/guest-nf-net.log
check netfront-guest $? "$(grep -m1 -E 'xb-netfront-ready|rc=' /var/log/xen/console/guest-nf-net.log)"
xl pause nf-net

# xnv: pps over WIN s from two snapshots of the core's table
xnv_window() {	# xnv_window SIZE REP
	local t1 t2 p1 p2
	snap; t1=$(up); p1=$(col sink 3)
	sleep "$WIN"
	snap; t2=$(up); p2=$(col sink 3)
	echo "XB-RESULT xnv $1 $2 $(awk -v a="$p1" -v b="$p2" -v s="$t1" -v e="$t2" \
		'BEGIN { printf "%.0f", (b - a) / (e - s) }')"
}
# netfront: mean of testpmd's Tx-pps of port 0 over the prints in the window
nf_window() {	# nf_window SIZE REP LOGFILE
	local from=$(wc -l <"$3")
	sleep "$WIN"
	echo "XB-RESULT netfront $1 $2 $(tail -n +$((from + 1)) "$3" | awk '
		/NIC statistics for port/ { port = $(NF - 1) }
		/Tx-pps:/ && port == 0 { s += $2; n++ }
		END { printf "%.0f", n ? s / n : 0 }')"
}

# One path runs at a time; the other is frozen (its Dom0 process stopped,
# its DomU paused), and the windows alternate, so a change of load on the
# host hits both alike.
xnv_freeze() { xl pause nf-a; kill -STOP $CORE; }
xnv_thaw() { xl unpause nf-a; kill -CONT $CORE; }
nf_freeze() { kill -STOP $T; xl pause nf-net; }
nf_thaw() { xl unpause nf-net; kill -CONT $T; }

for size in $SIZES; do
	# ---- xnv: a fresh core for this size, the NF domain by xnv-xl ----------
	sed "s/@SIZE@/$size/" /nf/bench.ini >/tmp/bench.ini
	xnv-core --no-huge -m 128 -l 0 -- --config /tmp/bench.ini --backend xen --busy-poll >$LOG 2>&1 &
	CORE=$!
	wait_for 60 grep -q "NFs attach from Xen domains" $LOG &&
		xnv-xl create /domU/nf-a.cfg >/tmp/xl.log 2>&1 && wait_for 150 attached nf-a.0
	ok=$?
	sleep "$WARM"; snap
	[ $ok = 0 ] && [ "$(col sink 3)" -gt 0 ]
	ok=$?
	check xnv-$size-forwards $ok "net_null size=$size -> nf-a.0 -> sink: sink tx $(col sink 3), nf-a.0 rx $(col nf-a.0 3) $(tail -n 2 /tmp/xl.log 2>/dev/null | tr '\n' ' ')"
	if [ $ok != 0 ]; then
		tail -n 5 $LOG; cat /tmp/xl.log; stop_pid $CORE; xl destroy nf-a 2>/dev/null
		continue
	fi
	xnv_freeze

	# ---- netfront: testpmd in Dom0 on the veth end, the DomU thawed --------
	xl unpause nf-net
	TP=/tmp/testpmd-$size.log
	dpdk-testpmd --lcores 0@0,1@0 --no-huge -m 256 --no-pci \
		--vdev "net_null0,size=$size" --vdev net_af_packet0,iface=xnvx0,qdisc_bypass=1 \
		-- --forward-mode=mac --eth-peer=1,$GUEST_MAC --nb-cores=1 \
		--total-num-mbufs=16384 --no-mlockall --stats-period 1 >$TP 2>&1 </dev/null &
	T=$!
	sleep "$WARM"
	wait_for 30 grep -q "Tx-pps" $TP
	nf_window "$size" warm $TP >/tmp/nfw
	awk '{ exit !($5 > 0) }' /tmp/nfw
	check netfront-$size-forwards $? "testpmd net_null size=$size <-> xnvx0 <-> bridge <-> vif <-> nf-net: $(cut -d' ' -f5 /tmp/nfw) pps back at net_null0; rx packets so far: xnvx0 $(cat /sys/class/net/xnvx0/statistics/rx_packets), vif $(cat /sys/class/net/vif*/statistics/tx_packets)"
	nf_freeze

	for rep in $(seq 1 "$REPS"); do
		xnv_thaw; sleep "$WARM"; xnv_window "$size" "$rep"; xnv_freeze
		nf_thaw; sleep "$WARM"; nf_window "$size" "$rep" $TP; nf_freeze
	done
	xnv_thaw; stop_pid $CORE
	wait_for 60 no_domain nf-a || xl destroy nf-a
	kill -CONT $T; stop_pid $T
done
xl destroy nf-net
exit $RC
