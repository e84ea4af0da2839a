# Follow mode (--pid=auto --follow): every card user of the host and of
# its containers joins as it appears (real BPF, real processes, real
# namespaces), if the filters take it; it leaves at its exit, a new one
# joins again; rules apply to each joiner from its join; the run ends
# only on quit or a signal.

. "$DYNPROF_TESTS/lib/users.sh"

follow_bg() { # follow_bg [dynprof args]: a follow run in the background, commands through dp_send
	dp_background --pid=auto --follow --output=$T/o --device="$T/dev/davinci*" "$@"
	wait_until 10 grep -q '^\[INFO\] following card users' $T/out || { cat $T/out; fail "follow mode did not start"; }
}
joined_pid() { grep -q "^\[INFO\] target joined: pid $1 " $T/out; }
left_pid() { grep -q "^\[INFO\] target left: pid $1 " $T/out; }
joined_twice() { [ "$(grep -c "^\[INFO\] target joined: pid $1 " $T/out)" -ge 2 ]; }
# A job the filters refuse: not joined, once dynprof has looked at it. The
# caller waits for that first (no time is waited here): for a job present
# when the run began, follow_bg's line (it comes after the first round, in
# which every present card user was joined or refused); for one started
# later, the join of a job the filters take, started after it.
never_joins() { # never_joins PID
	! joined_pid $1 || { cat $T/out; fail "expected pid $1 refused by the filters; it joined"; }
}

test_follow_without_pid_auto_is_refused() {
	dp --follow --device="$T/dev/davinci*" < /dev/null
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument --follow: it goes with --pid=auto"
	dp --pid=12 --follow < /dev/null
	expect_status 255 $?
	dp --pid=12 --exe=x < /dev/null
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument --exe: it goes with --pid=auto\.$"
}

# Present at the start, started later, leaving and a new one rejoining;
# zero targets and the end of standard input do not end the run; quit does.
test_jobs_join_as_they_come_leave_and_rejoin() {
	local first; first=$(start_target)
	follow_bg
	wait_until 10 joined_pid $first || { cat $T/out; fail "the job present at the start did not join"; }
	kill $first
	wait_until 10 left_pid $first || { cat $T/out; fail "no leave"; }
	sleep 0.5 # no target left: the run goes on
	kill -0 $DP_PID || { cat $T/out; fail "dynprof ended with no target left"; }
	local late; late=$(start_target)
	wait_until 10 joined_pid $late || { cat $T/out; fail "a job started after dynprof did not join"; }
	local again; again=$(start_target)
	wait_until 10 joined_pid $again || { cat $T/out; fail "a new job did not join"; }
	dp_send start
	wait_until 10 grep -q "^dynamic profiling for pid $again start success$" $T/out || { cat $T/out; fail "no start"; }
	kill $again
	wait_until 10 left_pid $again || { cat $T/out; fail "no leave of $again"; }
	dp_send quit
	wait $DP_PID
	expect_status 0 $?
	expect_line "^\[INFO\] summary: 3 targets joined"
	[ -s "$(prof_dirs_of $T/o $again)/host/end_info" ] || fail "no window from $again: $(ls $T/o)"
}

# A joined target's socket is the session's to watch (the model's pass
# leaves it alone: with 1000 served it re-read each one every 1.6 s); one
# the session let go while it lives joins again when it listens. Here its
# server ends each connection after one request and listens on.
test_a_target_let_go_alive_joins_again_when_it_listens() {
	local pid; pid=$(start_target DYNPROF_AGENT_MAX_REQUESTS=1)
	follow_bg
	wait_until 10 joined_pid $pid || { cat $T/out; fail "no join"; }
	dp_send start
	wait_until 10 grep -q "^Server disconnected, request limit reached" $T/out || { cat $T/out; fail "no disconnect"; }
	wait_until 10 joined_twice $pid ||
		{ cat $T/out; fail "pid $pid was not joined again once it listened again"; }
	dp_send quit
	wait $DP_PID
	expect_status 0 $?
}

# With the console's window open (from a --commands file that has ended),
# a joiner starts at once; stdin at its end ends nothing either.
test_joiner_gets_the_open_window_after_the_commands_end() {
	echo start > $T/cmds
	"$DP" --pid=auto --follow --output=$T/o --device="$T/dev/davinci*" --commands=$T/cmds \
		< /dev/null > $T/out 2>&1 &
	DP_PID=$!
	remember_pid $DP_PID
	wait_until 10 grep -q '^\[INFO\] no target yet: the window opens in each target as it joins' $T/out ||
		{ cat $T/out; fail "start not run"; }
	sleep 0.5
	kill -0 $DP_PID || { cat $T/out; fail "the end of --commands ended the run"; }
	local pid; pid=$(start_target)
	wait_until 10 grep -q "^dynamic profiling for pid $pid start success$" $T/out ||
		{ cat $T/out; fail "the joiner did not get the open window"; }
	kill -INT $DP_PID
	wait $DP_PID
	expect_status 130 $?
	expect_line "^dynamic profiling for pid $pid stop success$"
}

