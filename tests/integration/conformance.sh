# Conformance: each fact of docs/PROTOCOL.md (Part 2, checked against CANN's own
# code) as a test against libdynprof_agent, in each flavour it applies to.
# docs/CONFORMANCE.md maps fact -> test -> docs/PROTOCOL.md section.
#
# Flavours (the first word of a test's name after test_):
#   9x  v2 file socket <home>/dynamic_profiling_socket_<key>   (CANN 9.0.0-beta.2 .. 9.1)
#   85  v2 abstract socket \0dyn_prof_sock_<key>               (CANN 8.5.0, 9.0.0-beta.1;
#       DYNPROF_AGENT_FLAVOUR=abstract)
#   v1  v1 file socket <home>/dynamic_profiling_socket_<pid>    (CANN <= 8.3)
# Every test talks raw protocol through tests/peers/wire_client; limits are
# scaled with DYNPROF_AGENT_MAX_REQUESTS / DYNPROF_AGENT_IDLE_TIMEOUT. Waits
# poll with deadlines; the few timed facts (idle counting) keep seconds of
# margin on either side of what they tell apart.
#
# Facts not testable here, and why:
#  - Send the 4100-byte Params in one write (the server does a single recv):
#    a client obligation; the agent reads whole messages whatever the
#    writes, and dynprof's side is tested through its own socket code.
#  - The server answers START with NOT_SET_DEVICE until the runtime set a
#    device: CANN-internal; the agent's stand-in (an open card node, or
#    dynprof_agent_set_device) is tested as 2,3 / v1 START failure.
#  - msprof leaves statusCode uninitialised in requests (the server ignores
#    it): tested only as "any status accepted" (a START with status 22005).
#  - dataLen > 4096 reads past CANN's buffer: undefined behaviour, nothing
#    to imitate.
#  - v1 client death mid-window: CANN's v1 server spins on a stale errno
#    (busy loop, window never ends): a bug, not a behaviour to copy.
#  - v1 "errno left at EAGAIN" variant of a v2 Params sent to a v1 server
#    (no reply at all): depends on a stale errno; the usual answer is tested.
#  - v1 backlog 1 (a third pending client's non-blocking connect gets
#    EAGAIN) and accept errors other than EAGAIN (EMFILE...): kernel and
#    resource details no client relies on.
#  - 9.x/8.5.0 set SIGPIPE to SIG_IGN for the whole AI process: a side
#    effect on the host program; the agent uses MSG_NOSIGNAL instead.
#  - The 10001-START v1 lifetime cap: unreachable (128 x 101 requests).
#  - result_dir, job_id, devices rewritten per device by the 9.x server,
#    storageLimit < 200MB, the dataTypeConfig the server computes, ProfAclMgr
#    states: CANN-internal; the agent records only what it is given (the
#    effective-params test below checks the overlay, which clients see).
#  - msprof's console strings (docs/PROTOCOL.md Part 2 section 9): the client's,
#    tested in the dynprof tests, not against the agent.

WIRE=$B/tests/peers/wire_client
# The agent's record of a window's effective params ({"generation":..,
# "dataTypeConfig":..,"params":{every key}}), written at START.
EFFECTIVE_PARAMS=${EFFECTIVE_PARAMS:-host/dynprof_params.json}

conf_env() {
	case $1 in
	9x) echo DYNPROF_AGENT_PROTOCOL=v2 ;;
	85) echo DYNPROF_AGENT_PROTOCOL=v2 DYNPROF_AGENT_FLAVOUR=abstract ;;
	v1) echo DYNPROF_AGENT_PROTOCOL=v1 ;;
	esac
}

# The address a flavour listens on for KEY, as wire_client takes it.
conf_addr() { # FLAVOUR KEY
	case $1 in
	85) echo "@dyn_prof_sock_$2" ;;
	*) echo "$ROOT_HOME/dynamic_profiling_socket_$2" ;;
	esac
}

# A listening row (Flags 00010000, St 01) for ADDR in PID's netns.
listening_in() { # PID ADDR
	awk -v n="$2" '$4 == "00010000" && $6 == "01" && $8 == n { f = 1 } END { exit !f }' \
		/proc/$1/net/unix
}

