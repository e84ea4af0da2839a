# A whole cluster job: dynprof --slurm-job=J on a real SLURM cluster made
# by the test (tests/lib/slurm_cluster.sh: munged, slurmctld, 3 slurmd -N
# nodes in their own namespaces), whose batch job runs card-using workers
# serving the agent's socket on every node; and --nodes with a launcher
# that is a local shell command.

. "$DYNPROF_TESTS/lib/slurm_cluster.sh"

WORKERS=2 # per node

# The cluster, down again in cleanup_test (its folder is in $T/.slurm).
cluster_up() { # cluster_up [N]
	S=$T/s
	echo "$S" > "$T/.slurm"
	slurm_up "$S" "${1:-3}" || fail "the SLURM cluster did not come up"
}

sockets_on() { # sockets_on NODE -> count
	ls "$S/home/$1" 2>/dev/null | grep -c '^dynamic_profiling_socket_'
}

workers_listen() { # workers_listen NODES...
	local n
	for n in "$@"; do [ "$(sockets_on $n)" -ge $WORKERS ] || return 1; done
}

job_running() { [ "$(slurm_job_state "$1")" = RUNNING ]; }

# A batch job whose step runs WORKERS card users on each of N nodes; sets J.
start_job() { # start_job [N]
	local n=${1:-3} card k
	card=$(make_card 0)
	cat > "$T/job.sh" <<EOF
#!/bin/bash
srun -N$n --ntasks-per-node=$WORKERS env PROFILING_MODE=dynamic LD_PRELOAD=$AGENT_SO \
	DYNPROF_AGENT_DEVICES="$T/dev/davinci*" $CARD_USER $card 600
EOF
	J=$(sbatch --parsable -N$n --ntasks-per-node=$WORKERS -o "$T/job.log" "$T/job.sh") || fail "sbatch failed"
	wait_until 20 job_running $J || { squeue; fail "job $J is not running"; }
	local nodes=()
	for ((k = 1; k <= n; k++)); do nodes+=(n$k); done
	wait_until 20 workers_listen "${nodes[@]}" || { cat "$T/job.log"; fail "the workers do not listen"; }
}

# Each node's folder holds one PROF_ folder per worker.
expect_folders() { # expect_folders WANT NODES...
	local want=$1 n got; shift
	for n in "$@"; do
		got=$(ls -d "$T/o/$n"/PROF_* 2>/dev/null | wc -l)
		[ "$got" -eq "$want" ] || { cat "$T/out"; fail "$n: $got PROF_ folders, expected $want"; }
	done
}

