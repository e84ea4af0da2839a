#!/usr/bin/env bash
# Follow mode (issue 12), side by side in one run:
#  1. what the monitor (dynprof --pid=auto --follow, idle, no target)
#     costs other processes: a getppid loop, an open+close storm, a
#     fork+exec storm and a compute-bound job (a fixed integer loop), each
#     run without and with the monitor, in turn every round (the order
#     alternating), medians and their ratio;
#  2. detection latency, card open -> target joined (connected, params
#     acknowledged: the --events target-join), for short jobs that open a
#     card once their agent's socket listens; with BENCH_SERVED=N, while N
#     other card users (agent preloaded) are joined and served already.
# BENCH_ROUNDS=0 skips part 1. BENCH_STALLED=1 (part 2): meanwhile one
# other user's job, in a mount namespace of its own (its results go
# through its helper), has its helper let run 1 ms a second in the middle
# of a window's copy (issue 24: no target may stall the loop); each job's
# join is timed as before, and a `--remote status` after each job
# (BENCH_STATUS=0: none, the joins alone with the held helper; a status of
# 1000 targets between two jobs leaves the caches cold for the next join).
# BENCH_JOB_MAPPINGS=N: each job maps N more file pages first (its maps N
# lines longer, as a real AI process's thousands: what a join reads of it
# shows). BENCH_JOB=torch: each job a real PyTorch process instead
# (bench/torch_job.py: python3 importing Debian's python3-torch, about 1700
# lines of maps; the run says so and stops where torch does not import).
# BENCH_JOB=torch-v2lib: the same, then a library named libprofimpl.so (a
# copy of libz: the name is what --protocol=auto reads) loaded after torch,
# where a v2 server's library is in a job that loads CANN through a plugin.
set -u
B=${DYNPROF_BUILD:-build}
ROUNDS=${BENCH_ROUNDS:-7}
SERVED=${BENCH_SERVED:-0}
W=$(mktemp -d /tmp/dynprof-bench-follow.XXXXXX)
HOME_DIR=$(getent passwd "$(id -u)" | cut -d: -f6)
mon=""
served=()
STALLED=${BENCH_STALLED:-0}
SU=""
cleanup() {
	[ -n "${FLOOR:-}" ] && kill $FLOOR 2>/dev/null
	[ -n "${DRIP:-}" ] && kill $DRIP 2>/dev/null
	[ -n "${HELPER:-}" ] && kill -CONT $HELPER 2>/dev/null
	[ -n "${STALLED_JOB:-}" ] && pkill -KILL -s "$STALLED_JOB" 2>/dev/null
	[ -n "$mon" ] && kill $mon 2>/dev/null
	[ ${#served[@]} -gt 0 ] && kill "${served[@]}" 2>/dev/null
	wait 2>/dev/null
	for p in "${served[@]}"; do rm -f "$HOME_DIR/dynamic_profiling_socket_$p"; done
	[ -n "$SU" ] && userdel "$SU" 2>/dev/null
	cp $W/mon.out $W/opens $W/events /tmp/ph/ 2>/dev/null; rm -rf "$W" "${SU_DIR:-}"
}
trap cleanup EXIT
# The monitor holds a connection per served target.
[ "$SERVED" -gt 0 ] && ulimit -n "$(ulimit -Hn)"
. "$(dirname "$0")/cards.sh"
bench_card $W/davinci0

# BENCH_NICE=N: the monitor runs at that nice value (as a unit's Nice= would set it).
monitor_on() { # monitor_on [dynprof args]: the follow monitor in the background, ready
	nice -n "${BENCH_NICE:-0}" "$B/dynprof" --pid=auto --follow --device="$W/davinci*" --output=$W/o "$@" < /dev/null \
		> $W/mon.out 2>&1 &
	mon=$!
	for _ in $(seq 200); do grep -q '^\[INFO\] following card users' $W/mon.out && return; sleep 0.05; done
	echo "the monitor did not start: $(cat $W/mon.out)"
	exit 1
}
monitor_off() { kill $mon; wait $mon 2>/dev/null; mon=""; }

declare -A res
one_round() { # one_round none|follow
	local w n
	for w in getppid open forkexec compute; do
		case $w in getppid) n=2000000 ;; open) n=200000 ;; forkexec) n=400 ;; compute) n=200000 ;; esac
		res[$1.$w]+="$("$B/bench/syscall_storm" $w $n | sed 's/ns_per_op=//') "
	done
}
middle() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

