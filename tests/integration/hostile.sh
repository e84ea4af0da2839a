# A root dynprof that no user can turn against the host (issue 15): each
# test makes a real unprivileged user (useradd, removed after) who, in a
# user + mount namespace of its own (unshare -Urm), sets a trap in the
# filesystem its target sees; root's dynprof must leave the host unchanged,
# create nothing outside --output, end within its bounds, and still give
# the other targets of the run their windows.
# It runs beside other scripts (and another suite): the /etc/passwd it
# watches changes under useradd and userdel of test users, whose lines
# host_state leaves out, and its traps are mounted on an overlay /etc
# (tests/lib/common.sh: etc_over) that such a rename does not undo.

. "$DYNPROF_TESTS/lib/users.sh"

# A fingerprint of the host paths a test watches: type, mode, owner, size
# and content hash of each (missing ones say so). Of /etc/passwd, the lines
# of test users (TEST_USER_RE: this suite's and another's, made and removed
# meanwhile) are left out, and so its size.
host_state() {
	local p
	for p in "$@"; do
		if [ "$p" = /etc/passwd ] && [ -f "$p" ] && [ ! -L "$p" ]; then
			stat -c '%n %F %a %u %g' "$p"
			grep -Ev "$TEST_USER_RE" "$p" | sha1sum
		elif [ -e "$p" ] || [ -L "$p" ]; then
			stat -c '%n %F %a %u %g %s' "$p"
			[ -f "$p" ] && [ ! -L "$p" ] && sha1sum < "$p"
		else
			echo "$p missing"
		fi
	done
}

# Every file an unprivileged user puts in its target's filesystem is opened
# non-blocking and refused unless regular: a FIFO over /etc/passwd hangs
# neither --list nor --pid=auto nor a run over several targets.
test_fifo_over_passwd_does_not_hang_list_auto_or_others() {
	local u good evil before; u=$(make_user)
	before=$(host_state /etc/passwd $ROOT_HOME)
	good=$(start_target)
	evil=$(start_hostile_target $u "mkfifo $T/u/$u/fifo && mount --bind $T/u/$u/fifo /etc/passwd || exit 1")
	[ -p /proc/$evil/root/etc/passwd ] || fail "the trap is not in place"
	within 20 "$DP" --list --device="$T/dev/davinci*" > $T/out 2>&1
	expect_line "^$good "
	printf 'start\nstop\nquit\n' > $T/cmds
	within 30 "$DP" --pid=$good,$evil --output=$T/o < $T/cmds > $T/out 2>&1
	expect_line "^dynamic profiling for pid $good stop success$"
	expect_line "invalid pid value: $evil, .*/proc/$evil/root/etc/passwd: not a regular file, refused"
	[ -s "$(prof_dirs_of $T/o $good)/host/end_info" ] || fail "GOOD got no window: $(ls $T/o)"
	within 30 "$DP" --pid=auto --device="$T/dev/davinci*" --output=$T/o2 < $T/cmds > $T/out 2>&1
	expect_line "^dynamic profiling for pid $good stop success$"
	[ "$before" = "$(host_state /etc/passwd $ROOT_HOME)" ] || fail "host changed"
	[ -p $T/u/$u/fifo ] || fail "the FIFO was replaced"
}

# The same trap as a device (a /dev/full bind-mounted over the passwd
# file: it reads zeros forever) and a FIFO over a toolkit version file.
test_device_over_passwd_is_refused_and_sigterm_ends_the_run() {
	local u good evil; u=$(make_user)
	good=$(start_target)
	evil=$(start_hostile_target $u "mount --bind /dev/zero /etc/passwd || exit 1")
	[ -c /proc/$evil/root/etc/passwd ] || fail "the trap is not in place"
	dp_background --pid=$evil,$good --output=$T/o
	dp_send start
	wait_until 20 grep -q "^dynamic profiling for pid $good start success$" $T/out ||
		{ cat $T/out; fail "GOOD never started"; }
	expect_line "invalid pid value: $evil, .*/proc/$evil/root/etc/passwd: not a regular file, refused"
	kill -TERM $DP_PID
	wait_until 5 all_gone $DP_PID || fail "SIGTERM not honoured within 5 s"
}