test_job_in_a_container_joins_and_container_filter_takes_it_only() {
	local name=trainjob$RANDOM host; host=$(start_target)
	follow_bg --container=$name --container=nosuch$RANDOM
	local pid; pid=$(CTR_CGROUP=$(make_cgroup $name) start_contained_target)
	wait_until 10 joined_pid $pid || { cat $T/out; fail "the contained job did not join"; }
	never_joins $host
	dp_send start stop
	wait_until 20 grep -q "^\[INFO\] pid $pid: window saved in $T/o/PROF_" $T/out || { cat $T/out; fail "no window"; }
	[ -s "$(prof_dirs_of $T/o 1)/host/end_info" ] || fail "no PROF_ folder from the container: $(ls $T/o)"
}

# A name is the target's own: uid 0 is "trainer" in the container's passwd, "root" on the host.
test_user_filter_takes_names_from_the_targets_passwd() {
	local host; host=$(start_target)
	# nobody is the host's too, with another uid than the host job's.
	follow_bg --user=trainer --user=nobody
	local pid; pid=$(CTR_USER=trainer start_contained_target)
	wait_until 10 joined_pid $pid || { cat $T/out; fail "the container's trainer did not join"; }
	never_joins $host
	dp_send quit
	wait $DP_PID
	# A uid is the host's: both run as 0.
	rm -f $T/in
	follow_bg --user=0 --user=nosuchuser
	wait_until 10 joined_pid $host || { cat $T/out; fail "--user=0 did not take the host job"; }
	wait_until 10 joined_pid $pid || { cat $T/out; fail "--user=0 did not take the container's job"; }
	dp_send quit
	wait $DP_PID
	rm -f $T/in
	follow_bg --user=$((RANDOM + 20000))
	never_joins $host
	dp_send quit
	wait $DP_PID
	rm -f $T/in
	# The host's name of its uid takes a container's job too (its own passwd says trainer).
	follow_bg --user=root
	wait_until 10 joined_pid $pid || { cat $T/out; fail "--user=root did not take the container's job"; }
}

# The console's user= selector means what --user means: a name from the
# target's own passwd. A real unprivileged user's target, root of its own
# user namespace, whose passwd alone names that uid 0 (the host has no such
# user): start and stop user=NAME act on it and not on the host's job, as
# --user=NAME takes it and not the host's.
test_user_selector_takes_names_from_the_targets_passwd() {
	local u host evil inner=inner$RANDOM; u=$(make_user)
	mkdir -m 1777 $T/o
	# Over its /etc, not its /etc/passwd: a useradd elsewhere on the host
	# renames a new passwd into place, which a file bind mount does not survive.
	mkdir $T/u/$u/etc && echo "$inner:x:0:0::/root:/bin/sh" > $T/u/$u/etc/passwd
	host=$(start_target)
	evil=$(start_hostile_target $u "mount --bind $T/u/$u/etc /etc || exit 1")
	! getent passwd $inner > /dev/null || fail "the host has a user $inner"
	follow_bg
	wait_until 10 joined_pid $evil || { cat $T/out; fail "the namespace's job did not join"; }
	wait_until 10 joined_pid $host || { cat $T/out; fail "the host job did not join"; }
	dp_send "start user=$inner"
	wait_until 20 grep -q "^dynamic profiling for pid $evil start success$" $T/out ||
		{ cat $T/out; fail "start user=$inner did not start pid $evil"; }
	dp_send "stop user=$inner"
	wait_until 20 grep -q "^dynamic profiling for pid $evil stop success$" $T/out ||
		{ cat $T/out; fail "stop user=$inner did not stop pid $evil"; }
	dp_send quit
	wait $DP_PID
	expect_status 0 $?
	expect_no_line "pid $host start success"
	rm -f $T/in
	follow_bg --user=$inner
	wait_until 10 joined_pid $evil || { cat $T/out; fail "--user=$inner did not take pid $evil"; }
	never_joins $host
}