# The inodes of the listening unix sockets among PID's own fds.
listening_inodes_of() { # PID
	local ino
	for ino in $(ls -l /proc/$1/fd 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p'); do
		awk -v i="$ino" '$4 == "00010000" && $6 == "01" && $7 == i { print i }' /proc/$1/net/unix
	done
}

# How many of PID's own fds are accepted (St 03) sockets on ADDR.
accepted_of() { # PID ADDR
	local ino n=0
	for ino in $(ls -l /proc/$1/fd 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p'); do
		awk -v i="$ino" -v a="$2" '$6 == "03" && $7 == i && $8 == a { f = 1 } END { exit !f }' \
			/proc/$1/net/unix && n=$((n + 1))
	done
	echo $n
}

# The inode of the listening row for ADDR (in PID's netns).
listener_inode() { # PID ADDR
	awk -v n="$2" '$4 == "00010000" && $6 == "01" && $8 == n { print $7; exit }' /proc/$1/net/unix
}

# conf_spawn FLAVOUR [VAR=value...]: an agent-served card user (no card when
# CONF_NOCARD is set; CONF_WRAP, e.g. "unshare -n", runs it), logging
# (DYNPROF_AGENT_LOG) to $T/agent.<pid>.log. Echoes its pid once it runs
# main (the preloaded server started, or failed, before that).
conf_spawn() {
	local fl=$1 card=- log=$T/agent.$RANDOM$RANDOM.log pid
	shift
	[ -z "${CONF_NOCARD:-}" ] && card=$(make_card 0)
	${CONF_WRAP:-} env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" \
		DYNPROF_AGENT_DEVICES="$T/dev/davinci*" DYNPROF_AGENT_LOG=1 \
		$(conf_env $fl) "$@" "$CARD_USER" "$card" 600 > "$log" 2>&1 &
	pid=$!
	remember_pid $pid
	wait_until 10 grep -q '^ready ' "$log" || { cat "$log" >&2; fail "agent $pid never ran main"; }
	mv "$log" "$T/agent.$pid.log"
	echo $pid
}

# conf_start FLAVOUR [VAR=value...]: conf_spawn, then wait until the socket
# keyed on its pid listens (CONF_KEY: another key). Echoes the pid.
conf_start() {
	local fl=$1 pid
	shift
	pid=$(conf_spawn $fl "$@") || exit 1
	wait_until 10 listening_in $pid "$(conf_addr $fl ${CONF_KEY:-$pid})" || {
		cat $T/agent.$pid.log >&2
		fail "agent $pid ($fl) never listened on $(conf_addr $fl ${CONF_KEY:-$pid})"
	}
	echo $pid
}

# wire OUT FLAVOUR KEY [options] [commands]: wire_client on that socket,
# output in $T/OUT; its status is returned.
wire() {
	local out=$T/$1 fl=$2 key=$3 v=--v2
	shift 3
	[ $fl = v1 ] && v=--v1
	timeout -s KILL 200 "$WIRE" --connect="$(conf_addr $fl $key)" $v "$@" > "$out" 2>&1
}

# must_wire: wire, and fail the test with wire_client's reason.
must_wire() {
	local out=$T/$1
	wire "$@" && return 0
	cat "$out"
	fail "wire_client $1: $(grep -E '^failed|^connect-error' "$out" | tail -n 1)"
}

# wire_bg OUT FLAVOUR KEY ...: wire in the background; WIRE_PID.
wire_bg() {
	wire "$@" &
	WIRE_PID=$!
	remember_pid $WIRE_PID
}
wire_wait() { # wire_wait OUT: the background client must have succeeded
	wait $WIRE_PID && return 0
	cat "$T/$1"
	fail "wire_client $1: $(grep -E '^failed|^connect-error' "$T/$1" | tail -n 1)"
}

pj() { printf '{"result_dir":"%s"%s}' "$T/o" "${1:+,$1}"; } # params JSON [extra members]
prof_dirs() { ls -d "$T"/o/PROF_* 2>/dev/null; }
one_prof_dir() {
	local d n
	d=$(prof_dirs)
	n=$(printf '%s' "$d" | grep -c .)
	[ "$n" = 1 ] || fail "expected one PROF_ folder, found $n: $d"
	echo "$d"
}
finished() { [ -e "$1/host/end_info" ]; }
thread_named() { grep -qx "$2" /proc/$1/task/*/comm 2>/dev/null; }

# ---- socket names and places ------------------------------------------------

test_9x_socket_is_home_file_mode_0600_keyed_on_pid() {
	local pid path
	pid=$(conf_start 9x) || exit 1
	path=$(conf_addr 9x $pid)
	[ -S "$path" ] || fail "no socket file $path"
	[ "$(stat -c %a "$path")" = 600 ] || fail "mode $(stat -c %a "$path"), want 600"
	must_wire w 9x $pid "params $(pj)" 'expect 0,0'
}

test_v1_socket_is_home_file_mode_0600_keyed_on_own_pid_only() {
	local pid path key=$(own_key 0)
	remember_file "$ROOT_HOME/dynamic_profiling_socket_$key"
	pid=$(conf_start v1 DYNAMIC_PROFILING_KEY_PID=$key) || exit 1
	path=$(conf_addr v1 $pid)
	[ "$(stat -c %a "$path")" = 600 ] || fail "mode $(stat -c %a "$path"), want 600"
	[ ! -e "$ROOT_HOME/dynamic_profiling_socket_$key" ] || fail "v1 used DYNAMIC_PROFILING_KEY_PID"
	must_wire w v1 $pid test 'expect 7,0'
}

test_85_socket_is_abstract_dyn_prof_sock_key_with_no_file() {
	local pid
	pid=$(conf_start 85) || exit 1
	listening_in $pid "@dyn_prof_sock_$pid" || fail "no @dyn_prof_sock_$pid in /proc/net/unix"
	[ ! -e "$ROOT_HOME/dynamic_profiling_socket_$pid" ] || fail "a socket file as well"
	[ ! -e "$ROOT_HOME/dyn_prof_sock_$pid" ] || fail "a dyn_prof_sock_ file"
	must_wire w 85 $pid "params $(pj)" 'expect 0,0'
}

test_85_abstract_name_needs_exact_addrlen_padded_is_refused() {
	local pid
	pid=$(conf_start 85) || exit 1
	wire w 85 $pid --pad 'close'
	[ $? = 3 ] && grep -qx 'connect-error ECONNREFUSED' $T/w ||
		{ cat $T/w; fail "a padded addrlen was not refused with ECONNREFUSED"; }
	must_wire w2 85 $pid "params $(pj)" 'expect 0,0'
}

test_85_abstract_name_belongs_to_the_process_netns() {
	local pid
	pid=$(CONF_WRAP="unshare -n" conf_start 85) || exit 1
	wire w 85 $pid 'close'
	[ $? = 3 ] || { cat $T/w; fail "reached from the host's netns"; }
	must_wire w2 85 $pid --netns=/proc/$pid/ns/net "params $(pj)" 'expect 0,0'
}

# Non-integer DYNAMIC_PROFILING_KEY_PID: DynProfSrvCreate fails, no socket at all.
key_non_integer_means_no_server() { # FLAVOUR
	local v pid
	for v in abc 12abc; do
		pid=$(conf_spawn $1 DYNAMIC_PROFILING_KEY_PID=$v) || exit 1
		[ -z "$(listening_inodes_of $pid)" ] || fail "key '$v': a listening socket $(listening_inodes_of $pid)"
		[ ! -e "$ROOT_HOME/dynamic_profiling_socket_$v" ] || fail "key '$v': a socket file _$v"
		[ ! -e "$(conf_addr 9x $pid)" ] || fail "key '$v': a socket at the pid"
		kill $pid
	done
}
test_9x_key_pid_non_integer_means_no_socket() { key_non_integer_means_no_server 9x; }
test_85_key_pid_non_integer_means_no_socket() { key_non_integer_means_no_server 85; }

key_not_positive_means_own_pid() { # FLAVOUR
	local v pid
	for v in 0 -5 ''; do
		pid=$(conf_start $1 DYNAMIC_PROFILING_KEY_PID=$v) || fail "key '$v': no socket at the pid"
		must_wire w $1 $pid "params $(pj)" 'expect 0,0'
		kill $pid
	done
}
test_9x_key_pid_zero_negative_or_empty_gives_own_pid() { key_not_positive_means_own_pid 9x; }
test_85_key_pid_zero_negative_or_empty_gives_own_pid() { key_not_positive_means_own_pid 85; }

key_names_socket_raw() { # FLAVOUR KEY
	local pid
	remember_file "$ROOT_HOME/dynamic_profiling_socket_$2"
	pid=$(CONF_KEY=$2 conf_start $1 DYNAMIC_PROFILING_KEY_PID=$2) || exit 1
	[ -z "$(listening_inodes_of $pid | grep -v "^$(listener_inode $pid "$(conf_addr $1 $2)")\$")" ] ||
		fail "listens elsewhere too"
	must_wire w $1 $2 "params $(pj)" 'expect 0,0'
}
test_9x_key_pid_names_the_socket() { key_names_socket_raw 9x $(own_key 1); }
test_85_key_pid_names_the_socket() { key_names_socket_raw 85 $(own_key 2); }
# A leading zero like 0777's, on a path no other run's test serves.
test_9x_key_pid_raw_text_kept_0777() { key_names_socket_raw 9x "$(raw_key)"; }
test_85_key_pid_raw_text_kept_0777() { key_names_socket_raw 85 "$(raw_key)"; }

test_85_key_in_use_second_falls_back_to_own_pid_first_keeps_it() {
	local key=$(own_key 3) a b
	a=$(CONF_KEY=$key conf_start 85 DYNAMIC_PROFILING_KEY_PID=$key) || exit 1
	b=$(conf_start 85 DYNAMIC_PROFILING_KEY_PID=$key) || fail "second not at its own pid"
	[ "$(listener_inode $a @dyn_prof_sock_$key)" = "$(listening_inodes_of $a)" ] ||
		fail "the first process does not own @dyn_prof_sock_$key any more"
	must_wire w 85 $key "params $(pj)" 'expect 0,0'
	grep -qx "connected peer=$a" $T/w || fail "key answered by $(grep connected $T/w), not $a"
	must_wire w2 85 $b "params $(pj)" 'expect 0,0'
}

test_9x_same_key_last_binder_owns_the_path() {
	local key=$(own_key 4) a b
	remember_file "$ROOT_HOME/dynamic_profiling_socket_$key"
	a=$(CONF_KEY=$key conf_start 9x DYNAMIC_PROFILING_KEY_PID=$key) || exit 1
	b=$(conf_spawn 9x DYNAMIC_PROFILING_KEY_PID=$key) || exit 1
	wait_until 10 listening_in $b "$(conf_addr 9x $key)" || fail "the second did not bind the path"
	must_wire w 9x $key "params $(pj)" 'expect 0,0'
	grep -qx "connected peer=$b" $T/w || fail "path answered by $(grep connected $T/w), not $b"
	[ ! -e "$(conf_addr 9x $b)" ] || fail "the second fell back to its pid"
}

# Keyed on own_key, not the pid: a pid freed by the SIGKILL may be another
# test's agent a moment later, binding dynamic_profiling_socket_<pid> anew.
test_9x_sigkill_leaves_the_socket_file_refusing() {
	local pid key; key=$(own_key 5)
	remember_file "$(conf_addr 9x $key)"
	pid=$(CONF_KEY=$key conf_start 9x DYNAMIC_PROFILING_KEY_PID=$key) || exit 1
	kill -KILL $pid
	wait_until 10 all_gone $pid || fail "agent $pid still alive 10 s after SIGKILL"
	[ -S "$(conf_addr 9x $key)" ] || fail "socket file gone after SIGKILL"
	wire w 9x $key close
	grep -qx 'connect-error ECONNREFUSED' $T/w || { cat $T/w; fail "not ECONNREFUSED"; }
}

test_85_sigkill_makes_the_name_vanish() {
	local pid
	pid=$(conf_start 85) || exit 1
	kill -KILL $pid
	wait_until 10 all_gone $pid
	wait_until 10 eval "! grep -q ' @dyn_prof_sock_$pid\$' /proc/net/unix" || fail "name still bound"
}

# ---- message sizes -------------------------------------------------------------

# Params and the next Msg written back to back: the server must take exactly
# 4100 bytes, then exactly 8, and answer 8-byte Msgs.
v2_sizes() { # FLAVOUR
	local pid
	pid=$(conf_start $1) || exit 1
	must_wire w $1 $pid "params $(pj)" stop 'expect 0,0' 'expect 4,4' 'silent 1.5'
}
test_9x_params_is_4100_bytes_msg_is_8() { v2_sizes 9x; }
test_85_params_is_4100_bytes_msg_is_8() { v2_sizes 85; }

test_v1_request_is_4104_bytes_response_is_140() {
	local pid
	pid=$(conf_start v1) || exit 1
	must_wire w v1 $pid test stop 'expect 7,0' 'expect 3,1,Collection is not started.' 'silent 1.5'
}

# wire_client fails any v1 text that is not NUL-terminated with len < 128.
test_v1_texts_of_start_and_stop() {
	local pid
	pid=$(conf_start v1) || exit 1
	must_wire w v1 $pid test 'expect 7,0' "start $(pj)" 'expect 1,0,Started device Id: 0 ' \
		"start $(pj)" 'expect 1,1,Collection has been started.' stop 'expect 3,0,' \
		stop 'expect 3,1,Collection is not started.'
}

test_v1_start_without_device_fails_with_empty_device_list() {
	local pid
	pid=$(CONF_NOCARD=1 conf_start v1) || exit 1
	must_wire w v1 $pid test 'expect 7,0' "start $(pj)" 'expect 1,1,Started device Id: '
}

test_v1_len_not_strnlen_of_data_is_internal_error_then_quit_rsp() {
	local pid
	pid=$(conf_start v1) || exit 1
	must_wire w v1 $pid test 'expect 7,0' 'req-len 2 5' 'expect 8,0,Internal error.' 'expect 5,*' 'eof 5'
	must_wire w2 v1 $pid test 'expect 7,0' 'req-len 2 0 abc' 'expect 8,0,Internal error.' \
		'expect 5,*' 'eof 5'
	must_wire w3 v1 $pid test 'expect 7,0'
}

# ---- the v2 conversation --------------------------------------------------------

v2_start_twice() {
	local pid
	pid=$(conf_start $1) || exit 1
	# msprof leaves statusCode uninitialised (a run: 22005): ignored.
	must_wire w $1 $pid "params $(pj)" 'expect 0,0' 'msg 1 22005' 'expect 2,0' start 'expect 2,2'
}
test_9x_start_is_2_0_then_already_started_2_2() { v2_start_twice 9x; }
test_85_start_is_2_0_then_already_started_2_2() { v2_start_twice 85; }

v2_stop() {
	local pid
	pid=$(conf_start $1) || exit 1
	must_wire w $1 $pid "params $(pj)" 'expect 0,0' stop 'expect 4,4' start 'expect 2,0' \
		stop 'expect 4,0' stop 'expect 4,4'
}
test_9x_stop_is_4_0_not_started_4_4() { v2_stop 9x; }
test_85_stop_is_4_0_not_started_4_4() { v2_stop 85; }

v2_no_device() {
	local pid
	pid=$(CONF_NOCARD=1 conf_start $1) || exit 1
	must_wire w $1 $pid "params $(pj)" 'expect 0,0' start 'expect 2,3'
}
test_9x_start_without_device_is_2_3() { v2_no_device 9x; }
test_85_start_without_device_is_2_3() { v2_no_device 85; }

# QUIT is answered (6,0); the server goes back to accept but never closes
# the accepted fd: the client sees no EOF.
v2_quit() {
	local pid
	pid=$(conf_start $1) || exit 1
	wire_bg w $1 $pid "params $(pj)" 'expect 0,0' start 'expect 2,0' quit 'expect 6,0' 'noeof 4'
	wait_until 20 grep -q '^reply 6,0' $T/w || { cat $T/w; fail "no QUIT_RSP"; }
	must_wire w2 $1 $pid "params $(pj)" 'expect 0,0' stop 'expect 4,4'
	wire_wait w
	finished "$(one_prof_dir)" || fail "QUIT did not finish the window"
}
test_9x_quit_is_6_0_and_the_fd_is_never_closed() { v2_quit 9x; }
test_85_quit_is_6_0_and_the_fd_is_never_closed() { v2_quit 85; }

test_v1_quit_then_client_request_quit_then_quit_rsp_then_close() {
	local pid
	pid=$(conf_start v1) || exit 1
	must_wire w v1 $pid test 'expect 7,0' quit 'expect 5,0' 'expect 8,0,Client request quit.' \
		'expect 5,0' 'eof 5'
}

# The PROF_ folder is made by START, finished (end_info) by STOP.
test_9x_prof_folder_made_at_start_named_with_pid() {
	prof_at_start_v2 9x
}
test_85_prof_folder_made_at_start_named_with_pid() {
	prof_at_start_v2 85
}
prof_at_start_v2() {
	local pid d
	pid=$(conf_start $1) || exit 1
	wire_bg w $1 $pid "params $(pj)" 'expect 0,0' start 'expect 2,0' 'sleep 3' stop 'expect 4,0'
	wait_until 20 grep -q '^reply 2,0' $T/w || { cat $T/w; fail "START not answered"; }
	d=$(one_prof_dir)
	[ -e "$d/host/start_info" ] || fail "no start_info at START"
	! finished "$d" || fail "end_info before STOP"
	wire_wait w
	finished "$d" || fail "no end_info after STOP"
	[[ $(basename "$d") =~ ^PROF_000001_[0-9]{17}_$(printf %08d $pid)[A-R]{8}$ ]] ||
		fail "folder name $(basename "$d")"
}
test_v1_prof_folder_made_at_start_named_without_pid() {
	local pid d
	pid=$(conf_start v1) || exit 1
	wire_bg w v1 $pid test 'expect 7,0' "start $(pj)" 'expect 1,0,*' 'sleep 3' stop 'expect 3,0,'
	wait_until 20 grep -q '^reply 1,0' $T/w || { cat $T/w; fail "START not answered"; }
	d=$(one_prof_dir)
	[ -e "$d/host/start_info" ] || fail "no start_info at START"
	! finished "$d" || fail "end_info before STOP"
	wire_wait w
	finished "$d" || fail "no end_info after STOP"
	[[ $(basename "$d") =~ ^PROF_000001_[0-9]{17}_[A-R]{16}$ ]] || fail "folder name $(basename "$d")"
}

# One client at a time: a second client's connect succeeds, it is answered
# only once the first one's connection ended.
one_at_a_time() { # FLAVOUR
	local pid first second
	pid=$(conf_start $1) || exit 1
	if [ $1 = v1 ]; then
		first=(test 'expect 7,0' 'sleep 3' quit 'expect 5,0')
		second=(test 'expect 7,0')
	else
		first=("params $(pj)" 'expect 0,0' 'sleep 3' quit 'expect 6,0')
		second=("params $(pj)" 'expect 0,0')
	fi
	wire_bg a $1 $pid "${first[@]}"
	local a=$WIRE_PID
	wait_until 20 grep -q '^reply' $T/a || { cat $T/a; fail "first client not answered"; }
	wire_bg b $1 $pid --timeout=60 "${second[@]}"
	local b=$WIRE_PID
	wait_until 10 grep -q '^connected' $T/b || { cat $T/b; fail "second connect did not succeed"; }
	sleep 1
	# The first client is still connected (it sleeps 3 s): no answer yet.
	! grep -q '^reply' $T/b || { cat $T/a $T/b; fail "second client answered while the first was served"; }
	WIRE_PID=$a wire_wait a
	WIRE_PID=$b wire_wait b
}
test_9x_one_client_at_a_time() { one_at_a_time 9x; }
test_85_one_client_at_a_time() { one_at_a_time 85; }
test_v1_one_client_at_a_time() { one_at_a_time v1; }

# ---- the params read ----------------------------------------------------------

test_9x_empty_params_read_ends_the_server_for_good() {
	local pid
	pid=$(conf_start 9x) || exit 1
	must_wire w 9x $pid close
	wait_until 10 eval "[ ! -e $(conf_addr 9x $pid) ]" || fail "socket file still there"
	wire w2 9x $pid close
	[ $? = 3 ] || { cat $T/w2; fail "a later connect succeeded"; }
	wait_until 10 eval "! thread_named $pid MSVP_DynProfSer" || fail "server thread still runs"
}

test_9x_short_params_read_answers_0_1_then_ends_the_server() {
	local pid
	pid=$(conf_start 9x) || exit 1
	must_wire w 9x $pid 'bytes 100' shut-wr 'expect 0,1'
	wait_until 10 eval "[ ! -e $(conf_addr 9x $pid) ]" || fail "socket file still there"
	wire w2 9x $pid close
	[ $? = 3 ] || { cat $T/w2; fail "a later connect succeeded"; }
}

test_85_empty_params_read_ends_the_thread_name_stays_bound() {
	local pid
	pid=$(conf_start 85) || exit 1
	must_wire w 85 $pid close
	# Nothing accepts any more: a later client connects and waits for ever.
	must_wire w2 85 $pid "params $(pj)" 'silent 3'
	listening_in $pid "@dyn_prof_sock_$pid" || fail "name no longer bound"
	wait_until 10 eval "! thread_named $pid MSVP_DynProfSer" || fail "server thread still runs"
}

test_85_short_params_read_answers_0_1_then_nothing_accepts() {
	local pid
	pid=$(conf_start 85) || exit 1
	must_wire w 85 $pid 'bytes 100' shut-wr 'expect 0,1'
	must_wire w2 85 $pid "params $(pj)" 'silent 3'
	listening_in $pid "@dyn_prof_sock_$pid" || fail "name no longer bound"
}

# A finished connection: 9.x and 8.5.0 keep the accepted socket (a stale
# row with the listener's path, one per past connection); v1 closes it.
stale_rows() { # FLAVOUR
	local pid addr
	pid=$(conf_start $1) || exit 1
	addr=$(conf_addr $1 $pid)
	must_wire w $1 $pid "params $(pj)" 'expect 0,0' quit 'expect 6,0' close
	must_wire w2 $1 $pid "params $(pj)" 'expect 0,0' quit 'expect 6,0' close
	wait_until 10 eval "[ \$(accepted_of $pid $addr) = 2 ]" ||
		fail "$(accepted_of $pid $addr) accepted sockets kept, want 2"
}
test_9x_finished_connections_stay_as_stale_accepted_sockets() { stale_rows 9x; }
test_85_finished_connections_stay_as_stale_accepted_sockets() { stale_rows 85; }

test_v1_finished_connection_is_closed() {
	local pid addr
	pid=$(conf_start v1) || exit 1
	addr=$(conf_addr v1 $pid)
	must_wire w v1 $pid test 'expect 7,0' quit 'expect 5,0' 'drain 3' close
	wait_until 10 eval "[ \$(accepted_of $pid $addr) = 0 ]" ||
		fail "$(accepted_of $pid $addr) accepted sockets kept after QUIT"
}

# A client silent for 1 s after accept is left connected (its fd leaked,
# no EOF) and the next client is served.
silent_client_left() { # FLAVOUR
	local pid
	pid=$(conf_start $1) || exit 1
	wire_bg a $1 $pid 'silent 5'
	wait_until 10 grep -q '^connected' $T/a || fail "first client did not connect"
	sleep 1.5
	must_wire b $1 $pid --timeout=20 "params $(pj)" 'expect 0,0'
	wire_wait a
}
test_9x_silent_client_is_left_connected_and_the_next_served() { silent_client_left 9x; }
test_85_silent_client_is_left_connected_and_the_next_served() { silent_client_left 85; }

# A queued client that sent its Params and left does not end the server.
test_9x_queued_client_that_left_after_params_does_not_end_the_server() {
	local pid
	pid=$(conf_start 9x) || exit 1
	wire_bg a 9x $pid "params $(pj)" 'expect 0,0' 'sleep 3' quit 'expect 6,0'
	wait_until 20 grep -q '^reply 0,0' $T/a || fail "first client not answered"
	must_wire b 9x $pid "params $(pj)" close
	wire_wait a
	must_wire c 9x $pid --timeout=20 "params $(pj)" 'expect 0,0' start 'expect 2,0'
}

test_9x_params_datalen_is_not_checked() {
	local pid
	pid=$(conf_start 9x) || exit 1
	must_wire w 9x $pid 'params-len 0' 'expect 0,0' start 'expect 2,1'
	must_wire w2 9x $pid "params-len 4096 $(pj)" 'expect 0,0' start 'expect 2,0'
}

# ---- limits ---------------------------------------------------------------------

# N START/STOP requests, alternating from STOP when FIRST=stop.
requests() { # N FIRST V1?
	local i cmd=$2
	for ((i = 0; i < $1; i++)); do
		if [ $cmd = start ]; then
			[ -n "${3:-}" ] && echo "start $(pj)" || echo start
			[ -n "${3:-}" ] && echo 'expect 1,*' || echo 'expect 2,*'
			cmd=stop
		else
			echo stop
			[ -n "${3:-}" ] && echo 'expect 3,*' || echo 'expect 4,*'
			cmd=start
		fi
	done
}

test_9x_answers_101_requests_then_disconnect_then_quit() {
	local pid
	pid=$(conf_start 9x) || exit 1
	{
		echo "params $(pj)"; echo 'expect 0,0'
		requests 101 start
		echo 'expect 7,0'; echo 'expect 6,0'; echo 'noeof 2'
	} | wire w 9x $pid || { tail $T/w; fail "$(grep ^failed $T/w)"; }
	# The 101st was a START: the QUIT handling finished that window.
	wait_until 10 eval "[ \$(ls $T/o/PROF_*/host/end_info | wc -l) = 51 ]" ||
		fail "$(ls $T/o/PROF_*/host/end_info | wc -l) of 51 windows finished"
}

