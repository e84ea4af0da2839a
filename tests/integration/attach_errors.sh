# Bad arguments, pids and paths: one clear line each, msprof's status 255.

test_non_numeric_pid_stops_with_255() {
	dp --dynamic=on --pid=12a --output=$T/o < /dev/null
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument --pid: invalid non-numeric pid value: 12a, stop profiling\.$"
}

test_pid_zero_and_negative_are_out_of_range_not_non_numeric() {
	for v in 0 -5 1000000000; do
		dp --pid=$v --output=$T/o < /dev/null
		expect_status 255 $?
		expect_line "^\[ERROR\] Argument --pid: invalid pid value: $v \(a pid is a number from 1 to 999999999\), stop profiling\.$"
		expect_no_line "non-numeric"
	done
}

test_short_option_is_refused_not_run_as_an_application() {
	dp -p 123 --output=$T/o < /dev/null
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument -p: unknown option"
	expect_no_line "Start profiling|exited"
}

test_pid_given_twice_is_refused() {
	dp --pid=1 --pid=2 --output=$T/o < /dev/null
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument --pid: given twice \(1 and 2\)\."
}

test_empty_pid_in_list_is_non_numeric() {
	local pid; pid=$(start_target)
	dp --pid=$pid,,7 --output=$T/o < /dev/null
	expect_status 255 $?
	expect_line "invalid non-numeric pid value: , stop profiling"
}

test_pid_not_running_is_skipped_and_none_left_is_255() {
	local gone; gone=$(sh -c 'echo $$')
	dp --dynamic=on --pid=$gone --output=$T/o < /dev/null
	expect_status 255 $?
	expect_line "^\[WARNING\] Argument --pid: invalid pid value: $gone, will not collect profiling data for these process\. \(no such process\)$"
	expect_line "^\[ERROR\] Argument --pid: no valid pid values, stop profiling\.$"
}

test_pid_without_socket_is_skipped_others_still_served() {
	local plain good; plain=$(start_sleeper); good=$(start_target)
	printf 'start\nstop\n' | dp --pid=$plain,$good --output=$T/o
	expect_status 0 $?
	expect_line "^\[WARNING\] Argument --pid: invalid pid value: $plain, .*serves no dynamic profiling socket: no dynamic_profiling_socket_$plain in its home $ROOT_HOME"
	expect_line "^dynamic profiling for pid $good stop success$"
}

# A socket file left by a server that ended without removing it: the line
# says what the file is, at the path the user knows (not /proc/PID/root/...).
test_stale_socket_file_is_named_for_what_it_is() {
	local plain path; plain=$(start_sleeper); path=$(socket_of $plain)
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$path"
	remember_file "$path"
	dp --pid=$plain --output=$T/o < /dev/null
	expect_status 255 $?
	expect_line "pid $plain does not listen on $path: a stale socket file that nobody serves, left by an earlier server of that name which ended without removing it"
}

test_duplicate_pid_is_served_once() {
	local pid; pid=$(start_target)
	printf 'start\nstop\n' | dp --pid=$pid,$pid --output=$T/o
	[ "$(count_lines 'start success')" -eq 1 ] || fail "duplicate pid served twice"
}

test_forbidden_output_characters_are_refused() {
	local pid c; pid=$(start_target)
	for c in '$' ';' '|' '&' '<' '>' '%' '`' "'" '"' '\'; do
		dp --pid=$pid --output="$T/bad${c}dir" < /dev/null
		expect_status 255 $?
		grep -qF "forbidden character '$c'" $T/out || fail "no forbidden-character line for $c: $(cat $T/out)"
		[ ! -e "$T/bad${c}dir" ] || fail "folder with '$c' was created"
	done
	dp --pid=$pid --output="$T/tab	dir" < /dev/null
	expect_status 255 $?
	expect_line "forbidden character tab"
}

test_output_is_made_absolute_and_created_0750() {
	local pid; pid=$(start_target)
	( cd $T && printf 'start\nstop\n' | "$DP" --pid=$pid --output=rel/deep > $T/out 2>&1 )
	expect_status 0 $?
	[ "$(stat -c %a $T/rel/deep)" = 750 ] || fail "mode $(stat -c %a $T/rel/deep), expected 750"
	grep -q "\"result_dir\":\"$T/rel/deep\"" "$(prof_dirs_of $T/rel/deep $pid)/host/sample.json" ||
		fail "result_dir not absolute"
}

test_output_defaults_to_ascend_work_path() {
	local pid; pid=$(start_target)
	printf 'start\nstop\n' | ASCEND_WORK_PATH=$T/work dp --pid=$pid
	expect_status 0 $?
	[ -n "$(prof_dirs_of $T/work/profiling_data $pid)" ] || fail "no folder under \$ASCEND_WORK_PATH/profiling_data"
}

