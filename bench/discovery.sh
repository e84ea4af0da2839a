#!/usr/bin/env bash
# Discovery benchmarks (issue 3), each a side-by-side comparison in one run:
#  1. detection latency: a card open to dynprof --list --watch reporting it,
#     BPF and --no-bpf watchers running at the same time on the same opens;
#  2. overhead: an open/exec-heavy workload's run time with a BPF watcher
#     running against without, alternating rounds;
#  3. event rate: opens/s while card opens happen, and whether any card
#     open was lost.
set -u
B=${DYNPROF_BUILD:-build}
W=$(mktemp -d /tmp/dynprof-bench.XXXXXX)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
. "$(dirname "$0")/cards.sh"
bench_card $W/davinci0

watcher() { # watcher NAME [args]: dynprof --list --watch --json in the background
	local name=$1; shift
	"$B/dynprof" --list --watch --json --device="$W/davinci*" "$@" > $W/$name.out 2>$W/$name.err &
	pids+=($!)
	for _ in $(seq 100); do grep -q '^\[' $W/$name.out && return 0; sleep 0.05; done
	echo "watcher $name did not start"; exit 1
}

# Latencies (µs) of card-open events in watcher output vs the opener's times.
latencies() { # latencies OPENER_OUT WATCHER_OUT
	awk 'NR==FNR { t[$1] = $2; next }
	     /"event":"card-open"/ {
		match($0, /"pid":[0-9]+/); p = substr($0, RSTART + 6, RLENGTH - 6)
		match($0, /"time_us":[0-9.e+]+/); w = substr($0, RSTART + 10, RLENGTH - 10) + 0
		if (p in t) print w - t[p]
	     }' "$1" "$2" | sort -n
}

pct() { # pct FILE P: the P-th percentile of sorted numbers
	local n; n=$(wc -l < "$1")
	[ "$n" -gt 0 ] || { echo "-"; return; }
	sed -n "$(( (n * $2 + 99) / 100 ))p" "$1"
}

echo "### Detection latency (card open -> dynprof knows), 80 opens held 250 ms each, both watchers at once"
watcher bpf
watcher poll --no-bpf
"$B/bench/card_opener" $W/davinci0 80 250 > $W/opens
sleep 0.5
latencies $W/opens $W/bpf.out > $W/lat.bpf
latencies $W/opens $W/poll.out > $W/lat.poll
echo "| mode | seen | median | p99 |"
echo "| --- | --- | --- | --- |"
for m in bpf poll; do
	echo "| $m | $(wc -l < $W/lat.$m)/80 | $(pct $W/lat.$m 50) µs | $(pct $W/lat.$m 99) µs |"
done
kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; pids=()

echo
echo "### Overhead on an open/exec-heavy workload (200000 opens + 300 execs), 7 alternating rounds"
with=() without=()
for r in $(seq 7); do
	t=$("$B/bench/open_storm" 200000 300 | sed 's/.*elapsed_ms=//'); without+=("$t")
	watcher ovh
	t=$("$B/bench/open_storm" 200000 300 | sed 's/.*elapsed_ms=//'); with+=("$t")
	kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; pids=()
done
med() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
mw=$(med "${with[@]}"); mo=$(med "${without[@]}")
echo "| without dynprof (median) | with dynprof --list --watch (median) | ratio |"
echo "| --- | --- | --- |"
echo "| $mo ms | $mw ms | $(awk -v a="$mw" -v b="$mo" 'BEGIN { printf "%.3f", a / b }') |"

echo
echo "### Overhead on a compute-bound workload (gzip -1 of 48 MiB), 7 alternating rounds"
head -c $((48 << 20)) /dev/urandom > $W/blob
run_gzip() { local t0 t1; t0=$(date +%s%N); gzip -1 -c $W/blob > /dev/null; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }
with=() without=()
for r in $(seq 7); do
	without+=("$(run_gzip)")
	watcher gz
	with+=("$(run_gzip)")
	kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; pids=()
done
mw=$(med "${with[@]}"); mo=$(med "${without[@]}")
echo "| without dynprof (median) | with dynprof --list --watch (median) | ratio |"
echo "| --- | --- | --- |"
echo "| $mo ms | $mw ms | $(awk -v a="$mw" -v b="$mo" 'BEGIN { printf "%.3f", a / b }') |"
rm -f $W/blob

echo
echo "### Event rate: opens/s absorbed while 100 card opens happen"
watcher rate
"$B/bench/open_storm" 3000000 0 > $W/storm &
storm=$!
"$B/bench/card_opener" $W/davinci0 100 20 > $W/opens2
wait $storm
sleep 0.5
seen=$(latencies $W/opens2 $W/rate.out | wc -l)
kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; pids=()
echo "| opens/s (other processes) | card opens seen | events lost |"
echo "| --- | --- | --- |"
echo "| $(sed 's/opens_per_s=\([0-9]*\).*/\1/' $W/storm) | $seen/100 | $(grep -o '[0-9]* kernel events lost' $W/rate.err | grep -o '^[0-9]*' || echo 0) |"
