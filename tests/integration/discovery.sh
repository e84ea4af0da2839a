# Kernel-assisted discovery: which processes hold a card, from BPF events
# (and, with --no-bpf, from the process connector and /proc polling), shown
# by --list and --watch.

# dp_watch [args]: dynprof --list --watch --json in the background on our
# fake cards; events go to $T/watch. Waits until it runs.
dp_watch() {
	"$DP" --list --watch --json --device="$T/dev/davinci*" "$@" > $T/watch 2> $T/watch.err &
	WATCH_PID=$!
	remember_pid $WATCH_PID
	# The initial listing (a JSON array) is printed once tracking runs.
	wait_until 10 grep -q '^\[' $T/watch || fail "watch did not start: $(cat $T/watch.err)"
}

# watch_saw EVENT PID [CARDS]: a JSON line for that event and pid (and cards).
watch_line() { grep -E "\"event\":\"$1\"" $T/watch | grep -E "\"pid\":$2[,}]" | grep -qE "${3:-.}"; }
# (20 s: under load a --no-bpf scan's period stretches to ten scans, and a scan takes longer.)
watch_saw() {
	wait_until 20 watch_line "$@" || { cat $T/watch; fail "no $1 event for pid $2 ${3:-}"; }
}

list_json() { "$DP" --list --json --device="$T/dev/davinci*" "$@" > $T/list 2>&1 || fail "--list failed: $(cat $T/list)"; }
listed() { grep -qE "\"pid\":$1,\"nspid\"" $T/list; }

card_holder() { # card_holder CMD...: a shell holding card 0 on fd 3, then exec CMD
	local card; card=$(make_card 0)
	bash -c "exec 3<'$card'; exec $*" </dev/null >/dev/null 2>&1 &
	remember_pid $!
	echo $!
}

test_list_shows_process_already_holding_a_card() {
	local pid; pid=$(card_holder sleep 600)
	sleep 0.2
	list_json
	listed $pid || fail "pid $pid not listed: $(cat $T/list)"
	grep -q "\"pid\":$pid,\"nspid\":$pid,\"nspids\":\[$pid\],\"cards\":\[0\]" $T/list ||
		fail "wrong row: $(cat $T/list)"
	grep -q '"cmdline":"sleep 600"' $T/list || fail "no cmdline: $(cat $T/list)"
}

test_list_table_has_the_columns() {
	local pid; pid=$(card_holder sleep 600)
	sleep 0.2
	"$DP" --list --device="$T/dev/davinci*" > $T/out 2>&1
	expect_line "^HOST PID +NS PID +CONTAINER +USER +CARDS +SOCKET +COMMAND$"
	expect_line "^$pid +$pid +- +root +0 +none +sleep 600$"
}

test_card_user_behind_wrappers_among_decoys_is_seen_at_once() {
	local card; card=$(make_card 0)
	dp_watch
	for i in $(seq 100); do true & done
	sh -c "env bash -c 'for i in 1 2 3; do /bin/true; done; echo \$\$ > $T/user.pid; exec 3<$card; exec sleep 600'" &
	remember_pid $!
	wait_until 5 test -s $T/user.pid || fail "card user did not start"
	local pid; pid=$(cat $T/user.pid)
	remember_pid $pid
	watch_saw card-open $pid '"cards":\[0\]'
	[ "$(grep -c '"event":"card-open"' $T/watch)" -eq 1 ] || fail "decoys reported: $(cat $T/watch)"
}

test_double_fork_and_setsid_daemon_is_seen() {
	local card; card=$(make_card 0)
	dp_watch
	setsid sh -c "(sh -c 'exec 3<$card; echo \$\$ > $T/daemon.pid; exec sleep 600' &) &" &
	wait_until 5 test -s $T/daemon.pid || fail "daemon did not start"
	local pid; pid=$(cat $T/daemon.pid)
	remember_pid $pid
	watch_saw card-open $pid
}

test_open_then_exec_keeps_the_card() {
	local card; card=$(make_card 0)
	dp_watch
	bash -c "exec 3<$card; sleep 0.3; exec sleep 600" &
	local pid=$!
	remember_pid $pid
	watch_saw card-open $pid
	watch_saw exec $pid '"cards":\[0\].*"cmdline":"sleep 600"'
}

