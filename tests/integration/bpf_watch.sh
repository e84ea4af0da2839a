# Target exits are seen from the kernel (BPF) or, with --no-bpf, from pidfds.

# The exit is reported within 2-3 s of the kill, though the socket stays open
# (held by the server's child): without the report dynprof never learns it.
exit_is_noticed_at_once() { # exit_is_noticed_at_once [dynprof args]
	local a b; a=$(start_held_peer); b=$(start_target)
	dp_background --pid=$a,$b --output=$T/o "$@"
	wait_until 5 grep -q 'Start profiling' $T/out || fail "dynprof did not start"
	remember_holder
	kill_hard $a
	local t0; t0=$(date +%s%N)
	wait_until 3 grep -q "^server process $a did not create socket, or process has already exited$" $T/out ||
		{ cat $T/out; fail "exit of $a not noticed within 2-3 s (socket held open by its child)"; }
	echo "exit noticed $(( ($(date +%s%N) - t0) / 1000000 )) ms after the kill"
	dp_send start stop quit
	wait_until 30 all_gone $DP_PID || fail "dynprof did not quit"
	wait $DP_PID
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $b stop success$"
	expect_no_line "pid $a (start|stop)"
}

test_exit_noticed_with_bpf() {
	exit_is_noticed_at_once
	expect_no_line "BPF unavailable"
}

test_exit_noticed_without_bpf() {
	exit_is_noticed_at_once --no-bpf
}

# The BPF programs a process holds (its fds' prog_id), not the host's: other
# dynprofs (other tests, other runs) load and free theirs meanwhile.
progs_of() {
	local f
	for f in /proc/$1/fdinfo/*; do sed -n 's/^prog_id:[[:space:]]*//p' "$f" 2>/dev/null; done | sort -u
}
none_loaded() { # none_loaded BPFTOOL ID...
	local bt=$1 id; shift
	for id in "$@"; do $bt prog show id $id >/dev/null 2>&1 && return 1; done
	return 0
}

test_bpf_program_is_loaded_while_running_and_gone_after() {
	command -v bpftool >/dev/null || [ -x /usr/sbin/bpftool ] || fail "bpftool missing"
	local bt; bt=$(command -v bpftool || echo /usr/sbin/bpftool)
	local a; a=$(start_target)
	dp_background --pid=$a --output=$T/o
	local dp=$DP_PID
	# Connected: its exit watcher is loaded by then (before any target connects).
	wait_until 20 grep -q "Start profiling" $T/out || fail "dynprof did not attach: $(cat $T/out)"
	local ids id; ids=$(progs_of $dp)
	for id in $ids; do $bt prog show id $id; done > $T/progs
	grep -q "name handle_exit\|sched_process_exit\|raw_tracepoint" $T/progs ||
		{ cat $T/progs; fail "no BPF program held by dynprof ($dp) while it runs: ids '$ids'"; }
	dp_send quit
	wait $dp
	# The kernel frees a program shortly after its last fd closes.
	wait_until 2 none_loaded $bt $ids || fail "BPF program left loaded after exit: $(for id in $ids; do $bt prog show id $id; done 2>/dev/null | tr -s "\n\t" "  ")"
}
