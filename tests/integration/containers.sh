# Containers seen from the host: processes in their own pid and mount
# namespaces (unshare), with a passwd and home that exist only inside;
# a root dynprof lists them, attaches to them and brings their results out.

# Put a process in a docker-style cgroup (v1 pids hierarchy): echoes the id.
dockerize() { # dockerize PID
	local id; id=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
	local cg=/sys/fs/cgroup/pids/docker/$id
	mkdir -p $cg || fail "cannot make cgroup $cg"
	echo "$cg" >> $T/.cgroups
	echo $1 > $cg/cgroup.procs || fail "cannot move $1 into $cg"
	echo $id
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

test_results_written_inside_a_container_are_moved_to_output() {
	local pid; pid=$(start_contained_target hide-output)
	printf 'start\nstop\nstart\nstop\nquit\n' | dp --pid=$pid --output=$T/o
	expect_status 0 $?
	expect_line "^\[INFO\] pid $pid: in its own filesystem it writes to /home/inside-only/\.dynprof/[0-9]+; finished PROF_ folders are moved to $T/o$"
	[ "$(prof_dirs_of $T/o 1 | wc -l)" -eq 2 ] || fail "expected 2 folders in $T/o: $(ls $T/o)"
	for d in $(prof_dirs_of $T/o 1); do
		[ -s $d/host/end_info ] && [ -s $d/host/sample.json ] || fail "$d incomplete"
		grep -q '"result_dir":"/home/inside-only/.dynprof/' $d/host/sample.json || fail "result_dir not the inside one"
	done
	[ -z "$(ls -A /proc/$pid/root/home/inside-only/.dynprof/*/ 2>/dev/null)" ] ||
		fail "folders left inside: $(ls -R /proc/$pid/root/home/inside-only/.dynprof)"
}

# v1 names carry no pid: the folder found by what appeared in the result
# folder inside, reported, recorded and moved out as 9.x folders are.
test_v1_results_written_inside_a_container_are_found_and_moved_to_output() {
	local pid; pid=$(CTR_ENV=DYNPROF_AGENT_PROTOCOL=v1 start_contained_target hide-output)
	printf 'start\nstop\nquit\n' | dp --pid=$pid --output=$T/o --protocol=v1
	expect_status 0 $?
	expect_line "^\[INFO\] pid $pid: window saved in $T/o/PROF_000001_[0-9]{17}_[A-R]{16}$"
	local name; name=$(sed -n "s|^\[INFO\] pid $pid: window saved in $T/o/||p" $T/out)
	[ -s "$T/o/$name/host/end_info" ] || fail "$name not moved out whole: $(ls -R $T/o)"
	[ "$(cat $T/o/*_profiling_output_record)" = "$name" ] || fail "not recorded"
	[ -z "$(ls -A /proc/$pid/root/home/inside-only/.dynprof/*/ 2>/dev/null)" ] ||
		fail "folders left inside: $(ls -R /proc/$pid/root/home/inside-only/.dynprof)"
}

test_list_shows_host_pid_and_container_pid() {
	local pid; pid=$(start_contained_target)
	"$DP" --list --json --device="$T/dev/davinci*" > $T/list
	grep -q "\"pid\":$pid,\"nspid\":1,\"nspids\":\[$pid,1\]" $T/list || fail "row: $(cat $T/list)"
	grep -q "\"socket\":\"/proc/$pid/root/home/inside-only/dynamic_profiling_socket_1\"" $T/list ||
		fail "socket not reached through /proc/$pid/root: $(cat $T/list)"
}

test_container_id_selects_targets() {
	local pid id; pid=$(start_contained_target); id=$(dockerize $pid)
	local host; host=$(start_target)
	"$DP" --list --json --device="$T/dev/davinci*" > $T/list
	grep -q "\"pid\":$pid,.*\"container\":\"$id\"" $T/list || fail "no container id: $(cat $T/list)"
	"$DP" --list --device="$T/dev/davinci*" --container=${id:0:12} > $T/out
	expect_line "^$pid +1 +${id:0:12} "
	expect_no_line "^$host "
	# --pid=auto within that container, and a pid as seen inside it.
	printf 'start\nstop\n' | dp --pid=auto --container=${id:0:8} --device="$T/dev/davinci*" --output=$T/o
	expect_status 0 $?
	expect_line "^\[INFO\] targets: $pid$"
	expect_line "^dynamic profiling for pid $pid stop success$"
	printf 'start\nstop\n' | dp --pid=1 --container=${id:0:8} --device="$T/dev/davinci*" --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid start success$"
	dp --pid=2 --container=${id:0:8} --device="$T/dev/davinci*" --output=$T/o < /dev/null
	expect_status 255 $?
	expect_line "invalid pid value: 2, .*no such pid in container ${id:0:8}"
}

test_pid_auto_takes_listening_card_users_only() {
	# Card 2 only: other tests' card holders (card 0) are not in the way.
	local a b plain busy; export TARGET_CARD=2
	a=$(start_target); b=$(start_target)
	plain=$(start_target_without_card)
	busy=$(start_target)
	dp_background --pid=$busy --output=$T/busy
	wait_until 3 grep -q 'Start profiling' $T/out || fail "busy client did not connect"
	mv $T/out $T/busy.out
	printf 'start\nstop\n' | timeout 30 "$DP" --pid=auto --device="$T/dev/davinci2" --output=$T/o > $T/out 2>&1
	expect_status 0 $?
	expect_line "^\[INFO\] targets: ($a,$b|$b,$a)$"
	expect_line "^dynamic profiling for pid $a stop success$"
	expect_line "^dynamic profiling for pid $b stop success$"
	expect_no_line "pid ($plain|$busy)"
}

test_pid_auto_without_card_users_is_an_error() {
	dp --pid=auto --device="$T/dev/none*" --output=$T/o < /dev/null
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument --pid=auto: no card-using process with a listening dynamic profiling socket, stop profiling\.$"
}

test_rule_windows_reach_into_a_container() {
	# From the host: the card open is seen through the container's fds, the
	# window opens and closes by the rule, and its folder comes out.
	local pid; pid=$(start_contained_target hide-output)
	dp --pid=$pid --output=$T/o --device="$T/dev/davinci*" --window=start=open,stop=+300ms < /dev/null
	expect_status 0 $?
	expect_line "rule 1: start=open fired for pid $pid$"
	expect_line "^dynamic profiling for pid $pid stop success$"
	[ -s "$(prof_dirs_of $T/o 1)/host/end_info" ] || fail "no PROF_ folder moved out: $(ls $T/o)"
	grep -q "\"pid\":$pid,\"rule\":1,\"window\":1" $T/o/*_dynprof_windows || fail "no window record"
}

# runc/crun run by hand: `runc run trainjob` puts it in /trainjob (cgroupfs driver).
test_runc_named_container_is_listed_and_selected_by_name() {
	local name=trainjob$RANDOM pid
	pid=$(CTR_CGROUP=$(make_cgroup $name) start_contained_target)
	local host; host=$(start_target)
	"$DP" --list --device="$T/dev/davinci*" > $T/out
	expect_line "^$pid +1 +$name "
	"$DP" --list --json --device="$T/dev/davinci*" > $T/list
	grep -q "\"pid\":$pid,.*\"container\":\"$name\",\"container_name\":\"$name\"" $T/list ||
		fail "no container name: $(cat $T/list)"
	# A host process in a top-level cgroup of the same form is not "in a container".
	grep -q "\"pid\":$host,.*\"container\":null,\"container_name\":null" $T/list ||
		fail "host process named: $(cat $T/list)"
	printf 'start\nstop\n' | dp --pid=auto --container=$name --device="$T/dev/davinci*" --output=$T/o
	expect_status 0 $?
	expect_line "^\[INFO\] targets: $pid$"
	printf 'start\nstop\n' | dp --pid=1 --container=$name --device="$T/dev/davinci*" --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid start success$"
	# A name matches whole, not as a prefix.
	dp --pid=auto --container=${name:0:5} --device="$T/dev/davinci*" --output=$T/o < /dev/null
	expect_status 255 $?
}

test_docker_name_from_its_state_file() {
	local id name=web$RANDOM pid; id=$(random_id)
	mkdir -p $T/docker/containers/$id
	printf '{"ID":"%s","Name":"/%s","State":{"Running":true}}' $id $name > $T/docker/containers/$id/config.v2.json
	pid=$(CTR_CGROUP=$(make_cgroup docker/$id) start_contained_target)
	DYNPROF_DOCKER_ROOT=$T/docker "$DP" --list --device="$T/dev/davinci*" > $T/out
	expect_line "^$pid +1 +$name "
	DYNPROF_DOCKER_ROOT=$T/docker "$DP" --list --json --device="$T/dev/davinci*" > $T/list
	grep -q "\"container\":\"$id\",\"container_name\":\"$name\"" $T/list || fail "no name: $(cat $T/list)"
	printf 'start\nstop\n' | DYNPROF_DOCKER_ROOT=$T/docker dp --pid=auto --container=$name \
		--device="$T/dev/davinci*" --output=$T/o
	expect_status 0 $?
	expect_line "^\[INFO\] targets: $pid$"
	# The id prefix still selects it.
	DYNPROF_DOCKER_ROOT=$T/docker "$DP" --list --device="$T/dev/davinci*" --container=${id:0:6} > $T/out
	expect_line "^$pid +1 +$name "
}

test_hostile_docker_state_gives_no_name() {
	local id pid; id=$(random_id)
	mkdir -p $T/docker/containers/$id $T/elsewhere
	printf '{"Name":"/stolen"}' > $T/elsewhere/config.v2.json
	ln -s $T/elsewhere/config.v2.json $T/docker/containers/$id/config.v2.json
	pid=$(CTR_CGROUP=$(make_cgroup docker/$id) start_contained_target)
	DYNPROF_DOCKER_ROOT=$T/docker "$DP" --list --device="$T/dev/davinci*" > $T/out
	expect_line "^$pid +1 +${id:0:12} "
	expect_no_line stolen
	# A name with a terminal escape in it is not shown either.
	rm $T/docker/containers/$id/config.v2.json
	printf '{"Name":"/a\\u001b]0;x\\u0007b"}' > $T/docker/containers/$id/config.v2.json
	DYNPROF_DOCKER_ROOT=$T/docker "$DP" --list --json --device="$T/dev/davinci*" > $T/list
	grep -q "\"container\":\"$id\",\"container_name\":null" $T/list || fail "hostile name taken: $(cat $T/list)"
}

test_podman_name_from_containers_storage() {
	local id name=pod$RANDOM pid; id=$(random_id)
	mkdir -p $T/storage/overlay-containers
	printf '[{"id":"%s","names":["other"]},{"id":"%s","names":["%s"]}]' $(random_id) $id $name \
		> $T/storage/overlay-containers/containers.json
	pid=$(CTR_CGROUP=$(make_cgroup machine.slice/libpod-$id.scope) start_contained_target)
	DYNPROF_STORAGE_ROOT=$T/storage "$DP" --list --device="$T/dev/davinci*" --container=$name > $T/out
	expect_line "^$pid +1 +$name "
}

test_kubernetes_pod_from_the_bundle_annotations() {
	local id pid; id=$(random_id)
	local bundle=$T/ctrd/io.containerd.runtime.v2.task/k8s.io/$id
	mkdir -p $bundle
	printf '{"ociVersion":"1.1.0","annotations":{"io.kubernetes.cri.container-type":"container","io.kubernetes.cri.sandbox-namespace":"training","io.kubernetes.cri.sandbox-name":"bert-worker-0"}}' > $bundle/config.json
	pid=$(CTR_CGROUP=$(make_cgroup kubepods/besteffort/pod2b1c33aa-4f1e/$id) start_contained_target)
	DYNPROF_CONTAINERD_STATE=$T/ctrd "$DP" --list --json --device="$T/dev/davinci*" > $T/list
	grep -q "\"pid\":$pid,.*\"container_name\":\"training/bert-worker-0\"" $T/list || fail "no pod: $(cat $T/list)"
	printf 'start\nstop\n' | DYNPROF_CONTAINERD_STATE=$T/ctrd dp --pid=auto --container=training/bert-worker-0 \
		--device="$T/dev/davinci*" --output=$T/o
	expect_status 0 $?
	expect_line "^\[INFO\] targets: $pid$"
}

# watch_container NAME [PRELUDE]: `--list --watch` running, then a contained
# target in a docker cgroup whose state names it NAME (PRELUDE: run before
# it joins that cgroup); its card-open line must name NAME.
watch_container() {
	local id name=$1; id=$(random_id)
	mkdir -p $T/docker/containers/$id
	printf '{"Name":"/%s"}' $name > $T/docker/containers/$id/config.v2.json
	local cg; cg=$(make_cgroup docker/$id)
	DYNPROF_DOCKER_ROOT=$T/docker "$DP" --list --watch --device="$T/dev/davinci*" > $T/out 2>&1 &
	local watcher=$!
	remember_pid $watcher
	wait_until 10 grep -q "^HOST PID" $T/out || fail "watch did not start: $(cat $T/out)"
	local pid; pid=$(CTR_PRELUDE=${2:-} CTR_CGROUP=$cg start_contained_target)
	wait_until 10 grep -Eq "^card-open +pid $pid \(ns 1\) " $T/out || fail "no card-open line: $(cat $T/out)"
	grep -Eq "^card-open +pid $pid \(ns 1\) container $name cards 0 " $T/out ||
		fail "the card-open line names no container: $(cat $T/out)"
	kill -TERM $watcher
}

test_watch_names_the_container() { watch_container watched$RANDOM; }

# A process that joins its container's cgroup after its exec, then opens
# the card (an entrypoint script that moves itself): its card-open names
# the container. Before, the cgroup read at its exec stood (no container),
# which under load the model had read by then. (Seen by the model, an exec
# it reads at once, a second before it moves.)
test_watch_names_a_container_joined_after_the_exec() { watch_container joined$RANDOM "sleep 1"; }

# docker_named NAME: a docker id whose state names it NAME (DYNPROF_DOCKER_ROOT=$T/docker).
docker_named() {
	local id; id=$(random_id)
	mkdir -p $T/docker/containers/$id
	printf '{"ID":"%s","Name":"/%s"}' $id $1 > $T/docker/containers/$id/config.v2.json
	echo $id
}

test_folders_moved_out_of_a_container_go_to_its_subfolder() {
	local name=rank$RANDOM id pid; id=$(docker_named $name)
	pid=$(CTR_CGROUP=$(make_cgroup docker/$id) start_contained_target hide-output)
	printf 'start\nstop\nstart\nstop\nquit\n' | DYNPROF_DOCKER_ROOT=$T/docker dp --pid=$pid --output=$T/o
	expect_status 0 $?
	expect_line "^\[INFO\] pid $pid: window saved in $T/o/$name/PROF_[0-9]+_[0-9]+_00000001[A-Z]+$"
	[ "$(prof_dirs_of $T/o/$name 1 | wc -l)" -eq 2 ] || fail "expected 2 folders in $T/o/$name: $(ls -R $T/o)"
	[ -z "$(prof_dirs_of $T/o 1)" ] || fail "folders left in --output itself: $(ls $T/o)"
	[ "$(grep -c "^$name/PROF_" $T/o/*_profiling_output_record)" -eq 2 ] || fail "record: $(cat $T/o/*_profiling_output_record)"
	# Which host process, container and command each came from.
	[ "$(grep -c "^{\"folder\":\"$name/PROF_[^\"]*\",\"path\":\"$T/o/$name/PROF_[^\"]*\",\"pid\":$pid,\"nspid\":1,\"container\":\"$name\",\"command\":\"[^\"]*card_user - 600\"}$" \
		$T/o/*_dynprof_folders)" -eq 2 ] || fail "origin record: $(cat $T/o/*_dynprof_folders)"
}

test_a_planted_container_subfolder_is_not_used() {
	local name=planted$RANDOM id pid; id=$(docker_named $name)
	mkdir -p $T/o $T/elsewhere
	ln -s $T/elsewhere $T/o/$name
	pid=$(CTR_CGROUP=$(make_cgroup docker/$id) start_contained_target hide-output)
	printf 'start\nstop\nquit\n' | DYNPROF_DOCKER_ROOT=$T/docker dp --pid=$pid --output=$T/o
	expect_status 0 $?
	expect_line "^\[WARNING\] dynprof: pid $pid: cannot make the folder $T/o/$name for its container's results"
	expect_line "^\[INFO\] pid $pid: window saved in $T/o/PROF_"
	[ -z "$(ls -A $T/elsewhere)" ] || fail "written through the symlink: $(ls $T/elsewhere)"
}

test_rule_window_record_names_the_container_and_command() {
	local name=ruled$RANDOM id pid; id=$(docker_named $name)
	pid=$(CTR_CGROUP=$(make_cgroup docker/$id) start_contained_target hide-output)
	DYNPROF_DOCKER_ROOT=$T/docker dp --pid=$pid --output=$T/o --window=start=+100ms,stop=+300ms < /dev/null
	expect_status 0 $?
	grep -q "^{\"pid\":$pid,\"rule\":1,\"window\":1,.*\"stop\":{[^}]*},.*\"nspid\":1,\"container\":\"$name\",\"command\":\"[^\"]*card_user - 600\"}$" \
		$T/o/*_dynprof_windows || fail "window record: $(cat $T/o/*_dynprof_windows)"
}

# The result folder made inside the container is removed at the end when
# it is empty: after a run whose folders were all moved out, and after an
# attach refused once the folder was made.
test_no_empty_result_folder_is_left_in_the_container() {
	local pid; pid=$(start_contained_target hide-output)
	local home=/proc/$pid/root/home/inside-only
	printf 'start\nstop\nquit\n' | dp --pid=$pid --output=$T/o
	expect_status 0 $?
	[ "$(prof_dirs_of $T/o 1 | wc -l)" -eq 1 ] || fail "no folder moved out: $(ls $T/o)"
	[ ! -e $home/.dynprof ] || fail "left inside: $(ls -R $home/.dynprof)"
	dp --pid=$pid --output=$T/o --protocol=v1 < /dev/null
	expect_status 255 $?
	[ ! -e $home/.dynprof ] || fail "left inside after a refused attach: $(ls -R $home/.dynprof)"
	# Another run's folder there stays.
	mkdir -p $home/.dynprof/999999
	printf 'quit\n' | dp --pid=$pid --output=$T/o
	[ -d $home/.dynprof/999999 ] || fail "another run's folder removed"
}

# A container whose card node exists only inside it (its own /dev, the node
# made there as an engine does), with the default card patterns.
test_rule_open_in_a_container_with_its_own_dev_and_default_patterns() {
	local numbers; numbers=$(card_numbers 0) || exit 1
	mkdir -p $T/ctr/etc
	echo "root:x:0:0:root:/home/inside-only:/bin/sh" > $T/ctr/etc/passwd
	cat > $T/ctr/run.sh <<-EOS
	mkdir -p /home/inside-only && $(etc_over $T/ctr/etc) || exit 1
	mount -t tmpfs tmpfs /dev && mknod /dev/davinci0 c $numbers || exit 1
	export PROFILING_MODE=dynamic LD_PRELOAD=$AGENT_SO CARD_USER_OPEN_DELAY_MS=1500
	exec $CARD_USER /dev/davinci0 600
	EOS
	unshare --pid --fork --mount --mount-proc sh -c "mount -t tmpfs tmpfs /home && exec sh $T/ctr/run.sh" \
		> $T/ctr.log 2>&1 &
	local unshare=$! pid=""
	remember_pid $unshare
	wait_until 5 eval 'read -r pid _ < /proc/$unshare/task/$unshare/children; [ -n "$pid" ] &&
		grep -q "^$CARD_USER" /proc/$pid/cmdline' || fail "no target: $(cat $T/ctr.log)"
	remember_pid $pid
	wait_until 5 test -S /proc/$pid/root/home/inside-only/dynamic_profiling_socket_1 || fail "no socket: $(cat $T/ctr.log)"
	dp --pid=$pid --output=$T/o --window=start=open,stop=+300ms < /dev/null
	expect_status 0 $?
	expect_line "rule 1: start=open fired for pid $pid$"
	expect_line "^dynamic profiling for pid $pid stop success$"
}
