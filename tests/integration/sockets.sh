# The three socket flavours and the state of a socket, against agents that
# behave as CANN's servers: the abstract \0dyn_prof_sock_<key> of CANN 8.5.0
# (also in its own network namespace), a socket file taken over by another
# process with the same key (refused without connecting: a connection that
# is not used ends a CANN server's accept loop for good), and the accepted
# connections CANN never closes (stale, not busy).

# abstract_listens PID [NAME]: PID holds a listening abstract socket named
# @NAME (any @dyn_prof_sock_<digits> without NAME).
abstract_listens() {
	local ino
	for ino in $(awk -v want="@${2:-}" '$4 == "00010000" && $6 == "01" &&
		(want != "@" ? $8 == want : $8 ~ /^@dyn_prof_sock_[0-9]+$/) { print $7 }' /proc/$1/net/unix); do
		ls -l /proc/$1/fd 2>/dev/null | grep -q "socket:\[$ino\]" && return 0
	done
	return 1
}

# start_abstract_target [VAR=value...]: a card user whose agent listens on
# the abstract name as CANN 8.5.0 does. Echoes its pid once it listens.
start_abstract_target() {
	local card log=$T/abstract.$RANDOM.log; card=$(make_card ${TARGET_CARD:-0})
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		DYNPROF_AGENT_FLAVOUR=abstract DYNPROF_AGENT_LOG=1 \
		"$@" "$CARD_USER" "$card" 600 > $log 2>&1 &
	local pid=$!
	remember_pid $pid
	# Its own log: the netns may hold another target's name already.
	wait_until 5 grep -q "listening on @dyn_prof_sock_" $log || fail "target $pid never listened on an abstract name"
	card_held $pid "$card" "$@"
	echo $pid
}

# start_netns_target: the same, in a network namespace of its own
# (unshare -n execs the target: its pid is unshare's).
start_netns_target() {
	local card; card=$(make_card 0)
	unshare -n env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		DYNPROF_AGENT_FLAVOUR=abstract DYNPROF_AGENT_LOG=1 \
		"$CARD_USER" "$card" 600 > "$T/netns.log" 2>&1 &
	local pid=$!
	remember_pid $pid
	wait_until 5 grep -q "listening on @dyn_prof_sock_" $T/netns.log || fail "netns target never listened: $(cat $T/netns.log)"
	echo $pid
}

list_json() { "$DP" --list --json --device="$T/dev/davinci*" > $T/list; }
row_of() { grep -o "{\"pid\":$1,[^}]*}" $T/list; }

test_abstract_socket_is_listed_with_its_flavour() {
	local pid; pid=$(start_abstract_target)
	[ ! -e "$ROOT_HOME/dyn_prof_sock_$pid" ] && [ ! -e "$(socket_of $pid)" ] || fail "a socket file exists"
	wait_until 5 eval 'list_json; row_of $pid | grep -q "\"socket_state\":\"listening\""' ||
		fail "not listening: $(cat $T/list)"
	row_of $pid | grep -q "\"socket\":\"@dyn_prof_sock_$pid\",\"socket_state\":\"listening\",\"socket_flavour\":\"abstract\"" ||
		fail "row: $(row_of $pid)"
	"$DP" --list --device="$T/dev/davinci*" > $T/out
	expect_line "^$pid +$pid +- +root +0 +@dyn_prof_sock_$pid "
}

test_abstract_socket_is_driven_by_pid() {
	local pid; pid=$(start_abstract_target)
	printf 'start\nstop\nquit\n' | dp --pid=$pid --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid start success$"
	expect_line "^dynamic profiling for pid $pid stop success$"
	expect_line "^dynamic profiling for pid $pid quit success$"
	[ -s "$(prof_dirs_of $T/o $pid)/host/end_info" ] || fail "no completed PROF_ folder: $(ls $T/o)"
}

test_abstract_socket_with_a_key_is_found_by_the_name_it_lists() {
	# msprof's launch mode keys the name on msprof's pid, not the target's.
	local key=$(own_key 1) pid
	pid=$(start_abstract_target DYNAMIC_PROFILING_KEY_PID=$key)
	abstract_listens $pid dyn_prof_sock_$key || fail "not on the key's name: $(grep dyn_prof /proc/$pid/net/unix)"
	printf 'start\nstop\n' | dp --pid=$pid --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid stop success$"
}

test_abstract_first_process_keeps_the_key() {
	local key=$(own_key 2) a b
	a=$(start_abstract_target DYNAMIC_PROFILING_KEY_PID=$key)
	b=$(start_abstract_target DYNAMIC_PROFILING_KEY_PID=$key)
	abstract_listens $a dyn_prof_sock_$key || fail "the first lost the key"
	abstract_listens $b dyn_prof_sock_$b || fail "the second did not fall back to its pid"
	printf 'start\nstop\n' | dp --pid=$a,$b --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $a stop success$"
	expect_line "^dynamic profiling for pid $b stop success$"
}

test_abstract_socket_is_taken_by_pid_auto() {
	local a f; export TARGET_CARD=2
	a=$(start_abstract_target)
	f=$(start_target)
	printf 'start\nstop\n' | timeout 30 "$DP" --pid=auto --device="$T/dev/davinci2" --output=$T/o > $T/out 2>&1
	expect_status 0 $?
	expect_line "^\[INFO\] targets: ($a,$f|$f,$a)$"
	expect_line "^dynamic profiling for pid $a stop success$"
	expect_line "^dynamic profiling for pid $f stop success$"
}

test_abstract_socket_in_its_own_network_namespace_is_reached_from_the_host() {
	local pid; pid=$(start_netns_target)
	! grep -q "@dyn_prof_sock_$pid\$" /proc/self/net/unix || fail "the name is visible in the host's netns"
	[ "$(readlink /proc/$pid/ns/net)" != "$(readlink /proc/self/ns/net)" ] || fail "same netns"
	list_json
	row_of $pid | grep -q "\"socket\":\"@dyn_prof_sock_$pid\",\"socket_state\":\"listening\",\"socket_flavour\":\"abstract\"" ||
		fail "row: $(cat $T/list)"
	printf 'start\nstop\nquit\n' | dp --pid=$pid --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid stop success$"
	[ -s "$(prof_dirs_of $T/o $pid)/host/end_info" ] || fail "no completed PROF_ folder: $(ls $T/o)"
	# The finished connection the server keeps is stale: listening again.
	list_json
	row_of $pid | grep -q "\"socket_state\":\"listening\"" || fail "after the session: $(row_of $pid)"
}

test_launch_mode_joins_abstract_servers_keyed_on_dynprof() {
	# --msprof-key: the key is dynprof's pid, as msprof's; the second
	# server finds the name taken and falls back to its own pid.
	local card; card=$(make_card 0)
	cat > $T/app.sh <<-EOS
	#!/bin/sh
	export DYNPROF_AGENT_FLAVOUR=abstract LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*'
	$CARD_USER $card 60 &
	for i in \$(seq 200); do grep -aq "@dyn_prof_sock_\$DYNAMIC_PROFILING_KEY_PID\$" /proc/net/unix && break; sleep 0.05; done
	$CARD_USER $card 60 &
	wait
	EOS
	chmod +x $T/app.sh
	# Each step waits for what the one before did (under two suites with ASan
	# a fixed 1.5 s before start was too short for the second to join).
	dp_background --dynamic=on --msprof-key --output=$T/o --device="$T/dev/davinci*" $T/app.sh
	wait_until 30 eval '[ "$(count_lines "^\[INFO\] target joined: pid [0-9]+ \(.*card_user.*\), cards 0$")" -eq 2 ]' ||
		fail "expected two targets: $(cat $T/out)"
	dp_send start
	wait_until 20 eval '[ "$(count_lines "start success")" -eq 2 ]' || fail "expected two starts: $(cat $T/out)"
	dp_send stop
	wait_until 20 eval '[ "$(count_lines "stop success")" -eq 2 ]' || fail "expected two stops: $(cat $T/out)"
	# The application ends (its card users are the test's: the card is $T's), and launch mode with it.
	pkill -f -- "$CARD_USER $card 60"
	wait $DP_PID
	expect_status 0 $?
}

# Two file servers with the same key: the second took the path over.
start_same_key_pair() {
	local key=$(own_key 3) card v; card=$(make_card 0)
	remember_file "$ROOT_HOME/dynamic_profiling_socket_$key"
	for v in first second; do
		env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
			DYNPROF_AGENT_LOG=1 DYNAMIC_PROFILING_KEY_PID=$key "$CARD_USER" "$card" 600 > $T/$v.log 2>&1 &
		remember_pid $!
		echo $! > $T/$v.pid
		wait_until 5 grep -q "listening on" $T/$v.log || fail "$v never listened"
	done
}

test_taken_over_socket_is_refused_without_connecting() {
	start_same_key_pair
	local a b; a=$(cat $T/first.pid); b=$(cat $T/second.pid)
	printf 'start\n' | dp --pid=$a --output=$T/o
	expect_status 255 $?
	expect_line "^\[ERROR\] dynprof: refusing pid $a: socket .*dynamic_profiling_socket_[0-9]+ is served by pid $b \(card_user, uid 0\), not by pid $a; nothing was sent$"
	# The owner was not even connected to: its accept loop is intact.
	! grep -q "client connected" $T/second.log || fail "dynprof connected to the owner: $(cat $T/second.log)"
	printf 'start\nstop\n' | dp --pid=$b --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $b stop success$"
	# The refused one still runs its accept loop (on a path it lost).
	! grep -qE "accept loop ended|no longer listening" $T/first.log || fail "first: $(cat $T/first.log)"
	grep -qE " 00010000 0001 01 [0-9]+ /.*dynamic_profiling_socket_" /proc/$a/net/unix || fail "first stopped listening"
	list_json
	row_of $a | grep -q '"socket":null,"socket_state":null' || fail "the taken-over one listed as reachable: $(row_of $a)"
	row_of $b | grep -q '"socket_state":"listening"' || fail "the owner: $(row_of $b)"
}

test_agent_ends_its_accept_loop_on_an_empty_connection_as_cann() {
	# What dynprof must never do: connect and close without sending.
	local pid; pid=$(start_target DYNPROF_AGENT_LOG=1)
	timeout 5 "$B/tests/peers/sock_client" connect-close "$(socket_of $pid)" > $T/caller.out 2>&1 ||
		fail "connect-close: $(cat $T/caller.out)"
	wait_until 5 eval '[ ! -e "$(socket_of $pid)" ]' || fail "the socket file is still there"
	grep -q "accept loop ended for good" $T/target.*.log || fail "log: $(cat $T/target.*.log)"
	dp --pid=$pid --output=$T/o < /dev/null
	expect_status 255 $?
}

test_abstract_agent_ends_its_accept_thread_but_keeps_the_name() {
	local pid; pid=$(start_abstract_target)
	timeout 5 "$B/tests/peers/sock_client" connect-close "@dyn_prof_sock_$pid" > $T/caller.out 2>&1 ||
		fail "connect-close: $(cat $T/caller.out)"
	wait_until 5 grep -q "accept loop ended for good, name left bound" $T/abstract.*.log ||
		fail "log: $(cat $T/abstract.*.log)"
	abstract_listens $pid || fail "the name went away"
}

test_finished_session_leaves_the_socket_listening() {
	# CANN 9.x keeps a finished client's connection open: stale, not busy.
	local pid; pid=$(start_target)
	printf 'start\nstop\nquit\n' | dp --pid=$pid --output=$T/o
	expect_status 0 $?
	grep -qE " 03 [0-9]+ $(socket_of $pid)\$" /proc/$pid/net/unix || fail "the server closed its end (not as CANN)"
	list_json
	row_of $pid | grep -q '"socket_state":"listening"' || fail "after a session: $(row_of $pid)"
	# --pid=auto takes it again, and a live client still reads as busy.
	printf 'start\nstop\n' | timeout 30 "$DP" --pid=auto --device="$T/dev/davinci*" --output=$T/o > $T/out 2>&1
	expect_status 0 $?
	expect_line "^\[INFO\] targets: (.*,)?$pid(,.*)?$"
	expect_line "^dynamic profiling for pid $pid stop success$"
	dp_background --pid=$pid --output=$T/o2
	wait_until 3 grep -q 'Start profiling' $T/out || fail "client did not connect"
	sleep 0.3
	list_json
	row_of $pid | grep -q '"socket_state":"busy"' || fail "with a live client: $(row_of $pid)"
}

test_refusal_after_connecting_leaves_the_owner_serving() {
	# The target listens from its own network namespace; a host process
	# with its key took the path over. sock_diag in the target's netns
	# cannot see the owner, so only SO_PEERCRED after connecting tells:
	# dynprof must then leave as CANN survives it (an empty Params), never
	# just close (which would end the owner's accept loop for good).
	local key=$(own_key 4) card a b; card=$(make_card 0)
	remember_file "$ROOT_HOME/dynamic_profiling_socket_$key"
	unshare -n env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		DYNPROF_AGENT_LOG=1 DYNAMIC_PROFILING_KEY_PID=$key "$CARD_USER" "$card" 600 > $T/first.log 2>&1 &
	a=$!
	remember_pid $a
	wait_until 5 grep -q "listening on" $T/first.log || fail "first never listened: $(cat $T/first.log)"
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		DYNPROF_AGENT_LOG=1 DYNAMIC_PROFILING_KEY_PID=$key "$CARD_USER" "$card" 600 > $T/second.log 2>&1 &
	b=$!
	remember_pid $b
	wait_until 5 grep -q "listening on" $T/second.log || fail "second never listened"
	printf 'start\n' | dp --pid=$a --output=$T/o
	expect_status 255 $?
	expect_line "^\[ERROR\] dynprof: refusing pid $a: socket .*dynamic_profiling_socket_$key is served by pid $b \(card_user, uid 0\), not by pid $a; nothing was sent$"
	wait_until 3 grep -q "params: dataLen 2$" $T/second.log || fail "the owner was not left with an empty Params: $(cat $T/second.log)"
	! grep -q "accept loop ended" $T/second.log || fail "the owner's accept loop ended: $(cat $T/second.log)"
	! grep -q "window open" $T/second.log || fail "the owner opened a window"
	printf 'start\nstop\n' | dp --pid=$b --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $b stop success$"
}

test_abstract_socket_in_a_container_with_its_own_network_is_driven() {
	# pid, mount and network namespaces of its own, a home only inside, its
	# --output hidden: the name is reached through its netns, the folder
	# comes out through its filesystem.
	local card unshare hostpid=""; card=$(make_card 0)
	mkdir -p $T/ctr/etc
	echo "root:x:0:0:root:/home/inside-only:/bin/sh" > $T/ctr/etc/passwd
	cat > $T/ctr/run.sh <<-EOS
	mkdir -p /home/inside-only && $(etc_over $T/ctr/etc) || exit 1
	exec 3<$card
	mount -t tmpfs tmpfs $T || exit 1
	export PROFILING_MODE=dynamic LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*' DYNPROF_AGENT_FLAVOUR=abstract
	exec $CARD_USER - 600
	EOS
	unshare --pid --fork --mount --mount-proc --net sh -c "mount -t tmpfs tmpfs /home && exec sh $T/ctr/run.sh" \
		> $T/ctr.log 2>&1 &
	unshare=$!
	remember_pid $unshare
	wait_until 5 eval 'read -r hostpid _ < /proc/$unshare/task/$unshare/children; [ -n "$hostpid" ] &&
		grep -q "^$CARD_USER" /proc/$hostpid/cmdline' || fail "contained target did not start: $(cat $T/ctr.log)"
	remember_pid $hostpid
	wait_until 5 abstract_listens $hostpid dyn_prof_sock_1 || fail "no abstract name: $(cat $T/ctr.log)"
	printf 'start\nstop\nquit\n' | dp --pid=$hostpid --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $hostpid stop success$"
	[ -s "$(prof_dirs_of $T/o 1)/host/end_info" ] || fail "no PROF_ folder moved out: $(ls $T/o)"
}

test_rootless_container_abstract_socket_is_reached_by_its_owner() {
	# A user and network namespace made by an unprivileged user: dynprof,
	# run as that user, may enter the netns only through the user namespace
	# (its owner has CAP_SYS_ADMIN there, not in the host's).
	local card pid; card=$(make_card 0)
	chmod 755 $T $T/dev
	mkdir -p $T/o && chown 65534 $T/o
	setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U -r -n \
		env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		DYNPROF_AGENT_FLAVOUR=abstract DYNPROF_AGENT_LOG=1 "$CARD_USER" "$card" 600 > $T/rootless.log 2>&1 &
	pid=$!
	remember_pid $pid
	wait_until 5 grep -q "listening on @dyn_prof_sock_" $T/rootless.log || fail "rootless target never listened: $(cat $T/rootless.log)"
	printf 'start\nstop\nquit\n' | setpriv --reuid=65534 --regid=65534 --clear-groups \
		timeout 60 "$DP" --pid=$pid --output=$T/o > $T/out 2>&1
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid stop success$"
	[ -s "$(prof_dirs_of $T/o $pid)/host/end_info" ] || fail "no completed PROF_ folder: $(ls $T/o)"
}