# The passwd file is read with the target's rights: a root-only file
# (0600) bind-mounted over it, which root could read, is not read (its
# helper gets "permission denied"), so nothing in it decides a path.
test_passwd_its_user_may_not_read_is_not_read() {
	local u good evil; u=$(make_user)
	( umask 077; echo "root:x:0:0::/root:/bin/sh" > $T/rootonly )
	good=$(start_target)
	evil=$(start_hostile_target $u "mount --bind $T/rootonly /etc/passwd || exit 1")
	printf 'start\nstop\nquit\n' > $T/cmds
	within 30 "$DP" --pid=$good,$evil --output=$T/o < $T/cmds > $T/out 2>&1
	expect_line "invalid pid value: $evil, .*cannot read /proc/$evil/root/etc/passwd: permission denied"
	expect_line "^dynamic profiling for pid $good stop success$"
	expect_no_line "pid $evil: window saved"
}

# in_userns USER CMD...: CMD as USER inside a user + mount namespace of its own.
in_userns() { local u=$1; shift; as_user "$u" unshare -Urm "$@"; }

# A --output that targets can write: a symlink planted at the record's name
# is not followed (nothing made at its target, the host file unchanged),
# and a PROF_ folder whose name is not exactly CANN's is never taken for a
# window (its newline cannot forge a line).
test_writable_output_symlinked_record_and_forged_name_are_refused() {
	local u good forged; u=$(make_user)
	mkdir -p $T/o && chmod 1777 $T/o
	echo "root's file" > $T/hostfile
	local before; before=$(host_state $T/hostfile $T/made)
	good=$(start_target)
	dp_background --pid=$good --output=$T/o
	dp_send start
	wait_until 20 grep -q "^dynamic profiling for pid $good start success$" $T/out ||
		{ cat $T/out; fail "no start"; }
	forged="PROF_000001_20260101000000000_x"$'\n'"[INFO] pid $good: window saved forged_$(printf %08d $good)ABCDEFGH"
	in_userns $u sh -c "ln -s $T/made $T/o/${DP_PID}_profiling_output_record &&
		ln -s $T/hostfile $T/o/${DP_PID}_dynprof_windows && mkdir '$T/o/$forged'" ||
		fail "could not plant"
	dp_send stop quit
	wait_until 20 all_gone $DP_PID || fail "dynprof did not end"
	expect_line "^dynamic profiling for pid $good stop success$"
	expect_line "^\[INFO\] pid $good: window saved in $T/o/PROF_[0-9]{6}_[0-9]{17}_$(printf %08d $good)[A-R]{8}$"
	expect_no_line "forged"
	expect_line "cannot add PROF_.* to $T/o/${DP_PID}_profiling_output_record: "
	[ "$before" = "$(host_state $T/hostfile $T/made)" ] || fail "host changed: $(host_state $T/hostfile $T/made)"
	[ -L $T/o/${DP_PID}_profiling_output_record ] || fail "the planted link was replaced"
}

# A record of dynprof's own is appended to; one the user made (a regular
# file of its own at the name) is refused, never written.
test_record_file_planted_by_a_user_is_not_written() {
	local u good; u=$(make_user)
	mkdir -p $T/o && chmod 1777 $T/o
	good=$(start_target)
	dp_background --pid=$good --output=$T/o
	in_userns $u sh -c "echo planted > $T/o/${DP_PID}_profiling_output_record" || fail "could not plant"
	dp_send start stop start stop quit
	wait_until 30 all_gone $DP_PID || fail "dynprof did not end"
	[ "$(cat $T/o/${DP_PID}_profiling_output_record)" = planted ] || fail "the user's file was written"
	[ "$(count_lines "window saved in $T/o/PROF_")" = 2 ] || { cat $T/out; fail "two windows expected"; }
}

# Its own record, when nobody interferes, holds each window once (the
# O_EXCL creation, then appends to the file it made).
test_record_of_dynprof_holds_each_window() {
	local good; good=$(start_target)
	printf 'start\nstop\nstart\nstop\nquit\n' | dp --pid=$good --output=$T/o
	expect_status 0 $?
	[ "$(wc -l < $T/o/*_profiling_output_record)" = 2 ] || fail "record: $(cat $T/o/*_profiling_output_record)"
	[ "$(stat -c %a $T/o/*_profiling_output_record)" = 640 ] || fail "mode"
}

