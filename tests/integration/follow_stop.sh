# Follow mode when a job's container stops with a window open: the job's
# connection ends first ("target left"), then the model sees its exit.
# In between the model still holds it as a listening card holder: no join
# may be tried then (it failed with "cannot join: no process N" and an
# `error` event on 5 of 11 docker/podman stops).

# A job in its own pid, mount and network namespaces, as an engine's
# container's main process: card 2 (other runs of the suite hold card 0)
# and a program of the test's own, which --exe takes alone.
start_job() {
	local card; card=$(make_card 2)
	mkdir -p $T/bin; [ -x $T/bin/stop_job ] || cp "$CARD_USER" $T/bin/stop_job
	# A /root of its own, as a container has: the job is pid 1 of its
	# namespace, and every such job of every run (another checkout's too)
	# would serve the host's /root/dynamic_profiling_socket_1, the last one
	# bound taking the name from the others (seen: "served by pid N").
	unshare --pid --fork --mount --mount-proc --net sh -c "mount -t tmpfs tmpfs $ROOT_HOME &&
		exec env PROFILING_MODE=dynamic LD_PRELOAD='$AGENT_SO' DYNPROF_AGENT_DEVICES='$T/dev/davinci*' \
		$T/bin/stop_job $card 600" > $T/job.log 2>&1 &
	local unshare=$! pid=""
	remember_pid $unshare
	wait_until 5 eval 'read -r pid _ < /proc/$unshare/task/$unshare/children; [ -n "$pid" ] &&
		grep -q "^$T/bin/stop_job" /proc/$pid/cmdline' || fail "job did not start: $(cat $T/job.log)"
	remember_pid $pid
	echo $pid
}

test_stopped_jobs_with_a_window_open_leave_without_errors() {
	local i pid
	dp_background --pid=auto --follow --exe="$T/bin/*" --output=$T/o --device="$T/dev/davinci*" --events=json:$T/events
	wait_until 10 grep -q '^\[INFO\] following card users' $T/out || { cat $T/out; fail "follow mode did not start"; }
	dp_send start
	for i in 1 2 3 4 5 6 7 8 9 10; do
		pid=$(start_job)
		wait_until 10 grep -q "^dynamic profiling for pid $pid start success$" $T/out ||
			{ cat $T/out; fail "job $i ($pid) did not start a window"; }
		# docker stop: SIGTERM to the container's pid 1.
		kill -TERM $pid
		wait_until 10 grep -q "^\[INFO\] target left: pid $pid " $T/out || { cat $T/out; fail "job $i did not leave"; }
		sleep 0.3
	done
	dp_send quit
	wait $DP_PID
	expect_no_line "cannot join|ERROR"
	! grep -q '"event":"error"' $T/events || fail "error events: $(grep '"event":"error"' $T/events)"
}
