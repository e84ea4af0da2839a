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

# ---- the unit's sandbox, as systemd would set it up for the service ----
# No systemd manager runs here, so each setting of the unit's [Service] is
# applied as systemd applies it: the capability bounding set and
# no_new_privs by setpriv; the mount namespace (ProtectSystem, ProtectKernel*,
# ProtectControlGroups, ProtectProc, PrivateMounts) and ProtectHostname's
# UTS namespace by unshare and mounts; UMask by the shell; Nice by nice; the seccomp
# filters (SystemCallFilter, SystemCallArchitectures, RestrictAddressFamilies,
# RestrictNamespaces, MemoryDenyWriteExecute, RestrictSUIDSGID) by
# tests/peers/sandbox. A setting the unit gains that is not handled here
# fails unit_run, so none goes untested.

SANDBOX=$B/tests/peers/sandbox

unit_value() { sed -n "s/^$1=//p" "$UNIT"; }

# Settings that need nothing at run time here, and why.
UNIT_INERT="Type ExecStart StandardInput StateDirectory StateDirectoryMode RuntimeDirectory
RuntimeDirectoryMode KillMode SuccessExitStatus TimeoutStopSec Restart RestartSec LimitNOFILE
LimitMEMLOCK Description Documentation After WantedBy"
# (IPAddressDeny=any: no IP socket can be made at all under RestrictAddressFamilies, so the
# family filter tests it; RestrictRealtime, LockPersonality: dynprof sets no scheduling
# policy and no personality; ProtectClock: no clock is set, its device rule has no device
# dynprof opens.)
UNIT_NOT_EMULATED="IPAddressDeny RestrictRealtime LockPersonality ProtectClock"

# syscall_names NAME-OR-@GROUP...: syscall names, groups expanded as systemd does.
syscall_names() {
	local x y
	for x in "$@"; do
		case $x in
		@*) systemd-analyze syscall-filter "$x" | tail -n +2 | sed 's/^ *//; s/ *#.*//' | grep -v '^$' |
			while read -r y; do syscall_names "$y"; done ;;
		*) echo "$x" ;;
		esac
	done
}

# The x86_64 numbers of those names (names this ABI has no number for are left out).
syscall_numbers() {
	local h=/usr/include/x86_64-linux-gnu/asm/unistd_64.h
	[ -f $h ] || h=/usr/include/asm/unistd_64.h
	syscall_names "$@" | sort -u | awk 'NR == FNR { want[$1] = 1; next }
		$1 == "#define" && substr($2, 1, 5) == "__NR_" && want[substr($2, 6)] { print $3 }' - $h | paste -sd,
}

ns_mask() { # ns_mask KIND...: RestrictNamespaces' kinds as CLONE_NEW* bits
	local m=0 k
	for k in "$@"; do
		case $k in
		cgroup) m=$((m | 0x02000000)) ;; ipc) m=$((m | 0x08000000)) ;; net) m=$((m | 0x40000000)) ;;
		mnt) m=$((m | 0x00020000)) ;; pid) m=$((m | 0x20000000)) ;; user) m=$((m | 0x10000000)) ;;
		uts) m=$((m | 0x04000000)) ;; *) fail "RestrictNamespaces: unknown kind $k" ;;
		esac
	done
	printf '%x' $m
}

