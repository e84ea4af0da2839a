#!/usr/bin/env bash
# Scale benchmark (issue 11 part 4): one attach-mode run of dynprof against
# 10, 100 and 1000 targets in turn, in one run of this script, with 5000
# PROF_ folders of other processes in --output: time to connect (every
# target handed its params), to start and to stop (every window saved),
# and dynprof's peak RSS. Targets are card_user processes with the agent
# preloaded. Times are read by polling dynprof's output every 10 ms.
# BENCH_SCALE_BUILDS="OLD NEW": two builds side by side in one run, each
# size measured with each build in turn (the order alternating by size),
# fresh targets for every measurement (the agent, as CANN, keeps a finished
# client's socket: a second run on the same targets finds more); the
# targets and the agent are the first build's.
set -u
B=${DYNPROF_BUILD:-build}
BUILDS=${BENCH_SCALE_BUILDS:-$B}
B=${BUILDS%% *}
SIZES=${BENCH_SCALE_SIZES:-10 100 1000}
ENTRIES=${BENCH_SCALE_ENTRIES:-5000}
W=$(mktemp -d /tmp/dynprof-bench-scale.XXXXXX)
HOME_DIR=$(getent passwd "$(id -u)" | cut -d: -f6)
pids=()

cleanup() {
	[ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null
	wait 2>/dev/null
	for p in "${pids[@]}"; do rm -f "$HOME_DIR/dynamic_profiling_socket_$p"; done
	pids=()
}
trap 'cleanup; rm -rf $W' EXIT
ulimit -n "$(ulimit -Hn)"
for f in "$B/tests/peers/card_user" "$B/libdynprof_agent.so"; do
	[ -x "$f" ] || { echo "bench/scale.sh: $f is missing: run make bench (or make test-build) first"; exit 1; }
done
. "$(dirname "$0")/cards.sh"
# Nodes of the one card (davinci0, davinci00, ...), 250 targets each: a
# node takes 256 opens at a time (bench/cards.sh).
nodes=()
most=$(printf '%s\n' $SIZES | sort -n | tail -n 1)
for ((k = 1; k == 1 || (k - 1) * 250 < most; k++)); do
	[ $k -le 6 ] || { echo "bench/scale.sh: at most 1500 targets (6 nodes of a card)"; exit 1; }
	nodes+=($W/davinci$(printf "%0${k}d" 0))
	bench_card ${nodes[-1]}
done

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
lines() { grep -Ec -- "$1" $W/out; }
# until_lines COUNT REGEX: ms it took (polled every 10 ms, at most 300 s).
until_lines() {
	local t0; t0=$(now_ms)
	for _ in $(seq 30000); do
		[ "$(lines "$2")" -ge "$1" ] && { echo $(( $(now_ms) - t0 )); return; }
		sleep 0.01
	done
	echo timeout
}

start_targets() { # start_targets N
	local i
	pids=()
	for ((i = 0; i < $1; i++)); do
		PROFILING_MODE=dynamic LD_PRELOAD="$B/libdynprof_agent.so" DYNPROF_AGENT_DEVICES="$W/davinci*" \
			"$B/tests/peers/card_user" ${nodes[i % ${#nodes[@]}]} 900 < /dev/null > /dev/null 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		for _ in $(seq 3000); do
			[ -S "$HOME_DIR/dynamic_profiling_socket_$p" ] && break
			kill -0 "$p" 2>/dev/null || { echo "bench/scale.sh: target $p ended before its socket listened"; exit 1; }
			sleep 0.02
		done
	done
}

echo "### Scale: one run, $ENTRIES entries in --output"
echo "| targets |$([ "$BUILDS" = "$B" ] || echo " build |") connect | start | stop (all saved) | connect per target | dynprof peak RSS | errors |"
echo "| --- |$([ "$BUILDS" = "$B" ] || echo " --- |") --- | --- | --- | --- | --- | --- |"
round=0
one_size() { # one_size N DYNPROF_BUILD
	local n=$1 d=$2
	rm -rf $W/o && mkdir $W/o
	(cd $W/o && seq 1 "$ENTRIES" | awk '{ printf "PROF_000001_20260101000000000_%08dAAAAAAAA\n", 90000000 + $1 }' | xargs mkdir)
	start_targets "$n"
	rm -f $W/in && mkfifo $W/in
	t0=$(now_ms)
	"$d/dynprof" --dynamic=on --pid="$(IFS=,; echo "${pids[*]}")" --output=$W/o < $W/in > $W/out 2>&1 &
	dp=$!
	exec 7> $W/in
	c=$(until_lines 1 '^\[INFO\] Start profiling'); [ "$c" != timeout ] && c=$(( $(now_ms) - t0 ))
	echo start >&7
	s=$(until_lines "$n" ' start success$')
	echo stop >&7
	p=$(until_lines "$n" ' window saved in ')
	rss=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' /proc/$dp/status)
	echo quit >&7
	exec 7>&-
	wait $dp
	err=$(lines 'ERROR|closed the connection|timeout')
	per=$(awk -v c="$c" -v n="$n" 'BEGIN { printf "%.2f ms", c / n }')
	echo "| $n |$([ "$BUILDS" = "$B" ] || echo " $d |") ${c} ms | ${s} ms | ${p} ms | $per | $((rss / 1024)) MiB ($rss KiB) | $err |"
	cleanup
}
for n in $SIZES; do
	order=$BUILDS
	round=$((round + 1))
	[ $((round % 2)) = 0 ] && order=$(echo $BUILDS | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')
	for d in $order; do one_size "$n" "$d"; done
done