test_exe_filter_matches_the_path_or_its_base_name() {
	mkdir -p $T/bin && cp "$CARD_USER" $T/bin/other_job
	local card; card=$(make_card 0)
	follow_bg --exe=card_user --exe="$T/nosuch/*"
	# other_job first: card_user's join, after it, says dynprof has looked at it.
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		$T/bin/other_job $card 600 > $T/other.log 2>&1 &
	local other=$!
	remember_pid $other
	wait_until 5 has_socket $other || fail "other_job has no socket"
	local pid; pid=$(start_target)
	wait_until 10 joined_pid $pid || { cat $T/out; fail "card_user did not join"; }
	never_joins $other
	dp_send quit
	wait $DP_PID
	rm -f $T/in
	# The whole path, and the filters together (AND): exe and a container nothing is in.
	follow_bg --exe="$T/bin/*"
	wait_until 10 joined_pid $other || { cat $T/out; fail "the path glob did not take other_job"; }
	never_joins $pid
	dp_send quit
	wait $DP_PID
	rm -f $T/in
	follow_bg --exe="$T/bin/*" --container=nosuch$RANDOM
	never_joins $other
}

# start=+1s counts from each joiner's join (not from the run's start, 3 s before).
test_window_rule_applies_to_a_late_joiner_from_its_join() {
	follow_bg --window=start=+1s,stop=+1s --events=json:$T/events
	sleep 3
	local pid; pid=$(start_target)
	wait_until 20 grep -q "^\[INFO\] pid $pid: window saved in $T/o/PROF_" $T/out ||
		{ cat $T/out; fail "the rule did not fire on the late joiner"; }
	expect_line "^\[INFO\] rule 1: start=\+1s fired for pid $pid$"
	[ -s "$(prof_dirs_of $T/o $pid)/host/end_info" ] || fail "no PROF_ folder: $(ls $T/o)"
	local join open
	join=$(grep '"event":"target-join"' $T/events | grep -o '"time_us":[0-9]*' | head -1 | cut -d: -f2)
	open=$(grep '"event":"window-open"' $T/events | grep -o '"time_us":[0-9]*' | head -1 | cut -d: -f2)
	[ -n "$join" ] && [ -n "$open" ] || fail "no events: $(cat $T/events)"
	[ $((open - join)) -ge 900000 ] || fail "the window opened $(( (open - join) / 1000 )) ms after the join, not 1 s"
	# Every rule done on every target so far: the run still follows.
	kill -0 $DP_PID || { cat $T/out; fail "dynprof ended when the rule was done"; }
	local next; next=$(start_target)
	wait_until 20 grep -q "^\[INFO\] rule 1: start=+1s fired for pid $next$" $T/out ||
		{ cat $T/out; fail "the rule did not fire on the next joiner"; }
}

test_sigterm_stops_the_open_window_and_exits_128_plus_15() {
	follow_bg
	local pid; pid=$(start_target)
	wait_until 10 joined_pid $pid || { cat $T/out; fail "no join"; }
	dp_send start
	wait_until 10 grep -q "^dynamic profiling for pid $pid start success$" $T/out || { cat $T/out; fail "no start"; }
	kill -TERM $DP_PID
	wait $DP_PID
	expect_status 143 $?
	expect_line "^\[INFO\] received SIGTERM: stopping open windows and quitting$"
	expect_line "^dynamic profiling for pid $pid stop success$"
	[ -s "$(prof_dirs_of $T/o $pid)/host/end_info" ] || fail "the window was not saved: $(ls $T/o)"
}

# A join that failed for now is tried again: a job whose server is slow to
# hand the params back (stopped here; on a loaded host, a burst of jobs
# starting at once: 390 of 1000 once) times out once, then joins when it
# answers, not never.
test_a_join_that_timed_out_is_tried_again() {
	local slow; slow=$(start_target)
	kill -STOP $slow
	follow_bg
	wait_until 10 grep -q "^\[ERROR\] recv params timeout, server for pid $slow " $T/out ||
		{ kill -CONT $slow; cat $T/out; fail "the stopped job's join did not time out"; }
	# Written right after the timeout's line (once read between the two, under two suites).
	wait_until 5 grep -q "^\[INFO\] pid $slow: its join is tried again in 1 s (1 of 5)$" $T/out ||
		{ kill -CONT $slow; cat $T/out; fail "no retry said after the timeout"; }
	kill -CONT $slow
	wait_until 20 joined_pid $slow || { cat $T/out; fail "the job was not joined once it answered"; }
	dp_send start
	wait_until 10 grep -q "^dynamic profiling for pid $slow start success$" $T/out || { cat $T/out; fail "no start"; }
	dp_send quit
	wait $DP_PID
	expect_status 0 $?
}
