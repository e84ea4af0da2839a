# How card opens are seen (issue 12, the kernel side): the cgroup device
# hook (a cgroup/dev program linked to the cgroup v2 root) by default, the
# sys_enter/sys_exit tracepoints as the fallback. The hook never denies,
# goes with dynprof even after SIGKILL, reports only opens that worked,
# works without a cgroup2 mount; the fallback is chosen when the hook
# cannot be used or is refused by DYNPROF_OPEN_HOOK=syscalls.

BT=$(command -v bpftool || echo /usr/sbin/bpftool)

# hook_watch [args]: dynprof --list --watch --json on our fake cards; events
# in $T/watch, its one "card opens:" line in $T/watch.err. WATCH_PID set.
hook_watch() {
	"$DP" --list --watch --json --device="$T/dev/davinci*" "$@" > $T/watch 2> $T/watch.err &
	WATCH_PID=$!
	remember_pid $WATCH_PID
	wait_until 10 grep -q '^\[' $T/watch || fail "watch did not start: $(cat $T/watch.err)"
}
watch_line() { grep -E "\"event\":\"$1\"" $T/watch | grep -E "\"pid\":$2[,}]" | grep -qE "${3:-.}"; }
watch_saw() { wait_until "${4:-5}" watch_line "$@" || { cat $T/watch; fail "no $1 event for pid $2"; }; }

# The BPF objects a process holds, from its fds: "prog <id>" and "link <id>" lines.
bpf_objects_of() {
	local f
	for f in /proc/$1/fdinfo/*; do
		sed -n 's/^prog_id:[[:space:]]*\([0-9]*\)/prog \1/p; s/^link_id:[[:space:]]*\([0-9]*\)/link \1/p' "$f" 2>/dev/null
	done | sort -u
}
# Names of the programs a process holds (through prog or link fds).
prog_names_of() {
	local id
	for id in $(bpf_objects_of $1 | awk '$1 == "prog" { print $2 }'); do
		$BT prog show id $id 2>/dev/null | sed -n '1s/.* name \([^ ]*\) .*/\1/p'
	done | sort -u
}

# at_exit CMD: run CMD when the test ends, before the usual clean-up.
AT_EXIT=""
# (cleanup_test takes the test's status from $?: kept across CMD.)
at_exit() { AT_EXIT="$1; $AT_EXIT"; trap 'st=$?; eval "$AT_EXIT"; (exit $st); cleanup_test' EXIT; }

# A folder where the cgroup v2 root is mounted (the host's, else our own,
# unmounted at the end before $T is removed).
cgroup2_root() {
	local m; m=$(awk '$9 == "cgroup2" && $4 == "/" { print $5; exit }' /proc/self/mountinfo)
	if [ -z "$m" ]; then
		m=$T/cg2
		mkdir -p $m && mount -t cgroup2 none $m || fail "cannot mount cgroup2"
		at_exit "umount -l $m"
	fi
	echo $m
}

test_cgroup_device_hook_is_the_default_and_only_its_programs_load() {
	make_card 0 > /dev/null
	hook_watch
	expect_line '^dynprof: card opens: cgroup device hook$' $T/watch.err
	local names; names=$(prog_names_of $WATCH_PID)
	echo "$names" | grep -qx dp_dev || fail "no dp_dev program held: $names"
	echo "$names" | grep -qx 'dp_sys_enter\|dp_sys_exit' && fail "syscall hooks loaded too: $names"
	echo "$names" | grep -qx dp_exec || fail "sched programs missing: $names"
	local cg; cg=$(cgroup2_root)
	local id; id=$(bpf_objects_of $WATCH_PID | awk '$1 == "prog" { print $2 }' | while read -r i; do
		$BT prog show id $i | grep -q 'cgroup_device' && echo $i; done)
	$BT cgroup show $cg | grep -E "^$id +cgroup_device +multi" ||
		{ $BT cgroup show $cg; fail "dp_dev ($id) not attached to the cgroup v2 root $cg"; }
}

# Every open of each device, read and read-write, as "device mode result".
open_all() { # open_all FILE DEVICES...
	local out=$1 d; shift
	: > $out
	for d in "$@"; do
		(exec 3< "$d") 2>/dev/null && echo "$d r ok" >> $out || echo "$d r fail" >> $out
		(exec 3<> "$d") 2>/dev/null && echo "$d rw ok" >> $out || echo "$d rw fail" >> $out
	done
}