test_relative_path_and_symlink_opens_are_cards() {
	local card; card=$(make_card 0)
	ln -s "$card" $T/link
	dp_watch
	( cd $T/dev && exec bash -c 'exec 3<davinci0; exec sleep 600' ) &
	local rel=$!
	remember_pid $rel
	bash -c "exec 3<$T/link; exec sleep 600" &
	local sym=$!
	remember_pid $sym
	watch_saw card-open $rel '"cards":\[0\]'
	watch_saw card-open $sym '"cards":\[0\]'
}

test_closing_the_card_is_seen() {
	local card; card=$(make_card 0)
	dp_watch
	bash -c "exec 3<$card; sleep 0.5; exec 3<&-; exec sleep 600" &
	local pid=$!
	remember_pid $pid
	watch_saw card-open $pid
	watch_saw card-close $pid '"cards":\[\]'
}

test_exit_of_a_card_user_is_seen() {
	local pid; pid=$(card_holder sleep 600)
	dp_watch
	kill -KILL $pid
	watch_saw exit $pid
}

test_second_card_index_from_node_name() {
	local c0 c1; c0=$(make_card 0); c1=$(make_card 1)
	bash -c "exec 3<$c0 4<$c1; exec sleep 600" &
	local pid=$!
	remember_pid $pid
	sleep 0.2
	list_json
	grep -q "\"pid\":$pid,.*\"cards\":\[0,1\]" $T/list || fail "cards not [0,1]: $(cat $T/list)"
}

test_socket_state_listening_then_busy() {
	local pid; pid=$(start_target)
	wait_until 3 eval 'list_json; grep -q "\"pid\":$pid,.*\"socket_state\":\"listening\"" $T/list' ||
		fail "socket not listening: $(cat $T/list)"
	grep -q "\"socket\":\"$(socket_of $pid)\"" $T/list || fail "socket path: $(cat $T/list)"
	dp_background --pid=$pid --output=$T/o
	sleep 0.5
	list_json
	grep -q "\"pid\":$pid,.*\"socket_state\":\"busy\"" $T/list || fail "socket not busy: $(cat $T/list)"
}

test_no_bpf_mode_gives_the_same_answers() {
	local card; card=$(make_card 0)
	dp_watch --no-bpf
	grep -q "polling /proc" $T/watch.err || fail "no polling note: $(cat $T/watch.err)"
	bash -c "exec 3<$card; exec sleep 600" &
	local pid=$!
	remember_pid $pid
	watch_saw card-open $pid '"cards":\[0\]'
	kill -KILL $pid
	watch_saw exit $pid
}

# execs_of PID PATTERN: exec lines of PID whose line matches PATTERN.
execs_of() { grep -E '"event":"exec"' $T/watch | grep -E "\"pid\":$1[,}]" | grep -cE "$2"; }

test_no_bpf_mode_takes_execs_from_the_process_connector() {
	local card; card=$(make_card 0)
	dp_watch --no-bpf
	grep -q "process events from the netlink process connector" $T/watch.err ||
		fail "connector not used: $(cat $T/watch.err)"
	# A card holder that execs itself again with the same argv: polling
	# cannot tell that exec from no change, the connector reports it. (The
	# pause keeps the two execs apart, so each is read on its own.)
	mkfifo $T/fifo
	cat > $T/reexec.sh <<-EOF
	[ -e $T/reexeced ] || { : > $T/reexeced; sleep 0.3; exec bash $T/reexec.sh; }
	read -r _ <> $T/fifo
	EOF
	bash -c "exec 3<$card; exec bash $T/reexec.sh" </dev/null >/dev/null 2>&1 &
	local pid=$!
	remember_pid $pid
	wait_until 5 eval '[ "$(execs_of $pid "\"cards\":\[0\].*reexec\.sh\"")" -ge 2 ]' ||
		{ cat $T/watch; fail "the second exec of pid $pid was not reported"; }
}