# The host pid of node NODE's copy of dynprof (none yet: fails).
node_copy_pid() { # node_copy_pid NODE
	local e p
	for e in /proc/[0-9]*/environ; do
		p=${e#/proc/}; p=${p%/environ}
		[ "$(readlink /proc/$p/exe 2>/dev/null)" = "$(readlink -f "$DP")" ] || continue
		tr '\0' '\n' 2>/dev/null < "$e" | grep -qx "SLURMD_NODENAME=$1" || continue
		tr '\0' ' ' < /proc/$p/cmdline | grep -q -- '--node-copy=' && { echo $p; return 0; }
	done
	return 1
}

windows_open() { # windows_open COUNT: that many "start success" lines
	[ "$(count_lines 'start success')" -ge "$1" ]
}
windows_stopped() { # windows_stopped COUNT: that many "stop success" lines
	[ "$(count_lines 'stop success')" -ge "$1" ]
}

coordinator_gone() { ! kill -0 $DP_PID 2>/dev/null; }

# console_window [ARGS]: the job's nodes run with ARGS, one window on every
# node by console (start at one time, stop), then quit; the coordinator ended well.
console_window() {
	dp_background --device="$T/dev/davinci*" --node-wait=10s --slurm-job=$J --output=$T/o --sync-margin=1s "$@"
	dp_send start
	wait_until 60 windows_open $((3 * WORKERS)) || { cat $T/out; fail "expected $((3 * WORKERS)) windows open"; }
	dp_send stop
	wait_until 60 windows_stopped $((3 * WORKERS)) || { cat $T/out; fail "expected $((3 * WORKERS)) windows stopped"; }
	dp_send quit
	wait_until 60 coordinator_gone || { cat $T/out; fail "the coordinator did not end after quit"; }
	wait $DP_PID
	expect_status 0 $?
}

test_slurm_job_rule_every_node() {
	cluster_up 3
	start_job 3
	timeout -s KILL 90 "$DP" --device="$T/dev/davinci*" --node-wait=10s --slurm-job=$J --output=$T/o --window=start=+1s,stop=+1s </dev/null > $T/out 2>&1
	expect_status 0 $?
	expect_folders $WORKERS n1 n2 n3
	for n in n1 n2 n3; do
		expect_line "^  $n: $WORKERS targets, $WORKERS windows, $WORKERS PROF_ folders in $T/o/$n\$"
		expect_line "^\[$n\] \[INFO\] job $J: $WORKERS targets on this node"
	done
	expect_line "every node ended well"
}

test_slurm_job_console_one_time() {
	cluster_up 3
	start_job 3
	console_window --events=json
	expect_folders $WORKERS n1 n2 n3
	expect_line '^\[INFO\] start: every node opens its windows at'
	# The one time: every window opened on or after it, on every node.
	local at opens n
	at=$(sed -n 's/^\[INFO\] start: every node opens its windows at \([0-9:.]*\)Z.*/\1/p' $T/out)
	at=$(date -u -d "today $at" +%s%3N)
	opens=$(grep '"event":"window-open"' $T/out | sed 's/.*"time_us":\([0-9]*\).*/\1/')
	[ "$(wc -l <<<"$opens")" -eq $((3 * WORKERS)) ] || { cat $T/out; fail "not $((3 * WORKERS)) window-open events"; }
	for n in $opens; do
		[ $((n / 1000)) -ge "$at" ] || { cat $T/out; fail "a window opened at $((n / 1000)) ms, before the chosen $at"; }
	done
	for n in n1 n2 n3; do
		[ "$(grep -c "^{\"node\":\"$n\",\"event\":\"window-open\"" $T/out)" -eq $WORKERS ] ||
			{ cat $T/out; fail "$n: not $WORKERS window-open events with its name"; }
	done
}

# --trace=on on a job: each node's copy writes its trace in its folder, and
# the coordinator merges them into one, each node's processes in lanes of
# their own ("[nK] ..."), on its clock through each node's wall-clock
# anchor: the windows opened at one chosen time line up, n2's too, whose
# CLOCK_MONOTONIC is 100000 s ahead (a time namespace, as another machine's).
test_slurm_job_trace_merges_every_node() {
	SLURM_SHIFTED_NODE=n2 cluster_up 3
	start_job 3
	console_window --trace=on
	local m=$T/o/${DP_PID}_dynprof_trace.json n k
	expect_line "^\[INFO\] --trace: $m: 3 of 3 nodes' traces on one clock"
	jq -e 'type == "array"' $m > /dev/null || fail "the merged trace is not a JSON array: $(head -c 300 $m)"
	for k in 1 2 3; do
		n=$(jq --arg p "[n$k] " '[.[] | select(.ph == "M" and .name == "process_name" and (.args.name | startswith($p)))] | length' $m)
		[ "$n" -ge $((WORKERS + 1)) ] || fail "n$k: $n process lanes named [n$k] (its $WORKERS targets and its dynprof)"
		n=$(jq --argjson k $k '[.[] | select(.ph == "X" and .tid == 0 and (.name | startswith("window 1 (saved)")) and ((.pid / 4194304) | floor) == $k)] | length' $m)
		[ "$n" = $WORKERS ] || fail "n$k: $n saved windows in the merged trace, $WORKERS expected"
	done
	# One chosen time (start at:T): every window's begin within 300 ms of the others, on the one clock.
	jq -e '[.[] | select(.ph == "X" and .tid == 0) | .ts] | (max - min) < 300000' $m > /dev/null ||
		fail "the windows' begins spread over $(jq '[.[] | select(.ph == "X" and .tid == 0) | .ts] | (max - min)' $m) us"
	# A node's own file, through its anchor and the coordinator's: the same instant.
	local f; f=$(ls $T/o/n2/*_dynprof_trace.json | head -1)
	jq -e -n --slurpfile a $f --slurpfile b $m '
		def anchor($t): ($t[0][] | select(.name == "trace rule" or .name == "trace merge") | .args.wall_us - .ts);
		(([$a[0][] | select(.ph == "X" and .tid == 0) | .ts] | min) + anchor($a) - anchor($b)) as $want |
		[$b[0][] | select(.ph == "X" and .tid == 0 and ((.pid / 4194304) | floor) == 2) | .ts] | min |
		. - $want | fabs < 2' > /dev/null || fail "n2's first window is not where its own trace and the anchors put it"
}

test_slurm_node_killed_others_finish() {
	cluster_up 3
	start_job 3
	dp_background --device="$T/dev/davinci*" --node-wait=10s --slurm-job=$J --output=$T/o --sync-margin=0
	dp_send start
	wait_until 30 windows_open $((3 * WORKERS)) || { cat $T/out; fail "windows did not open on every node"; }
	local victim
	victim=$(node_copy_pid n2) || fail "no node copy on n2"
	kill -KILL $victim
	dp_send stop quit
	wait_until 60 coordinator_gone || fail "the coordinator did not end"
	wait $DP_PID
	expect_status 1 $?
	expect_line '^  n2: FAILED'
	# Seen once beside another suite (load 40): srun "Force Terminated" the
	# step after n2's kill and every node failed; the logs say who ended it.
	grep -q '^\[ERROR\] dynprof: 1 of 3 nodes failed: n2$' $T/out ||
		fail "expected 1 of 3 nodes failed: n2; got: $(grep -E 'nodes failed|srun|FAILED|quit success' $T/out | tr '\n' '|');" \
			"slurmctld: $(tail -n 8 $S/slurmctld.log 2>/dev/null | tr '\n' '|')" \
			"n1: $(grep -i 'kill\|term\|signal' $S/n1.log 2>/dev/null | tail -n 4 | tr '\n' '|')"
	expect_line "^  n1: $WORKERS targets, $WORKERS windows, $WORKERS PROF_ folders"
	expect_line "^  n3: $WORKERS targets, $WORKERS windows, $WORKERS PROF_ folders"
	expect_folders $WORKERS n1 n3
}

test_slurm_scancel_mid_window() {
	cluster_up 3
	start_job 3
	dp_background --device="$T/dev/davinci*" --node-wait=10s --slurm-job=$J --output=$T/o --sync-margin=0
	dp_send start
	wait_until 30 windows_open $((3 * WORKERS)) || { cat $T/out; fail "windows did not open on every node"; }
	scancel $J
	wait_until 60 coordinator_gone || { cat $T/out; fail "the coordinator did not end after scancel"; }
	wait $DP_PID
	local rc=$?
	[ $rc -ne 0 ] || { cat $T/out; fail "status 0 after the job was cancelled"; }
	# Every node's copy shut down and accounted for its windows before it ended.
	for n in n1 n2 n3; do
		expect_line "^\[$n\] \[INFO\] summary: $WORKERS targets joined, $WORKERS windows opened"
		expect_line "^  $n: "
	done
	expect_line 'nodes failed'
	expect_line "^\[INFO\] job $J is (CANCELLED|COMPLETING) now\$"
	node_copy_pid n1 >/dev/null && fail "a node copy still runs"
	true
}

test_slurm_sigint_stops_every_node() {
	cluster_up 3
	start_job 3
	dp_background --device="$T/dev/davinci*" --node-wait=10s --slurm-job=$J --output=$T/o --sync-margin=0
	dp_send start
	wait_until 30 windows_open $((3 * WORKERS)) || { cat $T/out; fail "windows did not open on every node"; }
	kill -INT $DP_PID
	wait_until 60 coordinator_gone || { cat $T/out; fail "the coordinator did not end on SIGINT"; }
	wait $DP_PID
	expect_status 130 $?
	expect_line 'received SIGINT: stopping the windows on every node'
	# Every node's copy stopped each of its windows (a STOP answered), saved them, and said so.
	local n got
	for n in n1 n2 n3; do
		got=$(count_lines "^\[$n\] dynamic profiling for pid [0-9]+ stop success$")
		[ "$got" -eq $WORKERS ] || { cat $T/out; fail "$n: expected $WORKERS windows stopped, saw $got"; }
		expect_line "^\[$n\] \[INFO\] summary: $WORKERS targets joined, $WORKERS windows opened, $WORKERS PROF_ folders in $T/o/$n; windows: $WORKERS saved, 0 saved incomplete, 0 lost$"
		[ -z "$(find $T/o/$n -maxdepth 1 -name 'PROF_*' '!' -exec test -s '{}/host/end_info' ';' -print)" ] ||
			fail "$n: a PROF_ folder without host/end_info (a window not stopped)"
	done
	expect_folders $WORKERS n1 n2 n3
	expect_line '^\[INFO\] every node stopped its windows$'
}

test_slurm_job_not_running() {
	cluster_up 1
	J=$(sbatch --parsable -N1 --hold --wrap 'sleep 60') || fail "sbatch failed"
	dp --slurm-job=$J --output=$T/o </dev/null
	expect_status 255 $?
	expect_line "^\[ERROR\] dynprof: job $J is PENDING, not RUNNING: no node runs it$"
	dp --slurm-job=12x </dev/null
	expect_status 255 $?
	expect_line '^\[ERROR\] Argument --slurm-job: invalid value: 12x'
	dp --slurm-job=$J --pid=1 </dev/null
	expect_status 255 $?
}

# A job's name is the user's: one that reads like scontrol's fields poses as none.
test_slurm_job_named_like_its_fields_is_still_pending() {
	cluster_up 1
	J=$(sbatch --parsable -N1 --hold -J 'x JobState=RUNNING NodeList=nodeZ' --wrap 'sleep 60') ||
		fail "sbatch failed"
	scontrol show job -o $J | grep -q 'JobName=x JobState=RUNNING NodeList=nodeZ' || fail "name: $(scontrol show job -o $J)"
	dp --slurm-job=$J --output=$T/o </dev/null
	expect_status 255 $?
	expect_line "^\[ERROR\] dynprof: job $J is PENDING, not RUNNING: no node runs it$"
	expect_no_line nodeZ
}

# --nodes through a launcher that is a local shell command: node.sh gives
# each "node" its own target in place of --pid=auto, as ssh would reach
# another host's.
write_node_sh() { # write_node_sh PID_FOR_A PID_FOR_B [PID_FOR_C]: node c gets the third, any other node the second
	cat > $T/node.sh <<EOF
#!/bin/bash
node=\$1; shift
args=()
for a in "\$@"; do
	[ "\$a" = --pid=auto ] && a=--pid=\$(case \$node in a) echo $1 ;; c) echo ${3:-$2} ;; *) echo $2 ;; esac)
	args+=("\$a")
done
echo "launched on \$node" >> $T/launched
exec "\${args[@]}"
EOF
	chmod +x $T/node.sh
}

test_nodes_local_launcher() {
	local p1 p2
	p1=$(start_target)
	p2=$(start_target)
	write_node_sh $p1 $p2
	dp_background --nodes=a,b --launcher="$T/node.sh {node}" --output=$T/o
	dp_send start
	wait_until 30 windows_open 2 || { cat $T/out; fail "expected 2 windows open"; }
	dp_send stop
	wait_until 30 windows_stopped 2 || { cat $T/out; fail "expected 2 windows stopped"; }
	dp_send quit
	wait_until 60 coordinator_gone || { cat $T/out; fail "the coordinator did not end after quit"; }
	wait $DP_PID
	expect_status 0 $?
	[ "$(sort $T/launched | tr '\n' ' ')" = "launched on a launched on b " ] || fail "launcher not run once per node"
	expect_folders 1 a b
	[ -n "$(prof_dirs_of $T/o/a $p1)" ] && [ -n "$(prof_dirs_of $T/o/b $p2)" ] || fail "folders not per node"
	expect_line "^  a: 1 target, 1 window, 1 PROF_ folder in $T/o/a\$"
	expect_line "^\[b\] dynamic profiling for pid $p2 start success"
}

# A node copy ends only once the coordinator said it read its exit frame
# (by ending its input): srun reports a task's end apart from its output,
# and a step it then ends drops output not yet relayed (a node that ended
# well read as failed). Node a never gets its acknowledgement (its launcher
# keeps its input open): it stays after b, which got its own, has ended,
# and then ends by itself.
test_nodes_node_copy_waits_for_the_coordinators_ack() {
	local p1 p2 a b
	p1=$(start_target)
	p2=$(start_target)
	write_node_sh $p1 $p2
	sed -i 's|^exec "\${args\[@\]}"$|echo $$ > '$T'/copy.$node\n[ $node = a ] \&\& exec "${args[@]}" < <(exec 2>/dev/null; cat; sleep 10)\nexec "${args[@]}"|' $T/node.sh
	grep -q "sleep 10" $T/node.sh || fail "node.sh was not rewritten"
	dp_background --nodes=a,b --launcher="$T/node.sh {node}" --output=$T/o --sync-margin=0
	dp_send start
	wait_until 30 windows_open 2 || { cat $T/out; fail "expected 2 windows open"; }
	a=$(cat $T/copy.a) && b=$(cat $T/copy.b) || fail "the launchers did not say their pids"
	dp_send stop quit
	wait_until 30 grep -q '^\[a\] \[INFO\] summary: ' $T/out || { cat $T/out; fail "node a said no summary"; }
	wait_until 30 all_gone $b || fail "node b's copy did not end after its acknowledgement"
	! all_gone $a || fail "node a's copy ended without the coordinator's acknowledgement"
	wait_until 30 coordinator_gone || { cat $T/out; fail "the coordinator did not end"; }
	wait $DP_PID
	expect_status 0 $?
	expect_line "^  a: 1 target, 1 window, 1 PROF_ folder in $T/o/a\$"
	expect_line "^  b: 1 target, 1 window, 1 PROF_ folder in $T/o/b\$"
}

# SIGTERM on the coordinator reaches each launcher's process group: every
# node's window is stopped and saved.
test_nodes_sigterm_stops_every_node() {
	local p1 p2
	p1=$(start_target)
	p2=$(start_target)
	write_node_sh $p1 $p2
	dp_background --nodes=a,b --launcher="$T/node.sh {node}" --output=$T/o --sync-margin=0
	dp_send start
	wait_until 30 windows_open 2 || { cat $T/out; fail "windows did not open on both nodes"; }
	kill -TERM $DP_PID
	wait_until 60 coordinator_gone || { cat $T/out; fail "the coordinator did not end on SIGTERM"; }
	wait $DP_PID
	expect_status 143 $?
	expect_line "^\[a\] \[INFO\] summary: 1 target joined, 1 window opened, 1 PROF_ folder in $T/o/a; windows: 1 saved"
	expect_line "^\[b\] \[INFO\] summary: 1 target joined, 1 window opened, 1 PROF_ folder in $T/o/b; windows: 1 saved"
	expect_line 'every node stopped its windows'
}

# A --commands file is read by the coordinator and sent to every node on
# srun's standard input (no shared file system needed for it).
test_slurm_job_commands_file() {
	cluster_up 3
	start_job 3
	printf 'start\nsleep 1s\nstop\nquit\n' > $T/cmds
	timeout -s KILL 90 "$DP" --device="$T/dev/davinci*" --node-wait=10s --slurm-job=$J --output=$T/o \
		--commands=$T/cmds </dev/null > $T/out 2>&1
	expect_status 0 $?
	expect_folders $WORKERS n1 n2 n3
	for n in n1 n2 n3; do
		expect_line "^  $n: $WORKERS targets, $WORKERS windows, $WORKERS PROF_ folders"
	done
}

# A node whose ranks never serve a socket (here: none runs there) fails
# after --node-wait, named, while the other nodes' windows (open past that
# moment) go on to close and be saved.
test_slurm_node_without_targets_fails_alone() {
	cluster_up 3
	local card
	card=$(make_card 0)
	cat > "$T/job.sh" <<JOB
#!/bin/bash
srun -N2 -n$((2 * WORKERS)) -w n1,n2 --ntasks-per-node=$WORKERS env PROFILING_MODE=dynamic LD_PRELOAD=$AGENT_SO \
	DYNPROF_AGENT_DEVICES="$T/dev/davinci*" $CARD_USER $card 600 &
srun -N1 -n1 -w n3 sleep 600 &
wait
JOB
	J=$(sbatch --parsable -N3 --ntasks-per-node=$WORKERS -o "$T/job.log" "$T/job.sh") || fail "sbatch failed"
	wait_until 20 job_running $J || fail "job $J is not running"
	wait_until 20 workers_listen n1 n2 || { cat "$T/job.log"; fail "the workers do not listen"; }
	timeout -s KILL 90 "$DP" --device="$T/dev/davinci*" --node-wait=2s --slurm-job=$J --output=$T/o \
		--window=start=+1s,stop=+5s </dev/null > $T/out 2>&1
	expect_status 1 $?
	expect_line "^\[n3\] \[ERROR\] dynprof: job $J: no process of the job on this node holds a card"
	expect_line '^\[ERROR\] dynprof: 1 of 3 nodes failed: n3$'
	expect_folders $WORKERS n1 n2
	expect_line "^  n1: $WORKERS targets, $WORKERS windows, $WORKERS PROF_ folders"
}

# A node whose window was not saved (on b its server answered the STOP
# "not started", so the window is lost; on c the target was killed with its
# window open, so it is saved incomplete) is named on the coordinator's
# summary with its counts, even though its dynprof ended well; a node
# whose windows were all saved is not.
test_nodes_summary_names_a_node_with_windows_not_saved() {
	local p1 p2 p3
	p1=$(start_target)
	p2=$(start_bad_peer forgets-start)
	p3=$(start_target)
	write_node_sh $p1 $p2 $p3
	dp_background --nodes=a,b,c --launcher="$T/node.sh {node}" --output=$T/o --sync-margin=0
	dp_send start
	wait_until 30 windows_open 3 || { cat $T/out; fail "windows did not open on the three nodes"; }
	kill_hard $p3
	wait_until 30 grep -q "^\[c\] .*window saved incomplete" $T/out || { cat $T/out; fail "node c's window was not saved incomplete"; }
	dp_send stop
	wait_until 30 grep -q "^\[b\] .*window lost" $T/out || { cat $T/out; fail "node b's window was not lost"; }
	dp_send quit
	wait_until 60 coordinator_gone || { cat $T/out; fail "the coordinator did not end"; }
	expect_line "^\[b\] \[INFO\] summary: 1 target joined, 1 window opened, 0 PROF_ folders in $T/o/b; windows: 0 saved, 0 saved incomplete, 1 lost$"
	expect_line "^      \(b: 0 windows saved incomplete, 1 lost\)$"
	expect_line "^\[c\] \[INFO\] summary: 1 target joined, 1 window opened, 1 PROF_ folder in $T/o/c; windows: 0 saved, 1 saved incomplete, 0 lost$"
	expect_line "^      \(c: 1 window saved incomplete, 0 lost\)$"
	expect_no_line "^      \(a: "
}

# The suite itself: a SLURM test's card namespace is made after SLURM_CONF
# is set, so its sleeper carries it, and slurm_down (which ends every
# process with that SLURM_CONF) ended it before the test's cleanup. The
# card's number was then free while the test's card users lived: another
# run's card got it, and this test's cleanup killed that run's card users
# (seen beside scale.sh), or its leftovers were that run's card users. The
# sleeper is no SLURM client; and a card namespace gone early makes the
# cleanup find holders by path only.
test_slurm_cleanup_keeps_the_card_namespace_to_the_end() {
	TEST_SINCE=$(pid_start $BASHPID) # as cleanup_test sets it
	export SLURM_CONF=$T/slurmx/slurm.conf
	mkdir -p $T/slurmx
	make_card 0 > /dev/null
	local ns; ns=$(cat $T/.cardns)
	tr '\0' '\n' < /proc/$ns/environ | grep -qxF "SLURM_CONF=$T/slurmx/slurm.conf" ||
		fail "precondition: the sleeper has no SLURM_CONF"
	! slurm_clients $T/slurmx | grep -qx "$ns" || fail "the card sleeper $ns counts as a SLURM client"
	card_ns_alive || fail "card_ns_alive says no while it lives"
	# Its namespace ended early: number_holders finds no holder by number.
	sleep 600 < $T/dev/davinci0 > /dev/null 2>&1 &
	local holder=$!
	remember_pid $holder
	wait_until 5 eval '[ -n "$(number_holders)" ]' || fail "the holder is not found by its card's numbers"
	kill -KILL $ns
	wait_until 5 eval '! card_ns_alive' || fail "card_ns_alive says yes after its sleeper ended"
	[ -z "$(number_holders)" ] || fail "holders found by numbers that may be another test's now: $(number_holders)"
}
