# Attach mode against real targets serving the protocol through the agent.

test_attach_v2_start_stop_writes_prof_folder() {
	local pid; pid=$(start_target)
	printf 'start\nstop\nquit\n' | dp --dynamic=on --pid=$pid --output=$T/out.d
	expect_status 0 $?
	expect_line "^\[INFO\] Start profiling\.\.\.\.$"
	expect_line "^dynamic profiling for pid $pid start success$"
	expect_line "^dynamic profiling for pid $pid stop success$"
	expect_line "^dynamic profiling for pid $pid quit success$"
	local d; d=$(prof_dirs_of $T/out.d $pid)
	[ -n "$d" ] || fail "no PROF_ folder for pid $pid"
	[ "$(echo "$d" | wc -l)" -eq 1 ] || fail "more than one PROF_ folder: $d"
	for f in sample.json start_info end_info info.json host_start.log; do
		[ -s "$d/host/$f" ] || fail "missing host/$f in $d"
		[ -s "$d/host/$f.done" ] || fail "missing host/$f.done in $d"
	done
	[ -d "$d/host" ] || fail "no host/ in $d"
	grep -q "\"result_dir\":\"$T/out.d\"" "$d/host/sample.json" || fail "result_dir not sent: $(cat "$d/host/sample.json")"
	expect_line "^\[INFO\] pid $pid: window saved in $T/out.d/PROF_"
	grep -qx "$(basename "$d")" $T/out.d/*_profiling_output_record || fail "PROF_ folder not in the output record"
	# The origin record, as README says: name relative to --output, absolute path, who wrote it.
	local b; b=$(basename "$d")
	grep -qx "{\"folder\":\"$b\",\"path\":\"$d\",\"pid\":$pid,\"nspid\":$pid,\"container\":null,\"command\":\"[^\"]*card_user [^\"]* 600\"}" \
		$T/out.d/*_dynprof_folders || fail "origin record: $(cat $T/out.d/*_dynprof_folders)"
}

test_attach_v1_start_stop_quit() {
	local pid; pid=$(start_target DYNPROF_AGENT_PROTOCOL=v1)
	printf 'start\nstop\nquit\n' | dp --pid=$pid --output=$T/o --protocol=v1
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid start success$"
	expect_line "^\[INFO\] pid $pid: Started device Id: 0"
	expect_line "^dynamic profiling for pid $pid stop success$"
	expect_line "^dynamic profiling for pid $pid quit success$"
	# v1 names carry no pid (PROF_<6>_<17>_<16 letters>): the one it made.
	local d; d=$(ls -d $T/o/PROF_000001_*)
	[[ $(basename "$d") =~ ^PROF_000001_[0-9]{17}_[A-R]{16}$ ]] || fail "v1 folder name $d"
	[ -s "$d/host/end_info" ] || fail "v1 window left no end_info"
	expect_line "^\[INFO\] pid $pid: window saved in $d$"
}

test_protocol_auto_picks_v1_for_v1_agent() {
	local pid; pid=$(start_target DYNPROF_AGENT_PROTOCOL=v1)
	printf 'start\nstop\n' | dp --pid=$pid --output=$T/o
	expect_status 0 $?
	expect_line "^\[INFO\] pid $pid: protocol v1 \(.*DYNPROF_AGENT_PROTOCOL.*\)$"
	expect_line "^dynamic profiling for pid $pid stop success$"
}

# fake_toolkit DIR VERSION: a CANN toolkit layout at $T/Ascend/DIR, with the
# version file --protocol=auto reads (<root>/x86_64-linux/
# ascend_toolkit_install.info, as CANN installs it) and a libascendcl.so (a
# copy of a harmless test library) for a target to map. Echoes the library.
fake_toolkit() {
	local root=$T/Ascend/$1; local lib=$root/x86_64-linux/lib64
	mkdir -p $lib
	cp "$B/tests/libdpcalls.so" $lib/libascendcl.so
	printf '%s\n' package_name=Ascend-cann-toolkit "version=$2" innerversion=V100R001C23B001 \
		arch=x86_64 os=linux "path=$root/x86_64-linux" > $root/x86_64-linux/ascend_toolkit_install.info
	echo $lib/libascendcl.so
}

# peer_mapping LIB MODE [VAR=value...]: a bad_peer that has LIB mapped (preloaded). Echoes its pid.
peer_mapping() {
	local lib=$1 mode=$2; shift 2
	env LD_PRELOAD="$lib" "$@" "$BAD_PEER" $mode "$ROOT_HOME/dynamic_profiling_socket_%d" > $T/peer.log 2>&1 &
	local peer=$!
	remember_pid $peer
	wait_until 5 has_socket $peer || fail "bad_peer $mode never listened"
	grep -q "$lib" /proc/$peer/maps || fail "$lib not mapped in $peer"
	echo $peer
}

# A v1 server (no agent, no variable) in a CANN 8.3.0 toolkit: only the
# toolkit's version file says v1; sent v2, this server would never answer.
test_protocol_auto_reads_the_mapped_toolkit_v1_below_8_5() {
	local lib s; lib=$(fake_toolkit ascend-toolkit/8.3.0 8.3.0)
	s=$(peer_mapping $lib v1-disconnect)
	{ sleep 2; echo start; } | dp --pid=$s --output=$T/o --timeout=3s
	expect_status 1 $?
	expect_line "^\[INFO\] pid $s: protocol v1 \(CANN 8\.3\.0 \($T/Ascend/ascend-toolkit/8\.3\.0/x86_64-linux/ascend_toolkit_install\.info\): v1\)$"
	expect_line "^Server disconnected, Idle link too long time\. \(pid $s\)$"
}

# A v2 server in a CANN 8.5.0 layout, with DYNPROF_AGENT_PROTOCOL=v1 leaked
# into its environment: the toolkit's version wins (the variable alone would
# send v1 to a v2 server).
test_protocol_auto_reads_the_mapped_toolkit_v2_from_8_5() {
	local lib s; lib=$(fake_toolkit cann-8.5.0 8.5.0)
	s=$(peer_mapping $lib log DYNPROF_AGENT_PROTOCOL=v1 BAD_PEER_LOG=$T/peer.requests)
	printf 'start\nstop\n' | dp --pid=$s --output=$T/o --timeout=3s
	expect_status 0 $?
	expect_no_line "protocol v1"
	expect_line "^dynamic profiling for pid $s start success$"
	expect_line "^dynamic profiling for pid $s stop success$"
	grep -q '^params {' $T/peer.requests || fail "the server got no v2 params: $(cat $T/peer.requests)"
}

# libprofimpl.so mapped beside an 8.3.0 toolkit (a v2 server built into a
# process whose toolkit file says otherwise): the server's library decides.
test_protocol_auto_takes_a_mapped_libprofimpl_as_v2() {
	local lib s; lib=$(fake_toolkit ascend-toolkit/8.3.0 8.3.0)
	cp "$B/tests/libdpcalls.so" $(dirname $lib)/libprofimpl.so
	env LD_PRELOAD="$lib:$(dirname $lib)/libprofimpl.so" BAD_PEER_LOG=$T/peer.requests \
		"$BAD_PEER" log "$ROOT_HOME/dynamic_profiling_socket_%d" > $T/peer.log 2>&1 &
	s=$!
	remember_pid $s
	wait_until 5 has_socket $s || fail "bad_peer never listened"
	grep -q libprofimpl.so /proc/$s/maps || fail "libprofimpl.so not mapped in $s"
	printf 'start\nstop\n' | dp --pid=$s --output=$T/o --timeout=3s
	expect_status 0 $?
	expect_no_line "protocol v1"
	expect_line "^dynamic profiling for pid $s stop success$"
	grep -q '^params {' $T/peer.requests || fail "the server got no v2 params: $(cat $T/peer.requests)"
}

# Each result prints when its reply came (a hung target holds back no
# other's); each console line waits for the replies to the one before, so
# both starts come before either stop, both stops before either quit.
test_two_targets_both_get_every_command_in_order() {
	local a b; a=$(start_target); b=$(start_target)
	printf 'start\nstop\nquit\n' | dp --pid=$b,$a --output=$T/o
	expect_status 0 $?
	[ "$(grep -Eo '(start|stop|quit) success' $T/out | uniq -c | awk '{print $1 $2}' | tr '\n' ' ')" = "2start 2stop 2quit " ] ||
		fail "commands not in order: $(cat $T/out)"
	for p in $a $b; do
		[ "$(grep -Eo "pid $p (start|stop|quit) success" $T/out | awk '{print $3}' | tr '\n' ' ')" = "start stop quit " ] ||
			fail "pid $p did not get start, stop, quit: $(cat $T/out)"
	done
	[ -n "$(prof_dirs_of $T/o $a)" ] && [ -n "$(prof_dirs_of $T/o $b)" ] || fail "a target wrote no folder"
}

test_start_twice_reports_already_started() {
	local pid; pid=$(start_target)
	printf 'start\nstart\nstop\n' | dp --pid=$pid --output=$T/o
	expect_line "^\[WARNING\] dynamic profiling for pid $pid already started$"
}

test_stop_without_start_reports_not_started() {
	local pid; pid=$(start_target)
	printf 'stop\n' | dp --pid=$pid --output=$T/o
	expect_status 0 $?
	expect_line "^\[WARNING\] dynamic profiling for pid $pid has not started$"
}

test_start_without_device_reports_not_set_up() {
	local pid; pid=$(start_target_without_card)
	printf 'start\nquit\n' | dp --pid=$pid --output=$T/o
	expect_line "^\[WARNING\] dynamic profiling device for pid $pid has not been set up$"
	[ -z "$(prof_dirs_of $T/o $pid)" ] || fail "a window opened without a device"
}

test_start_failure_drops_target() {
	local pid; pid=$(start_target)
	# The result folder is made by dynprof, then turned into a file before
	# `start`: the target cannot make its PROF_ folder and answers FAIL.
	( sleep 0.5; rm -rf $T/o; touch $T/o ) &
	{ sleep 1; echo start; } | dp --pid=$pid --output=$T/o
	expect_status 1 $?
	expect_line "^\[ERROR\] dynamic profiling for pid $pid start failed$"
	expect_line "no target left"
}

test_end_of_input_stops_open_window() {
	local pid; pid=$(start_target)
	printf 'start\n' | dp --pid=$pid --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid stop success$"
	[ -s "$(prof_dirs_of $T/o $pid)/host/end_info" ] || fail "window left open at end of input"
}

test_help_command_shows_usage_without_error() {
	local pid; pid=$(start_target)
	printf 'help\nh\nbogus\n' | dp --pid=$pid --output=$T/o
	expect_status 0 $?
	[ "$(count_lines '^Usage:$')" -eq 3 ] || fail "usage not shown three times"
	expect_line "^invalid option -- 'bogus'$"
	[ "$(count_lines 'invalid option')" -eq 1 ] || fail "help treated as invalid"
	# The list after an unknown command is the whole one, as help prints it.
	[ "$(count_lines 'status \[--json\]:')" -eq 3 ] || fail "an unknown command's list is not help's"
	# Every command the console takes is in the list.
	expect_line "^\s+quit, q: "
	expect_line "^\s+help, h: "
}

test_blank_and_padded_commands_are_accepted() {
	local pid; pid=$(start_target)
	printf '\n   start  \n\t stop\t\n q\n' | dp --pid=$pid --output=$T/o
	expect_line "start success"
	expect_line "stop success"
	expect_line "quit success"
}

test_switches_reach_the_target_params() {
	local pid; pid=$(start_target)
	printf 'start\nstop\n' | dp --pid=$pid --output=$T/o --task-time=l0 --aic-metrics=Memory \
		--host-sys=cpu,mem,disk,numa --ascendcl=off
	local s; s=$(prof_dirs_of $T/o $pid)/host/sample.json
	for kv in '"taskTime":"l0"' '"prof_level":"l0"' '"ai_core_metrics":"Memory"' \
		'"host_sys":"numa"' '"host_disk_profiling":"off"' '"acl":"off"'; do
		grep -q "$kv" "$s" || fail "params lack $kv: $(cat "$s")"
	done
}
