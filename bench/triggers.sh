#!/usr/bin/env bash
# Call-count triggers (--window=start=call:LIB:SYMBOL#N), two benchmarks:
#  1. precision: calls the target makes between the N-th call (the trigger)
#     and dynprof holding START's acknowledgement, and the fired -> ack
#     latency, at several call rates; read from the window record
#     (<output>/<dynprof pid>_dynprof_windows); plus 1000/s with --output
#     on tmpfs, to show what the target's START spends writing files. Runs
#     take turns, round by round, so the machine's noise spreads over all.
#  2. probe cost: the target's call rate with dynprof's counting uprobe
#     attached (a rule that never fires) against without, alternating
#     rounds, for demo_step's body and (x86-64) for two empty functions that
#     differ only in their first instruction, which decides a uprobe's cost.
# The target is bench/call_loop (paced on deadlines) with the agent
# preloaded. Needs root (uprobes, mknod). Results: docs/BENCHMARKS.md.
#   BENCH_TRIGGER_ROUNDS=0 or BENCH_PROBE_ROUNDS=0 skips a part;
#   BENCH_TRIGGER_KEEP=1 keeps the work files.
set -u
[ "$(id -u)" = 0 ] || { echo "bench/triggers.sh: needs root (uprobes, mknod): skipped"; exit 0; }
B=${DYNPROF_BUILD:-build}
ROUNDS=${BENCH_TRIGGER_ROUNDS:-4}         # precision: rounds over all rates
WINDOWS=${BENCH_TRIGGER_WINDOWS:-5}       # precision: windows per rate per round
COST_ROUNDS=${BENCH_PROBE_ROUNDS:-7}      # probe cost: rounds per variant
COST_SECONDS=${BENCH_PROBE_SECONDS:-2}    # probe cost: length of one measured run
RATES=(100 1000 10000 0)                  # calls/s; 0: as fast as bench_step runs
NEVER=1000000000000                       # a call count no run reaches
W=$(mktemp -d /tmp/dynprof-bench-trig.XXXXXX)
# A second output folder in memory: the same runs with the targets' PROF_
# folders on tmpfs show how much of START is the target writing files.
SHM=""
[ "$(df --output=fstype /dev/shm 2>/dev/null | tail -1)" = tmpfs ] && SHM=$(mktemp -d /dev/shm/dynprof-bench-trig.XXXXXX)
HOME_DIR=$(getent passwd "$(id -u)" | cut -d: -f6)
pids=()
cleanup() {
	kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null
	[ -n "$SHM" ] && rm -rf "$SHM"
	if [ -n "${BENCH_TRIGGER_KEEP:-}" ]; then echo "(work files kept in $W)"; else rm -rf "$W"; fi
}
trap cleanup EXIT
. "$(dirname "$0")/cards.sh"
bench_card $W/davinci0

# call_loop with the agent preloaded, holding the card; LOOP_PID once its
# socket listens. Not run in $(...): the loop must be this shell's child.
start_loop() { # start_loop OUT [call_loop options]
	local out=$1; shift
	PROFILING_MODE=dynamic DYNPROF_AGENT_DEVICES="$W/davinci*" LD_PRELOAD=$B/libdynprof_agent.so \
		"$B/bench/call_loop" --card=$W/davinci0 "$@" > "$out" 2>&1 &
	local pid=$!
	pids+=("$pid")
	for _ in $(seq 500); do
		[ -S "$HOME_DIR/dynamic_profiling_socket_$pid" ] && { LOOP_PID=$pid; return 0; }
		sleep 0.01
	done
	echo "call_loop $pid never opened its socket: $(cat "$out")" >&2
	exit 1
}

# The trigger: about 0.3 s of calls at the rate, so each window (50 ms) has
# closed long before the next threshold comes (a repeated start counts N
# more calls from the previous trigger).
threshold() { # threshold RATE
	if [ "$1" = 0 ]; then echo 30000; elif [ $(( $1 * 3 / 10 )) -lt 30 ]; then echo 30; else echo $(( $1 * 3 / 10 )); fi
}