test_the_hook_never_denies_an_open() {
	local c0 c1; c0=$(make_card 0); c1=$(make_card 1)
	mknod $T/dev/nodrv c 222 0 # no driver: ENXIO, the same with or without
	local devs=(/dev/null /dev/zero /dev/full /dev/urandom /dev/random /dev/net/tun "$c0" "$c1" $T/dev/nodrv)
	[ -e /dev/tty0 ] && devs+=(/dev/tty0)
	[ -e /dev/kmsg ] && devs+=(/dev/kmsg)
	open_all $T/without "${devs[@]}"
	grep -q "/dev/null rw ok" $T/without || fail "cannot open /dev/null: $(cat $T/without)"
	hook_watch
	expect_line 'card opens: cgroup device hook' $T/watch.err
	open_all $T/with "${devs[@]}"
	diff $T/without $T/with || fail "opens differ with the hook attached"
	# In a child cgroup of the v2 root too (its programs are the root's, inherited).
	local cg; cg=$(cgroup2_root)/dynprof-test-$$
	mkdir $cg || fail "cannot make a cgroup"
	at_exit "rmdir $cg 2>/dev/null"
	bash -c "echo \$\$ > $cg/cgroup.procs && $(declare -f open_all); open_all $T/child ${devs[*]}"
	rmdir $cg
	diff $T/without $T/child || fail "opens differ in a child cgroup with the hook attached"
	# And the opens of a card were seen (the hook ran).
	local pid; pid=$(bash -c "exec 3<'$c0'; exec sleep 600" >/dev/null 2>&1 & echo $!)
	remember_pid $pid
	watch_saw card-open $pid '"cards":\[0\]'
}

test_nothing_of_ours_stays_attached_after_sigkill() {
	make_card 0 > /dev/null
	local cg; cg=$(cgroup2_root)
	hook_watch
	local prog link
	prog=$(bpf_objects_of $WATCH_PID | awk '$1 == "prog" { print $2 }' | while read -r i; do
		$BT prog show id $i | grep -q 'cgroup_device' && echo $i; done)
	link=$(bpf_objects_of $WATCH_PID | awk '$1 == "link" { print $2 }' | while read -r i; do
		$BT link show id $i | grep -qE "prog $prog( |$)" && echo $i; done)
	[ -n "$prog" ] && [ -n "$link" ] || fail "no cgroup_device program and link held (prog '$prog', link '$link')"
	$BT cgroup show $cg | grep -qE "^$prog +cgroup_device" || fail "not attached"
	kill -KILL $WATCH_PID
	wait $WATCH_PID 2>/dev/null
	not_attached() { ! $BT cgroup show $cg | grep -qE "^$prog +cgroup_device"; }
	wait_until 5 not_attached || { $BT cgroup show $cg; fail "program $prog still attached after SIGKILL"; }
	wait_until 5 eval "! $BT link show id $link >/dev/null 2>&1" || fail "link $link left after SIGKILL"
	wait_until 5 eval "! $BT prog show id $prog >/dev/null 2>&1" || fail "program $prog left after SIGKILL"
}

test_a_failed_open_is_not_reported() {
	local good; good=$(make_card 0)
	mknod $T/dev/davinci5 c 222 0 # a card node without a driver: the check passes, the open fails
	mknod -m 600 $T/dev/davinci6 c $(card_numbers 1) # mode 0600: nobody may not open it
	chmod 755 $T $T/dev
	hook_watch
	expect_line 'card opens: cgroup device hook' $T/watch.err
	local a b c
	# Each stays alive after its failed open, so a wrong report could be made of it.
	a=$(bash -c "exec 3<$T/dev/davinci5; exec sleep 600" >/dev/null 2>&1 & echo $!)
	b=$(setpriv --reuid=65534 --regid=65534 --clear-groups bash -c "exec 3<$T/dev/davinci6; exec sleep 600" \
		>/dev/null 2>&1 & echo $!)
	c=$(bash -c "test -r $T/dev/davinci5; test -w $good; exec sleep 600" >/dev/null 2>&1 & echo $!)
	remember_pid $a; remember_pid $b; remember_pid $c
	# A real open after them, seen: the watcher was looking.
	local ok; ok=$(bash -c "exec 3<'$good'; exec sleep 600" >/dev/null 2>&1 & echo $!)
	remember_pid $ok
	watch_saw card-open $ok '"cards":\[0\]'
	sleep 1
	for p in $a $b $c; do all_gone $p && fail "opener $p did not stay alive"; done
	tr '\0' ' ' < /proc/$b/cmdline | grep -q "^sleep 600" || fail "opener $b not as expected"
	! grep -E '"event":"card-open"' $T/watch | grep -qE "\"pid\":($a|$b|$c)[,}]" ||
		{ cat $T/watch; fail "a failed open (or an access check) was reported as a card open"; }
}

test_closes_are_found_without_a_syscall_hook() {
	local card; card=$(make_card 0)
	hook_watch
	bash -c "exec 3<'$card'; echo \$\$ > $T/pid; sleep 1; exec 3<&-; touch $T/closed; exec sleep 600" \
		>/dev/null 2>&1 &
	remember_pid $!
	wait_until 5 test -s $T/pid || fail "holder did not start"
	local pid; pid=$(cat $T/pid)
	watch_saw card-open $pid
	wait_until 5 test -e $T/closed || fail "holder did not close"
	watch_saw card-close $pid '"cards":\[\]' 5
}