test_9x_request_limit_counts_answered_requests_scaled() {
	local pid
	pid=$(conf_start 9x DYNPROF_AGENT_MAX_REQUESTS=5) || exit 1
	{
		echo "params $(pj)"; echo 'expect 0,0'
		requests 5 stop
		echo 'expect 7,0'; echo 'expect 6,0'; echo 'noeof 2'
	} | must_wire w 9x $pid
}

test_v1_answers_101_requests_including_test_then_too_many() {
	local pid
	pid=$(conf_start v1) || exit 1
	{
		echo test; echo 'expect 7,0'
		requests 100 start v1
		echo 'expect 8,0,Receive too much requests from client.'; echo 'expect 5,*'; echo 'eof 5'
	} | must_wire w v1 $pid
}

test_v1_request_limit_includes_test_scaled() {
	local pid
	pid=$(conf_start v1 DYNPROF_AGENT_MAX_REQUESTS=5) || exit 1
	{
		echo test; echo 'expect 7,0'
		requests 4 stop v1
		echo 'expect 8,0,Receive too much requests from client.'; echo 'expect 5,*'; echo 'eof 5'
	} | must_wire w v1 $pid
}

test_85_has_no_request_limit() {
	local pid
	pid=$(conf_start 85) || exit 1
	{
		echo "params $(pj)"; echo 'expect 0,0'
		requests 300 start
		echo stop; echo 'expect 4,4'; echo 'silent 1'
	} | must_wire w 85 $pid
}

