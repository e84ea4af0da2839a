#!/usr/bin/env bash
# Mutation check of the test suite: does each test fail when the behaviour
# it is about breaks? Each tests/mutate/NAME.patch is one small deliberate
# break, headed by three lines before its diff:
#   What: <the behaviour broken>
#   Tests: <regex of integration test function names, or empty>
#   Unit: <unit test binary names (build/tests/unit/...), or empty;
#          fuzz_NAME is a fuzz harness replayed over its corpus>
# For each (all, or the ones named as arguments: NAME or a path), in one
# scratch copy of the source tree: apply it, build, run the named tests,
# take it back out. CAUGHT when any named test FAILs, SURVIVED otherwise,
# STALE when it no longer applies (or builds). One line per patch, then
#   mutate: N caught, N survived, N stale
# Exit status 0 only when every patch was caught. As root (integration
# tests). Takes minutes: not part of `make test`.
# MUTATE_DIR=DIR uses DIR as the scratch folder (kept); MUTATE_BASELINE=1
# first checks that the named tests pass without any break.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
lock=/tmp/dynprof-suite.lock

die() { echo "mutate: $*" >&2; exit 2; }

patches=()
if [ $# -eq 0 ]; then
	for p in "$root"/tests/mutate/*.patch; do [ -e "$p" ] && patches+=("$p"); done
else
	for a in "$@"; do
		if [ -f "$a" ]; then patches+=("$(cd "$(dirname "$a")" && pwd)/$(basename "$a")")
		elif [ -f "$root/tests/mutate/$a.patch" ]; then patches+=("$root/tests/mutate/$a.patch")
		else die "no patch $a (tests/mutate/$a.patch)"
		fi
	done
fi
[ ${#patches[@]} -gt 0 ] || die "no patches in tests/mutate/"

scratch=${MUTATE_DIR:-}
if [ -z "$scratch" ]; then
	scratch=$(mktemp -d /tmp/dynprof-mutate.XXXXXX) || die "cannot make a scratch folder"
	trap 'rm -rf "$scratch"' EXIT
fi
mkdir -p "$scratch/src" "$scratch/logs"
src=$scratch/src

# The source tree as it is in the worktree (tracked and new files, not
# build/); the worktree's build/ too, timestamps kept, so make starts warm.
copy_tree() {
	# (A file deleted but not yet committed is skipped: cp reports it.)
	(cd "$root" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 cp -a --parents -t "$src" 2>/dev/null)
	[ -f "$src/Makefile" ] || die "cannot copy the source tree into $src"
	if [ -d "$root/build" ] && [ ! -e "$src/build" ]; then
		mkdir -p "$src/build"
		(cd "$root/build" && find . -mindepth 1 -maxdepth 1 ! -name san -exec cp -a -t "$src/build" {} +)
	fi
}

build() { # build LOG: the tool and everything `make test` runs
	make -C "$src" -j2 test-build >> "$1" 2>&1
}

header() { # header PATCH KEY: the value of "KEY:" in the patch's heading lines
	sed -n "/^diff /q; s/^$2:[[:space:]]*//p" "$1" | head -1
}

# Integration scripts defining a test whose name matches the regex.
scripts_for() {
	local s name
	for s in "$src"/tests/integration/*.sh; do
		for name in $(sed -nE 's/^(test_[A-Za-z0-9_]+)\(\).*/\1/p' "$s"); do
			if [[ $name =~ $1 ]]; then echo "$s"; break; fi
		done
	done
}

