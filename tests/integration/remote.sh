# dynprof --remote=PATH CMD...: the client of --control=unix:PATH, against
# real agent targets: every command and selector, status (text and JSON,
# parsed by python3), lost kernel events counted, a non-owner refused by
# the peer check, and the client's own errors.

. "$DYNPROF_TESTS/lib/users.sh"
RPY="python3 -c"

# dp_control ARGS...: dynprof in the background with --control=unix:$T/ctl
# (its console reads nothing); sets DPP once the socket listens.
dp_control() {
	"${DP_BIN:-$DP}" "$@" --device="$T/dev/davinci*" --output=$T/o --control=unix:$T/ctl < /dev/null > $T/out 2>&1 &
	DPP=$!
	remember_pid $DPP
	wait_until 10 listening $T/ctl || fail "no control socket: $(cat $T/out)"
}

# remote CMD...: the client; its output in $T/r, its status in RC.
remote() {
	timeout -s KILL 90 "$DP" --remote=$T/ctl "$@" > $T/r 2>&1
	RC=$?
}

# jget PYTHON-EXPR: evaluate on the JSON status in $T/r (its first line), as `s`.
jget() {
	$RPY "import json,sys; s=json.loads(open('$T/r').readline()); print($1)"
}

expect_ack() { # expect_ack WORD: the last line is "ack WORD" (and what each target answered), status 0
	[ $RC = 0 ] || fail "status $RC: $(cat $T/r)"
	tail -n 1 $T/r | grep -Eq "^ack $1(\$|: | \{)" || fail "no ack $1: $(cat $T/r)"
}

expect_error() { # expect_error REGEX: one line "error: ...", status 1
	[ $RC = 1 ] || fail "status $RC, expected 1: $(cat $T/r)"
	[ "$(wc -l < $T/r)" = 1 ] || fail "more than one line: $(cat $T/r)"
	grep -Eq "^error: $1\$" $T/r || fail "expected error: $1, got: $(cat $T/r)"
}

test_remote_start_stop_by_pid_and_status_json() {
	local a b; a=$(start_target); b=$(TARGET_CARD=1 start_target)
	dp_control --pid=$a,$b
	remote status --json
	expect_ack status
	[ "$(wc -l < $T/r)" = 2 ] || fail "status --json is not one line: $(cat $T/r)"
	[ "$(jget "s['schema'], s['mode'], s['target_count'], sorted(t['pid'] for t in s['targets'])")" = \
	  "1 attach 2 [$(( a < b ? a : b )), $(( a < b ? b : a ))]" ] || fail "header: $(cat $T/r)"
	[ "$(jget "[(t['cards'], t['window'], t['uid'], t['user'], t['container']) for t in s['targets'] if t['pid']==$a]")" = \
	  "[([0], 'closed', 0, 'root', None)]" ] || fail "target $a: $(cat $T/r)"
	[ "$(jget "[t['cards'] for t in s['targets'] if t['pid']==$b]")" = "[[1]]" ] || fail "cards of $b: $(cat $T/r)"
	remote start pid=$a
	expect_ack start
	wait_until 5 grep -q "^dynamic profiling for pid $a start success$" $T/out || fail "no start: $(cat $T/out)"
	remote status --json
	[ "$(jget "sorted((t['pid'], t['window']) for t in s['targets'])")" = \
	  "$($RPY "print(sorted([($a, 'open'), ($b, 'closed')]))")" ] || fail "windows: $(cat $T/r)"
	[ "$(jget "s['windows']['opened'], s['windows']['open'], s['session_window']")" = "1 1 False" ] ||
		fail "window counts: $(cat $T/r)"
	remote stop pid=$a
	expect_ack stop
	remote status --json
	[ "$(jget "s['windows']['saved'], [t['last_window']['fate'] for t in s['targets'] if t['pid']==$a]")" = \
	  "1 ['saved']" ] || fail "after stop: $(cat $T/r)"
	jget "[t['last_window']['folders'][0] for t in s['targets'] if t['pid']==$a][0]" > $T/folder
	[ -s "$T/o/$(cat $T/folder)/host/end_info" ] || fail "last folder $(cat $T/folder) not in --output"
	grep -q "pid $b start success" $T/out && fail "$b was started: $(cat $T/out)"
	remote quit
	expect_ack quit
	wait_until 20 all_gone $DPP || fail "dynprof did not end"
}

