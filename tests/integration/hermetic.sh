# The suite itself (issue 23): a test acts only on processes it started,
# whatever else runs on the host. Foreign card users, started here outside
# the tests' isolation, hold nodes with every device number the tests have
# used or another run of them uses (/dev/full's 1:7, 10:200, 7:0, the
# benchmarks' 7:128, another checkout's own card devices, a container's
# /dev/davinci0 that the default patterns take by name, a demo_task with its
# own node) and serve the protocol with the agent logging every request.
# Meanwhile the scripts that take every card user of the host (--list,
# --pid=auto, --follow, launch mode) run in full; they must all pass, and no
# foreign process may see a single client.
#
# HERMETIC_SUITE: the tests/ folder whose scripts and lib run inside
# (default: this one; an older tests/ shows what happened before).
# HERMETIC_SCRIPTS: which of its integration scripts.

HERMETIC_SUITE=${HERMETIC_SUITE:-$DYNPROF_TESTS}
HERMETIC_SCRIPTS=${HERMETIC_SCRIPTS:-discovery follow monitor containers launch}
# The runner's per-test limit (120 s): this one runs whole scripts.
TEST_TIME_LIMIT=${TEST_TIME_LIMIT:-900}

# foreign_user NAME NODE: a card user holding NODE, its agent
# logging to $T/foreign/NAME.log. Echoes its pid once it listens.
foreign_user() {
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_LOG=1 \
		DYNPROF_AGENT_DEVICES="$(dirname "$2")/davinci*" "$CARD_USER" "$2" 3600 \
		< /dev/null > /dev/null 2> $T/foreign/$1.log &
	local pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "foreign $1 never listened: $(cat $T/foreign/$1.log)"
	echo $pid
}

# Another run's cards: its own test folder and card devices, as its lib makes them.
other_runs_cards() {
	mkdir -p $T/other
	(T=$T/other; for i in 0 1 2; do make_card $i > /dev/null || exit 1; done) ||
		fail "cannot make another run's cards"
	cat $T/other/.pids >> $T/.pids
}

start_foreign_users() {
	mkdir -p $T/foreign/shared $T/foreign/bench
	: > $T/foreign/pids
	local n=0 numbers p
	for numbers in "1 7" "10 200" "7 0"; do
		mknod $T/foreign/shared/davinci$n c $numbers
		p=$(foreign_user shared$n $T/foreign/shared/davinci$n) || exit 1
		echo "shared$n $p" >> $T/foreign/pids
		n=$((n + 1))
	done
	mknod $T/foreign/bench/davinci0 c 7 128
	p=$(foreign_user bench $T/foreign/bench/davinci0) || exit 1
	echo "bench $p" >> $T/foreign/pids
	other_runs_cards
	for n in 0 1 2; do
		p=$(foreign_user other$n $T/other/dev/davinci$n) || exit 1
		echo "other$n $p" >> $T/foreign/pids
	done
	# A container's own /dev/davinci0 (the default patterns take it by its name).
	unshare --mount sh -c "mount -t tmpfs tmpfs /dev && mknod /dev/davinci0 c 1 7 &&
		exec env PROFILING_MODE=dynamic LD_PRELOAD='$AGENT_SO' DYNPROF_AGENT_LOG=1 '$CARD_USER' /dev/davinci0 3600" \
		< /dev/null > /dev/null 2> $T/foreign/contained.log &
	remember_pid $!
	wait_until 5 has_socket $! || fail "foreign contained user never listened: $(cat $T/foreign/contained.log)"
	echo "contained $!" >> $T/foreign/pids
	# A demo_task left running, with its own node (/dev/full's numbers).
	DYNPROF_AGENT_LOG=1 "$DEMO" --quiet < /dev/null > /dev/null 2> $T/foreign/demo.log &
	remember_pid $!
	wait_until 5 has_socket $! || fail "foreign demo_task never listened: $(cat $T/foreign/demo.log)"
	echo "demo $!" >> $T/foreign/pids
}

# Clients of the foreign sockets, caught as they connect: every 100 ms the
# host's established unix connections (one sock_diag dump); for each new one
# to a foreign socket, the process that holds its other end, as "NAME PID
# EXE" lines in $T/foreign/clients. Another run on this host (an older
# copy of the suite, someone's dynprof) may reach them too: its clients are
# told from ours by their executable (ours are under $B).
watch_clients() {
	local path ino peer owner
	declare -A name seen
	while read -r n p; do name[$ROOT_HOME/dynamic_profiling_socket_$p]=$n; done < $T/foreign/pids
	while :; do
		while read -r path ino peer; do
			[ -n "${name[$path]:-}" ] && [ -z "${seen[$ino]:-}" ] || continue
			seen[$ino]=1
			owner=$(find /proc/[0-9]*/fd -lname "socket:\[$peer\]" 2>/dev/null | head -n 1 | cut -d/ -f3)
			echo "${name[$path]} ${owner:-?} $(readlink /proc/${owner:-0}/exe 2>/dev/null)" >> $T/foreign/clients
		done < <(ss -xH state established 2>/dev/null | awk '$4 ~ /dynamic_profiling_socket_/ { print $4, $5, $7 }')
		sleep 0.1
	done
}

# reached NAME: how many clients reached foreign NAME that are not another
# run's (ours, or gone before they could be told).
reached() {
	local n others
	n=$(grep -c 'client connected' $T/foreign/$1.log)
	others=$(awk -v n="$1" -v b="$B/" '$1 == n && $3 != "" && index($3, b) != 1' $T/foreign/clients | wc -l)
	echo $((n > others ? n - others : 0))
}

test_foreign_card_users_receive_nothing_while_discovery_follow_and_launch_tests_run() {
	start_foreign_users
	: > $T/foreign/clients
	watch_clients &
	remember_pid $!
	local s declared passed failed bad=""
	for s in $HERMETIC_SCRIPTS; do
		declared=$(grep -c '^test_[a-z0-9_]*()' $HERMETIC_SUITE/integration/$s.sh)
		env -u TESTS -u TEST_TIMES DYNPROF_TESTS=$HERMETIC_SUITE \
			bash $HERMETIC_SUITE/lib/runner.sh $HERMETIC_SUITE/integration/$s.sh > $T/inner.$s 2>&1
		passed=$(grep -c '^PASS ' $T/inner.$s)
		failed=$(grep -c '^FAIL ' $T/inner.$s)
		echo "$s.sh: $passed passed, $failed failed of $declared"
		grep '^FAIL ' $T/inner.$s | sed 's/^/  /'
		[ "$failed" = 0 ] && [ "$passed" = "$declared" ] || bad="$bad $s.sh"
	done
	sleep 0.3 # the watcher's last look
	local n p f reached=""
	echo "clients of the foreign card users (another run's are not counted):"
	sed 's/^/  /' $T/foreign/clients
	while read -r n p; do
		f=$T/foreign/$n.log
		grep -q 'listening on' $f || fail "foreign $n: its agent logged no listening line: $(cat $f)"
		all_gone $p && reached="$reached $n(ended)"
		[ "$(reached $n)" = 0 ] && continue
		reached="$reached $n"
		grep -E 'client connected|params:|start ->|stop ->|quit' $f | head -5 | sed "s/^/  $n: /"
	done < $T/foreign/pids
	[ -z "$reached" ] || fail "foreign card users reached by the tests:$reached"
	[ -z "$bad" ] || fail "failed beside foreign card users:$bad"
}