# run_tests TESTS UNIT LOG: prints the names of the tests that failed.
run_tests() {
	local tests=$1 unit=$2 log=$3 s u out
	for u in $unit; do
		if [[ $u == fuzz_* ]]; then
			out=$(cd "$scratch" && "$src/build/tests/fuzz/$u" "$src/tests/fuzz/corpus/${u#fuzz_}" 2>&1)
			printf '%s\n' "$out" >> "$log"
			grep -q '^PASS ' <<<"$out" || echo "$u"
			continue
		fi
		out=$("$(unit_bin "$u")" 2>&1); local rc=$?
		printf '%s\n' "$out" >> "$log"
		if grep -q '^FAIL ' <<<"$out"; then grep '^FAIL ' <<<"$out" | sed "s/^FAIL \([^:]*\).*/$u:\1/"
		elif [ $rc -ne 0 ]; then echo "$u(status $rc)"
		fi
	done
	[ -n "$tests" ] || return 0
	for s in $(scripts_for "$tests"); do
		out=$(DYNPROF_BUILD="$src/build" DYNPROF_TESTS="$src/tests" TESTS="$tests" \
			ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0} \
			flock "$lock" bash "$src/tests/lib/runner.sh" "$s" 2>&1)
		printf '%s\n' "$out" >> "$log"
		grep '^FAIL ' <<<"$out" | sed 's/^FAIL \([^:]*\).*/\1/'
	done
}

# A unit binary by its name: build/tests/unit/<folder>/NAME (the folders mirror user/).
unit_bin() { # unit_bin NAME
	local b
	for b in "$src"/build/tests/unit/*/"$1"; do [ -x "$b" ] && { echo "$b"; return; }; done
	echo "$src/build/tests/unit/$1"
}

# How many named tests there are, so a regex matching nothing survives loudly.
count_named() { # count_named TESTS UNIT
	local n=0 s
	for u in $2; do
		[ -x "$(unit_bin "$u")" ] || [ -x "$src/build/tests/fuzz/$u" ] && n=$((n + 1))
	done
	if [ -n "$1" ]; then
		for s in "$src"/tests/integration/*.sh; do
			n=$((n + $(sed -nE 's/^(test_[A-Za-z0-9_]+)\(\).*/\1/p' "$s" | grep -cE -- "$1")))
		done
	fi
	echo $n
}

started=$SECONDS
copy_tree
build "$scratch/logs/baseline.log" || die "the unbroken tree does not build: $scratch/logs/baseline.log"

if [ "${MUTATE_BASELINE:-0}" = 1 ]; then
	for p in "${patches[@]}"; do
		failed=$(run_tests "$(header "$p" Tests)" "$(header "$p" Unit)" "$scratch/logs/baseline.log")
		[ -z "$failed" ] || die "$(basename "$p" .patch): fails without the break: $failed"
	done
fi

caught=0 survived=0 stale=0
for p in "${patches[@]}"; do
	name=$(basename "$p" .patch)
	what=$(header "$p" What) tests=$(header "$p" Tests) unit=$(header "$p" Unit)
	log=$scratch/logs/$name.log
	: > "$log"
	t0=$SECONDS
	if ! git -C "$src" apply --check "$p" >> "$log" 2>&1; then
		echo "STALE    $name: does not apply ($what)"
		stale=$((stale + 1))
		continue
	fi
	git -C "$src" apply "$p" || die "$name: applying failed after the check"
	if ! build "$log"; then
		echo "STALE    $name: does not build ($what)"
		stale=$((stale + 1))
	elif [ "$(count_named "$tests" "$unit")" = 0 ]; then
		echo "SURVIVED $name: no test named ($what)"
		survived=$((survived + 1))
	else
		failed=$(run_tests "$tests" "$unit" "$log" | tr '\n' ' ')
		if [ -n "$failed" ]; then
			echo "CAUGHT   $name: $what [by ${failed% }; $((SECONDS - t0)) s]"
			caught=$((caught + 1))
		else
			echo "SURVIVED $name: $what [${tests:+$tests }${unit}; log $log]"
			survived=$((survived + 1))
		fi
	fi
	git -C "$src" apply -R "$p" || die "$name: cannot take the patch back out of $src"
done
# The tree is clean again: leave it built for the next run (MUTATE_DIR).
build "$scratch/logs/baseline.log" || true

echo "mutate: $(( (SECONDS - started + 30) / 60 )) min; logs in $scratch/logs${MUTATE_DIR:+ (kept)}"
echo "mutate: $caught caught, $survived survived, $stale stale"
[ $survived -eq 0 ] && [ $stale -eq 0 ]
