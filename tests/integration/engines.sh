# Real container engines: docker (a dockerd of the test's own), podman as
# root and rootless, containerd's ctr. Each test starts its engine with all
# its state in $T, imports an image it made itself (a tar of a minimal
# rootfs: the job, the agent, the libraries ldd names, a passwd whose root
# has a home), runs containers named with a per-run suffix, and gives
# dynprof filters (--container, --exe, --pid) so it acts on those only.
# Containers, daemons and their mounts go at the end (at_cleanup).
#
# An engine that cannot run here fails its tests with the reason: none is
# skipped. What this VM needs (cgroup v1 host, no CAP_SYS_RESOURCE, no
# network) is applied where the engine is called, with the reason.

# A sanitizer build's job (make test SANITIZE=1) in a container: the
# environment it needs there too (the suite's ASAN_OPTIONS: the agent,
# preloaded, is an ASan object; leaks unchecked where the engine's seccomp
# profile refuses ptrace). Nothing on a normal build.
san_env() { [ -n "${ASAN_OPTIONS:-}" ] && ldd "$CARD_USER" | grep -q libasan && echo "ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0"; true; }

. "$DYNPROF_TESTS/lib/users.sh"

WIRE=$B/tests/peers/wire_client
SFX=$$$RANDOM

# The job's path inside the image, the test's own: --exe takes it alone.
EXE=/job/dpt_job$SFX

cgroup_v2() { [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; }

# ---- the image -------------------------------------------------------------

# make_rootfs: $T/img.tar, a rootfs of the job ($EXE, a card user), the
# agent, wire_client (a second client for the busy tests), /job/wrap.sh (a
# wrapper that sets the agent's environment and execs the job), dash as
# /bin/sh, their libraries, and /etc/passwd with root's home /root.
make_rootfs() {
	local r=$T/rootfs f
	mkdir -p $r/job $r/etc $r/root $r/tmp $r/dev $r/proc $r/sys $r/bin
	cp "$CARD_USER" $r$EXE
	cp "$AGENT_SO" $r/job/libdynprof_agent.so
	cp "$WIRE" $r/job/wire_client
	cp "$(readlink -f /bin/sh)" $r/bin/sh
	for f in $(ldd "$CARD_USER" "$AGENT_SO" "$WIRE" /bin/sh |
		awk '$1 ~ /^\// && $1 !~ /:$/ {print $1} $3 ~ /^\// {print $3}' | sort -u); do
		mkdir -p $r$(dirname $f)
		cp -L $f $r$f
	done
	echo 'root:x:0:0:root:/root:/bin/sh' > $r/etc/passwd
	cat > $r/job/wrap.sh <<-EOF
	export PROFILING_MODE=dynamic LD_PRELOAD=/job/libdynprof_agent.so DYNPROF_AGENT_DEVICES='$(dirname $CARD_IN)/davinci*' $(san_env)
	exec $EXE "\$@"
	EOF
	tar -C $r -cf $T/img.tar . || fail "cannot make the image's tar"
}

# make_oci TAR OUT REF: an OCI image layout archive of one layer, what
# `ctr image import` takes (a plain rootfs tar it does not).
make_oci() {
	local d=$T/oci lh ls ch cs mh ms
	mkdir -p $d/blobs/sha256
	blob() { local h; h=$(sha256sum "$1" | cut -d' ' -f1); cp "$1" $d/blobs/sha256/$h; echo "$h $(stat -c %s "$1")"; }
	read -r lh ls < <(blob $1)
	printf '{"architecture":"amd64","os":"linux","config":{},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
		$lh > $T/oci.config
	read -r ch cs < <(blob $T/oci.config)
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
		$ch $cs $lh $ls > $T/oci.manifest
	read -r mh ms < <(blob $T/oci.manifest)
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"%s"}}]}' \
		$mh $ms "$3" > $d/index.json
	echo '{"imageLayoutVersion":"1.0.0"}' > $d/oci-layout
	tar -C $d -cf $2 oci-layout index.json blobs || fail "cannot make the OCI archive"
}

# What is left mounted under $T (an engine killed before it unmounted):
# deepest first, lazily, so rm -rf $T never walks into a live mount.
unmount_under_t() {
	awk -v t="$T/" 'index($2, t) == 1 {print $2}' /proc/self/mounts | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
}

# ---- engines ---------------------------------------------------------------
# eng_up ENGINE: the engine running with its state in $T, the image in it.
# Then: eng_run NAME [-v HOSTDIR:CTRDIR] -- CMD... (detached, the card in,
# the agent's environment set unless CMD is the wrapper), eng_pid NAME,
# eng_exec NAME CMD..., eng_stop NAME, eng_kill NAME, eng_rm NAME,
# eng_rename OLD NEW; DPENV: the environment dynprof needs to find the
# engine's state in $T; NAMED: the name dynprof gives container NAME.

ENG=""
CARD_IN=/dev/davinci0 # the card's path inside the container

