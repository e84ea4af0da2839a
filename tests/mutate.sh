#!/usr/bin/env bash
# Mutation check of the test suite: does each test fail when the behaviour
# it is about breaks? Each tests/mutate/NAME.patch is one small deliberate
# break, headed by three lines before its diff:
#   What: <the behaviour broken>
#   Tests: <regex of integration test function names, or empty>
#   Unit: <unit test binary names (build/tests/unit/...), or empty;
#          fuzz_NAME is a fuzz harness replayed over its corpus>
# In one scratch copy of the source tree it first builds the unbroken tree
# and runs every named test once (the baseline), then for each patch (all,
# or the ones named as arguments: NAME or a path): apply it, build, run its
# named tests, take it back out. One line per patch:
#   CAUGHT   a named test FAILed on its assertion (named) and passed unbroken
#   SURVIVED every named test passed with the break in
#   CRASH    no assertion failed, but a named binary died (a signal, an
#            early exit) or a test hit its time limit: not a catch
#   ERROR    the patch names a binary or a regex that does not exist, a
#            named test did not report, or the only failures are of tests
#            that fail unbroken too: the patch's fault, not a catch
#   STALE    it no longer applies (or builds)
# then "mutate: N caught, N survived, N crash, N error, N stale".
# Exit status 0 only when every patch was caught. As root (integration
# tests). Takes long: not part of `make test`.
# A run over every patch (no arguments) writes docs/MUTATE.md from its
# results; MUTATE_DOC=FILE writes that file instead (also for a subset, the
# doc then says which patches ran). MUTATE_DIR=DIR uses DIR as the scratch
# folder (kept).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
lock=/tmp/dynprof-suite.lock

die() { echo "mutate: $*" >&2; exit 2; }

patches=()
if [ $# -eq 0 ]; then
	for p in "$root"/tests/mutate/*.patch; do [ -e "$p" ] && patches+=("$p"); done
	doc=${MUTATE_DOC:-$root/docs/MUTATE.md}
else
	for a in "$@"; do
		if [ -f "$a" ]; then patches+=("$(cd "$(dirname "$a")" && pwd)/$(basename "$a")")
		elif [ -f "$root/tests/mutate/$a.patch" ]; then patches+=("$root/tests/mutate/$a.patch")
		else die "no patch $a (tests/mutate/$a.patch)"
		fi
	done
	doc=${MUTATE_DOC:-}
fi
[ ${#patches[@]} -gt 0 ] || die "no patches in tests/mutate/"

scratch=${MUTATE_DIR:-}
if [ -z "$scratch" ]; then
	scratch=$(mktemp -d /tmp/dynprof-mutate.XXXXXX) || die "cannot make a scratch folder"
	trap 'rm -rf "$scratch"' EXIT
fi
mkdir -p "$scratch/src" "$scratch/logs"
# Reachable by the tests' unprivileged users (hostile.sh, service.sh run the
# scratch build's card_user and agent as them), as a checkout is.
chmod 755 "$scratch"
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

# The test functions of the scratch tree's integration scripts that match
# REGEX as runner.sh matches them: "SCRIPT NAME" lines.
integration_tests() { # integration_tests REGEX
	local s n
	for s in "$src"/tests/integration/*.sh; do
		for n in $(sed -nE 's/^(test_[A-Za-z0-9_]+)\(\).*/\1/p' "$s"); do
			[[ $n =~ $1 ]] && echo "$s $n"
		done
	done
}