# Polling alone (no BPF; in a new network namespace the process connector
# refuses us): the watcher is stopped while the card user dies and its pid
# goes to a process without a card, so its next scan finds the same pid
# with another start time. That is the old process's exit, not a change of it.
test_pid_reuse_is_not_taken_for_the_old_process() {
	local card; card=$(make_card 0)
	unshare -n "$DP" --list --watch --json --no-bpf --device="$T/dev/davinci*" > $T/watch 2> $T/watch.err &
	local w=$!
	remember_pid $w
	wait_until 10 grep -q '^\[' $T/watch || fail "watch did not start: $(cat $T/watch.err)"
	grep -q "no process connector" $T/watch.err || fail "not polling alone: $(cat $T/watch.err)"
	# A direct child, so that it can be reaped and its pid freed.
	bash -c "exec 3<$card; exec sleep 600" </dev/null >/dev/null 2>&1 &
	local old=$!
	remember_pid $old
	watch_saw card-open $old
	kill -STOP $w
	kill -KILL $old
	wait $old 2>/dev/null
	# Hand the same pid to a process without a card (retry: other forks race us).
	local new="" try
	for try in $(seq 200); do
		echo $((old - 1)) > /proc/sys/kernel/ns_last_pid
		sleep 600 </dev/null >/dev/null 2>&1 &
		remember_pid $!
		[ $! -eq $old ] && { new=$!; break; }
		kill -KILL $!
	done
	kill -CONT $w
	[ -n "$new" ] || fail "could not reuse pid $old"
	watch_saw exit $old
	! watch_line card-close $old || { cat $T/watch; fail "the new process at pid $old was taken for the old one"; }
}

# Seen at all: by its card-open event, or by a rescan (which reports it as exec).
listed_by_watch() { grep -E "\"pid\":$1[,}]" $T/watch | grep -q '"cards":\[0\]'; }

# Every event of the card user is lost: the watcher is stopped while a fork
# storm fills its 4 KiB ring buffer, then the card user forks, opens the card
# and execs, with no room left for any of it (the consumer cannot drain a
# byte). Only the rescan that the grown loss count asks for can find it.
test_lost_events_are_counted_and_rescanned() {
	local card; card=$(make_card 0)
	"$B/tests/dynprof-tinyring" --list --watch --json --device="$T/dev/davinci*" > $T/watch 2> $T/watch.err &
	local w=$!
	remember_pid $w
	wait_until 10 grep -q '^\[' $T/watch || fail "watch did not start"
	kill -STOP $w
	local i storm=(); for i in $(seq 300); do /bin/true & storm+=($!); done
	wait "${storm[@]}"
	bash -c "exec 3<$card; exec sleep 600" </dev/null >/dev/null 2>&1 &
	local pid=$!
	remember_pid $pid
	wait_until 5 eval '[ "$(cat /proc/$pid/comm)" = sleep ]' || { kill -CONT $w; fail "card user did not start"; }
	kill -CONT $w
	wait_until 5 eval 'grep -E "\"pid\":$pid[,}]" $T/watch | grep -q "\"cards\":\[0\]"' ||
		{ cat $T/watch.err; fail "card user whose every event was lost not found by a rescan"; }
	kill -TERM $w; wait $w
	grep -Eq "^dynprof: [1-9][0-9]* kernel events lost, answered by [1-9][0-9]* rescans" $T/watch.err ||
		fail "no loss accounting: $(cat $T/watch.err)"
}

test_full_kernel_card_filter_is_said_once() {
	# The kernel's map keeps nodes that are gone: with 256 nodes registered,
	# a node made in place of a removed one finds no room. Numbers of no
	# driver (major 4000): the nodes are only stat()ed, never opened.
	mkdir -p $T/many
	for i in $(seq 0 255); do mknod $T/many/davinci$i c 4000 $i; done
	"$DP" --list --watch --json --device="$T/many/davinci*" > $T/watch 2> $T/watch.err &
	remember_pid $!
	wait_until 10 grep -q '^\[' $T/watch || fail "watch did not start: $(cat $T/watch.err)"
	local said="^\[WARNING\] the kernel's card filter is full \(256 card nodes\): it does not report opens of 1 other card node$"
	rm $T/many/davinci0 && mknod $T/many/davinci256 c 4000 256
	wait_until 5 grep -Eq "$said" $T/watch || fail "not said: $(cat $T/watch $T/watch.err)"
	rm $T/many/davinci1 && mknod $T/many/davinci257 c 4000 257
	sleep 2.5 # two looks for new nodes
	[ "$(grep -c "card filter is full" $T/watch)" -eq 1 ] || fail "said again: $(cat $T/watch)"
}