docker_cli() { /usr/bin/docker -H unix://$T/docker.sock "$@"; }

docker_up() {
	[ -x /usr/sbin/dockerd ] || command -v dockerd >/dev/null ||
		fail "no dockerd (tools/install-deps.sh test installs docker.io)"
	[ -x /usr/bin/docker ] || fail "no docker CLI of docker.io at /usr/bin/docker"
	mkdir -p $T/docker
	# All state in $T: its own data, exec root (its containerd's socket
	# and state go there too), pidfile and socket. No iptables rules and
	# no bridge: the host's network is left as it is; containers get
	# --network=none. Its containerd namespace is the run's own.
	dockerd --data-root=$T/docker/data --exec-root=$T/docker/exec --pidfile=$T/docker/pid \
		-H unix://$T/docker.sock --iptables=false --ip-masq=false --bridge=none \
		--containerd-namespace=dpt$SFX --containerd-plugins-namespace=dpt$SFX-plugins \
		> $T/dockerd.log 2>&1 &
	remember_pid $!
	at_cleanup docker_down $!
	wait_until 60 eval 'docker_cli info > /dev/null 2>&1' || fail "dockerd did not start: $(tail -5 $T/dockerd.log)"
	docker_cli import $T/img.tar dpt-img:$SFX > /dev/null || fail "docker import failed"
	DPENV=(DYNPROF_DOCKER_ROOT=$T/docker/data)
}

docker_down() { # docker_down DOCKERD_PID: its containers, then dockerd (its containerd goes with it)
	local ids; ids=$(docker_cli ps -aq 2>/dev/null)
	[ -n "$ids" ] && docker_cli rm -f $ids > /dev/null 2>&1
	kill -TERM $1 2>/dev/null
	wait_until 20 all_gone $1
	pkill -KILL -f "containerd --config $T/docker/exec/" 2>/dev/null
	unmount_under_t
}

# Rootful podman: --root, --runroot and --tmpdir in $T (no state in
# /var/lib/containers or /run/libpod but the image cache podman keeps
# beside). This VM is a cgroup v1 host (a hybrid with an empty unified
# tree): crun refuses hybrid cgroups ("cgroups in hybrid mode not
# supported"), so runc, and the cgroupfs manager as no systemd runs here.
# PODMAN_STORE: how its store is given (default: the flags; a test may give
# a storage.conf through CONTAINERS_STORAGE_CONF instead).
podman_cli() {
	local store=(--root=$T/podman/root --runroot=$T/podman/run)
	[ -n "${PODMAN_STORE+set}" ] && store=($PODMAN_STORE)
	podman "${store[@]}" --tmpdir=$T/podman/tmp \
		--runtime=runc --cgroup-manager=cgroupfs --events-backend=file "$@"
}

podman_up() {
	command -v podman >/dev/null || fail "no podman (tools/install-deps.sh test installs it)"
	mkdir -p $T/podman
	at_cleanup podman_down
	podman_cli import $T/img.tar dpt-img:$SFX > $T/podman.log 2>&1 || fail "podman import failed: $(cat $T/podman.log)"
	DPENV=(DYNPROF_STORAGE_ROOT=$T/podman/root DYNPROF_STORAGE_RUNROOT=$T/podman/run)
}

# conmon runs `podman ... container cleanup` when a container ends, which
# mounts the store again: the mounts go once no podman of this store runs.
podman_down() {
	podman_cli rm -af -t 0 > /dev/null 2>&1
	wait_until 15 eval '! pgrep -f -- "$T/podman/" > /dev/null'
	unmount_under_t
}

# Rootless podman: a user of the test's own (subordinate ids from useradd),
# its home in $T (the host's passwd names it: dynprof finds a rootless
# storage there), its runtime folder in $T. remove_users ends its pause
# process and conmons.
podmanu_cli() {
	(cd $T && as_user $PU env HOME=$T/u/$PU/home XDG_RUNTIME_DIR=$T/u/$PU/run \
		podman --runtime=runc --cgroup-manager=cgroupfs --events-backend=file "$@")
}

podmanu_up() {
	command -v podman >/dev/null || fail "no podman (tools/install-deps.sh test installs it)"
	command -v newuidmap >/dev/null || fail "no newuidmap (tools/install-deps.sh test installs uidmap)"
	PU=$(make_user)
	usermod -d $T/u/$PU/home $PU || fail "usermod failed"
	grep -q "^$PU:" /etc/subuid || fail "useradd gave $PU no subordinate uids"
	mkdir -p $T/u/$PU/run && chmod 700 $T/u/$PU/run && chown $PU $T/u/$PU/run
	chmod 644 $T/img.tar
	chmod 755 $T/dev && chmod 644 $T/dev/davinci0
	# PODMANU_PRE: shell text run as the user first ($H its home).
	[ -n "${PODMANU_PRE:-}" ] && { as_user $PU env H=$T/u/$PU/home sh -c "$PODMANU_PRE" || fail "PODMANU_PRE failed"; }
	at_cleanup podmanu_down
	podmanu_cli import $T/img.tar dpt-img:$SFX > $T/podman.log 2>&1 || fail "podman import failed: $(cat $T/podman.log)"
	DPENV=()
}

podmanu_down() { podmanu_cli rm -af -t 0 > /dev/null 2>&1; }

# containerd of the test's own: root, state and sockets in $T; the CRI
# plugin off (no Kubernetes here). ctr works in a namespace of the run's own.
ctr_cli() { ctr --address $T/ctrd/sock -n dpt$SFX "$@"; }

ctr_up() {
	command -v containerd >/dev/null && command -v ctr >/dev/null ||
		fail "no containerd/ctr (tools/install-deps.sh test installs containerd)"
	mkdir -p $T/ctrd
	cat > $T/ctrd/config.toml <<-EOF
	version = 2
	root = "$T/ctrd/root"
	state = "$T/ctrd/state"
	disabled_plugins = ["io.containerd.grpc.v1.cri"]
	[grpc]
	  address = "$T/ctrd/sock"
	[ttrpc]
	  address = "$T/ctrd/sock.ttrpc"
	EOF
	containerd --config $T/ctrd/config.toml > $T/containerd.log 2>&1 &
	remember_pid $!
	at_cleanup ctr_down $!
	wait_until 30 eval 'ctr_cli version > /dev/null 2>&1' || fail "containerd did not start: $(tail -5 $T/containerd.log)"
	make_oci $T/img.tar $T/oci.tar docker.io/library/dpt-img:$SFX
	ctr_cli image import $T/oci.tar > $T/ctr.log 2>&1 || fail "ctr image import failed: $(cat $T/ctr.log)"
	# ctr --device puts the node at the host's path.
	CARD_IN=$T/dev/davinci0
	DPENV=(DYNPROF_CONTAINERD_STATE=$T/ctrd/state)
}

ctr_down() { # ctr_down CONTAINERD_PID
	local c
	for c in $(ctr_cli task ls -q 2>/dev/null); do ctr_cli task kill -s KILL $c 2>/dev/null; done
	for c in $(ctr_cli container ls -q 2>/dev/null); do
		wait_until 5 eval "! ctr_cli task ls -q | grep -qx $c"
		ctr_cli task rm -f $c > /dev/null 2>&1
		ctr_cli container rm $c > /dev/null 2>&1
	done
	kill -TERM $1 2>/dev/null
	wait_until 10 all_gone $1
	unmount_under_t
}

eng_up() {
	ENG=$1
	make_card 0 > /dev/null
	[ $ENG = ctr ] && CARD_IN=$T/dev/davinci0
	make_rootfs
	${ENG}_up
}

# eng_run NAME [-v HOST:CTR] [-- CMD...]: default CMD: the job on the card.
# (AGENT_ENV: more VAR=value for the agent; NO_AGENT: none of its environment.)
eng_run() {
	local name=$1 vol=() v; shift
	if [ "${1:-}" = -v ]; then v=$2; shift 2; fi
	[ "${1:-}" = -- ] && shift
	local cmd=("$@")
	[ ${#cmd[@]} -eq 0 ] && cmd=($EXE $CARD_IN 600)
	local env=(PROFILING_MODE=dynamic LD_PRELOAD=/job/libdynprof_agent.so
		"DYNPROF_AGENT_DEVICES=$(dirname $CARD_IN)/davinci*" ${AGENT_ENV:-} $(san_env))
	# NO_AGENT: the command sets the agent's environment itself (a
	# wrapper), or must not serve at all (a second client).
	[ -n "${NO_AGENT:-}" ] && env=(DPT=1)
	case $ENG in
	docker | podman | podmanu)
		local e=() x
		for x in "${env[@]}"; do e+=(-e "$x"); done
		[ -n "${v:-}" ] && vol=(-v "$v")
		# This VM: no CAP_SYS_RESOURCE and a hard RLIMIT_NOFILE of 20000,
		# below podman's default of 1048576 (crun/runc: setrlimit
		# "Operation not permitted"): limits under the host's.
		local lim=()
		[ $ENG != docker ] && lim=(--ulimit=nofile=1024:1024 --ulimit=nproc=4096:4096)
		${ENG}_cli run -d --name $name --network=none "${lim[@]}" --device=$T/dev/davinci0:$CARD_IN \
			"${e[@]}" "${vol[@]}" dpt-img:$SFX "${cmd[@]}" > $T/run.$name.log 2>&1 ||
			fail "$ENG run $name failed: $(cat $T/run.$name.log)"
		;;
	ctr)
		local e=() x
		for x in "${env[@]}"; do e+=(--env "$x"); done
		[ -n "${v:-}" ] && vol=(--mount "type=bind,src=${v%%:*},dst=${v#*:},options=rbind:rw")
		ctr_cli run -d --device $T/dev/davinci0 "${e[@]}" "${vol[@]}" docker.io/library/dpt-img:$SFX $name \
			"${cmd[@]}" > $T/run.$name.log 2>&1 || fail "ctr run $name failed: $(cat $T/run.$name.log)"
		;;
	esac
	local pid; pid=$(eng_pid $name)
	[ -n "$pid" ] && [ "$pid" != 0 ] || fail "$name has no pid"
	remember_pid $pid
}

eng_pid() {
	case $ENG in
	ctr) ctr_cli task ls | awk -v n=$1 '$1 == n {print $2}' ;;
	*) ${ENG}_cli inspect -f '{{.State.Pid}}' $1 ;;
	esac
}

