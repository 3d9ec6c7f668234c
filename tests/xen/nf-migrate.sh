#!/bin/sh
# Save, restore and migration of an NF domain (tests/xen): xnv-core in
# Dom0 (the gntshare module loaded again if the fallback phase unloaded
# it), chain nin -> fwd-a (nf-a) -> fwd-b ($M) -> nout, nin paced.
#   nf-migrate.sh pv    $M = nf-m, PV: plain xl save + restore, xnv-xl
#                       save + restore, register, save -c, and a migration
#                       Debian's Xen refuses for any PV domain
#   nf-migrate.sh pvh   $M = nf-mp, PVH (QEMU's CPU with AMD-V and nested
#                       paging: XT_ONLY=pvh): migrated to localhost, and
#                       through an "ssh" (xt-ssh: runs the command here,
#                       as ssh would run it there)
# while nin keeps sending.  Run in Dom0 by dom0-init.sh after nf-driver.sh
# (pv), or after nf-pvh.sh (pvh).  Prints "XT-CHECK ok|FAIL <name>..." lines.
KIND=${1:-pv}
M=nf-m
[ "$KIND" = pvh ] && M=nf-mp
. xt-lib.sh
echo "XT: t=$(up)s save/restore/migrate phase ($KIND: $M)"
LOG=$T/core-migrate.log
[ -e /dev/xen/gntshare ] || insmod $R/lib/modules/gntshare.ko
lsmod | grep -q '^xen_gntalloc' || insmod $R/lib/modules/xen-gntalloc.ko limit=4096
xnv-core --no-huge -m 128 -l 0 -- --config $R/nf/xnv-migrate.ini --backend xen >$LOG 2>&1 &
CORE=$!
finish() {	# what follows a failed step cannot run: tidy up, say so
	echo "XT: migrate phase stopped: $1"
	for d in nf-a $M; do xl destroy $d 2>/dev/null; done
	kill -TERM $CORE; wait $CORE
	exit 1
}
wait_for 60 grep -q "NFs attach from Xen domains" $LOG || finish "core did not start"
# one domain boots at a time: under TCG with emulated AMD-V a PVH guest
# booting beside another guest's boot triple-faulted in two runs of two
# (Xen's "d4v0 Triple fault", then xl restarted it as a new domain, which
# has no NF devices); booted alone it never did (run.log.txt has Xen's log)
xnv-xl create $R/domU/$M.cfg >/dev/null 2>&1
wait_for 150 attached $M.0
mok=$?
xnv-xl create $R/domU/nf-a.cfg >/dev/null 2>&1
# the attached NF's row (a departed one of the same name stays listed)
live() { awk -v p="$1" -v c="$2" '$1 == p && $NF == "attached" { print $c }' $T/snap; }
lost() { awk '$1 == "core" && $2 == "drops:" { for (i = 3; i < NF; i += 2) if ($i == "no_instance") print $(i + 1) }' $T/snap; }
flows() { snap; [ "$(col nout 3)" -gt "${1:-0}" ] 2>/dev/null; }
[ $mok = 0 ] && wait_for 150 attached nf-a.0 && wait_for 60 flows
[ $? = 0 ] || finish "nf-a and $M did not attach, or nin -> nf-a -> $M -> nout did not flow: $(tail -n 3 $LOG | tr '\n' ' '); $M's console: $(tail -n 4 /var/log/xen/console/guest-$M.log | tr '\n' ' ')"
CON=/var/log/xen/console/guest-$M.log

