#!/bin/sh
# NFs in PV DomUs (tests/xen): run in Dom0 by dom0-init.sh after the grant
# tests.  xnv-core --backend xen with pcap and null ports; NF domains
# started by xnv-xl from the configs in /domU (written by run.sh).
# Prints "XT-CHECK ok|FAIL <name>..." lines; exit status 1 if any failed.
# What each check proves: tests/xen/README.md.
N=$(cat /nf/count)
PVH=$(grep -o 'xt_pvh=1' /proc/cmdline)
# XT_ONLY=doorbell (run.sh): what the doorbell phase needs, and it
ONLY=$(sed -n 's/.* xt_only=\([a-z]*\).*/\1/p' /proc/cmdline)
LOG=/tmp/core.log
. /usr/bin/xt-lib.sh
port_out_done() { snap; [ "$(col out 3)" = "$N" ]; }

# ---- the core -------------------------------------------------------------
# PV Dom0: no hugepages, DPDK --no-huge; PVH Dom0: hugepages reserved, the
# core picks them itself (EAL --in-memory, 2 MiB pools).
MEM="--no-huge -m 128"
[ "$(cat /proc/sys/vm/nr_hugepages)" -gt 0 ] && MEM=""
xnv-core $MEM -l 0 -- --config /nf/xnv.ini --backend xen >$LOG 2>&1 &
CORE=$!
if ! wait_for 60 grep -q "NFs attach from Xen domains" $LOG; then
	check core-starts 1 "$(tail -n 3 $LOG | tr '\n' ' ')"
	exit 1
fi
check core-starts 0 "xnv-core --backend xen, pid $CORE; $(grep -o 'group blue: pool .*' $LOG | head -1 | cut -c1-100)"
if [ -n "$PVH" ]; then
	grep -q "group blue: pool .*2 MiB huge pages" $LOG &&
		grep -q "group red: pool .*2 MiB huge pages" $LOG && ! grep -q "no-huge" $LOG
	check pools-on-hugepages $? "$(grep -o 'group .*: pool .*pages' $LOG | tr '\n' ';') DPDK on hugepages (no --no-huge)"
fi

# ---- xnv-xl refuses bad domain configs before anything starts --------------
if [ -z "$ONLY" ]; then
out=$(xnv-xl create /domU/nf-bad.cfg 2>&1); rc=$?
echo "$out" | grep -q "unknown key 'nfv_servce'" && [ $rc != 0 ] && no_domain nf-bad
check xnv-xl-bad-key $? "exit $rc, '$out', no domain nf-bad"
out=$(xnv-xl create /domU/nf-nosvc.cfg 2>&1); rc=$?
echo "$out" | grep -q "unknown service 'nosuch'" && [ $rc != 0 ] && no_domain nf-nosvc
check core-refuses-unknown-service $? "exit $rc, '$(echo "$out" | grep refused)', no domain nf-nosvc"
fi

# ---- blue NF A, then a red NF that tries to map A's refs -------------------
xnv-xl create /domU/nf-a.cfg >/tmp/xl-a.log 2>&1
wait_for 150 attached nf-a.0
check nf-in-domu-attaches $? "$(cat /tmp/xl-a.log | tr '\n' ' '); $(grep 'NF nf-a.0 attached' $LOG | cut -c1-150)"
A=$(xl domid nf-a)
BE=/local/domain/0/backend/xnv/$A/0
if [ -z "$ONLY" ]; then
xnv-xl create /domU/nf-r.cfg >/tmp/xl-r.log 2>&1
R=$(xl domid nf-r)
wait_for 150 attached nf-r.0 && wait_for 30 attached nf-r.1 &&
	wait_for 30 test -n "$(xenstore-read /local/domain/$R/data/ready 2>/dev/null)"