# Text from a target, printed: a v1 server's reply detail with a terminal
# title sequence and a newline forging an [INFO] line is shown escaped.
FORGED=$'\e]0;pwned\a\n[INFO] dynprof: forged line'
test_v1_reply_detail_with_escapes_is_printed_escaped() {
	local u pid; u=$(make_user)
	export BAD_PEER_V1_DETAIL="$FORGED"
	pid=$(HOSTILE_CMD="exec $BAD_PEER v1-disconnect /root/dynamic_profiling_socket_%d" \
		start_hostile_target $u :)
	within 30 "$DP" --pid=$pid --output=$T/o --protocol=v1 --events=json:$T/ev < <(sleep 2; echo start) > $T/out 2>&1
	expect_line "^Server disconnected, \\\\x1b\]0;pwned\\\\x07\\\\x0a\[INFO\] dynprof: forged line \(pid $pid\)$"
	expect_no_line "^\[INFO\] dynprof: forged"
	! grep -q $'\e' $T/out || fail "an escape character reached the console"
	python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' $T/ev || fail "--events not JSON"
	! grep -q $'\e' $T/ev || fail "an escape character in --events"
}

# A command line with escapes and a newline, in --list (table and --json)
# and --events: escaped, one line, valid JSON.
test_command_line_with_escapes_is_listed_escaped() {
	local u pid; u=$(make_user)
	mkdir -m 1777 $T/o
	# Its argv[0] carries the trap (comm cannot be written from another process).
	pid=$(HOSTILE_ARGV0="$FORGED" start_hostile_target $u :)
	tr '\0' ' ' < /proc/$pid/cmdline | grep -q $'\e' || fail "the argv trap is not in place"
	within 20 "$DP" --list --device="$T/dev/davinci*" > $T/out 2>&1
	# (the process model already shows such bytes as '?'; escaping is the rule on top)
	expect_line "^$pid .*\]0;pwned.*\[INFO\] dynprof: forged line"
	expect_no_line "^\[INFO\] dynprof: forged"
	! grep -q $'\e' $T/out || fail "an escape character reached the console"
	within 20 "$DP" --list --json --device="$T/dev/davinci*" > $T/list 2>&1
	python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1]) if l.strip()]' $T/list ||
		fail "--list --json not JSON: $(cat -v $T/list)"
	! grep -q $'\e' $T/list || fail "an escape character in --list --json"
	printf 'start\nstop\nquit\n' > $T/cmds
	within 30 "$DP" --pid=$pid --output=$T/o --events=json:$T/ev < $T/cmds > $T/out 2>&1
	expect_line "^dynamic profiling for pid $pid stop success$"
	python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' $T/ev || fail "--events not JSON"
	! grep -q $'\e' $T/ev $T/out || fail "an escape character in --events or the console"
}