# One precision run: WINDOWS windows at RATE, the targets writing into
# OUTROOT; appends "extra latency_us count N window" per window to
# $W/prec.KEY and the measured call rate to $W/rate.KEY.
precision_run() { # precision_run ROUND RATE KEY OUTROOT
	local tag=r$1-$3 n pid
	n=$(threshold $2)
	start_loop $W/loop.$tag --rate=$2; pid=$LOOP_PID
	timeout 120 "$B/dynprof" --pid=$pid --output=$4/o.$tag \
		--window=start=call:call_loop:bench_step#$n,stop=+50ms,repeat=$WINDOWS < /dev/null > $W/dp.$tag 2>&1 ||
		echo "dynprof failed at $3 (round $1): $(tail -3 $W/dp.$tag)" >&2
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	awk -v n=$n -v rates=$W/rate.$3 '
		function num(key,   m) { m = match($0, "\"" key "\":[0-9]+"); return m ? substr($0, RSTART + length(key) + 3, RLENGTH - length(key) - 3) + 0 : -1 }
		{
			c = num("count"); print num("ack_count") - c, num("ack_us") - num("fired_us"), c, n, num("window")
			if (NR == 1) { c0 = c; f0 = num("fired_us") } else { c1 = c; f1 = num("fired_us") }
		}
		END { if (NR > 1 && f1 > f0) print (c1 - c0) * 1e6 / (f1 - f0) >> rates }
	' $4/o.$tag/*_dynprof_windows >> $W/prec.$3 2>/dev/null
	[ "$4" = "$W" ] || rm -rf "$4/o.$tag"
}

# Median and max of column COL of FILE.
med() { cut -d' ' -f$2 "$1" | sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "-" }'; }
max() { cut -d' ' -f$2 "$1" | sort -n | tail -1; }
rate_label() { [ "$1" = 0 ] && echo "flat out" || echo "$1/s"; }