eng_exec() {
	local name=$1; shift
	case $ENG in
	ctr) ctr_cli task exec --exec-id x$RANDOM $name "$@" ;;
	*) ${ENG}_cli exec $name "$@" ;;
	esac
}

eng_stop() {
	case $ENG in
	ctr) ctr_cli task kill -s TERM $1 ;;
	*) ${ENG}_cli stop -t 10 $1 > /dev/null ;;
	esac
}

eng_kill() {
	case $ENG in
	ctr) ctr_cli task kill -s KILL $1 ;;
	*) ${ENG}_cli kill $1 > /dev/null ;;
	esac
}

# The name dynprof gives container $1: the engine's own; containerd's
# "<namespace>/<id>"; rootless podman's "<name>@<uid>" (on this cgroup v1
# host its container has no cgroup of its own: named from its conmon,
# README, Containers).
named() {
	case $ENG in
	ctr) echo dpt$SFX/$1 ;;
	podmanu) echo "$1@$(id -u $PU)" ;;
	*) echo $1 ;;
	esac
}

# dynprof's selection of container $1's job: by name where it is named,
# and by the test's own program always.
select_of() {
	local n; n=$(named $1)
	[ "$n" = - ] && echo "--exe=$EXE" || echo "--container=$n --exe=$EXE"
}

