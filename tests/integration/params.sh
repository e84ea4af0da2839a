# The params dynprof sends and what the server keeps of them
# (docs/PROTOCOL.md Part 2 sections 4 to 6): complete sessions that do not
# inherit a previous client's switches, the server's dataTypeConfig, v1's,
# --dry-run, and the refusals. The agent records the effective params in
# each PROF_ folder's host/dynprof_params.json.

# The effective params file of the n-th window (oldest first) under DIR.
effective_of() { # effective_of DIR N
	local d; d=$(ls -d "$1"/PROF_* 2>/dev/null | sort | sed -n "${2}p")
	[ -n "$d" ] || fail "no window $2 under $1: $(ls "$1" 2>&1)"
	echo "$d/host/dynprof_params.json"
}

# The number of params keys the agent holds in that file.
key_count() {
	sed 's/.*"params":{//' "$1" | grep -o '"[A-Za-z0-9_]*":' | wc -l
}

test_second_session_is_complete_and_does_not_inherit_the_first() {
	local pid; pid=$(start_target)
	printf 'start\nstop\nquit\n' | dp --pid=$pid --output=$T/o --runtime-api=on --chip=5
	expect_line "stop success"
	local first; first=$(effective_of $T/o 1)
	grep -q '"runtimeApi":"on"' "$first" || fail "first session: runtimeApi not on: $(cat "$first")"
	grep -q '"dataTypeConfig":"0x4000000024000947"' "$first" || fail "first: $(head -c 120 "$first")"
	sleep 1.1 # PROF_ names carry milliseconds; keep the two apart in order
	printf 'start\nstop\nquit\n' | dp --pid=$pid --output=$T/o --chip=5
	expect_line "stop success"
	local second; second=$(effective_of $T/o 2)
	[ "$second" != "$first" ] || fail "no second window"
	grep -q '"runtimeApi":"off"' "$second" || fail "second session inherited runtimeApi: $(cat "$second")"
	[ "$(key_count "$second")" = 134 ] || fail "second session holds $(key_count "$second") keys, not 134"
	grep -q '"dataTypeConfig":"0x4000000024000847"' "$second" ||
		fail "the server's dataTypeConfig for dynprof's defaults is not msprof's: $(head -c 120 "$second")"
}

test_server_rewrites_are_in_the_effective_params() {
	local pid; pid=$(start_target)
	printf 'start\nstop\nquit\n' | dp --pid=$pid --output=$T/o --runtime-api=on
	expect_line "stop success"
	local f; f=$(effective_of $T/o 1)
	grep -q '"host_sys_pid":'"$pid"',' "$f" || fail "host_sys_pid not rewritten to the server's pid: $(cat "$f")"
	grep -q '"prof_level":"level1"' "$f" || fail "prof_level not rewritten: $(cat "$f")"
}

test_v1_target_gets_v1_keys_and_msprofs_data_type_config() {
	local pid; pid=$(start_target DYNPROF_AGENT_PROTOCOL=v1)
	printf 'start\nstop\nquit\n' | dp --pid=$pid --output=$T/o --protocol=v1 --chip=CHIP_V4_1_0
	expect_line "stop success"
	local f; f=$(effective_of $T/o 1)
	grep -q '"generation":"v1","dataTypeConfig":"0xC0000000A4000847"' "$f" ||
		fail "v1 dataTypeConfig is not msprof v1's default: $(head -c 160 "$f")"
	grep -q '"profLevel":"l1"' "$f" || fail "no v1 profLevel: $(cat "$f")"
	grep -q '"ai_core_metrics":"PipeUtilizationExct"' "$f" || fail "no v1 metric: $(cat "$f")"
	sleep 1.1
	printf 'start\nstop\nquit\n' | dp --pid=$pid --output=$T/o --protocol=v1 --chip=5 --runtime-api=on --task-memory=on
	expect_line "stop success"
	f=$(effective_of $T/o 2)
	grep -q '"dataTypeConfig":"0xC0000000A4001947"' "$f" || fail "v1 bits: $(head -c 160 "$f")"
}

