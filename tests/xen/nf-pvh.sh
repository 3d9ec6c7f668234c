#!/bin/sh
# An NF in a PVH DomU (tests/xen, XT_ONLY=pvh): Dom0 stays PV and runs
# xnv-core --backend xen as nf-scenario.sh does; nf-pvh (type "pvh", the
# same kernel and initramfs as the PV NF domains, xnv-forwarder as fwd-a)
# and the PV nf-b (fwd-b) carry the blue chain in -> fwd-a -> fwd-b -> out.
# Run by dom0-init.sh for xt_only=pvh; QEMU's CPU then has emulated AMD-V
# (run.sh), which Xen needs for any HVM container, PVH included.
# Prints "XT-CHECK ok|FAIL <name>..." lines; exit 1 if any failed.
. xt-lib.sh
N=$(cat $R/nf/count)
LOG=$T/core.log
CON=/var/log/xen/console/guest-nf-pvh.log
console() { tail -n "${1:-20}" $CON 2>/dev/null | tr '\n' ' ' | cut -c1-1500; }
# what Xen said of a guest it lost (a triple fault, a crash), for a failure
xen_lost() { xl dmesg 2>/dev/null | grep -aiE 'triple fault|crash' | tail -n 2 | tr '\n' ' ' | cut -c1-300; }
port_out_done() { snap; [ "$(col out 3)" = "$N" ]; }
stop() {	# the checks after a failed one cannot run: tidy up, say so
	echo "XT: PVH phase stopped: $1; nf-pvh's console: $(console 40)"
	kill -TERM $CORE 2>/dev/null; wait $CORE
	for d in nf-pvh nf-b; do xl destroy $d 2>/dev/null; done
	exit 1
}
caps=$(xl info 2>/dev/null | sed -n 's/^virt_caps *: //p')
echo "XT: t=$(up)s PVH NF domain phase (Xen virt_caps: $caps)"

xnv-core --no-huge -m 128 -l 0 -- --config $R/nf/xnv.ini --backend xen >$LOG 2>&1 &
CORE=$!
if ! wait_for 60 grep -q "NFs attach from Xen domains" $LOG; then
	check pvh-domu-boots 1 "xnv-core did not start: $(grep -v '^EAL' $LOG | tail -n 3 | tr '\n' ' ')"
	stop "no core"
fi

# ---- the PVH domain: built by Xen as PVH, the kernel says so too ----------
secs() { awk -v a=$1 -v b=$(up) 'BEGIN { printf "%.0f", b - a }'; }
c0=$(up)
xnv-xl create $R/domU/nf-pvh.cfg >$T/xl-pvh.log 2>&1
xrc=$?
P=$(xl domid nf-pvh 2>/dev/null)
# domU-init.sh's first line: /sys/hypervisor/guest_type (the kernel's own
# xen_domain_type: PV, PVH or HVM) and its dmesg on the platform.  Linux
# 6.1 prints "Booting paravirtualized kernel on Xen" for PV only; a PVH
# kernel says "Hypervisor detected: Xen HVM" (an HVM container) and
# "Xen HVM callback vector for event delivery is enabled".
booted() { grep -q '^xt: guest type' $CON 2>/dev/null; }
[ $xrc = 0 ] && wait_for 150 booted
gt=$(grep -o '^xt: guest type.*' $CON | head -n 1 | tr -d '\r')
ty=$(xl list -l nf-pvh 2>/dev/null | grep -o '"type": "[a-z]*"' | head -n 1)
[ $xrc = 0 ] && [ "$ty" = '"type": "pvh"' ] &&
	echo "$gt" | grep -q '^xt: guest type PVH; Hypervisor detected: Xen HVM;'
check pvh-domu-boots $? "xnv-xl create exit $xrc$([ $xrc = 0 ] || echo " ($(grep -v '^Parsing config' $T/xl-pvh.log | tr '\n' ' ' | cut -c1-600))"), nf-pvh dom${P:-?}, xl list -l: ${ty:-no domain}; its console: '${gt:-nothing like it; $(console 15)}'"
[ $RC = 0 ] || stop "nf-pvh did not come up as PVH"

wait_for 150 attached nf-pvh.0
check pvh-nf-attaches $? "$(secs $c0) s after xnv-xl create: $(tr '\n' ' ' <$T/xl-pvh.log | cut -c1-120); $(grep -o 'NF nf-pvh.0 attached.*' $LOG | cut -c1-200)"
[ $RC = 0 ] || stop "its NF did not attach"

