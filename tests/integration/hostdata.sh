# --host-sys=osrt,cpu,mem: dynprof collects the target's system calls (BPF)
# and its cpu and mem samples itself, and writes them into the window's
# folder as msprof's host/data files (docs/HOSTDATA.md has the grammar).

SYSCALLER=$B/tests/peers/syscaller

# start_syscaller N: the peer (the agent preloaded) doing N reads per thread once $T/go exists.
start_syscaller() {
	local card; card=$(make_card 0)
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		"$SYSCALLER" "$card" "$1" $T/go > $T/peer.log 2>&1 &
	local pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "syscaller $pid never opened its socket"
	echo $pid
}

hd_window_open() { grep -q "start success" $T/out; }
peer_done() { grep -q "syscaller: done" $T/peer.log; }

# count_calls FILE TID FD: host_syscall lines of thread TID reading FD.
count_calls() {
	grep -Ec "^[0-9]+\.[0-9]{6} \([0-9]+\.[0-9]{6} ms\): [^ :/]+/$2 read\(arg0: $3\) = 1\$" "$1"
}

# within_1pct GOT WANT
within_1pct() { [ $(( ($1 - $2) * 100 )) -le $2 ] && [ $(( ($2 - $1) * 100 )) -le $2 ]; }

test_osrt_cpu_mem_of_a_window_land_in_its_folder() {
	local n=20000 pid; pid=$(start_syscaller $n)
	dp_background --pid=$pid --output=$T/o --host-sys=osrt,cpu,mem
	dp_send start
	wait_until 10 hd_window_open || fail "no window: $(cat $T/out)"
	touch $T/go
	wait_until 20 peer_done || fail "the peer did not finish: $(cat $T/peer.log)"
	sleep 0.1
	dp_send stop quit
	wait $DP_PID
	expect_line "dynprof collects osrt,cpu,mem itself"
	expect_line "^\[INFO\] pid $pid: window saved in $T/o/PROF_"
	expect_line "pid $pid: window 1: host data: [0-9]+ system calls, 0 lost; most time in"
	local d; d=$(prof_dirs_of $T/o $pid)
	[ -d "$d" ] || fail "no folder of $pid in $T/o"
	local data=$d/host/data fd a b
	fd=$(sed -n 's/.*fd=\([0-9]*\).*/\1/p' $T/peer.log)
	a=$(sed -n 's/.*done a=\([0-9]*\).*/\1/p' $T/peer.log)
	b=$(sed -n 's/.*done a=[0-9]* b=\([0-9]*\).*/\1/p' $T/peer.log)
	local ca cb; ca=$(count_calls $data/host_syscall.data.slice_0 $a $fd)
	cb=$(count_calls $data/host_syscall.data.slice_0 $b $fd)
	within_1pct $ca $n || fail "thread A (before the window): $ca reads recorded of $n"
	within_1pct $cb $n || fail "thread B (born in the window): $cb reads recorded of $n"
	# The first line anchors the clock at start_info's instant, under a name msprof drops.
	local raw; raw=$(jq -r .clockMonotonicRaw $d/host/start_info)
	head -1 $data/host_syscall.data.slice_0 | grep -Eq "^$((raw / 1000000))\.[0-9]{6} \(0\.000000 ms\): [^ ]+/$pid clock_gettime\(arg0: 4\) = 0\$" ||
		fail "first line is not the anchor at $raw: $(head -1 $data/host_syscall.data.slice_0)"
	hd_cpu_grammar $data/host_cpu.data.slice_0
	hd_mem_grammar $data/host_mem.data.slice_0
	ls -a $data | grep -v '^host_\(syscall\|cpu\|mem\)\.data\.slice_0$' | grep -qv '^\.\.\?$' &&
		fail "other files in data/: $(ls -a $data)"
	grep -Eq '^ *[0-9.]+ +[0-9.]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+  read$' $d/dynprof_host_summary.txt ||
		fail "no read line in the summary: $(cat $d/dynprof_host_summary.txt)"
}

# host_cpu: blocks of "time <ns>", an uptime line, stat lines of 52 fields with a one-token comm.
hd_cpu_grammar() {
	awk -v pid=$pid '
		/^time [0-9]+$/ { blocks++; want_up = 1; next }
		want_up { if ($0 !~ /^[0-9]+\.[0-9]+ [0-9]+\.[0-9]+$/) bad = bad "uptime: " $0 "\n"; want_up = 0; next }
		NF < 39 || $2 !~ /^\([^ ]*\)$/ { bad = bad "stat: " $0 "\n"; next }
		{ threads[$1] = 1 }
		END { if (blocks < 5 || bad != "" || length(threads) < 3) { printf "blocks %d threads %d\n%s", blocks, length(threads), bad; exit 1 } }
	' "$1" || fail "host_cpu grammar: $(head -5 "$1")"
}

