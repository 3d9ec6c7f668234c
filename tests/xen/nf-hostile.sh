# Sourced by nf-scenario.sh (Dom0, the gntshare module loaded, the core up,
# nf-a and nf-b attached): a hostile DomU while the blue chain forwards.
# nf-h runs xt-hostile (tests/xen/xt_hostile.c): 100 honest attach/close
# cycles, then the attack: attach, map ring and pool, write its own
# frontend Closed without unmapping, ask again, 100 times.  Meanwhile port
# nin runs through nf-a and nf-b (sampled every second) and a legitimate
# domain (nf-c1) attaches.  Then the quarantine sticks after the attacker
# unmapped, and `/xnv/nf/release` (what `xnv-ctl nf release` sends) ends it.
BUDGET=$(sed -n 's/.*per domain: at most [0-9]* NFs attached or draining and \([0-9]*\) grant frames.*/\1/p' $LOG | head -1)
NEED=$(sed -n 's/.*(an NF takes up to \([0-9]*\)).*/\1/p' $LOG | head -1)
HL=/var/log/xen/console/guest-nf-h.log
dom_col() { awk -v d="$1" -v c="$2" '$1 == "domain" && $2 == d { print $c }' /tmp/snap; }
tel /xnv/chain/set "nin fwd-a->fwd-b->nout" >/tmp/tel-chain.out
echo "XT: t=$(cut -d' ' -f1 /proc/uptime)s hostile DomU phase"
xnv-xl create /domU/nf-h.cfg >/tmp/xl-h.log 2>&1
H=$(xl domid nf-h)

# ---- 100 honest attaches, each right after the last one's Closed ----------
# The guest goes on to the attack at once, and its first attach succeeds:
# the core's log is read up to the 101st attach of nf-h.0, the cycles' part.
cycle_log() {	# "<attaches> <refusals>" of nf-h.0 before the 101st attach
	awk "/NF nf-h\\.0 attached/ { if (++a > 100) exit }
	     /attach of NF 'nf-h\\.0'.* refused/ { r++ }
	     END { print (a > 100 ? 100 : a) + 0, r + 0 }" $LOG
}
wait_for 600 grep -q 'xt-cycle: ' $HL
res=$(grep -o 'xt-cycle: .*' $HL | tr -d '\r')
read cyc_att cyc_ref <<-EOF
	$(cycle_log)
	EOF
[ "$res" = "xt-cycle: 100 attached, 0 refused, 0 unanswered of 100, 100 with a doorbell" ] &&
	[ "$cyc_att" = 100 ] && [ "$cyc_ref" = 0 ]
check attach-after-closed-100 $? "${res:-no result}; core, before the attack: $cyc_att attaches, $cyc_ref refused; $(grep -o 'xt-cycle [0-9]*: .*' $HL | head -2 | tr -d '\r' | tr '\n' ';')"

# ---- the attack, the chain sampled meanwhile --------------------------------
echo "XT: t=$(cut -d' ' -f1 /proc/uptime)s hostile attack"
xnv-xl create /domU/nf-c1.cfg >/tmp/xl-c1.log 2>&1	# a legitimate domain
prev=0 samples=0 maxf=0 end=$(($(date +%s) + $(scaled 600)))
stall_reset
while ! grep -q 'xt-attack: ' $HL && [ "$(date +%s)" -lt $end ]; do
	snap
	t=$(col nout 3) f=$(dom_col $H 6)
	stall_see $t
	prev=${t:-0} samples=$((samples + 1))
	[ "${f:-0}" -gt $maxf ] && maxf=$f
	sleep 1
done
wait_for 150 attached nf-c1.0
c1=$?
res=$(grep -o 'xt-attack: .*' $HL | tr -d '\r')
last=$(grep -o 'xt-attack last refusal: .*' $HL | tr -d '\r')
ev=$(grep -o "Xen domain $H is hostile: asked to attach again while it still maps [0-9]* frames revoked [0-9]* ms ago.*" $LOG | head -1)
[ "$res" = "xt-attack: 1 attached, 99 refused, 0 unanswered of 100, 1 with a doorbell" ] &&
	echo "$last" | grep -q "Xen domain $H is quarantined since [0-9]* s: asked to attach again" &&
	[ -n "$ev" ] && stall_ok && [ $samples -ge 3 ] &&
	[ "$maxf" -gt 0 ] && [ "$maxf" -le "$NEED" ] && [ "$NEED" -le "$BUDGET" ] &&
	[ $c1 = 0 ] && ! grep -qE "attach of NF '(nf-a|nf-b|nf-c1).0'.* refused" $LOG &&
	! grep -qE "NF nf-(a|b).0 \(Xen domain [0-9]* device 0\) detached" $LOG
check hostile-domu-refused $? "${res:-no result}; evidence: '$(echo "$ev" | cut -c1-200)'; last refusal: '$(echo "$last" | cut -c25-160)'; port nin -> nf-a -> nf-b -> nout grew to $prev in $samples samples (longest stall $STALL_MAX s, at most $(scaled 5)); the attacker's grant frames at most $maxf (one NF: $NEED, budget $BUDGET); nf-c1 attached meanwhile (rc $c1)"

# ---- the quarantine sticks once it unmapped; release ends it ---------------
echo "XT: t=$(cut -d' ' -f1 /proc/uptime)s hostile attack done"
wait_for 60 xenstore-read /local/domain/$H/data/unmapped >/dev/null 2>&1
sticky=$(grep -o 'xt-sticky: .*' $HL | tr -d '\r')
snap
echo "$sticky" | grep -q "^xt-sticky: refused: Xen domain $H is quarantined since" &&
	[ "$(dom_col $H 8)" = 0 ] && [ "$(dom_col $H 10)" = 1 ]
check quarantine-sticks $? "after unmapping (busy frames $(dom_col $H 8)): '$(echo "$sticky" | cut -c1-200)'; domain row: $(awk -v d=$H '$1 == "domain" && $2 == d' /tmp/snap)"
rel=$(tel /xnv/nf/release $H); trc=$?
xenstore-write /local/domain/$H/data/released 1
wait_for 60 grep -q 'xt-released: ' $HL
relg=$(grep -o 'xt-released: .*' $HL | tr -d '\r')
[ $trc = 0 ] && echo "$rel" | grep -q '"was"' && [ "$relg" = "xt-released: attached" ] &&
	grep -q "Xen domain $H released by the operator" $LOG
check release-clears-quarantine $? "/xnv/nf/release $H: $(echo "$rel" | cut -c1-200); guest: '$relg'; $(grep -o "Xen domain $H released.*" $LOG | cut -c1-120)"
tel /xnv/chain/set "nin fwd-c->nout" >/dev/null
xnv-xl destroy nf-h >/dev/null 2>&1
