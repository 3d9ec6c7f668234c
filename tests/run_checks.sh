#!/usr/bin/env bash
# make check: run every suite (unit, integration, xen, fuzz, san) even when
# one fails, then print one closing line counting tests across all of them:
#   check: N passed, N failed, N skipped
# fuzz counts one test per libFuzzer harness (replay + a short run), san
# the unit and integration tests again, built with ASan + UBSan.
set -uo pipefail

make_cmd=${MAKE:-make}
log=$(mktemp -d)/check
trap 'rm -rf "$(dirname "$log")"' EXIT
rc=0

run() {	# run SUITE: make check-SUITE, keep its output
	echo "=== make check-$1"
	$make_cmd --no-print-directory "check-$1" 2>&1 | tee "$log.$1"
	local r=${PIPESTATUS[0]}
	[ "$r" -eq 0 ] || { echo "=== check-$1 FAILED (exit $r)"; rc=1; }
}

run unit
run integration
run xen
run fuzz
run san

# cmocka: "[  PASSED  ] N test(s)." / "[  FAILED  ] N test(s)"
sum() { grep -hoE "$1" "$log".* 2>/dev/null | grep -oE '[0-9]+' | awk '{s+=$1} END {print s+0}'; }
passed=$(( $(sum '\[  PASSED  \] [0-9]+ test') + 0 ))
failed=$(( $(sum '\[  FAILED  \] [0-9]+ test') + 0 ))
# pytest: "N passed", "N failed", "N skipped", "N error(s)" in its last line
skipped=0
for suite in integration san; do
	py=$(grep -hE '^=+ .*(passed|failed|error|skipped).* in [0-9.]+s' "$log.$suite" | tail -1)
	pnum() { echo "$py" | grep -oE "[0-9]+ $1" | grep -oE '[0-9]+' || echo 0; }
	passed=$((passed + $(pnum passed)))
	failed=$((failed + $(pnum failed) + $(pnum error)))
	skipped=$((skipped + $(pnum skipped)))
done
# fuzz: "FUZZ: N passed, N failed" (one per harness)
fz=$(grep -hE '^FUZZ: [0-9]+ passed, [0-9]+ failed' "$log.fuzz" | tail -1)
if [ -n "$fz" ]; then
	passed=$((passed + $(echo "$fz" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')))
	failed=$((failed + $(echo "$fz" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+')))
fi
# xen: "XEN: N passed, N failed" or "SKIP: ..." per boot (make check-xen
# boots once; a log of several boots, with check-xen-pvh-domu, adds up)
xen=$(grep -hE '^XEN: [0-9]+ passed, [0-9]+ failed' "$log.xen")
if [ -n "$xen" ]; then
	passed=$((passed + $(echo "$xen" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' | awk '{s+=$1} END {print s+0}')))
	failed=$((failed + $(echo "$xen" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+' | awk '{s+=$1} END {print s+0}')))
elif grep -q '^SKIP' "$log.xen"; then
	skipped=$((skipped + 1))
fi
[ "$rc" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1	# a suite died uncounted
# What failed, by name, right above the closing line: a log cut to its
# tail (a CI page) still says which test to look at.
for suite in unit integration xen fuzz san; do
	grep -haE '^\[  FAILED  \] [^0-9]|^(FAILED|ERROR) [^ ]+\.py|^XEN: FAIL - |^== fuzz_[a-z]+: FAILED' \
		"$log.$suite" 2>/dev/null | sort -u | head -n 20 | cut -c1-300 | sed "s/^/check: $suite failed: /"
done
echo "check: $passed passed, $failed failed, $skipped skipped"
exit $rc
