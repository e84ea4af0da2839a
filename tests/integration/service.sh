# dynprof as a service (issue 12): the systemd unit `make install` puts in
# place is accepted by systemd, its capability set is all dynprof needs
# (dynprof runs here with exactly that set), and the Kubernetes DaemonSet
# asks for the same capabilities and runs the same command.

. "$DYNPROF_TESTS/lib/users.sh"

REPO=$(cd "$DYNPROF_TESTS/.." && pwd)
UNIT=$REPO/tools/dynprof.service
DAEMONSET=$REPO/tools/k8s/dynprof-daemonset.yaml

# The unit's capabilities as setpriv's bounding-set list: -all,+bpf,+perfmon,...
unit_caps_for_setpriv() {
	sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr ' ' '\n' | tr 'A-Z' 'a-z' |
		sed -n 's/^cap_\(.*\)/+\1/p' | paste -sd, | sed 's/^/-all,/'
}

test_install_puts_a_unit_that_systemd_accepts() {
	# -o all: the build is the suite's, already made (SANITIZE runs use build/san).
	make -s -C "$REPO" -o all install BUILD="$B" PREFIX=$T/prefix > $T/install.out 2>&1 ||
		fail "make install failed: $(cat $T/install.out)"
	local unit=$T/prefix/lib/systemd/system/dynprof.service
	[ -f $unit ] || fail "no unit installed: $(cat $T/install.out)"
	grep -q "^ExecStart=$T/prefix/bin/dynprof --pid=auto --follow " $unit ||
		fail "ExecStart not the installed dynprof: $(grep ExecStart $unit)"
	command -v systemd-analyze >/dev/null || fail "systemd-analyze not installed (package systemd)"
	# Every problem systemd finds is a line (unknown keys, bad values, a missing binary or man page).
	MANPATH=$T/prefix/share/man systemd-analyze verify $unit > $T/verify 2>&1 ||
		fail "systemd-analyze verify failed: $(cat $T/verify)"
	[ ! -s $T/verify ] || fail "systemd-analyze verify complained: $(cat $T/verify)"
}

test_the_units_capabilities_are_all_dynprof_needs() {
	local caps; caps=$(unit_caps_for_setpriv)
	[ "$caps" != "-all," ] && [ -n "$caps" ] || fail "no CapabilityBoundingSet in $UNIT"
	# A rootless container of an unprivileged user (its helper joins a user namespace too);
	# the user made first: useradd replaces /etc/passwd, which the container's bind mount hides.
	local u; u=$(make_user)
	local pid; pid=$(start_contained_target hide-output)
	local upid; upid=$(start_hostile_target "$u" ":")
	# With exactly the unit's capabilities and no_new_privs, as systemd would start it:
	# both targets' helpers made (setns, chroot, their ids), their folders moved out.
	printf "start\nstop\nquit\n" | ${NOCAPS:-setpriv --bounding-set="$caps" --no-new-privs} \
		"$DP" --pid=$pid --device="$T/dev/davinci*" --output=$T/o --chip=5 > $T/out 2>&1
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid stop success$"
	[ "$(prof_dirs_of $T/o 1 | wc -l)" -eq 1 ] || fail "expected 1 folder in $T/o: $(ls -R $T/o; cat $T/out)"
	# The user's target writes where it sees --output (its namespace shares the host's files).
	mkdir -m 1777 $T/o2
	printf "start\nstop\nquit\n" | ${NOCAPS:-setpriv --bounding-set="$caps" --no-new-privs} \
		"$DP" --pid=$upid --device="$T/dev/davinci*" --output=$T/o2 --chip=5 >> $T/out 2>&1
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $upid stop success$"
	[ -n "$(ls $T/o2)" ] || fail "no folder in $T/o2: $(cat $T/out)"
	expect_no_line 'WARNING|ERROR|cannot|host side'
	# The kernel side: the cgroup device hook, and card opens seen by it.
	setpriv --bounding-set="$caps" --no-new-privs "$DP" --list --watch --json \
		--device="$T/dev/davinci*" > $T/watch 2> $T/watch.err &
	remember_pid $!
	wait_until 10 grep -q '^\[' $T/watch || fail "watch did not start: $(cat $T/watch.err)"
	expect_line '^dynprof: card opens: cgroup device hook$' $T/watch.err
	local card; card=$(make_card 0)
	local holder; holder=$(bash -c "exec 3<'$card'; exec sleep 600" >/dev/null 2>&1 & echo $!)
	remember_pid $holder
	wait_until 5 eval "grep '^{\"pid\":$holder,' $T/watch | grep -q '\"event\":\"card-open\"'" ||
		fail "no card-open for $holder: $(cat $T/watch $T/watch.err)"
}