test_remote_status_text() {
	local a; a=$(start_target)
	# The second rule never fires: the run outlives the first.
	dp_control --pid=$a --window=start=file:$T/go,stop=+1s --window=start=file:$T/never
	remote status
	expect_ack status
	grep -Eq "^mode attach, up 0h00m[0-9]{2}s, 1 target, output $T/o$" $T/r || fail "header: $(cat $T/r)"
	grep -Eq "^windows: 0 opened, 0 open, 0 saved, 0 saved incomplete, 0 lost$" $T/r || fail "windows: $(cat $T/r)"
	grep -Eq "^kernel: [0-9]+ events lost, - rescans, - processes in the model$" $T/r || fail "kernel: $(cat $T/r)"
	grep -Eq "^HOST PID +NS PID +CONTAINER +USER +CARDS +WINDOW +WINDOWS +RULES +LAST FOLDER$" $T/r || fail "table: $(cat $T/r)"
	grep -Eq "^$a +$a +- +root +0 +closed +0 +1:armed,2:armed +-$" $T/r || fail "row: $(cat $T/r)"
	grep -Eq "^rule 1: start=file:$T/go,stop=\+1s$" $T/r || fail "rule: $(cat $T/r)"
	touch $T/go
	wait_until 10 grep -q "stop success" $T/out || fail "rule window did not run: $(cat $T/out)"
	remote status
	wait_until 10 eval 'remote status; grep -Eq "^$a +$a +- +root +0 +closed +1 +1:done,2:armed +PROF_[0-9_]+${a}[A-Z]+$" $T/r' ||
		fail "row after the rule: $(cat $T/r)"
	grep -Eq "^rule 2: start=file:$T/never$" $T/r || fail "rule 2: $(cat $T/r)"
}

test_remote_selectors_user_all_and_no_match() {
	local a b; a=$(start_target); b=$(TARGET_CARD=1 start_target)
	dp_control --pid=$a,$b
	remote start user=root
	expect_ack start
	[ "$(grep -c "start success" $T/out)" = 2 ] || fail "user=root did not start both: $(cat $T/out)"
	remote stop user=0
	expect_ack stop
	[ "$(grep -c "stop success" $T/out)" = 2 ] || fail "user=0 did not stop both: $(cat $T/out)"
	remote start all
	expect_ack start
	[ "$(grep -c "start success" $T/out)" = 4 ] || fail "all: $(cat $T/out)"
	remote stop
	expect_ack stop
	remote start pid=1
	expect_error "no target matches pid=1"
	remote stop user=daemon
	expect_error "no target matches user=daemon"
	remote stop user=nosuchuser$RANDOM
	expect_error "no target matches user=nosuchuser[0-9]+"
	remote start container=abcd
	expect_error "no target matches container=abcd"
	remote start pid=x
	expect_error "'start pid=x': 'pid=x': 'x' is not a pid \(pid=N, N from 1\)"
	remote frobnicate
	expect_error "'frobnicate': unknown command .*"
	[ "$(grep -c "start success" $T/out)" = 4 ] || fail "a refused command started something: $(cat $T/out)"
	remote quit all
	expect_ack quit
	wait_until 20 all_gone $DPP || fail "quit all did not end the run"
}

test_remote_quit_pid_lets_one_target_go() {
	local a b; a=$(start_target); b=$(TARGET_CARD=1 start_target)
	dp_control --pid=$a,$b
	remote start
	expect_ack start
	remote quit pid=$a
	expect_ack quit
	# Its window stopped first (saved), then QUIT; the other still collects.
	expect_line "^dynamic profiling for pid $a stop success$"
	expect_line "^dynamic profiling for pid $a quit success$"
	expect_no_line "pid $b (stop|quit) success"
	[ "$(prof_dirs_of $T/o $a | wc -l)" = 1 ] || fail "no folder of $a"
	remote status --json
	[ "$(jget "s['target_count'], [t['pid'] for t in s['targets']], s['windows']['saved'], s['windows']['open']")" = \
	  "1 [$b] 1 1" ] || fail "after quit pid=$a: $(cat $T/r)"
	remote quit pid=$a
	expect_error "no target matches pid=$a"
	all_gone $DPP && fail "dynprof ended"
	# $a is still serving: another client may take it.
	has_socket $a || fail "target $a lost its socket"
	remote quit pid=$b
	expect_ack quit
	# No target left: an attach run ends.
	wait_until 20 all_gone $DPP || fail "dynprof did not end with no target left"
	expect_line "no target left"
}