# A unit binary by its name: build/tests/unit/<folder>/NAME (the folders
# mirror user/), a fuzz harness build/tests/fuzz/NAME; empty when none is.
unit_bin() { # unit_bin NAME
	local b
	if [[ $1 == fuzz_* ]]; then
		[ -x "$src/build/tests/fuzz/$1" ] && echo "$src/build/tests/fuzz/$1"
		return
	fi
	for b in "$src"/build/tests/unit/*/"$1"; do [ -x "$b" ] && { echo "$b"; return; }; done
}

# check_names TESTS UNIT: what a patch names that does not exist, one line
# each (nothing when all of it does). A regex must match some test.
check_names() {
	local u
	for u in $2; do
		[ -n "$(unit_bin "$u")" ] || echo "no unit binary or fuzz harness '$u'"
	done
	if [ -n "$1" ] && [ -z "$(integration_tests "$1")" ]; then
		echo "no integration test matches '$1'"
	fi
}

# run_unit NAME LOG: one unit binary or fuzz harness; prints one result
# line per test: "PASS id", "FAIL id" (its assertion), "CRASH id: why".
# A unit test's id is binary:test, a fuzz harness's its name.
run_unit() {
	local u=$1 log=$2 bin out rc declared ran
	bin=$(unit_bin "$u")
	if [[ $u == fuzz_* ]]; then
		out=$(cd "$scratch" && "$bin" "$src/tests/fuzz/corpus/${u#fuzz_}" 2>&1); rc=$?
		printf '%s\n' "$out" >> "$log"
		# A broken promise aborts inside the harness, which then prints the
		# FAIL line naming the input: that is the harness's assertion.
		if grep -q "^PASS $u" <<<"$out"; then echo "PASS $u"
		elif grep -q "^FAIL $u" <<<"$out"; then echo "FAIL $u"
		else echo "CRASH $u: exited with status $rc and no PASS or FAIL line"
		fi
		return
	fi
	declared=$("$bin" --count 2>/dev/null)
	out=$("$bin" 2>&1); rc=$?
	printf '%s\n' "$out" >> "$log"
	# unit.h prints "FAIL name: timed out" for a hang, "FAIL name" after a CHECK.
	sed -nE "s/^FAIL ([A-Za-z0-9_]+): timed out.*/CRASH $u:\1: timed out/p;
		 s/^FAIL ([A-Za-z0-9_]+)$/FAIL $u:\1/p; s/^PASS ([A-Za-z0-9_]+)$/PASS $u:\1/p" <<<"$out"
	ran=$(grep -cE '^(PASS|FAIL) ' <<<"$out")
	if [ "$rc" -gt 1 ] && ! grep -q ': timed out' <<<"$out"; then
		echo "CRASH $u: exited with status $rc$( [ "$rc" -gt 128 ] && echo " (signal $((rc - 128)))")"
	elif [[ $declared =~ ^[0-9]+$ ]] && [ "$ran" -lt "$declared" ] && [ "$rc" -le 1 ]; then
		echo "CRASH $u: $ran of $declared tests reported"
	fi
}

# run_integration REGEX LOG: the integration tests matching REGEX, by
# script; the same result lines ("CRASH name: timed out" for a test the
# runner stopped at its time limit; "CRASH name: no result" for one that
# never reported).
run_integration() {
	local re=$1 log=$2 s names out n matched
	matched=$(integration_tests "$re")
	for s in $(cut -d' ' -f1 <<<"$matched" | sort -u); do
		names=$(awk -v s="$s" '$1 == s {print $2}' <<<"$matched")
		out=$(DYNPROF_BUILD="$src/build" DYNPROF_TESTS="$src/tests" TESTS="$re" \
			ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0} \
			flock "$lock" bash "$src/tests/lib/runner.sh" "$s" 2>&1)
		printf '%s\n' "$out" >> "$log"
		for n in $names; do
			if grep -q "^PASS $n\$" <<<"$out"; then echo "PASS $n"
			elif grep -q "^FAIL $n: timed out" <<<"$out"; then echo "CRASH $n: timed out"
			elif grep -q "^FAIL $n:" <<<"$out"; then echo "FAIL $n"
			else echo "CRASH $n: no result"
			fi
		done
	done
}

run_tests() { # run_tests TESTS UNIT LOG: result lines of every named test
	local u
	for u in $2; do run_unit "$u" "$3"; done
	[ -z "$1" ] || run_integration "$1" "$3"
}

started=$SECONDS
copy_tree
base_log=$scratch/logs/baseline.log
: > "$base_log"
build "$base_log" || die "the unbroken tree does not build: $base_log"
# What the tests need beside the build (the trace viewer in build/npm), once.
make -C "$src" test-deps >> "$base_log" 2>&1 || die "the test dependencies are missing: $base_log"
commit=$(git -C "$root" rev-parse --short HEAD)
git -C "$root" diff --quiet HEAD -- . 2>/dev/null || commit="$commit + uncommitted changes"

# The baseline: every test any patch names, once, on the unbroken tree.
# A patch is caught only by a test that passed here.
all_tests="" all_units=""
for p in "${patches[@]}"; do
	t=$(header "$p" Tests)
	[ -z "$t" ] || all_tests="$all_tests${all_tests:+|}($t)"
	for u in $(header "$p" Unit); do
		[ -n "$(unit_bin "$u")" ] && [[ " $all_units " != *" $u "* ]] && all_units="$all_units $u"
	done
done
baseline=$scratch/logs/baseline.results
run_tests "$all_tests" "$all_units" "$base_log" > "$baseline"
echo "mutate: baseline: $(grep -c '^PASS ' "$baseline") named tests pass unbroken, $(grep -vc '^PASS ' "$baseline") do not$(grep -v '^PASS ' "$baseline" | cut -d' ' -f2- | sed 's/^/; /' | tr -d '\n')"

passed_unbroken() { grep -qx "PASS $1" "$baseline"; }

