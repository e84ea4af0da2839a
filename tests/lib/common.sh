# Helpers for integration tests: real targets, real sockets, assertions.
# Each test runs in a subshell with $T, a fresh temporary folder; every
# process a helper starts is recorded and killed by cleanup_test.

B=$DYNPROF_BUILD
SYSCALLER=$B/tests/peers/syscaller
DP=$B/dynprof
AGENT_SO=$B/libdynprof_agent.so
CARD_USER=$B/tests/peers/card_user
BAD_PEER=$B/tests/peers/bad_peer
SWAPPER=$B/tests/peers/swapper
DEMO=$B/demo_task
ROOT_HOME=$(getent passwd 0 | cut -d: -f6)
ROOT_HOME=${ROOT_HOME%/}

# The reason goes to stderr, so a helper failing inside $(...) shows why
# instead of handing its caller the message as a value.
fail() { echo "$*" >&2; exit 1; }

# remember_pid PID: killed by cleanup_test, if it is still the same process.
# Its start time is kept with it: pids wrap (pid_max 32768 here, two suites
# start thousands of processes a minute), and a pid that ended early may be
# another suite's process, even its test's shell, by cleanup time.
remember_pid() { echo "$1 $(pid_start "$1")" >> "$T/.pids"; }
# pid_start PID: its start time (field 22 of /proc/PID/stat), empty when gone.
pid_start() {
	local s
	{ read -r s < "/proc/$1/stat"; } 2>/dev/null || return 0
	set -- ${s##*) }
	echo "${20}"
}
remember_file() { echo "$1" >> "$T/.files"; }
# socket_files_of PID: the socket files in root's home named after PID (both flavours).
socket_files_of() { echo "$ROOT_HOME/dynamic_profiling_socket_$1" "$ROOT_HOME/dyn_prof_sock_$1"; }
# kill_hard PID...: SIGKILL, which runs no cleanup of the agent's: the
# socket file each served is noted first (stopped, so it binds none after
# the look) with its inode, and cleanup_test removes that same file. Not by
# its pid alone: the pid may be another's by then, its file a new one.
kill_hard() {
	local p f
	for p in "$@"; do kill -STOP "$p" 2>/dev/null; done
	for p in "$@"; do
		# (A file there is its own: the pid is its own while it is stopped.)
		for f in $(socket_files_of "$p"); do
			[ -S "$f" ] && stat -c '%i %n' "$f" >> "$T/.sockets" 2>/dev/null
		done
		kill -KILL "$p" 2>/dev/null
	done
	return 0
}
# The files kill_hard noted, each if it is still the same file.
remove_noted_sockets() {
	local ino f
	while read -r ino f; do
		[ "$(stat -c %i "$f" 2>/dev/null)" = "$ino" ] && rm -f "$f"
	done < "$T/.sockets"
}
# at_cleanup CMD [ARGS...]: run by cleanup_test before the test's processes
# are killed, the last added first (a daemon's containers before the daemon).
at_cleanup() { printf '%q ' "$@" >> "$T/.hooks"; echo >> "$T/.hooks"; }

# True when none of the pids runs any more (a zombie counts as gone). A
# zombie leader is not enough: its other threads may still be exiting, their
# files (a listening socket) still open; each leaves /proc/PID/task as it
# has closed them (seen once: a SIGKILLed agent's socket still accepted).
all_gone() {
	local p state t
	for p in "$@"; do
		state=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' /proc/$p/status 2>/dev/null)
		[ -n "$state" ] && [ "$state" != Z ] && return 1
		for t in /proc/$p/task/*; do
			[ -e "$t" ] && [ "${t##*/}" != "$p" ] && return 1
		done
	done
	return 0
}

