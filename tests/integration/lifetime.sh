# A connection's lifetime as CANN's servers count it (docs/PROTOCOL.md Part 2
# sections 3, 6, 7 and 8), against the agent with its limits scaled by its
# environment: dynprof reconnects before the idle limit (cumulative) as
# before the request limit, the agent ends windows on client death as 9.x
# (not as 8.5.0), says why it disconnects, parses DYNAMIC_PROFILING_KEY_PID
# as CANN, and v1 folders (no pid in the name) are found by what appeared.

agent_log_of() { cat "$T"/target.*.log 2>/dev/null; }

# A rule-driven session longer than the idle limit (3 s): each gap is
# 1.5 s, far below it, but the gaps add up past it (9.x never resets the
# count). dynprof reconnects between windows and loses none.
test_rule_session_longer_than_the_idle_limit_keeps_its_target() {
	local pid; pid=$(start_target DYNPROF_AGENT_IDLE_TIMEOUT=3)
	dp --pid=$pid --output=$T/o --window=start=+1500ms,stop=+500ms,every=2s,repeat=6 < /dev/null
	expect_status 0 $?
	expect_no_line "Server disconnected"
	expect_line "^\[INFO\] pid $pid: reconnected before the server's idle limit \(3 s without a window per connection\)$"
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 6 ] || fail "expected 6 windows: $(ls $T/o)"
	[ "$(count_lines 'window saved')" = 6 ] || fail "expected 6 windows saved"
}

# The request limit, scaled to 5 answered per connection: two windows fit
# on each connection, so 5 windows take two reconnections.
test_rule_session_past_a_scaled_request_limit_reconnects() {
	local pid; pid=$(start_target DYNPROF_AGENT_MAX_REQUESTS=5)
	dp --pid=$pid --output=$T/o --window=start=+10ms,stop=+10ms,every=100ms,repeat=5 < /dev/null
	expect_status 0 $?
	expect_no_line "Server disconnected"
	[ "$(count_lines "pid $pid: reconnected before the server's request limit \(5 requests per connection\)")" = 2 ] ||
		fail "expected two reconnections"
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 5 ] || fail "expected 5 windows: $(ls $T/o)"
}

# 9.x: a client that dies mid-window (EOF) has its window stopped and finalised.
test_agent_finishes_the_window_when_its_client_dies() {
	local pid d; pid=$(start_target DYNPROF_AGENT_LOG=1)
	dp_background --pid=$pid --output=$T/o
	dp_send start
	wait_until 10 grep -q "start success" $T/out || fail "no window: $(cat $T/out)"
	d=$(prof_dirs_of $T/o $pid)
	[ -n "$d" ] && [ ! -e $d/host/end_info ] || fail "window not open: $d"
	# Its watchdog too, first: the agent alone must finish the window.
	kill -KILL $(ps -o pid=,comm= --ppid $DP_PID | awk '$2 == "dynprof-wd" { print $1 }') $DP_PID
	wait $DP_PID
	wait_until 10 test -s $d/host/end_info || fail "the agent kept the window of a dead client open"
	grep -q "command read failed mid-window" $T/target.*.log || fail "not ended by the client's death"
	kill -0 $pid || fail "target died"
}

# 8.5.0 (DYNPROF_AGENT_FLAVOUR=abstract): the window outlives its client,
# a later client's STOP ends it.
test_agent_abstract_keeps_the_window_of_a_dead_client_for_a_later_stop() {
	local card pid d wd; card=$(make_card 0)
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		DYNPROF_AGENT_FLAVOUR=abstract "$CARD_USER" "$card" 600 > $T/target.abs.log 2>&1 &
	pid=$!
	remember_pid $pid
	wait_until 5 grep -q "@dyn_prof_sock_$pid\$" /proc/$pid/net/unix || fail "no abstract socket"
	dp_background --pid=$pid --output=$T/o
	dp_send start
	wait_until 10 grep -q "start success" $T/out || fail "no window: $(cat $T/out)"
	d=$(prof_dirs_of $T/o $pid)
	# dynprof's watchdog first (it would stop the window): both die as one, e.g. kill -9 of the group.
	wd=$(ps -o pid=,comm= --ppid $DP_PID | awk '$2 == "dynprof-wd" { print $1 }')
	[ -n "$wd" ] || fail "no watchdog"
	kill -KILL $wd $DP_PID
	wait $DP_PID
	sleep 2
	[ ! -e $d/host/end_info ] || fail "8.5.0 keeps the window open, the agent closed it"
	printf 'stop\nquit\n' | dp --pid=$pid --output=$T/o2
	expect_line "^dynamic profiling for pid $pid stop success$"
	[ -s $d/host/end_info ] || fail "the later STOP did not finish the window"
}

# The AI process exits: 9.x sends DISCONNECT (no reason) and QUIT handling;
# dynprof says the target left, as for any exit (no invented reason), and
# reports the window the QUIT finished.
test_server_exit_disconnect_is_explained_and_its_window_saved() {
	local pid; pid=$(start_target)
	dp_background --pid=$pid --output=$T/o
	dp_send start
	wait_until 10 grep -q "start success" $T/out || fail "no window: $(cat $T/out)"
	kill -TERM $pid
	wait $DP_PID
	expect_status 1 $?
	expect_line "^server process $pid did not create socket, or process has already exited$"
	expect_no_line "Server disconnected"
	expect_line "^\[INFO\] pid $pid: window saved in $T/o/PROF_"
	[ -s "$(prof_dirs_of $T/o $pid)/host/end_info" ] || fail "window not finished"
}