# --list's: by name where it is named (--list takes no --exe).
list_of() {
	local n; n=$(named $1)
	[ "$n" = - ] || echo "--container=$n"
}

dpe() { timeout -s KILL 90 env "${DPENV[@]}" "$DP" --device="$T/dev/davinci*" "$@"; }

# ---- what each engine gets -------------------------------------------------

# --list names the container as the engine does; attaching by that name
# starts and stops a window whose folder comes out of the container into
# --output/<name>/, recorded with the container and command.
list_attach_copy_out() {
	local name=dpt-a$SFX pid n; eng_up $1
	eng_run $name
	pid=$(eng_pid $name); n=$(named $name)
	wait_until 10 test -S /proc/$pid/root/root/dynamic_profiling_socket_1 || fail "no socket in $name"
	dpe --list $(list_of $name) > $T/out
	local user=root; [ $ENG = podmanu ] && user=$PU # the host's name of its uid
	expect_line "^$pid +1 +$n +$user +0 +/proc/$pid/root/root/dynamic_profiling_socket_1 +$EXE $CARD_IN 600$"
	dpe --list --json $(list_of $name) > $T/list
	if [ "$n" = - ]; then
		grep -q "\"pid\":$pid,.*\"container\":null,\"container_name\":null" $T/list || fail "named: $(cat $T/list)"
	else
		grep -q "\"pid\":$pid,.*\"container_name\":\"$n\"" $T/list || fail "no name: $(cat $T/list)"
	fi
	printf 'start\nstop\n' | dpe --pid=auto $(select_of $name) --output=$T/o > $T/out 2>&1
	expect_status 0 $?
	expect_line "^\[INFO\] targets: $pid$"
	local where=$T/o/${n//\//_}; [ "$n" = - ] && where=$T/o # a '/' in a name is '_' in a folder's
	expect_line "^\[INFO\] pid $pid: window saved in $where/PROF_[0-9]{6}_[0-9]{17}_00000001[A-R]{8}$"
	local d; d=$(sed -n "s|^\[INFO\] pid $pid: window saved in ||p" $T/out)
	[ -s $d/host/end_info ] && [ -s $d/host/sample.json ] || fail "$d incomplete: $(ls -R $d)"
	[ -z "$(ls -A /proc/$pid/root/root/.dynprof/*/ 2>/dev/null)" ] ||
		fail "folders left inside: $(ls -R /proc/$pid/root/root/.dynprof)"
	local c=null; [ "$n" != - ] && c="\"$n\""
	grep -q "\"pid\":$pid,.*\"container\":$c,.*\"command\":\"$EXE $CARD_IN 600\"" $T/o/*_dynprof_windows ||
		fail "window record without its container and command: $(cat $T/o/*_dynprof_windows)"
}

test_docker_list_attach_copy_out() { list_attach_copy_out docker; }
test_podman_list_attach_copy_out() { list_attach_copy_out podman; }
test_podman_rootless_list_attach_copy_out() { list_attach_copy_out podmanu; }
test_ctr_list_attach_copy_out() { list_attach_copy_out ctr; }

# monitor [dynprof args]: follow mode with a control socket, in the
# background, acting on this test's job only.
monitor() {
	mkfifo $T/in
	# $T/out before the FIFO: emptied before the caller goes on (see dp_background).
	env "${DPENV[@]}" "$DP" --pid=auto --follow --device="$T/dev/davinci*" --output=$T/o \
		--control=unix:$T/ctl --events=json:$T/ev "$@" > $T/out 2>&1 < $T/in &
	DP_PID=$!
	remember_pid $DP_PID
	exec 7> $T/in
	wait_until 10 grep -q '^\[INFO\] following card users' $T/out || { cat $T/out; fail "follow mode did not start"; }
}
remote() { timeout -s KILL 30 "$DP" --remote=$T/ctl "$@" > $T/r 2>&1; }

# A job started after the monitor joins; --remote by container=NAME starts
# and stops its windows; `stop` of the engine mid-window saves the window,
# `kill` saves it incomplete with the reason.
follow_remote_stop_kill() {
	local a=dpt-f$SFX b=dpt-k$SFX pa pb; eng_up $1
	local na nb; na=$(named $a); nb=$(named $b)
	local sel=(--exe=$EXE); [ "$na" != - ] && sel=(--container=$na --container=$nb --exe=$EXE)
	monitor "${sel[@]}"
	eng_run $a
	pa=$(eng_pid $a)
	wait_until 20 grep -q "^\[INFO\] target joined: pid $pa " $T/out || { cat $T/out; fail "$a not joined"; }
	local by="container=$na"; [ "$na" = - ] && by="pid=$pa"
	remote start $by
	grep -q "start: .*pid $pa success" $T/r || { cat $T/r; fail "no start for $by"; }
	remote stop $by
	grep -q "stop: .*pid $pa success" $T/r || { cat $T/r; fail "no stop for $by"; }
	remote start $by
	eng_stop $a
	wait_until 20 grep -q "target left: pid $pa" $T/out || { cat $T/out; fail "$a did not leave"; }
	local where=$T/o/${na//\//_}; [ "$na" = - ] && where=$T/o
	# The window's fate comes after the leave, once its folder is moved out.
	wait_until 10 eval '[ "$(grep -c "^\[INFO\] pid $pa: window saved in " $T/out)" = 2 ]' ||
		{ cat $T/out; fail "not two windows saved"; }
	expect_line "^\[INFO\] pid $pa: window saved in $where/PROF_[0-9_]+00000001[A-R]{8}$"
	# Another container, killed mid-window.
	eng_run $b
	pb=$(eng_pid $b)
	wait_until 20 grep -q "^\[INFO\] target joined: pid $pb " $T/out || { cat $T/out; fail "$b not joined"; }
	by="container=$nb"; [ "$nb" = - ] && by="pid=$pb"
	remote start $by
	grep -q "start: .*pid $pb success" $T/r || { cat $T/r; fail "no start for $by"; }
	eng_kill $b
	wait_until 20 grep -q "target left: pid $pb" $T/out || { cat $T/out; fail "$b did not leave"; }
	where=$T/o/${nb//\//_}; [ "$nb" = - ] && where=$T/o
	wait_until 10 grep -q "pid $pb: window saved incomplete" $T/out || { cat $T/out; fail "no incomplete window"; }
	expect_line "^\[WARNING\] pid $pb: window saved incomplete in $where/PROF_[0-9_]+00000001[A-R]{8}: it has no host/end_info"
	dp_send quit
	wait $DP_PID
	# The join event names the container; so do the --control windows' records.
	local c=null; [ "$na" != - ] && c="\"$na\""
	[ "$(grep -c "^{\"pid\":$pa,\"nspid\":1,\"container\":$c,\"command\":\"$EXE $CARD_IN 600\",\"window\":[12]," $T/o/*_dynprof_windows)" = 2 ] ||
		fail "window records without container and command: $(cat $T/o/*_dynprof_windows)"
	grep -q "\"event\":\"target-join\",.*\"pid\":$pa,\"nspid\":1,\"container\":$c," $T/ev ||
		fail "target-join without its container: $(cat $T/ev)"
}

test_docker_follow_remote_stop_kill() { follow_remote_stop_kill docker; }
test_podman_follow_remote_stop_kill() { follow_remote_stop_kill podman; }
test_podman_rootless_follow_remote_stop_kill() { follow_remote_stop_kill podmanu; }
test_ctr_follow_remote_stop_kill() { follow_remote_stop_kill ctr; }

# Issue 25 item 2 (branch netns): a container stopped mid-window gives no
# error after its window is saved ("cannot join: no process N": the joiner
# tried a pid the session had dropped). Three rounds: it came on 5 of 11.
no_false_error_after_stop() {
	local i name pid; eng_up $1
	local sel=(--exe=$EXE); [ "$(named x)" != - ] && sel=(--container=$(named dpt-s1$SFX) \
		--container=$(named dpt-s2$SFX) --container=$(named dpt-s3$SFX) --exe=$EXE)
	monitor "${sel[@]}"
	for i in 1 2 3; do
		name=dpt-s$i$SFX
		eng_run $name
		pid=$(eng_pid $name)
		wait_until 20 grep -q "^\[INFO\] target joined: pid $pid " $T/out || { cat $T/out; fail "$name not joined"; }
		remote start pid=$pid
		eng_stop $name
		wait_until 20 grep -q "pid $pid: window saved in" $T/out || { cat $T/out; fail "$name: no window saved"; }
	done
	sleep 1
	dp_send quit
	wait $DP_PID
	expect_no_line "cannot join|ERROR"
	json_has '.event == "error"' $T/ev && fail "error events: $(cat $T/ev)"
	return 0
}

test_docker_stop_gives_no_false_error() { no_false_error_after_stop docker; }
test_podman_stop_gives_no_false_error() { no_false_error_after_stop podman; }

# A wrapper inside the container: a shell script sets the agent's
# environment and execs the job (the engine runs the script, the job takes
# its pid 1); and one that runs the job as its child (not pid 1 inside).
wrapped_job() {
	local a=dpt-w$SFX b=dpt-c$SFX pa pb; eng_up $1
	cat > $T/rootfs/job/child.sh <<-EOS
	export PROFILING_MODE=dynamic LD_PRELOAD=/job/libdynprof_agent.so DYNPROF_AGENT_DEVICES='$(dirname $CARD_IN)/davinci*' $(san_env)
	$EXE "\$@"
	exit 0
	EOS
	tar -C $T/rootfs -cf $T/img.tar . && ${ENG}_up # the image again, with child.sh
	local na nb; na=$(named $a); nb=$(named $b)
	local sel=(--exe=$EXE); [ "$na" != - ] && sel=(--container=$na --container=$nb --exe=$EXE)
	monitor "${sel[@]}"
	NO_AGENT=1 eng_run $a -- /bin/sh /job/wrap.sh $CARD_IN 600
	NO_AGENT=1 eng_run $b -- /bin/sh /job/child.sh $CARD_IN 600
	pa=$(eng_pid $a)
	wait_until 20 grep -q "^\[INFO\] target joined: pid $pa ($EXE $CARD_IN 600)" $T/out || { cat $T/out; fail "$a not joined"; }
	wait_until 20 eval "grep -q '^\[INFO\] target joined: pid [0-9]* ($EXE $CARD_IN 600)' $T/out && [ \$(grep -c 'target joined' $T/out) = 2 ]" ||
		{ cat $T/out; fail "$b's job not joined"; }
	pb=$(sed -n "s/^\[INFO\] target joined: pid \([0-9]*\) .*/\1/p" $T/out | grep -vx $pa)
	remember_pid $pb
	local nsb; nsb=$(awk '/^NSpid:/ {print $NF}' /proc/$pb/status)
	[ -n "$nsb" ] && [ "$nsb" != 1 ] || fail "$b's job is pid 1 inside: $(grep NSpid /proc/$pb/status)"
	dp_send start stop
	wait_until 20 eval '[ $(grep -c "window saved in" $T/out) = 2 ]' || { cat $T/out; fail "no windows saved"; }
	local wa=$T/o/${na//\//_} wb=$T/o/${nb//\//_}; [ "$na" = - ] && wa=$T/o wb=$T/o
	expect_line "^\[INFO\] pid $pa: window saved in $wa/PROF_[0-9_]+00000001[A-R]{8}$"
	expect_line "^\[INFO\] pid $pb: window saved in $wb/PROF_[0-9_]+$(printf %08d $nsb)[A-R]{8}$"
	dp_send quit
	wait $DP_PID
	expect_status 0 $?
}

test_docker_wrapper_in_the_container() { wrapped_job docker; }
test_podman_wrapper_in_the_container() { wrapped_job podman; }
test_podman_rootless_wrapper_in_the_container() { wrapped_job podmanu; }
test_ctr_wrapper_in_the_container() { wrapped_job ctr; }

# Busy across network namespaces (issue 25 item 1, branch netns): the job's
# server, in its container's netns, held by another client WHERE (host: a
# client on the host; same: one exec'd in the job's container; other: one
# in another container sharing the job's /root): --list reads busy,
# --pid=auto takes nothing and connects to nothing (the agent's log shows
# one client).
busy_across() { # busy_across ENGINE WHERE
	local name=dpt-b$SFX other=dpt-o$SFX pid; eng_up $1
	mkdir -p $T/share
	[ $ENG = podmanu ] && chown $PU $T/share # root inside is the user
	local hold="exec /job/wire_client --connect=/root/dynamic_profiling_socket_1 'params {\"result_dir\":\"/root/w\"}' 'expect 0,0' 'sleep 600' > /root/holder.out 2>&1"
	AGENT_ENV=DYNPROF_AGENT_LOG=1 eng_run $name -v $T/share:/root -- /bin/sh -c "exec $EXE $CARD_IN 600 2> /root/agent.log"
	pid=$(eng_pid $name)
	wait_until 10 test -S $T/share/dynamic_profiling_socket_1 || fail "no socket in $name"
	dpe --list --json $(list_of $name) > $T/list
	grep -q "{\"pid\":$pid,[^}]*\"socket_state\":\"listening\"" $T/list || fail "not listening before: $(cat $T/list)"
	case $2 in
	host) "$WIRE" --connect=$T/share/dynamic_profiling_socket_1 "params {\"result_dir\":\"$T/share/w\"}" 'expect 0,0' \
		'sleep 600' > $T/share/holder.out 2>&1 &
		remember_pid $! ;;
	same) eng_exec $name /bin/sh -c "unset LD_PRELOAD PROFILING_MODE; $hold" > /dev/null 2>&1 &
		remember_pid $! ;;
	other) NO_AGENT=1 eng_run $other -v $T/share:/root -- /bin/sh -c "$hold" ;;
	esac
	wait_until 10 grep -q '^reply 0,0' $T/share/holder.out || fail "the holder was not served: $(cat $T/share/holder.out)"
	dpe --list --json $(list_of $name) > $T/list
	grep -q "{\"pid\":$pid,[^}]*\"socket_state\":\"busy\"" $T/list || fail "held from $2, not busy: $(cat $T/list)"
	dpe --pid=auto $(select_of $name) --output=$T/o < /dev/null > $T/out 2>&1
	expect_status 255 $?
	expect_line "no card-using process with a listening dynamic profiling socket"
	sleep 1.2 # a connection made would be accepted by now
	[ "$(grep -c 'client connected' $T/share/agent.log)" = 1 ] || fail "another client connected: $(cat $T/share/agent.log)"
}