check red-nf-attaches $? "two NF devices of dom$R (nfv_instances = 2) in group red: $(grep -o 'NF nf-r.[01] attached.*group red' $LOG | cut -c1-60 | tr '\n' ';')"
ask() {	# ask DOM SEQ CMD: run CMD in xt-guest, print its answer
	xenstore-write /local/domain/$1/data/cmd "$2 $3"
	wait_for 30 sh -c "xenstore-read /local/domain/$1/data/ack 2>/dev/null | grep -q '^$2 '"
	xenstore-read /local/domain/$1/data/ack 2>/dev/null
}
xenstore-write /local/domain/$R/data/refs/ring/n 1 \
	/local/domain/$R/data/refs/ring/0 "$(xenstore-read $BE/ring-ref)" \
	/local/domain/$R/data/refs/dir/n 1 \
	/local/domain/$R/data/refs/dir/0 "$(xenstore-read $BE/pool-dir-refs)"
a1=$(ask $R 1 "map ring 0 rw"); a2=$(ask $R 2 "map dir 1 ro")
case "$a1 / $a2" in
"1 err 22"*" / 2 err 22"*) check red-cannot-map-blue 0 "dom$R mapping dom$A's ring and pool-directory refs: '$a1' / '$a2'" ;;
*) check red-cannot-map-blue 1 "expected EINVAL from both maps, got '$a1' / '$a2'" ;;
esac
ask $R 3 exit >/dev/null
fi

# ---- blue NF B: the chain in -> A -> B -> out runs ------------------------
xnv-xl create /domU/nf-b.cfg >/tmp/xl-b.log 2>&1
wait_for 150 attached nf-b.0 && wait_for 240 port_out_done
ok=$?
snap
check blue-chain-forwards $ok "port out tx $(col out 3)/$N; nf-a.0 rx/tx $(col nf-a.0 3)/$(col nf-a.0 4), nf-b.0 $(col nf-b.0 3)/$(col nf-b.0 4)"
[ "$(col nf-a.0 3)" = "$N" ] && [ "$(col nf-b.0 4)" = "$N" ] && [ "$(grp blue 8)" = 0 ]
check blue-domus-zero-copy $? "group blue copied-in $(grp blue 8), red $(grp red 8); both DomUs saw all $N packets"
if [ -z "$ONLY" ]; then
. /usr/bin/nf-flood.sh

# ---- a hostile DomU: budgets, sticky quarantine, release -------------------
. /usr/bin/nf-hostile.sh
fi

# ---- doorbells: event channels, rebinding, hostile kickers -----------------
. /usr/bin/nf-bell.sh

if [ -z "$ONLY" ]; then

# ---- xl destroy of an NF domain under traffic -------------------------------
xl domid nf-c1 >/dev/null 2>&1 ||	# nf-hostile.sh started it
	xnv-xl create /domU/nf-c1.cfg >/dev/null 2>&1
xnv-xl create /domU/nf-c2.cfg >/dev/null 2>&1
wait_for 150 attached nf-c1.0 && wait_for 150 attached nf-c2.0
# net_null packets are all alike (one flow): one replica carries them,
# the one whose rx grows now (nf-c1 may have counted packets earlier, in
# nf-hostile.sh, while the flow has since gone to nf-c2).
carrier() {
	local a b
	snap; a=$(col nf-c1.0 3) b=$(col nf-c2.0 3)
	sleep 0.5; snap
	if [ "$(col nf-c1.0 3)" -gt "${a:-0}" ] 2>/dev/null; then V=nf-c1 S=nf-c2
	elif [ "$(col nf-c2.0 3)" -gt "${b:-0}" ] 2>/dev/null; then V=nf-c2 S=nf-c1
	else return 1; fi
}
V= S=
wait_for 60 carrier
t1=$(col nout 3)
# Paused first, so that it surely holds buffers when it goes: the core
# keeps filling its rx ring (at nin's paced rate a running NF is often
# empty-handed, and "reclaimed > 0" would be luck).
holds() { snap; [ "$(col $V.0 3)" -gt "$(col $V.0 4)" ]; }	# rx > tx
if [ -n "$V" ]; then
	xl pause $V
	wait_for 60 holds && held="paused holding $(($(col $V.0 3) - $(col $V.0 4)))" ||
		held="paused, never held a buffer in $(scaled 60) s (rx $(col $V.0 3) tx $(col $V.0 4))"