# A PROF_ entry with the target's own name pattern that is a symlink (to a
# root-only folder) or a plain file: never moved into --output, no "window
# saved" for it, one line saying why; both targets' real windows saved.
test_prof_entry_that_is_a_symlink_or_file_is_not_saved() {
	local u good evil rd link file; u=$(make_user)
	mkdir -m 700 $T/secret && echo secret > $T/secret/f
	local before; before=$(host_state $T/secret $T/secret/f)
	mkdir -m 1777 $T/o
	good=$(start_target)
	evil=$(start_hostile_target $u :)
	dp_background --pid=$good,$evil --output=$T/o
	dp_send start
	wait_until 20 grep -q "^dynamic profiling for pid $evil start success$" $T/out ||
		{ cat $T/out; fail "no start for $evil"; }
	rd=$T/o # the target sees --output at the same path: it writes there
	link=PROF_000001_20260101000000000_$(printf %08d $evil)ABCDEFGH
	file=PROF_000002_20260101000000000_$(printf %08d $evil)ABCDEFGH
	in_userns $u sh -c "ln -s $T/secret $rd/$link && echo x > $rd/$file" || fail "could not plant"
	dp_send stop quit
	wait_until 30 all_gone $DP_PID || fail "dynprof did not end"
	expect_line "$link is a symlink: not a window folder, not saved$"
	expect_line "$file is not a folder: not a window folder, not saved$"
	expect_no_line "window saved in $T/o/PROF_00000[12]_20260101000000000_"
	! grep -q "$link\|$file" $T/o/*_profiling_output_record || fail "recorded: $(cat $T/o/*_record)"
	expect_line "^\[INFO\] pid $good: window saved in $T/o/PROF_"
	expect_line "^\[INFO\] pid $evil: window saved in $T/o/PROF_"
	[ "$before" = "$(host_state $T/secret $T/secret/f)" ] || fail "host folder changed"
}

# --control=fifo:PATH where a user made the FIFO first (in a folder all may
# write): refused with one line, before any command of the user's is read.
test_control_fifo_made_by_a_user_is_refused() {
	local u good; u=$(make_user)
	mkdir -m 1777 $T/pub
	good=$(start_target)
	in_userns $u sh -c "mkfifo -m 0600 $T/pub/ctl" || fail "could not plant"
	# The user's writer: whatever it sends would be obeyed if accepted.
	as_user $u timeout 15 sh -c "printf 'start\n' > $T/pub/ctl" &
	remember_pid $!
	within 20 "$DP" --pid=$good --output=$T/o --control=fifo:$T/pub/ctl < /dev/null > $T/out 2>&1
	[ $RC -ne 0 ] || fail "accepted: $(cat $T/out)"
	expect_line "^\[ERROR\] Argument --control: FIFO $T/pub/ctl is not dynprof's own \(owner uid $(id -u $u), mode 0600\)"
	expect_no_line "start success"
	[ "$(count_lines .)" = 1 ] || fail "more than one line: $(cat $T/out)"
	# A FIFO of root's own that others may write is refused too.
	mkfifo -m 0622 $T/pub/wide && chmod 0622 $T/pub/wide
	within 20 "$DP" --pid=$good --output=$T/o --control=fifo:$T/pub/wide < /dev/null > $T/out 2>&1
	expect_line "^\[ERROR\] Argument --control: FIFO $T/pub/wide is not dynprof's own \(owner uid 0, mode 0622\)"
}

# Missing, it is made 0600; a unix control socket is 0600, and a client of
# another uid is refused even when the socket's mode was widened.
test_control_fifo_is_made_private_and_socket_clients_are_checked() {
	local u good; u=$(make_user)
	mkdir -m 1777 $T/pub
	good=$(start_target)
	dp_background --pid=$good --output=$T/o --control=fifo:$T/pub/ctl
	wait_until 5 test -p $T/pub/ctl || fail "no FIFO: $(cat $T/out)"
	[ "$(stat -c '%a %u' $T/pub/ctl)" = "600 0" ] || fail "FIFO mode $(stat -c '%a %u' $T/pub/ctl)"
	echo quit > $T/pub/ctl
	wait_until 10 all_gone $DP_PID || fail "quit not obeyed"
	"$DP" --pid=$good --output=$T/o --control=unix:$T/pub/sock < /dev/null > $T/out 2>&1 &
	local dpp=$!
	remember_pid $dpp
	wait_until 5 listening $T/pub/sock || fail "no socket: $(cat $T/out)"
	[ "$(stat -c %a $T/pub/sock)" = 600 ] || fail "socket mode $(stat -c %a $T/pub/sock)"
	chmod 0666 $T/pub/sock # as a careless admin might: the credentials still decide
	as_user $u "$B/tests/peers/ctl_client" $T/pub/sock start > $T/c1 2>&1
	expect_line "^error: permission denied \(uid $(id -u $u) is neither root nor the socket's owner\)$" $T/c1
	expect_line "^\[WARNING\] dynprof: --control: refused a client: uid $(id -u $u) \(pid [0-9]+\) is neither root nor the socket's owner \(uid 0\)$"
	sleep 0.5
	expect_no_line "start success"
	"$B/tests/peers/ctl_client" $T/pub/sock start stop quit > $T/c2 || fail "root's client: $(cat $T/c2)"
	wait_until 20 all_gone $dpp || fail "dynprof did not end"
	expect_line "^dynamic profiling for pid $good stop success$"
}

# During a window, the user bind-mounts a root folder onto its window's
# host/data; its results are copied out of its own filesystem on stop: the
# copy never crosses the mount, nothing of the root folder is copied or
# removed, and both windows are saved. The folder is readable by everyone
# (0755, files 0644): the copy, acting as the target's user, could read
# it, so only the mount check keeps it out.
test_mount_inside_a_window_folder_is_not_crossed() {
	local u good evil; u=$(make_user)
	mkdir -m 755 $T/secret && echo secret > $T/secret/f && mkdir -m 755 $T/secret/sub && echo s2 > $T/secret/sub/g
	chmod 644 $T/secret/f $T/secret/sub/g
	# The test's folder must let the target's user reach it, or the check says nothing.
	chmod o+x $T
	local before; before=$(host_state $T/secret $T/secret/f $T/secret/sub $T/secret/sub/g)
	good=$(start_target)
	# Its --output hidden by a tmpfs over the test folder: it writes in its
	# own /root/.dynprof, and dynprof copies (another file system) on stop.
	evil=$(start_hostile_target $u "mkdir -p /root/stash && mount --bind $T/secret /root/stash &&
		mount -t tmpfs tmpfs $T || exit 1
		(i=0; while ! ls -d /root/.dynprof/*/PROF_*/host/data >/dev/null 2>&1; do
			sleep 0.05; i=\$((i+1)); [ \$i -lt 1200 ] || exit 1; done
		 mount --bind /root/stash \$(ls -d /root/.dynprof/*/PROF_*/host/data | head -n 1) && echo mounted) &")
	dp_background --pid=$good,$evil --output=$T/o
	dp_send start
	wait_until 20 grep -q "^mounted" $T/u/$u.log || { cat $T/out $T/u/$u.log; fail "the mount was not made"; }
	dp_send stop quit
	wait_until 30 all_gone $DP_PID || fail "dynprof did not end"
	expect_line "^\[INFO\] pid $evil: in its own filesystem it writes to /root/\.dynprof/"
	expect_line "^\[INFO\] pid $good: window saved in $T/o/PROF_"
	expect_line "^\[INFO\] pid $evil: window saved in $T/o/PROF_"
	local moved; moved=$(prof_dirs_of $T/o $evil)
	[ -s "$moved/host/end_info" ] || fail "the window's own files not copied: $(ls -R $T/o)"
	[ ! -e "$moved/host/data/f" ] && [ ! -e "$moved/host/data/sub" ] ||
		fail "expected nothing of the mount in the copy; got: $(ls -R $moved/host/data)"
	[ "$before" = "$(host_state $T/secret $T/secret/f $T/secret/sub $T/secret/sub/g)" ] ||
		fail "the host folder changed: $(ls -laR $T/secret)"
}

