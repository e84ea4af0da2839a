#!/usr/bin/env bash
# make bench: dynprof's parallel fan-out against msprof's one-target-at-a-
# time loop, measured side by side in one run (bench/fanout.c alternates
# the two every round). Targets are demo tasks; --flush-ms stands for the
# time a real profiler spends flushing a window's data at STOP.
# Then bench/discovery.sh, bench/launch.sh, bench/triggers.sh, bench/anomaly.sh,
# bench/open_hook.sh, bench/osrt.sh (tracers of system calls), bench/scale.sh,
# bench/follow.sh (again with a helper stopped: BENCH_STALLED), bench/soak.sh (its full
# size takes minutes: SOAK_PROCS and SOAK_CARD_USERS make it smaller) and
# bench/slurm_fanout.sh (a real SLURM cluster of 1, 3 and 16 nodes).
# Results: tables on stdout; docs/BENCHMARKS.md records a run.
set -u
B=${DYNPROF_BUILD:-build}
TARGETS=${BENCH_TARGETS:-8}
ROUNDS=${BENCH_ROUNDS:-10}
pids=()
W=$(mktemp -d /tmp/dynprof-bench-run.XXXXXX)

cleanup() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; }
trap 'cleanup; rm -rf "$W"' EXIT
# The demo tasks' card (bench/cards.sh), not their own nodes with /dev/full's
# numbers: another run's --pid=auto would connect to them, rounds lost.
. "$(dirname "$0")/cards.sh"
bench_card $W/davinci0

start_targets() { # start_targets FLUSH_MS
	pids=()
	for _ in $(seq "$TARGETS"); do
		"$B/demo_task" --quiet --device=$W/davinci0 --step-ms=10 --flush-ms="$1" > /dev/null 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		for _ in $(seq 100); do
			[ -S "$(getent passwd "$(id -u)" | cut -d: -f6)/dynamic_profiling_socket_$p" ] && break
			sleep 0.05
		done
	done
}

echo "### Fan-out: one window across $TARGETS targets"
echo "| STOP flush per target | targets | rounds | dynprof (parallel) median | msprof-style (serial) median | serial / parallel |"
echo "| --- | --- | --- | --- | --- | --- |"
for flush in 0 50 200; do
	start_targets $flush
	line=$("$B/bench/fanout" "$ROUNDS" "${pids[@]}") || { echo "fanout failed"; exit 1; }
	eval "$(echo "$line" | tr ' ' '\n' | grep '=')"
	echo "| ${flush} ms | $targets | $rounds | ${parallel_median_ms} ms | ${serial_median_ms} ms | ${serial_over_parallel} |"
	cleanup
done

echo
"$(dirname "$0")/discovery.sh"

echo
"$(dirname "$0")/launch.sh"

echo
"$(dirname "$0")/triggers.sh"

echo
"$(dirname "$0")/anomaly.sh"

echo
"$(dirname "$0")/open_hook.sh"

echo
"$(dirname "$0")/osrt.sh"
"$(dirname "$0")/scale.sh"

echo
"$(dirname "$0")/follow.sh"
# Joins and status with one user's helper stopped mid-copy (issue 24).
BENCH_ROUNDS=0 BENCH_STALLED=1 "$(dirname "$0")/follow.sh"

echo
"$(dirname "$0")/soak.sh"

echo
"$(dirname "$0")/slurm_fanout.sh"
