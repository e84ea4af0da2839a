# libdynprof_agent behaves as CANN's server, checked through dynprof and
# the file system.

test_agent_socket_is_mode_0600_in_owner_home() {
	local pid; pid=$(start_target)
	[ "$(stat -c %a "$(socket_of $pid)")" = 600 ] || fail "socket mode $(stat -c %a "$(socket_of $pid)")"
	[ "$(stat -c %u "$(socket_of $pid)")" = 0 ] || fail "socket not owned by the target's user"
}

# A process ended by a signal runs no atexit: the agent removes its socket
# file itself where the program left the signal at its default.
test_agent_removes_its_socket_file_when_ended_by_a_signal() {
	local sig pid path
	for sig in TERM HUP; do
		# sleep keeps every signal at its default (card_user handles SIGTERM itself).
		env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" sleep 600 > "$T/sleep.log" 2>&1 &
		pid=$!
		remember_pid $pid
		wait_until 5 has_socket $pid || fail "SIG$sig: pid $pid never opened its socket"
		path=$(socket_of $pid)
		kill -$sig $pid
		wait $pid
		[ $? -eq $((128 + $(kill -l $sig))) ] || fail "SIG$sig: pid $pid did not die of the signal"
		[ ! -e "$path" ] || fail "SIG$sig: the socket file $path was left behind"
	done
}

