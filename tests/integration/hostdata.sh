# --host-sys=osrt,cpu,mem,disk,network: dynprof collects the target's system
# calls (BPF), its pthread calls (uprobes), its cpu, mem, disk and network
# samples itself, and writes
# them into the window's folder as msprof's host/data files (docs/HOSTDATA.md
# has the grammar). With MSPROF_ANALYSIS (msprof's analysis/ folder), each
# window is also run through msprof's own export (hd_msprof_export).


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
	# host_pthreadcall: thread B's pthread_create and the two joins, in the window.
	ls -a $data | grep -v '^host_\(syscall\|pthreadcall\|cpu\|mem\)\.data\.slice_0$' | grep -qv '^\.\.\?$' &&
		fail "other files in data/: $(ls -a $data)"
	grep -Eq '^ *[0-9.]+ +[0-9.]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+  read$' $d/dynprof_host_summary.txt ||
		fail "no read line in the summary: $(cat $d/dynprof_host_summary.txt)"
	# Each thread's own table: its reads, as many as its lines in host_syscall.
	local t want
	for want in "$a $ca" "$b $cb"; do
		set -- $want
		t=$(awk -v tid=$1 '/^thread / { on = ($2 == tid) } on && $NF == "read" { print $4 }' $d/dynprof_host_summary.txt)
		[ "$t" = "$2" ] || fail "thread $1's table: ${t:-no} reads, $2 in host_syscall: $(cat $d/dynprof_host_summary.txt)"
	done
	hd_msprof_export $d "$a read $ca" "$b read $cb"
}