if [ "$ROUNDS" -gt 0 ]; then
	echo "### Follow mode: overhead on other processes, $ROUNDS rounds (without and with the monitor in turn)"
	for r in $(seq "$ROUNDS"); do
		for c in $([ $((r % 2)) = 0 ] && echo "none follow" || echo "follow none"); do
			[ $c = follow ] && monitor_on
			one_round $c
			[ $c = follow ] && monitor_off
		done
	done
	echo "| workload | without dynprof (median) | with dynprof --pid=auto --follow (median) | ratio |"
	echo "| --- | --- | --- | --- |"
	for w in getppid open forkexec compute; do
		a=$(echo "${res[none.$w]}" | middle); b=$(echo "${res[follow.$w]}" | middle)
		case $w in getppid) label="getppid() loop" ;; open) label="open+close /dev/null" ;;
			forkexec) label="fork+exec+wait /bin/true" ;; compute) label="compute: 1000 xorshift steps" ;; esac
		awk -v l="$label" -v a="$a" -v b="$b" -v us=$([ $w = forkexec ] && echo 1 || echo 0) 'BEGIN {
			if (us) printf "| %s | %.0f µs | %.0f µs | %.3f |\n", l, a / 1000, b / 1000, b / a
			else printf "| %s | %.0f ns | %.0f ns | %.3f |\n", l, a, b, b / a }'
	done
fi