else
	V=nf-c1 S=nf-c2 held="no replica's rx grew in $(scaled 60) s"
fi
xl destroy $V
wait_for 60 finished $V.0
fin=$?
sleep 2; snap
t2=$(col nout 3)
[ $fin = 0 ] && [ "$(col $V.0 8)" = gone ] && [ "$(col $V.0 7)" -gt 0 ] && [ "$t2" -gt "$t1" ] &&
	[ "$(col $S.0 3)" -gt 0 ]
check destroy-under-traffic $? "xl destroy $V ($held): $(grep -o "NF $V.0 (Xen domain [0-9]* device [0-9]*) detached.*" $LOG | cut -c1-160); port nout tx $t1 -> $t2 via $S (rx $(col $S.0 3))"
xnv-xl destroy $S >/dev/null 2>&1
wait_for 60 finished $S.0
sleep 1; snap
[ "$(grp blue 4)" = "$(grp blue 6)" ] && [ "$(grp red 4)" = "$(grp red 6)" ]
check pool-back-to-full $? "blue $(grp blue 6)/$(grp blue 4) free, red $(grp red 6)/$(grp red 4) free, with nout traffic now dropped for lack of an instance"
xnv-xl list >/tmp/list 2>&1
grep -q "nf-a .*fwd-a .*blue .*connected .*connected" /tmp/list && grep -q "nf-r .*red" /tmp/list &&
	! grep -q "nf-c" /tmp/list
check xnv-xl-list $? "$(grep -c '^[0-9]' /tmp/list) devices listed: $(awk 'NR > 1 { printf "%s/%s/%s ", $2, $4, $6 }' /tmp/list)"
fi

# ---- clean shutdown: NFs are told, pcap output equals input ----------------
kill -TERM $CORE; wait $CORE; crc=$?
check core-exits-cleanly $crc "exit $crc; $(grep -o 'drops:.*' $LOG | tail -1 | cut -c1-160)"
cmp=$(xt-pcapcmp /nf/in.pcap /tmp/out.pcap 2>&1)
check blue-chain-intact $? "$cmp"
NFD="a b r"
[ -n "$ONLY" ] && NFD="a b"
wait_for 60 sh -c "! xl list | grep -qE '^nf-($(echo $NFD | tr ' ' '|')) '"
ok=$?
for d in $NFD; do grep -h "xnv-forwarder exited" /var/log/xen/console/guest-nf-$d.log 2>/dev/null | tail -1; done >/tmp/exits
[ $ok = 0 ] && [ "$(grep -c 'xnv-forwarder exited rc=0' /tmp/exits)" = "$(echo $NFD | wc -w)" ] &&
	{ [ -n "$ONLY" ] || grep -q 'rc=0 (device 1)' /var/log/xen/console/guest-nf-r.log; }
check nfs-see-core-shutdown $? "$(tr '\n' ';' </tmp/exits)"
[ -n "$ONLY" ] && exit $RC

# ---- without the gntshare module: the gntalloc fallback --------------------
# The core and xt-dom0 are gone, so every grant of the module has ended and
# it unloads.  The core starts again (same config but a fresh output pcap)
# on gntalloc: each NF gets a pool of its own, packets are copied between
# pools, also inside trust group blue.
echo "XT: t=$(cut -d' ' -f1 /proc/uptime)s gntalloc fallback phase"
LOG=/tmp/core-fallback.log
out=$(rmmod gntshare 2>&1); rc=$?
[ $rc = 0 ] && [ ! -e /dev/xen/gntshare ]
check gntshare-unloads $? "rmmod gntshare: exit $rc${out:+ ($out)}, /dev/xen/gntshare gone"
xnv-core $MEM -l 0 -- --config /nf/xnv-fallback.ini --backend xen >$LOG 2>&1 &
CORE=$!
FALLBACK="gntshare module not loaded (/dev/xen/gntshare: No such file or directory): falling back to gntalloc, one pool per NF domain; packets crossing NF domains of one trust group are copied"
wait_for 60 grep -q "NFs attach from Xen domains" $LOG && grep -qF "$FALLBACK" $LOG
ok=$?
check fallback-core-starts $ok "$(grep -oE '(gntshare module not loaded|grants by) .*' $LOG | cut -c1-140 | tr '\n' ';')"
[ $ok = 0 ] || exit 1
xnv-xl create /domU/nf-a.cfg >/tmp/xl-fa.log 2>&1
xnv-xl create /domU/nf-b.cfg >/tmp/xl-fb.log 2>&1
wait_for 150 attached nf-a.0 && wait_for 150 attached nf-b.0 &&
	[ "$(grep -c 'NF nf-[ab].0 attached.*pool: its own' $LOG)" = 2 ]
