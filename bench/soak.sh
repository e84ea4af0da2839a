#!/usr/bin/env bash
# Soak (issue 12): dynprof --pid=auto --follow, with a rule opening windows
# in some card users (start=exec:ruled_job, every SOAK_RULED-th one), while
# SOAK_PROCS short processes (fork+exec of /bin/true, one after another)
# and SOAK_CARD_USERS short card users (bench/card_job: a fake card opened
# once the agent's socket listens, held SOAK_HOLD_MS, SOAK_PARALLEL at a
# time) come and go. dynprof's RSS (VmRSS), open fds and CPU (utime+stime)
# at the start and at the end, and the joins, leaves and windows it counted.
# Sizes by environment, so it can be tried small: SOAK_PROCS=2000 SOAK_CARD_USERS=50.
set -u
B=${DYNPROF_BUILD:-build}
PROCS=${SOAK_PROCS:-100000}
USERS=${SOAK_CARD_USERS:-2000}
PAR=${SOAK_PARALLEL:-8}
HOLD=${SOAK_HOLD_MS:-600}
RULED=${SOAK_RULED:-4}
W=$(mktemp -d /tmp/dynprof-soak.XXXXXX)
dp=""
cleanup() { [ -n "$dp" ] && kill $dp 2>/dev/null; [ -n "$dp" ] && wait $dp 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
. "$(dirname "$0")/cards.sh"
bench_card $W/davinci0
cp "$B/bench/card_job" $W/card_job
cp "$B/bench/card_job" $W/ruled_job

mkfifo $W/in
"$B/dynprof" --pid=auto --follow --device="$W/davinci*" --output=$W/o \
	--window=start=exec:ruled_job,stop=+100ms < $W/in > $W/dp.out 2>&1 &
dp=$!
exec 7> $W/in
for _ in $(seq 200); do grep -q '^\[INFO\] following card users' $W/dp.out && break; sleep 0.05; done
grep -q '^\[INFO\] following card users' $W/dp.out || { echo "dynprof did not start: $(cat $W/dp.out)"; exit 1; }
sleep 1

sample() { # sample: "RSS_kB FDS CPU_ticks" of dynprof
	echo "$(awk '/^VmRSS:/ { print $2 }' /proc/$dp/status) $(ls /proc/$dp/fd | wc -l)" \
	     "$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' /proc/$dp/stat)"
}
read -r rss0 fds0 cpu0 < <(sample)
fd_kinds() { ls -l /proc/$dp/fd | awk 'NR > 1 { sub(/[0-9]+/, "N", $NF); print $NF }' | sort | uniq -c; }
fd_kinds > $W/fds0
t0=$SECONDS

"$B/bench/syscall_storm" forkexec "$PROCS" > $W/storm.out &
storm=$!
card_users() { # PAR at a time; waits for its own (a bare wait would wait for dynprof too)
	local i batch=()
	for i in $(seq "$USERS"); do
		local job=$W/card_job
		[ $((i % RULED)) = 0 ] && job=$W/ruled_job
		env LD_PRELOAD="$B/libdynprof_agent.so" PROFILING_MODE=dynamic DYNPROF_AGENT_DEVICES="$W/davinci*" \
			$job $W/davinci0 "$HOLD" > /dev/null 2>&1 &
		batch+=($!)
		[ ${#batch[@]} -lt "$PAR" ] && continue
		wait "${batch[@]}"
		batch=()
	done
	[ ${#batch[@]} -gt 0 ] && wait "${batch[@]}"
}
card_users
wait $storm
sleep 2 # the last leaves
read -r rss1 fds1 cpu1 < <(sample)
fd_kinds > $W/fds1
elapsed=$((SECONDS - t0))
echo quit >&7
exec 7>&-
wait $dp
status=$?
dp=""

joins=$(grep -c '^\[INFO\] target joined:' $W/dp.out)
leaves=$(grep -c '^\[INFO\] target left:' $W/dp.out)
windows=$(grep -c ': window saved in ' $W/dp.out)
tck=$(getconf CLK_TCK)
echo "### Soak: $PROCS short processes and $USERS card users (1 in $RULED with a rule's window) in ${elapsed} s"
echo "| dynprof | at start | at end | end / start |"
echo "| --- | --- | --- | --- |"
awk -v a=$rss0 -v b=$rss1 'BEGIN { printf "| RSS (VmRSS) | %d kB | %d kB | %.2f |\n", a, b, b / a }'
awk -v a=$fds0 -v b=$fds1 'BEGIN { printf "| open fds | %d | %d | %.2f |\n", a, b, b / a }'
awk -v a=$cpu0 -v b=$cpu1 -v t=$tck -v s=$elapsed -v p=$PROCS -v u=$USERS 'BEGIN {
	printf "| CPU (utime+stime) | %.2f s | %.2f s | %.2f s over the soak (%.1f%% of one core; %.0f µs per process) |\n",
	       a / t, b / t, (b - a) / t, 100 * (b - a) / t / s, 1e6 * (b - a) / t / (p + u) }'
echo
echo "| card users | joined | left | windows saved (rule) | expected windows | exit status after quit |"
echo "| --- | --- | --- | --- | --- | --- |"
echo "| $USERS | $joins | $leaves | $windows | $((USERS / RULED)) | $status |"
[ "$fds1" = "$fds0" ] || { echo "fds at the start and at the end:"; diff $W/fds0 $W/fds1; }
grep -E '^\[(ERROR|WARNING)\]' $W/dp.out | grep -v 'chip is not known' | sort | uniq -c | sort -rn | head -5