precision_section() {
	local runs=() r k v
	for v in "${RATES[@]}"; do runs+=("$v $v $W"); done
	[ -n "$SHM" ] && runs+=("1000 1000-tmpfs $SHM")
	echo "### Trigger precision: the N-th call -> START acknowledged, $ROUNDS rounds x $WINDOWS windows per rate"
	for r in $(seq $ROUNDS); do
		# Rotate the order each round: no run always follows the busy flat-out one.
		for k in $(seq 0 $(( ${#runs[@]} - 1 ))); do
			precision_run $r ${runs[$(( (k + r) % ${#runs[@]} ))]}
		done
	done
	echo "(--output on $(df --output=fstype $W | tail -1); each START makes a PROF_ folder there)"
	echo "| asked rate | measured calls/s (median of runs) | N | windows | first window at call N | extra calls median | extra calls max | fired -> ack median | fired -> ack max |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	for v in "${RATES[@]}"; do
		precision_row $v $v "$(rate_label $v)"
	done
	[ -n "$SHM" ] || return 0
	echo
	echo "### The same at 1000/s with --output on tmpfs, in the same rounds: what START's files cost"
	echo "| --output on | measured calls/s (median of runs) | N | windows | first window at call N | extra calls median | extra calls max | fired -> ack median | fired -> ack max |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	precision_row 1000 1000 "$(df --output=fstype $W | tail -1)"
	precision_row 1000 1000-tmpfs tmpfs
	awk -v a="$(med $W/prec.1000 2)" -v b="$(med $W/prec.1000-tmpfs 2)" 'BEGIN {
		if (b > 0) printf "(fired -> ack medians: %.2f times as long, %d µs more, with the files on disk)\n", a / b, a - b
	}'
}

precision_row() { # precision_row RATE KEY LABEL
	local f=$W/prec.$2 exact firsts rate
	[ -s $f ] || { echo "| $3 | no windows recorded | | | | | | | |"; return; }
	# The first window's trigger is the N-th call since the probe attached;
	# later ones count N from the previous window's close (not in the record).
	exact=$(awk '$5 == 1 && $3 == $4' $f | wc -l)
	firsts=$(awk '$5 == 1' $f | wc -l)
	rate=$(sort -n $W/rate.$2 | awk '{ v[NR] = $1 } END { printf "%.0f", v[int((NR + 1) / 2)] }')
	echo "| $3 | $rate | $(threshold $1) | $(wc -l < $f)/$((ROUNDS * WINDOWS)) | $exact/$firsts | $(med $f 1) | $(max $f 1) | $(med $f 2) µs | $(max $f 2) µs |"
}

# One probe-cost run: the loop's calls/s over COST_SECONDS, with or without
# dynprof counting. Run in $(...): its children are that subshell's.
cost_run() { # cost_run with|without ENTRY SYMBOL
	local tag=$1-$2-$RANDOM pid dp
	if [ $1 = with ]; then
		start_loop $W/cost.$tag --entry=$2 --seconds=$COST_SECONDS --wait-probe; pid=$LOOP_PID
		timeout 60 "$B/dynprof" --pid=$pid --output=$W/co.$tag \
			--window=start=call:call_loop:$3#$NEVER < /dev/null > $W/cdp.$tag 2>&1 &
		dp=$!
		wait $pid
		wait $dp # it ends by itself once its target has left
	else
		start_loop $W/cost.$tag --entry=$2 --seconds=$COST_SECONDS; pid=$LOOP_PID
		wait $pid
	fi
	sed -n 's/.* rate=\([0-9.]*\).*/\1/p' $W/cost.$tag
}

# The functions probed: bench_step (demo_step's body, compiled C), and on
# x86-64 two empty ones whose first instruction the kernel emulates (push)
# or must single-step out of line (a rip-relative mov).
ENTRIES=("step bench_step demo_step's hash, 4096 rounds (C; starts with a rip-relative mov)")
if [ "$(uname -m)" = x86_64 ]; then
	ENTRIES+=("push bench_push empty, first instruction push (emulated)")
	ENTRIES+=("mov bench_mov empty, first instruction rip-relative mov (single-stepped)")
fi

cost_section() {
	echo
	echo "### Probe cost: calls/s with dynprof's counting uprobe against without, $COST_ROUNDS alternating rounds of ${COST_SECONDS} s"
	echo "| probed function | without (median calls/s) | with uprobe (median calls/s) | with / without (median of rounds) | cost per call |"
	echo "| --- | --- | --- | --- | --- |"
	local detail="" e entry sym label r a b
	for e in "${ENTRIES[@]}"; do
		read -r entry sym label <<< "$e"
		: > $W/with.$entry; : > $W/without.$entry; : > $W/ratio.$entry
		for r in $(seq $COST_ROUNDS); do
			# Alternate which goes first, so a trend in the noise favours neither.
			if [ $((r % 2)) = 1 ]; then a=$(cost_run with $entry $sym); b=$(cost_run without $entry $sym)
			else b=$(cost_run without $entry $sym); a=$(cost_run with $entry $sym); fi
			echo $a >> $W/with.$entry; echo $b >> $W/without.$entry
			awk -v a=$a -v b=$b 'BEGIN { if (b > 0) printf "%.5f\n", a / b }' >> $W/ratio.$entry
		done
		awk -v mw="$(med $W/with.$entry 1)" -v mo="$(med $W/without.$entry 1)" -v ratio="$(med $W/ratio.$entry 1)" \
		    -v label="$label" 'BEGIN {
			printf "| %s | %.0f | %.0f | %.4f | %.2f µs |\n", label, mo, mw, ratio, (1e6 / mw - 1e6 / mo)
		}'
		detail+="$entry with: $(tr '\n' ' ' < $W/with.$entry)/ without: $(tr '\n' ' ' < $W/without.$entry); "
	done
	echo "(cost per call: 1/with - 1/without, from the medians. All rounds, calls/s: $detail)"
}

[ "$ROUNDS" -gt 0 ] && precision_section
[ "$COST_ROUNDS" -gt 0 ] && cost_section
exit 0
