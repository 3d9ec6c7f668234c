# Sourced by nf-scenario.sh (tests/xen) after blue-domus-zero-copy, with
# nf-a (fwd-a) and nf-b (fwd-b) attached; uses its LOG, xt-lib.sh, and
# the core's control socket through xt-ctl (Dom0 has no Python).
# Check state-flood-rate-limited (what it proves: tests/xen/README.md): a
# DomU registered with xnv-xl (nf-fl, role flood) first spins its vCPU,
# then rewrites its own frontend state node FL_COUNT times.  Traffic
# null -> nf-a -> nf-b -> null is measured at port nout in both phases
# (TCG: the rates are shown, not judged); the core must act on at most
# GNTS_XEN_EVENT_RATE events of that domain a second (plus the burst),
# log at most about a line a second about it, never attach or refuse the
# device, and keep forwarding.
FL_RATE=10 FL_BURST=64	# GNTS_XEN_EVENT_RATE, _BURST (gntshare xen.h)
FL_COUNT=10000		# the guest's writes (domU-init.sh, role flood)
FL_WIN=5		# seconds of each measuring window, a sample a second
FL_CON=/var/log/xen/console/guest-nf-fl.log
FL_TELE=$(ls /var/run/dpdk/xnv-*/dpdk_telemetry.v2 2>/dev/null | head -1)
FL_WHY=""

fl_up() { up; }
fl_say() { FL_WHY="$FL_WHY${FL_WHY:+; }$*"; }
fl_guest() { grep -q "xt-flood: $1" $FL_CON 2>/dev/null; }
fl_ctl() { xt-ctl "$FL_TELE" "$1" 2>/tmp/fl-ctl.err; }
fl_chain() {	# fl_chain STEPS: port nin's chain
	fl_ctl "/xnv/chain/set,nin $1" >/dev/null ||
		fl_say "chain of nin not set to '$1': $(cat /tmp/fl-ctl.err)"
}
# Number KEY of the reply to CMD: fl_num CMD KEY
fl_num() { fl_ctl "$1" | jnum "$2"; }
fl_tx() { fl_num "/xnv/port/info,$FL_NOUT" tx; }
fl_nout_moves() { [ "$(fl_tx)" -gt 0 ] 2>/dev/null; }
# Port nout's tx over FL_WIN seconds, a sample a second: prints
# "<packets/s> <longest stall, s> <tx,tx,...>"
fl_sample() {
	local t0 t x0 x list=""
	t0=$(fl_up); x0=$(fl_tx); t=$t0; stall_reset; stall_see $x0
	while awk -v a="$t0" -v b="$t" -v w=$FL_WIN 'BEGIN { exit !(b - a < w) }'; do
		sleep 1; x=$(fl_tx); t=$(fl_up); stall_see $x
		list="$list${list:+,}$x"
	done
	awk -v a="$x0" -v b="$x" -v s="$t0" -v e="$t" -v g=$STALL_MAX -v l="$list" \
		'BEGIN { printf "%.0f %s %s\n", (b - a) / (e - s), g, l }'
}
# fl_xs_ms MAX: the larger of MAX and the ms one xenstore-read takes now
fl_xs_ms() {
	local a=$(fl_up)
	xenstore-read /local/domain/0/backend/xnv/$FL/0/state >/dev/null 2>&1
	awk -v a=$a -v b="$(fl_up)" -v m=$1 'BEGIN { t = (b - a) * 1000; printf "%d", (t > m ? t : m) }'
}
# The core has read every event the flood queued: none for a second.
fl_settled() {
	local e=$(fl_num /xnv/control events)
	[ "$e" = "$FL_EV_LAST" ] && return 0
	FL_EV_LAST=$e; sleep 1; return 1
}

FL_START=$(fl_up)
echo "XT: t=${FL_START}s state flood phase"
for FL_I in 0 1 2 3 4 5 6 7; do
	fl_ctl "/xnv/port/info,$FL_I" | grep -q '"name":"nout"' && FL_NOUT=$FL_I && break
done
fl_chain 'fwd-a->fwd-b->nout'
wait_for 30 fl_nout_moves || fl_say "no traffic at port nout"
xnv-xl create /domU/nf-fl.cfg >/tmp/xl-fl.log 2>&1 ||
	fl_say "xnv-xl create nf-fl: $(tail -n 1 /tmp/xl-fl.log)"
FL=$(xl domid nf-fl 2>/dev/null)
wait_for 150 fl_guest "spin start" || fl_say "the guest never started spinning"
FL_BOOT=$(fl_up)
read FL_SPIN FL_SPIN_STALL FL_SPIN_TX <<-EOF
	$(fl_sample)
	EOF
FL_T0=$(fl_up) FL_EV0=$(fl_num /xnv/control events) FL_DEF0=$(fl_num /xnv/control events_deferred)
FL_XS_SPIN=$(fl_xs_ms 0)
! fl_guest "spin done" || fl_say "the spin ended before its window did"
wait_for 60 fl_guest "flood start" || fl_say "the flood never started"
read FL_FLOOD FL_FLOOD_STALL FL_FLOOD_TX <<-EOF
	$(fl_sample)
	EOF
