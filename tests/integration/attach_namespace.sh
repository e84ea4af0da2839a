# A target in its own pid and mount namespace whose home exists only there:
# a root dynprof on the host finds its socket through /proc/<pid>/root.

# start_contained_target: echoes the host pid of a target running inside
# `unshare --pid --fork --mount --mount-proc` with its own passwd and home.
start_contained_target() {
	local card; card=$(make_card 0)
	mkdir -p $T/ctr/etc $T/ctr/home
	echo "root:x:0:0:root:/home/inside-only:/bin/sh" > $T/ctr/etc/passwd
	cat > $T/ctr/run.sh <<-EOS
	mkdir -p /home/inside-only || exit 1
	mount --bind $T/ctr/etc/passwd /etc/passwd || exit 1
	export PROFILING_MODE=dynamic LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES="$T/dev/davinci*"
	exec $CARD_USER $card 600
	EOS
	# A private tmpfs on /home: the home exists only inside. exec keeps the
	# target at pid 1 of its namespace, like a container's main process.
	unshare --pid --fork --mount --mount-proc sh -c "mount -t tmpfs tmpfs /home && exec sh $T/ctr/run.sh" \
		> $T/ctr.log 2>&1 &
	remember_pid $!
	local hostpid=""
	wait_until 5 eval 'hostpid=$(pgrep -f "$CARD_USER $card" | head -n1); [ -n "$hostpid" ]' ||
		fail "contained target did not start: $(cat $T/ctr.log)"
	remember_pid $hostpid
	wait_until 5 test -S /proc/$hostpid/root/home/inside-only/dynamic_profiling_socket_1 ||
		fail "contained target has no socket: $(cat $T/ctr.log)"
	echo $hostpid
}

test_target_in_other_namespaces_is_found_and_driven() {
	local pid; pid=$(start_contained_target)
	[ ! -e /home/inside-only ] || fail "the home leaks to the host"
	grep -q '^NSpid:.*[[:space:]]1$' /proc/$pid/status || fail "not in its own pid namespace"
	printf 'start\nstop\nquit\n' | dp --pid=$pid --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid start success$"
	expect_line "^dynamic profiling for pid $pid stop success$"
	# Its pid inside is 1: the folder carries that pid.
	[ -s "$(prof_dirs_of $T/o 1)/host/end_info" ] || fail "no completed PROF_ folder from the contained target"
}