# away VERB CHECK WANT CMD...: run CMD (an xnv-xl save, restore,
# migrate...) while sampling nf-a, wait for $M's NF to attach again, and
# see what was lost while it was away and that nothing is lost after.
# WANT: new (CMD succeeds, $M is a new domain), same (CMD succeeds, the
# same domain runs on: save -c), refused (CMD fails, exit 1, the same
# domain runs on and its NF attaches again).
away() {
	local verb=$1 what=$2 want=$3 n0 m0 m1 t0 t1 rc a0 l0 l1 l2 o1 d0 d1 sv ok
	shift 3
	d0=$(xl domid $M 2>/dev/null)
	# the core's line once it published its answer (after "attached")
	n0=$(grep -c "device 0 connected: $M.0," $LOG)
	m0=$(grep -c "NF $M.0 attached from" $LOG)
	snap; a0=$(live nf-a.0 3) l0=$(lost)
	t0=$(up)
	"$@" >$T/mig.out 2>&1; rc=$?
	[ $rc = 0 ] || grep -avE '^xc: (progress|info)' $T/mig.out | tail -n 12 | sed "s/^/XT: $what: /"
	stall_reset
	again() { snap; stall_see "$(live nf-a.0 3)"; [ "$(grep -c "device 0 connected: $M.0," $LOG)" -gt $n0 ]; }
	wait_for 300 again
	# counted from a table taken after the attach: what came before it
	t1=$(up); snap; l1=$(lost); o1=$(col nout 3)
	d1=$(xl domid $M 2>/dev/null)
	wait_for 60 flows $o1
	sleep 2; snap; l2=$(lost)
	# once: a request that went astray across the save is asked again
	m1=$(( $(grep -c "NF $M.0 attached from" $LOG) - m0 ))
	sv=$(grep -o "NF $M.0 (Xen domain $d0 device 0) detached: [^;]*" $LOG | tail -n 1)
	case $want in
	new) [ $rc = 0 ] && [ -n "$d1" ] && [ "$d1" != "$d0" ] ;;
	same) [ $rc = 0 ] && [ "$d1" = "$d0" ] ;;
	refused) [ $rc = 1 ] && [ "$d1" = "$d0" ] && grep -q "its NFs attach again" $T/mig.out ;;
	esac
	ok=$?
	# nin's rate is 2000/s: what was lost is bounded by the time away
	[ $ok = 0 ] && [ "$(live nf-a.0 3)" -gt "$a0" ] && stall_ok &&
		echo "$sv" | grep -q "its domain is being $verb" &&
		[ "$l1" -gt "$l0" ] && [ "$l2" = "$l1" ] && [ "$(live $M.0 3)" -gt 0 ] &&
		[ $m1 = 1 ] &&
		awk -v l=$((l1 - l0)) -v a="$t0" -v b="$t1" 'BEGIN { exit !(l <= 2000 * (b - a + 2) + 512) }' &&
		kill -0 $CORE && ! grep -q "xnv-forwarder exited" $CON
	ok=$?
	[ $ok = 0 ] || grep -a "$M\|no_instance" $LOG | grep -v '^ ' | tail -n 6 | sed "s/^/XT: $what: core: /"
	check "$what" $ok "$( (grep -a 'xc: error' $T/mig.out | head -n 1; tail -n 1 $T/mig.out) | tr '\n' ' ' | cut -c1-220)(exit $rc); dom$d0 -> dom${d1:-?}; '$(echo "$sv" | cut -c1-110)'; away $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s, $((l1 - l0)) packets dropped for lack of an instance meanwhile, $((l2 - l1)) after; attached $m1 time(s); nf-a rx $a0 -> $(live nf-a.0 3) (longest pause ${STALL_MAX} s); $M rx since $(live $M.0 3); the NF process went on: $(grep -c 'waiting for the domain to run again' $CON) waits, $(grep -c 'xnv-forwarder exited' $CON) exits"
}

# saved (the image and FILE.nfv there, the domain gone), away 2 s, restored
save_restore() {
	xnv-xl save --timeout "$(scaled 60)" $M $T/$M.save >$T/save.out 2>&1
	SAVED=$?
	[ $SAVED = 0 ] && [ -s $T/$M.save ] && no_domain $M &&
		grep -q 'nfv_service = "fwd-b"' $T/$M.save.nfv || { SAVED=1; return 1; }
	sleep 2
	xnv-xl restore --timeout "$(scaled 60)" $T/$M.save
}

if [ "$KIND" = pv ]; then
# ---- plain xl save / restore: what xl alone does to an NF domain ------------
# xl saves it with its NF attached (the image holds the NF's mappings of
# Dom0's pages); the core sees the domain die and takes its buffers back;
# xl restore makes a domain without NF devices, which the core never sees.
d0=$(xl domid $M)
n0=$(grep -c "NF $M.0 attached" $LOG)
out=$(xl save $M $T/plain.save 2>&1); rc=$?
wait_for 60 finished $M.0
fin=$?
out2=$(xl restore $T/plain.save 2>&1); rc2=$?
d1=$(xl domid $M 2>/dev/null)
sleep "$(scaled 10)"
devs=$(xenstore-list /local/domain/0/backend/xnv/$d1 2>/dev/null | wc -l)
fe=$(xenstore-list /local/domain/$d1/device/xnv 2>/dev/null | wc -l)
[ $rc = 0 ] && [ $fin = 0 ] && [ $rc2 = 0 ] && [ -n "$d1" ] && [ "$devs" = 0 ] && [ "$fe" = 0 ] &&
	[ "$(grep -c "NF $M.0 attached" $LOG)" = "$n0" ]