check fallback-nfs-attach $? "$(grep -o 'NF nf-[ab].0 attached.*' $LOG | sed 's/ attached from Xen//; s/: packets.*//' | tr '\n' ';')"
A=$(xl domid nf-a)
wait_for 240 port_out_done
ok=$?
snap
[ $ok = 0 ] && [ "$(col nf-a.0 3)" = "$N" ] && [ "$(col nf-b.0 4)" = "$N" ] &&
	[ "$(grp blue 8)" = $((2 * N)) ]
check fallback-chain-copies $? "port out tx $(col out 3)/$N, nf-a.0 rx $(col nf-a.0 3), nf-b.0 tx $(col nf-b.0 4); group blue copied-in $(grp blue 8) (want $((2 * N)): port -> nf-a, nf-a -> nf-b); $(awk '$1 == "pool" { printf "%s %s/%s free; ", $2, $7, $5 }' /tmp/snap)$(grep -o 'gntalloc: .*' /tmp/snap)"

# ---- a limit that bites: one line naming the knobs, nothing leaks ---------
# A second NF device of nf-a's domain, driven through XenStore from here,
# asks to attach while xen-gntalloc's limit is 1 page: refused; with the
# limit back it connects, then closes and its pool is released.
held() { snap; awk '$1 == "gntalloc:" { print $2 }' /tmp/snap; }
answered() { [ "$(xenstore-read $BE1/request-id 2>/dev/null)" = "$1" ] &&
	[ "$(xenstore-read $BE1/state 2>/dev/null)" = "$2" ]; }
LIM=/sys/module/xen_gntalloc/parameters/limit
FE1=/local/domain/$A/device/xnv/1 BE1=/local/domain/0/backend/xnv/$A/1
lim0=$(cat $LIM) h0=$(held)
echo 1 >$LIM
xenstore-write $FE1/backend $BE1 $FE1/backend-id 0 $FE1/name probe \
	$FE1/request-id p1 $FE1/state 3	# name: not the guest's to choose
xenstore-write $BE1/frontend $FE1 $BE1/frontend-id $A $BE1/name nf-a \
	$BE1/service fwd-r $BE1/trust-group red $BE1/state 1
wait_for 20 answered p1 6
r1=$?
e1=$(xenstore-read $BE1/error 2>/dev/null) h1=$(held)
echo $lim0 >$LIM
xenstore-write $FE1/request-id p2 $FE1/state 3
wait_for 20 answered p2 4 && wait_for 10 attached nf-a.1
r2=$?
xenstore-write $FE1/state 6
wait_for 20 grep -q "(xnv-pool-nf-a.1, group red) released" $LOG
r3=$?
xenstore-rm $BE1; xenstore-rm $FE1
h2=$(held)
[ $r1 = 0 ] && echo "$e1" | grep -q 'limit` is 1 page' && echo "$e1" | grep -q gnttab_max_frames &&
	grep -F "attach of NF 'nf-a.1' (Xen domain $A device 1) refused: " $LOG | grep -qF "$e1" && [ "$h1" = "$h0" ] &&
	[ $r2 = 0 ] && [ $r3 = 0 ] && [ "$h2" = "$h0" ] && kill -0 $CORE
check gntalloc-limit-named $? "limit=1: '$(echo "$e1" | cut -c1-240)...'; gntalloc pages held $h0, $h1 after the refusal; limit=$lim0: attached (rc $r2), closed, pool released (rc $r3), held $h2"