# A signal the program ignores (or handles) stays its own: the agent does
# not make it deadly.
test_agent_leaves_an_ignored_signal_ignored() {
	local pid
	( trap '' TERM; exec env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" sleep 600 > "$T/ign.log" 2>&1 ) &
	pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "target $pid never opened its socket"
	kill -TERM $pid
	sleep 0.3 # nothing to wait for: the point is that nothing happens
	all_gone $pid && fail "SIGTERM, ignored by the program, ended it"
	has_socket $pid || fail "the socket went with an ignored SIGTERM"
}

test_agent_key_env_names_socket_and_replaces_stale_file() {
	local key=$(own_key 1) path
	path=$ROOT_HOME/dynamic_profiling_socket_$key
	echo stale > "$path"
	remember_file "$path"
	local card; card=$(make_card 0)
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		DYNAMIC_PROFILING_KEY_PID=$key "$CARD_USER" "$card" 600 > $T/t.log 2>&1 &
	local pid=$!
	remember_pid $pid
	wait_until 5 pid_serves $pid "$path" || fail "no socket of $pid at the key's path"
	# (A file of that name may be another suite's process's, one that had the same pid.)
	! pid_serves $pid "$(socket_of $pid)" || fail "socket also at the pid's path"
	printf 'start\nstop\n' | dp --pid=$pid --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid stop success$"
}

test_second_process_with_same_key_takes_path_first_is_refused() {
	local key=$(own_key 2) card a b; card=$(make_card 0)
	remember_file "$ROOT_HOME/dynamic_profiling_socket_$key"
	for v in a b; do
		env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
			DYNAMIC_PROFILING_KEY_PID=$key "$CARD_USER" "$card" 600 > $T/$v.log 2>&1 &
		remember_pid $!
		eval "$v=\$!"
		wait_until 5 test -S "$ROOT_HOME/dynamic_profiling_socket_$key" || fail "no socket"
		sleep 0.2
	done
	printf 'start\nstop\n' | dp --pid=$a,$b --output=$T/o
	expect_line "^\[ERROR\] dynprof: refusing pid $a: .* is served by pid $b \(card_user, uid 0\), not by pid $a"
	expect_line "^dynamic profiling for pid $b stop success$"
}

# The agent counts idle as 9.x does (2 ticks here); an idle console
# reconnects before the limit, so the target stays and still answers.
test_idle_console_reconnects_before_the_idle_limit() {
	local pid; pid=$(start_target DYNPROF_AGENT_IDLE_TIMEOUT=2)
	dp_background --pid=$pid --output=$T/o
	sleep 5
	dp_send start stop quit
	wait $DP_PID
	expect_status 0 $?
	expect_line "^\[INFO\] pid $pid: reconnected before the server's idle limit \(2 s without a window per connection\)$"
	expect_line "^dynamic profiling for pid $pid stop success$"
	expect_no_line "Server disconnected"
	[ "$(prof_dirs_of $T/o $pid | wc -l)" -eq 1 ] || fail "expected one window"
}

test_agent_v1_reports_every_answer() {
	local pid; pid=$(start_target DYNPROF_AGENT_PROTOCOL=v1)
	printf 'stop\nstart\nstart\nstop\n' | dp --pid=$pid --output=$T/o --protocol=v1
	expect_status 0 $?
	expect_line "^\[WARNING\] dynamic profiling for pid $pid has not started$"
	expect_line "^\[INFO\] pid $pid: Collection is not started\.$"
	expect_line "^\[WARNING\] dynamic profiling for pid $pid already started$"
	expect_line "^\[INFO\] pid $pid: Collection has been started\.$"
	expect_line "^dynamic profiling for pid $pid stop success$"
}

# CANN's v1 fails a START with no device listing the devices it started:
# none. dynprof reads that as "no device yet" and keeps the target.
test_agent_v1_without_device_is_not_set_device() {
	local pid; pid=$(start_target_without_card DYNPROF_AGENT_PROTOCOL=v1)
	printf 'start\nquit\n' | dp --pid=$pid --output=$T/o --protocol=v1
	expect_status 0 $?
	expect_line "^\[WARNING\] dynamic profiling device for pid $pid has not been set up$"
	expect_line "^\[INFO\] pid $pid: Started device Id: $"
	expect_line "^dynamic profiling for pid $pid quit success$"
}

test_agent_serves_a_new_client_after_quit() {
	local pid; pid=$(start_target)
	printf 'start\nstop\nquit\n' | dp --pid=$pid --output=$T/o
	expect_status 0 $?
	printf 'start\nstop\nquit\n' | dp --pid=$pid --output=$T/o
	expect_status 0 $?
	[ "$(prof_dirs_of $T/o $pid | wc -l)" -eq 2 ] || fail "expected two windows over two connections"
}

test_demo_task_serves_through_the_linked_api() {
	DEMO_SECONDS=1 DEMO_OUTPUT=$T/demo DYNPROF_BUILD=$B timeout 60 "$DYNPROF_TESTS/../tools/demo.sh" > $T/out 2>&1
	expect_status 0 $?
	expect_line "start success"
	expect_line "stop success"
	expect_line "^  $T/demo/PROF_"
	expect_line "host/end_info"
	expect_line "rule 1: start=call:demo_task:demo_step#100 fired for pid [0-9]+ \(call 100\)$"
	expect_line '^  \{"pid":[0-9]+,"rule":1,"window":1,"start":\{"condition":"call:demo_task:demo_step#100"'
	[ "$(ls -d $T/demo/PROF_* | wc -l)" = 2 ] || fail "expected two windows: $(ls $T/demo)"
}

# demo_task as a non-root user: no card node can be made (mknod needs
# root), so it says so and serves without one; dynprof of the same user
# attaches and saves a window, as README's quick tour does.
test_demo_task_runs_as_a_user_without_root() {
	local u=dpd$$x$RANDOM home pid
	home=$T/demo-home
	mkdir -p $home
	useradd -M -N -s /bin/sh -d $home "$u" > /dev/null || fail "useradd $u failed"
	echo "$u" >> $T/.users
	chown "$u" $home; chmod 755 $T
	setpriv --reuid="$(id -u $u)" --regid="$(id -g $u)" --clear-groups --inh-caps=-all \
		"$DEMO" --quiet > $T/demo.log 2>&1 &
	pid=$!
	remember_pid $pid
	wait_until 5 test -S $home/dynamic_profiling_socket_$pid || fail "the demo did not serve as $u: $(cat $T/demo.log)"
	grep -q "no card node made (mknod needs root): serving without one; attach with dynprof --pid=$pid" $T/demo.log ||
		fail "no word on the missing node: $(cat $T/demo.log)"
	printf 'start\nstop\nquit\n' | setpriv --reuid="$(id -u $u)" --regid="$(id -g $u)" --clear-groups --inh-caps=-all \
		timeout -s KILL 60 "$DP" --pid=$pid --output=$home/o > $T/out 2>&1
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid stop success$"
	[ -n "$(prof_dirs_of $home/o $pid)" ] || fail "no window saved: $(cat $T/out)"
}
