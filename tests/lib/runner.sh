#!/usr/bin/env bash
# Runs every test_* function of one integration script, each in its own
# subshell with a fresh temporary folder and a time limit, and prints
# "PASS <name>" or "FAIL <name>: <why>". With TEST_TIMES=FILE, each test's
# wall time is appended to FILE as "<seconds> <name>" (tests/run.sh prints
# the slowest).
set -u
script=$1
. "$DYNPROF_TESTS/lib/common.sh"
. "$script"

TEST_TIME_LIMIT=${TEST_TIME_LIMIT:-120}

run_one() {
	local name=$1 out rc
	if [ "$(id -u)" != 0 ]; then
		echo "FAIL $name: integration tests need root"
		return
	fi
	out=$(mktemp)
	local start=$EPOCHREALTIME
	(
		T=$(mktemp -d /tmp/dynprof-test.XXXXXX)
		export T
		trap 'cleanup_test' EXIT
		"$name"
	) >"$out" 2>&1 &
	local pid=$!
	# A hung test fails alone: kill it at its time limit. The guard holds
	# none of our output, so a finished test never waits for it.
	{ sleep "$TEST_TIME_LIMIT"; kill -TERM $pid; } </dev/null >/dev/null 2>&1 &
	local guard=$!
	wait $pid; rc=$?
	pkill -P $guard 2>/dev/null; kill $guard 2>/dev/null; wait $guard 2>/dev/null
	[ -n "${TEST_TIMES:-}" ] &&
		awk -v a="$start" -v b="$EPOCHREALTIME" -v n="$name" 'BEGIN { printf "%.1f %s\n", b - a, n }' >> "$TEST_TIMES"
	if [ $rc -eq 0 ]; then
		echo "PASS $name"
	else
		echo "FAIL $name: $(tail -n 1 "$out")"
		sed 's/^/    | /' "$out" | tail -n 40
	fi
	rm -f "$out"
}

for name in $(declare -F | awk '{print $3}' | grep '^test_'); do
	if [ -n "${TESTS:-}" ] && ! [[ $name =~ $TESTS ]]; then continue; fi
	run_one "$name"
done
