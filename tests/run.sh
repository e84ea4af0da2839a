#!/usr/bin/env bash
# Runs dynprof's unit and integration tests and ends with one line:
#   N passed, N failed
# Unit tests: $DYNPROF_BUILD/tests/unit/<folder>/test_* (pure functions; the folders mirror user/).
# Integration tests: tests/integration/*.sh, real processes, sockets, BPF
# and namespaces; they need root (they skip, counted as failed, without it).
# TESTS=pattern runs only the tests whose name matches the pattern.
# Each source must report as many tests as it declares (a unit binary's
# --count; an integration script's test_*() definitions, found with grep
# and matching TESTS): a binary that exits early or a script that does not
# parse (bash -n) is a FAIL, never a silently shorter run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export DYNPROF_BUILD=${DYNPROF_BUILD:-$here/../build}
export DYNPROF_TESTS=$here
# The sanitizer build preloads an ASan agent into ASan-built test programs.
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0}

passed=0 failed=0
failures=()

count() { # reads PASS/FAIL lines, echoes them, counts them (ran: this call's)
	local line
	ran=0 status=0
	while IFS= read -r line; do
		[[ $line == "STATUS "* ]] || printf '%s\n' "$line"
		case $line in
		"PASS "*) passed=$((passed + 1)); ran=$((ran + 1)) ;;
		"FAIL "*) failed=$((failed + 1)); ran=$((ran + 1)); failures+=("$line") ;;
		"STATUS "*) status=${line#STATUS } ;;
		esac
	done
}

# One FAIL line of the runner's own (counted like a test's).
fail_line() {
	count <<<"FAIL $1"
}

# A source that ran another number of tests than it declares lost some
# silently (a script that stopped parsing, a binary that exited early).
check_ran() { # name declared ran
	[ "$2" -eq "$3" ] || fail_line "$1: $3 of $2 declared tests reported"
}

# The test functions an integration script defines, found without running
# it, filtered by TESTS like runner.sh filters them.
declared_tests() {
	local name n=0
	for name in $(grep -o '^test_[a-z0-9_]*()' "$1" | tr -d '()'); do
		if [ -n "${TESTS:-}" ] && ! [[ $name =~ $TESTS ]]; then continue; fi
		n=$((n + 1))
	done
	echo $n
}

