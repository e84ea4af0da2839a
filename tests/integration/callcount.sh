# Kernel call counting (user/kernel/callcount.c, bpf/callcount.bpf.c) on real
# processes, driven by build/tests/callcount_probe. The targets are
# tests/peers/caller, which makes exactly the calls it is told to once it
# gets SIGUSR1, so counts compare with known numbers, and the demo task.

CALLER=$B/tests/peers/caller
PROBE=$B/tests/callcount_probe
DPCALLS=$B/tests/libdpcalls.so

# start_caller NAME ACTION...: a caller logging to $T/NAME.log; echoes its pid once ready.
start_caller() {
	local name=$1; shift
	"$CALLER" "$@" > "$T/$name.log" 2>&1 < /dev/null &
	local pid=$!
	remember_pid $pid
	wait_until 5 grep -q "^caller: ready" "$T/$name.log" || fail "caller $name never got ready"
	echo $pid
}

# go PID NAME ACTION: let caller PID run past its next wait; returns once ACTION is done.
go() {
	kill -USR1 "$1"
	wait_until 10 grep -q "^caller: $3 done" "$T/$2.log" || { cat "$T/$2.log"; fail "caller $2 never did $3"; }
}

# probe [args]: callcount_probe in the background, lines in $T/probe.log; sets PROBE_PID.
probe() {
	"$PROBE" "$@" > "$T/probe.log" 2>&1 < /dev/null &
	PROBE_PID=$!
	remember_pid $PROBE_PID
}

# probe_says REGEX: wait until the probe printed a matching line.
probe_says() {
	wait_until 10 grep -Eq -- "$1" "$T/probe.log" || { cat "$T/probe.log"; fail "probe never said: $1"; }
}

# probe_done: wait for the probe to end; its status and lines go to $T/out.
probe_done() {
	wait $PROBE_PID
	PROBE_STATUS=$?
	cp "$T/probe.log" "$T/out"
}

test_demo_step_threshold_fires_and_counts_agree_with_the_task() {
	"$DEMO" --steps=400 --step-ms=5 > "$T/demo.log" 2>&1 < /dev/null &
	local demo=$!
	remember_pid $demo
	wait_until 5 grep -q "serving" "$T/demo.log" || fail "demo task did not start"
	probe --until-exit --timeout=20000 $demo demo_task demo_step 50
	probe_done
	expect_status 0 $PROBE_STATUS
	expect_line "^attached probe=0 pid=$demo us=[0-9]+$"
	expect_line "^fired probe=0 pid=$demo count=50 thresholds=50$"
	# Every step after the attach counted: the task made 400, a few before the attach.
	local steps count
	steps=$(sed -n 's/^demo_task: \([0-9]*\) steps.*/\1/p' "$T/demo.log")
	count=$(sed -n "s/^count probe=0 pid=$demo \([0-9]*\)$/\1/p" "$T/out")
	[ "$steps" = 400 ] || fail "demo task made '$steps' steps"
	[ -n "$count" ] && [ "$count" -le 400 ] && [ "$count" -ge 300 ] ||
		fail "counted $count of the demo task's 400 steps"
}

test_two_thresholds_fire_in_order_each_once() {
	local c; c=$(start_caller c wait call=100 wait call=100 pause)
	probe --until-exit $c caller dp_caller_hit 150 60
	probe_says "^attached probe=0 pid=$c "
	go $c c call=100
	probe_says "^fired probe=0 pid=$c count=60 thresholds=60$"
	go $c c call=100
	kill -TERM $c
	probe_done
	expect_status 0 $PROBE_STATUS
	[ "$(grep '^fired' "$T/out" | tr '\n' ' ')" = \
		"fired probe=0 pid=$c count=60 thresholds=60 fired probe=0 pid=$c count=150 thresholds=150 " ] ||
		{ cat "$T/out"; fail "expected 60 then 150, once each"; }
	expect_line "^count probe=0 pid=$c 200$"
}