# A container found by its engine's name and by an id prefix.
test_remote_container_selector() {
	local id name=job$RANDOM cg pid host
	id=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
	mkdir -p $T/docker/containers/$id
	printf '{"ID":"%s","Name":"/%s"}' $id $name > $T/docker/containers/$id/config.v2.json
	cg=/sys/fs/cgroup/pids/docker/$id
	mkdir -p $cg || fail "cannot make cgroup $cg"
	echo $cg >> $T/.cgroups
	host=$(start_target)
	pid=$(TARGET_CARD=1 start_target)
	echo $pid > $cg/cgroup.procs || fail "cannot move $pid into $cg"
	DYNPROF_DOCKER_ROOT=$T/docker dp_control --pid=$host,$pid
	remote status --json
	[ "$(jget "[(t['container'], t['container_id'], t['container_name']) for t in s['targets'] if t['pid']==$pid]")" = \
	  "[('$name', '$id', '$name')]" ] || fail "container fields: $(cat $T/r)"
	remote start container=$name
	expect_ack start
	expect_line "^dynamic profiling for pid $pid start success$"
	expect_no_line "pid $host start success"
	remote stop container=${id:0:6}
	expect_ack stop
	expect_line "^dynamic profiling for pid $pid stop success$"
	remote stop container=${id:0:3}
	expect_error "no target matches container=${id:0:3}"
	remote stop container=${name:0:4}
	expect_error "no target matches container=${name:0:4}"
}

# Lost kernel events are counted in status: the tinyring build's 4 KiB ring
# buffer overflows while dynprof is stopped and a fork storm runs.
test_remote_status_counts_lost_kernel_events() {
	local a; a=$(start_target)
	# An `open` rule needs the process tracker (its ring buffer sees every fork).
	DP_BIN=$B/tests/dynprof-tinyring dp_control --pid=$a --window=start=open,stop=+1h
	remote status --json
	# Numbers, not null (a 4 KiB ring on a busy host may have lost some already).
	local lost rescans
	read -r lost rescans < <(jget "s['kernel']['events_lost'], s['kernel']['rescans']")
	[ "$(jget "s['kernel']['model_processes'] > 0")" = True ] && [ "$lost" -ge 0 ] && [ "$rescans" -ge 0 ] ||
		fail "before: $(cat $T/r)"
	kill -STOP $DPP
	local i storm=(); for i in $(seq 300); do /bin/true & storm+=($!); done
	wait "${storm[@]}"
	kill -CONT $DPP
	wait_until 10 eval 'remote status --json; [ "$(jget "s[\"kernel\"][\"events_lost\"] > $lost and s[\"kernel\"][\"rescans\"] > $rescans")" = True ]' ||
		fail "no loss counted (before: $lost lost, $rescans rescans): $(cat $T/r) $(cat $T/out)"
	remote status
	grep -Eq "^kernel: [1-9][0-9]* events lost, [1-9][0-9]* rescans, [1-9][0-9]* processes in the model$" $T/r ||
		fail "text: $(cat $T/r)"
}

# Only root and the socket's owner: the socket is 0600 (the kernel refuses
# the connect), and with its mode widened the peer check refuses.
test_remote_non_owner_is_refused() {
	local u=dpr$$x$RANDOM a
	useradd -M -N -s /bin/sh -d /nonexistent "$u" >/dev/null || fail "useradd $u failed"
	echo "$u" >> $T/.users
	chmod 755 $T
	a=$(start_target)
	dp_control --pid=$a
	local uid; uid=$(id -u $u)
	setpriv --reuid=$uid --regid="$(id -g $u)" --clear-groups --inh-caps=-all \
		"$DP" --remote=$T/ctl start > $T/r 2>&1
	RC=$?
	[ $RC = 2 ] || fail "status $RC: $(cat $T/r)"
	grep -q "^\[ERROR\] dynprof: --remote: cannot connect to $T/ctl: permission denied" $T/r || fail "$(cat $T/r)"
	chmod 0666 $T/ctl # as a careless admin might: the credentials still decide
	setpriv --reuid=$uid --regid="$(id -g $u)" --clear-groups --inh-caps=-all \
		"$DP" --remote=$T/ctl start > $T/r 2>&1
	RC=$?
	expect_error "permission denied \(uid $uid is neither root nor the socket's owner\)"
	wait_until 5 grep -q "refused a client" $T/out || fail "no warning: $(cat $T/out)"
	expect_line "^\[WARNING\] dynprof: --control: refused a client: uid $uid \(pid [0-9]+\) is neither root nor the socket's owner \(uid 0\)$"
	sleep 0.3
	expect_no_line "start success"
	remote status
	expect_ack status
}