# host_mem: "<ns> <7 numbers>" per sample, in time order.
hd_mem_grammar() {
	awk '
		NF != 8 || $0 !~ /^[0-9 ]+$/ { bad++ }
		$1 < last { bad++ }
		{ last = $1; n++ }
		END { exit !(n >= 5 && !bad) }
	' "$1" || fail "host_mem grammar: $(head -3 "$1")"
}

# Without --host-sys nothing is collected and data/ is not made.
test_no_host_sys_writes_no_host_data() {
	local pid; pid=$(start_syscaller 10)
	dp_background --pid=$pid --output=$T/o
	dp_send start
	wait_until 10 hd_window_open || fail "no window: $(cat $T/out)"
	dp_send stop quit
	wait $DP_PID
	expect_no_line "dynprof collects"
	local d; d=$(prof_dirs_of $T/o $pid)
	[ ! -e $d/host/data/host_syscall.data.slice_0 ] || fail "host data without --host-sys"
}

# The tinyring build's 4 KiB ring holds ~70 records: most calls are lost,
# counted, and the window is saved incomplete, never silently short.
test_lost_calls_are_counted_and_the_window_saved_incomplete() {
	local n=20000 pid; pid=$(start_syscaller $n)
	DP=$B/tests/dynprof-tinyring dp_background --pid=$pid --output=$T/o --host-sys=osrt
	dp_send start
	wait_until 10 hd_window_open || fail "no window: $(cat $T/out)"
	touch $T/go
	wait_until 20 peer_done || fail "the peer did not finish: $(cat $T/peer.log)"
	dp_send stop quit
	wait $DP_PID
	local lost; lost=$(sed -En "s/.*pid $pid: window 1: host data: [0-9]+ system calls, ([0-9]+) lost.*/\1/p" $T/out)
	[ -n "$lost" ] && [ "$lost" -gt 0 ] || { cat $T/out; fail "no lost calls counted"; }
	expect_line "summary: .*windows: 0 saved, 1 saved incomplete, 0 lost"
	jq -e "select(.pid == $pid) | .fate == \"incomplete\" and .host_lost == $lost and (.reason | test(\"system call records lost\"))" \
		$T/o/*_dynprof_windows > /dev/null || fail "record: $(cat $T/o/*_dynprof_windows)"
	# Every call is either a line or counted lost.
	local d fd a b kept; d=$(prof_dirs_of $T/o $pid)
	fd=$(sed -n 's/.*fd=\([0-9]*\).*/\1/p' $T/peer.log)
	a=$(sed -n 's/.*done a=\([0-9]*\).*/\1/p' $T/peer.log)
	b=$(sed -n 's/.*done a=[0-9]* b=\([0-9]*\).*/\1/p' $T/peer.log)
	kept=$(( $(count_calls $d/host/data/host_syscall.data.slice_0 $a $fd) + $(count_calls $d/host/data/host_syscall.data.slice_0 $b $fd) ))
	[ $((kept + lost)) -ge $((2 * n)) ] || fail "$kept reads kept + $lost lost < $((2 * n)) made"
}

# Launch mode serves it through the same windows: the application's calls land in its folder.
test_launch_mode_gets_host_data() {
	local n=5000 card; card=$(make_card 0)
	dp_background --dynamic=on --device="$T/dev/davinci*" --output=$T/o --host-sys=osrt,mem \
		env LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES="$T/dev/davinci*" $SYSCALLER $card $n $T/go
	wait_until 10 grep -q "target joined" $T/out || fail "no join: $(cat $T/out)"
	dp_send start
	wait_until 10 hd_window_open || fail "no window: $(cat $T/out)"
	touch $T/go
	wait_until 20 grep -q "syscaller: done" $T/out || fail "the peer did not finish: $(cat $T/out)"
	dp_send stop
	wait_until 10 grep -q "window saved in" $T/out || fail "no window saved: $(cat $T/out)"
	local d fd got; d=$(ls -d $T/o/PROF_*)
	fd=$(sed -n 's/.*syscaller: ready pid=[0-9]* fd=\([0-9]*\).*/\1/p' $T/out)
	got=$(grep -Ec " read\(arg0: $fd\) = 1\$" $d/host/data/host_syscall.data.slice_0)
	within_1pct $got $((2 * n)) || fail "$got reads recorded of $((2 * n))"
	[ -s $d/host/data/host_mem.data.slice_0 ] || fail "no host_mem"
	[ ! -e $d/host/data/host_cpu.data.slice_0 ] || fail "host_cpu without cpu asked"
	dp_send quit
	kill -TERM "$(sed -n 's/.*application env started: pid \([0-9]*\).*/\1/p' $T/out)" # it waits for SIGTERM
	wait $DP_PID
}
