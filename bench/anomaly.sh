#!/usr/bin/env bash
# Anomaly triggers (slow:, gap:, stall:), two benchmarks:
#  1. cost: the target's call rate with no probe, with dynprof's counting
#     uprobe (call:...#never), and with its timing uprobe + uretprobe
#     (slow:...>1h, which never fires), in rounds that alternate the three,
#     for demo_step's body and (x86-64) empty functions beginning with push
#     and with endbr64 then push; the endbr64 one also with the probe on
#     its first instruction (DYNPROF_PROBE_AT_ENTRY=1: what dynprof did
#     before it chose the push, docs/TRIGGERS.md). Ratios are to no probe,
#     per round, then the median.
#  2. precision: from the slow call's return (tests/peers/stepper prints
#     it) to START acknowledged (the window record's ack_us), and from a
#     stall's start + DURATION to START acknowledged, at several call rates.
# Needs root (uprobes, mknod). Results: docs/BENCHMARKS.md.
#   BENCH_ANOMALY_COST_ROUNDS=0 or BENCH_ANOMALY_WINDOWS=0 skips a part.
set -u
[ "$(id -u)" = 0 ] || { echo "bench/anomaly.sh: needs root (uprobes, mknod): skipped"; exit 0; }
B=${DYNPROF_BUILD:-build}
COST_ROUNDS=${BENCH_ANOMALY_COST_ROUNDS:-5}
COST_SECONDS=${BENCH_ANOMALY_COST_SECONDS:-2}
WINDOWS=${BENCH_ANOMALY_WINDOWS:-10}      # precision: windows per call rate
GAPS=(100 10 1)                           # precision: ms between calls (10, 100, 1000 calls/s)
NEVER=1000000000000
W=$(mktemp -d /tmp/dynprof-bench-anomaly.XXXXXX)
HOME_DIR=$(getent passwd "$(id -u)" | cut -d: -f6)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
. "$(dirname "$0")/cards.sh"
bench_card $W/davinci0

# wait_socket PID: its agent listens.
wait_socket() {
	for _ in $(seq 500); do
		[ -S "$HOME_DIR/dynamic_profiling_socket_$1" ] && return 0
		sleep 0.01
	done
	echo "pid $1 never opened its socket" >&2
	exit 1
}

agent_env() { exec env PROFILING_MODE=dynamic DYNPROF_AGENT_DEVICES="$W/davinci*" LD_PRELOAD=$B/libdynprof_agent.so "$@"; }

# cost_run none|count|timed|timed-entry|count-entry ENTRY SYMBOL: calls/s over COST_SECONDS.
cost_run() {
	local how=$1 tag=$1-$2-$RANDOM pid dp rule at_entry=""
	case $how in
	none) ;;
	count*) rule="start=call:call_loop:$3#$NEVER" ;;
	timed*) rule="start=slow:call_loop:$3>1h" ;;
	esac
	case $how in *-entry) at_entry=1 ;; esac
	if [ $how = none ]; then
		agent_env "$B/bench/call_loop" --card=$W/davinci0 --entry=$2 --seconds=$COST_SECONDS > $W/cost.$tag 2>&1 &
		pid=$!; pids+=($pid); wait $pid
	else
		agent_env "$B/bench/call_loop" --card=$W/davinci0 --entry=$2 --seconds=$COST_SECONDS --wait-probe \
			> $W/cost.$tag 2>&1 &
		pid=$!; pids+=($pid); wait_socket $pid
		env ${at_entry:+DYNPROF_PROBE_AT_ENTRY=1} timeout 60 "$B/dynprof" --pid=$pid --output=$W/co.$tag \
			"--window=$rule" < /dev/null > $W/cdp.$tag 2>&1 &
		dp=$!
		wait $pid
		wait $dp
	fi
	sed -n 's/.* rate=\([0-9.]*\).*/\1/p' $W/cost.$tag
}

med() { sort -n "$1" | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }
p99() { sort -n "$1" | awk '{ v[NR] = $1 } END { i = int(NR * 0.99 + 0.999); print NR ? v[i < 1 ? 1 : i] : 0 }'; }

