# Many targets: a session grows with them (no fixed table, no fixed poll
# array), connects and hands each its params as it connects, and lists a
# full --output once per command. Real card users with the agent preloaded.
# Not timed: deadlines are generous, only counts are asserted.
#
# The full sizes of issue 11 by default (make test, so .ci/run too): 1000
# targets with 5000 entries in --output, 2000 joins in launch mode (about
# 3 minutes). DYNPROF_SCALE_QUICK=1, for a developer's quick run: smaller
# sizes that still cross the old limits (1025 joins).

if [ "${DYNPROF_SCALE_QUICK:-}" = 1 ]; then
	SCALE_TARGETS=${SCALE_TARGETS:-300}
	SCALE_JOINS=${SCALE_JOINS:-1100}
else
	SCALE_TARGETS=${SCALE_TARGETS:-1000}
	SCALE_JOINS=${SCALE_JOINS:-2000}
fi
SCALE_ENTRIES=${SCALE_ENTRIES:-5000}
# The runner's per-test limit (120 s): generous here, nothing is timed.
TEST_TIME_LIMIT=${TEST_TIME_LIMIT:-900}

# 9.x folder names of other processes (pids 9xxxxxxx), as a busy --output holds.
fill_output() { # fill_output DIR COUNT
	mkdir -p "$1"
	(cd "$1" && seq 1 "$2" | awk '{ printf "PROF_000001_20260101000000000_%08dAAAAAAAA\n", 90000000 + $1 }' |
		xargs mkdir)
}

# start_many N: N card users serving the protocol, their agents logging to
# $T/agents.log; their pids in $T/pids (one a line) once all listen.
start_many() {
	# Nodes of card 0, 250 holders each: a test's card device takes 256 opens
	# at a time (tests/lib/common.sh).
	local nodes=() node k
	for ((k = 0; k == 0 || k * 250 < $1; k++)); do
		if [ $k = 0 ]; then node=$(make_card 0); else node=$(make_card_alias 0 $k); fi || exit 1
		nodes+=("$node")
	done
	local i pid
	: > $T/pids
	for ((i = 0; i < $1; i++)); do
		PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
			DYNPROF_AGENT_LOG=1 "$CARD_USER" "${nodes[i % ${#nodes[@]}]}" 900 < /dev/null > /dev/null 2>> $T/agents.log &
		pid=$!
		remember_pid $pid
		echo $pid >> $T/pids
	done
	while read -r pid; do
		wait_until 60 has_socket $pid ||
			fail "target $pid never opened its socket: $(sed -n 's/^State:[[:space:]]*//p' /proc/$pid/status 2>/dev/null || echo gone); $(ls -l "$(socket_of $pid)" 2>&1); its agent: $(grep -F "[$pid]" $T/agents.log | head -3)"
	done < $T/pids
}

agents_said() { grep -c -- "$1" $T/agents.log; }

# wait_lines COUNT REGEX: until dynprof's output holds COUNT such lines.
wait_lines() { wait_until 180 eval "[ \$(count_lines '$2') -ge $1 ]"; }

test_many_targets_with_a_full_output_all_joined_started_stopped() {
	local n=$SCALE_TARGETS
	ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
	# A soft limit below what the targets need: dynprof raises it to the hard one.
	ulimit -Sn $((n / 2))
	fill_output $T/o $SCALE_ENTRIES
	start_many $n
	local pids; pids=$(paste -sd, $T/pids)
	dp_background --dynamic=on --pid=$pids --output=$T/o --events=json:$T/ev.json
	wait_lines 1 '^\[INFO\] Start profiling' || { tail -5 $T/out; fail "not connected"; }
	# Every target connected and took its params (the first of them lost before: 1 s timer).
	! grep -Eq 'closed the connection|timeout|cannot connect|ERROR' $T/out ||
		fail "$(grep -Ec 'closed the connection|timeout|cannot connect|ERROR' $T/out) connect errors, the first: $(grep -Em1 'closed the connection|timeout|cannot connect|ERROR' $T/out)"
	dp_send start
	wait_lines $n ' start success$' || { tail -5 $T/out; fail "not all started: $(count_lines ' start success$')"; }
	dp_send stop
	wait_lines $n ' window saved in ' || { tail -5 $T/out; fail "not all saved: $(count_lines 'window saved')"; }
	dp_send quit
	exec 7>&-
	wait_until 180 all_gone $DP_PID || fail "dynprof did not end"
	wait $DP_PID
	expect_status 0 $?
	expect_no_line 'closed the connection|timeout|cannot connect|ERROR'
	[ "$(count_lines '^dynamic profiling for pid [0-9]+ start success$')" -eq $n ] || fail "start count"
	[ "$(count_lines '^dynamic profiling for pid [0-9]+ stop success$')" -eq $n ] || fail "stop count"
	[ "$(count_lines '^dynamic profiling for pid [0-9]+ quit success$')" -eq $n ] || fail "quit count"
	[ "$(grep -c '"event":"target-join"' $T/ev.json)" -eq $n ] || fail "join events"
	# The agents' side: each got its params, a START, a STOP and a QUIT.
	[ "$(agents_said 'params: dataLen')" -eq $n ] || fail "params: $(agents_said 'params: dataLen') of $n"
	[ "$(agents_said 'start -> 0$')" -eq $n ] || fail "agents started: $(agents_said 'start -> 0$')"
	[ "$(agents_said 'stop -> 0$')" -eq $n ] || fail "agents stopped: $(agents_said 'stop -> 0$')"
	[ "$(agents_said ': quit$')" -eq $n ] || fail "agents quit: $(agents_said ': quit$')"
	# One folder per target on disk, each in the record; the old entries untouched.
	local pid missing=0
	while read -r pid; do
		[ "$(prof_dirs_of $T/o $pid | wc -l)" -eq 1 ] || missing=$((missing + 1))
	done < $T/pids
	[ $missing -eq 0 ] || fail "$missing targets without exactly one PROF_ folder"
	[ "$(cat $T/o/*_profiling_output_record | wc -l)" -eq $n ] || fail "record lines"
	[ "$(ls $T/o | grep -c '^PROF_')" -eq $((SCALE_ENTRIES + n)) ] || fail "folders in --output"
}