test_85_ignores_the_limit_variables() {
	local pid
	pid=$(conf_start 85 DYNPROF_AGENT_MAX_REQUESTS=3 DYNPROF_AGENT_IDLE_TIMEOUT=2) || exit 1
	{
		echo "params $(pj)"; echo 'expect 0,0'
		requests 10 start
		echo 'silent 6'; echo stop; echo 'expect 4,4'
	} | must_wire w 85 $pid
}

# Idle limit 12 s: 7 s idle, START/STOP, then the DISCONNECT must come within
# 9 s (cumulative: after 5 s; counted per gap: only after 12 s).
test_9x_idle_time_is_cumulative_over_the_connection() {
	local pid
	pid=$(conf_start 9x DYNPROF_AGENT_IDLE_TIMEOUT=12) || exit 1
	must_wire w 9x $pid --timeout=9 "params $(pj)" 'expect 0,0' 'sleep 7' start 'expect 2,0' \
		stop 'expect 4,0' 'expect 7,0' 'expect 6,0' 'noeof 1'
}

test_9x_idle_time_does_not_count_while_collecting() {
	local pid
	pid=$(conf_start 9x DYNPROF_AGENT_IDLE_TIMEOUT=3) || exit 1
	must_wire w 9x $pid --timeout=20 "params $(pj)" 'expect 0,0' start 'expect 2,0' 'sleep 8' \
		stop 'expect 4,0' 'expect 7,0' 'expect 6,0'
}