cost_entry() { # cost_entry ENTRY SYMBOL LABEL HOW...
	local entry=$1 sym=$2 label=$3 r h base v
	shift 3
	local hows=("$@")
	for h in none "${hows[@]}"; do : > $W/rate.$entry.$h; : > $W/ratio.$entry.$h; done
	for r in $(seq $COST_ROUNDS); do
		# Rotate the order each round, so no variant always runs first.
		local order=(none "${hows[@]}") k n=$(( ${#hows[@]} + 1 ))
		declare -A got=()
		for k in $(seq 0 $((n - 1))); do
			h=${order[$(( (k + r) % n ))]}
			got[$h]=$(cost_run $h $entry $sym)
			echo "${got[$h]}" >> $W/rate.$entry.$h
		done
		base=${got[none]}
		for h in "${hows[@]}"; do
			awk -v a="${got[$h]}" -v b="$base" 'BEGIN { if (b > 0) printf "%.5f\n", a / b }' >> $W/ratio.$entry.$h
		done
		unset got
	done
	local row="| $label | $(med $W/rate.$entry.none | awk '{ printf "%.0f", $1 }')"
	for h in "${hows[@]}"; do
		v=$(med $W/rate.$entry.$h)
		row+=" | $(awk -v v=$v -v b=$(med $W/rate.$entry.none) -v q=$(med $W/ratio.$entry.$h) \
			'BEGIN { printf "%.0f (%.4f, %.2f µs)", v, q, (v > 0 && b > 0) ? 1e6 / v - 1e6 / b : 0 }')"
	done
	echo "$row |"
}

cost_section() {
	echo "### Probe cost: calls/s with no probe, a counting uprobe, a timing uprobe + uretprobe; $COST_ROUNDS rotating rounds of ${COST_SECONDS} s"
	echo "(each cell: median calls/s (median of the per-round ratios to no probe, cost per call from the medians))"
	echo "| probed function | no probe | call: count | slow: timed |"
	echo "| --- | --- | --- | --- |"
	cost_entry step bench_step "demo_step's hash, 4096 rounds (C)" count timed
	if [ "$(uname -m)" = x86_64 ]; then
		cost_entry push bench_push "empty, push first (emulated)" count timed
		echo
		echo "### Probe placement: endbr64 then push, probed at the push (dynprof's choice) or at the endbr64 (before)"
		echo "| probed function | no probe | count at the push | count at the endbr64 | timed at the push | timed at the endbr64 |"
		echo "| --- | --- | --- | --- | --- | --- |"
		cost_entry endbr bench_endbr "empty, endbr64 then push" count count-entry timed timed-entry
		echo
		echo "### Probe placement: past plain instructions, on the first push or a tail jmp (dynprof's choice), or at the first instruction (before)"
		echo "| probed function | no probe | count where placed | count at the entry | timed where placed | timed at the entry |"
		echo "| --- | --- | --- | --- | --- | --- |"
		cost_entry tail bench_tail "pthread_join's shape: mov, xor, xor, then a tail jmp" count count-entry timed timed-entry
		cost_entry movpush bench_movpush "a rip-relative mov, then push" count count-entry timed timed-entry
		echo
		echo "### Probe sites the kernel emulates (one trap), over the exported functions of two real libraries"
		echo "| library | functions | at the first instruction | past an endbr64 onto a push (before) | where dynprof places it now |"
		echo "| --- | --- | --- | --- | --- |"
		local lib
		for lib in "$(ldd "$B/dynprof" | awk '/libc\.so/ { print $3 }')" \
			"$(ldconfig -p | awk '/libstdc\+\+\.so\.6 .*x86-64/ { print $NF; exit }')"; do
			[ -r "$lib" ] || continue
			"$B/bench/probe_share" "$lib" | sed -E 's/^lib=([^ ]+) functions=([0-9]+) at_entry=([0-9]+) endbr_push=([0-9]+) placed=([0-9]+) share_at_entry=([^ ]+) share_endbr_push=([^ ]+) share_placed=([^ ]+)$/| \1 | \2 | \3 (\6) | \4 (\7) | \5 (\8) |/'
		done
		# Issue 26 asks for every libc pthread function: those alone.
		lib=$(ldd "$B/dynprof" | awk '/libc\.so/ { print $3 }')
		if [ -r "$lib" ]; then PROBE_SHARE_PREFIX=pthread_ "$B/bench/probe_share" "$lib" | sed -E 's/^lib=([^ ]+) functions=([0-9]+) at_entry=([0-9]+) endbr_push=([0-9]+) placed=([0-9]+) share_at_entry=([^ ]+) share_endbr_push=([^ ]+) share_placed=([^ ]+)$/| \1, pthread_* only | \2 | \3 (\6) | \4 (\7) | \5 (\8) |/'; fi
		echo
		echo "### The most a better site could reach: an emulated instruction anywhere in the entry block that runs once per call (bench/probe_ceiling.sh, objdump)"
		echo "| library | functions | such a site | none in the entry block | a branch lands before it | an indirect jmp in the function |"
		echo "| --- | --- | --- | --- | --- | --- |"
		for lib in "$(ldd "$B/dynprof" | awk '/libc\.so/ { print $3 }')" \
			"$(ldconfig -p | awk '/libstdc\+\+\.so\.6 .*x86-64/ { print $NF; exit }')"; do
			[ -r "$lib" ] || continue
			"$(dirname "$0")/probe_ceiling.sh" "$lib" | sed -E 's/^lib=([^ ]+) functions=([0-9]+) site=([0-9]+) none=([0-9]+) back=([0-9]+) indirect=([0-9]+) share=([^ ]+)$/| \1 | \2 | \3 (\7) | \4 | \5 | \6 |/'
		done
		lib=$(ldd "$B/dynprof" | awk '/libc\.so/ { print $3 }')
		if [ -r "$lib" ]; then PROBE_SHARE_PREFIX=pthread_ "$(dirname "$0")/probe_ceiling.sh" "$lib" | sed -E 's/^lib=([^ ]+) functions=([0-9]+) site=([0-9]+) none=([0-9]+) back=([0-9]+) indirect=([0-9]+) share=([^ ]+)$/| \1, pthread_* only | \2 | \3 (\7) | \4 | \5 | \6 |/'; fi
	fi
}

# One precision run at GAP ms between calls, KIND slow or stall: WINDOWS
# windows, each after an anomaly; appends "latency_us" lines to $W/prec.KIND.GAP.
precision_run() { # precision_run KIND GAP
	local kind=$1 gap=$2 n acts=() rule pid
	n=$(( 400 / gap + 5 )) # 0.4 s of calls between anomalies, for the window (50 ms) to close
	for _ in $(seq $WINDOWS); do
		if [ $kind = slow ]; then acts+=(step=$n,0,$gap step=1,60,$gap)
		else acts+=(step=$n,0,$gap step=1,1,0 sleep=400); fi
	done
	if [ $kind = slow ]; then rule="start=slow:stepper:dp_step>30ms,stop=+50ms,repeat=$WINDOWS"
	else rule="start=stall:stepper:dp_step>200ms,stop=call:stepper:dp_step#1,repeat=$WINDOWS"; fi
	# The calls after the last anomaly end its window (a stall's stop is the next call).
	agent_env STEPPER_LOG_RETURNS=1 STEPPER_LOG_MIN_MS=1 "$B/tests/peers/stepper" open=$W/davinci0 sleep=300 \
		"${acts[@]}" step=$n,0,$gap pause > $W/st.$kind.$gap 2>&1 &
	pid=$!; pids+=($pid); wait_socket $pid
	timeout 120 "$B/dynprof" --pid=$pid --output=$W/po.$kind.$gap "--window=$rule" < /dev/null > $W/pdp.$kind.$gap 2>&1
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	# The reference of window k: the k-th logged return (+ DURATION for a
	# stall, whose last call entered ~1 ms before it returned).
	sed -n 's/^stepper: return us=//p' $W/st.$kind.$gap > $W/ref.$kind.$gap
	sed -nE 's/.*"start":\{[^}]*"ack_us":([0-9]+).*/\1/p' $W/po.$kind.$gap/*_dynprof_windows 2>/dev/null |
		paste -d' ' $W/ref.$kind.$gap - | awk -v k=$kind 'NF == 2 {
			ref = $1 + (k == "stall" ? 200000 - 1000 : 0); print $2 - ref }' >> $W/prec.$kind.$gap
}

precision_section() {
	local kind gap
	echo
	echo "### Anomaly precision: the slow call's return (or the stall's start + DURATION) -> START acknowledged, $WINDOWS windows per rate"
	echo "| anomaly | calls/s between | windows | median | p99 |"
	echo "| --- | --- | --- | --- | --- |"
	for kind in slow stall; do
		for gap in "${GAPS[@]}"; do
			: > $W/prec.$kind.$gap
			precision_run $kind $gap
			echo "| $( [ $kind = slow ] && echo 'slow:>30ms (a 60 ms call)' || echo 'stall:>200ms (a 400 ms pause)') |" \
			     "$((1000 / gap)) | $(wc -l < $W/prec.$kind.$gap)/$WINDOWS |" \
			     "$(med $W/prec.$kind.$gap) µs | $(p99 $W/prec.$kind.$gap) µs |"
		done
	done
}

[ "$COST_ROUNDS" -gt 0 ] && cost_section
[ "$WINDOWS" -gt 0 ] && precision_section
exit 0