test_launch_joins_and_leaves_in_waves_none_refused() {
	# Waves of workers that join and leave: more joins than the old fixed
	# table held (1024, never reused); each is seen, none is refused. A
	# wave's workers live until dynprof said each joined (bounded by 120 s,
	# no fixed lifetime a loaded machine could overrun), then are ended;
	# the script ends once the last wave's leaves are said.
	local wave=50 waves=$(((SCALE_JOINS + 49) / 50)) total
	total=$((wave * waves))
	ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
	local card; card=$(make_card 0)
	cat > $T/waves.sh <<-EOS
	#!/bin/bash
	ulimit -Sn > $T/app-limit
	said() { # said WHAT PIDS...: until dynprof's output says "target WHAT: pid P" of each
		local end=\$((SECONDS + 120)) p
		local what=\$1; shift
		for p in "\$@"; do
			while ! grep -q "target \$what: pid \$p " $T/out; do
				[ \$SECONDS -lt \$end ] || return 1
				sleep 0.05
			done
		done
	}
	for ((w = 0; w < $waves; w++)); do
		pids=()
		for ((i = 0; i < $wave; i++)); do
			env LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*' $CARD_USER $card 600 &
			pids+=(\$!)
		done
		said joined "\${pids[@]}" || echo "wave \$w: not every worker joined within 120 s" >&2
		kill -TERM "\${pids[@]}"
		wait
	done
	said left "\${pids[@]}" || echo "the last wave's leaves were not all said within 120 s" >&2
	EOS
	chmod +x $T/waves.sh
	ulimit -Sn 512 # raised by dynprof for itself; the application gets this one
	timeout -s KILL 900 "$DP" --dynamic=on --output=$T/o --device="$T/dev/davinci*" --events=json:$T/ev.json \
		--app-stdin $T/waves.sh < /dev/null > $T/out 2>&1 &
	local dp=$! hwm tool
	remember_pid $dp
	wait_until 10 grep -q . /proc/$dp/task/$dp/children || fail "dynprof did not start"
	tool=$(cut -d' ' -f1 /proc/$dp/task/$dp/children) # timeout's child: dynprof
	# The high-water mark of dynprof's memory, read while it still runs;
	# the first one after the first wave joined is the base.
	: > $T/hwm.base
	while ! all_gone $dp; do
		hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' /proc/$tool/status 2>/dev/null || true)
		[ -n "$hwm" ] && echo "$hwm" > $T/hwm
		[ -n "$hwm" ] && ! [ -s $T/hwm.base ] && [ "$(count_lines 'target joined')" -ge $wave ] &&
			echo "$hwm" > $T/hwm.base
		sleep 0.5
	done
	wait $dp
	expect_status 0 $?
	[ "$(cat $T/app-limit)" = 512 ] || fail "the application's fd limit: $(cat $T/app-limit), not 512"
	# No join refused. A worker seen listening again while it exits may be
	# tried again and fail (it is gone): only a pid that never joined counts.
	local pid
	for pid in $(grep -o 'pid [0-9]* ([^)]*) cannot join' $T/out | cut -d' ' -f2); do
		grep -q "target joined: pid $pid " $T/out || { grep "pid $pid " $T/out; fail "pid $pid refused"; }
	done
	# Every worker joined (a worker seen listening again while it exits may
	# join twice: counted once).
	local joined; joined=$(grep -o 'target joined: pid [0-9]*' $T/out | sort -u | wc -l)
	[ "$joined" -eq $total ] || fail "joined $joined of $total"
	[ "$(grep '"event":"target-join"' $T/ev.json | grep -o '"pid":[0-9]*' | sort -u | wc -l)" -eq $total ] ||
		{ head -3 $T/ev.json; fail "join events"; }
	# Slots reused: a table of every join would keep each target's ~29 KiB
	# (about 30 MiB more at 1100 joins); reused, it holds one wave's.
	local grew=$(($(cat $T/hwm) - $(cat $T/hwm.base)))
	echo "dynprof VmHWM $(cat $T/hwm.base) KiB after the first wave, $(cat $T/hwm) KiB after $total joins" >&2
	# A sanitizer build quarantines freed memory instead of reusing it: RSS tells nothing there.
	ldd "$DP" 2>/dev/null | grep -q libasan && return 0
	[ $grew -lt 3072 ] || fail "dynprof grew by $grew KiB over $total joins: slots not reused?"
}

test_too_few_fds_said_once_with_the_number_needed() {
	# A hard limit dynprof cannot raise past: one line says how many it needs.
	start_many 60
	local pids; pids=$(paste -sd, $T/pids)
	(ulimit -n 48 && printf 'quit\n' | dp --dynamic=on --pid=$pids --output=$T/o)
	[ "$(count_lines '60 targets need about 74 file descriptors \(14 \+ 1 per target\), the limit is 48 \(hard 48\)')" -eq 1 ] ||
		{ cat $T/out; fail "the shortage not said once with the number needed"; }
	expect_no_line 'out of file descriptors'
	# Those that fit were served.
	[ "$(count_lines ' quit success$')" -ge 1 ] || { cat $T/out; fail "no target served"; }
}
