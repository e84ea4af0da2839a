# A server held by another client, wherever that client runs. The kernel
# makes a Unix server's accepted socket in the network namespace of the
# client that connected: a target in a netns of its own (a container's,
# the default of every engine) has its listener there, and the connection
# a host client or another namespace's client made only in that client's
# netns. dynprof must read such a server as busy, never connect to it
# (the agent's log then shows one client only), and join it in follow
# mode once the holder leaves.

WIRE=$B/tests/peers/wire_client
# Card 2 (other runs of the suite hold card 0) and a program of the test's
# own, which --exe takes alone: other runs' card users are not in the way.
job_exe() { mkdir -p $T/bin; [ -x $T/bin/netns_job ] || cp "$CARD_USER" $T/bin/netns_job; echo $T/bin/netns_job; }

# start_logged_target [host]: a card user in a network namespace of its
# own (unshare -n execs it: its pid is unshare's; with `host`, in the
# host's), its socket file in root's home either way. Echoes its pid once
# it listens; its agent's log is $T/agent.<pid>.log.
start_logged_target() {
	local card exe log=$T/agent.$RANDOM.log pre=(unshare -n); card=$(make_card 2); exe=$(job_exe)
	[ "${1:-}" = host ] && pre=()
	"${pre[@]}" env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		DYNPROF_AGENT_LOG=1 "$exe" "$card" 600 > $log 2>&1 &
	local pid=$!
	remember_pid $pid
	wait_until 5 eval 'has_socket $pid && grep -q "listening on" $log' || fail "target $pid never listened: $(cat $log)"
	mv $log $T/agent.$pid.log
	echo $pid
}

# hold PID WHERE: a raw client holding PID's server (a Params answered, then
# it stays), run on the host, in the target's netns (same) or in a netns
# of its own (other); HOLD_AT: the socket's path, if not root's home. Sets
# HOLDER; returns once the server serves it.
hold() {
	local pid=$1 where=$2 pre=()
	case $where in
	host) ;;
	same) pre=(nsenter --net=/proc/$pid/ns/net) ;;
	other) pre=(unshare -n) ;;
	*) fail "hold: where? $where" ;;
	esac
	"${pre[@]}" "$WIRE" --connect="${HOLD_AT:-$(socket_of $pid)}" \
		"params {\"result_dir\":\"$T/o\"}" 'expect 0,0' 'sleep 600' > $T/holder.out 2>&1 &
	HOLDER=$!
	remember_pid $HOLDER
	wait_until 5 grep -q '^reply 0,0' $T/holder.out || fail "the holder was not served: $(cat $T/holder.out)"
}

clients_of() { grep -c "client connected" $T/agent.$1.log; }
list_json() { "$DP" --list --json --device="$T/dev/davinci*" > $T/list; }
state_of() { grep -o "{\"pid\":$1,[^}]*}" $T/list | grep -o '"socket_state":[^,}]*'; }

# The target in its own netns, the holder WHERE: busy in --list, --pid=auto
# takes nothing and connects to nothing.
busy_and_untouched() { # busy_and_untouched WHERE
	local pid; pid=$(start_logged_target)
	list_json
	[ "$(state_of $pid)" = '"socket_state":"listening"' ] || fail "before the holder: $(state_of $pid)"
	hold $pid $1
	list_json
	[ "$(state_of $pid)" = '"socket_state":"busy"' ] || fail "held from $1: $(state_of $pid)"
	"$DP" --list --device="$T/dev/davinci*" > $T/out
	expect_line "^$pid .* busy( |$)"
	dp --pid=auto --exe="$T/bin/*" --device="$T/dev/davinci*" --output=$T/o < /dev/null
	expect_status 255 $?
	expect_line "no card-using process with a listening dynamic profiling socket" || fail "$(cat $T/agent.$pid.log)"
	# A connection dynprof made would wait in the backlog: served once the holder goes.
	kill $HOLDER
	wait_until 5 grep -q "client done\|client closed" $T/agent.$pid.log || fail "holder not gone: $(cat $T/agent.$pid.log)"
	sleep 1.2
	[ "$(clients_of $pid)" = 1 ] || fail "another client connected: $(cat $T/agent.$pid.log)"
	list_json
	[ "$(state_of $pid)" = '"socket_state":"listening"' ] || fail "after the holder: $(state_of $pid)"
}

test_held_from_the_host_reads_busy() { busy_and_untouched host; }
test_held_from_the_same_netns_reads_busy() { busy_and_untouched same; }
test_held_from_another_netns_reads_busy() { busy_and_untouched other; }