# ---- a domain that breaks its ring, on_hostile = pause ---------------------
breaker() {	# breaker WORD: nf-hb writes an impossible ring index; until WORD
	xnv-xl create /domU/nf-hb.cfg >/tmp/xl-hb.log 2>&1
	B=$(xl domid nf-hb)
	wait_for 150 grep -q "Xen domain $B $1" $LOG
}
breaker paused
ok=$?
st=$(xl list nf-hb 2>/dev/null | awk 'NR == 2 { print $5 }')
ev=$(grep -o "Xen domain $B is hostile: quarantined: .*" $LOG | head -1)
[ $ok = 0 ] && echo "$st" | grep -q p && echo "$ev" | grep -q "impossible.*on_hostile = pause"
check hostile-paused $? "xl list state '$st'; '$(echo "$ev" | cut -c1-200)'; $(grep -o "Xen domain $B paused.*" $LOG | cut -c1-100)"
xl destroy nf-hb
wait_for 60 grep -q "Xen domain $B is gone: its quarantine ends" $LOG

# ---- NF domains destroyed: pools released; clean exit; output intact -------
xnv-xl destroy nf-a >/dev/null 2>&1; xnv-xl destroy nf-b >/dev/null 2>&1
released() { [ "$(grep -c 'xnv-pool-nf-[ab].0, group blue) released' $LOG)" = 2 ]; }
wait_for 20 finished nf-a.0 && wait_for 20 finished nf-b.0 && wait_for 20 released
ok=$?
sleep 1; snap
[ $ok = 0 ] && [ "$(grp blue 4)" = "$(grp blue 6)" ] && ! grep -q '^  pool ' /tmp/snap &&
	[ "$(awk '$1 == "gntalloc:" { print $2 }' /tmp/snap)" = 0 ]
check fallback-pools-released $? "blue $(grp blue 6)/$(grp blue 4) free; own pools left: $(grep -c '^  pool ' /tmp/snap); $(grep -o 'gntalloc: .*' /tmp/snap)"
kill -TERM $CORE; wait $CORE; crc=$?
check fallback-core-exits-cleanly $crc "exit $crc; $(grep -o 'drops:.*' $LOG | tail -1 | cut -c1-160)"
cmp=$(xt-pcapcmp /nf/in.pcap /tmp/out-fallback.pcap 2>&1)
check fallback-chain-intact $? "$cmp"

# ---- on_hostile = destroy ----------------------------------------------------
LOG=/tmp/core-destroy.log
xnv-core $MEM -l 0 -- --config /nf/xnv-destroy.ini --backend xen >$LOG 2>&1 &
CORE=$!
wait_for 60 grep -q "NFs attach from Xen domains" $LOG && breaker destroyed &&
	wait_for 30 no_domain nf-hb && wait_for 30 grep -q "Xen domain $B is gone: its quarantine ends" $LOG
ok=$?
ev=$(grep -o "Xen domain $B is hostile: quarantined: .*" $LOG | head -1)
[ $ok = 0 ] && echo "$ev" | grep -q "on_hostile = destroy"
check hostile-destroyed $? "'$(echo "$ev" | cut -c1-160)'; $(grep -o "Xen domain $B destroyed.*" $LOG | cut -c1-100); no domain nf-hb left: $(no_domain nf-hb && echo yes)"
kill -TERM $CORE; wait $CORE

# ---- neither module: the core refuses to start, naming both ---------------
out=$(rmmod xen_gntalloc 2>&1); rc=$?
xnv-core $MEM -l 0 -- --config /nf/xnv-fallback.ini --backend xen >/tmp/core-nomod.log 2>&1
crc=$?
line=$(grep -o 'neither the gntshare module.*' /tmp/core-nomod.log)
[ $rc = 0 ] && [ $crc = 1 ] && echo "$line" | grep -qF '(/dev/xen/gntshare: No such file or directory) nor xen-gntalloc (/dev/xen/gntalloc: No such file or directory)'
check core-refuses-without-grant-modules $? "rmmod xen_gntalloc: exit $rc${out:+ ($out)}; xnv-core exit $crc: '$line'"
exit $RC