# serve SERVED: that many card users on nodes of their own (250 a node:
# bench/cards.sh), joined by the monitor before the jobs start.
serve() {
	local nodes=() k i
	for ((k = 2; (k - 2) * 250 < $1; k++)); do
		nodes+=($W/davinci$(printf "%0${k}d" 0))
		bench_card ${nodes[-1]}
	done
	for ((i = 0; i < $1; i++)); do
		PROFILING_MODE=dynamic LD_PRELOAD="$B/libdynprof_agent.so" DYNPROF_AGENT_DEVICES="$W/davinci*" \
			"$B/tests/peers/card_user" ${nodes[i % ${#nodes[@]}]} 3600 < /dev/null > /dev/null 2>&1 &
		served+=($!)
	done
	for _ in $(seq 1200); do
		[ "$(grep -c '"event":"target-join"' $W/events 2>/dev/null)" -ge "$1" ] && return
		sleep 0.1
	done
	echo "the monitor did not join the $1 served targets: $(grep -c '"event":"target-join"' $W/events)"
	exit 1
}

# stall: a user's job in its own mount namespace ($W hidden there: its
# results go through its helper), joined; a window opened, its helper
# stopped, the window stopped: its copy waits (--window-copy-time=600s)
# for the rest of the run. The run's own user, removed at the end.
stall() {
	SU=dpbst$$
	SU_DIR=$(mktemp -d /tmp/dynprof-bench-stall.XXXXXX)
	useradd -M -N -s /bin/sh -d "$SU_DIR/home" "$SU" > /dev/null || { echo "useradd failed"; exit 1; }
	mkdir -p "$SU_DIR/home" "$SU_DIR/dev" && chown "$SU" "$SU_DIR/home" && chmod 755 "$SU_DIR"
	mknod "$SU_DIR/dev/davinci0" c $(stat -c '%t %T' $W/davinci0 | while read -r a b; do echo $((16#$a)) $((16#$b)); done)
	chmod 666 "$SU_DIR/dev/davinci0"
	setsid unshare --mount --propagation private sh -c "mount -t tmpfs tmpfs $W && exec setpriv \
		--reuid=$(id -u $SU) --regid=$(id -g $SU) --clear-groups --inh-caps=-all env HOME=$SU_DIR/home \
		PROFILING_MODE=dynamic LD_PRELOAD=$B/libdynprof_agent.so DYNPROF_AGENT_DEVICES='$SU_DIR/dev/davinci*' \
		$B/tests/peers/card_user $SU_DIR/dev/davinci0 3600" < /dev/null > $W/stalled.out 2>&1 &
	STALLED_JOB=$!
	local pid="" _
	for _ in $(seq 200); do
		pid=$(pgrep -u "$SU" -f tests/peers/card_user | head -1)
		[ -n "$pid" ] && grep -q '"event":"target-join".*"pid":'"$pid"'[,}]' $W/events 2>/dev/null && break
		pid=""; sleep 0.05
	done
	[ -n "$pid" ] || { echo "the stalled user's job was not joined: $(cat $W/stalled.out $W/mon.out)"; exit 1; }
	"$B/dynprof" --remote=$W/ctl start > /dev/null || { echo "no window: $(cat $W/mon.out)"; exit 1; }
	HELPER=$(pgrep -P $mon -u "$SU" | head -1)
	[ -n "$HELPER" ] || { echo "no helper of the stalled job"; exit 1; }
	local prof; prof=$(ls -d "$SU_DIR"/home/.dynprof/*/PROF_*/host 2> /dev/null | head -1)
	[ -n "$prof" ] || { echo "no window folder in the job's home"; exit 1; }
	head -c 67108864 /dev/zero > "$prof/fill" # 64 MiB to copy out
	kill -STOP $HELPER
	"$B/dynprof" --remote=$W/ctl stop > /dev/null 2>&1 &
	# Let run 1 ms a second: each of its answers within the 5 s a message
	# may take (a helper stopped outright is killed then), the copy never
	# done (--window-copy-time=600s).
	(while kill -CONT $HELPER 2> /dev/null; do sleep 0.001; kill -STOP $HELPER 2> /dev/null; sleep 1; done) &
	DRIP=$!
	sleep 0.5
	echo "(user $SU's job $pid: its helper $HELPER let run 1 ms a second in its window's 64 MiB copy)"
}
status_ms() { # one `--remote status`, its wall time in ms appended to $W/status
	local t0; t0=$(date +%s%N)
	"$B/dynprof" --remote=$W/ctl status > /dev/null 2>&1
	echo $((($(date +%s%N) - t0) / 1000)) >> $W/status
}

JOB=("$B/bench/card_job")
if [ "${BENCH_JOB:-}" = torch ] || [ "${BENCH_JOB:-}" = torch-v2lib ]; then
	PY=${BENCH_PYTHON:-/usr/bin/python3}
	"$PY" -c 'import torch' 2> /dev/null || { echo "BENCH_JOB=torch: $PY cannot import torch (Debian: apt-get install python3-torch)" >&2; exit 1; }
	JOB=("$PY" "$(dirname "$0")/torch_job.py")
	if [ "$BENCH_JOB" = torch-v2lib ]; then
		mkdir -p $W/lib && cp "$(ldconfig -p | awk '/libz\.so\.1 .*x86-64/ { print $NF; exit }')" $W/lib/libprofimpl.so || exit 1
		export TORCH_JOB_LOAD=$W/lib/libprofimpl.so
	fi
fi
echo
N=${BENCH_JOBS:-60}
echo "### Follow mode: detection latency, card open -> target joined, $N jobs one after another$([ "$SERVED" -gt 0 ] && echo ", $SERVED other targets served")$([ -n "${BENCH_JOB_MAPPINGS:-}" ] && echo ", each job with $BENCH_JOB_MAPPINGS more mappings")$([ "${BENCH_JOB:-}" = torch ] && echo ", each job a PyTorch process")$([ "${BENCH_JOB:-}" = torch-v2lib ] && echo ", each job a PyTorch process with a libprofimpl.so loaded after torch")"
if [ "$STALLED" = 1 ]; then
	chmod 755 $W
	monitor_on --events=json:$W/events --control=unix:$W/ctl --window-copy-time=600s
else
	monitor_on --events=json:$W/events
fi
[ "$SERVED" -gt 0 ] && serve "$SERVED"
[ "$STALLED" = 1 ] && stall
"$B/bench/wakeup" $W/floor &
FLOOR=$!
# The monitor's CPU time (utime + stime of all its threads, those gone too; clock ticks) over the jobs.
cpu_ticks() { sed 's/.*) //' /proc/$mon/stat | awk '{ print $12 + $13 }'; }
ticks0=$(cpu_ticks)
jobs_t0=$(date +%s%N)
for _ in $(seq "$N"); do
	env LD_PRELOAD="$B/libdynprof_agent.so" PROFILING_MODE=dynamic DYNPROF_AGENT_DEVICES="$W/davinci*" \
		"${JOB[@]}" $W/davinci0 300 ${BENCH_JOB_MAPPINGS:-} >> $W/opens
	[ "$STALLED" = 1 ] && [ "${BENCH_STATUS:-1}" = 1 ] && status_ms
done
[ "$STALLED" = 1 ] && { kill -0 $HELPER 2>/dev/null && ! grep -q "window (saved|lost)" <(grep -E "pid ${STALLED_JOB} " $W/mon.out) ||
	echo "(the helper's copy ended before the jobs did: the figures are not all of a stalled loop)"; }
kill -TERM $FLOOR && wait $FLOOR
FLOOR=""
ticks1=$(cpu_ticks)
jobs_t1=$(date +%s%N)
sleep 0.5
monitor_off
# Join time minus the job's time just before open(), per pid, in µs.
awk 'NR == FNR { opened[$1] = $2; next }
     /"event":"target-join"/ {
	match($0, /"pid":[0-9]+/); pid = substr($0, RSTART + 6, RLENGTH - 6)
	match($0, /"time_us":[0-9]+/); t = substr($0, RSTART + 10, RLENGTH - 10)
	if (pid in opened) print t - opened[pid], pid
     }' $W/opens $W/events | sort -n > $W/latpid
cut -d' ' -f1 $W/latpid > $W/lat
# A join over 20 ms: what the monitor said of that pid (a retry, a soon look...).
awk '$1 > 20000 { print $2, $1 }' $W/latpid | while read -r pid us; do
	echo "(slow join: pid $pid after $((us / 1000)) ms; the monitor of it: $(grep -E "pid $pid[ :)]" $W/mon.out | head -3 | tr '\n' ' '))"
done
# BENCH_LAT_OUT=FILE: each job's latency (µs) kept, to pool the runs of
# several builds; FILE.floor the host's round trips of the same time.
sort -n $W/floor -o $W/floor
[ -n "${BENCH_LAT_OUT:-}" ] && cp $W/lat "$BENCH_LAT_OUT" && cp $W/floor "$BENCH_LAT_OUT.floor"
n=$(wc -l < $W/lat)
at() { [ "$n" -gt 0 ] && awk -v k=$(( (n * $1 + 99) / 100 )) 'NR == k { printf "%.2f ms", $1 / 1000 }' $W/lat || echo -; }
f=$(wc -l < $W/floor)
fat() { [ "$f" -gt 0 ] && awk -v k=$(( (f * $1 + 99) / 100 )) 'NR == k { printf "%.0f µs", $1 }' $W/floor || echo -; }
echo "| jobs joined | median | p99 | max |"
echo "| --- | --- | --- | --- |"
echo "| $n/$N | $(at 50) | $(at 99) | $(at 100) |"
echo
echo "The host's floor meanwhile (bench/wakeup: a round trip between two sleeping processes over a unix socket every 10 ms, nothing of dynprof in it; a join is about five such wake-ups):"
echo "| round trips | median | p99 | max |"
echo "| --- | --- | --- | --- |"
echo "| $f | $(fat 50) | $(fat 99) | $(fat 100) |"
echo
awk -v t=$((ticks1 - ticks0)) -v hz=$(getconf CLK_TCK) -v ns=$((jobs_t1 - jobs_t0)) 'BEGIN {
	printf "The monitor'"'"'s CPU time over the jobs (user + system, all its threads): %.0f ms in %.1f s, %.1f%% of a core\n",
		t * 1000 / hz, ns / 1e9, t * 1e11 / hz / ns }'
if [ "$STALLED" = 1 ] && [ -s $W/status ]; then
	sort -n $W/status -o $W/status
	m=$(wc -l < $W/status)
	sat() { awk -v k=$(( (m * $1 + 99) / 100 )) 'NR == k { printf "%.1f ms", $1 / 1000 }' $W/status; }
	echo
	echo "\`--remote status\` (the client's whole run) meanwhile:"
	echo "| calls | median | p99 | max |"
	echo "| --- | --- | --- | --- |"
	echo "| $m | $(sat 50) | $(sat 99) | $(sat 100) |"
fi
