# Real unprivileged users made for tests (hostile.sh, service.sh), removed by
# cleanup_test, and their targets in user + mount namespaces of their own.

# make_user: a fresh unprivileged user with a home $T/u/<name> of its own
# (not in the host passwd file's sense: only the target's /root inside).
# Echoes the name; the user is removed by cleanup_test.
make_user() {
	local u=dph$$x$RANDOM # see TEST_USER_RE
	useradd -M -N -s /bin/sh -d /nonexistent "$u" >/dev/null || fail "useradd $u failed"
	echo "$u" >> $T/.users
	chmod 755 $T
	mkdir -p $T/u/$u/home
	chown -R "$u" $T/u/$u
	echo "$u"
}

# as_user USER CMD...: CMD as USER (uid, its group, no others), no capabilities.
as_user() {
	local u=$1; shift
	setpriv --reuid="$(id -u "$u")" --regid="$(id -g "$u")" --clear-groups --inh-caps=-all "$@"
}

# (HOSTILE_ARGV0: its argv[0]; HOSTILE_CMD: shell text run instead of the
# agent's card user, HOSTILE_HOLDS=1 when it holds the card too; the
# caller's environment reaches it.)
# start_hostile_target USER SETUP: USER's target in `unshare -Urm` (root
# inside, mapped to USER), its /root being $T/u/USER/home (so its agent can
# listen there). Once its socket listens (and the card user holds its
# card), the shell text SETUP runs inside the namespace (the trap), then
# "trap set" is written to the log. Echoes the target's host pid once the
# trap is set.
start_hostile_target() {
	local u=$1 setup=$2 card; card=$(make_card 0)
	local d=$T/u/$u log=$T/u/$u.log
	mkdir -p $d/etc.top # nothing of its own: SETUP's mounts go on the overlay's files (see etc_over)
	local cmd="export PROFILING_MODE=dynamic LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*'
		exec -a \"\$HOSTILE_ARGV0\" $CARD_USER $card 600"
	# The card user listens before it opens its card: SETUP (a tmpfs over $T,
	# where the card is) waits until it holds it.
	local held=
	[ -n "${HOSTILE_CMD:-}" ] && [ "${HOSTILE_HOLDS:-}" != 1 ] || held="until readlink /proc/\$!/fd/* 2>/dev/null | grep -qxF '$card'; do
		sleep 0.02; i=\$((i+1)); [ \$i -lt 500 ] || { echo 'card not held'; exit 1; }; done"
	cat > $d/run.sh <<-END
	mount --bind $d/home /root || exit 1
	$(etc_over $d/etc.top) || exit 1
	(${HOSTILE_CMD:-$cmd}) &
	echo "target \$!"
	i=0
	while [ ! -S /root/dynamic_profiling_socket_\$! ] && [ \$i -lt 250 ]; do sleep 0.02; i=\$((i+1)); done
	[ -S /root/dynamic_profiling_socket_\$! ] || { echo "no socket"; exit 1; }
	$held
	$setup
	echo "trap set"
	wait
	END
	chown "$u" $d/run.sh
	as_user "$u" env HOSTILE_ARGV0="${HOSTILE_ARGV0:-card_user}" unshare -Urm bash $d/run.sh > $log 2>&1 &
	remember_pid $!
	wait_until 10 grep -q "^trap set" $log || fail "hostile target not ready: $(cat $log)"
	local pid; pid=$(sed -n 's/^target //p' $log)
	remember_pid "$pid"
	echo "$pid"
}

# within SECONDS CMD...: CMD must end (any status) before SECONDS; its status is kept in $RC.
within() {
	local limit=$1 start=$SECONDS; shift
	timeout -s KILL "$limit" "$@"
	RC=$?
	[ $RC -ne 137 ] || fail "did not end within ${limit}s: $*"
}

# start_filler USER SHELL: a hostile target writing in its own filesystem
# (its view of --output hidden by a tmpfs) that runs SHELL in its window's
# host/data folder once it exists, then writes "filled" to its log.
start_filler() {
	start_hostile_target $1 "mount -t tmpfs tmpfs $T || exit 1
		(i=0; while ! ls -d /root/.dynprof/*/PROF_*/host/data >/dev/null 2>&1; do
			sleep 0.05; i=\$((i+1)); [ \$i -lt 1200 ] || exit 1; done
		 cd \$(ls -d /root/.dynprof/*/PROF_*/host/data | head -n 1) && $2 && echo filled) &"
}
