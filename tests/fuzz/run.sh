#!/usr/bin/env bash
# `make fuzz`: runs each libFuzzer harness for a while from a copy of its
# seed corpus (tests/fuzz/corpus/NAME), in parallel on the machine's cores.
#   run.sh DIR SECONDS fuzz_NAME...
# A finding is saved as DIR/findings/NAME/crash-*; replay it with
#   build/tests/fuzz/fuzz_NAME DIR/findings/NAME    (or DIR/fuzz_NAME FILE).
# Ends with one line "N clean, N with findings".
set -u
dir=$1 secs=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
clean=0 found=0
jobs=$(nproc 2>/dev/null || echo 1)

one() { # name
	local n=${1#fuzz_} work="$dir/corpus/${1#fuzz_}" out="$dir/findings/${1#fuzz_}"
	rm -rf "$work" "$out"
	mkdir -p "$work" "$out"
	cp "$here/corpus/$n"/* "$work"/
	"$dir/$1" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$out/" -print_final_stats=1 "$work" >"$out/log" 2>&1
	# Any one kind is a finding (ls of four globs fails when one matches nothing).
	if ls "$out" | grep -qE '^(crash|leak|timeout|oom|slow-unit)-'; then
		echo "FINDING $1: $(ls "$out" | grep -v '^log$' | head -n 3 | tr '\n' ' ')(log: $out/log)"
	else
		echo "CLEAN $1: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/log" | grep -o '[0-9]*$') runs in ${secs}s"
	fi
}

running=0
for f in "$@"; do
	one "$f" > "$dir/$f.result" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait
for f in "$@"; do
	cat "$dir/$f.result"
	case $(cat "$dir/$f.result") in CLEAN*) clean=$((clean + 1)) ;; *) found=$((found + 1)) ;; esac
done
echo "$clean clean, $found with findings"
[ "$found" -eq 0 ]