check plain-xl-save-restore-loses-devices $? "xl save exit $rc, then '$(grep -o "NF $M.0 (Xen domain $d0 device 0) detached: [^;]*" $LOG | cut -c1-110)'; xl restore exit $rc2: dom$d0 -> dom${d1:-?} with $devs backend and $fe frontend xnv devices, never attached again; in it then: '$(grep -aE 'BUG|Oops|fault|panic|xnv-forwarder|$M' $CON | tail -n 3 | tr '\n' ' ' | cut -c1-300)'"
xl destroy $M 2>/dev/null
rm -f $T/plain.save
wait_for 30 no_domain $M
xnv-xl create $R/domU/$M.cfg >/dev/null 2>&1
wait_for 150 sh -c "[ \$(grep -c 'NF $M.0 attached' $LOG) -gt $n0 ]" && wait_for 60 flows "$(col nout 3)" ||
	finish "$M did not attach again after xnv-xl create"

# ---- xnv-xl save, xnv-xl restore ------------------------------------------
away saved save-restore-reattaches new save_restore
check save-lets-go $SAVED "$(grep -v '^xc: ' $T/save.out | tr '\n' ' ' | cut -c1-200); $(grep -o "NF $M.0 (Xen domain [0-9]* device 0) detached.*" $LOG | tail -n 1 | cut -c1-160)"

# ---- what migrate runs at the receiving end: register a paused domain -------
# the image restored paused by plain xl, then `xnv-xl register` through a
# stand-in for ssh (the command line migrate sends to another host)
save_register() {
	xnv-xl save --timeout "$(scaled 60)" $M $T/$M.save >/dev/null &&
		xl restore -p $T/$M.save &&
		xt-ssh xt-other-host "xnv-xl register --timeout $(scaled 60) $M" \
			"'nfv_trust_group=blue' 'nfv_service=fwd-b' 'nfv_instances=1'"
}
away saved register-paused-domain new save_register
rm -f $T/$M.save $T/$M.save.nfv

# ---- save -c: the domain runs on, its NFs attach again ---------------------
away saved save-checkpoint-nfs-return same xnv-xl save --timeout "$(scaled 60)" -c $M $T/$M.save
rm -f $T/$M.save $T/$M.save.nfv

# ---- a save that begins as the NF asks to attach: it asks again -------------
# The window forced: $M's NF let go for a save (its backend's suspend node
# written, as xnv-xl save writes it), the core frozen (SIGSTOP) while the
# node goes and the NF writes its request, the node back before the core
# thaws: the core refuses the request ("being saved or migrated").  The
# NF, seeing the save, waits and attaches once the node is gone; its
# process goes on (it used to take the refusal as final and exit).
d0=$(xl domid $M); BE=/local/domain/0/backend/xnv/$d0/0; FE=/local/domain/$d0/device/xnv/0
m0=$(grep -c "NF $M.0 attached from" $LOG)
r0=$(grep -c "domain $d0 device 0: the domain is being saved or migrated" $LOG)
f0=$(grep -c "NF $M.0 (Xen domain $d0 device 0) detached: its domain is being saved" $LOG)
x0=$(grep -c "xnv-forwarder exited" $CON)
let_go() { [ "$(grep -c "NF $M.0 (Xen domain $d0 device 0) detached: its domain is being saved" $LOG)" -gt $f0 ]; }
asked() { [ "$(xenstore-read $FE/request-id 2>/dev/null)" != "$1" ] && [ "$(xenstore-read $FE/state 2>/dev/null)" = 3 ]; }
refused() { [ "$(grep -c "domain $d0 device 0: the domain is being saved or migrated" $LOG)" -gt $r0 ]; }
back() { [ "$(grep -c "NF $M.0 attached from" $LOG)" -gt $m0 ]; }
xenstore-write $BE/suspend save && wait_for 30 let_go
w1=$?
rid=$(xenstore-read $FE/request-id 2>/dev/null)
kill -STOP $CORE
xenstore-rm $BE/suspend
wait_for 30 asked "$rid"
w2=$?
xenstore-write $BE/suspend save
kill -CONT $CORE
wait_for 30 refused
w3=$?
sleep 1
xenstore-rm $BE/suspend
snap; o0=$(col nout 3)
wait_for 60 back && wait_for 60 flows "$o0"
w4=$?
[ $w1 = 0 ] && [ $w2 = 0 ] && [ $w3 = 0 ] && [ $w4 = 0 ] && [ "$(grep -c "xnv-forwarder exited" $CON)" = "$x0" ]
check attach-refused-by-a-save-asks-again $? "let go $w1, request written while the core was stopped $w2, refused $w3 ('$(grep -a -m1 "domain $d0 device 0: the domain is being saved or migrated" $LOG | cut -c1-100)'), attached again and flowing $w4; $M's console: '$(grep -a "$M\|saved or migrated\|exited" $CON | tail -n 2 | tr '\n' ' ' | cut -c1-220)'"

