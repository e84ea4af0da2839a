#!/usr/bin/env bash
# The card-open hooks (issue 12, the kernel side), side by side in one run:
#  1. overhead on other processes: a getppid loop, an open+close storm and
#     a fork+exec storm, each run with no dynprof, with a watcher using the
#     cgroup device hook, and with one forced to the syscall tracepoints
#     (DYNPROF_OPEN_HOOK=syscalls); the three in turn every round, in a
#     rotating order, medians;
#  2. detection latency, card open -> the watcher knows, both watchers
#     running at once on the same opens; and card close -> the watcher
#     knows (the hook has no close event: card holders' fds are re-read).
set -u
B=${DYNPROF_BUILD:-build}
ROUNDS=${BENCH_ROUNDS:-7}
W=$(mktemp -d /tmp/dynprof-bench.XXXXXX)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
# A fake card of this run's own (bench/cards.sh): a test run does not disturb this one.
. "$(dirname "$0")/cards.sh"
bench_card $W/davinci0

watcher() { # watcher NAME hook|syscalls: dynprof --list --watch --json in the background
	local name=$1 hook=$2
	if [ "$hook" = syscalls ]; then
		DYNPROF_OPEN_HOOK=syscalls "$B/dynprof" --list --watch --json --device="$W/davinci*" \
			> $W/$name.out 2> $W/$name.err &
	else
		"$B/dynprof" --list --watch --json --device="$W/davinci*" > $W/$name.out 2> $W/$name.err &
	fi
	pids+=($!)
	for _ in $(seq 100); do grep -q '^\[' $W/$name.out && break; sleep 0.05; done
	grep -q '^\[' $W/$name.out || { echo "watcher $name did not start"; exit 1; }
	grep -q "card opens: $([ "$hook" = syscalls ] && echo syscall || echo cgroup)" $W/$name.err ||
		{ echo "watcher $name: not the $hook hook: $(cat $W/$name.err)"; exit 1; }
}
stop_watchers() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; pids=(); }

med() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

declare -A res
run_workloads() { # run_workloads CONFIG: one run of each workload, appended to res[CONFIG.workload]
	local w n
	for w in getppid open forkexec; do
		case $w in getppid) n=2000000 ;; open) n=200000 ;; forkexec) n=400 ;; esac
		res[$1.$w]+="$("$B/bench/syscall_storm" $w $n | sed 's/ns_per_op=//') "
	done
}

echo "### Overhead on other processes, $ROUNDS rounds (none, cgroup device hook, syscall tracepoints in turn)"
configs=(none hook syscalls)
for r in $(seq "$ROUNDS"); do
	for i in 0 1 2; do
		c=${configs[$(( (r + i) % 3 ))]}
		[ "$c" != none ] && watcher ovh $c
		run_workloads $c
		stop_watchers
	done
done
echo "| workload | without dynprof (median) | cgroup device hook (median) | ratio | syscall tracepoints (median) | ratio |"
echo "| --- | --- | --- | --- | --- | --- |"
for w in getppid open forkexec; do
	mo=$(med ${res[none.$w]}); mh=$(med ${res[hook.$w]}); ms=$(med ${res[syscalls.$w]})
	case $w in getppid) label="getppid() loop" ;; open) label="open+close /dev/null" ;;
		forkexec) label="fork+exec+wait /bin/true" ;; esac
	if [ $w = forkexec ]; then
		u() { awk -v v="$1" 'BEGIN { printf "%.0f µs", v / 1000 }'; }
	else
		u() { awk -v v="$1" 'BEGIN { printf "%.0f ns", v }'; }
	fi
	echo "| $label | $(u $mo) | $(u $mh) | $(ratio $mh $mo) | $(u $ms) | $(ratio $ms $mo) |"
done

# Latencies (µs) of EVENT lines in a watcher's output against the opener's times.
latencies() { # latencies EVENT TIMES WATCHER_OUT
	awk -v ev="\"event\":\"$1\"" 'NR==FNR { t[$1] = $2; next }
	     index($0, ev) {
		match($0, /"pid":[0-9]+/); p = substr($0, RSTART + 6, RLENGTH - 6)
		match($0, /"time_us":[0-9.e+]+/); w = substr($0, RSTART + 10, RLENGTH - 10) + 0
		if (p in t && !(p in seen)) { seen[p] = 1; print w - t[p] }
	     }' "$2" "$3" | sort -n
}
pct() { # pct FILE P: the P-th percentile of sorted numbers
	local n; n=$(wc -l < "$1")
	[ "$n" -gt 0 ] || { echo "-"; return; }
	sed -n "$(( (n * $2 + 99) / 100 ))p" "$1"
}

echo
N=${BENCH_OPENS:-80}
echo "### Detection latency, $N card opens held 250 ms then closed, held 250 ms more; both watchers at once"
watcher hook hook
watcher sys syscalls
"$B/bench/card_opener" $W/davinci0 $N 250 close > $W/opens 2> $W/closes
sleep 1
stop_watchers
echo "| hook | opens seen | open median | open p99 | closes seen | close median | close p99 |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for m in hook sys; do
	latencies card-open $W/opens $W/$m.out > $W/lat.o.$m
	latencies card-close $W/closes $W/$m.out > $W/lat.c.$m
	name=$([ $m = hook ] && echo "cgroup device hook" || echo "syscall tracepoints")
	echo "| $name | $(wc -l < $W/lat.o.$m)/$N | $(pct $W/lat.o.$m 50) µs | $(pct $W/lat.o.$m 99) µs |" \
	     "$(wc -l < $W/lat.c.$m)/$N | $(pct $W/lat.c.$m 50) µs | $(pct $W/lat.c.$m 99) µs |"
done