# Shell text making the unit's mount namespace (run inside `unshare --mount`).
ro_text() { # ro_text PATH...: read-only, submounts too
	local p
	for p in "$@"; do
		echo "if [ -e $p ]; then mount --rbind $p $p || exit 1;"
		echo "  for m in \$(findmnt -R -n -l -o TARGET $p); do mount -o remount,bind,ro \$m || exit 1; done; fi"
	done
}
gone_text() { # gone_text PATH...: inaccessible, as systemd's empty mode-000 nodes make them
	local p
	for p in "$@"; do
		echo "if [ -d $p ]; then mount --bind $T/inacc.d $p || exit 1; elif [ -e $p ]; then mount --bind $T/inacc.f $p || exit 1; fi"
	done
}
mount_text() {
	mkdir -p -m 000 $T/inacc.d; : > $T/inacc.f; chmod 000 $T/inacc.f
	# ProtectProc, ProcSubset: a /proc of its own with those options.
	local popts=; [ -n "$(unit_value ProtectProc)" ] && popts=hidepid=$(unit_value ProtectProc)
	[ -n "$(unit_value ProcSubset)" ] && popts=${popts:+$popts,}subset=$(unit_value ProcSubset)
	[ -n "$popts" ] && echo "mount -t proc -o $popts proc /proc || exit 1"
	case $(unit_value ProtectSystem) in
	yes) ro_text /usr /boot /efi ;;
	full) ro_text /usr /boot /efi /etc ;;
	strict) ro_text / ;;
	esac
	[ "$(unit_value ProtectKernelTunables)" = yes ] && {
		ro_text /proc/sys /proc/sysrq-trigger /proc/latency_stats /proc/acpi /proc/timer_stats \
			/proc/asound /proc/bus /proc/fs /proc/irq /sys
		gone_text /proc/kallsyms /proc/kcore
	}
	[ "$(unit_value ProtectKernelModules)" = yes ] && gone_text /lib/modules /usr/lib/modules
	[ "$(unit_value ProtectKernelLogs)" = yes ] && gone_text /proc/kmsg /dev/kmsg
	[ "$(unit_value ProtectControlGroups)" = yes ] && ro_text /sys/fs/cgroup
	echo "umask $(unit_value UMask | grep . || echo 0022)"
}

# The sandbox peer's options from the unit's seccomp settings.
seccomp_args() {
	local v
	v=$(unit_value SystemCallFilter)
	[ -n "$v" ] && echo "--allow=$(syscall_numbers $v)"
	v=$(unit_value SystemCallErrorNumber)
	[ -n "$v" ] && echo "--errno=$(python3 -c "import errno; print(errno.$v)")"
	[ "$(unit_value SystemCallArchitectures)" = native ] && echo --native
	v=$(unit_value RestrictAddressFamilies)
	[ -n "$v" ] && echo "--families=$(python3 -c "import socket,sys; print(','.join(str(int(getattr(socket, f))) for f in sys.argv[1:]))" $v)"
	v=$(unit_value RestrictNamespaces)
	[ -n "$v" ] && echo "--namespaces=$(ns_mask $v)"
	[ "$(unit_value MemoryDenyWriteExecute)" = yes ] && echo --no-wx
	[ "$(unit_value RestrictSUIDSGID)" = yes ] && echo --no-suid
	[ "$(unit_value ProtectHostname)" = yes ] && echo --no-hostname
	return 0
}