# The processes that hold one of the test's card nodes (an fd on a path in
# $T/dev): a worker the test did not remember (a launched job's child)
# among them. Only the test's devices have those numbers, so they are the
# test's. They go before the card namespace does: its devices' numbers are
# given to the next device made, and a holder left behind would be a card
# user of another test's card.
# Also a holder that opened a node of one of the test's numbers made
# elsewhere (a container's own /dev, a default /dev/davinciNN): its fd names
# that path, not $T/dev. Only processes started after the test began: one
# from before holding a number of ours holds a device that had it earlier.
card_holders() {
	{
		find /proc/[0-9]*/fd -maxdepth 1 -lname "$T/dev/*" 2>/dev/null | cut -d/ -f3
		number_holders
		env_holders
	} | sort -u
}
# And every process whose environment names the test's cards (the agent's
# DYNPROF_AGENT_DEVICES='$T/dev/...'), started after the test began: a
# launched job's worker not holding its card yet (or any more) that would
# open it later, or outlive the card and be counted a card user of the
# next test whose card gets its number (seen: one of a launch test, alive
# after its test, was an extra target of another clone's --pid=auto).
env_holders() {
	local p since=${TEST_SINCE:-$(pid_start $BASHPID)}
	for p in $(grep -alsF -- "$T/dev/" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
		[ "$p" = $$ ] || [ "$p" = "$BASHPID" ] && continue
		[ "$(pid_start "$p")" -ge "${since:-0}" ] 2>/dev/null && echo "$p"
	done
}
number_holders() {
	local f maj min want="" fds p since
	# (Its namespace gone early, its numbers may be another run's cards:
	# their holders are not the test's. Seen: a SLURM test's cleanup ended
	# its own card sleeper, then killed another test's card users.)
	[ -d "$T/.cards" ] && card_ns_alive || return 0
	for f in "$T"/.cards/*; do
		read -r maj min < "$f" && want+=" $(printf '%x:%x' "$maj" "$min")"
	done
	fds=$(find /proc/[0-9]*/fd -maxdepth 1 -lname '*davinci*' 2>/dev/null)
	[ -n "$want" ] && [ -n "$fds" ] || return 0
	since=${TEST_SINCE:-$(pid_start $BASHPID)}
	for p in $(stat -L -c '%t:%T %n' $fds 2>/dev/null | awk -v w="$want" '
		BEGIN { n = split(w, a, " "); for (i = 1; i <= n; i++) m[a[i]] = 1 }
		($1 in m) { split($2, q, "/"); print q[3] }' | sort -u); do
		[ "$(pid_start "$p")" -ge "${since:-0}" ] 2>/dev/null && echo "$p"
	done
}
drop_cards() {
	local p left
	# (kill_hard: a holder killed here runs no cleanup of its own, and the
	# next process given its pid would seem to listen before it does.)
	for p in $(card_holders); do kill_hard "$p"; done
	wait_until 3 eval '[ -z "$(card_holders)" ]'
	left=$(card_holders)
	[ -z "$left" ] || echo "cleanup: card holders left: $left"
	# (Only while it is still the sleeper: a pid that ended may be another's.)
	if card_ns_alive; then kill -KILL "$(cat "$T/.cardns")" 2>/dev/null; fi
}

cleanup_test() {
	local status=$? p start now i pids=() starts=() me=$BASHPID
	# The test's start (this shell's): card_holders' "started after".
	TEST_SINCE=$(pid_start $me)
	# A test's SLURM cluster (tests/lib/slurm_cluster.sh) goes down first, whole.
	[ -f "$T/.slurm" ] && declare -F slurm_down >/dev/null && slurm_down "$(cat "$T/.slurm")"
	[ -f "$T/.hooks" ] && while read -r h; do eval "$h"; done < <(tac "$T/.hooks")
	# Only those still the processes remembered (see remember_pid); a gone
	# one's socket file goes too, unless its pid now names another process.
	[ -f "$T/.pids" ] && while read -r p start; do
		[ -n "$p" ] || continue
		now=$(pid_start "$p")
		if [ -n "$start" ] && [ "$now" = "$start" ]; then
			pids+=("$p") starts+=("$start")
		elif [ -z "$now" ]; then
			rm -f $(socket_files_of "$p")
		fi
	done < "$T/.pids"
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	# Let them exit on their own, so sanitizer builds write their reports.
	wait_until 3 all_gone "${pids[@]}"
	for i in "${!pids[@]}"; do
		p=${pids[i]}
		[ "$(pid_start "$p")" = "${starts[i]}" ] && kill -KILL "$p" 2>/dev/null
		[ -z "$(pid_start "$p")" ] || [ "$(pid_start "$p")" = "${starts[i]}" ] &&
			rm -f $(socket_files_of "$p")
	done
	[ -s "$T/.cardns" ] && drop_cards
	[ -f "$T/.cgroups" ] && remove_cgroups
	[ -f "$T/.users" ] && remove_users
	[ -f "$T/.files" ] && while read -r f; do rm -f "$f"; done < "$T/.files"
	[ -f "$T/.sockets" ] && remove_noted_sockets
	# A sanitizer report from any process of the test fails the test.
	if grep -qs -E "ERROR: (Address|Leak)Sanitizer|runtime error:" "$T"/*.log "$T/out"; then
		grep -h -A5 -E "ERROR: (Address|Leak)Sanitizer|runtime error:" "$T"/*.log "$T/out" 2>/dev/null | head -40
		echo "sanitizer report above"
		status=1
	fi
	rm -rf "$T"
	exit $status
}

# Every user a test makes is named dp<letter><runner's pid>x<random>: the
# runner's pid, which no other run has at the same time, keeps two suites'
# names apart; hostile.sh's host_state leaves the passwd lines of such users
# (this suite's and another's, made and removed meanwhile) out.
TEST_USER_RE='^dp[a-z][0-9]+(x[0-9]+)?:'

# Users a test made (make_user in hostile.sh; one name a line in $T/.users):
# every process still running as one (all started by the test: a writer
# blocked on a FIFO, a loop in its namespace) is killed by its pid, so none
# outlives the test holding the suite lock; then a forced userdel.
remove_users() {
	local u p
	while read -r u; do
		for p in $(ps -o pid= -u "$u" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		userdel -f "$u" >/dev/null 2>&1
	done < "$T/.users"
}

# Cgroups a test made (one path a line in $T/.cgroups): empty them, remove them.
remove_cgroups() {
	local cg p
	while read -r cg; do
		for p in $(cat $cg/cgroup.procs 2>/dev/null); do
			# Back to the hierarchy's root (/sys/fs/cgroup/<hierarchy>).
			echo $p > "$(echo "$cg" | cut -d/ -f1-5)/cgroup.procs" 2>/dev/null
		done
		rmdir $cg 2>/dev/null
	done < <(tac "$T/.cgroups") # deepest first: a parent made for a child goes after it
}

# A fake card: a character device node of our own. The kernel filter knows
# cards by device number, and --pid=auto, --follow and --list take every
# process of the host that holds a node with a card's number: borrowed
# numbers (/dev/full's) would make any other holder of them, another
# checkout's tests or a demo_task left running, a target of ours, and ours
# theirs. So each test's cards are devices only the test's processes hold:
# macvtap devices (a character device per interface, its minor the host's
# own while the interface lives; it opens like any node wherever it is made)
# on interfaces in a network namespace of the test's, held by one sleeper
# that cleanup_test ends with the test's other processes (the namespace and
# its devices go with it). A macvtap takes at most 256 opens at a time
# (MAX_TAP_QUEUES): more holders of one card need make_card_alias.
# DYNPROF_TEST_SHARED_CARDS=1 (a kernel without macvtap): borrowed numbers,
# card 0 = /dev/full (1,7), card 1 = /dev/net/tun (10,200), card 2 = vcs
# (7,0), as before; then the suite is not hermetic.
SHARED_CARD_NUMBERS=("1 7" "10 200" "7 0")

# card_netns: the pid of the test's card sleeper (started on first use), in
# its own network namespace (a veth pair: the macvtaps' parent) and mount
# namespace (a sysfs of that network namespace, where the devices' numbers are).
card_netns() {
	[ -s $T/.cardns ] && { cat $T/.cardns; return; }
	# Its fds closed: the caller's $(...) and the lock must not wait for it.
	unshare --net --mount --propagation private sh -c 'ip link add dpcard type veth peer name dppeer &&
		mount -t sysfs sysfs /sys && echo ready && exec sleep 100000' \
		< /dev/null > $T/.cardns.log 2>&1 9>&- &
	local pid=$!
	# Not remembered: cleanup_test ends it last, once no process holds a card of it.
	wait_until 5 grep -q '^ready$' $T/.cardns.log ||
		fail "cannot make the test's card namespace (macvtap needs CONFIG_MACVTAP; DYNPROF_TEST_SHARED_CARDS=1 borrows numbers instead): $(cat $T/.cardns.log)"
	echo $pid > $T/.cardns
	pid_start $pid > $T/.cardns.start
	echo $pid
}
# card_ns_alive: the test's card namespace still lives, so its numbers are
# still its devices'. Once it is gone they may be another test's cards.
card_ns_alive() {
	[ -s "$T/.cardns" ] && [ -s "$T/.cardns.start" ] &&
		[ "$(pid_start "$(cat "$T/.cardns")")" = "$(cat "$T/.cardns.start")" ]
}

# card_device NAME: "MAJOR MINOR" of the test's device NAME (a macvtap made
# on first use). Made under a lock: helpers run in $(...) subshells, some at once.
card_device() {
	mkdir -p $T/.cards
	(
		flock 9
		if ! [ -s $T/.cards/$1 ]; then
			local ns dev
			ns=$(card_netns) || exit 1
			dev=$(nsenter -t $ns -n -m sh -c "ip link add link dpcard name $1 type macvtap &&
				cat /sys/class/net/$1/tap*/dev" 2>&1) || fail "cannot make card device $1: $dev"
			[[ $dev =~ ^[0-9]+:[0-9]+$ ]] || fail "card device $1: no device number ($dev)"
			echo "${dev/:/ }" > $T/.cards/$1
		fi
	) 9> $T/.cards.lock || exit 1
	cat $T/.cards/$1
}

