# Sourced by nf-scenario.sh (tests/xen, Dom0): doorbells under Xen, one
# event channel per NF device (gntshare/bell_evtchn.c, xen.h "Doorbells").
# Needs LOG, CORE and xt-lib.sh; nf-a (role nf2: its NF runs twice) and
# nf-b attached and idle.  nf-k (xt-hostile kick) and nf-s (xt-hostile
# sleeper) are created here and boot while the first checks run.  Checks
# doorbell-nf-sleeps-wakes, doorbell-rebind-after-reattach,
# doorbell-kick-flood-counted, doorbell-sleeper-no-stall, doorbells-closed
# (what each proves: tests/xen/README.md).  Port nin is left with the
# chain fwd-c -> nout.
echo "XT: t=$(up)s doorbell phase"
BL_A=$(xl domid nf-a)
BL_ACON=/var/log/xen/console/guest-nf-a.log
BL_KCON=/var/log/xen/console/guest-nf-k.log
BL_SCON=/var/log/xen/console/guest-nf-s.log
xnv-xl create /domU/nf-k.cfg >/tmp/xl-k.log 2>&1 &
xnv-xl create /domU/nf-s.cfg >/tmp/xl-s.log 2>&1 &

# The core's line for the last attach of DOMID's device 0, and its port
bl_conn() { grep -o "domain $1 device 0 connected: .*" $LOG | tail -n 1; }
bl_port() { bl_conn $1 | sed -n 's/.*; doorbell: event channel \([0-9]*\)$/\1/p'; }
# Event channel handles the core holds (one per doorbell end)
bl_fds() { ls -l /proc/$CORE/fd 2>/dev/null | grep -c /dev/xen/evtchn; }
# Attached NFs whose doorbell the core holds (/xnv/nf/info "doorbell")
bl_held() {
	local i n=0
	for i in $(svc_nfs); do
		tel /xnv/nf/info $i | grep -q '"state":"attached".*"doorbell":1' &&
			n=$((n + 1))
	done
	echo $n
}
# Rounds of: port nin stopped (every side idle: NFs and core go to sleep
# on their doorbells), then STEPS for 2 s; nin is left running
bl_rounds() {	# bl_rounds N STEPS
	local i
	for i in $(seq $1); do
		tel /xnv/chain/unset nin >/dev/null 2>&1
		sleep $(scaled 3)
		tel /xnv/chain/set "nin $2" >/dev/null
		sleep $(scaled 2)
	done
}
bl_a_back() { [ -n "$(nf_id fwd-a nf-a.0)" ]; }	# nf-a's NF attached
# The NF's own account when it stopped: "(doorbell: yes, woken N, ...)"
bl_woken() { grep -o 'nf-a\.0: stopped: .*' $BL_ACON | tr -d '\r' | tail -n 1; }

# ---- (a) nf-a sleeps on its event channel, traffic wakes it ----------------
IA=$(nf_id fwd-a nf-a.0) IB=$(nf_id fwd-b nf-b.0)
PA=$(bl_port $BL_A)
k0=$(nf_num $IA bell_kicks) r0=$(nf_num $IA rx)
snap; t0=$(col nout 3)
bl_rounds 3 "fwd-a->fwd-b->nout"
k1=$(nf_num $IA bell_kicks) r1=$(nf_num $IA rx) w1=$(nf_num $IA bell_wakes)
wb=$(nf_num $IB bell_wakes) kb=$(nf_num $IB bell_kicks)
snap; t1=$(col nout 3)
tel /xnv/chain/unset nin >/dev/null 2>&1

echo "XT: t=$(up)s doorbell rounds done"

# ---- (b) the core kicks nf-a out; its NF attaches again ------------------
# Both hostile guests attached first, so that nothing else opens or
# closes a doorbell meanwhile.
wait_for 150 attached nf-k.0 && wait_for 150 attached nf-s.0
bl_ks=$?
echo "XT: t=$(up)s nf-k, nf-s attached (rc $bl_ks)"
nc0=$(grep -c "domain $BL_A device 0 connected: " $LOG) f0=$(bl_fds)
tel /xnv/nf/kick nf-a.0 >/tmp/tel-kick.out
wait_for 60 sh -c "[ \$(grep -c 'domain $BL_A device 0 connected: ' $LOG) -gt $nc0 ]" &&
	wait_for 30 bl_a_back
ra=$?
wait_for 20 sh -c "grep -q 'nf-a\.0: stopped: ' $BL_ACON"
woke=$(bl_woken)
n_woken=$(echo "$woke" | sed -n 's/.*doorbell: yes, woken \([0-9]*\),.*/\1/p')
[ -n "$PA" ] && [ "$(nf_num $IB doorbell)" = 1 ] && [ -n "$(bl_port $(xl domid nf-b))" ] &&
	[ "$k1" -gt "$k0" ] 2>/dev/null && [ "$r1" -gt "$r0" ] && [ "$t1" -gt "$t0" ] &&
	[ "${n_woken:-0}" -gt 0 ]
check doorbell-nf-sleeps-wakes $? "nf-a.0 (NF $IA) on event channel ${PA:-none} of Dom0, nf-b.0 on $(bl_port $(xl domid nf-b)); 3 rounds of 3 s idle, 2 s traffic: nf-a rx $r0 -> $r1, the core kicked it asleep $k0 -> $k1 times, its kicks woke the core $w1 times (nf-b: kicked $kb, woke the core $wb); port nout tx $t0 -> $t1; the NF itself: '$(echo "$woke" | sed 's/.*(doorbell/(doorbell/')'"

