# Container identity that a user cannot forge (issue 24): real unprivileged
# users, each given a cgroup v2 folder of their own as systemd's
# user@UID.service delegation gives every user, and containers.json files in
# their homes as rootless podman keeps them.
. "$DYNPROF_TESTS/lib/users.sh"

# The cgroup v2 hierarchy as mounted here: /sys/fs/cgroup, or
# /sys/fs/cgroup/unified on a hybrid host.
v2_root() {
	local d
	for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
		[ "$(stat -f -c %T $d 2>/dev/null)" = cgroup2fs ] && { echo $d; return; }
	done
	fail "no cgroup v2 mount"
}

# delegate USER: a cgroup v2 folder owned by USER (the folder and its files,
# as systemd chowns user@UID.service's); removed after the test. Echoes it.
delegate() {
	local cg; cg=$(v2_root)/dph-$1
	mkdir $cg || fail "cannot make cgroup $cg"
	echo $cg >> $T/.cgroups
	chown -R "$1" $cg
	echo $cg
}

# user_mkcg USER PATH: USER makes the cgroup PATH inside its delegated one.
user_mkcg() {
	as_user "$1" mkdir "$2" || fail "$1 cannot make $2"
	echo "$2" >> $T/.cgroups
}

# user_target USER CGROUP: USER's card user, moved into CGROUP before it
# opens its card (by root, as a user's manager moves its own processes).
# Echoes its pid once it holds the card.
user_target() {
	local u=$1 cg=$2 card; card=$(make_card 0)
	chmod 666 $card
	mkdir -p $T/u/$u/home && chown "$u" $T/u/$u/home
	rm -f $T/u/$u/go
	# setpriv itself (as_user's command) in the background: $! is the target.
	setpriv --reuid="$(id -u "$u")" --regid="$(id -g "$u")" --clear-groups --inh-caps=-all \
		env HOME=$T/u/$u/home PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" \
		DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		sh -c 'while [ ! -e "$0" ]; do sleep 0.02; done; exec "$@"' $T/u/$u/go "$CARD_USER" $card 600 \
		> $T/u/$u.log 2>&1 &
	local pid=$!
	remember_pid $pid
	echo $pid > $cg/cgroup.procs || fail "cannot move $pid into $cg"
	touch $T/u/$u/go
	wait_until 5 sh -c "ls -l /proc/$pid/fd | grep -q davinci" || fail "$u's target never opened its card: $(cat $T/u/$u.log)"
	echo $pid
}

# The --list --json row of PID.
row_of() { grep -o "{\"pid\":$1,[^}]*}" $T/list || fail "pid $1 not listed"; }

test_a_users_own_runc_scope_is_not_a_container() {
	local u cg pid; u=$(make_user); cg=$(delegate $u)
	user_mkcg $u $cg/runc-trainjob.scope
	pid=$(user_target $u $cg/runc-trainjob.scope)
	grep -q "runc-trainjob.scope$" /proc/$pid/cgroup || fail "not in the scope: $(cat /proc/$pid/cgroup)"
	"$DP" --list --json --device="$T/dev/davinci*" > $T/list
	row_of $pid | grep -q '"container":null,"container_name":null' || fail "a container: $(row_of $pid)"
	"$DP" --list --device="$T/dev/davinci*" --container=trainjob > $T/out 2>&1
	expect_no_line "^$pid "
}

test_a_users_own_engine_shaped_cgroup_is_not_a_container() {
	local u cg pid id; u=$(make_user); cg=$(delegate $u); id=$(random_id)
	mkdir -p $T/docker/containers/$id
	printf '{"Name":"/evaljob"}' > $T/docker/containers/$id/config.v2.json
	user_mkcg $u $cg/docker-$id.scope
	pid=$(user_target $u $cg/docker-$id.scope)
	DYNPROF_DOCKER_ROOT=$T/docker "$DP" --list --json --device="$T/dev/davinci*" > $T/list
	row_of $pid | grep -q '"container":null,"container_name":null' || fail "a container: $(row_of $pid)"
}

# Rootless podman: an id in a user's own cgroup is that user's container,
# named from that user's containers.json only, and the name says whose.
rootless_store() { # rootless_store USER ID NAME
	local d=$T/u/$1/home/.local/share/containers/storage/overlay-containers
	mkdir -p $d
	printf '[{"id":"%s","names":["%s"]}]' $2 $3 > $d/containers.json
	chown -R "$1" $T/u/$1/home
	usermod -d $T/u/$1/home "$1" || fail "usermod $1"
}

test_a_users_containers_json_does_not_rename_another_users_container() {
	local a b cga cgb pa pb id; a=$(make_user); b=$(make_user); id=$(random_id)
	rootless_store $a $id pwned
	rootless_store $b $id evaljob
	cga=$(delegate $a); cgb=$(delegate $b)
	user_mkcg $a $cga/libpod-$id.scope
	user_mkcg $b $cgb/libpod-$id.scope
	# The attacker's process first: the scan meets it first.
	pa=$(user_target $a $cga/libpod-$id.scope)
	pb=$(user_target $b $cgb/libpod-$id.scope)
	"$DP" --list --json --device="$T/dev/davinci*" > $T/list
	local ua ub; ua=$(id -u $a); ub=$(id -u $b)
	row_of $pb | grep -q "\"container\":\"$id@$ub\",\"container_name\":\"evaljob@$ub\"" ||
		fail "the victim's container: $(row_of $pb)"
	row_of $pa | grep -q "\"container\":\"$id@$ua\",\"container_name\":\"pwned@$ua\"" ||
		fail "the attacker's container: $(row_of $pa)"
	"$DP" --list --device="$T/dev/davinci*" --container=evaljob@$ub > $T/out 2>&1
	expect_line "^$pb "
	expect_no_line "^$pa "
	# Its id is no engine's: a prefix of it selects neither.
	"$DP" --list --device="$T/dev/davinci*" --container=${id:0:12} > $T/out 2>&1
	expect_no_line "^($pa|$pb) "
}