# judge RESULTS: sets verdict and detail from one patch's result lines.
judge() {
	local caught="" crash="" unbroken_too="" line id
	while IFS= read -r line; do
		id=${line#* }
		case $line in
		"FAIL "*) if passed_unbroken "$id"; then caught="$caught, $id"; else unbroken_too="$unbroken_too, $id"; fi ;;
		"CRASH "*) crash="$crash; $id" ;;
		esac
	done <<<"$1"
	if [ -n "$caught" ]; then
		verdict=CAUGHT detail="by ${caught#, }${crash:+ (also a crash:${crash#;})}"
	elif [ -n "$crash" ]; then
		verdict=CRASH detail="${crash#; }"
	elif [ -n "$unbroken_too" ]; then
		verdict=ERROR detail="only tests that fail unbroken too failed: ${unbroken_too#, }"
	elif [ -z "$1" ]; then
		verdict=ERROR detail="no test ran"
	else
		verdict=SURVIVED detail="$(grep -c '^PASS ' <<<"$1") named tests passed"
	fi
}

declare -A count=([CAUGHT]=0 [SURVIVED]=0 [CRASH]=0 [ERROR]=0 [STALE]=0)
rows=()
for p in "${patches[@]}"; do
	name=$(basename "$p" .patch)
	what=$(header "$p" What) tests=$(header "$p" Tests) unit=$(header "$p" Unit)
	log=$scratch/logs/$name.log
	: > "$log"
	t0=$SECONDS
	applied=0
	if ! git -C "$src" apply --check "$p" >> "$log" 2>&1; then
		verdict=STALE detail="does not apply"
	else
		git -C "$src" apply "$p" || die "$name: applying failed after the check"
		applied=1
		missing=$(check_names "$tests" "$unit")
		if ! build "$log"; then
			verdict=STALE detail="does not build"
		elif [ -n "$missing" ]; then
			verdict=ERROR detail=$(tr '\n' ';' <<<"$missing" | sed 's/;$//; s/;/; /g')
		elif [ -z "$tests$unit" ]; then
			verdict=ERROR detail="names no test"
		else
			judge "$(run_tests "$tests" "$unit" "$log")"
		fi
	fi
	secs=$((SECONDS - t0))
	printf '%-8s %s: %s [%s; %d s]\n' "$verdict" "$name" "$what" "$detail" $secs
	count[$verdict]=$((${count[$verdict]} + 1))
	rows+=("$(printf '| `%s` | %s | %s | %s | %d |' "$name" "$what" "$verdict" "${detail//|/\\|}" $secs)")
	[ $applied = 0 ] || git -C "$src" apply -R "$p" || die "$name: cannot take the patch back out of $src"
done
# The tree is clean again: leave it built for the next run (MUTATE_DIR).
build "$base_log" || true

minutes=$(( (SECONDS - started + 30) / 60 ))
summary="mutate: ${count[CAUGHT]} caught, ${count[SURVIVED]} survived, ${count[CRASH]} crash, ${count[ERROR]} error, ${count[STALE]} stale (of ${#patches[@]})"
echo "mutate: $minutes min; logs in $scratch/logs${MUTATE_DIR:+ (kept)}"
echo "$summary"

write_doc() {
	cat <<-EOF
	# Mutation check: do the tests fail when their behaviour breaks?

	Generated by \`make mutate\` (tests/mutate.sh): do not edit by hand; run it
	again. Each \`tests/mutate/NAME.patch\` is one small deliberate break,
	headed by \`What:\`, \`Tests:\` (regex of integration test names) and
	\`Unit:\` (unit binaries, \`fuzz_NAME\` a fuzz harness over its corpus).
	In a scratch copy of the tree the unbroken build first runs every named
	test once (the baseline); then each patch is applied, built, its named
	tests run (integration ones under \`$lock\`) and taken back out.

	- CAUGHT: a named test FAILed on its assertion (named below) and passed
	  in the baseline of the same run.
	- SURVIVED: every named test passed with the break in.
	- CRASH: no assertion failed, but a named binary died or a test hit its
	  time limit; not counted as caught.
	- ERROR: the patch names a binary or regex that does not exist, or the
	  only failures are of tests that fail unbroken too.
	- STALE: the patch no longer applies or builds: regenerate it (apply the
	  break by hand, \`git diff\` under the three heading lines).

	\`make mutate MUTATE="name ..."\` runs some (and writes no doc unless
	\`MUTATE_DOC=FILE\`); \`MUTATE_DIR=DIR\` keeps the scratch build and logs.

	## Last run

	$(date -u '+%Y-%m-%d %H:%M UTC'), tree $commit, $minutes min on $(nproc) cores.
	$([ $# -eq 0 ] || echo "Only the patches named: $*.")

	    $summary
	    $(head -c 300 <<<"$baseline_line")

	| patch | what it breaks | result | caught by, or why not | s |
	| --- | --- | --- | --- | --- |
	EOF
	printf '%s\n' "${rows[@]}"
}
baseline_line="baseline: $(grep -c '^PASS ' "$baseline") named tests pass unbroken, $(grep -vc '^PASS ' "$baseline") do not"
if [ -n "$doc" ]; then
	write_doc "$@" > "$doc.tmp" && mv "$doc.tmp" "$doc" && echo "mutate: wrote $doc"
fi
[ "${count[CAUGHT]}" -eq ${#patches[@]} ]