test_thresholds_passed_in_one_burst_each_fire_once() {
	# 61 and 62 are passed while 60 is being reported: the kernel or the
	# counter read reports them, once each, with a count at least theirs.
	local c; c=$(start_caller c wait call=1000 pause)
	probe --until-exit $c caller dp_caller_hit 60 61 62 900
	probe_says "^attached probe=0 "
	go $c c call=1000
	probe_says "thresholds=.*900"
	kill -TERM $c
	probe_done
	expect_status 0 $PROBE_STATUS
	expect_line "^fired probe=0 pid=$c count=60 thresholds=60$"
	local t n
	for t in 61 62 900; do
		n=$(grep -E "^fired .*thresholds=([0-9]+,)*$t(,[0-9]+)*$" "$T/out" | sed 's/.* count=\([0-9]*\) .*/\1/')
		[ -n "$n" ] && [ "$n" -ge $t ] || { cat "$T/out"; fail "threshold $t: fired with count '$n'"; }
	done
	[ "$(grep -Eo 'thresholds=[0-9,]*' "$T/out" | sed 's/thresholds=//' | tr ',' '\n' | sort -n | tr '\n' ' ')" = \
		"60 61 62 900 " ] || { cat "$T/out"; fail "each threshold once"; }
	expect_line "^count probe=0 pid=$c 1000$"
}

test_one_record_per_threshold_not_per_call() {
	local c; c=$(start_caller c wait call=5000 pause)
	probe --until-exit $c caller dp_caller_hit 1000
	probe_says "^attached probe=0 "
	go $c c call=5000
	probe_says "^fired "
	kill -TERM $c
	probe_done
	expect_status 0 $PROBE_STATUS
	[ "$(count_lines '^fired ')" = 1 ] || { cat "$T/out"; fail "not one fired line"; }
	expect_line "^fired probe=0 pid=$c count=1000 thresholds=1000$"
	expect_line "^count probe=0 pid=$c 5000$"
	# The kernel's own tally: 5000 calls, one ring-buffer record.
	expect_line "^records sent=1 lost=0$"
}

test_calls_from_all_threads_are_counted() {
	local c; c=$(start_caller c wait threads=4,2500 pause)
	probe --until-exit $c caller dp_caller_hit 10000
	probe_says "^attached probe=0 "
	go $c c threads=4,2500
	probe_says "^fired "
	kill -TERM $c
	probe_done
	expect_line "^fired probe=0 pid=$c count=10000 thresholds=10000$"
	expect_line "^count probe=0 pid=$c 10000$"
	expect_line "^records sent=1 lost=0$"
}

test_probes_of_two_processes_stay_apart() {
	# The same two functions in two processes, with the probe numbers crossed.
	local a b
	a=$(start_caller a wait call=100 other=50 pause)
	b=$(start_caller b wait call=30 other=20 pause)
	probe --until-exit --watch=$a:0:caller:dp_caller_hit --watch=$a:1:caller:dp_caller_other \
		--watch=$b:0:caller:dp_caller_other --watch=$b:1:caller:dp_caller_hit
	probe_says "^attached probe=1 pid=$b "
	go $a a other=50
	go $b b other=20
	kill -TERM $a $b
	probe_done
	expect_status 0 $PROBE_STATUS
	expect_line "^count probe=0 pid=$a 100$"
	expect_line "^count probe=1 pid=$a 50$"
	expect_line "^count probe=0 pid=$b 20$"
	expect_line "^count probe=1 pid=$b 30$"
}

test_symbol_not_in_the_library_is_one_error_line() {
	local c; c=$(start_caller c pause)
	probe $c caller no_such_function 10
	probe_done
	expect_status 1 $PROBE_STATUS
	expect_line "^error probe=0: pid $c: no function no_such_function in $CALLER$"
	probe $c libc.so.6 memcpy 10
	probe_done
	expect_status 1 $PROBE_STATUS
	expect_line "^error probe=0: pid $c: memcpy in /.*libc\.so\.6 is an IFUNC .*: not supported$"
	probe $c /nonexistent/libdpcalls.so dpcalls_hit 10
	probe_done
	expect_status 1 $PROBE_STATUS
	expect_line "^error probe=0: pid $c: /nonexistent/libdpcalls.so: No such file or directory$"
	probe 999999999 caller dp_caller_hit 10
	probe_done
	expect_status 1 $PROBE_STATUS
	expect_line "^error probe=0: no process 999999999$"
}