# A 100 GiB sparse file in its window: copied as a sparse file (its holes
# neither read nor written), promptly, and the window saved. A file that
# ends in a hole (data, then `truncate -s 1M`) comes out whole, not cut at
# its last data.
test_sparse_file_in_a_window_is_not_expanded() {
	local u good evil; u=$(make_user)
	good=$(start_target)
	evil=$(start_filler $u "truncate -s 100G sparse && echo tail >> sparse && echo head > endhole && truncate -s 1M endhole")
	dp_background --pid=$good,$evil --output=$T/o
	dp_send start
	wait_until 20 grep -q "^filled" $T/u/$u.log || { cat $T/out $T/u/$u.log; fail "not filled"; }
	local t0=$SECONDS
	dp_send stop quit
	wait_until 60 all_gone $DP_PID || fail "dynprof did not end"
	[ $((SECONDS - t0)) -le 30 ] || fail "took $((SECONDS - t0)) s"
	expect_line "^\[INFO\] pid $good: window saved in $T/o/PROF_"
	expect_line "^\[INFO\] pid $evil: window saved in $T/o/PROF_"
	local f; f=$(prof_dirs_of $T/o $evil)/host/data/sparse
	[ "$(stat -c %s $f)" = $((100 * 1024 * 1024 * 1024 + 5)) ] || fail "size $(stat -c %s $f)"
	[ "$(stat -c %b $f)" -lt 1024 ] || fail "expanded: $(stat -c %b $f) blocks"
	f=${f%/sparse}/endhole
	[ "$(stat -c %s $f)" = 1048576 ] || fail "expected the file ending in a hole 1048576 bytes, got $(stat -c %s $f)"
	[ "$(head -c 5 $f)" = head ] || fail "its data: $(head -c 5 $f | od -c)"
}

# Past --window-max-size, a window is refused with one line and left where
# it is; the other target's window is saved.
test_window_over_the_size_limit_is_refused() {
	local u good evil; u=$(make_user)
	good=$(start_target)
	evil=$(start_filler $u "head -c 4194304 /dev/urandom > real")
	dp_background --pid=$good,$evil --output=$T/o --window-max-size=1M
	dp_send start
	wait_until 20 grep -q "^filled" $T/u/$u.log || { cat $T/out $T/u/$u.log; fail "not filled"; }
	dp_send stop quit
	wait_until 30 all_gone $DP_PID || fail "dynprof did not end"
	expect_line "^\[INFO\] pid $good: window saved in $T/o/PROF_"
	expect_line "^\[ERROR\] dynprof: pid $evil: cannot move /root/\.dynprof/.* it holds more than --window-max-size, left where it is$"
	expect_no_line "pid $evil: window saved"
	[ -z "$(prof_dirs_of $T/o $evil)" ] || fail "a part was left in --output: $(ls $T/o)"
	ls /proc/$evil/root/root/.dynprof/*/PROF_*/host/data/real > /dev/null || fail "the window was not left where it was"
}

