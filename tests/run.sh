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

echo "== unit tests"
for t in "$DYNPROF_BUILD"/tests/unit/*/test_*; do
	[ -x "$t" ] || continue
	b=$(basename "$t")
	declared=$("$t" --count 2>/dev/null)
	if ! [[ $declared =~ ^[0-9]+$ ]]; then
		fail_line "$b: --count gave '$declared', not a number of tests"
		continue
	fi
	# Status 1: some test failed (its FAIL line says which); more: a crash or a hang.
	count < <("$t" 2>&1; echo "STATUS $?")
	n=$ran
	[ "$status" -gt 1 ] && fail_line "$b: exited with status $status"
	check_ran "$b" "$declared" "$n"
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

echo "== integration tests"
for s in "$here"/integration/*.sh; do
	b=$(basename "$s")
	declared=$(declared_tests "$s")
	if ! err=$(bash -n "$s" 2>&1); then
		fail_line "$b: does not parse, its $declared tests not run: $(head -n 1 <<<"$err")"
		continue
	fi
	count < <(bash "$here/lib/runner.sh" "$s" 2>&1)
	check_ran "$b" "$declared" "$ran"
done

if [ ${#failures[@]} -gt 0 ]; then
	echo "== failed:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
