#!/usr/bin/env bash
# --host-sys=osrt against the tracers msprof and users reach for (issue 26),
# side by side in one run: each round runs every workload (bench/osrt_load:
# open+read+close, getppid, 4 threads on one contended mutex, a compute
# loop; orc-main: the open+read+close loop on the main thread) alone and under each tracer, attached to the running target, the
# configurations in a rotating order. The target's workload threads are
# created after the tracer attached (a tracer must follow them), but for
# orc-main, whose calls are on a thread the tracer saw. Configurations:
#   alone     nothing attached;
#   dynprof   dynprof --pid=P --host-sys=osrt, a window open (the target
#             preloads the agent; every configuration runs it so);
#   dynprof-kept  dynprof --pid=P --host-sys=osrt --host-sys-before=2s and
#             no window open: what keeping the last 2 s between windows costs;
#   floor     bpftrace, raw_syscalls sys_enter+sys_exit filtered on the
#             pid with an empty program: what enabling the tracepoints costs;
#   bpf-agg   bpftrace counting and timing calls per thread in the kernel;
#   bpf-print bpftrace printing every completed call;
#   perf      perf trace -T --syscalls -p P (msprof's script);
#   strace    strace -f -p P;
#   ltrace    ltrace -ttt -T -e <msprof's pthread list> -p P (msprof's script);
#   dynprof-base  dynprof as above, the binary OSRT_DYNPROF_BASE (the build
#             before a change: before and after side by side in one run; not
#             in the default list);
#   dynprof+agg  dynprof and bpf-agg on the same run: their counts compared
#             where the calls made are not known (the mutex's futex calls)
#             (its time is both tracers': not a row to read a cost from).
# The slow ones (bpf-print, perf, strace, ltrace) run 1/SLOW of the calls
# (default 10): their ratio is time per operation against alone's.
# Reported: median ratio to alone (and the ratio of the best rounds: this
# machine is shared), added ns per system call (per lock+unlock for the
# mutex) and that against the floor's, and the calls each tracer recorded
# of the workload threads' calls (dynprof's and the bpftrace counters' must
# equal them; a count short of it is reported, never fixed up).
# OSRT_DYNPROF: another dynprof binary (build/tests/dynprof-tinyring loses
# records on purpose: its rows must then show fewer recorded and "lost").
# QUICK=1: one round, sizes / 20 (a smoke run). OSRT_ROUNDS=N rounds;
# OSRT_WORKLOADS, OSRT_CONFIGS: a subset (words of the lists above).
# Needs root, tracefs (mounted here at /sys/kernel/tracing when missing)
# and perf, strace, ltrace, bpftrace (tools/install-deps.sh bench).
# Acts only on processes it started.
set -u
B=${DYNPROF_BUILD:-build}
DP=${OSRT_DYNPROF:-$B/dynprof}
QUICK=${QUICK:-0}
ROUNDS=${OSRT_ROUNDS:-$([ "$QUICK" = 1 ] && echo 1 || echo 3)}
SLOW=${SLOW:-10}
DIV=$([ "$QUICK" = 1 ] && echo 20 || echo 1)
W=$(mktemp -d /tmp/dynprof-bench-osrt.XXXXXX)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
trap '' PIPE # a dynprof that ended: the write to its fifo fails, the script goes on
. "$(dirname "$0")/cards.sh"
bench_card $W/davinci0

declare -A SIZE=([orc]=200000 [orc-main]=200000 [getppid]=2000000 [mutex]=100000 [compute]=200000)
# x86_64 system call numbers of each workload's calls (bpftrace's args->id).
declare -A IDS=([orc]="257 0 3" [orc-main]="257 0 3" [getppid]="110" [mutex]="202" [compute]="")
declare -A NAMES=([orc]="openat read close" [orc-main]="openat read close" [getppid]="getppid" [mutex]="futex" [compute]="")
read -ra WORKLOADS <<< "${OSRT_WORKLOADS:-orc orc-main getppid mutex compute}"
read -ra CONFIGS <<< "${OSRT_CONFIGS:-alone dynprof dynprof-kept floor bpf-agg bpf-print perf strace ltrace dynprof+agg}"