# Same gaps in v1: the count starts again at START, so no DISCONN for 9 s;
# it comes about 12 s after the START.
test_v1_idle_time_restarts_at_start() {
	local pid
	pid=$(conf_start v1 DYNPROF_AGENT_IDLE_TIMEOUT=12) || exit 1
	must_wire w v1 $pid --timeout=12 test 'expect 7,0' 'sleep 7' "start $(pj)" 'expect 1,0,*' \
		stop 'expect 3,0,' 'silent 9' 'expect 8,0,Idle link too long time.' 'expect 5,*' 'eof 5'
}

# ---- unknown message types ----------------------------------------------------

test_9x_unknown_type_is_disconnect_then_quit_fd_kept() {
	local pid
	pid=$(conf_start 9x) || exit 1
	must_wire w 9x $pid "params $(pj)" 'expect 0,0' start 'expect 2,0' 'msg 9 0' 'expect 7,0' \
		'expect 6,0' 'noeof 2'
	finished "$(one_prof_dir)" || fail "the QUIT handling did not finish the window"
}

test_85_unknown_type_gets_nothing_and_the_server_accepts_again() {
	local pid
	pid=$(conf_start 85) || exit 1
	must_wire w 85 $pid "params $(pj)" 'expect 0,0' 'msg 9 0' 'silent 2'
	must_wire w2 85 $pid "params $(pj)" 'expect 0,0'
}