test_docker_busy_held_from_the_host() { busy_across docker host; }
test_docker_busy_held_in_the_same_container() { busy_across docker same; }
test_docker_busy_held_from_another_container() { busy_across docker other; }
test_podman_busy_held_from_the_host() { busy_across podman host; }
test_podman_busy_held_in_the_same_container() { busy_across podman same; }
test_podman_busy_held_from_another_container() { busy_across podman other; }
test_ctr_busy_held_from_the_host() { busy_across ctr host; }
test_ctr_busy_held_in_the_same_container() { busy_across ctr same; }
test_ctr_busy_held_from_another_container() { busy_across ctr other; }

# `docker rename` while a monitor runs: a joined target keeps the name it
# had when this run first saw it (its folders stay in --output/<that name>/,
# container=OLD selects it, container=NEW does not); a new dynprof, as
# --list, shows the new name. README: Containers.
test_docker_rename_keeps_the_join_time_name() {
	local old=dpt-r$SFX new=dpt-n$SFX pid; eng_up docker
	monitor --exe=$EXE
	eng_run $old
	pid=$(eng_pid $old)
	wait_until 20 grep -q "^\[INFO\] target joined: pid $pid " $T/out || { cat $T/out; fail "not joined"; }
	docker_cli rename $old $new || fail "docker rename failed"
	dpe --list --container=$new > $T/list
	grep -Eq "^$pid +1 +$new " $T/list || fail "--list has not the new name: $(cat $T/list)"
	remote start container=$new
	grep -q "no target matches container=$new" $T/r || { cat $T/r; fail "the new name selected a joined target"; }
	remote start container=$old
	grep -q "start: .*pid $pid success" $T/r || { cat $T/r; fail "the join-time name did not select it"; }
	remote stop container=$old
	wait_until 10 grep -q "pid $pid: window saved in $T/o/$old/PROF_" $T/out || { cat $T/out; fail "not saved under $old"; }
	dp_send quit
	wait $DP_PID
}