# The tools of the configurations asked for (OSRT_CONFIGS may leave the others out).
needs() { case " ${CONFIGS[*]} " in *" $1 "*) return 0 ;; esac; return 1; }
need_tool() { needs $1 && ! command -v $2 > /dev/null && { echo "osrt bench: $2 missing (tools/install-deps.sh bench)"; exit 1; }; return 0; }
need_tool perf perf
needs dynprof-base && ! [ -x "${OSRT_DYNPROF_BASE:-}" ] && { echo "osrt bench: dynprof-base needs OSRT_DYNPROF_BASE, a dynprof binary"; exit 1; }
need_tool strace strace
need_tool ltrace ltrace
for c in floor bpf-agg bpf-print dynprof+agg; do need_tool $c bpftrace; done
# tracefs: perf trace and bpftrace's tracepoints need it; a fresh machine here has none mounted.
TRACEFS=/sys/kernel/tracing
if { needs perf || needs floor || needs bpf-agg || needs bpf-print || needs dynprof+agg; } &&
	[ ! -e $TRACEFS/events/raw_syscalls ]; then
	mount -t tracefs nodev $TRACEFS 2>/dev/null && echo "(mounted tracefs at $TRACEFS)" ||
		{ echo "osrt bench: no tracefs at $TRACEFS and cannot mount it (root needed): perf trace and bpftrace cannot run"; exit 1; }
fi
is_slow() { case $1 in bpf-print | perf | strace | ltrace) return 0 ;; esac; return 1; }

# wait_for FILE REGEX TENTHS
wait_for() { for _ in $(seq "$3"); do grep -Eq "$2" "$1" 2> /dev/null && return 0; sleep 0.1; done; return 1; }

tracer_start() { # tracer_start CONFIG PID: attach, wait until attached; TPID set
	local c=$1 p=$2 prog
	TPID=""
	case $c in
	alone) return 0 ;;
	dynprof+agg)
		tracer_start dynprof $p || return 1
		DPID=$TPID
		tracer_start bpf-agg $p || return 1
		return 0
		;;
	dynprof | dynprof-base)
		rm -f $W/in && mkfifo $W/in
		"$([ $c = dynprof ] && echo "$DP" || echo "$OSRT_DYNPROF_BASE")" --pid=$p --output=$W/o --host-sys=osrt < $W/in > $W/dp.err 2>&1 &
		TPID=$!
		exec 7> $W/in
		printf 'start\n' >&7
		wait_for $W/dp.err 'start success' 150 || { echo "dynprof: no window: $(cat $W/dp.err)" >&2; return 1; }
		;;
	dynprof-kept) # joined (its calls watched from the join, kept 2 s), no window
		rm -f $W/in && mkfifo $W/in
		"$DP" --pid=$p --output=$W/o --host-sys=osrt --host-sys-before=2s < $W/in > $W/dp.err 2>&1 &
		TPID=$!
		exec 7> $W/in
		wait_for $W/dp.err 'Start profiling' 150 || { echo "dynprof: not joined: $(cat $W/dp.err)" >&2; return 1; }
		;;
	perf)
		perf trace -T --syscalls -p $p -o $W/tr.out 2> $W/tr.err &
		TPID=$!
		sleep 1 # no sign of being attached; msprof's script waits 1 s
		;;
	strace)
		strace -f -p $p -o $W/tr.out 2> $W/tr.err &
		TPID=$!
		wait_for $W/tr.err 'attached' 100 || { echo "strace did not attach: $(cat $W/tr.err)" >&2; return 1; }
		;;
	ltrace)
		ltrace -ttt -T -e pthread_attr_init -e pthread_create -e pthread_join -e pthread_mutex_init \
			-p $p -o $W/tr.out 2> $W/tr.err &
		TPID=$!
		sleep 1 # no sign of being attached either
		;;
	floor | bpf-agg | bpf-print)
		case $c in
		floor) prog="tracepoint:raw_syscalls:sys_enter /pid == $p/ {} tracepoint:raw_syscalls:sys_exit /pid == $p/ {}" ;;
		bpf-agg) prog="tracepoint:raw_syscalls:sys_enter /pid == $p/ { @s[tid] = nsecs; }
			tracepoint:raw_syscalls:sys_exit /pid == $p && @s[tid]/ { @c[tid, args->id] = count(); @t[tid, args->id] = sum(nsecs - @s[tid]); delete(@s[tid]); }
			END { clear(@s); }" ;;
		bpf-print) prog="tracepoint:raw_syscalls:sys_enter /pid == $p/ { @s[tid] = nsecs; }
			tracepoint:raw_syscalls:sys_exit /pid == $p && @s[tid]/ { printf(\"%d %d %d\\n\", tid, args->id, nsecs - @s[tid]); delete(@s[tid]); }
			END { clear(@s); }" ;;
		esac
		bpftrace -e "$prog" > $W/tr.out 2> $W/tr.err &
		TPID=$!
		wait_for $W/tr.out 'Attaching' 300 || { echo "bpftrace did not attach: $(cat $W/tr.out $W/tr.err)" >&2; return 1; }
		sleep 0.3 # "Attaching N probes..." is printed before the attach
		;;
	esac
	pids+=("$TPID")
}

tracer_stop() { # tracer_stop CONFIG
	if [ "$1" = dynprof+agg ]; then
		tracer_stop bpf-agg
		TPID=${DPID:-}
		tracer_stop dynprof
		return
	fi
	[ -n "$TPID" ] || return 0
	if [ "$1" = dynprof ] || [ "$1" = dynprof-base ] || [ "$1" = dynprof-kept ]; then
		# it may have ended already: the target's exit ends its window (saved),
		# and with its last target gone dynprof ends too
		printf 'stop\nquit\n' >&7 2> /dev/null
		exec 7>&-
	else
		kill -INT $TPID 2> /dev/null
	fi
	for _ in $(seq 300); do kill -0 $TPID 2> /dev/null || break; sleep 0.1; done
	kill -KILL $TPID 2> /dev/null
	wait $TPID 2> /dev/null
}

# recorded CONFIG WORKLOAD TIDS: the calls of the workload's threads the tracer recorded.
recorded() {
	local c=$1 w=$2 tids=$3 f
	case $c in
	alone | floor | dynprof-kept) echo - ;;
	dynprof | dynprof-base)
		f=$(find $W/o -name dynprof_host_summary.txt 2> /dev/null | head -1)
		[ -n "$f" ] || { echo 0; return; }
		awk -v tids=",$tids," -v names=" ${NAMES[$w]} " '
			/^thread / { on = index(tids, "," $2 ",") > 0 }
			on && NF >= 7 && index(names, " " $NF " ") { n += $4 }
			END { print n + 0 }' "$f" ;;
	bpf-agg)
		awk -v tids=",$tids," -v ids=" ${IDS[$w]} " -F'[][,: ]+' '
			/^@c\[/ && index(tids, "," $2 ",") && index(ids, " " $3 " ") { n += $4 }
			END { print n + 0 }' $W/tr.out ;;
	bpf-print)
		awk -v tids=",$tids," -v ids=" ${IDS[$w]} " 'NF == 3 && index(tids, "," $1 ",") && index(ids, " " $2 " ") { n++ }
			END { print n + 0 }' $W/tr.out ;;
	perf)
		awk -v tids=",$tids," -v names=" ${NAMES[$w]} " '
			match($0, /\/[0-9]+ [a-z_0-9]+\(/) {
				s = substr($0, RSTART + 1, RLENGTH - 2); split(s, a, " ")
				if (index(tids, "," a[1] ",") && index(names, " " a[2] " ")) n++ }
			END { print n + 0 }' $W/tr.out ;;
	strace)
		awk -v tids=",$tids," -v names=" ${NAMES[$w]} " '
			match($2, /^[a-z_0-9]+\(/) { s = substr($2, 1, RLENGTH - 1)
				if (index(tids, "," $1 ",") && index(names, " " s " ")) n++ }
			END { print n + 0 }' $W/tr.out ;;
	ltrace) # its list has no call of the workload threads: the pthread_create/join of main, 2 per thread
		grep -Ec 'pthread_(create|join)\(' $W/tr.out ;;
	esac
}