test_option_with_separate_value_is_refused() {
	dp --dynamic=on --pid 123 < /dev/null
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument --pid: expected one argument\. Please use --pid=<value>\.$"
}

test_dynamic_mode_conflicts_are_refused() {
	dp --dynamic=off --pid=1 < /dev/null; expect_status 255 $?
	expect_line "Argument --dynamic=off, but --pid is set\."
	dp --dynamic=on < /dev/null; expect_status 255 $?
	expect_line "Argument --dynamic=on, but --application/--pid is all empty\."
	dp --dynamic=on --pid=1 ./run.sh < /dev/null; expect_status 255 $?
	expect_line "Argument --dynamic=on, can not set --application/--pid at the same time\."
	dp --dynamic=maybe --pid=1 < /dev/null; expect_status 255 $?
	expect_line "Argument --dynamic: invalid value: maybe\. Please input 'on' or 'off'\."
	dp --dynamic=on --pid=1 --sys-devices=0 < /dev/null; expect_status 255 $?
	expect_line "Argument --dynamic and --sys-devices cannot be configured at the same time\."
}

test_bad_switch_values_are_refused_naming_the_value() {
	dp --pid=1 --ascendcl=yes < /dev/null; expect_status 255 $?
	expect_line "^\[ERROR\] Argument --ascendcl: invalid value: yes\. Please input 'on' or 'off'\.$"
	dp --pid=1 --storage-limit=100MB < /dev/null; expect_status 255 $?
	expect_line "Argument --storage-limit: invalid value: 100MB\."
	dp --pid=1 --host-sys=cpu,cpu < /dev/null; expect_status 255 $?
	expect_line "Argument --host-sys: invalid value: cpu,cpu\."
	dp --pid=1 --host-sys-usage-freq=51 < /dev/null; expect_status 255 $?
	expect_line "Argument --host-sys-usage-freq: invalid value: 51\."
	dp --pid=1 --protocol=v3 < /dev/null; expect_status 255 $?
	expect_line "Argument --protocol: invalid value: v3\."
	dp --pid=1 --timeout=soon < /dev/null; expect_status 255 $?
	expect_line "Argument --timeout: invalid value: soon\."
	dp --pid=1 --frobnicate=1 < /dev/null; expect_status 255 $?
	expect_line "Argument --frobnicate: unknown option"
}

test_params_too_long_for_the_protocol_are_refused() {
	local pid; pid=$(start_target)
	dp --pid=$pid --output=$T/o --environment="A=$(head -c 4100 /dev/zero | tr '\0' 'x')" < /dev/null
	expect_status 255 $?
	expect_line "^\[ERROR\] dynprof: the collection parameters take [0-9]+ bytes, more than the protocol's 4095"
}

test_help_and_version() {
	dp --help; expect_status 0 $?
	expect_line "^Usage: dynprof --dynamic=on --pid="
	expect_line "Exit status:"
	dp --version; expect_status 0 $?
	expect_line "^dynprof [0-9]"
}

test_output_record_that_cannot_be_written_is_reported() {
	local pid; pid=$(start_target)
	dp_background --pid=$pid --output=$T/o
	# A folder where the record file must go: appending to it fails (EISDIR).
	mkdir -p "$T/o/${DP_PID}_profiling_output_record"
	dp_send start stop quit
	wait $DP_PID
	expect_status 0 $?
	expect_line "^\[ERROR\] dynprof: cannot add PROF_[^ ]+ to $T/o/${DP_PID}_profiling_output_record: Is a directory$"
	expect_line "^\[INFO\] pid $pid: window saved in $T/o/PROF_"
}

# A server of the other generation is named, with the option to use, not
# reported as busy: a v1 server answers a v2 Params with DISCONN_RSP, a v2
# server answers a TEST_REQ with PARAMS_RSP and the Msgs after it. Both
# servers survive the wrong first message and serve the right one next.
test_other_generation_is_named_with_the_option_to_use() {
	local v1 v2
	v1=$(start_target DYNPROF_AGENT_PROTOCOL=v1)
	v2=$(TARGET_CARD=1 start_target)
	printf 'quit\n' | dp --pid=$v1 --output=$T/o --protocol=v2 --timeout=3s
	expect_line "^\[ERROR\] dynprof: pid $v1 speaks protocol v1, not v2 \(chosen by --protocol=v2\): use --protocol=v1$"
	expect_no_line "connected to another client"
	printf 'quit\n' | dp --pid=$v2 --output=$T/o --protocol=v1 --timeout=3s
	expect_line "^\[ERROR\] dynprof: pid $v2 speaks protocol v2, not v1 \(chosen by --protocol=v1\): use --protocol=v2$"
	expect_no_line "connected to another client"
	printf 'start\nstop\nquit\n' | dp --pid=$v1,$v2 --output=$T/o
	expect_line "^dynamic profiling for pid $v1 stop success$"
	expect_line "^dynamic profiling for pid $v2 stop success$"
}