test_dry_run_prints_the_json_and_connects_to_nothing() {
	local pid; pid=$(start_target)
	dp --dry-run --pid=$pid --output=$T/o --protocol=v2 --chip=5 --l2=on; expect_status 0 $?
	[ "$(grep -c '^{' $T/out)" = 1 ] || fail "not one JSON line: $(cat $T/out)"
	grep '^{' $T/out > $T/json
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d)==134, len(d); assert d["l2CacheTaskProfiling"]=="on"; assert d["hostProfilingSamplingInterval"]==20; assert d["isCancel"] is False' $T/json ||
		fail "not msprof's 134 typed keys: $(cat $T/json)"
	grep -q '"result_dir":"'"$T"'/o"' $T/json || fail "result_dir not the absolute --output"
	ls $T/o/PROF_* >/dev/null 2>&1 && fail "a window was opened"
	dp --pid=$pid --output=$T/o < /dev/null; expect_status 0 $?
	expect_no_line "busy|another client"
}

test_dry_run_without_protocol_shows_each_generation() {
	dp --dry-run --output=$T/o --chip=5; expect_status 0 $?
	expect_line "^# v2: CANN 8.5.0 and later$"
	expect_line "^# v1: CANN 8.3 and earlier$"
	expect_line '"dataTypeConfig":13835058058033629255'
}

test_unknown_chip_is_said_once_and_events_are_empty() {
	dp --dry-run --output=$T/o --protocol=v2 --l2=on; expect_status 0 $?
	[ "$(count_lines 'chip not known')" = 1 ] || fail "not one line: $(cat $T/out)"
	expect_line "^\[WARNING\] dynprof: chip not known: no driver (.*), no PROF_ folder in $T/o, no --chip; AI core and --l2 metric events sent empty; give --chip=NAME|NUMBER"
	expect_line '"ai_core_profiling_events":""'
}

test_chip_from_a_finished_prof_folders_info_json() {
	mkdir -p $T/o/PROF_000001_20260101000000000_00000001AAAAAAAA/host
	echo '{"platform_version":"1"}' > $T/o/PROF_000001_20260101000000000_00000001AAAAAAAA/host/info.json
	dp --dry-run --output=$T/o --protocol=v2 --l2=on; expect_status 0 $?
	expect_no_line "chip not known"
	expect_line '"l2CacheTaskProfilingEvents":"0x5b,0x59,0x5c,0x7d,0x7e,0x71,0x79,0x7c"'
}

# PROF_ folders whose info.json names no chip are said as such, not as "none".
test_unknown_chip_names_the_folders_that_had_no_platform_version() {
	mkdir -p $T/o/PROF_000001_20260101000000000_00000001AAAAAAAA/host $T/o/PROF_000002_20260101000000000_00000002AAAAAAAA/host
	echo '{"devices":"0"}' > $T/o/PROF_000001_20260101000000000_00000001AAAAAAAA/host/info.json
	dp --dry-run --output=$T/o --protocol=v2; expect_status 0 $?
	expect_line "chip not known: .*, 2 PROF_ folders in $T/o, none of the newest 2 with a platform_version, no --chip;"
	expect_no_line "no PROF_ folder"
}

test_refusals_as_msprof() {
	dp --pid=1 --ai-vector-core=on < /dev/null; expect_status 255 $?
	expect_line "unrecognized option '--ai-vector-core=on'"
	dp --pid=1 --sys-devices=0 < /dev/null; expect_status 255 $?
	expect_line "^\[ERROR\] Argument --dynamic and --sys-devices cannot be configured at the same time\.$"
	dp --pid=1 --model-execution=on --dry-run --chip=5 < /dev/null; expect_status 0 $?
	expect_line "^\[WARNING\] \[Note\] \[model-execution\] This option will be discarded in later versions\.$"
	dp --pid=1 --environment='A="x"' < /dev/null; expect_status 255 $?
	expect_line "^\[ERROR\] Argument --environment: invalid value: A=\"x\"\. CANN's parameter parser cannot carry"
}
