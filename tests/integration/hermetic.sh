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
# HERMETIC_SCRIPTS: which of its integration scripts; HERMETIC_JOBS: how many
# at a time (default 1: this script already runs beside others in a
# parallel run; two more at once made follow.sh's 10 s join waits fail
# under load).

HERMETIC_SUITE=${HERMETIC_SUITE:-$DYNPROF_TESTS}
HERMETIC_SCRIPTS=${HERMETIC_SCRIPTS:-launch discovery follow monitor containers}
HERMETIC_JOBS=${HERMETIC_JOBS:-1}
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
	at_cleanup drop_other_cards
}
# Its card namespace's sleeper is no remembered process (common.sh's
# cleanup ends a test's own last, in drop_cards): the same here, before the
# test's processes go (the foreign users holding them, killed first).
drop_other_cards() { local T=$T/other; drop_cards; }

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

# Our clients of the foreign sockets, caught as they connect: every 100 ms
# the host's established unix connections (one sock_diag dump); while any
# is to a foreign socket, the sockets our dynprofs hold (processes whose
# executable is a dynprof of $B, the build under test) are looked up for its
# other end; each one found is a line "NAME PID EXE" in $T/foreign/clients.
# Another run on this host (an older copy of the suite, someone's dynprof)
# may reach the foreign users too: its clients are not ours and not counted.
our_sockets() { # "INODE PID=EXE" of each socket a dynprof of $B holds
	local e p
	# One find for the host's processes (no process per pid: the watcher must stay light).
	for e in $(find /proc -mindepth 2 -maxdepth 2 -name exe \( -lname "$B/dynprof*" -o -lname "$B/tests/dynprof*" \) 2>/dev/null); do
		p=${e#/proc/}; p=${p%/exe}
		ls -l /proc/$p/fd 2>/dev/null | sed -n "s|.*socket:\[\([0-9]*\)\]\$|\1 $p=$(readlink $e)|p"
	done
}
watch_clients() {
	local conns path ino peer n p
	declare -A name seen ours
	while read -r n p; do name[$ROOT_HOME/dynamic_profiling_socket_$p]=$n; done < $T/foreign/pids
	while :; do
		# New connections to a foreign socket: each is looked at once (a client
		# of ours exists while it is connected).
		conns=$(ss -xH state established 2>/dev/null | awk '$4 ~ /dynamic_profiling_socket_/ { print $4, $5, $7 }' |
			while read -r path ino peer; do
				[ -n "${name[$path]:-}" ] && [ -z "${seen[$ino]:-}" ] && echo "$path $ino $peer"
			done)
		if [ -n "$conns" ]; then
			ours=()
			while read -r ino p; do ours[$ino]=$p; done < <(our_sockets)
			while read -r path ino peer; do
				seen[$ino]=1
				[ -n "${ours[$peer]:-}" ] && echo "${name[$path]} ${ours[$peer]/=/ }" >> $T/foreign/clients
			done <<<"$conns"
		fi
		sleep 0.1
	done
}

test_foreign_card_users_receive_nothing_while_discovery_follow_and_launch_tests_run() {
	start_foreign_users
	: > $T/foreign/clients
	watch_clients &
	remember_pid $!
	# HERMETIC_JOBS scripts at a time (they are hermetic too).
	# (Waits name the runners: the foreign users are children of ours too.)
	local s done_pid; declare -A running=()
	for s in $HERMETIC_SCRIPTS; do
		while [ ${#running[@]} -ge $HERMETIC_JOBS ]; do
			done_pid=""
			wait -n -p done_pid "${!running[@]}"
			[ -n "$done_pid" ] && unset "running[$done_pid]"
		done
		env -u TESTS -u TEST_TIMES DYNPROF_TESTS=$HERMETIC_SUITE \
			bash $HERMETIC_SUITE/lib/runner.sh $HERMETIC_SUITE/integration/$s.sh > $T/inner.$s 2>&1 &
		running[$!]=$s
	done
	for done_pid in "${!running[@]}"; do wait $done_pid; done
	local declared passed failed bad=""
	for s in $HERMETIC_SCRIPTS; do
		declared=$(grep -c '^test_[a-z0-9_]*()' $HERMETIC_SUITE/integration/$s.sh)
		passed=$(grep -c '^PASS ' $T/inner.$s)
		failed=$(grep -c '^FAIL ' $T/inner.$s)
		echo "$s.sh: $passed passed, $failed failed of $declared"
		grep '^FAIL ' $T/inner.$s | sed 's/^/  /'
		# Each failure with the last of what its test saw (its runner's lines under it), said last.
		awk -v s=$s '/^FAIL / { if (n) flush(); f = $0; n = 0; next } /^PASS / { if (f) flush(); f = ""; next }
			f { l[n++] = $0 } END { if (f) flush() }
			function flush(i) { print s ": " f; for (i = (n > 18 ? n - 18 : 0); i < n; i++) print l[i]; n = 0 }' \
			$T/inner.$s >> $T/inner.fails
		[ "$failed" = 0 ] && [ "$passed" = "$declared" ] || bad="$bad $s.sh"
	done
	sleep 0.3 # the watcher's last look
	local n p f reached=""
	while read -r n p; do
		f=$T/foreign/$n.log
		grep -q 'listening on' $f || fail "foreign $n: its agent logged no listening line: $(cat $f)"
		all_gone $p && reached="$reached $n(ended)"
		echo "foreign $n: $(grep -c 'client connected' $f) clients, $(awk -v n=$n '$1 == n' $T/foreign/clients | wc -l) of them ours"
		grep -q "^$n " $T/foreign/clients || continue
		reached="$reached $n"
		grep "^$n " $T/foreign/clients | head -3 | sed 's/^/  ours: /'
	done < $T/foreign/pids
	[ -s $T/inner.fails ] && cat $T/inner.fails
	[ -z "$reached" ] || fail "foreign card users reached by the tests:$reached"
	[ -z "$bad" ] || fail "failed beside foreign card users:$bad"
}

# outlives_not WHAT BODY: an inner test (run by the runner, as any test)
# whose BODY starts a process that writes its pid to $LEAK_PID and is left
# behind; the inner test's cleanup must have ended it.
outlives_not() {
	mkdir -p $T/inner
	printf 'test_leaves_it() {\n%s\n\twait_until 5 test -s $LEAK_PID || fail "it did not start"\n}\n' "$2" > $T/inner/leak.sh
	env -u TESTS -u TEST_TIMES LEAK_PID=$T/inner/pid bash $DYNPROF_TESTS/lib/runner.sh $T/inner/leak.sh > $T/inner/out 2>&1
	grep -q '^PASS test_leaves_it' $T/inner/out || fail "the inner test failed: $(cat $T/inner/out)"
	local p; p=$(cat $T/inner/pid)
	remember_pid $p # ended at our cleanup, should it be left
	all_gone $p || fail "the $1 $p outlived its test: $(tr '\0' ' ' < /proc/$p/cmdline)"
}

# A test's card user that no test remembered, holding the test's card by a
# node of its own (a container's /dev, made with the card's numbers): the
# test's cleanup ends it before the card's number is freed. Left running,
# it would hold the number the kernel gives the next test's card, and be a
# card user of that test (seen: --pid=auto took such a leftover).
test_an_unremembered_holder_of_a_tests_card_elsewhere_does_not_outlive_it() {
	outlives_not holder '	local numbers; numbers=$(card_numbers 0) || exit 1
	unshare --mount sh -c "mount -t tmpfs tmpfs /dev && mknod /dev/davinci0 c $numbers &&
		exec 3< /dev/davinci0 && echo \$\$ > $LEAK_PID && exec sleep 600" < /dev/null > /dev/null 2>&1 &'
}

# A launched job's worker that does not hold the test's card (yet, or any
# more) but would open it, left by its test: ended by the test's cleanup,
# found by its environment (the agent's DYNPROF_AGENT_DEVICES names the
# test's cards). Seen alive after its test, then another clone's target.
test_an_unremembered_worker_of_a_tests_cards_does_not_outlive_it() {
	outlives_not worker '	make_card 0 > /dev/null
	env DYNPROF_AGENT_DEVICES="$T/dev/davinci*" sh -c "echo \$\$ > $LEAK_PID && exec sleep 600" \
		< /dev/null > /dev/null 2>&1 &'
}