test_works_without_a_cgroup2_mount() {
	local card; card=$(make_card 0)
	# A mount namespace where no cgroup2 is mounted anywhere: every cgroup mount
	# under /sys/fs/cgroup gone, a tmpfs in its place (as in some containers).
	unshare --mount --propagation private bash -c "umount -R /sys/fs/cgroup 2>/dev/null;
		mount -t tmpfs none /sys/fs/cgroup &&
		! grep -q ' - cgroup2 ' /proc/self/mountinfo &&
		exec '$DP' --list --watch --json --device='$T/dev/davinci*'" > $T/watch 2> $T/watch.err &
	WATCH_PID=$!
	remember_pid $WATCH_PID
	wait_until 10 grep -q '^\[' $T/watch || fail "watch did not start: $(cat $T/watch.err)"
	expect_line '^dynprof: card opens: cgroup device hook$' $T/watch.err
	local pid; pid=$(bash -c "exec 3<'$card'; exec sleep 600" >/dev/null 2>&1 & echo $!)
	remember_pid $pid
	watch_saw card-open $pid '"cards":\[0\]'
	# The private mount did not stay behind on the host.
	! grep -q dynprof-cgroup2 /proc/self/mountinfo || fail "a private cgroup2 mount is left"
}

test_fallback_forced_by_environment() {
	local card; card=$(make_card 0)
	DYNPROF_OPEN_HOOK=syscalls hook_watch
	expect_line '^dynprof: card opens: syscall tracepoints \(cgroup device hook: not tried: DYNPROF_OPEN_HOOK=syscalls\)$' $T/watch.err
	local names; names=$(prog_names_of $WATCH_PID)
	echo "$names" | grep -qx dp_sys_enter || fail "dp_sys_enter not loaded: $names"
	echo "$names" | grep -qx dp_dev && fail "dp_dev loaded with the fallback: $names"
	bash -c "exec 3<'$card'; echo \$\$ > $T/pid; sleep 0.5; exec 3<&-; exec sleep 600" >/dev/null 2>&1 &
	remember_pid $!
	wait_until 5 test -s $T/pid || fail "holder did not start"
	watch_saw card-open $(cat $T/pid) '"path"|"cards":\[0\]'
	watch_saw card-close $(cat $T/pid)
}

test_own_cgroup_namespace_is_left_for_the_hosts() {
	local card; card=$(make_card 0)
	# A pod's own cgroup namespace (hostPID: the host's processes visible): dynprof joins the
	# host's one first, so the hook on the v2 root sees every task.
	unshare --cgroup "$DP" --list --watch --json --device="$T/dev/davinci*" > $T/watch 2> $T/watch.err &
	WATCH_PID=$!
	remember_pid $WATCH_PID
	wait_until 10 grep -q '^\[' $T/watch || fail "watch did not start: $(cat $T/watch.err)"
	expect_line "^dynprof: joined the host's cgroup namespace" $T/watch.err
	expect_line '^dynprof: card opens: cgroup device hook$' $T/watch.err
	[ "$(stat -L -c %i /proc/$WATCH_PID/ns/cgroup)" = "$(stat -L -c %i /proc/self/ns/cgroup)" ] ||
		fail "dynprof is not in the host's cgroup namespace"
	local pid; pid=$(bash -c "exec 3<'$card'; exec sleep 600" >/dev/null 2>&1 & echo $!)
	remember_pid $pid
	watch_saw card-open $pid '"cards":\[0\]'
}

test_fallback_chosen_when_the_hook_cannot_be_used() {
	local card; card=$(make_card 0)
	# In a cgroup namespace of its own, without CAP_SYS_ADMIN to leave it, the v2 root is not
	# the host's: the hook would see too little. The tracepoints need only CAP_BPF and CAP_PERFMON.
	unshare --cgroup setpriv --bounding-set=-sys_admin \
		"$DP" --list --watch --json --device="$T/dev/davinci*" > $T/watch 2> $T/watch.err &
	WATCH_PID=$!
	remember_pid $WATCH_PID
	wait_until 10 grep -q '^\[' $T/watch || fail "watch did not start: $(cat $T/watch.err)"
	expect_line '^dynprof: card opens: syscall tracepoints \(cgroup device hook: opening the cgroup v2 root: dynprof is in a cgroup namespace of its own' $T/watch.err
	local pid; pid=$(bash -c "exec 3<'$card'; exec sleep 600" >/dev/null 2>&1 & echo $!)
	remember_pid $pid
	watch_saw card-open $pid '"cards":\[0\]'
}