# Unit tests and fuzz replay: one job beside the integration scripts (its
# lines buffered, counted when it ends, like a script's).
unit_and_fuzz() {
	local t b want n
	echo "== unit tests"
	for t in "$DYNPROF_BUILD"/tests/unit/*/test_*; do
		[ -x "$t" ] || continue
		b=$(basename "$t")
		want=$("$t" --count 2>/dev/null)
		if ! [[ $want =~ ^[0-9]+$ ]]; then
			fail_line "$b: --count gave '$want', not a number of tests"
			continue
		fi
		# Status 1: some test failed (its FAIL line says which); more: a crash or a hang.
		count < <("$t" 2>&1; echo "STATUS $?")
		n=$ran
		[ "$status" -gt 1 ] && fail_line "$b: exited with status $status"
		check_ran "$b" "$want" "$n"
	done

	# Every parser's fuzz harness, over its seeds and their deterministic
	# mutations (tests/fuzz/replay.c); one PASS line each.
	echo "== fuzz replay"
	for t in "$DYNPROF_BUILD"/tests/fuzz/fuzz_*; do
		[ -x "$t" ] || continue
		b=$(basename "$t")
		count < <("$t" "$here/fuzz/corpus/${b#fuzz_}" 2>&1; echo "STATUS $?")
		[ "$status" -ne 0 ] && [ "$ran" -eq 0 ] && fail_line "$b: exited with status $status"
		check_ran "$b" 1 "$ran"
	done
}

# Integration scripts run TEST_JOBS at a time (default: two per CPU: the
# tests mostly wait on the processes they drive, a run uses about a third
# of the CPU time it has at one per CPU): each
# test acts only on what it started (tests/lib/common.sh: cards of its own),
# so scripts can run side by side. A script with a "# serial" line uses
# state of the whole host and runs alone, after the others. Each script's
# output is printed whole when it ends; the counts are the same as one by one.
jobs=${TEST_JOBS:-$((2 * $(nproc 2>/dev/null || echo 1)))}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "tests/run.sh: TEST_JOBS=$jobs is not a number of workers"; exit 2; }
work=$(mktemp -d /tmp/dynprof-run.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The last run's wall time of each script: the longest start first.
times_file=$DYNPROF_BUILD/tests/script-times
declare -A declared=() last=()
[ -r "$times_file" ] && while read -r secs b; do last[$b]=$secs; done < "$times_file"

run_script() { # run_script PATH: its output in $work/NAME.out, its wall time in $work/NAME.secs
	local b; b=$(basename "$1")
	local start=$EPOCHREALTIME
	TEST_TIMES=$work/$b.times bash "$here/lib/runner.sh" "$1" > "$work/$b.out" 2>&1
	awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f\n", b - a }' > "$work/$b.secs"
}
report() { # report PATH: a finished script's output, counted
	local b; b=$(basename "$1")
	echo "-- integration/$b ($(cat "$work/$b.secs" 2>/dev/null || echo '?') s)"
	count < "$work/$b.out"
	check_ran "$b" "${declared[$b]}" "$ran"
}

echo "== integration tests ($jobs at a time, then the serial ones alone)"
parallel=() serial=()
for s in "$here"/integration/*.sh; do
	b=$(basename "$s")
	declared[$b]=$(declared_tests "$s")
	if ! err=$(bash -n "$s" 2>&1); then
		fail_line "$b: does not parse, its ${declared[$b]} tests not run: $(head -n 1 <<<"$err")"
		continue
	fi
	[ "${declared[$b]}" -eq 0 ] && continue
	if grep -q '^# serial' "$s"; then serial+=("$s"); else parallel+=("$s"); fi
done
# Longest first (unknown ones first of all): the last to start are short.
mapfile -t parallel < <(for s in "${parallel[@]}"; do
	echo "${last[$(basename "$s")]:-100000} $s"; done | sort -k1,1nr -s | cut -d' ' -f2-)

# Its lines are counted here when it ends (what its subshell counted is lost with it).
unit_and_fuzz > "$work/unit.out" 2>&1 &
unit_pid=$!
report_unit() {
	[ -n "$unit_pid" ] || return 0
	wait "$unit_pid"
	count < "$work/unit.out"
	unit_pid=""
}
declare -A running=() # pid -> script
reap_one() { # waits for a script of the pool (or the unit tests) to end, reports it
	local done_pid=""
	wait -n -p done_pid
	[ -n "$done_pid" ] && [ "$done_pid" = "$unit_pid" ] && { report_unit; return 0; }
	[ -n "$done_pid" ] && [ -n "${running[$done_pid]:-}" ] || return 0
	report "${running[$done_pid]}"
	unset "running[$done_pid]"
}
for s in "${parallel[@]}"; do
	while [ ${#running[@]} -ge "$jobs" ]; do reap_one; done
	run_script "$s" &
	running[$!]=$s
done
while [ ${#running[@]} -gt 0 ]; do reap_one; done
report_unit
for s in "${serial[@]}"; do
	run_script "$s"
	report "$s"
done

# Kept for the next run's order.
for f in "$work"/*.secs; do
	[ -e "$f" ] && echo "$(cat "$f") $(basename "$f" .secs)"
done > "$work/times" && [ -s "$work/times" ] && [ -z "${TESTS:-}" ] && cp "$work/times" "$times_file" 2>/dev/null

echo "== slowest tests"
for f in "$work"/*.times; do
	[ -e "$f" ] && sed "s/\$/ ($(basename "$f" .times))/" "$f"
done | sort -k1,1nr | head -n 10 | awk '{ s = $1; $1 = ""; printf "%7.1f s %s\n", s, $0 }'

if [ ${#failures[@]} -gt 0 ]; then
	echo "== failed:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
