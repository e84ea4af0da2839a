#!/usr/bin/env bash
# Whole-job fan-out (issue 13): a real SLURM cluster of N slurmd -N nodes
# on this machine (tests/lib/slurm_cluster.sh), a batch job with one
# card-using agent worker per node, and `dynprof --slurm-job=J` driving it
# from its console. Measured per N (1, 3, 16):
#   ready:   the coordinator's launch until every node's copy has attached
#            (srun step, scontrol listpids, the targets' handshakes)
#   fan-out: the console's `start` written until the last node's window
#            opened (window-open events' time_us), with --sync-margin=0
#            (every node starts on arrival) and with the default 500 ms
#            (every node opens at one time: then spread is what counts)
#   spread:  the last window-open minus the first
# Medians over ROUNDS windows. All on 2 cores: nodes share the machine.
set -u
B=${DYNPROF_BUILD:-build}
B=$(cd "$B" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
export DYNPROF_TESTS=$here/../tests
ROUNDS=${BENCH_SLURM_ROUNDS:-5}
NODES=${BENCH_SLURM_NODES:-"1 3 16"}
W=$(mktemp -d /tmp/dpsl.XXXXXX)
. "$here/../tests/lib/slurm_cluster.sh"
dp_pid=""
cleanup() {
	[ -n "$dp_pid" ] && kill "$dp_pid" 2>/dev/null
	slurm_down "$W/s"
	rm -rf "$W"
}
trap cleanup EXIT
. "$(dirname "$0")/cards.sh"
bench_card $W/davinci0

now_us() { echo $(( $(date +%s%N) / 1000 )); }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
count() { grep -c "$1" $W/out 2>/dev/null; }
wait_count() { # wait_count PATTERN N
	for _ in $(seq 3000); do [ "$(count "$1")" -ge "$2" ] && return 0; sleep 0.01; done
	echo "bench: timed out waiting for $2 x '$1'" >&2; tail -20 $W/out >&2; return 1
}
job_running() { [ "$(slurm_job_state "$1")" = RUNNING ]; }

one_n() { # one_n NODES MARGIN -> "ready_ms fanout_ms spread_ms"
	local n=$1 margin=$2 j t0 t1 r opens fan=() spread=()
	cat > $W/job.sh <<JOB
#!/bin/bash
srun -N$n --ntasks-per-node=1 env PROFILING_MODE=dynamic LD_PRELOAD=$B/libdynprof_agent.so \
	DYNPROF_AGENT_DEVICES="$W/davinci*" $B/tests/peers/card_user $W/davinci0 600
JOB
	j=$(sbatch --parsable -N$n --ntasks-per-node=1 -o $W/job.log $W/job.sh) || return 1
	slurm_wait 60 job_running $j || return 1
	for _ in $(seq 1000); do
		[ "$(ls $W/s/home/*/dynamic_profiling_socket_* 2>/dev/null | wc -l)" -ge $n ] && break
		sleep 0.02
	done
	rm -f $W/in $W/out; mkfifo $W/in
	local launched; launched=$(now_us)
	"$B/dynprof" --slurm-job=$j --output=$W/o --device="$W/davinci*" --events=json \
		--sync-margin=$margin < $W/in > $W/out 2>&1 &
	dp_pid=$!
	exec 7> $W/in
	wait_count 'Start profiling' $n || return 1
	t1=$(now_us)
	for ((r = 1; r <= ROUNDS; r++)); do
		local before; before=$(count '"event":"window-open"')
		t0=$(now_us)
		echo start >&7
		wait_count '"event":"window-open"' $((before + n)) || return 1
		opens=$(grep '"event":"window-open"' $W/out | tail -n $n | sed 's/.*"time_us":\([0-9]*\).*/\1/' | sort -n)
		fan+=($(( ($(tail -1 <<<"$opens") - t0) / 1000 )))
		spread+=($(( ($(tail -1 <<<"$opens") - $(head -1 <<<"$opens")) / 1000 )))
		before=$(count '"event":"window-close"')
		echo stop >&7
		wait_count '"event":"window-close"' $((before + n)) || return 1
	done
	echo quit >&7; exec 7>&-
	wait $dp_pid; dp_pid=""
	scancel $j
	slurm_wait 30 eval '[ -z "$(squeue -h -j '$j' 2>/dev/null)" ]'
	echo "$(( (t1 - launched) / 1000 )) $(printf '%s\n' "${fan[@]}" | median) $(printf '%s\n' "${spread[@]}" | median)"
}

echo "### Whole-job fan-out (\`bench/slurm_fanout.sh\`): console start to every node's window open"
echo "| nodes | --sync-margin | ready (launch to attached) | fan-out median | spread median | rounds |"
echo "| --- | --- | --- | --- | --- | --- |"
for n in $NODES; do
	slurm_down "$W/s"; rm -rf "$W/s" "$W/o"
	slurm_up "$W/s" $n || { echo "bench: cluster of $n did not come up"; exit 1; }
	for margin in 0 500ms; do
		res=$(one_n $n $margin) || { echo "bench: $n nodes failed"; exit 1; }
		read -r ready fan spread <<<"$res"
		echo "| $n | $margin | $ready ms | $fan ms | $spread ms | $ROUNDS |"
	done
done
