#!/usr/bin/env bash
# Runs dynprof's unit and integration tests and ends with one line:
#   N passed, N failed
# Unit tests: $DYNPROF_BUILD/tests/unit/test_* (pure functions).
# Integration tests: tests/integration/*.sh, real processes, sockets, BPF
# and namespaces; they need root (they skip, counted as failed, without it).
# TESTS=pattern runs only the tests whose name matches the pattern.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export DYNPROF_BUILD=${DYNPROF_BUILD:-$here/../build}
export DYNPROF_TESTS=$here
# The sanitizer build preloads an ASan agent into ASan-built test programs.
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0}

passed=0 failed=0
failures=()

count() { # reads PASS/FAIL lines, echoes them, counts them
	local line
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case $line in
		"PASS "*) passed=$((passed + 1)) ;;
		"FAIL "*) failed=$((failed + 1)); failures+=("$line") ;;
		esac
	done
}

echo "== unit tests"
for t in "$DYNPROF_BUILD"/tests/unit/test_*; do
	[ -x "$t" ] || continue
	count < <("$t" 2>&1; rc=$?; [ $rc -gt 1 ] && echo "FAIL $(basename "$t"): exited with status $rc")
done

echo "== integration tests"
for s in "$here"/integration/*.sh; do
	count < <(bash "$here/lib/runner.sh" "$s" 2>&1)
done

if [ ${#failures[@]} -gt 0 ]; then
	echo "== failed:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
