# Sourced by the Dom0 scenarios (tests/xen/nf-scenario.sh,
# bench/xen/tcg/scenario.sh): checks, waiting, the core's counters.
# Needs LOG (xnv-core's log file) and CORE (its pid) for snap.
# Where a scenario's files are: XT_ROOT (unset: the Dom0 initramfs's /;
# real-host/run.sh: its output directory, no blanks in it) holds nf/,
# domU/ and lib/modules/; temporary files go to T ($XT_ROOT/tmp, or /tmp)
R=${XT_ROOT:-}
T=${XT_ROOT:+$XT_ROOT/tmp}
T=${T:-/tmp}
RC=0
check() {	# check NAME STATUS DETAIL
	if [ "$2" = 0 ]; then echo "XT-CHECK ok $1 ($3)"
	else echo "XT-CHECK FAIL $1: $3"; RC=1; fi
}
# Every wait's SECONDS times XT_SCALE (XNV_TIME_SCALE on the host, passed
# as xt_scale= on the Dom0 command line; dom0-init.sh exports it).
scaled() { awk -v s="${XT_SCALE:-1}" -v t="$1" 'BEGIN { printf "%d\n", t * s + 0.999 }'; }
wait_for() {	# wait_for SECONDS CMD...: until CMD succeeds
	local end=$(($(date +%s) + $(scaled $1))); shift
	while ! "$@"; do
		[ "$(date +%s)" -ge $end ] && return 1; sleep 0.1
	done
}
# How long a sampled counter stood still: stall_reset, then stall_see
# VALUE at each sample; STALL_MAX is the longest time (s) it did not grow.
# Under TCG on a busy host the emulator's threads are descheduled now and
# then and the chain pauses a second or so with nothing wrong in Dom0:
# stall_ok passes when no pause was longer than `scaled 5`.
up() { cut -d' ' -f1 /proc/uptime; }
stall_reset() { STALL_V=-1 STALL_T=$(up) STALL_MAX=0; }
stall_see() {
	local now=$(up)
	if [ "${1:-x}" -gt "$STALL_V" ] 2>/dev/null; then
		STALL_V=$1 STALL_T=$now; return
	fi
	STALL_MAX=$(awk -v m=$STALL_MAX -v a=$STALL_T -v b=$now \
		'BEGIN { d = b - a; printf "%.1f", (d > m ? d : m) }')
}
stall_ok() { awk -v m=$STALL_MAX -v ok=$(scaled 5) 'BEGIN { exit !(m <= ok) }'; }
# sample_nout N: N samples of port nout's tx a second apart (snap): the
# first in $first, the last in $t, $samples taken, the longest pause in
# STALL_MAX (stall_ok tells whether it was short enough)
sample_nout() {
	stall_reset
	samples=0 first=""
	while [ $samples -lt $1 ]; do
		snap; t=$(col nout 3)
		stall_see $t
		first=${first:-$t} samples=$((samples + 1))
		sleep 1
	done
}
# Counters now: SIGUSR1 makes the core print its table; keep the newest.
snap() {
	local n=$(grep -c 'xnv-core statistics' $LOG)
	kill -USR1 $CORE
	wait_for 5 test "$(grep -c 'xnv-core statistics' $LOG)" -gt "$n"
	sleep 0.2
	awk -v n=$((n + 1)) '/xnv-core statistics/ { k++ } k == n' $LOG >$T/snap
}
# rows of the table: port rx tx ... / nf service rx tx drop bad reclaimed state
col() { awk -v p="$1" -v c="$2" '$1 == p { print $c }' $T/snap; }
grp() { awk -v g="$1" -v c="$2" '$1 == "group" && $2 == g { print $c }' $T/snap; }
# The core's telemetry (dom0-core/CONTROL.md) through xt-ctl, Dom0 having
# no Python for xnv-ctl: tel CMD [PARAM] prints the JSON reply
tel() {
	local rt=$(grep -o 'EAL runtime directory [^ ]*' $LOG | head -1 | cut -d' ' -f4)
	xt-ctl "$rt/dpdk_telemetry.v2" "$1${2:+,$2}"
}
# Number KEY of the JSON reply on stdin, its first one (an NF's own
# counters come later, under "stats"): ... | jnum KEY
jnum() { grep -o "[{,]\"$1\":[0-9]*" | head -n 1 | sed 's/.*://'; }
# The numbers of the first JSON array on stdin, blank-separated
jlist() { sed -n 's/[^[]*\[\([0-9,]*\)\].*/\1/p' | tr ',' ' '; }
# Ids of the NFs attached as instances of service SVC (every service's
# with no SVC): /xnv/service/info, a few services, where /xnv/nf/list
# also holds every departed NF still on record
svc_nfs() {
	local i
	for i in $(tel /xnv/service/list | jlist); do
		tel /xnv/service/info $i | grep "\"name\":\"${1:-[^\"]*}\"" |
			sed 's/.*"instances":\(\[[0-9,]*\]\).*/\1/' | jlist
	done
}
# The id of the attached NF NAME, an instance of SVC: nf_id SVC NAME
nf_id() {
	local i
	for i in $(svc_nfs $1); do
		tel /xnv/nf/info $i | grep -q "\"name\":\"$2\"" && { echo $i; return; }
	done
}
nf_num() { tel /xnv/nf/info "$1" | jnum "$2"; }	# nf_num ID KEY
attached() { grep -q "NF $1 attached" $LOG; }
finished() { grep -q "NF $1 (Xen domain [0-9]* device [0-9]*) detached" $LOG; }
no_domain() { ! xl list 2>/dev/null | grep -q "^$1 "; }