# ---- migrate: this Xen cannot live-migrate a PV domain ------------------------
# Debian's hypervisor is built without shadow paging (CONFIG_SHADOW_PAGING),
# which a PV domain's log-dirty mode needs: xl migrate fails for any PV
# domain, guest1 (no NF) too; xnv-xl says so and the NFs attach again.
xl create -q $R/domU/guest1.cfg
wait_for 120 sh -c "xenstore-read /local/domain/\$(xl domid guest1)/data/ready >/dev/null 2>&1"
out=$(xl migrate -s "" guest1 "xl migrate-receive" 2>&1); grc=$?
xl destroy guest1 2>/dev/null
echo "$out" | grep -avE '^xc: (progress|info)' | tail -n 8 | sed 's/^/XT: plain PV guest1: /'
away migrated migrate-refused-nfs-return refused xnv-xl migrate --timeout "$(scaled 60)" $M localhost
[ $grc != 0 ] && echo "$out" | grep -q 'Failed to enable logdirty' && grep -q 'Failed to enable logdirty' $T/mig.out
check migrate-fails-as-for-any-pv-domain $? "plain xl migrate of guest1 (no NF): exit $grc, '$(echo "$out" | grep -a -m1 logdirty | cut -c1-100)'; xnv-xl migrate of $M: '$(grep -a -m1 logdirty $T/mig.out | cut -c1-100)'; $(xl info 2>/dev/null | grep -m1 xen_version | tr -s ' ')"

# ---- to another host: xnv-xl's whole migrate, xl's transfer stood in for ----
# let go, `xl migrate -p -s xt-ssh nf-m xt-other-host` (xt-xl: a save
# and a paused restore in this Dom0, which this Xen can do for PV), then
# xnv-xl register at the "other host" through the -s transport (xt-ssh)
away migrated migrate-via-ssh-stood-in new env XNV_XL=xt-xl xnv-xl migrate \
	--timeout "$(scaled 60)" -s xt-ssh $M xt-other-host
else
# ---- a PVH domain saved and restored, then migrated (HAP's log-dirty) -------
away saved save-restore-pvh new save_restore
rm -f $T/$M.save $T/$M.save.nfv
# live migration of a PVH guest: only with XT_PVH_MIGRATE=1 (README)
[ "${XT_PVH_MIGRATE:-0}" = 1 ] &&
	away migrated migrate-pvh-localhost new xnv-xl migrate --timeout "$(scaled 60)" $M localhost
fi

# ---- pools full once the domains are gone, clean exit ------------------------
POOLS=migrate-pools-full
[ "$KIND" = pvh ] && POOLS=migrate-pvh-pools-full
xnv-xl destroy $M >/dev/null 2>&1; xnv-xl destroy nf-a >/dev/null 2>&1
home() { snap; [ "$(grp blue 4)" = "$(grp blue 6)" ]; }
wait_for 60 home
ok=$?
kill -TERM $CORE; wait $CORE; crc=$?
[ $ok = 0 ] && [ $crc = 0 ]
check "$POOLS" $? "blue $(grp blue 6)/$(grp blue 4) free after $M's departures ($(grep -c "NF $M.0 (Xen domain [0-9]* device 0) detached" $LOG) detach lines, $(grep -o 'buffers reclaimed' $LOG | wc -l) reclaims); core exit $crc; $(grep -o 'drops:.*' $LOG | tail -1 | cut -c1-120)"
exit $RC