# A node in /dev that a default pattern (/dev/davinci*) takes, with a free
# high index (cards are indexes 0..63); removed at cleanup. Echoes its path.
make_default_card() {
	local i numbers; numbers=$(card_numbers 1) || exit 1
	for i in $(seq 63 -1 40); do
		[ -e /dev/davinci$i ] && continue
		# Another run may take the same free name at the same moment: try the next.
		mknod /dev/davinci$i c $numbers 2>/dev/null || continue
		remember_file /dev/davinci$i
		echo /dev/davinci$i
		return
	done
	fail "no free /dev/davinci40..63"
}

holder_of() { # holder_of NODE: a sleeper holding NODE on fd 3; echoes its pid
	bash -c "exec 3<'$1'; exec sleep 600" </dev/null >/dev/null 2>&1 &
	remember_pid $!
	echo $!
}

# --device replaces the defaults: a holder of a node that only a default
# pattern takes is not listed with it, one that only --device takes is.
test_device_option_replaces_default_patterns() {
	local ours dflt; ours=$(holder_of "$(make_card 0)"); dflt=$(holder_of "$(make_default_card)")
	wait_until 5 eval '[ "$(cat /proc/$ours/comm)$(cat /proc/$dflt/comm)" = sleepsleep ]' || fail "holders did not start"
	"$DP" --list --json > $T/list 2>&1 || fail "--list failed: $(cat $T/list)"
	listed $dflt || fail "the default patterns do not take $dflt's node: $(cat $T/list)"
	! listed $ours || fail "$ours listed without --device: $(cat $T/list)"
	list_json
	listed $ours || fail "--device=$T/dev/davinci* did not take $ours's node: $(cat $T/list)"
	! listed $dflt || fail "$dflt listed: --device was added to the defaults: $(cat $T/list)"
}

test_failed_rescan_after_lost_events_is_told_once_and_tracking_goes_on() {
	# No card node yet: the glob every second finds none, so only rescans after losses fail.
	"$B/tests/dynprof-tinyring" --list --watch --json --device="$T/dev/davinci*" > $T/watch 2> $T/watch.err &
	local w=$!
	remember_pid $w
	wait_until 10 grep -q '^\[' $T/watch || fail "watch did not start"
	# No fd below its lowest free one: a rescan cannot open /proc (EMFILE).
	# An fd on /proc is a look of the moment (every exec on the host, another
	# suite's too, has it read /proc), closed when the look ends: it counts as
	# free, else the limit is set above it and its fds are free again to a rescan.
	local free=0
	while [ -e /proc/$w/fd/$free ] && ! [[ $(readlink /proc/$w/fd/$free) =~ ^/proc(/|$) ]]; do
		free=$((free + 1))
	done
	prlimit --pid $w --nofile=$free: || fail "prlimit failed" # the soft limit: root here may not raise a hard one
	local line="^dynprof: cannot rescan /proc after lost events: Too many open files; trying again$"
	for i in $(seq 400); do /bin/true & done
	wait_until 5 grep -q "$line" $T/watch.err || fail "failed rescan not told: $(cat $T/watch.err)"
	for i in $(seq 400); do /bin/true & done
	sleep 1
	[ "$(grep -c "$line" $T/watch.err)" -eq 1 ] || fail "told more than once: $(cat $T/watch.err)"
	prlimit --pid $w --nofile=1024: || fail "prlimit failed"
	local card; card=$(make_card 0)
	bash -c "exec 3<$card; exec sleep 600" &
	local pid=$!
	remember_pid $pid
	wait_until 5 listed_by_watch $pid || fail "card user missed after the rescans worked again: $(cat $T/watch.err)"
	kill -TERM $w; wait $w
	[ "$(grep -c "$line" $T/watch.err)" -eq 1 ] || fail "told more than once: $(cat $T/watch.err)"
}