# v1 at exit: DISCONN_RSP "Dynamic profiling Server exit" (CANN's text, no
# period), then QUIT_RSP.
test_v1_server_exit_says_dynamic_profiling_server_exit() {
	local pid; pid=$(start_target DYNPROF_AGENT_PROTOCOL=v1)
	dp_background --pid=$pid --output=$T/o --protocol=v1
	dp_send start
	wait_until 10 grep -q "start success" $T/out || fail "no window: $(cat $T/out)"
	kill -TERM $pid
	wait $DP_PID
	expect_status 1 $?
	expect_line "^Server disconnected, Dynamic profiling Server exit \(pid $pid\)$"
	expect_line "^\[INFO\] pid $pid: window saved in $T/o/PROF_000001_[0-9]{17}_[A-R]{16}$"
}

# DYNAMIC_PROFILING_KEY_PID as CANN 9.x reads it: not an integer -> no
# server at all; the raw text names the socket (leading zeros kept).
test_agent_key_not_an_integer_starts_no_server() {
	local card pid v; card=$(make_card 0)
	for v in abc 12abc 99999999999; do
		env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
			DYNPROF_AGENT_LOG=1 DYNAMIC_PROFILING_KEY_PID=$v "$CARD_USER" "$card" 600 > $T/key.log 2>&1 &
		pid=$!
		remember_pid $pid
		wait_until 5 grep -q "DYNAMIC_PROFILING_KEY_PID: unusable value \"$v\"" $T/key.log ||
			fail "key $v: no log line: $(cat $T/key.log)"
		[ ! -e "$ROOT_HOME/dynamic_profiling_socket_$v" ] && ! has_socket $pid ||
			fail "key $v: a socket was made"
		# Its own sockets: /proc/PID/net/unix lists every one of its network namespace.
		! unix_sockets_of $pid | grep -q dynamic_profiling_socket || fail "key $v: listening"
		kill $pid
	done
}

test_agent_key_raw_text_names_the_socket_0777() {
	# Not 0777 itself: another run's test would serve the same path.
	local key; key=$(raw_key)
	local card pid path=$ROOT_HOME/dynamic_profiling_socket_$key; card=$(make_card 0)
	remember_file "$path"
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		DYNAMIC_PROFILING_KEY_PID=$key "$CARD_USER" "$card" 600 > $T/key.log 2>&1 &
	pid=$!
	remember_pid $pid
	wait_until 5 test -S "$path" || fail "no socket _$key"
	[ ! -e "$ROOT_HOME/dynamic_profiling_socket_${key#0}" ] || fail "the key was rewritten as ${key#0}"
	# dynprof finds it by the same text (a key read as the number ${key#0} would miss it).
	local keyed=$pid
	printf 'start\nstop\n' | dp --pid=$keyed --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $keyed stop success$"
	local v
	for v in 0 -5 ''; do
		env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
			DYNAMIC_PROFILING_KEY_PID=$v "$CARD_USER" "$card" 600 > $T/key2.log 2>&1 &
		pid=$!
		remember_pid $pid
		wait_until 5 has_socket $pid || fail "key '$v': no socket at its own pid"
		kill $pid
	done
}

# v1 names carry no pid: the window's folder is the one that appeared
# between START and STOP. Folders there before the run or made before the
# START, a symlink and a file with v1 names, and names near the shape
# (a letter past R, a digit short) are not reported.
test_v1_window_folder_found_by_appearance_reported_and_recorded() {
	local pid; pid=$(start_target DYNPROF_AGENT_PROTOCOL=v1)
	mkdir -p $T/o/PROF_000001_20200101000000000_AAAAAAAAAAAAAAAA $T/elsewhere
	dp_background --pid=$pid --output=$T/o --protocol=v1
	wait_until 10 grep -q "Start profiling" $T/out || fail "not connected: $(cat $T/out)"
	# made after connecting, before START: not the window's either
	mkdir $T/o/PROF_000001_20200101000000004_AAAAAAAAAAAAAAAD
	dp_send start
	wait_until 10 grep -q "start success" $T/out || fail "no window: $(cat $T/out)"
	ln -s $T/elsewhere $T/o/PROF_000001_20200101000000001_AAAAAAAAAAAAAAAB
	touch $T/o/PROF_000001_20200101000000002_AAAAAAAAAAAAAAAC
	mkdir $T/o/PROF_000001_20200101000000003_AAAAAAAAAAAAAAAS $T/o/PROF_000001_2020010100000000_AAAAAAAAAAAAAAAAA
	dp_send stop quit
	wait $DP_PID
	expect_status 0 $?
	[ "$(count_lines 'window saved')" = 1 ] || fail "expected exactly one window saved"
	expect_line "^\[INFO\] pid $pid: window saved in $T/o/PROF_000001_[0-9]{17}_[A-R]{16}$"
	local name; name=$(sed -n "s|^\[INFO\] pid $pid: window saved in $T/o/||p" $T/out)
	[ -s $T/o/$name/host/end_info ] || fail "$name is not the window's folder"
	[ "$(cat $T/o/*_profiling_output_record)" = "$name" ] || fail "record: $(cat $T/o/*_profiling_output_record)"
}
