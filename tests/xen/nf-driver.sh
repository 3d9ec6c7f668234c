#!/bin/sh
# A driver domain (tests/xen): xnv-core and the gntshare module in a PV
# DomU ("drv", drv-init.sh), not in Dom0; two NF domains name it with
# nfv_backend = "drv" and attach to it, chain in -> fwd-a -> fwd-b -> out
# as in Dom0.  Run in Dom0 by dom0-init.sh after nf-scenario.sh; Dom0's
# own core is gone by then.  Prints "XT-CHECK ok|FAIL <name>..." lines.
. /usr/bin/xt-lib.sh
echo "XT: t=$(up)s driver domain phase"
xl create -q /domU/drv.cfg
BD=$(xl domid drv 2>/dev/null)
drv() { xenstore-read /local/domain/$BD/data/$1 2>/dev/null; }
has() { [ -n "$(drv $1)" ]; }
console() { tail -n ${1:-20} /var/log/xen/console/guest-drv.log 2>/dev/null | tr '\n' ' ' | cut -c1-1200; }
finish() {	# the checks after a failed one cannot run: tidy up, say so
	echo "XT: driver phase stopped: drv's console: $(console 40)"
	for d in nf-da nf-db drv; do xl destroy $d 2>/dev/null; done
	exit 1
}
wait_for 150 has core
case "$(drv core)" in
"up: running in domain $BD, a driver domain"*)
	check driver-core-starts 0 "dom$BD: $(drv core)" ;;
*)
	check driver-core-starts 1 "dom${BD:-?}: '$(drv core)'"
	finish ;;
esac

# a backend domain that does not exist: refused before anything is made
out=$(xnv-xl create /domU/nf-dnone.cfg 2>&1); rc=$?
echo "$out" | grep -q 'nfv_backend = "nosuch": no domain of that name' && [ $rc = 1 ] &&
	no_domain nf-dnone
check driver-unknown-refused $? "exit $rc, '$out', no domain nf-dnone"

xnv-xl create /domU/nf-da.cfg >/tmp/xl-da.log 2>&1
xnv-xl create /domU/nf-db.cfg >/tmp/xl-db.log 2>&1
A=$(xl domid nf-da 2>/dev/null) B=$(xl domid nf-db 2>/dev/null)
bstate() { xenstore-read /local/domain/$BD/backend/xnv/$1/0/state 2>/dev/null; }
connected() { [ "$(bstate $A)" = 4 ] && [ "$(bstate $B)" = 4 ]; }
wait_for 150 connected
ok=$?
bid=$(xenstore-read /local/domain/$A/device/xnv/0/backend-id 2>/dev/null)
[ $ok = 0 ] && [ "$bid" = "$BD" ]
check driver-nfs-attach $? "nf-da (dom$A) and nf-db (dom$B) under /local/domain/$BD/backend/xnv: states $(bstate $A)/$(bstate $B), backend-id $bid; $(tr '\n' ' ' </tmp/xl-da.log | cut -c1-150)"
[ $RC = 0 ] || finish

wait_for 300 has forwarded
f=$(drv forwarded)
case "$f" in
"out $(cat /nf/count) nf-da.0 "*" copied-in 0") check driver-chain-forwards 0 "$f" ;;
*) check driver-chain-forwards 1 "'$f'" ;;
esac

xnv-xl list >/tmp/list-drv 2>&1
[ "$(awk -v b=$BD '$2 ~ /^nf-d[ab]$/ && $6 == "connected" && $7 == "connected" && $8 == b' /tmp/list-drv | wc -l)" = 2 ]
check driver-xnv-xl-list $? "$(awk 'NR > 1 { printf "%s/%s/%s/backend %s ", $2, $4, $6, $8 }' /tmp/list-drv)"

# a plain xl destroy: the core in the driver domain learns of it by
# @releaseDomain (xnv-xl gave it the right to) and drops the domain's nodes
xl destroy nf-db
gone() { ! xenstore-exists /local/domain/$BD/backend/xnv/$B 2>/dev/null; }
said() { grep -q "domain $B is gone: its xnv devices are released" /var/log/xen/console/guest-drv.log; }
wait_for 60 gone && wait_for 10 said
check driver-sees-domain-destroyed $? "xl destroy nf-db (dom$B): /local/domain/$BD/backend/xnv/$B $(gone && echo removed by the core in drv || echo still there); its log: '$(grep -o "domain $B is gone.*" /var/log/xen/console/guest-drv.log | head -n 1)'"

xnv-xl destroy nf-da >/dev/null 2>&1
wait_for 30 sh -c "! xenstore-exists /local/domain/$BD/backend/xnv/$A"
xenstore-write /local/domain/$BD/data/cmd stop
wait_for 120 has done
d=$(drv done)
# "core exit 0; blue F/T free; pcap 0: ...": every buffer back (F = T)
echo "$d" | grep -q '^core exit 0; blue [0-9]*/[0-9]* free; pcap 0: ' &&
	echo "$d" | awk '{ split($5, f, "/"); exit !(f[1] == f[2]) }'
check driver-core-exits-cleanly $? "'$d'"
xl destroy drv 2>/dev/null
wait_for 30 no_domain drv
exit $RC