# ---- the chain through it and a PV NF ---------------------------------------
c0=$(up)
xnv-xl create $R/domU/nf-b.cfg >$T/xl-b.log 2>&1
wait_for 150 attached nf-b.0
fwd=$?
echo "XT: t=$(up)s nf-b (PV) attached $(secs $c0) s after xnv-xl create"
[ $fwd = 0 ] && wait_for 240 port_out_done
fwd=$?
snap
seen="port out tx $(col out 3)/$N; nf-pvh.0 rx/tx $(col nf-pvh.0 3)/$(col nf-pvh.0 4), nf-b.0 (PV) $(col nf-b.0 3)/$(col nf-b.0 4); group blue copied-in $(grp blue 8)"
[ $fwd = 0 ] && [ "$(col nf-pvh.0 3)" = "$N" ] && [ "$(col nf-pvh.0 4)" = "$N" ] &&
	[ "$(col nf-b.0 4)" = "$N" ] && [ "$(grp blue 8)" = 0 ]
fwd=$?

# ---- sustained traffic through it -------------------------------------------
# (the PVH Dom0 of make check-xen-pvh triple-faulted once traffic ran): the
# null port nin, paced to 2000 packets/s, through nf-pvh and nf-b for 10
# samples a second apart; nout's tx must grow with no pause over `scaled 5`
tel /xnv/chain/set "nin fwd-a->fwd-b->nout" >$T/tel-chain.out 2>&1
r0=$(col nf-pvh.0 3)
u0=$(up)
sample_nout 10
r1=$(col nf-pvh.0 3) x1=$(col nf-pvh.0 4) u1=$(up)
tel /xnv/chain/set "nin fwd-c->nout" >/dev/null 2>&1	# no instance: dropped
xs=$(xl list nf-pvh 2>/dev/null | awk 'NR == 2 { print $5 }')
case $xs in *[scd]*|"") false ;; esac &&
	stall_ok && [ "$t" -gt "$first" ] 2>/dev/null && [ "$r1" -gt "$r0" ] 2>/dev/null
check pvh-under-traffic $? "nin -> nf-pvh -> nf-b -> nout: nout tx $first -> $t in $samples samples over $(awk -v a=$u0 -v b=$u1 'BEGIN { printf "%.0f", b - a }') s (longest stall $STALL_MAX s, at most $(scaled 5)), nf-pvh.0 rx $r0 -> $r1 tx $x1; nf-pvh's xl state '$xs'$([ "$t" -gt "${first:-0}" ] 2>/dev/null || echo "; chain set: '$(tr '\n' ' ' <$T/tel-chain.out | cut -c1-100)'")"

# ---- clean shutdown: the core's last table, the NFs told -------------------
kill -TERM $CORE; wait $CORE; crc=$?
# the table the core prints as it exits, after its NFs left
awk -v n="$(grep -c 'xnv-core statistics' $LOG)" '/xnv-core statistics/ { k++ } k == n' $LOG >$T/snap
wait_for 60 grep -q 'xnv-forwarder exited' $CON
ex=$(grep -o 'xnv-forwarder exited.*' $CON | head -n 1 | tr -d '\r')
[ $crc = 0 ] && [ -n "$(grp blue 4)" ] && [ "$(grp blue 4)" = "$(grp blue 6)" ] &&
	[ "$ex" = "xnv-forwarder exited rc=0" ]
check pvh-core-exits-cleanly $? "SIGTERM: exit $crc; its last table: blue $(grp blue 6)/$(grp blue 4) free; nf-pvh: '${ex:-no exit line}'"
cmp=$(xt-pcapcmp $R/nf/in.pcap $T/out.pcap 2>&1)
[ $? = 0 ] && [ $fwd = 0 ]
check pvh-chain-forwards $? "$seen; xt-pcapcmp: $cmp$([ $fwd = 0 ] || echo "; Xen: '$(xen_lost)'; nf-pvh's console: $(console 8)")"

# The core gave nf-pvh an event channel, and the NF, as it stopped, counted
# the wake-ups it got from it (it slept on it while nf-b booted)
conn=$(grep -o "domain $P device 0 connected: .*" $LOG | tail -n 1)
st=$(grep -o 'stopped: rx .*' $CON | tail -n 1 | tr -d '\r')
woke=$(echo "$st" | sed -n 's/.*doorbell: yes, woken \([0-9]*\),.*/\1/p')
echo "$conn" | grep -q 'doorbell: event channel [0-9]' && [ "${woke:-0}" -gt 0 ]
check pvh-doorbell $? "core: '...${conn#*; }'; nf-pvh's NF: '${st:-no stopped line}'"

wait_for 60 sh -c "! xl list | grep -qE '^nf-(pvh|b) '" ||
	for d in nf-pvh nf-b; do xl destroy $d 2>/dev/null; done
exit $RC
