# Every window is accounted for: saved, saved incomplete (a PROF_ folder
# without host/end_info) or lost with a reason, whatever ended it; the
# console, the window record, the --events and the summary agree with the
# folders on disk.

# accounts_agree OUTPUT: the PROF_ folders in OUTPUT, msprof's record, the
# window record's lines, the window-close events ($T/ev) and the summary line
# ($T/out) tell the same story: one folder per window saved or saved
# incomplete, finished (end_info) exactly when saved, and every window opened
# has one fate. Echoes "saved incomplete lost" for the caller to check.
accounts_agree() {
	local o=$1 disk rec wrec evp d fin=0 part=0 s i l opened
	disk=$(cd $o && ls -d PROF_* 2>/dev/null | sort)
	for d in $disk; do
		if [ -f $o/$d/host/end_info ]; then fin=$((fin + 1)); else part=$((part + 1)); fi
	done
	rec=$(cat $o/*_profiling_output_record 2>/dev/null | sort)
	[ "$rec" = "$disk" ] || fail "msprof's record ($rec) is not the folders on disk ($disk)"
	wrec=$(jq -r '.prof[]' $o/*_dynprof_windows 2>/dev/null | xargs -rn1 basename | sort)
	[ "$wrec" = "$disk" ] || fail "the window record ($wrec) is not the folders on disk ($disk)"
	evp=$(jq -r 'select(.event == "window-close") | .prof[]' $T/ev | xargs -rn1 basename | sort)
	[ "$evp" = "$disk" ] || fail "window-close events ($evp) are not the folders on disk ($disk)"
	read -r opened s i l < <(sed -En 's/.*summary: [0-9]+ targets? joined, ([0-9]+) windows? opened, .*; windows: ([0-9]+) saved, ([0-9]+) saved incomplete, ([0-9]+) lost$/\1 \2 \3 \4/p' $T/out)
	[ -n "$opened" ] || { cat $T/out; fail "no summary line"; }
	[ $((s + i + l)) -eq "$opened" ] || fail "summary: $opened opened, $s + $i + $l accounted"
	[ "$s" -eq $fin ] && [ "$i" -eq $part ] || fail "summary $s saved, $i incomplete; on disk $fin finished, $part without end_info"
	for f in saved incomplete lost; do
		local want; case $f in saved) want=$s ;; incomplete) want=$i ;; lost) want=$l ;; esac
		[ "$(jq -r 'select(.event == "window-close") | .fate' $T/ev | grep -c "^$f\$")" -eq "$want" ] ||
			fail "window-close events with fate $f: not $want: $(cat $T/ev)"
		[ "$(jq -r '.fate' $o/*_dynprof_windows 2>/dev/null | grep -c "^$f\$")" -eq "$want" ] ||
			fail "window record lines with fate $f: not $want: $(cat $o/*_dynprof_windows)"
	done
	[ "$(jq -r 'select(.event == "window-open") | .pid' $T/ev | wc -l)" -eq "$opened" ] ||
		fail "window-open events are not the $opened windows opened"
	echo "$s $i $l"
}

expect_accounts() { # expect_accounts OUTPUT SAVED INCOMPLETE LOST
	local got; got=$(accounts_agree "$1") || exit 1
	[ "$got" = "$2 $3 $4" ] || { cat $T/out; fail "windows saved/incomplete/lost: $got, expected $2 $3 $4"; }
}

window_open() { grep -q "start success" $T/out; }

# json_has FILTER FILE: some JSON line of FILE passes the jq condition FILTER.
json_has() { [ -n "$(jq -c "select($1)" "$2" 2>/dev/null)" ]; }

# A worker that exits mid-window: 9.x says DISCONNECT from its exit path,
# after finishing the window; the folder is saved, the exit said as msprof does.
test_attach_worker_exit_with_disconnect_saves_its_window() {
	local pid; pid=$(start_target)
	dp_background --pid=$pid --output=$T/o --events=json:$T/ev
	dp_send start
	wait_until 10 window_open || fail "no window: $(cat $T/out)"
	kill -TERM $pid
	wait $DP_PID
	expect_status 1 $?
	expect_line "^server process $pid did not create socket, or process has already exited$"
	expect_no_line "Server disconnected"
	expect_line "^\[INFO\] pid $pid: window saved in $T/o/PROF_"
	expect_accounts $T/o 1 0 0
	json_has ".event == \"window-close\" and .pid == $pid and .fate == \"saved\"" $T/ev ||
		fail "no saved window-close: $(cat $T/ev)"
	json_has '.ended == "exit"' $T/o/*_dynprof_windows || fail "record: not ended by exit"
}

# 8.5.0 sends nothing at exit (EOF only): the window is found all the same.
test_attach_worker_exit_without_disconnect_saves_its_window() {
	local card pid; card=$(make_card 0)
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		DYNPROF_AGENT_FLAVOUR=abstract "$CARD_USER" "$card" 600 > $T/target.abs.log 2>&1 &
	pid=$!
	remember_pid $pid
	wait_until 5 grep -q "@dyn_prof_sock_$pid\$" /proc/$pid/net/unix || fail "no abstract socket"
	dp_background --pid=$pid --output=$T/o --events=json:$T/ev
	dp_send start
	wait_until 10 window_open || fail "no window: $(cat $T/out)"
	kill -TERM $pid
	wait $DP_PID
	expect_status 1 $?
	expect_line "^\[INFO\] pid $pid: window saved in $T/o/PROF_"
	expect_accounts $T/o 1 0 0
}

# Launch mode: "target left: pid N (exited)", never a server reason v2 does not give.
test_launch_worker_exit_mid_window_is_target_left_and_saved() {
	mkdir -p $T/o
	cat > $T/run.sh <<-EOS
	#!/bin/sh
	env LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*' $CARD_USER $(make_card 0) 600 &
	echo \$! > $T/worker
	wait
	EOS
	chmod +x $T/run.sh
	mkfifo $T/in
	# $T/out before the FIFO: emptied before the caller goes on (see dp_background).
	"$DP" --dynamic=on --output=$T/o --device="$T/dev/davinci*" --events=json:$T/ev $T/run.sh > $T/out 2>&1 < $T/in &
	DP_PID=$!
	remember_pid $DP_PID
	exec 7> $T/in
	wait_until 10 grep -q "target joined" $T/out || fail "worker did not join: $(cat $T/out)"
	local w; w=$(cat $T/worker)
	remember_pid $w
	dp_send start
	wait_until 10 window_open || fail "no window: $(cat $T/out)"
	kill -TERM $w
	# The application ends with its worker, and the run with it.
	wait $DP_PID
	expect_status 0 $?
	expect_line "^\[INFO\] target left: pid $w \(exited\)$"
	expect_no_line "Server disconnected"
	expect_line "^\[INFO\] pid $w: window saved in $T/o/PROF_"
	expect_accounts $T/o 1 0 0
}

# A crashed rank (SIGKILL) leaves a folder without end_info: saved incomplete.
test_sigkilled_worker_leaves_a_folder_saved_incomplete() {
	local pid; pid=$(start_target)
	dp_background --pid=$pid --output=$T/o --events=json:$T/ev
	dp_send start
	wait_until 10 window_open || fail "no window: $(cat $T/out)"
	kill_hard $pid
	wait $DP_PID
	expect_status 1 $?
	expect_line "^\[WARNING\] pid $pid: window saved incomplete in $T/o/PROF_[0-9_]+${pid}[A-R]{8}: it has no host/end_info"
	expect_accounts $T/o 0 1 0
	json_has '.event == "window-close" and .fate == "incomplete" and (.reason | test("has no host/end_info"))' $T/ev ||
		fail "window-close has no reason: $(cat $T/ev)"
}

# The same crash in launch mode, beside a rank that stops normally.
test_launch_crashed_rank_is_incomplete_the_other_saved() {
	mkdir -p $T/o
	cat > $T/run.sh <<-EOS
	#!/bin/sh
	env LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*' $CARD_USER $(make_card 0) 600 &
	echo \$! > $T/w1
	env LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*' $CARD_USER $(make_card 0) 600 &
	echo \$! > $T/w2
	wait
	EOS
	chmod +x $T/run.sh
	mkfifo $T/in
	# $T/out before the FIFO: emptied before the caller goes on (see dp_background).
	"$DP" --dynamic=on --output=$T/o --device="$T/dev/davinci*" --events=json:$T/ev $T/run.sh > $T/out 2>&1 < $T/in &
	DP_PID=$!
	remember_pid $DP_PID
	exec 7> $T/in
	wait_until 10 eval '[ "$(grep -c "target joined" $T/out)" -eq 2 ]' || fail "workers did not join: $(cat $T/out)"
	local w1 w2; w1=$(cat $T/w1); w2=$(cat $T/w2)
	remember_pid $w1; remember_pid $w2
	dp_send start
	wait_until 10 eval '[ "$(grep -c "start success" $T/out)" -eq 2 ]' || fail "no windows: $(cat $T/out)"
	kill_hard $w1
	wait_until 10 grep -q "target left: pid $w1" $T/out || fail "crash not seen: $(cat $T/out)"
	dp_send stop quit
	wait_until 10 all_gone $w2 || kill -TERM $w2
	wait $DP_PID
	expect_line "^\[INFO\] target left: pid $w1 \(exited\)$"
	expect_line "^\[WARNING\] pid $w1: window saved incomplete in "
	expect_line "^\[INFO\] pid $w2: window saved in "
	expect_accounts $T/o 1 1 0
}

# A target in its own mount namespace, writing inside it (its --output is
# not visible there): it exits mid-window and its namespace is gone before
# dynprof looks (dynprof stopped meanwhile). The held folder fd still
# reaches the folder: it comes out to --output.
start_contained() {
	local card; card=$(make_card 0)
	mkdir -p $T/ctr/etc
	echo "root:x:0:0:root:/home/inside-only:/bin/sh" > $T/ctr/etc/passwd
	{
		echo "mkdir -p /home/inside-only && $(etc_over $T/ctr/etc) || exit 1"
		echo "exec 3<$card"
		echo "mount -t tmpfs tmpfs $T || exit 1"
		echo "export PROFILING_MODE=dynamic LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*'"
		echo "exec $CARD_USER - 600"
	} > $T/ctr/run.sh
	unshare --pid --fork --mount --mount-proc sh -c "mount -t tmpfs tmpfs /home && exec sh $T/ctr/run.sh" \
		> $T/ctr.log 2>&1 &
	CTR_UNSHARE=$!
	remember_pid $CTR_UNSHARE
	local hostpid=""
	wait_until 5 eval 'read -r hostpid _ < /proc/$CTR_UNSHARE/task/$CTR_UNSHARE/children; [ -n "$hostpid" ] &&
		grep -q "^$CARD_USER" /proc/$hostpid/cmdline' || fail "contained target did not start: $(cat $T/ctr.log)"
	remember_pid $hostpid
	wait_until 5 test -S /proc/$hostpid/root/home/inside-only/dynamic_profiling_socket_1 ||
		fail "contained target has no socket: $(cat $T/ctr.log)"
	CTR_PID=$hostpid
}

# No process is in the mount namespace whose /proc/PID/ns/mnt link was NS.
# mnt_ns_left_to_helpers NS DP_PID: no process of the container is left in
# mount namespace NS; only dynprof's own per-target helper (a child of
# DP_PID, which keeps the namespace by design: ns/fshelper.h) may be.
mnt_ns_left_to_helpers() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink $p/ns/mnt 2>/dev/null)" = "$1" ] || continue
		[ "$(awk '/^PPid:/ {print $2}' $p/status 2>/dev/null)" = "$2" ] || return 1
	done
	return 0
}

contained_exit_with_namespace_gone() { # OUTPUT: the target exits mid-window, dynprof frozen meanwhile
	local ns
	start_contained
	ns=$(readlink /proc/$CTR_PID/ns/mnt)
	dp_background --pid=$CTR_PID --output=$1 --events=json:$T/ev
	dp_send start
	wait_until 10 window_open || fail "no window: $(cat $T/out)"
	expect_line "pid $CTR_PID: in its own filesystem it writes to /home/inside-only/\.dynprof/"
	kill -STOP $DP_PID
	kill -TERM $CTR_PID
	wait_until 20 all_gone $CTR_PID $CTR_UNSHARE || fail "the container did not end"
	wait_until 20 mnt_ns_left_to_helpers "$ns" $DP_PID ||
		fail "a process of the container is still in its mount namespace $ns"
	kill -CONT $DP_PID
	wait $DP_PID
	expect_status 1 $?
}

test_contained_target_exiting_mid_window_with_its_namespace_gone_is_moved_out() {
	contained_exit_with_namespace_gone $T/o
	expect_line "^\[INFO\] pid $CTR_PID: window saved in $T/o/PROF_[0-9_]+00000001[A-R]{8}$"
	[ -s "$(prof_dirs_of $T/o 1)/host/end_info" ] || fail "no finished folder in $T/o: $(ls -R $T/o)"
	expect_accounts $T/o 1 0 0
}

# A full --output (a small tmpfs, one page left): the copy out of the
# container fails with ENOSPC; the window is lost with that reason, the
# part copied removed.
full_output_body() {
	dd if=/dev/zero of=$T/small/filler bs=4k count=15 2>/dev/null
	contained_exit_with_namespace_gone $T/small
	expect_line "^\[ERROR\] dynprof: pid $CTR_PID: cannot move /home/inside-only/\.dynprof/[0-9]+/PROF_[0-9_]+00000001[A-R]{8} to $T/small: No space left on device$"
	expect_line "^\[ERROR\] dynprof: pid $CTR_PID: window lost: cannot move /home/inside-only/\.dynprof/[0-9]+/PROF_[0-9_]+00000001[A-R]{8} to $T/small: No space left on device$"
	[ -z "$(ls -d $T/small/PROF_* 2>/dev/null)" ] || fail "a partial copy was left: $(ls -R $T/small)"
	expect_accounts $T/small 0 0 1
	json_has '.event == "window-close" and .fate == "lost" and (.reason | test("No space left on device"))' $T/ev ||
		fail "window-close without the reason: $(cat $T/ev)"
}

test_full_output_loses_the_window_saying_no_space_left_with_the_folder() {
	local rc
	mkdir -p $T/small
	mount -t tmpfs -o size=64k tmpfs $T/small || fail "cannot mount a tmpfs"
	(full_output_body); rc=$?
	umount -l $T/small
	return $rc
}

# SIGTERM while a STOP stalls (the server answers it only after 30 s; the
# --timeout is 3 s): dynprof ends with 128+15, the window lost with why.
test_sigterm_during_a_stalled_stop_exits_143() {
	local s; s=$(BAD_PEER_DELAY_MS=30000 start_bad_peer slow-stop)
	dp_background --pid=$s --output=$T/o --timeout=3s --events=json:$T/ev
	dp_send start
	wait_until 10 window_open || fail "no window: $(cat $T/out)"
	dp_send stop
	sleep 0.5
	kill -TERM $DP_PID
	wait $DP_PID
	expect_status 143 $?
	expect_line "stop failed"
	expect_line "^\[ERROR\] dynprof: pid $s: window lost: .*no PROF_ folder of it was found in $T/o$"
	expect_accounts $T/o 0 0 1
}

# A --window rule's window ended by the target's exit: the rule's record
# line carries its fate too.
test_rule_window_ended_by_exit_is_recorded_with_its_fate() {
	local pid; pid=$(start_target)
	dp_background --pid=$pid --output=$T/o --events=json:$T/ev --window=start=+1ms,stop=+600s
	wait_until 10 window_open || fail "no window: $(cat $T/out)"
	kill -TERM $pid
	wait $DP_PID
	json_has '.rule == 1 and .fate == "saved" and .ended == "exit"' $T/o/*_dynprof_windows ||
		fail "rule record without its fate: $(cat $T/o/*_dynprof_windows)"
	# Its times: opened when the window-open event says (within 5 s), closed after.
	local opened; opened=$(jq -r 'select(.event == "window-open") | .time_us' $T/ev)
	json_has "(.opened_us - $opened | fabs) < 5000000 and .closed_us >= .opened_us" $T/o/*_dynprof_windows ||
		fail "expected opened_us near the window-open event's $opened and closed_us after it; got: $(cat $T/o/*_dynprof_windows)"
	expect_accounts $T/o 1 0 0
}

# The fd limit: a short soft limit is raised (every target reached); a short
# hard limit is said up front, once, with how many dynprof needs.
test_fd_limit_raised_or_said_with_how_many_are_needed() {
	local pids="" p i
	for i in 1 2 3 4 5 6 7 8 9 10; do p=$(start_target); pids=$pids${pids:+,}$p; done
	(ulimit -S -n 16; exec "$DP" --pid=$pids --output=$T/o < /dev/null > $T/out 2>&1)
	expect_status 0 $?
	[ "$(count_lines "quit success")" -eq 10 ] || { cat $T/out; fail "not every target reached"; }
	expect_no_line "file descriptors|ulimit"
	(ulimit -n 16; exec "$DP" --pid=$pids --output=$T/o < /dev/null > $T/out 2>&1)
	expect_line "^\[WARNING\] dynprof: 10 targets need about 24 file descriptors \(14 \+ 1 per target\), the limit is 16 \(hard 16\): some will not be connected; raise it \(ulimit -n\)$"
	# Said once: not again when an open then fails for it.
	expect_no_line "out of file descriptors"
}

# A STOP answered "not started" after a START that succeeded (the server's
# window ended without us): the window gets its fate at that stop, lost
# with why, not at the quit after it nor never.
test_stop_answered_not_started_after_a_start_gives_the_window_its_fate_at_the_stop() {
	local s; s=$(start_bad_peer forgets-start)
	dp_background --pid=$s --output=$T/o --events=json:$T/ev
	dp_send start
	wait_until 10 window_open || { cat $T/out; fail "no window"; }
	dp_send stop
	wait_until 10 grep -q "has not started" $T/out || { cat $T/out; fail "expected the STOP answered 'has not started'"; }
	wait_until 10 grep -q "window lost" $T/out ||
		{ cat $T/out; fail "expected the window lost at the stop answered 'not started'; it has no fate yet"; }
	json_has '.event == "window-close" and .fate == "lost" and (.reason | test("not collecting"))' $T/ev ||
		fail "expected a window-close event: lost, 'not collecting'; got: $(cat $T/ev)"
	json_has '.fate == "lost" and .ended == "stop"' $T/o/*_dynprof_windows ||
		fail "expected a window record line: lost, ended by stop; got: $(cat $T/o/*_dynprof_windows)"
	dp_send quit
	wait_until 20 all_gone $DP_PID || fail "dynprof did not end after quit"
	expect_line "^\[ERROR\] dynprof: pid $s: window lost: the server says it was not collecting; no PROF_ folder of it was found in $T/o$"
	expect_no_line "not accounted for"
	expect_accounts $T/o 0 0 1
}