test_remote_client_errors() {
	"$DP" --remote=$T/none status > $T/r 2>&1
	RC=$?
	[ $RC = 2 ] || fail "missing socket: status $RC"
	[ "$(cat $T/r)" = "[ERROR] dynprof: --remote: cannot connect to $T/none: no such socket (is dynprof running with --control=unix:PATH?)" ] ||
		fail "missing socket: $(cat $T/r)"
	# A socket nobody listens on any more.
	$RPY "import socket; s=socket.socket(socket.AF_UNIX); s.bind('$T/stale'); s.close()"
	"$DP" --remote=$T/stale status > $T/r 2>&1
	RC=$?
	[ $RC = 2 ] || fail "stale socket: status $RC"
	grep -q "^\[ERROR\] dynprof: --remote: cannot connect to $T/stale: connection refused" $T/r || fail "$(cat $T/r)"
	# A listener that never answers: the timeout.
	$RPY "import socket,time
s=socket.socket(socket.AF_UNIX); s.bind('$T/mute'); s.listen(4)
c=s.accept(); time.sleep(600)" &
	remember_pid $!
	wait_until 5 test -S $T/mute || fail "no mute listener"
	local t0=$SECONDS
	"$DP" --remote=$T/mute --timeout=1s status > $T/r 2>&1
	RC=$?
	[ $RC = 2 ] || fail "timeout: status $RC: $(cat $T/r)"
	[ "$(cat $T/r)" = "[ERROR] dynprof: --remote: no answer from $T/mute within 1000 ms (--timeout)" ] || fail "$(cat $T/r)"
	[ $((SECONDS - t0)) -lt 30 ] || fail "the timeout took $((SECONDS - t0)) s"
	# Options: no command, and what does not go with it.
	"$DP" --remote=$T/ctl > $T/r 2>&1
	[ $? = 255 ] || fail "no command accepted"
	grep -q "^\[ERROR\] Argument --remote: no command given" $T/r || fail "$(cat $T/r)"
	"$DP" --remote=$T/ctl --pid=1 status > $T/r 2>&1
	[ $? = 255 ] || fail "--pid accepted"
	grep -q "^\[ERROR\] Argument --remote: it takes only --timeout" $T/r || fail "$(cat $T/r)"
}

# The console takes the same selectors and status as --control.
test_console_selectors_and_status() {
	local a b; a=$(start_target); b=$(TARGET_CARD=1 start_target)
	printf 'start pid=%s\nstatus\nstop pid=99999999\nstatus --json\nquit pid=%s\nstop\nquit\n' $a $b |
		dp --pid=$a,$b --device="$T/dev/davinci*" --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $a start success$"
	expect_no_line "pid $b start success"
	expect_line "^$a +$a +- +root +0 +open +1 +- +-$"
	expect_line "^error: no target matches pid=99999999$"
	grep '^{"schema":1' $T/out > $T/r || fail "no JSON status line: $(cat $T/out)"
	[ "$(jget "s['target_count']")" = 2 ] || fail "json: $(cat $T/r)"
	expect_line "^dynamic profiling for pid $b quit success$"
	expect_line "^dynamic profiling for pid $a stop success$"
}

# The console runs one command at a time: with a STOP whose reply comes
# 1.5 s late, the status on the next line runs once the stop ended (its
# window no longer open), never while it is under way.
test_console_next_line_waits_for_a_stop_under_way() {
	local s; s=$(BAD_PEER_DELAY_MS=1500 start_bad_peer slow-stop)
	printf 'start\nstop\nstatus\nquit\n' | dp --pid=$s --output=$T/o
	local stopped shown
	stopped=$(grep -n "^dynamic profiling for pid $s stop success$" $T/out | cut -d: -f1)
	shown=$(grep -n "^windows: " $T/out | cut -d: -f1)
	[ -n "$stopped" ] && [ -n "$shown" ] || fail "expected a stop success and a status; got: $(cat $T/out)"
	[ "$stopped" -lt "$shown" ] || fail "expected the status after the stop ended (line $stopped), it ran at line $shown: $(cat $T/out)"
	expect_line "^windows: 1 opened, 0 open, "
}

# A --commands file: the same grammar; a selector matching nothing is said, the script goes on.
test_commands_file_selectors() {
	local a b; a=$(start_target); b=$(TARGET_CARD=1 start_target)
	printf 'start pid=%s\nstop user=nosuch\nstatus\nstop all\nquit\n' $b > $T/cmds
	dp --pid=$a,$b --device="$T/dev/davinci*" --output=$T/o --commands=$T/cmds
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $b start success$"
	expect_no_line "pid $a start success"
	expect_line "^\[ERROR\] dynprof: commands: no target matches user=nosuch$"
	expect_line "^$b +$b +- +root +1 +open +1 +- +-$"
	expect_line "^dynamic profiling for pid $b stop success$"
	printf 'start pid=0\n' > $T/bad
	dp --pid=$a --output=$T/o --commands=$T/bad
	expect_status 255 $?
	expect_line "^\[ERROR\] dynprof: $T/bad:1: 'start pid=0': 'pid=0': '0' is not a pid"
}