card_numbers() { # card_numbers INDEX -> "MAJOR MINOR" of the test's card INDEX
	if [ "${DYNPROF_TEST_SHARED_CARDS:-}" = 1 ]; then
		echo "${SHARED_CARD_NUMBERS[$1]}"
	else
		card_device card$1
	fi
}

make_card() { # make_card INDEX -> path
	mkdir -p "$T/dev"
	if ! [ -e "$T/dev/davinci$1" ]; then
		local numbers; numbers=$(card_numbers $1) || exit 1
		mknod "$T/dev/davinci$1" c $numbers
	fi
	echo "$T/dev/davinci$1"
}

# make_card_alias INDEX K (K >= 1): another node of card INDEX, on a device
# of its own (256 more holders): $T/dev/davinci, K zeros, INDEX (the same
# trailing number, so the same card; --device="$T/dev/davinci*" takes it).
make_card_alias() { # -> path
	local path=$T/dev/davinci$(printf "%0$(($2 + ${#1}))d" $1)
	mkdir -p "$T/dev"
	if ! [ -e "$path" ]; then
		local numbers
		if [ "${DYNPROF_TEST_SHARED_CARDS:-}" = 1 ]; then
			numbers=${SHARED_CARD_NUMBERS[$1]}
		else
			numbers=$(card_device card$1alias$2) || exit 1
		fi
		mknod "$path" c $numbers
	fi
	echo "$path"
}