test_daemonset_runs_the_units_command_with_its_capabilities() {
	local f=$DAEMONSET
	[ -f $f ] || fail "no $f"
	# The same command line as the unit's ExecStart.
	local unit_cmd ds_cmd
	unit_cmd=$(sed -n 's/^ExecStart=//p' "$UNIT")
	ds_cmd=$(python3 - "$f" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
cmd = re.search(r'command: \[(.*?)\]', text, re.S).group(1)
args = re.search(r'args: \[(.*?)\]', text, re.S).group(1)
words = re.findall(r'"([^"]*)"', cmd) + re.findall(r'"([^"]*)"', args)
print(" ".join(words))
PY
)
	[ "$ds_cmd" = "$unit_cmd" ] || fail "DaemonSet runs '$ds_cmd', the unit '$unit_cmd'"
	# The same capabilities, everything else dropped, and the host's processes.
	local unit_caps ds_caps
	unit_caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr ' ' '\n' | sed 's/^CAP_//' | sort | paste -sd,)
	ds_caps=$(sed -n 's/^ *add: \[\(.*\)\]/\1/p' $f | tr -d '" ' | tr ',' '\n' | sort | paste -sd,)
	[ -n "$ds_caps" ] && [ "$ds_caps" = "$unit_caps" ] || fail "DaemonSet adds '$ds_caps', the unit '$unit_caps'"
	grep -q 'drop: \["ALL"\]' $f || fail "DaemonSet does not drop the other capabilities"
	grep -q '^ *hostPID: true' $f || fail "DaemonSet without hostPID"
	grep -q 'privileged: false' $f || fail "DaemonSet should not be privileged"
	# Its output and control socket on the host, where the command puts them.
	local p
	for p in /var/lib/dynprof /run/dynprof /dev; do
		grep -q "mountPath: $p[ ,}]" $f && grep -q "path: $p[ ,}]" $f || fail "DaemonSet does not mount the host's $p"
	done
}

# The unit's own command line (paths moved into $T), with exactly its
# capabilities: a container job started after it joins, is driven over the
# control socket with --remote, and SIGTERM (systemctl stop) saves the open
# window and ends it with the unit's SuccessExitStatus.
test_the_units_command_follows_a_later_job_and_stops_on_sigterm() {
	local caps; caps=$(unit_caps_for_setpriv)
	local cmd; cmd=$(sed -n 's/^ExecStart=//p' "$UNIT")
	cmd=${cmd//\/var\/lib\/dynprof/$T/o}
	cmd=${cmd//\/run\/dynprof/$T/run}
	cmd=${cmd//\/usr\/local\/bin\/dynprof/$DP}
	[ "${cmd#$DP --pid=auto --follow }" != "$cmd" ] || fail "unexpected ExecStart: $cmd"
	mkdir -m 700 $T/run
	make_card 0 > /dev/null
	setpriv --bounding-set="$caps" --no-new-privs $cmd --device="$T/dev/davinci*" --chip=5 \
		< /dev/null > $T/out 2>&1 &
	local dp=$!
	remember_pid $dp
	wait_until 10 test -S $T/run/control || fail "no control socket: $(cat $T/out)"
	local pid; pid=$(start_contained_target hide-output)
	wait_until 10 grep -q "^\[INFO\] target joined: pid $pid " $T/out || fail "the job did not join: $(cat $T/out)"
	"$DP" --remote=$T/run/control start pid=$pid > $T/r 2>&1 || fail "remote start: $(cat $T/r)"
	wait_until 10 grep -q "^dynamic profiling for pid $pid start success$" $T/out || fail "no start: $(cat $T/out)"
	kill -TERM $dp
	wait $dp
	local st=$? ok; ok=$(sed -n 's/^SuccessExitStatus=//p' "$UNIT")
	[ "$st" = 0 ] || echo " $ok " | grep -q " $st " ||
		fail "exit status $st is not a success for the unit (SuccessExitStatus=$ok): $(cat $T/out)"
	expect_line "^dynamic profiling for pid $pid stop success$"
	[ "$(find $T/o -name 'PROF_*' | wc -l)" = 1 ] || fail "no saved window: $(ls -R $T/o; cat $T/out)"
	expect_no_line 'WARNING|ERROR|cannot|host side'
}