# Launch mode: status has the tracker's numbers and the joiner's cards.
test_remote_status_in_launch_mode() {
	local card; card=$(make_card 0)
	"$DP" --dynamic=on --device="$T/dev/davinci*" --output=$T/o --control=unix:$T/ctl \
		env LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES="$T/dev/davinci*" $CARD_USER $card 600 \
		< /dev/null > $T/out 2>&1 &
	DPP=$!
	remember_pid $DPP
	wait_until 10 grep -q "target joined" $T/out || fail "no join: $(cat $T/out)"
	remote status --json
	expect_ack status
	[ "$(jget "s['mode'], s['target_count'], s['targets'][0]['cards'], s['kernel']['events_lost'], s['kernel']['rescans'], s['kernel']['model_processes'] > 0")" = \
	  "launch 1 [0] 0 0 True" ] || fail "launch status: $(cat $T/r)"
	remote start
	expect_ack start
	remote status --json
	[ "$(jget "s['session_window'], s['targets'][0]['window']")" = "True open" ] || fail "after start: $(cat $T/r)"
	local app; app=$(jget "s['targets'][0]['pid']")
	remember_pid $app
	remote quit
	expect_ack quit
	wait_until 10 grep -q "pid $app quit success" $T/out || fail "no quit: $(cat $T/out)"
	kill $app # launch mode then waits for the application
	wait_until 20 all_gone $DPP || fail "dynprof did not end"
}

# A client learns what each target answered, on the one reply line (a
# FIFO or socket script reads one line a command), and "error:" (status 1)
# when any refused, so a script can tell a start that did nothing from one
# that worked.
test_remote_start_stop_answers_each_target_and_fails_when_one_refused() {
	local a b d; a=$(start_target); b=$(TARGET_CARD=1 start_target)
	dp_control --pid=$a,$b
	remote start pid=$a
	expect_ack start
	[ "$(cat $T/r)" = "ack start: pid $a success" ] || fail "answer of $a: $(cat $T/r)"
	remote start
	[ $RC = 1 ] || fail "a start refused by $a answered with status $RC: $(cat $T/r)"
	[ "$(wc -l < $T/r)" = 1 ] || fail "not one reply line: $(cat $T/r)"
	grep -q "^error: start failed in 1 of 2 targets: " $T/r || fail "reply: $(cat $T/r)"
	grep -q "pid $a already started" $T/r || fail "no refusal of $a: $(cat $T/r)"
	grep -q "pid $b success" $T/r || fail "no answer of $b: $(cat $T/r)"
	remote stop pid=$b
	expect_ack stop
	d=$(prof_dirs_of $T/o $b)
	[ -n "$d" ] || fail "no folder of $b"
	[ "$(cat $T/r)" = "ack stop: pid $b success, window saved $d" ] || fail "stop answer without its folder $d: $(cat $T/r)"
	remote stop pid=$b
	[ $RC = 1 ] || fail "a stop with no window answered with status $RC: $(cat $T/r)"
	[ "$(cat $T/r)" = "error: stop failed in 1 of 1 target: pid $b not started" ] || fail "refused stop: $(cat $T/r)"
}

# The same answers as JSON after the reply's verb, for a program.
test_remote_answers_as_json() {
	local a; a=$(start_target)
	dp_control --pid=$a
	remote start --json
	expect_ack start
	[ "$($RPY "import json; l=open('$T/r').readline(); o=json.loads(l[l.index('{'):]); t=o['targets'][0]; print(t['pid'], t['ok'], t['result'])")" = \
	  "$a True success" ] || fail "start --json: $(cat $T/r)"
	remote stop pid=$a --json
	expect_ack stop
	[ "$($RPY "import json; l=open('$T/r').readline(); t=json.loads(l[l.index('{'):])['targets'][0]; print(t['ok'], t['window'], len(t['folders']), t['folders'][0].startswith('$T/o/PROF_'))")" = \
	  "True saved 1 True" ] || fail "stop --json: $(cat $T/r)"
	remote stop --json
	[ $RC = 1 ] || fail "stop of no window: status $RC: $(cat $T/r)"
	grep -q '^error: stop failed in 1 of 1 target {' $T/r || fail "refused stop --json: $(cat $T/r)"
	[ "$($RPY "import json; l=open('$T/r').readline(); t=json.loads(l[l.index('{'):])['targets'][0]; print(t['ok'], t['result'])")" = "False not started" ] ||
		fail "refused stop --json: $(cat $T/r)"
}

# fake_monitor PATH PYTHON: a listener at PATH that runs PYTHON with `c` the
# accepted connection (and records what it was sent in PATH.got).
fake_monitor() {
	$RPY "import socket,time
s=socket.socket(socket.AF_UNIX); s.bind('$1'); s.listen(4)
c=s.accept()[0]
$2
c.settimeout(2)
got=b''
try:
    while True:
        b=c.recv(4096)
        if not b: break
        got+=b
except Exception: pass
open('$1.got','wb').write(got)
time.sleep(60)" &
	remember_pid $!
	wait_until 5 test -S $1 || fail "no listener at $1"
}