test_library_not_mapped_waits_and_is_counted_after_dlopen() {
	local c; c=$(start_caller c wait dlopen=$DPCALLS wait libcall=300 pause)
	probe --until-exit $c libdpcalls.so dpcalls_hit 300
	probe_says "^pending probe=0 pid=$c$"
	go $c c dlopen=$DPCALLS
	probe_says "^attached probe=0 pid=$c path=$DPCALLS$"
	go $c c libcall=300
	probe_says "^fired "
	kill -TERM $c
	probe_done
	expect_status 0 $PROBE_STATUS
	expect_line "^fired probe=0 pid=$c count=300 thresholds=300$"
	expect_line "^count probe=0 pid=$c 300$"
}

test_pending_probe_fails_when_the_process_exits() {
	local c; c=$(start_caller c wait)
	probe $c libdpcalls.so dpcalls_hit 10
	probe_says "^pending probe=0 pid=$c$"
	go $c c wait
	probe_done
	expect_status 0 $PROBE_STATUS
	expect_line "^failed probe=0 pid=$c: pid $c exited before libdpcalls.so was mapped$"
}

# A caller in its own pid and mount namespaces (as in a container) whose
# library lies on a tmpfs that only it can see; echoes its host pid.
start_contained_caller() {
	mkdir -p $T/view
	unshare --pid --fork --mount --mount-proc sh -c \
		"mount -t tmpfs tmpfs $T/view && cp $DPCALLS $T/view/ &&
		 exec $CALLER wait dlopen=$T/view/libdpcalls.so wait libcall=77 pause" > $T/c.log 2>&1 &
	local unshare=$! hostpid=""
	remember_pid $unshare
	wait_until 5 eval 'read -r hostpid _ < /proc/$unshare/task/$unshare/children; [ -n "$hostpid" ] &&
		grep -q "^caller: ready" $T/c.log' || fail "contained caller did not start: $(cat $T/c.log)"
	remember_pid $hostpid
	echo $hostpid
}

test_library_seen_only_inside_a_mount_namespace_is_counted() {
	command -v unshare > /dev/null || fail "unshare missing"
	local c; c=$(start_contained_caller)
	go $c c dlopen=$T/view/libdpcalls.so
	[ ! -e $T/view/libdpcalls.so ] || fail "the library is visible from the host"
	probe --until-exit $c libdpcalls.so dpcalls_hit 77
	probe_says "^attached probe=0 pid=$c "
	go $c c libcall=77
	probe_says "^fired "
	kill -TERM $c
	probe_done
	expect_status 0 $PROBE_STATUS
	expect_line "^fired probe=0 pid=$c count=77 thresholds=77$"
	expect_line "^count probe=0 pid=$c 77$"
}

# A rule or a commands file's wait that cannot work here (a probe, as
# non-root) is refused before any target is touched: the one line names
# the rule, and the target's server never sees a client.
test_probe_rule_that_cannot_work_is_refused_before_connecting() {
	local pid line
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_LOG=1 sleep 600 > $T/agent.log 2>&1 &
	pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "no target socket"
	printf 'wait call:libc:getpid#5\nstop\n' > $T/cmds
	chmod 755 $T; chmod 644 $T/cmds # nobody reads the commands file
	for args in "--window=start=call:libc:getpid#100,stop=+1s" "--commands=$T/cmds"; do
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
			"$DP" --pid=$pid --output=$T/o-$RANDOM $args < /dev/null > $T/out 2>&1
		expect_status 255 $?
		line=$(head -n 1 $T/out)
		[[ "$line" == "[ERROR] Argument --"*"call:libc:getpid"*"': call:, slow:, gap: and stall: conditions need BPF uprobes: not root" ]] ||
			fail "$args: first line: $line"
		[ "$(wc -l < $T/out)" = 1 ] || fail "$args: more than the refusal: $(cat $T/out)"
	done
	! grep -q "client connected" $T/agent.log || fail "the target was connected to: $(cat $T/agent.log)"
}
