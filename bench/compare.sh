#!/usr/bin/env bash
# bench/compare.sh OLD_BUILD NEW_BUILD [ROUNDS]: two builds of dynprof side by
# side in one run, alternating round by round on the same demo targets, so
# a change that should not move the figures (a re-lay) is shown not to.
#  - fan-out: one window across 8 targets, parallel (bench/fanout of each build)
#  - attach: dynprof --pid=<8 targets> from start to the end of `quit`
# Prints medians per build and NEW/OLD ratios.
set -u
OLD=$1 NEW=$2 ROUNDS=${3:-9}
W=$(mktemp -d /tmp/dynprof-compare.XXXXXX)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT

for b in "$OLD" "$NEW"; do
	[ -x "$b/dynprof" ] && [ -x "$b/bench/fanout" ] || { echo "compare: $b has no dynprof or bench/fanout (make all build/bench/fanout there)" >&2; exit 2; }
done
home=$(getent passwd "$(id -u)" | cut -d: -f6)
for _ in 1 2 3 4 5 6 7 8; do
	"$NEW/demo_task" --quiet --step-ms=10 > /dev/null 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do
	for _ in $(seq 100); do [ -S "$home/dynamic_profiling_socket_$p" ] && break; sleep 0.05; done
done
list=$(IFS=,; echo "${pids[*]}")

attach_ms() { # attach_ms BUILD: ms from dynprof's start to its end after quit
	local t0 t1
	t0=$(date +%s%N)
	echo quit | "$1/dynprof" --pid="$list" --output=$W/o > /dev/null 2>&1
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000000 ))
}
fanout_ms() { # fanout_ms BUILD: the parallel median of one round
	"$1/bench/fanout" 1 "${pids[@]}" | tr ' ' '\n' | sed -n 's/^parallel_median_ms=//p'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: > $W/old.f; : > $W/new.f; : > $W/old.a; : > $W/new.a
for _ in $(seq "$ROUNDS"); do
	fanout_ms "$OLD" >> $W/old.f; fanout_ms "$NEW" >> $W/new.f
	attach_ms "$OLD" >> $W/old.a; attach_ms "$NEW" >> $W/new.a
done
fo=$(median < $W/old.f) fn=$(median < $W/new.f) ao=$(median < $W/old.a) an=$(median < $W/new.a)
echo "| measure (8 targets, $ROUNDS rounds, alternating) | old median | new median | new / old |"
echo "| --- | --- | --- | --- |"
echo "| one window, parallel fan-out | $fo ms | $fn ms | $(awk -v a="$fn" -v b="$fo" 'BEGIN { printf "%.2f", b ? a / b : 0 }') |"
echo "| attach 8 targets, quit | $ao ms | $an ms | $(awk -v a="$an" -v b="$ao" 'BEGIN { printf "%.2f", b ? a / b : 0 }') |"