# A socket another user bound where the monitor's was: nothing sent, nothing printed from it.
test_remote_refuses_a_socket_served_by_another_user() {
	local u=dpr$$x$RANDOM
	useradd -M -N -s /bin/sh -d /nonexistent "$u" >/dev/null || fail "useradd $u failed"
	echo "$u" >> $T/.users
	chmod 755 $T; mkdir $T/pub; chmod 1777 $T/pub
	# The system's python: a root-only one (pyenv's) is not the user's to run.
	setpriv --reuid="$(id -u $u)" --regid="$(id -g $u)" --clear-groups --inh-caps=-all /usr/bin/python3 -c "import socket,os,time
s=socket.socket(socket.AF_UNIX); s.bind('$T/pub/ctl'); os.chmod('$T/pub/ctl',0o777); s.listen(4)
c=s.accept()[0]; c.sendall(b'[INFO] pid 1: window saved in /etc\nack status\n')
open('$T/pub/got','wb').write(c.recv(4096)); time.sleep(60)" &
	remember_pid $!
	wait_until 5 test -S $T/pub/ctl || fail "no listener"
	timeout -s KILL 30 "$DP" --remote=$T/pub/ctl status > $T/r 2>&1
	RC=$?
	[ $RC = 2 ] || fail "status $RC: $(cat $T/r)"
	[ "$(cat $T/r)" = "[ERROR] dynprof: --remote: $T/pub/ctl is not dynprof's control socket: it is served by uid $(id -u $u), neither root nor you; nothing sent" ] ||
		fail "$(cat $T/r)"
	sleep 0.3
	[ ! -s $T/pub/got ] || fail "the command was sent: $(cat $T/pub/got)"
}

# What a listener sends is printed escaped: no terminal control, no line of its own making.
test_remote_escapes_what_it_prints() {
	fake_monitor $T/esc "c.sendall(b'ok \x1b]0;owned\x07 \x1b[2J\r[INFO] forged\nack status\n')"
	timeout -s KILL 30 "$DP" --remote=$T/esc status > $T/r 2>&1
	RC=$?
	[ $RC = 0 ] || fail "status $RC: $(cat $T/r)"
	[ "$(head -n 1 $T/r)" = 'ok \x1b]0;owned\x07 \x1b[2J\x0d[INFO] forged' ] || fail "printed raw: $(od -c $T/r | head)"
	[ "$(wc -l < $T/r)" = 2 ] || fail "lines: $(cat $T/r)"
}

# A reply that never ends its line: the client stops at a bound, its memory too.
test_remote_bounds_a_reply_without_newline() {
	fake_monitor $T/flood "
chunk=b'x'*(1<<20)
try:
    for i in range(200): c.sendall(chunk)
except Exception: pass"
	/usr/bin/time -f "%M" -o $T/rss timeout -s KILL 60 "$DP" --remote=$T/flood status > $T/r 2>&1
	grep -q "^\[ERROR\] dynprof: --remote: $T/flood sent a line longer than 16 MiB: not dynprof's answer$" $T/r ||
		fail "$(head -c 300 $T/r)"
	local kb; kb=$(tail -n 1 $T/rss)
	echo "max RSS ${kb} KiB" >&2
	# Bounded: about 19 MiB at its peak (66 MiB in an ASan build, whose
	# quarantine keeps the buffer's freed sizes); unbounded, it would pass the
	# 200 MiB it was sent.
	[ "$kb" -lt 131072 ] || fail "the client grew to $kb KiB"
}