declare -A T N REC FAIL
run_one() { # run_one CONFIG WORKLOAD
	local c=$1 w=$2 n=${SIZE[$2]} tp line ns calls tids
	n=$((n / DIV))
	is_slow $c && n=$((n / SLOW))
	rm -rf $W/go $W/o $W/tr.out $W/tr.err $W/dp.err $W/t.out
	env PROFILING_MODE=dynamic LD_PRELOAD="$B/libdynprof_agent.so" DYNPROF_AGENT_DEVICES="$W/davinci*" \
		"$B/bench/osrt_load" $w $n $W/go $W/davinci0 > $W/t.out 2>&1 &
	tp=$!
	pids+=("$tp")
	wait_for $W/t.out '^ready' 50 || { echo "target did not start" >&2; exit 1; }
	if [[ $c == dynprof* ]]; then
		for _ in $(seq 50); do
			[ -S "$(getent passwd "$(id -u)" | cut -d: -f6)/dynamic_profiling_socket_$tp" ] && break
			sleep 0.05
		done
	fi
	if ! tracer_start $c $tp; then
		FAIL[$c.$w]+="attach "
		tracer_stop $c
		kill $tp 2> /dev/null; wait $tp 2> /dev/null
		return
	fi
	touch $W/go
	# bounded: a tracer that stalls the target (or kills it) ends the run
	for _ in $(seq 1200); do kill -0 $tp 2> /dev/null || break; sleep 0.1; done
	kill -KILL $tp 2> /dev/null
	wait $tp 2> /dev/null
	local st=$?
	tracer_stop $c
	line=$(grep '^done ' $W/t.out)
	if [ -z "$line" ]; then
		FAIL[$c.$w]+="died($st) "
		return
	fi
	ns=${line#*ns=}; ns=${ns%% *}
	calls=${line#*calls=}; calls=${calls%% *}
	tids=${line#*tids=}
	T[$c.$w]+="$(awk -v a=$ns -v n=$n 'BEGIN { printf "%.3f", a / n }') " # ns per operation
	N[$c.$w]=$n
	# ltrace: made = the pthread_create and pthread_join of each workload thread
	[ $c = ltrace ] && calls=$((2 * $(echo "$tids" | tr ',' '\n' | wc -l)))
	[ $c = ltrace ] && [[ $w == *-main ]] && calls=0
	if [ $c = dynprof+agg ]; then # dynprof's count / bpftrace's on the same run (the mutex's futex calls)
		REC[$c.$w]+="$(recorded dynprof $w $tids)/$(recorded bpf-agg $w $tids) "
	else
		REC[$c.$w]+="$(recorded $c $w $tids)/$calls "
	fi
	if [ $c = dynprof ] || [ $c = dynprof-base ] || [ $c = dynprof+agg ]; then
		grep -Eo 'host data: [0-9]+ system calls, [0-9]+ lost' $W/dp.err | grep -vq ', 0 lost' &&
			FAIL[$c.$w]+="$(grep -Eo '[0-9]+ lost' $W/dp.err | head -1) "
	fi
}

med() { printf '%s\n' "$@" | sort -g | sed -n "$((($# + 1) / 2))p"; }
best() { printf '%s\n' "$@" | sort -g | head -1; }

echo "### Host system calls (--host-sys=osrt) against other tracers, $ROUNDS rounds, configurations in rotating order"
echo "(machine: $(nproc) cores, $(uname -r), load average before: $(cut -d' ' -f1-3 /proc/loadavg))"
t_begin=$(date +%s)
for r in $(seq "$ROUNDS"); do
	for w in "${WORKLOADS[@]}"; do
		for i in $(seq 0 $((${#CONFIGS[@]} - 1))); do
			run_one "${CONFIGS[$(((r + i) % ${#CONFIGS[@]}))]}" $w
		done
	done
done
echo "(took $(($(date +%s) - t_begin)) s; load average after: $(cut -d' ' -f1-3 /proc/loadavg))"

echo
echo "| workload | tracer | calls per run | median ns per op | ratio to alone | ratio of bests | added ns per call | added / floor's | recorded / made (each round) | notes |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for w in "${WORKLOADS[@]}"; do
	a=$(med ${T[alone.$w]:-0})
	ab=$(best ${T[alone.$w]:-0})
	f=$(med ${T[floor.$w]:-0})
	case $w in orc*) per=3 ;; compute) per=0 ;; *) per=1 ;; esac
	for c in "${CONFIGS[@]}"; do
		if [ -z "${T[$c.$w]:-}" ]; then
			echo "| $w | $c | - | - | - | - | - | - | - | ${FAIL[$c.$w]:-no run} |"
			continue
		fi
		m=$(med ${T[$c.$w]})
		added=$(awk -v m=$m -v a=$a -v p=$per 'BEGIN { if (p == 0) print "-"; else printf "%.0f", (m - a) / p }')
		vsf=$(awk -v m=$m -v a=$a -v f=$f -v p=$per 'BEGIN { if (p == 0 || f - a <= 0 || m - a <= 0) print "-"; else printf "%.2f", (m - a) / (f - a) }')
		[ $w = mutex ] && added="$added (per lock+unlock)"
		echo "| $w | $c | $((N[$c.$w] * (per > 0 ? per : 1))) | $m | $(awk -v m=$m -v a=$a 'BEGIN { printf "%.2f", m / a }') |" \
			"$(awk -v m="$(best ${T[$c.$w]})" -v a="$ab" 'BEGIN { printf "%.2f", m / a }') | $added | $vsf | ${REC[$c.$w]} | ${FAIL[$c.$w]:-} |"
	done
done
echo
echo "ops: orc, orc-main = open+read+close (3 calls), getppid = 1 call, mutex = one lock+unlock in one of 4 threads (futex calls as the kernel decides; recorded = futex calls seen, made = lock+unlock pairs), compute = 1000 xorshift steps."
echo "ltrace's recorded: pthread_create/join lines of its list (made = 2 per workload thread it created; it records no system call)."
echo "dynprof+agg: recorded / made = dynprof's count / bpftrace's count (bpf-agg) of the same run."