IA2=$(nf_id fwd-a nf-a.0) PA2=$(bl_port $BL_A)
ka0=$(nf_num $IA2 bell_kicks)
snap; t2=$(col nout 3)
bl_rounds 2 "fwd-a->fwd-b->nout"
ka1=$(nf_num $IA2 bell_kicks) ra1=$(nf_num $IA2 rx)
snap; t3=$(col nout 3)
tel /xnv/chain/unset nin >/dev/null 2>&1
f1=$(bl_fds)
[ $ra = 0 ] && [ $bl_ks = 0 ] && [ -n "$PA2" ] && [ "$IA2" != "$IA" ] && [ "$(nf_num $IA2 doorbell)" = 1 ] &&
	[ "$ka1" -gt "$ka0" ] 2>/dev/null && [ "$ra1" -gt 0 ] && [ "$t3" -gt "$t2" ] && [ "$f1" = "$f0" ]
check doorbell-rebind-after-reattach $? "$(cut -c1-80 /tmp/tel-kick.out); the NF attached again as NF ${IA2:-none} on event channel ${PA2:-none} (before: NF $IA on $PA); 2 rounds: its rx $ra1, kicked asleep $ka0 -> $ka1, port nout tx $t2 -> $t3; the core's event channel handles $f0 before the kick, $f1 after (nf-k, nf-s attached: rc $bl_ks)"

# ---- (c) a guest that floods the core's event channel, and one that says
# it sleeps and never stops saying it -----------------------------------
echo "XT: t=$(up)s doorbell re-attach done"
BL_K=$(xl domid nf-k) BL_S=$(xl domid nf-s)
IK=$(nf_id fwd-h nf-k.0) IS=$(nf_id fwd-s nf-s.0)
sp0=$(nf_num $IK bell_spurious) mu0=$(nf_num $IK bell_muted)
xenstore-write /local/domain/$BL_K/data/go 1
# nin stopped: the core goes to sleep, and every kick of nf-k wakes it
sleep $(scaled 5)
sp1=$(nf_num $IK bell_spurious) mu1=$(nf_num $IK bell_muted) wk1=$(nf_num $IK bell_wakes)
# then traffic through the sleeper and nf-a while nf-k still floods
ks0=$(nf_num $IS bell_kicks) rs0=$(nf_num $IS rx) ra0=$(nf_num $IA2 rx)
tel /xnv/chain/set "nin fwd-s->fwd-a->nout" >/dev/null
sample_nout 10
ks1=$(nf_num $IS bell_kicks) rs1=$(nf_num $IS rx) cs=$(nf_num $IS bell_capped)
ra1=$(nf_num $IA2 rx) sp2=$(nf_num $IK bell_spurious) mu2=$(nf_num $IK bell_muted)
xenstore-write /local/domain/$BL_S/data/stop 1
wait_for 60 grep -q 'xt-kick: [0-9]* kicks' $BL_KCON
kick=$(grep -o 'xt-kick: [0-9]* kicks.*' $BL_KCON | tr -d '\r' | tail -n 1)
mute=$(grep -o "NF nf-k\.0 kicks the core's doorbell with nothing to send.*" $LOG | head -1)
[ -n "$kick" ] && [ "$sp1" -gt "$sp0" ] 2>/dev/null && kill -0 $CORE
check doorbell-kick-flood-counted $? "${kick:-no result from nf-k}; the core, 5 s idle: spurious wake-ups $sp0 -> $sp1 ($wk1 wakes), muted $mu0 -> $mu1; 10 s of traffic: spurious $sp2, muted $mu2${mute:+; '$(echo "$mute" | cut -c1-110)'}"
wait_for 60 grep -q 'xt-sleeper: rx ' $BL_SCON
slp=$(grep -o 'xt-sleeper: rx .*' $BL_SCON | tr -d '\r' | tail -n 1)
[ "$(grep -c 'xt-sleeper: attached, doorbell bound' $BL_SCON)" = 1 ] && stall_ok &&
	[ "$t" -gt "$first" ] 2>/dev/null && [ "$ra1" -gt "$ra0" ] && [ "$ks1" -gt "$ks0" ] && kill -0 $CORE
check doorbell-sleeper-no-stall $? "nin -> nf-s (sleep word stuck) -> nf-a -> nout while nf-k floods: nout tx $first -> $t in $samples samples (longest stall $STALL_MAX s, at most $(scaled 5)), nf-a rx $ra0 -> $ra1; nf-s rx $rs0 -> $rs1, kicked $ks0 -> $ks1 times, $cs kicks over the cap; '${slp:-no result from nf-s}'"

echo "XT: t=$(up)s doorbell flood and sleeper done"

# ---- nothing left open: one handle per doorbell the core holds -------------
tel /xnv/chain/set "nin fwd-c->nout" >/dev/null
wait_for 60 finished nf-k.0 && wait_for 60 finished nf-s.0
gone=$?
xnv-xl destroy nf-k >/dev/null 2>&1; xnv-xl destroy nf-s >/dev/null 2>&1
f2=$(bl_fds) h2=$(bl_held)
[ $gone = 0 ] && [ "$f2" = "$h2" ]
check doorbells-closed $? "nf-k.0 and nf-s.0 closed (rc $gone); the core holds $f2 event channel handles for $h2 attached NFs with a doorbell"