# Podman on any storage driver: its containers.json is <driver>-containers/
# beneath the graphroot (vfs: no overlay here, or chosen), not only overlay's.
test_podman_vfs_storage_is_named() {
	local name=dpt-v$SFX pid
	PODMAN_STORE="--root=$T/podman/root --runroot=$T/podman/run --storage-driver=vfs"
	eng_up podman
	eng_run $name
	pid=$(eng_pid $name)
	[ -s $T/podman/root/vfs-containers/containers.json ] || fail "not on vfs: $(ls $T/podman/root)"
	dpe --list --container=$name > $T/out
	expect_line "^$pid +1 +$name "
}

# The graphroot podman's storage.conf names (podman given no --root): found
# through that storage.conf ($DYNPROF_STORAGE_CONF for the test, else
# /etc/containers/storage.conf), with its driver.
test_podman_graphroot_from_storage_conf() {
	local name=dpt-g$SFX pid
	mkdir -p $T/podman
	printf '[storage]\ndriver = "vfs"\nrunroot = "%s"\ngraphroot = "%s"\n' $T/podman/crun $T/podman/cstore > $T/storage.conf
	export CONTAINERS_STORAGE_CONF=$T/storage.conf
	PODMAN_STORE=""
	eng_up podman
	eng_run $name
	pid=$(eng_pid $name)
	[ -s $T/podman/cstore/vfs-containers/containers.json ] || fail "storage.conf not taken: $(ls -R $T/podman | head)"
	DPENV=(DYNPROF_STORAGE_CONF=$T/storage.conf)
	dpe --list --container=$name > $T/out
	expect_line "^$pid +1 +$name "
}