# Sets UNIT_RUN: the command prefix that runs a command as the unit runs it
# (its pid is the command's: each step execs the next).
unit_run() {
	local key known="$UNIT_INERT $UNIT_NOT_EMULATED CapabilityBoundingSet NoNewPrivileges
		ProtectProc ProcSubset ProtectSystem ProtectKernelTunables ProtectKernelModules ProtectKernelLogs
		ProtectControlGroups PrivateMounts UMask SystemCallFilter SystemCallErrorNumber
		SystemCallArchitectures RestrictAddressFamilies RestrictNamespaces MemoryDenyWriteExecute
		RestrictSUIDSGID ProtectHostname Nice"
	for key in $(sed -n 's/^\([A-Za-z]*\)=.*/\1/p' "$UNIT"); do
		echo " $(echo $known) " | grep -q " $key " || fail "service.sh does not run the unit's $key= (add it to unit_run)"
	done
	local caps; caps=$(unit_caps_for_setpriv)
	local uts=; [ "$(unit_value ProtectHostname)" = yes ] && uts=--uts
	# A sanitizer build (make test SANITIZE=1): LeakSanitizer stops the
	# process's threads with ptrace, which the unit's system call filter
	# refuses; its leak check is left to the suite's other tests (no
	# effect on a normal build, which reads no ASAN_OPTIONS).
	local san="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	UNIT_RUN=(unshare --mount --propagation slave $uts sh -c "$(mount_text)
exec \"\$@\"" sh nice -n "$(unit_value Nice | grep . || echo 0)" setpriv --bounding-set="$caps" --no-new-privs env "$san" "$SANDBOX" $(seccomp_args) --)
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
	unit_run
	# A rootless container of an unprivileged user (its helper joins a user namespace too).
	local u; u=$(make_user)
	local pid; pid=$(start_contained_target hide-output)
	local upid; upid=$(start_hostile_target "$u" ":")
	# As systemd would start it (unit_run: the capabilities, no_new_privs, the mount
	# namespace, the seccomp filters, the umask): both targets' helpers made (setns,
	# chroot, their ids), their folders moved out.
	# (NOCAPS: a prefix to run it with instead, to see the test fail without them.)
	[ -n "${NOCAPS:-}" ] && UNIT_RUN=($NOCAPS)
	printf "start\nstop\nquit\n" | "${UNIT_RUN[@]}" \
		"$DP" --pid=$pid --device="$T/dev/davinci*" --output=$T/o --chip=5 > $T/out 2>&1
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid stop success$"
	[ "$(prof_dirs_of $T/o 1 | wc -l)" -eq 1 ] || fail "expected 1 folder in $T/o: $(ls -R $T/o; cat $T/out)"
	# The user's target writes where it sees --output (its namespace shares the host's files).
	mkdir -m 1777 $T/o2
	printf "start\nstop\nquit\n" | "${UNIT_RUN[@]}" \
		"$DP" --pid=$upid --device="$T/dev/davinci*" --output=$T/o2 --chip=5 >> $T/out 2>&1
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $upid stop success$"
	[ -n "$(ls $T/o2)" ] || fail "no folder in $T/o2: $(cat $T/out)"
	expect_no_line 'WARNING|ERROR|cannot|host side'
	# The kernel side: the cgroup device hook, and card opens seen by it.
	"${UNIT_RUN[@]}" "$DP" --list --watch --json \
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
	unit_run
	"${UNIT_RUN[@]}" $cmd --device="$T/dev/davinci*" --chip=5 \
		< /dev/null > $T/out 2>&1 &
	local dp=$!
	remember_pid $dp
	wait_until 10 listening $T/run/control || fail "no control socket: $(cat $T/out)"
	# Its nice value is the unit's (field 19 of stat, past the comm's parentheses).
	local nice; nice=$(sed 's/.*) //' /proc/$dp/stat | cut -d' ' -f17)
	[ "$nice" = "$(unit_value Nice | grep . || echo 0)" ] || fail "the monitor runs at nice $nice, the unit says $(unit_value Nice)"
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

# A user's target in a user and network namespace of its own, serving an
# abstract socket: the service joins that network namespace (setns, which
# RestrictNamespaces must allow) and drives it.
test_the_units_sandbox_reaches_an_abstract_socket_in_a_network_namespace() {
	local u card pid; u=$(make_user); card=$(make_card 0)
	chmod 755 $T $T/dev
	setpriv --reuid="$(id -u $u)" --regid="$(id -g $u)" --clear-groups unshare -U -r -n \
		env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		DYNPROF_AGENT_FLAVOUR=abstract DYNPROF_AGENT_LOG=1 "$CARD_USER" "$card" 600 > $T/abstract.log 2>&1 &
	pid=$!
	remember_pid $pid
	wait_until 5 grep -q "listening on @dyn_prof_sock_" $T/abstract.log || fail "target never listened: $(cat $T/abstract.log)"
	mkdir -m 1777 $T/o
	unit_run
	printf "start\nstop\nquit\n" | "${UNIT_RUN[@]}" timeout 60 "$DP" --pid=$pid --device="$T/dev/davinci*" \
		--output=$T/o --chip=5 > $T/out 2>&1
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid stop success$"
	[ -n "$(ls $T/o)" ] || fail "no folder in $T/o: $(cat $T/out)"
}

# Call counts (--window rules on a function's calls) are uprobes: perf_event_open
# and bpf under the unit's filter.
test_the_units_sandbox_attaches_call_counts() {
	"$B/tests/peers/caller" wait call=100 pause > $T/caller.log 2>&1 &
	local c=$!
	remember_pid $c
	wait_until 5 grep -q "^caller: ready" $T/caller.log || fail "caller did not start"
	unit_run
	timeout 20 "${UNIT_RUN[@]}" "$B/tests/callcount_probe" --timeout=1000 $c caller dp_caller_hit 50 > $T/probe.out 2>&1
	grep -q "^attached probe=0 pid=$c " $T/probe.out || fail "not attached: $(cat $T/probe.out)"
}