test_v1_unknown_type_is_internal_error_then_quit_rsp() {
	local pid
	pid=$(conf_start v1) || exit 1
	must_wire w v1 $pid test 'expect 7,0' 'req 42' 'expect 8,0,Internal error.' 'expect 5,*' 'eof 5'
	must_wire w2 v1 $pid test 'expect 7,0'
}

# ---- client death and process exit ----------------------------------------------

test_9x_client_death_stops_the_window() {
	local pid d
	pid=$(conf_start 9x) || exit 1
	must_wire w 9x $pid "params $(pj)" 'expect 0,0' start 'expect 2,0' close
	d=$(one_prof_dir)
	wait_until 10 finished "$d" || fail "window still open after the client died"
	must_wire w2 9x $pid "params $(pj)" 'expect 0,0' stop 'expect 4,4'
}

test_85_client_death_keeps_the_window_open_for_a_later_stop() {
	local pid d
	pid=$(conf_start 85) || exit 1
	must_wire w 85 $pid "params $(pj)" 'expect 0,0' start 'expect 2,0' close
	d=$(one_prof_dir)
	wire_bg w2 85 $pid --timeout=20 "params $(pj)" 'expect 0,0' 'sleep 3' stop 'expect 4,0'
	wait_until 20 grep -q '^reply 0,0' $T/w2 || { cat $T/w2; fail "second client not answered"; }
	! finished "$d" || fail "the window ended with its client"
	wire_wait w2
	finished "$d" || fail "the later STOP did not finish the window"
}