# A window of two folders of which only one can be moved (the second is
# past --window-max-size, left where it is): saved incomplete, never
# saved, with the refused one named; the other folder is in --output.
test_window_with_one_of_two_folders_moved_is_saved_incomplete() {
	local u evil; u=$(make_user)
	# A second PROF_ folder of its own name pattern beside the window's, too big to move.
	evil=$(start_filler $u "d=\$(basename \$(cd ../.. && pwd)); two=../../../\${d%????????}RRRRRRRR;
		[ \$two != ../../../\$d ] || two=../../../\${d%????????}QQQQQQQQ;
		mkdir -p \$two/host && head -c 4194304 /dev/urandom > \$two/host/real")
	dp_background --pid=$evil --output=$T/o --window-max-size=1M --events=json:$T/ev
	dp_send start
	wait_until 20 grep -q "^filled" $T/u/$u.log || { cat $T/out $T/u/$u.log; fail "not filled"; }
	dp_send stop quit
	wait_until 30 all_gone $DP_PID || fail "dynprof did not end"
	expect_line "^\[ERROR\] dynprof: pid $evil: cannot move /root/\.dynprof/.* it holds more than --window-max-size, left where it is$"
	[ "$(prof_dirs_of $T/o $evil | wc -l)" = 1 ] || fail "expected the one small folder in --output, got: $(ls $T/o)"
	local fates; fates=$(jq -r 'select(.event == "window-close") | .fate' $T/ev | tr '\n' ' ')
	[ "$fates" = "incomplete " ] || fail "expected one window-close event with fate incomplete, got: '$fates'"
	[ "$(jq -r '.fate' $T/o/*_dynprof_windows | tr '\n' ' ')" = "incomplete " ] ||
		fail "expected the window record's fate incomplete, got: $(cat $T/o/*_dynprof_windows)"
	expect_line "summary: 1 target joined, 1 window opened, 1 PROF_ folder in $T/o; windows: 0 saved, 1 saved incomplete, 0 lost$"
}

# Past --window-max-files (a window of many empty files, which would cost
# --output its inodes), the same; a bad value is refused with one line.
test_window_over_the_file_limit_is_refused() {
	local u good evil; u=$(make_user)
	within 10 "$DP" --pid=1 --window-max-files=0 > $T/out 2>&1
	[ "$RC" = 255 ] || fail "exit $RC for --window-max-files=0"
	expect_line "^\[ERROR\] Argument --window-max-files: invalid value: 0\. "
	good=$(start_target)
	evil=$(start_filler $u "for i in \$(seq 1 40); do : > f\$i; done")
	dp_background --pid=$good,$evil --output=$T/o --window-max-files=20
	dp_send start
	wait_until 20 grep -q "^filled" $T/u/$u.log || { cat $T/out $T/u/$u.log; fail "not filled"; }
	dp_send stop quit
	wait_until 30 all_gone $DP_PID || fail "dynprof did not end"
	expect_line "^\[INFO\] pid $good: window saved in $T/o/PROF_"
	expect_line "^\[ERROR\] dynprof: pid $evil: cannot move /root/\.dynprof/.* it holds more files than --window-max-files, left where it is$"
	[ -z "$(prof_dirs_of $T/o $evil)" ] || fail "a part was left in --output: $(ls $T/o)"
	ls /proc/$evil/root/root/.dynprof/*/PROF_*/host/data/f40 > /dev/null || fail "the window was not left where it was"
}

# Row 1: the user bind-mounts a root-owned folder over <home>/.dynprof in
# its own filesystem: it is refused with one line naming it, never chowned
# nor written; the other target gets its window.
test_root_folder_mounted_over_dot_dynprof_is_not_chowned() {
	local u good evil; u=$(make_user)
	mkdir -m 755 $T/rootdir && echo mine > $T/rootdir/f
	local before; before=$(host_state $T/rootdir $T/rootdir/f)
	good=$(start_target)
	evil=$(start_hostile_target $u "mkdir -p /root/.dynprof && mount --bind $T/rootdir /root/.dynprof &&
		mount -t tmpfs tmpfs $T || exit 1")
	printf 'start\nstop\nquit\n' > $T/cmds
	within 30 "$DP" --pid=$good,$evil --output=$T/o < $T/cmds > $T/out 2>&1
	expect_line "^\[ERROR\] dynprof: pid $evil cannot see $T/o and no result folder could be made in its home /root: .dynprof or its folder is a mount point there, refused$"
	expect_line "^\[INFO\] pid $good: window saved in $T/o/PROF_"
	[ "$before" = "$(host_state $T/rootdir $T/rootdir/f)" ] || fail "the root folder changed: $(ls -la $T/rootdir)"
	[ "$(ls -A $T/rootdir)" = f ] || fail "made in the root folder: $(ls -A $T/rootdir)"
}

# The same folder already there, not mounted but not the user's (made by
# root in the user's own home): refused, not chowned.
test_dot_dynprof_of_another_user_is_refused() {
	local u good evil; u=$(make_user)
	mkdir -m 755 $T/u/$u/home/.dynprof
	good=$(start_target)
	evil=$(start_hostile_target $u "mount -t tmpfs tmpfs $T || exit 1")
	printf 'start\nstop\nquit\n' > $T/cmds
	within 30 "$DP" --pid=$good,$evil --output=$T/o < $T/cmds > $T/out 2>&1
	expect_line "^\[ERROR\] dynprof: pid $evil cannot see $T/o .*: .dynprof or its folder exists and is not its user's, refused$"
	[ "$(stat -c %u $T/u/$u/home/.dynprof)" = 0 ] || fail "chowned"
	expect_line "^\[INFO\] pid $good: window saved in $T/o/PROF_"
}

# The principle: in a target's filesystem dynprof acts with the target's
# rights. A file in its window its user may not read (root's, 0600) is not
# copied, and a folder there its user may not remove (root's) stays, with
# what it holds: root could do both, the target's helper may not. Planted
# here from the host, as any means of getting them there would.
test_window_entries_its_user_may_not_read_or_remove_are_left_alone() {
	local u good evil data; u=$(make_user)
	good=$(start_target)
	evil=$(start_filler $u "echo mine > own")
	dp_background --pid=$good,$evil --output=$T/o
	dp_send start
	wait_until 20 grep -q "^filled" $T/u/$u.log || { cat $T/out $T/u/$u.log; fail "not filled"; }
	data=$(ls -d $T/u/$u/home/.dynprof/*/PROF_*/host/data | head -n 1)
	[ -d "$data" ] || fail "no window folder seen from the host"
	( umask 077; echo rootsecret > $data/rootonly )
	mkdir -m 755 $data/rootdir && echo keep > $data/rootdir/keep
	dp_send stop quit
	wait_until 30 all_gone $DP_PID || fail "dynprof did not end"
	expect_line "^\[INFO\] pid $good: window saved in $T/o/PROF_"
	expect_line "^\[INFO\] pid $evil: window saved in $T/o/PROF_"
	expect_line "^\[WARNING\] dynprof: pid $evil: PROF_.*: 1 entry not copied .*host/data/rootonly: Permission denied$"
	local moved; moved=$(prof_dirs_of $T/o $evil)
	[ "$(cat $moved/host/data/own)" = mine ] || fail "the user's own file not copied"
	! grep -rq rootsecret $T/o || fail "the root-only file was copied"
	[ "$(cat $data/rootdir/keep 2>&1)" = keep ] || fail "root's folder was removed: $(ls -la $data 2>&1)"
	[ "$(cat $data/rootonly)" = rootsecret ] || fail "root's file was removed"
	expect_line "^\[WARNING\] dynprof: pid $evil: PROF_.* was copied to $T/o but could not be removed from /root/\.dynprof/"
}

# A folder and a symlink to /etc swapping names (renameat2 RENAME_EXCHANGE
# in a loop) while its window is copied: whatever the copy sees at each
# moment, nothing of /etc is copied, /etc is unchanged, the window is saved.
test_symlink_swapped_with_a_folder_during_the_copy_is_never_followed() {
	local u good evil before; u=$(make_user)
	before=$(host_state /etc/passwd /etc/hostname)
	good=$(start_target)
	evil=$(start_filler $u "mkdir dir && echo mine > dir/f && ln -s /etc link &&
		{ $SWAPPER dir link 30 > swaps.log 2>&1 & }")
	dp_background --pid=$good,$evil --output=$T/o
	dp_send start
	wait_until 20 grep -q "^filled" $T/u/$u.log || { cat $T/out $T/u/$u.log; fail "not filled"; }
	sleep 0.5
	dp_send stop quit
	wait_until 40 all_gone $DP_PID || fail "dynprof did not end"
	expect_line "^\[INFO\] pid $good: window saved in $T/o/PROF_"
	expect_line "^\[INFO\] pid $evil: window saved in $T/o/PROF_"
	local moved; moved=$(prof_dirs_of $T/o $evil)
	[ -d "$moved/host" ] || fail "the window was not copied"
	[ -z "$(find $moved -name passwd -o -name hostname -o -name shadow)" ] ||
		fail "files of /etc were copied: $(find $moved | head)"
	[ -z "$(find $moved -type l)" ] || fail "a symlink was copied"
	[ "$before" = "$(host_state /etc/passwd /etc/hostname)" ] || fail "/etc changed"
}

# Not root: other users' card holders cannot be seen; --list and --pid=auto
# say that, not that no process holds a card.
test_non_root_says_other_users_processes_cannot_be_seen() {
	local u pid; u=$(make_user)
	pid=$(start_target)
	as_user $u "$DP" --list --device="$T/dev/davinci*" > $T/out 2>&1
	expect_status 0 $?
	expect_no_line "^$pid "
	expect_line "^dynprof: no process dynprof can see holds a card node matching $T/dev/davinci\* \(not root: the cards of [0-9]+ processes of other users cannot be seen; run it as root\)$"
	as_user $u "$DP" --pid=auto --device="$T/dev/davinci*" --output=$T/u/$u/o < /dev/null > $T/out 2>&1
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument --pid=auto: no card-using process with a listening dynamic profiling socket among the processes dynprof can see \(not root: the cards of [0-9]+ processes of other users cannot be seen; run it as root\), stop profiling\.$"
	# As root the same card holder is there.
	"$DP" --list --device="$T/dev/davinci*" > $T/out 2>&1
	expect_line "^$pid "
}

# A target whose user namespace was made inside the one that made its
# mounts (unshare -U within unshare -Urm): its helper joins the mounts
# first, then the user namespace, and does the work with the target's
# rights. Before, setns gave EPERM and root did it from the host side.
test_nested_user_namespace_is_served_by_its_helper() {
	local u good evil card; u=$(make_user); card=$(make_card 0)
	good=$(start_target)
	# The agent preloaded into the card user only: a thread in unshare would make it fail.
	# (It holds the card before SETUP's tmpfs hides $T: under load it once
	# opened it after, found no card and ended.)
	evil=$(HOSTILE_HOLDS=1 HOSTILE_CMD="exec unshare -U --map-root-user env PROFILING_MODE=dynamic LD_PRELOAD=$AGENT_SO \
		DYNPROF_AGENT_DEVICES='$T/dev/davinci*' $CARD_USER $card 600" start_hostile_target $u "mount -t tmpfs tmpfs $T || exit 1")
	[ "$(readlink /proc/$evil/ns/user)" != "$(readlink /proc/$$/ns/user)" ] || fail "the target is not in a user namespace"
	printf 'start\nstop\nquit\n' > $T/cmds
	within 30 "$DP" --pid=$good,$evil --output=$T/o < $T/cmds > $T/out 2>&1
	expect_no_line "host side"
	expect_line "^\[INFO\] pid $evil: in its own filesystem it writes to /root/.dynprof/"
	expect_line "^\[INFO\] pid $evil: window saved in $T/o/PROF_"
	expect_line "^\[INFO\] pid $good: window saved in $T/o/PROF_"
}

# A root dynprof that may not enter a target's namespaces (no
# CAP_SYS_ADMIN, CAP_SYS_CHROOT: no helper can be made) refuses that
# target: it neither reads a file its user may not read (a root-only file
# bound over its passwd) nor makes or chowns anything in its filesystem,
# and serves the others.
test_root_without_a_helper_refuses_the_target_instead_of_acting_as_root() {
	local u good evil; u=$(make_user)
	( umask 077; echo "root:x:0:0:SECRET:/root:/bin/sh" > $T/rootonly )
	good=$(start_target)
	evil=$(start_hostile_target $u "mount --bind $T/rootonly /etc/passwd || exit 1")
	printf '#!/bin/sh\nexec setpriv --bounding-set=-sys_admin,-sys_chroot --inh-caps=-sys_admin,-sys_chroot %s "$@"\n' "$DP" > $T/dp-nocaps
	chmod +x $T/dp-nocaps
	printf 'start\nstop\nquit\n' > $T/cmds
	within 60 $T/dp-nocaps --pid=$good,$evil --output=$T/o < $T/cmds > $T/out 2>&1
	expect_line "invalid pid value: $evil, .*refused: dynprof would act in its filesystem with root's rights, not its own"
	expect_no_line "SECRET|host side"
	[ ! -e $T/u/$u/home/.dynprof ] || fail "made in the target's filesystem: $(ls -la $T/u/$u/home/.dynprof)"
	expect_line "^dynamic profiling for pid $good stop success$"
}