# hd_msprof_export DIR "TID CALL COUNT"...: with MSPROF_ANALYSIS (a checkout
# of msprof's analysis/, never needed by the suite) its export turns the
# window into exactly COUNT OS Runtime API slices of CALL on TID's lane, and
# cpu and memory counter lanes when the window has their files. Without it,
# said and not run.
hd_msprof_export() {
	local d=$1 r rc=0 want
	shift
	r=$("$DYNPROF_TESTS/../tools/msprof-export-check.sh" "$d" 2>&1) || rc=$?
	if [ $rc = 77 ]; then
		echo "msprof's export not checked: MSPROF_ANALYSIS not set"
		return 0
	fi
	[ $rc = 0 ] || fail "msprof's export: $r"
	for want in "$@"; do
		set -- $want
		echo "$r" | grep -Eq "^lane [0-9]+ $1 $2 $3\$" || fail "msprof's export: not $3 $2 on $1's lane: $r"
	done
	[ ! -s $d/host/data/host_cpu.data.slice_0 ] || echo "$r" | grep -Eq '^counter CPU Avg [1-9]' ||
		fail "msprof's export: no cpu lane: $r"
	[ ! -s $d/host/data/host_mem.data.slice_0 ] || echo "$r" | grep -Eq '^counter Memory Usage [1-9]' ||
		fail "msprof's export: no memory lane: $r"
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
	# The host data goes into the saved folder after that line; its own line says it is there.
	wait_until 10 grep -q "window 1: host data:" $T/out || fail "no host data line: $(cat $T/out)"
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

PTHCALLER=$B/tests/peers/pthcaller

# pth_line PID WINDOW N LIB_REGEX: the console's pthread line of a window in
# which pthcaller made N rounds, checked; echoes its pthread_attr_init
# count. Exactly N, except in an ASan build (SANITIZE=1), whose runtime
# makes pthread_attr_init calls of its own in the threads pthread_create
# starts (real calls into libc, recorded as such): then at least N (the
# main thread's own stay exactly N).
pth_line() {
	local pid=$1 win=$2 n=$3 lib=$4 line attr total
	line=$(grep -E "pid $pid: window $win: host data: [0-9]+ pthread calls in $lib \(pthread_attr_init [0-9]+, pthread_create $n, pthread_join $((n + 1)), pthread_mutex_init $((2 * n))\)" $T/out) ||
		{ cat $T/out >&2; fail "no pthread line of window $win for $n rounds"; }
	attr=$(echo "$line" | sed -E 's/.*pthread_attr_init ([0-9]+),.*/\1/')
	total=$(echo "$line" | sed -E 's/.*host data: ([0-9]+) pthread calls.*/\1/')
	[ "$total" = $((attr + 4 * n + 1)) ] || fail "pthread total $total is not the sum: $line"
	if ldd $PTHCALLER | grep -q libasan; then
		[ "$attr" -ge $n ] || fail "$attr pthread_attr_init of $n: $line"
	else
		[ "$attr" = $n ] || fail "$attr pthread_attr_init of $n: $line"
	fi
	echo $attr
}

# count_pth FILE TID FUNC: host_pthreadcall lines of thread TID calling FUNC that returned 0.
count_pth() {
	grep -Ec "^\[pid $2\] [0-9]+\.[0-9]{9} [^ ]+->$3\(0x[0-9a-f]+\) = 0 <[0-9]+\.[0-9]{9}>\$" "$1"
}

# pthread_attr_init, _create, _join and _mutex_init: each call of the
# target's in the window is one host_pthreadcall line, exactly, on its thread;
# a bystander making the same calls at the same time (same libc) adds none.
test_pthread_calls_of_a_window_are_counted_exactly() {
	local n=300 card pid; card=$(make_card 0)
	"$PTHCALLER" /dev/null $n $T/go > $T/bystander.log 2>&1 &
	remember_pid $!
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		"$PTHCALLER" "$card" $n $T/go > $T/peer.log 2>&1 &
	pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "pthcaller $pid never opened its socket"
	dp_background --pid=$pid --output=$T/o --host-sys=osrt,cpu,mem --events=json:$T/events \
		--trace=on --trace-fold=0
	dp_send start
	wait_until 10 hd_window_open || fail "no window: $(cat $T/out)"
	touch $T/go
	wait_until 20 grep -q "pthcaller: done" $T/peer.log || fail "the peer did not finish: $(cat $T/peer.log)"
	wait_until 20 grep -q "pthcaller: done" $T/bystander.log || fail "the bystander did not finish: $(cat $T/bystander.log)"
	dp_send stop quit
	wait $DP_PID
	local w; w=$(sed -n 's/.*done main=[0-9]* w=\([0-9]*\).*/\1/p' $T/peer.log)
	local attr; attr=$(pth_line $pid 1 $n "/[^ ]*libc[^ ]*")
	local d f; d=$(prof_dirs_of $T/o $pid); f=$d/host/data/host_pthreadcall.data.slice_0
	[ -s $f ] || fail "no host_pthreadcall in $d: $(ls $d/host/data)"
	local got
	for want in "$pid pthread_attr_init $n" "$pid pthread_create $n" "$pid pthread_join $((n + 1))" \
		"$w pthread_mutex_init $((2 * n))" "$w pthread_create 0" "$pid pthread_mutex_init 0"; do
		set -- $want
		got=$(count_pth $f $1 $2)
		[ "$got" = "$3" ] || fail "thread $1: $got $2 lines, $3 made: $(grep -c . $f) lines"
	done
	# The anchor: start_info's instant, as pthread_once (msprof pins it, then drops it).
	local raw; raw=$(jq -r .clockMonotonicRaw $d/host/start_info)
	head -1 $f | grep -Eq "^\[pid $pid\] $((raw / 1000000000))\.$(printf %09d $((raw % 1000000000))) [^ ]+->pthread_once\(0x0\) = 0 <0\.000000000>\$" ||
		fail "first line is not the anchor at $raw: $(head -1 $f)"
	[ $(grep -c . $f) = $((attr + 4 * n + 2)) ] || fail "other lines in $f: $(grep -vc pthread_ $f)"
	hd_msprof_export $d "$pid pthread_create $n" "$pid pthread_join $((n + 1))" "$w pthread_mutex_init $((2 * n))"
	# The window-close event's summary: per thread and call, the same counts;
	# x86-64's uretprobe system call, our probes' own, is not among them.
	jq -s -e --argjson p $pid 'any(.[]; .event == "target-join" and .pid == $p and .host_only == false)' $T/events > /dev/null ||
		fail "a served target's join event says host-only: $(grep target-join $T/events)"
	local sum; sum=$(jq -c "select(.event == \"window-close\" and .pid == $pid) | .host" $T/events)
	echo "$sum" | jq -e --argjson p $pid --argjson w $w --argjson n $n --argjson a $attr '
		def c($t; $f): [.threads[] | select(.tid == $t) | .calls[] | select(.name == $f) | .count] | add // 0;
		.pthread_calls == $a + 4 * $n + 1 and .lost == 0 and
		c($p; "pthread_attr_init") == $n and c($p; "pthread_create") == $n and
		c($p; "pthread_join") == $n + 1 and c($w; "pthread_mutex_init") == 2 * $n and
		c($w; "pthread_create") == 0 and c($p; "clone3") + c($p; "clone") == $n and
		.system_calls == ([.threads[].calls[] | select(.name | startswith("pthread_") | not) | .count] | add) and
		all(.threads[].calls[]; .total_ns >= .max_ns and .count > 0) and
		all(.threads[].calls[]; .name != "uretprobe" and .name != "syscall_335")' > /dev/null ||
		fail "window-close host summary: $sum"
	# The trace (--trace=on, nothing folded): each pthread call a slice on its thread.
	local tr=$T/o/${DP_PID}_dynprof_trace.json
	for want in "$pid pthread_create $n" "$pid pthread_join $((n + 1))" "$w pthread_mutex_init $((2 * n))"; do
		set -- $want
		got=$(jq --argjson t $1 --arg f $2 '[.[] | select(.ph == "X" and .tid == $t and .name == $f)] | length' $tr)
		[ "$got" = "$3" ] || fail "trace: thread $1 has $got $2 slices, $3 made"
	done
}

# make_rootfs DIR: a root of its own for pthcaller and the agent, with
# their libraries at /opt/ctrlib, a path the host does not have.
make_rootfs() {
	local r=$1 lib
	mkdir -p $r/bin $r/opt/ctrlib $r/dev $r/proc $r/etc $r/home/c $r/tmp
	cp $PTHCALLER $r/bin/
	cp $AGENT_SO $r/opt/ctrlib/
	for lib in $(ldd $PTHCALLER $AGENT_SO | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u); do
		cp -L $lib $r/opt/ctrlib/
	done
	# The program's interpreter, where its PT_INTERP names it.
	lib=$(ldd $PTHCALLER | awk '$1 ~ /^\// { print $1; exit }')
	mkdir -p $r$(dirname $lib)
	cp -L $lib $r$lib
	echo "root:x:0:0:root:/home/c:/bin/sh" > $r/etc/passwd
}

# A target in a root of its own (chroot, pid and mount namespaces) with its
# own copy of libc: the probes go on the file it maps, found through its
# maps, and its calls are counted exactly as on the host.
# A card user started without PROFILING_MODE=dynamic serves no socket:
# with --host-sys it still gets windows, host-only ones, from dynprof's
# stand-in server: the PROF_ folder in --output with CANN's host control
# files describing it, and the host data, counted exactly. Without
# --host-sys it is refused as before.
test_a_card_user_without_a_socket_gets_host_only_windows() {
	local n=200 card pid; card=$(make_card 0)
	"$PTHCALLER" "$card" $n $T/go > $T/peer.log 2>&1 &
	pid=$!
	remember_pid $pid
	wait_until 5 grep -q "pthcaller: ready" $T/peer.log || fail "pthcaller did not start: $(cat $T/peer.log)"
	has_socket $pid && fail "pthcaller $pid serves a socket without the agent"
	dp --pid=$pid --output=$T/o0 </dev/null
	expect_status 255 $?
	expect_line "invalid pid value: $pid, .*it serves no dynamic profiling socket"
	dp_background --pid=$pid --output=$T/o --host-sys=osrt,cpu,mem --events=json:$T/events \
		--control=unix:$T/ctl.sock
	dp_send start
	wait_until 10 hd_window_open || fail "no window: $(cat $T/out)"
	# A script sees it: the join event and the status say host-only.
	"$DP" --remote=$T/ctl.sock status --json > $T/status.out 2>&1 || fail "status: $(cat $T/status.out)"
	grep '^{' $T/status.out > $T/status.json
	jq -e --argjson p $pid '.targets[] | select(.pid == $p) | .host_only == true' $T/status.json > /dev/null ||
		fail "status does not say host-only: $(cat $T/status.json)"
	jq -s -e --argjson p $pid 'any(.[]; .event == "target-join" and .pid == $p and .host_only == true)' $T/events > /dev/null ||
		fail "the join event does not say host-only: $(cat $T/events)"
	expect_line "^\[INFO\] pid $pid serves no dynamic profiling socket \(not started with PROFILING_MODE=dynamic\): its windows hold the host data dynprof collects itself \(osrt,cpu,mem\), no device data\$"
	touch $T/go
	wait_until 20 grep -q "pthcaller: done" $T/peer.log || fail "the peer did not finish: $(cat $T/peer.log)"
	dp_send stop quit
	wait $DP_PID
	expect_status 0 $?
	expect_line "^\[INFO\] summary: 1 target joined, 1 window opened, 1 PROF_ folder in $T/o; windows: 1 saved, 0 saved incomplete, 0 lost\$"
	local d w f got; d=$(prof_dirs_of $T/o $pid)
	[ -n "$d" ] || fail "no PROF_ folder of $pid in $T/o: $(ls $T/o)"
	w=$(sed -n 's/.*done main=[0-9]* w=\([0-9]*\).*/\1/p' $T/peer.log)
	pth_line $pid 1 $n "/[^ ]*libc[^ ]*" > /dev/null
	f=$d/host/data/host_pthreadcall.data.slice_0
	for want in "$pid pthread_create $n" "$pid pthread_join $((n + 1))" "$w pthread_mutex_init $((2 * n))"; do
		set -- $want
		got=$(count_pth $f $1 $2)
		[ "$got" = "$3" ] || fail "thread $1: $got $2 lines, $3 made"
	done
	[ -s $d/host/data/host_cpu.data.slice_0 ] && [ -s $d/host/data/host_mem.data.slice_0 ] &&
		[ -s $d/host/data/host_syscall.data.slice_0 ] || fail "host data missing: $(ls $d/host/data)"
	# CANN's control files, describing the target (msprof's export needs each).
	local f2
	for f2 in start_info end_info info.json sample.json host_start.log; do
		[ -s $d/host/$f2 ] && grep -q "^filesize: *$(stat -c %s $d/host/$f2)\$" $d/host/$f2.done ||
			fail "host/$f2 or its .done missing or wrong: $(ls $d/host)"
	done
	jq -e --arg p $pid '.pid == $p and .platform_version == "5" and .devices == "64" and .DeviceInfo == [] and
		(.netCard | length) > 0' $d/host/info.json > /dev/null || fail "info.json: $(cat $d/host/info.json)"
	jq -e '.devices == "64"' $d/host/sample.json > /dev/null || fail "sample.json: $(cat $d/host/sample.json)"
	[ "$(jq -r .clockMonotonicRaw $d/host/end_info)" -gt "$(jq -r .clockMonotonicRaw $d/host/start_info)" ] ||
		fail "end_info is not after start_info"
	jq -s -e --argjson p $pid 'any(.[]; .event == "window-close" and .pid == $p and .fate == "saved")' $T/events > /dev/null ||
		fail "no saved window-close event: $(cat $T/events)"
	hd_msprof_export $d "$pid pthread_create $n" "$pid pthread_join $((n + 1))" "$w pthread_mutex_init $((2 * n))"
	# --pid=auto takes it too with --host-sys, and only then.
	dp --pid=auto --device="$T/dev/davinci*" --output=$T/o2 </dev/null
	expect_status 255 $?
	expect_line "^\[INFO\] pid $pid holds a card but serves no socket"
	# A window of 300 ms by rule: the cpu lane needs two 20 ms samples.
	exec 7>&-
	rm -f $T/in
	dp_background --pid=auto --device="$T/dev/davinci*" --host-sys=cpu --output=$T/o2 \
		--window=start=open,stop=+300ms
	wait_until 20 grep -q "window saved" $T/out || fail "no window saved: $(cat $T/out)"
	wait $DP_PID # its rule's one window done, it ends
	expect_status 0 $?
	expect_line "^\[INFO\] pid $pid serves no dynamic profiling socket"
	expect_line "^\[INFO\] summary: 1 target joined, 1 window opened, 1 PROF_ folder in $T/o2; windows: 1 saved, 0 saved incomplete, 0 lost\$"
	[ -s "$(prof_dirs_of $T/o2 $pid)/host/data/host_cpu.data.slice_0" ] || fail "no cpu data in $T/o2: $(ls -R $T/o2)"
}

test_pthread_calls_of_a_target_in_its_own_root() {
	local n=200 card r=$T/rootfs chroot; card=$(make_card 0)
	chroot=$(command -v chroot) || fail "no chroot"
	make_rootfs $r
	cp -a $card $r/dev/davinci0
	unshare --pid --fork --mount sh -c "mount -t proc proc $r/proc && exec env -i ASAN_OPTIONS='${ASAN_OPTIONS:-}' HOME=/home/c PROFILING_MODE=dynamic LD_LIBRARY_PATH=/opt/ctrlib LD_PRELOAD=/opt/ctrlib/libdynprof_agent.so DYNPROF_AGENT_DEVICES=/dev/davinci0 $chroot $r /bin/pthcaller /dev/davinci0 $n /tmp/go" > $T/peer.log 2>&1 &
	local u=$! pid=""
	remember_pid $u
	wait_until 5 eval 'read -r pid _ < /proc/$u/task/$u/children; [ -n "$pid" ] && grep -q pthcaller /proc/$pid/cmdline' ||
		fail "no target: $(cat $T/peer.log)"
	remember_pid $pid
	wait_until 5 test -S /proc/$pid/root/home/c/dynamic_profiling_socket_1 || fail "no socket: $(cat $T/peer.log)"
	dp_background --pid=$pid --output=$T/o --host-sys=osrt
	dp_send start
	wait_until 10 hd_window_open || fail "no window: $(cat $T/out)"
	touch $r/tmp/go
	wait_until 20 grep -q "pthcaller: done" $T/peer.log || fail "the peer did not finish: $(cat $T/peer.log)"
	dp_send stop quit
	wait $DP_PID
	pth_line $pid 1 $n "[^ ]*/opt/ctrlib/libc.so.6" > /dev/null
	local f; f=$(ls $T/o/PROF_*/host/data/host_pthreadcall.data.slice_0) || fail "no host_pthreadcall: $(ls -R $T/o)"
	# Inside, the target is pid 1 and W is pid 2 or more: lines carry host tids.
	[ "$(count_pth $f $pid pthread_create)" = $n ] || fail "$(count_pth $f $pid pthread_create) pthread_create lines of $n"
	[ $(grep -c 'libc.so.6->pthread_mutex_init' $f) = $((2 * n)) ] || fail "pthread_mutex_init lines: $(grep -c mutex_init $f)"
}

# A second window right after the first, while the first one's probes are
# still closing in the background: each call is still one record.
test_pthread_calls_of_a_second_window_are_not_counted_twice() {
	local n=100 card pid; card=$(make_card 0)
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		"$PTHCALLER" "$card" $n $T/go > $T/peer.log 2>&1 &
	pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "pthcaller $pid never opened its socket"
	dp_background --pid=$pid --output=$T/o --host-sys=osrt
	dp_send start
	wait_until 10 hd_window_open || fail "no window: $(cat $T/out)"
	dp_send stop start
	wait_until 10 eval '[ $(grep -c "start success" $T/out) = 2 ]' || fail "no second window: $(cat $T/out)"
	touch $T/go
	wait_until 20 grep -q "pthcaller: done" $T/peer.log || fail "the peer did not finish: $(cat $T/peer.log)"
	dp_send stop quit
	wait $DP_PID
	expect_line "pid $pid: window 1: host data: 0 pthread calls"
	pth_line $pid 2 $n "[^ ]*" > /dev/null
}

IOER=$B/tests/peers/ioer

# host_disk: rows "HH:MM:SS <pid> ? <uid> <r> B/s <w> B/s 0.00 % <io> % <comm>", then
# start_time; with a swap area on (swap-ins not measured) "?unavailable?" for swapin and io.
hd_disk_grammar() {
	local f=$1 pid=$2 io='0\\.00 % [0-9]+\\.[0-9][0-9] %'
	[ "$(wc -l < /proc/swaps)" -gt 1 ] && io='\\?unavailable\\?'
	awk -v pid=$pid -v io="$io" '
		$0 ~ "^[0-9][0-9]:[0-9][0-9]:[0-9][0-9] " pid " \\? [0-9]+ [0-9]+\\.[0-9][0-9] B/s [0-9]+\\.[0-9][0-9] B/s " io " [^ ]+$" { rows++; if (start) bad++; next }
		/^start_time [0-9]+$/ { start++; next }
		{ bad++ }
		END { exit !(rows >= 5 && start == 1 && !bad) }
	' "$f" || fail "host_disk grammar: $(head -3 "$f"; tail -2 "$f")"
}

# host_network: blocks of "time <ns>" and " <name>: <16 numbers>" lines, nothing else.
hd_net_grammar() {
	awk '
		/^time [0-9]+$/ { blocks++; next }
		/^ +[^ :]+: [0-9 ]+$/ && NF == 17 && blocks { next }
		{ bad++ }
		END { exit !(blocks >= 5 && !bad) }
	' "$1" || fail "host_network grammar: $(head -4 "$1")"
}

# host_disk's io %: the time the target waited for its fsync's writeback (an
# iowait sleep) shows, within what its writing took in all plus a period
# (a sleep counts in the period it ends in); its last rows, asleep in
# 10 ms sleeps (that end, and are no wait for I/O), show none. With a swap area on,
# nothing to check (the rows say ?unavailable?).
hd_disk_iowait() {
	local f=$1 disk_us=$2 io_us idle
	[ "$(wc -l < /proc/swaps)" -gt 1 ] && { echo "(a swap area is on: io % not measured)"; return 0; }
	[ -n "$disk_us" ] || fail "the peer did not say how long its writing took: $(cat $T/peer.log)"
	io_us=$(awk '$8 == "B/s" { s += $11 * 200 } END { printf "%d", s }' $f)
	[ "$io_us" -gt 0 ] && [ "$io_us" -le $((disk_us + 20000)) ] ||
		fail "host_disk's io % sums to $io_us us of waiting, the target's writing took $disk_us us"
	idle=$(grep ' B/s ' $f | tail -5 | awk '$11 != "0.00"' | wc -l)
	[ "$idle" = 0 ] || fail "io % while the target slept: $(grep ' B/s ' $f | tail -5)"
	echo "disk: io % sums to $io_us us of iowait for $disk_us us of writing and fsync"
}

# This run's dynprof's links on sched_switch and sched_wakeup (bpf/iowait.bpf.c).
iowait_links() {
	grep -lE '^tp_name:[[:space:]]+sched_(switch|wakeup)$' /proc/$DP_PID/fdinfo/* 2>/dev/null | wc -l
}

# disk and network: a target in a network namespace of its own writes a
# known number of bytes to a file (fsynced) and sends a known number over
# its loopback inside the window. host_disk's rows hold the bytes written
# (the rows' rates times msprof's 20 ms periods; the agent's own few files
# in the window add at most some KiB), host_network's blocks hold only the
# target's namespace's interfaces (lo, not the host's), whose tx counter
# grew by the datagrams and their headers.
test_disk_and_network_of_a_window_land_in_its_folder() {
	local disk=$((8 << 20)) net=2000000 card pid fs; card=$(make_card 0)
	fs=$(stat -f -c %T $T)
	[ "$fs" != tmpfs ] || fail "$T is on tmpfs: it has no writeback, the kernel counts no write_bytes there"
	unshare -n env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		"$IOER" "$card" $T/written $disk $net $T/go > $T/peer.log 2>&1 &
	pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "ioer $pid never opened its socket: $(cat $T/peer.log)"
	dp_background --pid=$pid --output=$T/o --host-sys=disk,network
	dp_send start
	wait_until 10 hd_window_open || fail "no window: $(cat $T/out)"
	# disk's iowait programs run on every context switch of the host: attached
	# only while a process is watched (this dynprof's link fds, by their fdinfo).
	[ "$(iowait_links)" = 2 ] || fail "dynprof holds $(iowait_links) sched_switch/sched_wakeup links while its window is open"
	touch $T/go
	wait_until 20 grep -q "ioer: done" $T/peer.log || fail "the peer did not finish: $(cat $T/peer.log)"
	sleep 0.2
	dp_send stop
	wait_until 10 eval '[ "$(iowait_links)" = 0 ]' || fail "dynprof still holds $(iowait_links) sched_switch/sched_wakeup links after its window stopped"
	dp_send quit
	wait $DP_PID
	expect_line "dynprof collects disk,network itself"
	expect_line "pid $pid: window 1: host data: 0 cpu, 0 mem, [1-9][0-9]* network samples, [1-9][0-9]* disk rows\$"
	local d data dg; d=$(prof_dirs_of $T/o $pid); data=$d/host/data
	dg=$(sed -n 's/.*ioer: done datagrams=\([0-9]*\).*/\1/p' $T/peer.log)
	hd_disk_grammar $data/host_disk.data.slice_0 $pid
	hd_net_grammar $data/host_network.data.slice_0
	# Row 0 begins at the window's open: within a period or so of start_info's instant.
	local raw st; raw=$(jq -r .clockMonotonicRaw $d/host/start_info)
	st=$(sed -n 's/^start_time //p' $data/host_disk.data.slice_0)
	[ $((st > raw ? st - raw : raw - st)) -lt 100000000 ] || fail "start_time $st, start_info $raw"
	# The bytes written: the rows' write rates times 20 ms each.
	local w; w=$(awk '$8 == "B/s" { s += $7 * 0.02 } END { printf "%d", s + 0.5 }' $data/host_disk.data.slice_0)
	[ "$w" -ge $disk ] && [ "$w" -le $((disk + (64 << 10))) ] || fail "host_disk holds $w bytes written, the target wrote $disk"
	echo "disk: $w bytes in the rows for $disk written"
	hd_disk_iowait $data/host_disk.data.slice_0 "$(sed -n 's/.*ioer: done.* disk_us=\([0-9]*\).*/\1/p' $T/peer.log)"
	# One row per 20 ms period, none skipped (msprof places row i at start_time + i
	# periods): the rows span what the network samples, taken with them, span.
	local rows last; rows=$(grep -c ' B/s ' $data/host_disk.data.slice_0)
	last=$(awk '/^time / { t = $2 } END { print t }' $data/host_network.data.slice_0)
	[ $(( (last - st) / 1000000 - rows * 20 )) -ge -30 ] && [ $(( (last - st) / 1000000 - rows * 20 )) -le 30 ] ||
		fail "$rows disk rows of 20 ms for $(( (last - st) / 1000000 )) ms of samples"
	# Only the target's namespace's interfaces, and lo's tx grew by what was sent.
	local ifs; ifs=$(awk '/^ / { print $1 }' $data/host_network.data.slice_0 | sort -u | tr '\n' ' ')
	[ "$ifs" = "lo: " ] || fail "interfaces not the target's namespace's: $ifs"
	local tx; tx=$(awk '$1 == "lo:" { if (first == "") first = $10; last = $10 } END { print last - first }' $data/host_network.data.slice_0)
	[ "$tx" -ge $net ] && [ "$tx" -le $((dg * (1000 + 64))) ] || fail "lo sent $tx bytes in the window, the target sent $dg datagrams of 1000"
	echo "network: lo tx grew by $tx for $dg datagrams of 1000 bytes"
	ls -a $data | grep -v '^host_\(disk\|network\)\.data\.slice_0$' | grep -qv '^\.\.\?$' &&
		fail "other files in data/: $(ls -a $data)"
	return 0
}

# --host-sys-before: a burst of reads made before a rule fires (file:), and
# the rule's window. hd_before_run N ARGS...: the peer's two threads read N
# bytes each once $T/go exists; once done, $T/fire opens a 300 ms window.
# Echoes the window's folder.
hd_before_run() {
	local n=$1 pid; shift
	pid=$(start_syscaller $n)
	dp_background --pid=$pid --output=$T/o --host-sys=osrt,cpu,mem "$@" \
		--window=start=file:$T/fire,stop=+300ms
	wait_until 10 grep -q "Start profiling" $T/out || fail "not joined: $(cat $T/out)"
	touch $T/go
	wait_until 20 peer_done || fail "the peer did not finish: $(cat $T/peer.log)"
	sleep 0.2 # the burst is over well before the rule fires
	touch $T/fire
	wait_until 10 grep -q "window 1: host data:" $T/out || fail "no window's host data: $(cat $T/out)"
	exec 7>&-
	kill -TERM $pid
	wait $DP_PID
	prof_dirs_of $T/o $pid
}

# hd_burst_reads DIR: the burst's reads (both threads) in the window's host_syscall.
hd_burst_reads() {
	local f=$1/host/data/host_syscall.data.slice_0 fd a b
	fd=$(sed -n 's/.*fd=\([0-9]*\).*/\1/p' $T/peer.log)
	a=$(sed -n 's/.*done a=\([0-9]*\).*/\1/p' $T/peer.log)
	b=$(sed -n 's/.*done a=[0-9]* b=\([0-9]*\).*/\1/p' $T/peer.log)
	[ -e $f ] || { echo 0; return; }
	echo $(( $(count_calls $f $a $fd) + $(count_calls $f $b $fd) ))
}

test_host_sys_before_keeps_what_came_before_a_rule_fired() {
	local n=2000 d got
	d=$(hd_before_run $n --host-sys-before=5s)
	[ -d "$d" ] || fail "no window folder: $(cat $T/out)"
	got=$(hd_burst_reads $d)
	within_1pct $got $((2 * n)) || fail "$got of the burst's $((2 * n)) reads in the window"
	expect_line "window 1: host data from [0-9]+ ms before its open \(--host-sys-before\): [0-9]+ calls and [0-9]+ samples from before it, 0 calls and 0 samples dropped"
	expect_line "window saved in"
	# start_info moved back to the host data's begin, the raw-to-wall mapping kept.
	local raw us first; raw=$(jq -r .clockMonotonicRaw $d/host/start_info)
	us=$(jq -r .collectionTimeBegin $d/host/start_info)
	first=$(head -1 $d/host/data/host_syscall.data.slice_0)
	echo "$first" | grep -Eq "^$((raw / 1000000))\.[0-9]{6} \(0\.000000 ms\): [^ ]+ clock_gettime\(arg0: 4\) = 0\$" ||
		fail "first line is not the anchor at start_info's $raw: $first"
	local eraw eus; eraw=$(jq -r .clockMonotonicRaw $d/host/end_info)
	eus=$(jq -r .collectionTimeEnd $d/host/end_info)
	# (the span begins at the join when that is less than 5 s before: no earlier than the burst)
	local fd burst; fd=$(sed -n 's/.*fd=\([0-9]*\).*/\1/p' $T/peer.log)
	# (host_syscall: ms with 6 decimals, read as ns)
	burst=$(grep -E " read\(arg0: $fd\) = 1\$" $d/host/data/host_syscall.data.slice_0 | head -1 | sed -E 's/^([0-9]+)\.([0-9]{6}) .*/\1\2/')
	[ -n "$burst" ] && [ $raw -le $burst ] || fail "start_info ($raw) not moved back before the burst ($burst ns)"
	local skew=$(( (us - raw / 1000) - (eus - eraw / 1000) ))
	[ ${skew#-} -le 5000 ] || fail "start_info's clocks moved apart by $skew us: $(cat $d/host/start_info) $(cat $d/host/end_info)"
	[ "$(cat $d/host/start_info.done)" = "filesize:$(wc -c < $d/host/start_info)" ] ||
		fail "start_info.done: $(cat $d/host/start_info.done), start_info $(wc -c < $d/host/start_info) bytes"
	# Samples from before the burst too.
	local cpu0 mem0; cpu0=$(sed -n 's/^time \([0-9]*\)$/\1/p' $d/host/data/host_cpu.data.slice_0 | head -1)
	mem0=$(head -1 $d/host/data/host_mem.data.slice_0 | cut -d' ' -f1)
	[ -n "$cpu0" ] && [ $cpu0 -le $burst ] || fail "first cpu sample $cpu0 not before the burst ($burst ns)"
	[ -n "$mem0" ] && [ $mem0 -le $burst ] || fail "first mem sample $mem0 not before the burst ($burst ns)"
	local pid; pid=$(sed -n 's/.*ready pid=\([0-9]*\).*/\1/p' $T/peer.log)
	hd_cpu_grammar $d/host/data/host_cpu.data.slice_0
	hd_mem_grammar $d/host/data/host_mem.data.slice_0
}

test_without_host_sys_before_a_rule_window_misses_the_burst() {
	local n=2000 d got
	d=$(hd_before_run $n)
	[ -d "$d" ] || fail "no window folder: $(cat $T/out)"
	got=$(hd_burst_reads $d)
	[ "$got" = 0 ] || fail "$got of the burst's reads in a window opened after it"
	expect_no_line "host-sys-before"
}

# A console window's host data begins DURATION before its start was sent, as a rule's.
# --host-sys-before with disk: the bytes a target wrote before a rule fired
# are in the window's host_disk rows (row 0 at the span's begin, msprof's
# grid unbroken into the window's own rows); without the option none are.
hd_disk_before_run() { # hd_disk_before_run ARGS...: the window's folder
	local disk=$((4 << 20)) card pid; card=$(make_card 0)
	[ "$(stat -f -c %T $T)" != tmpfs ] || fail "$T is on tmpfs: the kernel counts no write_bytes there"
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		"$IOER" "$card" $T/written $disk 0 $T/go > $T/peer.log 2>&1 &
	pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "ioer $pid never opened its socket: $(cat $T/peer.log)"
	dp_background --pid=$pid --output=$T/o --host-sys=disk "$@" --window=start=file:$T/fire,stop=+300ms
	wait_until 10 grep -q "Start profiling" $T/out || fail "not joined: $(cat $T/out)"
	touch $T/go
	wait_until 20 grep -q "ioer: done" $T/peer.log || fail "the peer did not finish: $(cat $T/peer.log)"
	sleep 0.2 # the writes are over well before the rule fires
	touch $T/fire
	wait_until 10 grep -q "window 1: host data:" $T/out || fail "no window's host data: $(cat $T/out)"
	kill -TERM $pid
	wait $DP_PID
	prof_dirs_of $T/o $pid
}
hd_disk_written() { # hd_disk_written DIR: the bytes its host_disk rows say were written
	awk '$8 == "B/s" { s += $7 * 0.02 } END { printf "%d", s + 0.5 }' $1/host/data/host_disk.data.slice_0
}

test_host_sys_before_keeps_disk_rows_before_a_rule_fired() {
	local d w st raw; d=$(hd_disk_before_run --host-sys-before=5s)
	[ -d "$d" ] || fail "no window folder: $(cat $T/out)"
	hd_disk_grammar $d/host/data/host_disk.data.slice_0 $(sed -n 's/.*ready pid=\([0-9]*\).*/\1/p' $T/peer.log)
	w=$(hd_disk_written $d)
	# (the span's 5 s hold the agent's own writes too: 128 KiB more once under ASan)
	[ "$w" -ge $((4 << 20)) ] && [ "$w" -le $(((4 << 20) + (1 << 20))) ] ||
		fail "host_disk holds $w bytes written, the target wrote $((4 << 20)) before the rule fired"
	# Row 0 is the span's begin, which start_info was moved back to.
	st=$(sed -n 's/^start_time //p' $d/host/data/host_disk.data.slice_0)
	raw=$(jq -r .clockMonotonicRaw $d/host/start_info)
	[ $((st > raw ? st - raw : raw - st)) -lt 100000000 ] || fail "start_time $st, start_info $raw"
}

test_without_host_sys_before_disk_rows_begin_at_the_open() {
	local d w; d=$(hd_disk_before_run)
	[ -d "$d" ] || fail "no window folder: $(cat $T/out)"
	w=$(hd_disk_written $d)
	[ "$w" -lt $((1 << 20)) ] || fail "host_disk holds $w bytes written in a window opened after the writes"
}

test_host_sys_before_a_console_window_too() {
	local n=2000 pid d got; pid=$(start_syscaller $n)
	dp_background --pid=$pid --output=$T/o --host-sys=osrt --host-sys-before=5s
	wait_until 10 grep -q "Start profiling" $T/out || fail "not joined: $(cat $T/out)"
	touch $T/go
	wait_until 20 peer_done || fail "the peer did not finish: $(cat $T/peer.log)"
	sleep 0.2
	dp_send start
	wait_until 10 hd_window_open || fail "no window: $(cat $T/out)"
	dp_send stop quit
	wait $DP_PID
	d=$(prof_dirs_of $T/o $pid)
	[ -d "$d" ] || fail "no window folder: $(cat $T/out)"
	got=$(hd_burst_reads $d)
	within_1pct $got $((2 * n)) || fail "$got of the burst's $((2 * n)) reads in the console's window"
}

# The smallkeep build keeps 2000 calls a target: a burst of 2 x 5000 reads
# crosses it; the calls pushed out are counted, shown, and make the window
# saved incomplete.
test_host_sys_before_counts_what_its_cap_dropped() {
	local n=5000 d got dropped
	DP=$B/tests/dynprof-smallkeep d=$(hd_before_run $n --host-sys-before=20s)
	[ -d "$d" ] || fail "no window folder: $(cat $T/out)"
	got=$(hd_burst_reads $d)
	dropped=$(sed -En 's/.*window 1: host data from [0-9]+ ms before its open \(--host-sys-before\): [0-9]+ calls and [0-9]+ samples from before it, ([0-9]+) calls and [0-9]+ samples dropped.*/\1/p' $T/out)
	[ -n "$dropped" ] && [ "$dropped" -gt 0 ] || fail "no dropped calls counted: $(cat $T/out)"
	[ "$got" -le 2000 ] || fail "$got reads kept past a cap of 2000"
	[ $((got + dropped)) -ge $((2 * n)) ] || fail "$got kept + $dropped dropped < $((2 * n)) made"
	expect_line "at most 2000 calls a target"
	expect_line "windows: 0 saved, 1 saved incomplete, 0 lost"
	jq -e 'select(.window == 1) | .fate == "incomplete" and (.reason | test("dropped from --host-sys-before"))' \
		$T/o/*_dynprof_windows > /dev/null || fail "record: $(cat $T/o/*_dynprof_windows)"
}

# The tinyring build's 4 KiB ring: most of the burst is lost in the kernel
# while no window is open; the window of that span counts those losses.
test_host_sys_before_counts_kernel_losses_before_the_open() {
	local n=20000 d got lost
	DP=$B/tests/dynprof-tinyring d=$(hd_before_run $n --host-sys-before=20s)
	[ -d "$d" ] || fail "no window folder: $(cat $T/out)"
	got=$(hd_burst_reads $d)
	lost=$(sed -En 's/.*window 1: host data: [0-9]+ system calls, ([0-9]+) lost.*/\1/p' $T/out)
	[ -n "$lost" ] && [ "$lost" -gt 0 ] || fail "no lost calls counted: $(cat $T/out)"
	[ $((got + lost)) -ge $((2 * n)) ] || fail "$got kept + $lost lost < $((2 * n)) made"
	expect_line "windows: 0 saved, 1 saved incomplete, 0 lost"
}

# Launch mode: the application joins (session_join.c) and is kept from then.
test_host_sys_before_in_launch_mode() {
	local n=2000 card d fd got; card=$(make_card 0)
	dp_background --dynamic=on --device="$T/dev/davinci*" --output=$T/o --host-sys=osrt \
		--host-sys-before=10s \
		env LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES="$T/dev/davinci*" $SYSCALLER $card $n $T/go
	wait_until 10 grep -q "target joined" $T/out || fail "no join: $(cat $T/out)"
	touch $T/go
	wait_until 20 grep -q "syscaller: done" $T/out || fail "the peer did not finish: $(cat $T/out)"
	sleep 0.2
	dp_send start
	wait_until 10 hd_window_open || fail "no window: $(cat $T/out)"
	dp_send stop
	wait_until 10 grep -q "window 1: host data:" $T/out || fail "no host data line: $(cat $T/out)"
	d=$(ls -d $T/o/PROF_*)
	fd=$(sed -n 's/.*syscaller: ready pid=[0-9]* fd=\([0-9]*\).*/\1/p' $T/out)
	got=$(grep -Ec " read\(arg0: $fd\) = 1\$" $d/host/data/host_syscall.data.slice_0)
	within_1pct $got $((2 * n)) || fail "$got of the burst's $((2 * n)) reads in the window"
	dp_send quit
	kill -TERM "$(sed -n 's/.*application env started: pid \([0-9]*\).*/\1/p' $T/out)"
	wait $DP_PID
}

test_host_sys_before_bad_values_refused() {
	local v
	for v in 0 -1 2x 61s 1.5s ""; do
		dp --pid=1 --host-sys=osrt --host-sys-before="$v"
		expect_status 255 $?
		expect_line "^\[ERROR\] Argument --host-sys-before: invalid value"
		[ "$(wc -l < $T/out)" = 1 ] || fail "not one line for '$v': $(cat $T/out)"
	done
	dp --pid=1 --host-sys-before=2s
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument --host-sys-before: it goes with --host-sys"
	dp --pid=1 --host-sys=numa --host-sys-before=2s
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument --host-sys-before: it goes with --host-sys"
}