test_9x_process_exit_sends_disconnect_then_quit() {
	local pid
	pid=$(conf_start 9x) || exit 1
	wire_bg w 9x $pid --timeout=30 "params $(pj)" 'expect 0,0' start 'expect 2,0' \
		'expect 7,0' 'expect 6,*'
	wait_until 20 grep -q '^reply 2,0' $T/w || { cat $T/w; fail "START not answered"; }
	kill -TERM $pid
	wire_wait w
	finished "$(one_prof_dir)" || fail "window not finished"
	wait_until 10 eval "[ ! -e $(conf_addr 9x $pid) ]" || fail "socket file left"
}

test_85_process_exit_client_sees_eof_and_nothing_else() {
	local pid
	pid=$(conf_start 85) || exit 1
	wire_bg w 85 $pid --timeout=30 "params $(pj)" 'expect 0,0' start 'expect 2,0' 'eof 30'
	wait_until 20 grep -q '^reply 2,0' $T/w || { cat $T/w; fail "START not answered"; }
	kill -TERM $pid
	wire_wait w
}

test_v1_process_exit_says_dynamic_profiling_server_exit() {
	local pid
	pid=$(conf_start v1) || exit 1
	wire_bg w v1 $pid --timeout=30 test 'expect 7,0' \
		'expect 8,0,Dynamic profiling Server exit' 'expect 5,*'
	wait_until 20 grep -q '^reply 7,0' $T/w || { cat $T/w; fail "TEST not answered"; }
	kill -TERM $pid
	wire_wait w
}

# ---- messages of the other generation ----------------------------------------

# A v1 TEST_REQ read as Params: dataLen 6, acked; the 4 bytes left over are
# a failed command read: DISCONNECT, QUIT_RSP; the server survives.
test_9x_v1_test_req_is_taken_as_params_and_the_server_survives() {
	local pid
	pid=$(conf_start 9x) || exit 1
	must_wire w 9x $pid 'replies v2' test 'expect 0,0' 'expect 7,0' 'expect 6,0' 'noeof 2'
	must_wire w2 9x $pid "params $(pj)" 'expect 0,0' start 'expect 2,0'
}

test_v1_v2_params_is_internal_error_and_the_server_survives() {
	local pid
	pid=$(conf_start v1) || exit 1
	must_wire w v1 $pid "params $(pj)" 'expect 8,0,Internal error.' 'expect 5,*' 'eof 5'
	must_wire w2 v1 $pid test 'expect 7,0'
}

# ---- accepts per lifetime -------------------------------------------------------

accepts() { # N V1? : N connections each ended by a QUIT
	local i
	for ((i = 0; i < $1; i++)); do
		[ $i = 0 ] || echo connect # wire_client --connect made the first
		if [ -n "${2:-}" ]; then
			echo test; echo 'expect 7,0'; echo quit; echo 'expect 5,0'
		else
			echo "params $(pj)"; echo 'expect 0,0'; echo quit; echo 'expect 6,0'
		fi
		echo close
	done
}