# A server that does not answer: the error names the host pid and the
# container beside msprof's words (which name the socket file, the same
# in every container).
test_docker_connect_error_names_the_host_pid_and_container() {
	local name=dpt-e$SFX pid; eng_up docker
	eng_run $name
	pid=$(eng_pid $name)
	local s=/proc/$pid/root/root/dynamic_profiling_socket_1
	wait_until 10 test -S $s || fail "no socket"
	# The agent's socket replaced by one nobody listens on.
	rm -f $s && python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" $s || fail "no stale socket"
	dpe --pid=$pid --output=$T/o < /dev/null > $T/out 2>&1
	expect_line "cannot connect to server for pid dynamic_profiling_socket_1, maybe server is closed \(.*; pid $pid in container $name, socket $s\)$"
}

test_podman_rootless_busy_held_from_the_host() { busy_across podmanu host; }
test_podman_rootless_busy_held_in_the_same_container() { busy_across podmanu same; }
test_podman_rootless_busy_held_from_another_container() { busy_across podmanu other; }

# A long container name moves its column: every row's SOCKET and COMMAND
# start where the header's do.
test_docker_long_name_keeps_list_columns() {
	local long=dpt-a-rather-long-container-name-$SFX short=dpt-s$SFX; eng_up docker
	eng_run $long
	eng_run $short
	dpe --list --container=$long --container=$short > $T/out
	[ "$(grep -c ' /proc/' $T/out)" = 2 ] || { cat $T/out; fail "not two rows"; }
	awk 'NR == 1 { s = index($0, "SOCKET"); c = index($0, "COMMAND"); next }
	     { if (index($0, " /proc/") + 1 != s || index($0, " /job/") + 1 != c) bad = 1 }
	     END { exit bad }' $T/out || { cat $T/out; fail "columns broken"; }
}