# A host target held from another netns: its connection is there, not on the host.
test_host_target_held_from_another_netns_reads_busy() {
	local pid; pid=$(start_logged_target host)
	hold $pid other
	list_json
	[ "$(state_of $pid)" = '"socket_state":"busy"' ] || fail "held from another netns: $(state_of $pid)"
	dp --pid=auto --exe="$T/bin/*" --device="$T/dev/davinci*" --output=$T/o < /dev/null
	expect_status 255 $?
	[ "$(clients_of $pid)" = 1 ] || fail "another client connected: $(cat $T/agent.$pid.log)"
}

# Follow mode: a held job is not joined while held, and joins once free.
follow_joins_when_free() { # follow_joins_when_free WHERE
	local pid; pid=$(start_logged_target)
	hold $pid $1
	dp_background --pid=auto --follow --exe="$T/bin/*" --output=$T/o --device="$T/dev/davinci*"
	wait_until 10 grep -q '^\[INFO\] following card users' $T/out || { cat $T/out; fail "follow mode did not start"; }
	sleep 1
	! grep -q "target joined: pid $pid " $T/out || { cat $T/out; fail "joined while held"; }
	expect_no_line "cannot join"
	[ "$(clients_of $pid)" = 1 ] || fail "another client connected: $(cat $T/agent.$pid.log)"
	kill $HOLDER
	wait_until 10 grep -q "^\[INFO\] target joined: pid $pid " $T/out || { cat $T/out; fail "not joined once free"; }
	dp_send start
	wait_until 10 grep -q "^dynamic profiling for pid $pid start success$" $T/out || { cat $T/out; fail "no start"; }
	dp_send quit
	wait $DP_PID
	expect_status 0 $?
}

test_follow_joins_a_job_held_from_the_host_once_free() { follow_joins_when_free host; }
test_follow_joins_a_job_held_from_another_netns_once_free() { follow_joins_when_free other; }

# start_container_job NAME: a job as an engine runs it: its own pid, mount
# and network namespaces, a home only inside, in cgroup NAME (the name
# --container takes, as for runc). Echoes its host pid; its agent's log is
# $T/agent.<pid>.log, its socket /proc/<pid>/root/home/inside-only/...
start_container_job() {
	local card cg unshare hostpid=""; card=$(make_card 2); cg=$(make_cgroup $1)
	mkdir -p $T/ctr/etc
	echo "root:x:0:0:root:/home/inside-only:/bin/sh" > $T/ctr/etc/passwd
	cat > $T/ctr/run.sh <<-EOS
		echo 0 > $cg/cgroup.procs || exit 1
		mkdir -p /home/inside-only && $(etc_over $T/ctr/etc) || exit 1
		exec 3<$card
		export PROFILING_MODE=dynamic LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*' DYNPROF_AGENT_LOG=1
		exec $CARD_USER - 600
	EOS
	unshare --pid --fork --mount --mount-proc --net sh -c "mount -t tmpfs tmpfs /home && exec sh $T/ctr/run.sh" \
		> $T/ctr.log 2>&1 &
	unshare=$!
	remember_pid $unshare
	wait_until 5 eval 'read -r hostpid _ < /proc/$unshare/task/$unshare/children; [ -n "$hostpid" ] &&
		grep -q "^$CARD_USER" /proc/$hostpid/cmdline' || fail "container job did not start: $(cat $T/ctr.log)"
	remember_pid $hostpid
	wait_until 5 test -S /proc/$hostpid/root/home/inside-only/dynamic_profiling_socket_1 ||
		fail "container job has no socket: $(cat $T/ctr.log)"
	ln -s ctr.log $T/agent.$hostpid.log
	echo $hostpid
}

# The issue's case: --pid=auto --container=X must not connect to a
# container's server that the host or another container holds.
container_held() { # container_held WHERE
	local name=netjob$RANDOM pid; pid=$(start_container_job $name)
	HOLD_AT=/proc/$pid/root/home/inside-only/dynamic_profiling_socket_1 hold $pid $1
	list_json
	[ "$(state_of $pid)" = '"socket_state":"busy"' ] || fail "held from $1: $(state_of $pid)"
	dp --pid=auto --container=$name --device="$T/dev/davinci*" --output=$T/o < /dev/null
	expect_status 255 $?
	expect_no_line "another client"
	[ "$(clients_of $pid)" = 1 ] || fail "another client connected: $(cat $T/ctr.log)"
	kill $HOLDER
	wait_until 5 grep -q "client done" $T/ctr.log || fail "holder not gone: $(cat $T/ctr.log)"
	printf 'start\nstop\n' | dp --pid=auto --container=$name --device="$T/dev/davinci*" --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid stop success$"
}

test_container_held_from_the_host_is_not_taken_by_pid_auto() { container_held host; }
test_container_held_from_another_container_is_not_taken_by_pid_auto() { container_held other; }