! fl_guest "flood done" || fl_say "the flood ended before its window did"
# Then on until the flood ends: port nout never stands still long
# (stall_ok; the samples that did not move are named).  How long one
# xenstore-read takes meanwhile is shown (a process: its exec is in it
# too): the flood keeps xenstored busy, which the data path must not feel.
FL_N=0 FL_STALLED="" FL_XS=0 FL_PREV=$(fl_tx) FL_END=$(($(date +%s) + $(scaled 300)))
stall_reset; stall_see $FL_PREV
while ! fl_guest "flood done" && [ "$(date +%s)" -lt $FL_END ]; do
	sleep 1; FL_X=$(fl_tx); FL_N=$((FL_N + 1)); stall_see $FL_X
	[ "$FL_X" -gt "$FL_PREV" ] 2>/dev/null ||
		FL_STALLED="$FL_STALLED $(fl_up)s:$FL_PREV->${FL_X:-?}"
	FL_PREV=$FL_X FL_XS=$(fl_xs_ms $FL_XS)
done
STALL_MAX=$(awk -v a=$STALL_MAX -v b=$FL_FLOOD_STALL 'BEGIN { print (a > b ? a : b) }')
fl_guest "flood done" || fl_say "the flood did not end"
FL_DONE=$(grep -o 'xt-flood: flood done: .*' $FL_CON | tr -d '\r')
FL_EV_LAST=""
wait_for 60 fl_settled || fl_say "the core still reads events"
FL_T1=$(fl_up) FL_EV1=$(fl_num /xnv/control events) FL_DEF1=$(fl_num /xnv/control events_deferred)

FL_ACTED=$(( (FL_EV1 - FL_EV0) - (FL_DEF1 - FL_DEF0) ))
FL_S=$(awk -v s=$FL_T0 -v e=$FL_T1 'BEGIN { printf "%.1f", e - s }')
FL_MAX=$(awk -v r=$FL_RATE -v b=$FL_BURST -v s=$FL_T0 -v e=$FL_T1 'BEGIN { printf "%d", r * (e - s) + b }')
FL_LINES=$(grep -c "Xen domain $FL: .* xnv state changes in" $LOG)
FL_LMAX=$(awk -v s=$FL_T0 -v e=$FL_T1 'BEGIN { printf "%d", e - s + 2 }')
FL_BE=$(xenstore-read /local/domain/0/backend/xnv/$FL/0/state 2>/dev/null)
echo "$FL_DONE" | grep -q "flood done: $FL_COUNT of $FL_COUNT writes" ||
	fl_say "the guest's writes: '${FL_DONE:-none}'"
[ "$FL_DEF1" -gt "$FL_DEF0" ] 2>/dev/null || fl_say "events_deferred did not grow"
[ "$FL_ACTED" -le "$FL_MAX" ] 2>/dev/null || fl_say "$FL_ACTED events acted on, over $FL_MAX"
[ "$FL_LINES" -ge 1 ] && [ "$FL_LINES" -le "$FL_LMAX" ] ||
	fl_say "$FL_LINES log lines about dom$FL in $FL_S s"
! grep -qE "NF nf-fl\.0 attached|attach of NF 'nf-fl\.0'|domain $FL device 0: " $LOG ||
	fl_say "nf-fl attached or refused: $(grep -E "nf-fl|domain $FL device" $LOG | tail -n 1)"
[ "$FL_BE" = 2 ] || fl_say "backend state of dom$FL is '$FL_BE', not 2 (InitWait)"
stall_ok ||
	fl_say "port nout stood still $STALL_MAX s during the flood, over $(scaled 5) (window tx $FL_FLOOD_TX; later at$FL_STALLED)"
FL_RATIO=$(awk -v f="$FL_FLOOD" -v s="$FL_SPIN" 'BEGIN { printf "%.2f", (s > 0 ? f / s : 0) }')
fl_chain 'fwd-c->nout'	# back as the checks after this one expect it
check state-flood-rate-limited "$([ -z "$FL_WHY" ]; echo $?)" "${FL_WHY:+$FL_WHY; }dom$FL ${FL_DONE#xt-flood: }; core: $((FL_EV1 - FL_EV0)) events, $((FL_DEF1 - FL_DEF0)) deferred, $FL_ACTED acted on at once (at most $FL_MAX in $FL_S s), $FL_LINES log lines, the last '$(grep -o "Xen domain $FL: .*" $LOG | tail -n 1)'; port nout tx/s while the guest spins $FL_SPIN (samples $FL_SPIN_TX), while it floods $FL_FLOOD ($FL_FLOOD_TX, then $FL_N more samples; longest stall $STALL_MAX s, while it spun $FL_SPIN_STALL s${FL_STALLED:+; no growth at$FL_STALLED}): flood/spin $FL_RATIO (TCG: not judged); xenstore-read took $FL_XS_SPIN ms while it spun, up to $FL_XS ms while it flooded; guest up $(awk -v a=$FL_START -v b=$FL_BOOT 'BEGIN { printf "%.0f", b - a }') s after create"
xnv-xl destroy nf-fl >/dev/null 2>&1
wait_for 60 no_domain nf-fl || echo "XT: nf-fl not destroyed"
