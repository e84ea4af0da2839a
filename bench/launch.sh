#!/usr/bin/env bash
# Launch-mode benchmark (issue 4): time from a worker's socket coming up to
# its `start` being acknowledged when the window is already open, dynprof's
# launch mode against an msprof-style client that polls for the socket once
# a second, alternating in one run. Socket time: the socket file's ctime
# (set by bind); start time: the window's collectionTimeBegin (start_info).
set -u
B=${DYNPROF_BUILD:-build}
ROUNDS=${BENCH_LAUNCH_ROUNDS:-5}
W=$(mktemp -d /tmp/dynprof-bench-launch.XXXXXX)
HOME_DIR=$(getent passwd "$(id -u)" | cut -d: -f6)
trap 'rm -rf $W' EXIT
. "$(dirname "$0")/cards.sh"
bench_card $W/davinci0

# The socket's ctime in µs, once it appears (polled every 2 ms).
socket_us() { # socket_us PID
	local s=$HOME_DIR/dynamic_profiling_socket_$1
	for _ in $(seq 2500); do [ -S $s ] && break; sleep 0.002; done
	echo $(( $(date -d "$(stat -c %z $s)" +%s%N) / 1000 ))
}
begin_us() { # begin_us DIR: collectionTimeBegin of the one PROF_ folder in DIR
	grep -o '"collectionTimeBegin":[[:space:]]*"*[0-9]*' "$DIR"$1/PROF_*/host/start_info | grep -o '[0-9]*$'
}
worker_cmd="env LD_PRELOAD=$B/libdynprof_agent.so DYNPROF_AGENT_DEVICES=$W/davinci* $B/tests/peers/card_user $W/davinci0 3"

launch_round() { # the window is open before the worker starts
	local out=$W/l$1
	mkfifo $W/in$1
	"$B/dynprof" --dynamic=on --output=$out --device="$W/davinci*" sh -c "sleep 0.5; exec $worker_cmd" \
		< $W/in$1 > $W/l$1.log 2>&1 &
	local dp=$!
	exec 8> $W/in$1
	echo start >&8
	local pid=""
	for _ in $(seq 500); do pid=$(grep -o 'ready [0-9]*' $W/l$1.log | grep -o '[0-9]*'); [ -n "$pid" ] && break; sleep 0.002; done
	local up; up=$(socket_us $pid)
	wait_start $W/l$1.log
	echo quit >&8; exec 8>&-
	wait $dp
	echo $(( $(begin_us $out) - up ))
}

poll_round() { # msprof-style: look for the socket once a second, then attach
	local out=$W/p$1
	PROFILING_MODE=dynamic $worker_cmd > $W/p$1.w 2>&1 &
	local pid=$!
	local up; up=$(socket_us $pid)
	while [ ! -S $HOME_DIR/dynamic_profiling_socket_$pid ]; do sleep 1; done
	sleep 1 # msprof: the next one-second tick finds it
	echo start | "$B/dynprof" --pid=$pid --output=$out > $W/p$1.log 2>&1
	wait $pid
	echo $(( $(begin_us $out) - up ))
}

wait_start() { for _ in $(seq 1000); do grep -q 'start success' $1 && return; sleep 0.005; done; }

DIR=""
l=() p=()
for r in $(seq $ROUNDS); do
	l+=("$(launch_round $r)")
	p+=("$(poll_round $r)")
done
med() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
ml=$(med "${l[@]}"); mp=$(med "${p[@]}")
echo "### Join latency: socket up -> start acknowledged, window already open, $ROUNDS rounds each"
echo "| dynprof launch mode (median) | msprof-style 1 s polling (median) | ratio |"
echo "| --- | --- | --- |"
echo "| $((ml / 1000)).$(( (ml % 1000) / 100 )) ms | $((mp / 1000)) ms | $(awk -v a=$mp -v b=$ml 'BEGIN { printf "%.0f", a / b }') |"
echo "(all rounds, µs: launch ${l[*]}; polling ${p[*]})"