# A worker pool made by fork (Python multiprocessing's default): the
# children hold the parent's card without a socket; --list and --pid=auto
# say why.
test_forked_worker_pool_without_sockets_is_explained() {
	local card; card=$(make_card 2)
	cat > $T/pool.py <<-EOS
	import multiprocessing, os, sys, time
	fd = os.open("$card", os.O_RDONLY)
	def work(n):
	    time.sleep(n)
	if __name__ == "__main__":
	    with multiprocessing.get_context("fork").Pool(2) as p:
	        print("pool", flush=True)
	        p.map(work, [30, 30])
	EOS
	# No agent: like a CANN process whose children were forked after it set up.
	python3 $T/pool.py > $T/pool.log 2>&1 &
	local parent=$!
	remember_pid $parent
	wait_until 10 grep -q pool $T/pool.log || fail "no pool: $(cat $T/pool.log)"
	local kids; kids=$(cat /proc/$parent/task/*/children)
	for k in $kids; do remember_pid $k; done
	[ "$(echo $kids | wc -w)" -ge 2 ] || fail "no workers: $kids"
	"$DP" --list --device="$T/dev/davinci2" > $T/out 2>&1
	for k in $kids; do
		expect_line "^dynprof: pid $k holds a card but serves no socket: a fork of pid $parent without exec \(a worker pool's child"
	done
	dp --pid=auto --device="$T/dev/davinci2" --output=$T/o < /dev/null
	expect_status 255 $?
	for k in $kids; do
		expect_line "^\[INFO\] pid $k holds a card but serves no socket: a fork of pid $parent without exec"
	done
	expect_line "^\[INFO\] pid $parent holds a card but serves no socket: started without PROFILING_MODE=dynamic"
}

# --watch's text lines name a host process's socket by its plain path, its
# exit line too (the process is gone then: not through /proc/PID/root).
test_watch_text_names_the_socket_the_same_way_at_exit() {
	"$DP" --list --watch --device="$T/dev/davinci*" > $T/watch 2> $T/watch.err &
	local w=$! pid
	remember_pid $w
	wait_until 10 test -s $T/watch || wait_until 10 grep -q . $T/watch.err
	pid=$(start_target)
	wait_until 10 grep -q "pid $pid .*socket $ROOT_HOME/dynamic_profiling_socket_$pid" $T/watch ||
		fail "no line with the plain path: $(cat $T/watch)"
	kill -TERM $pid
	wait_until 20 grep -q "^exit .*pid $pid " $T/watch || fail "no exit line: $(cat $T/watch)"
	grep "^exit .*pid $pid " $T/watch | grep -q "/proc/$pid/root" && fail "the exit line names /proc: $(grep "pid $pid " $T/watch)"
	kill $w
	return 0
}

# A card user that closes its last card and exits later still gets its exit
# line (before: the exit of a process holding no card was left out, so a
# close read apart from the exit lost the exit line; CI saw it under load).
test_watch_shows_the_exit_of_one_that_closed_its_cards() {
	local card; card=$(make_card 0)
	"$DP" --list --watch --device="$T/dev/davinci*" > $T/watch 2> $T/watch.err &
	local w=$! pid
	remember_pid $w
	wait_until 10 test -s $T/watch || wait_until 10 grep -q . $T/watch.err
	mkfifo $T/go1 $T/go2
	sh -c "exec 3< $card; read x < $T/go1; exec 3<&-; read x < $T/go2" &
	pid=$!
	remember_pid $pid
	wait_until 10 grep -q "^card-open .*pid $pid " $T/watch || fail "no card-open line: $(cat $T/watch)"
	echo > $T/go1
	wait_until 10 grep -q "^card-close .*pid $pid " $T/watch || fail "no card-close line: $(cat $T/watch)"
	echo > $T/go2
	wait_until 10 grep -q "^exit .*pid $pid " $T/watch || fail "no exit line: $(cat $T/watch)"
	kill $w
	return 0
}