# nerdctl (not packaged for Debian 12, so not run here): a container of
# containerd's, run by real ctr with a 64-hex id as nerdctl gives one, and
# the name state nerdctl keeps beside it, made by the test as nerdctl makes
# it: <data root>/<first 8 hex of sha256(containerd's address)>/names/
# <namespace>/<name>, a root file holding the id, in 0700 folders.
# --list names it so; a name file another user owns names nothing.
test_ctr_nerdctl_name_from_its_names_folder() {
	local id; id=$(printf 'dpt%s' $SFX | sha256sum | cut -c1-64)
	local name=dpt-nerd$SFX pid; eng_up ctr
	local store=$T/nerdctl/$(printf %s "$T/ctrd/sock" | sha256sum | cut -c1-8)
	mkdir -p -m 0700 $T/nerdctl $store $store/names $store/names/dpt$SFX
	printf %s $id > $store/names/dpt$SFX/$name && chmod 600 $store/names/dpt$SFX/$name
	eng_run $id
	pid=$(eng_pid $id)
	DPENV+=(DYNPROF_NERDCTL_ROOT=$T/nerdctl)
	dpe --list --container=$name > $T/out
	expect_line "^$pid +1 +$name +root "
	printf 'start\nstop\n' | dpe --pid=auto --container=$name --exe=$EXE --output=$T/o > $T/out 2>&1
	expect_status 0 $?
	expect_line "^\[INFO\] pid $pid: window saved in $T/o/$name/PROF_"
	# The same file, a user's: the id's first 12 characters, no name.
	chown nobody $store/names/dpt$SFX/$name
	dpe --list --container=${id:0:12} > $T/out
	expect_line "^$pid +1 +${id:0:12} +root "
	expect_no_line "$name"
}

# Rootless podman whose own storage.conf (~/.config/containers/, which
# podman reads instead of root's) puts its store elsewhere, with a
# variable, on vfs: named from that store, read with the user's rights.
test_podman_rootless_graphroot_from_the_users_storage_conf() {
	local name=dpt-ug$SFX pid; eng_up_user_conf
	eng_run $name
	pid=$(eng_pid $name)
	[ -s $T/u/$PU/home/elsewhere/vfs-containers/containers.json ] ||
		fail "the user's storage.conf not taken: $(ls -R $T/u/$PU/home | head)"
	[ -e $T/u/$PU/home/.local/share/containers/storage/vfs-containers/containers.json ] &&
		fail "a store in the default place too"
	dpe --list --container=$(named $name) > $T/out
	expect_line "^$pid +1 +$(named $name) +$PU "
}

# podmanu's user, its storage.conf made before its first podman command.
eng_up_user_conf() {
	ENG=podmanu
	make_card 0 > /dev/null
	make_rootfs
	PODMANU_PRE='mkdir -p $H/.config/containers && printf "[storage]\ndriver = \"vfs\"\ngraphroot = \"\$HOME/elsewhere\"\n" > $H/.config/containers/storage.conf'
	podmanu_up
}

# The user's storage.conf is the user's: one naming a store the user may
# not read (root's, 0700) gives nothing from there, as podman run by the
# user would get nothing; the container keeps the name its real store
# gives.
test_podman_rootless_store_is_read_with_the_users_rights() {
	local name=dpt-ur$SFX pid id; eng_up podmanu
	eng_run $name
	pid=$(eng_pid $name)
	id=$(podmanu_cli inspect -f '{{.Id}}' $name)
	mkdir -p -m 0700 $T/secret/vfs-containers
	printf '[{"id":"%s","names":["stolen"]}]' $id > $T/secret/vfs-containers/containers.json
	as_user $PU sh -c "mkdir -p $T/u/$PU/home/.config/containers &&
		printf '[storage]\ngraphroot = \"$T/secret\"\n' > $T/u/$PU/home/.config/containers/storage.conf" ||
		fail "cannot write the user's storage.conf"
	dpe --list --container=$(named $name) > $T/out
	expect_line "^$pid +1 +$(named $name) +$PU "
	expect_no_line "stolen"
}