accept_cap() { # FLAVOUR V1?
	local pid
	pid=$(conf_start $1) || exit 1
	# The 128th accept is the last: do not rely on it being served.
	{ accepts 127 ${2:-}; echo connect; echo 'drain 2'; echo close; } |
		wire w $1 $pid || { tail $T/w; fail "$(grep -E '^failed' $T/w)"; }
	[ "$(grep -c '^connected' $T/w)" = 128 ] || fail "$(grep -c '^connected' $T/w) of 128 connects"
	wait_until 15 eval "[ ! -e $(conf_addr $1 $pid) ]" || fail "socket file still there"
	wire w2 $1 $pid close
	[ $? = 3 ] || { cat $T/w2; fail "a 129th connect succeeded"; }
}
test_9x_128_accepts_per_lifetime_then_the_socket_is_gone() { accept_cap 9x; }
test_v1_128_accepts_per_lifetime_then_the_socket_is_gone() { accept_cap v1 v1; }

test_85_has_no_accept_cap() {
	local pid
	pid=$(conf_start 85) || exit 1
	accepts 130 | must_wire w 85 $pid
	must_wire w2 85 $pid "params $(pj)" 'expect 0,0'
}

# ---- params ---------------------------------------------------------------------

msproftx_on() { grep -Eq '"msproftx"[[:space:]]*:[[:space:]]*"on"' "$1/$EFFECTIVE_PARAMS"; }

# 9.x keeps params for the process's life and overlays each connection's on them.
test_9x_params_overlay_across_connections() {
	local pid d1 d2
	pid=$(conf_start 9x) || exit 1
	must_wire w 9x $pid "params $(pj '"msproftx":"on"')" 'expect 0,0' start 'expect 2,0' \
		stop 'expect 4,0'
	d1=$(one_prof_dir)
	must_wire w2 9x $pid "params $(pj)" 'expect 0,0' start 'expect 2,0' stop 'expect 4,0'
	d2=$(prof_dirs | grep -v "$d1")
	[ -f "$d2/$EFFECTIVE_PARAMS" ] || fail "no $EFFECTIVE_PARAMS in $d2 (effective params not recorded)"
	msproftx_on "$d1" || fail "the first window's record lacks msproftx on: $(cat "$d1/$EFFECTIVE_PARAMS")"
	msproftx_on "$d2" ||
		fail "msproftx from the first connection not kept: $(cat "$d2/$EFFECTIVE_PARAMS")"
}

# v1: each START's params replace the previous ones.
test_v1_params_replace_at_each_start() {
	local pid d1 d2
	pid=$(conf_start v1) || exit 1
	must_wire w v1 $pid test 'expect 7,0' "start $(pj '"msproftx":"on"')" 'expect 1,0,*' \
		stop 'expect 3,0,'
	d1=$(one_prof_dir)
	must_wire w2 v1 $pid test 'expect 7,0' "start $(pj)" 'expect 1,0,*' stop 'expect 3,0,'
	d2=$(prof_dirs | grep -v "$d1")
	[ -f "$d2/$EFFECTIVE_PARAMS" ] || fail "no $EFFECTIVE_PARAMS in $d2 (effective params not recorded)"
	msproftx_on "$d1" || fail "the first window's record lacks msproftx on: $(cat "$d1/$EFFECTIVE_PARAMS")"
	! msproftx_on "$d2" ||
		fail "msproftx from the first START kept: $(cat "$d2/$EFFECTIVE_PARAMS")"
}

# NanoJson: what fails START (2,1), whole document parsed first.
test_9x_start_fails_on_what_nanojson_rejects() {
	local pid j n=0 D=$T/o
	pid=$(conf_start 9x) || exit 1
	for j in "{\"result_dir\":\"$D\",\"a\":\"x\\\"y\"}" \
		"{\"result_dir\":\"$D\",\"n\":4294967295}" \
		"{\"result_dir\":\"$D\",\"n\":+1}" \
		"{\"result_dir\":\"$D\",\"n\":007}" \
		"{\"result_dir\":\"$D\",\"n\":1.}" \
		"{\"result_dir\":\"$D\",\"t\":tru}" \
		"[\"$D\"]" \
		"{\"result_dir\":\"$D\""; do
		n=$((n + 1))
		must_wire w$n 9x $pid "params $j" 'expect 0,0' start 'expect 2,1' quit 'expect 6,*'
	done
	[ -z "$(prof_dirs)" ] || fail "a failed START made a folder: $(prof_dirs)"
}

# NanoJson's lenient syntax: optional commas and colons, trailing commas and
# garbage, escapes left as written.
test_9x_start_accepts_what_nanojson_accepts() {
	local pid j n=0 D=$T/o
	pid=$(conf_start 9x) || exit 1
	for j in "{\"result_dir\":\"$D\",}" \
		"{\"result_dir\":\"$D\"} trailing" \
		"{\"result_dir\" \"$D\" \"a\" \"b\"}" \
		"{\"result_dir\":\"$D\",\"e\":\"a\\nb\\u0041\",\"o\":{\"x\":[1,2]},\"z\":null}"; do
		n=$((n + 1))
		must_wire w$n 9x $pid "params $j" 'expect 0,0' start 'expect 2,0' stop 'expect 4,0' \
			quit 'expect 6,*'
	done
}

# v1 parses with nlohmann: strict JSON; a throw fails START with "Internal error.".
test_v1_start_needs_strict_json() {
	local pid
	pid=$(conf_start v1) || exit 1
	must_wire w v1 $pid test 'expect 7,0' "start {\"result_dir\":\"$T/o\",}" \
		'expect 1,1,Internal error.' "start $(pj)" 'expect 1,0,*'
}

# ---- the server thread ----------------------------------------------------------

test_9x_server_thread_is_named_msvp_dynprofser() {
	local pid
	pid=$(conf_start 9x) || exit 1
	thread_named $pid MSVP_DynProfSer || fail "no thread MSVP_DynProfSer among: $(cat /proc/$pid/task/*/comm | tr "\n" " ")"
}