# Engine state a user owns names nothing: only root writes an engine's.
test_engine_state_owned_by_a_user_gives_no_name() {
	local u id pid; u=$(make_user); id=$(random_id)
	mkdir -p $T/docker/containers/$id
	printf '{"Name":"/stolen"}' > $T/docker/containers/$id/config.v2.json
	chown "$u" $T/docker/containers/$id/config.v2.json
	pid=$(CTR_CGROUP=$(make_cgroup docker/$id) start_contained_target)
	DYNPROF_DOCKER_ROOT=$T/docker "$DP" --list --json --device="$T/dev/davinci*" > $T/list
	row_of $pid | grep -q "\"container\":\"$id\",\"container_name\":null" || fail "named: $(row_of $pid)"
}

# A conmon of a user's own making (conmon.h): rootless podman on a cgroup
# v1 host is named from its conmon, which any user can fake. fake_conmon
# USER ID: USER's process called conmon, with "-c ID" in its argv, in a
# user namespace it made (USER is root inside) and above a card user in a
# pid namespace of its own, as rootless podman's conmon is above its
# container. Echoes the card user's pid once it holds the card.
fake_conmon() {
	local u=$1 id=$2 card; card=$(make_card 0)
	chmod 666 $card
	cat > $T/fakeconmon.py <<-'EOF_PY'
	import ctypes, os, sys
	libc = ctypes.CDLL(None, use_errno=True)
	uid, gid = os.getuid(), os.getgid()
	if libc.unshare(0x10000000 | 0x20000000) != 0:  # CLONE_NEWUSER | CLONE_NEWPID
	    sys.exit("unshare: errno %d" % ctypes.get_errno())
	for f, text in (("setgroups", "deny"), ("uid_map", "0 %d 1" % uid), ("gid_map", "0 %d 1" % gid)):
	    with open("/proc/self/" + f, "w") as m:
	        m.write(text)
	pid = os.fork()
	if pid == 0:
	    os.execv(os.environ["JOB"], [os.environ["JOB"], os.environ["CARD"], "600"])
	print(pid, flush=True)
	os.waitpid(pid, 0)
	EOF_PY
	local log=$T/fakeconmon.$u.log
	if [ $u = root ]; then
		env JOB=$CARD_USER CARD=$card bash -c "exec -a conmon /usr/bin/python3 - -c $id" < $T/fakeconmon.py > $log 2>&1 &
	else
		as_user $u env JOB=$CARD_USER CARD=$card bash -c "exec -a conmon /usr/bin/python3 - -c $id" < $T/fakeconmon.py > $log 2>&1 &
	fi
	remember_pid $!
	# The job's "ready 1" shares the log and may come first (the child can
	# run before its parent prints): the pid is the line of digits alone.
	wait_until 5 grep -qx '[0-9][0-9]*' $log || fail "no fake conmon: $(cat $log)"
	local pid; pid=$(grep -m1 -x '[0-9][0-9]*' $log)
	remember_pid $pid
	wait_until 5 sh -c "ls -l /proc/$pid/fd | grep -q davinci" || fail "its job never opened its card: $(cat $log)"
	# What dynprof must see above the job (a python that re-execs itself would not be it).
	local pp; pp=$(awk '/^PPid:/ {print $2}' /proc/$pid/status)
	tr '\0' ' ' < /proc/$pp/cmdline | grep -q "^conmon - -c $id $" ||
		fail "the job's parent is not the fake conmon: $(tr '\0' ' ' < /proc/$pp/cmdline)"
	echo $pid
}

# What the fake names is that user's job alone, as that user's ("@uid"),
# from that user's store only (root's podman store naming the same id is
# not read for it); a root-made user namespace under a "conmon" names
# nothing (no user's rootless container; root's have cgroups).
test_a_users_fake_conmon_names_only_that_users_own_job() {
	local u id pid pr; u=$(make_user); id=$(random_id)
	rootless_store $u $id pwned
	mkdir -p -m 0700 $T/rootstore/vfs-containers
	printf '[{"id":"%s","names":["rootjob"]}]' $id > $T/rootstore/vfs-containers/containers.json
	pid=$(fake_conmon $u $id) || exit 1
	pr=$(fake_conmon root $id) || exit 1
	DYNPROF_STORAGE_ROOT=$T/rootstore "$DP" --list --json --device="$T/dev/davinci*" > $T/list
	local uu; uu=$(id -u $u)
	row_of $pid | grep -q "\"container\":\"$id@$uu\",\"container_name\":\"pwned@$uu\"" ||
		fail "the user's job: $(row_of $pid)"
	row_of $pr | grep -q '"container":null,"container_name":null' || fail "root's namespace: $(row_of $pr)"
	DYNPROF_STORAGE_ROOT=$T/rootstore "$DP" --list --device="$T/dev/davinci*" --container=rootjob > $T/out 2>&1
	expect_no_line "^($pid|$pr) "
	DYNPROF_STORAGE_ROOT=$T/rootstore "$DP" --list --device="$T/dev/davinci*" --container=${id:0:12} > $T/out 2>&1
	expect_no_line "^($pid|$pr) "
}
