# Containers made for tests (containers.sh, service.sh): a target in its own
# pid and mount namespaces, and docker-style cgroups.

# start_contained_target [hide-output]: echoes the host pid of a target that
# (CTR_ENV: more VAR=value words for its environment; CTR_CGROUP: a cgroup
# folder to run in, from the start, as an engine puts its containers)
# runs as pid 1 of `unshare --pid --fork --mount --mount-proc`, with its own
# passwd and a home only inside. With hide-output, the test's folder (and so
# its --output) is a private tmpfs inside, as in a real container; the build
# stays visible wherever the clone is.
start_contained_target() {
	local card; card=$(make_card 0)
	mkdir -p $T/ctr/etc
	echo "root:x:0:0:root:/home/inside-only:/bin/sh" > $T/ctr/etc/passwd
	{
		# CTR_CGROUP: the cgroup its engine would have put it in (made by the caller).
		[ -n "${CTR_CGROUP:-}" ] && echo "echo 0 > $CTR_CGROUP/cgroup.procs || exit 1"
		echo "mkdir -p /home/inside-only && mount --bind $T/ctr/etc/passwd /etc/passwd || exit 1"
		echo "exec 3<$card"
		[ "${1:-}" = hide-output ] && echo "mount -t tmpfs tmpfs $T || exit 1"
		echo "export PROFILING_MODE=dynamic LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*' ${CTR_ENV:-}"
		echo "exec $CARD_USER - 600"
	} > $T/ctr/run.sh
	# A private tmpfs on /home: the home exists only inside. exec keeps the
	# target at pid 1 of its namespace, like a container's main process.
	unshare --pid --fork --mount --mount-proc sh -c "mount -t tmpfs tmpfs /home && exec sh $T/ctr/run.sh" \
		> $T/ctr.log 2>&1 &
	local unshare=$! hostpid=""
	remember_pid $unshare
	# The namespace's pid 1 is unshare's only child; it ends up as card_user.
	wait_until 5 eval 'read -r hostpid _ < /proc/$unshare/task/$unshare/children; [ -n "$hostpid" ] &&
		grep -q "^$CARD_USER" /proc/$hostpid/cmdline' ||
		fail "contained target did not start: $(cat $T/ctr.log)"
	remember_pid $hostpid
	wait_until 5 test -S /proc/$hostpid/root/home/inside-only/dynamic_profiling_socket_1 ||
		fail "contained target has no socket: $(cat $T/ctr.log)"
	echo $hostpid
}

# Put a process in a docker-style cgroup (v1 pids hierarchy): echoes the id.
dockerize() { # dockerize PID
	local id; id=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
	local cg=/sys/fs/cgroup/pids/docker/$id
	mkdir -p $cg || fail "cannot make cgroup $cg"
	echo "$cg" >> $T/.cgroups
	echo $1 > $cg/cgroup.procs || fail "cannot move $1 into $cg"
	echo $id
}