# wait_until SECONDS COMMAND...: poll every 20 ms until COMMAND succeeds.
wait_until() {
	local limit=$1; shift
	local end=$((SECONDS + limit))
	while ! "$@" 2>/dev/null; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.02
	done
}

# The lines of /proc/PID/net/unix for the sockets PID itself holds (the
# file lists every socket of its network namespace, other processes' too).
unix_sockets_of() {
	local inodes
	inodes=$(ls -l /proc/$1/fd 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p' | paste -sd'|')
	[ -n "$inodes" ] || return 0
	awk -v re="^($inodes)\$" '$7 ~ re' /proc/$1/net/unix
}

# A DYNAMIC_PROFILING_KEY_PID with a leading zero (its raw text names the
# socket, dynamic_profiling_socket_0N) that no other run uses at the same
# time: N is the pid of this script's runner (its tests run one at a time).
raw_key() { echo "0$$"; }
# own_key N: a DYNAMIC_PROFILING_KEY_PID no process's pid can equal (above
# the kernel's PID_MAX_LIMIT, 4194304) and no other run uses at the same
# time ($$ as in raw_key), so a socket named by it is this test's alone even
# when the pid of a target it killed is reused at once. N: 0..255.
own_key() { echo $((4194305 + $$ * 256 + $1)); }

socket_of() { echo "$ROOT_HOME/dynamic_profiling_socket_$1"; }

# listening PATH: the unix socket bound at PATH listens (its row in
# /proc/net/unix has __SO_ACCEPTCON). Not merely `test -S`: dynprof's
# --control binds, sets the mode, then listens; a client between bind and
# listen is refused, a test's chmod before dynprof's own is undone (both
# seen under load).
listening() { awk -v p="$1" '$4 == "00010000" && $8 == p { f = 1 } END { exit !f }' /proc/net/unix; }
# has_socket PID: PID serves its socket at its own path. Not `test -S`
# alone: with pids reused (pid_max is 32768 here; a suite starts more), an
# earlier process of that pid, killed without its cleanup, may have left
# the file, and a test that signalled PID on seeing it would signal it
# before its agent armed (seen once in CI).
has_socket() { pid_serves "$1" "$(socket_of "$1")"; }
# pid_serves PID PATH: the unix socket bound at PATH is one PID holds. The
# table read is PID's network namespace's (/proc/PID/net/unix), so a
# target in a namespace of its own is seen too.
pid_serves() {
	local ino
	for ino in $(awk -v p="$2" '$8 == p { print $7 }' /proc/$1/net/unix 2>/dev/null); do
		readlink /proc/$1/fd/* 2>/dev/null | grep -qxF "socket:[$ino]" && return 0
	done
	return 1
}

# holds PID PATH: PID has PATH open.
holds() { readlink /proc/$1/fd/* 2>/dev/null | grep -qxF -- "$2"; }

# card_held PID CARD VAR=value...: waits until PID holds CARD (a card user
# listens first, then opens its card: under load, a dynprof started at the
# socket found no card user), unless the test delays the open on purpose.
card_held() {
	local pid=$1 card=$2; shift 2
	[[ " $* " == *" CARD_USER_OPEN_DELAY_MS="* ]] && return 0
	wait_until 10 holds $pid "$card" || fail "target $pid never opened its card $card"
}

# start_target [VAR=value...]: a card user serving the protocol through
# the preloaded agent, holding card $TARGET_CARD (default 0). Echoes its
# pid once its socket listens and it holds its card.
start_target() {
	local card; card=$(make_card ${TARGET_CARD:-0})
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		"$@" "$CARD_USER" "$card" 600 > "$T/target.$RANDOM.log" 2>&1 &
	local pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "target $pid never opened its socket"
	card_held $pid "$card" "$@"
	echo $pid
}

# A target that has not opened any card (NOT_SET_DEVICE on start).
start_target_without_card() {
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		"$@" "$CARD_USER" - 600 > "$T/target.$RANDOM.log" 2>&1 &
	local pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "target $pid never opened its socket"
	echo $pid
}

# start_bad_peer MODE: a misbehaving server serving its own socket path,
# as a CANN process would. Echoes its pid once it listens.
start_bad_peer() {
	"$BAD_PEER" "$1" "$ROOT_HOME/dynamic_profiling_socket_%d" > "$T/peer.$1.log" 2>&1 &
	local peer=$!
	remember_pid $peer
	wait_until 5 has_socket $peer || fail "bad_peer $1 never listened"
	echo $peer
}

# start_held_peer: a v2 server (bad_peer fork-holder) whose forked child
# keeps the connection open, so when the server dies its socket does not
# close and only an exit report tells dynprof. Echoes the server's pid;
# call remember_holder once a client connected (the child exists from then).
start_held_peer() { start_bad_peer fork-holder; }
remember_holder() {
	wait_until 5 grep -q '^holder ' $T/peer.fork-holder.log || fail "no holder child"
	remember_pid "$(sed -n 's/^holder //p' $T/peer.fork-holder.log)"
}

# start_bad_peer_for MODE PID: an impostor serving the socket path of
# another process PID. Echoes the impostor's pid.
start_bad_peer_for() {
	"$BAD_PEER" "$1" "$(socket_of "$2")" > "$T/peer.$1.log" 2>&1 &
	local peer=$!
	remember_pid $peer
	wait_until 5 pid_serves $peer "$(socket_of "$2")" || fail "bad_peer $1 never listened"
	echo $peer
}

# start_demo [demo_task options]: the bundled demo task (exports demo_step,
# serves the protocol through the linked agent). Echoes its pid once it listens.
# Without --device it holds the test's card 0 (its own node would borrow
# /dev/full's numbers: any run's --pid=auto would take it).
start_demo() { # start_demo [demo_task options] -> pid
	local device=""
	[[ " $* " == *" --device="* ]] || { device=--device=$(make_card 0) || exit 1; }
	"$DEMO" --quiet $device "$@" > "$T/demo.$RANDOM.log" 2>&1 &
	local pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "demo_task $pid never opened its socket"
	echo $pid
}

start_sleeper() { # its output must not hold the caller's $(...) open
	sleep 600 </dev/null >/dev/null 2>&1 &
	remember_pid $!
	echo $!
}

# dp_background [args...]: dynprof in the background reading commands from
# a FIFO (send them with dp_send); sets DP_PID, which the test can `wait` for.
dp_background() {
	mkfifo $T/in
	# $T/out is emptied before the FIFO opens: the exec below waits for that
	# open, so a caller never reads an earlier run's output as this one's
	# (its "following card users", its joins: under load the child opened
	# the FIFO, then truncated $T/out after the test had already read it).
	"$DP" "$@" > $T/out 2>&1 < $T/in &
	DP_PID=$!
	remember_pid $DP_PID
	exec 7> $T/in
}
dp_send() { printf '%s\n' "$@" >&7; }
# signal_blocked PID SIG: PID's main thread blocks SIG (its SigBlk): a
# signal rule's signal is taken by dynprof's signalfd from then on. Before,
# the signal's default action ends dynprof (a fixed sleep was not enough
# under load).
signal_blocked() {
	local n; n=$(kill -l "$2") || return 1
	awk -v b=$((n - 1)) '$1 == "SigBlk:" {
		d = substr($2, length($2) - int(b / 4), 1)
		v = index("0123456789abcdef", tolower(d)) - 1
		exit !(int(v / 2 ^ (b % 4)) % 2) }' /proc/$1/status
}

# dp [args...]: run dynprof with a time limit, stdin as given, output to $T/out.
dp() {
	timeout -s KILL 90 "$DP" "$@" > "$T/out" 2>&1
}

expect_line() { # expect_line REGEX [FILE]
	grep -Eq -- "$1" "${2:-$T/out}" || { cat "${2:-$T/out}"; fail "expected a line matching: $1"; }
}
expect_no_line() {
	! grep -Eq -- "$1" "${2:-$T/out}" || { cat "${2:-$T/out}"; fail "unexpected line matching: $1"; }
}
expect_status() { # expect_status WANT GOT
	[ "$1" = "$2" ] || { cat "$T/out"; fail "exit status $2, expected $1"; }
}
count_lines() { grep -Ec -- "$1" "${2:-$T/out}"; }

# PROF_ folders a pid wrote under DIR.
prof_dirs_of() { # prof_dirs_of DIR NSPID
	ls -d "$1"/PROF_*_"$(printf '%08d' "$2")"* 2>/dev/null
}

# ---- containers: real pid and mount namespaces (containers.sh, follow.sh) ----

# etc_over DIR: shell text for a mount namespace: its /etc becomes the
# host's with DIR's files over them (a read-only overlay). Never a bind
# mount on /etc/passwd itself: useradd and userdel (another test's, another
# suite's) rename a new passwd over the host's, and the kernel then detaches
# every mount on the old one, in every namespace: the target would read the
# host's passwd (its home /root) instead of the one the test gave it.
etc_over() { echo "mount -t overlay overlay -o lowerdir=$1:/etc /etc"; }

# start_contained_target [hide-output]: echoes the host pid of a target that
# (CTR_ENV: more VAR=value words for its environment; CTR_CGROUP: a cgroup
# folder to run in, from the start, as an engine puts its containers;
# CTR_USER: the name its passwd gives uid 0, default root)
# runs as pid 1 of `unshare --pid --fork --mount --mount-proc`, with its own
# passwd and a home only inside. With hide-output, the test's folder (and so
# its --output) is a private tmpfs inside, as in a real container; the build
# stays visible wherever the clone is.
start_contained_target() {
	local card; card=$(make_card 0)
	mkdir -p $T/ctr/etc
	echo "${CTR_USER:-root}:x:0:0:root:/home/inside-only:/bin/sh" > $T/ctr/etc/passwd
	{
		# CTR_PRELUDE: shell text run first (a wait before it joins its cgroup).
		[ -n "${CTR_PRELUDE:-}" ] && echo "$CTR_PRELUDE"
		# CTR_CGROUP: the cgroup its engine would have put it in (made by the caller).
		[ -n "${CTR_CGROUP:-}" ] && echo "echo 0 > $CTR_CGROUP/cgroup.procs || exit 1"
		echo "mkdir -p /home/inside-only && $(etc_over $T/ctr/etc) || exit 1"
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

# make_cgroup PATH-UNDER-PIDS: a cgroup folder in the v1 pids hierarchy, removed after the test.
make_cgroup() {
	local cg=/sys/fs/cgroup/pids/$1 part=/sys/fs/cgroup/pids
	for c in ${1//\// }; do
		part=$part/$c
		[ -d $part ] || { mkdir $part || fail "cannot make cgroup $part"; echo $part >> $T/.cgroups; }
	done
	echo $cg
}

random_id() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

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