# A user connecting in a loop: one warning line, then a count, not a line each.
test_remote_refused_clients_are_counted_not_each_told() {
	local u=dpr$$x$RANDOM
	useradd -M -N -s /bin/sh -d /nonexistent "$u" >/dev/null || fail "useradd $u failed"
	echo "$u" >> $T/.users
	chmod 755 $T
	a=$(start_target)
	dp_control --pid=$a
	chmod 0666 $T/ctl
	setpriv --reuid="$(id -u $u)" --regid="$(id -g $u)" --clear-groups --inh-caps=-all /usr/bin/python3 -c "import socket
for i in range(300):
    s=socket.socket(socket.AF_UNIX); s.connect('$T/ctl'); s.recv(200); s.close()" || fail "the user's loop failed"
	remote status
	expect_ack status
	[ "$(grep -c 'refused' $T/out)" = 1 ] || fail "$(grep -c refused $T/out) lines: $(grep refused $T/out | head -5)"
	# Past the quiet time, the next event tells the count; that refusal starts the next one,
	# told at the end.
	sleep 10.5
	setpriv --reuid="$(id -u $u)" --regid="$(id -g $u)" --clear-groups --inh-caps=-all "$DP" --remote=$T/ctl status > /dev/null 2>&1
	wait_until 5 grep -q "refused 299 more" $T/out || fail "no count: $(grep refused $T/out | head -5)"
	expect_line "^\[WARNING\] dynprof: --control: refused 299 more clients in [0-9]+ s \(the last: uid $(id -u $u), pid [0-9]+\): neither root nor the socket's owner \(uid 0\)$"
	# Told once the quiet time (10 s) passed: at least that, more under load (12 s seen).
	local secs; secs=$(sed -nE 's/.*refused 299 more clients in ([0-9]+) s .*/\1/p' $T/out)
	[ "$secs" -ge 10 ] || fail "told after $secs s, before the quiet time"
	kill -TERM $DPP; wait $DPP
	[ "$(grep -c 'refused' $T/out)" = 3 ] || fail "$(grep refused $T/out | head -5)"
	expect_line "^\[WARNING\] dynprof: --control: refused 1 more clients in [0-9]+ s \(the last: uid $(id -u $u), pid [0-9]+\): neither root nor the socket's owner \(uid 0\)$"
}

# A target's command line with bytes that are not printable ASCII (here a
# byte 0xff, not UTF-8, in its argv[0]): status --json gives its command
# escaped (\xff as four characters), as valid UTF-8 JSON, and the status
# text carries no such byte either.
test_status_json_gives_the_command_escaped() {
	local card pid; card=$(make_card 0)
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		bash -c 'exec -a "$0" "$@"' $'job\xffname' "$CARD_USER" "$card" 600 > $T/target.log 2>&1 &
	pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "target $pid never opened its socket"
	tr '\0' ' ' < /proc/$pid/cmdline | grep -q $'\xff' || fail "the byte is not in its command line"
	dp_control --pid=$pid
	remote status --json
	expect_ack status
	local cmd; cmd=$(jget "[t['command'] for t in s['targets'] if t['pid']==$pid][0]") ||
		fail "status --json is not UTF-8 JSON: $(od -c $T/r | head -5)"
	[[ $cmd == 'job\xffname '* ]] || fail "expected the command 'job\\xffname ...', got: '$cmd'"
	remote status
	expect_ack status
	! LC_ALL=C grep -q $'[\x80-\xff]' $T/r || fail "a byte past ASCII in the status text: $(od -c $T/r | head)"
}

# A command line with a quote, a backslash, a tab, a newline and a control
# byte in its argv[0]: in status --json the quote and backslash are as they
# are (JSON-escaped on the wire) and each control byte is '?' (the command
# is read so, procscan.h), so the reply stays one line and a script reading
# the field gets no raw control byte.
test_status_json_escapes_quotes_backslashes_and_control_bytes_in_the_command() {
	local card pid; card=$(make_card 0)
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		bash -c 'exec -a "$0" "$@"' $'q"uo\\te\tTAB\nNL\x01' "$CARD_USER" "$card" 600 > $T/target.log 2>&1 &
	pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "target $pid never opened its socket"
	# (a wait: a socket file left by an earlier process of the same pid may be there before the exec)
	wait_until 5 eval '[ "$(tr -dc "\n\t\001" < /proc/$pid/cmdline | wc -c)" = 3 ]' ||
		fail "the tab, newline and \\x01 are not in its command line"
	dp_control --pid=$pid
	remote status --json
	expect_ack status
	[ "$(wc -l < $T/r)" = 2 ] || fail "expected the JSON line and the ack, got: $(cat -A $T/r)"
	local cmd; cmd=$(jget "[t['command'] for t in s['targets'] if t['pid']==$pid][0]") ||
		fail "status --json is not JSON: $(cat -A $T/r)"
	[[ $cmd == 'q"uo\te?TAB?NL? '* ]] ||
		fail "expected the command 'q\"uo\\te?TAB?NL? ...', got: '$(printf %s "$cmd" | cat -A)'"
}

