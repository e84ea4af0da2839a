#!/usr/bin/env bash
# Runs every test_* function of one integration script, each in its own
# subshell with a fresh temporary folder and a time limit, and prints
# "PASS <name>" or "FAIL <name>: <why>". The why is the test's own reason:
# the message of the last fail() it called, else the last command that
# returned non-zero (with its status), else "timed out after N s"; never
# merely the last line of its output (often dynprof's summary). With
# TEST_TIMES=FILE, each test's wall time is appended to FILE as
# "<seconds> <name>" (tests/run.sh prints the slowest).
set -u
# A suite started with SIGHUP ignored (nohup, a CI step, a session's
# background job) hands that on to every process a test starts, and bash
# cannot give an ignored signal back its default: a target that must die of
# SIGHUP lives on (agent.sh's signal test hung to its time limit). The
# runner runs again with the signals tests send at their defaults, as a
# terminal's shell would have them.
if [ -z "${DYNPROF_RUNNER_SIGNALS:-}" ]; then
	DYNPROF_RUNNER_SIGNALS=default exec env --default-signal=HUP,TERM,PIPE bash "$0" "$@"
fi
script=$1
. "$DYNPROF_TESTS/lib/common.sh"
. "$script"

# fail() as common.sh has it, also keeping the message for the FAIL line
# (a fail() in a $(...) subshell too: its message may be the only reason).
fail() {
	echo "$*" >&2
	[ -n "${DYNPROF_WHY:-}" ] && printf '%s\n' "$*" > "$DYNPROF_WHY/fail_reason"
	exit 1
}

TEST_TIME_LIMIT=${TEST_TIME_LIMIT:-120}

run_one() {
	local name=$1 out rc why
	if [ "$(id -u)" != 0 ]; then
		echo "FAIL $name: integration tests need root"
		return
	fi
	out=$(mktemp)
	local start=$EPOCHREALTIME
	why=$(mktemp -d) # the reasons, outside $T (cleanup_test removes $T)
	(
		T=$(mktemp -d /tmp/dynprof-test.XXXXXX)
		export T DYNPROF_WHY=$why
		trap '__s=$?; trap - ERR; (exit $__s); cleanup_test' EXIT
		# The last command that failed outside a condition, for a test that
		# ends without a fail() (errtrace: in its functions and subshells too).
		set -E
		trap 'on_error $?' ERR
		"$name"
	) >"$out" 2>&1 &
	local pid=$!
	# A hung test fails alone: kill it at its time limit. The guard holds
	# none of our output, so a finished test never waits for it. Only a
	# sleep that ran its course marks the time out: the pkill below ends the
	# sleep of a test that finished, and the guard must then do nothing.
	{ sleep "$TEST_TIME_LIMIT" && touch "$why/timed_out" && kill -TERM $pid; } </dev/null >/dev/null 2>&1 &
	local guard=$!
	wait $pid; rc=$?
	pkill -P $guard 2>/dev/null; kill $guard 2>/dev/null; wait $guard 2>/dev/null
	[ -n "${TEST_TIMES:-}" ] &&
		awk -v a="$start" -v b="$EPOCHREALTIME" -v n="$name" 'BEGIN { printf "%.1f %s\n", b - a, n }' >> "$TEST_TIMES"
	if [ $rc -eq 0 ]; then
		echo "PASS $name"
	else
		echo "FAIL $name: $(fail_reason "$why" "$out" $rc)"
		sed 's/^/    | /' "$out" | tail -n 40
	fi
	rm -rf "$out" "$why"
}

# The ERR trap: keeps the command that failed, not the calls of functions
# that only passed a failure up (they fire the trap too, outermost last).
on_error() {
	local first=${BASH_COMMAND%% *}
	[ "$BASH_COMMAND" = '"$name"' ] && return 0
	declare -F -- "$first" > /dev/null 2>&1 && return 0
	printf '%s (status %d)\n' "$BASH_COMMAND" "$1" > "$DYNPROF_WHY/last_error"
}

# fail_reason DIR OUT RC: why the test failed, in words.
fail_reason() {
	if [ -e "$1/timed_out" ]; then
		echo "timed out after $TEST_TIME_LIMIT s (the test's time limit)"
	elif [ -s "$1/fail_reason" ]; then
		head -c 400 "$1/fail_reason" | head -n 1
	elif [ -s "$1/last_error" ]; then
		echo "ended with status $3; the last command that failed: $(head -c 300 "$1/last_error" | head -n 1)"
	else
		echo "ended with status $3; its last line: $(tail -n 1 "$2")"
	fi
}

for name in $(declare -F | awk '{print $3}' | grep '^test_'); do
	if [ -n "${TESTS:-}" ] && ! [[ $name =~ $TESTS ]]; then continue; fi
	run_one "$name"
done