# status --json's window counts and last_window past their defaults: a
# target killed with its window open (saved incomplete: no end_info) and a
# server that answers the STOP "not started" (lost) are counted each in
# their own key; the live one's last_window names its number, fate, what
# ended it and no folder, and its own window count.
test_status_json_counts_windows_saved_incomplete_and_lost() {
	local a b; a=$(start_target); b=$(start_bad_peer forgets-start)
	"$DP" --pid=$a,$b --output=$T/o --control=unix:$T/ctl < /dev/null > $T/out 2>&1 &
	DPP=$!
	remember_pid $DPP
	wait_until 10 listening $T/ctl || fail "no control socket: $(cat $T/out)"
	remote start
	expect_ack start
	wait_until 10 grep -q "^dynamic profiling for pid $a start success$" $T/out || fail "no start of $a: $(cat $T/out)"
	wait_until 10 grep -q "^dynamic profiling for pid $b start success$" $T/out || fail "no start of $b: $(cat $T/out)"
	kill_hard $a
	wait_until 20 grep -q "pid $a: window saved incomplete" $T/out || fail "no incomplete window of $a: $(cat $T/out)"
	remote stop pid=$b
	expect_error "stop failed in 1 of 1 target: pid $b not started"
	wait_until 10 grep -q "pid $b: window lost" $T/out || fail "no lost window of $b: $(cat $T/out)"
	remote status --json
	expect_ack status
	[ "$(jget "s['windows']")" = "{'opened': 2, 'open': 0, 'saved': 0, 'incomplete': 1, 'lost': 1}" ] ||
		fail "expected windows opened 2, open 0, saved 0, incomplete 1, lost 1; got: $(cat $T/r)"
	[ "$(jget "[(t['windows'], t['last_window']) for t in s['targets'] if t['pid']==$b]")" = \
	  "[(1, {'number': 1, 'fate': 'lost', 'ended': 'stop', 'folders': []})]" ] ||
		fail "expected $b's one window lost at the stop, no folder; got: $(cat $T/r)"
	remote status
	expect_line "^windows: 2 opened, 0 open, 0 saved, 1 saved incomplete, 1 lost$" $T/r
}

# status --json's header and who each target is, past their defaults: the
# dynprof pid, --output and an uptime that counts; a container's pid 1 (its
# nspid 1, not its host pid) and a target of an unprivileged user (its uid
# and the host's name for it, not root's).
test_status_json_gives_the_header_and_a_targets_nspid_uid_and_user() {
	local c u h; c=$(start_contained_target); u=$(make_user)
	h=$(start_hostile_target $u ":")
	dp_control --pid=$c,$h
	remote status --json
	expect_ack status
	[ "$(jget "s['dynprof_pid'], s['output'], s['mode']")" = "$DPP $T/o attach" ] ||
		fail "expected dynprof_pid $DPP, output $T/o, mode attach; got: $(cat $T/r)"
	[ "$(jget "[(t['nspid'], t['uid'], t['user']) for t in s['targets'] if t['pid']==$c]")" = "[(1, 0, 'root')]" ] ||
		fail "expected the contained target $c at nspid 1, uid 0, root; got: $(cat $T/r)"
	[ "$(jget "[(t['nspid'], t['uid'], t['user']) for t in s['targets'] if t['pid']==$h]")" = \
	  "[($h, $(id -u $u), '$u')]" ] || fail "expected $u's target $h at nspid $h, uid $(id -u $u), $u; got: $(cat $T/r)"
	wait_until 10 eval 'remote status --json; [ "$(jget "s[\"uptime_s\"] >= 1")" = True ]' ||
		fail "expected uptime_s to reach 1: $(cat $T/r)"
}

# status --json's rules past their defaults (none): two --window rules, the
# first's window open and the second armed, each listed by its text and,
# for the target, by its index, text, state and window count; the status
# text's RULES column and rule lines say the same.
test_status_json_gives_each_rule_and_its_state_for_a_target() {
	local a; a=$(start_target)
	dp_control --pid=$a --window=start=+1ms,stop=+600s --window=start=+1h,stop=+2h
	wait_until 10 grep -q "^dynamic profiling for pid $a start success$" $T/out || fail "no rule window: $(cat $T/out)"
	remote status --json
	expect_ack status
	[ "$(jget "s['rules']")" = "['start=+1ms,stop=+600s', 'start=+1h,stop=+2h']" ] ||
		fail "expected the two rules' texts; got: $(cat $T/r)"
	[ "$(jget "[t['rules'] for t in s['targets'] if t['pid']==$a][0]")" = \
	  "[{'index': 1, 'rule': 'start=+1ms,stop=+600s', 'state': 'open', 'windows': 1}, {'index': 2, 'rule': 'start=+1h,stop=+2h', 'state': 'armed', 'windows': 0}]" ] ||
		fail "expected rule 1 open with 1 window, rule 2 armed with none; got: $(cat $T/r)"
	remote status
	expect_ack status
	grep -Eq "^$a +$a +.* 1:open,2:armed +" $T/r || fail "expected the RULES column 1:open,2:armed; got: $(cat $T/r)"
	expect_line "^rule 1: start=\+1ms,stop=\+600s$" $T/r
	expect_line "^rule 2: start=\+1h,stop=\+2h$" $T/r
}
