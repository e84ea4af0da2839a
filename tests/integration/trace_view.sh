# --trace=on: the run's Chrome Trace Event file, loaded into a real trace
# viewer (speedscope, from the npm registry) in a real headless browser
# (Debian's chromium), served from 127.0.0.1 by a server this test starts
# on a port the kernel picks; what the page lists is checked against the
# file, and a screenshot is kept in $B/artifacts/trace_view/.
# tools/install-deps.sh test installs chromium and the viewer (under $B/npm).

VIEWER=$B/npm/node_modules/speedscope/dist/release
TV="python3 $DYNPROF_TESTS/lib/trace_view.py"
ARTIFACTS=$B/artifacts/trace_view

tv_windows() { [ "$(grep -c "start success" $T/out)" -ge "$1" ]; }
tv_saved() { [ "$(grep -c "window saved in" $T/out)" -ge "$1" ]; }
tv_peer_done() { grep -q "syscaller: done" $T/peer.log; }

# tv_run N FOLD: two windows on a syscaller doing N reads per thread in the
# second, dynprof with --trace=on --trace-fold=FOLD; sets PID and TRACE.
tv_run() {
	PID=$(start_syscaller $1)
	dp_background --pid=$PID --output=$T/o --host-sys=osrt,cpu,mem --trace=on --trace-fold=$2
	dp_send start
	wait_until 10 tv_windows 1 || fail "no window: $(cat $T/out)"
	sleep 0.2
	dp_send stop
	wait_until 20 tv_saved 1 || fail "window 1 not saved: $(cat $T/out)"
	dp_send start
	wait_until 10 tv_windows 2 || fail "no second window: $(cat $T/out)"
	touch $T/go
	wait_until 30 tv_peer_done || fail "the peer did not finish: $(cat $T/peer.log)"
	sleep 0.1
	dp_send stop quit
	wait $DP_PID
	TRACE=$(ls $T/o/*_dynprof_trace.json 2>/dev/null)
	[ -f "$TRACE" ] || fail "no trace in $T/o: $(ls $T/o)"
	expect_line "^\[INFO\] --trace: writing $TRACE; system calls shorter than $3 us, and every call past 500000 slices, are not drawn but counted per process and 10 ms interval"
	[ "$(stat -c %a "$TRACE")" = 640 ] || fail "trace mode $(stat -c %a "$TRACE")"
}

# tv_serve: the page's folder ($T/www: the viewer and trace.json) on 127.0.0.1; sets URL.
tv_serve() {
	mkdir -p $T/www
	ln -s "$VIEWER" $T/www/viewer
	cp "$TRACE" $T/www/trace.json
	python3 "$DYNPROF_TESTS/lib/trace_view.py" serve $T/www $T/port > $T/server.log 2>&1 &
	remember_pid $!
	wait_until 5 test -s $T/port || fail "the page server did not start: $(cat $T/server.log)"
	URL="http://127.0.0.1:$(cat $T/port)/viewer/index.html#profileURL=/trace.json"
}

# tv_browser OUT ARGS...: headless chromium on the page with a profile of its own, time bounded.
tv_browser() {
	local out=$1; shift
	timeout -k 5 90 chromium --headless --no-sandbox --disable-gpu --use-angle=swiftshader \
		--enable-unsafe-swiftshader --user-data-dir=$T/chrome --no-first-run \
		--window-size=1400,800 --virtual-time-budget=15000 "$@" > "$out" 2> $T/chrome.log
}

tv_need_viewer() {
	command -v chromium > /dev/null || fail "no chromium: tools/install-deps.sh test installs it (apt-get install chromium)"
	[ -f "$VIEWER/index.html" ] || fail "no speedscope in $B/npm: tools/install-deps.sh test installs it (npm)"
}

test_a_traced_run_loads_in_speedscope_with_its_lanes_and_slices() {
	tv_need_viewer
	local n=3000
	tv_run $n 0 0
	expect_line "^\[INFO\] --trace: $TRACE: 2 windows, [0-9]+ system call slices, 0 calls folded"
	$TV lanes "$TRACE" > $T/lanes || fail "the trace is not one JSON array: $(head -c 300 "$TRACE")"
	local a b fd; a=$(sed -n 's/.*done a=\([0-9]*\).*/\1/p' $T/peer.log)
	b=$(sed -n 's/.*done a=[0-9]* b=\([0-9]*\).*/\1/p' $T/peer.log)
	# Both windows on the target's window lane, named by their fate.
	grep -q "^pid $PID: .*syscaller.* (pid $PID), dynprof windows (tid 0)	2	" $T/lanes ||
		fail "no windows lane with 2 windows: $(cat $T/lanes)"
	# Every read of both threads is a slice (thread B was born in the window).
	local na nb; na=$(jq "[.[] | select(.ph == \"X\" and .tid == $a and .name == \"read\")] | length" "$TRACE")
	nb=$(jq "[.[] | select(.ph == \"X\" and .tid == $b and .name == \"read\")] | length" "$TRACE")
	[ "$na" -ge $n ] && [ "$nb" -ge $n ] || fail "read slices: thread A $na, thread B $nb, of $n each"
	jq -e '[.[] | select(.ph == "C" and .name == "memory MiB")] | length > 3' "$TRACE" > /dev/null ||
		fail "no memory counter"
	jq -e '[.[] | select(.ph == "C" and .name == "cpu %")] | length > 3' "$TRACE" > /dev/null ||
		fail "no cpu counter"

	tv_serve
	tv_browser $T/dom.html --dump-dom "$URL" || fail "chromium failed: $(tail -5 $T/chrome.log)"
	$TV profiles $T/dom.html > $T/shown
	grep -q "<title>trace.json - speedscope</title>" $T/dom.html || fail "page title: $(grep -o '<title>[^<]*' $T/dom.html)"
	# Every lane of the file is a profile of the page, with the file's total time.
	[ "$(grep -c . $T/lanes)" -ge 3 ] || fail "lanes: $(cat $T/lanes)"
	grep -qx "count $(grep -c . $T/lanes)" $T/shown || fail "page lists $(tail -1 $T/shown), file has $(grep -c . $T/lanes) lanes"
	local name slices us shown
	while IFS=$'\t' read -r name slices us; do
		shown=$(awk -F'\t' -v n="$name" '$1 == n { print $2 }' $T/shown)
		[ -n "$shown" ] || fail "the page does not list \"$name\": $(cat $T/shown)"
		# speedscope rounds to 2 digits in its unit: within 1% (or 0.01 of a unit)
		awk -v a="$shown" -v b="$us" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b / 100 + 0.01 || d <= 10) }' ||
			fail "\"$name\": the page shows $shown us, the file's $slices slices last $us us"
	done < $T/lanes
	grep -q "(tid $a)" $T/shown && grep -q "(tid $b)" $T/shown || fail "threads $a, $b not listed: $(cat $T/shown)"

	# The first profile, the window lane, in the sandwich view: one row per window.
	tv_browser $T/sandwich.html --dump-dom "$URL&view=sandwich" || fail "chromium failed: $(tail -5 $T/chrome.log)"
	# (speedscope names a slice by its name and its args)
	$TV sandwich $T/sandwich.html | cut -d' ' -f1-3 | sort > $T/rows
	[ "$(tr '\n' ',' < $T/rows)" = "window 1 (saved),window 2 (saved)," ] ||
		fail "sandwich rows: $(cat $T/rows)"

	mkdir -p $ARTIFACTS
	tv_browser $T/shot.log --screenshot=$ARTIFACTS/timeline.png "$URL" || fail "no screenshot: $(tail -5 $T/chrome.log)"
	[ "$(head -c 8 $ARTIFACTS/timeline.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		fail "the screenshot is not a PNG"
	cp "$TRACE" $ARTIFACTS/trace.json
}

# A busy target: calls under the threshold are counts per 10 ms, not
# slices; every call is a slice or counted; the trace still loads.
test_short_calls_are_folded_and_the_trace_still_loads() {
	tv_need_viewer
	local n=20000
	tv_run $n 100us 100
	local folded slices; folded=$(sed -En "s/.*--trace: .*: 2 windows, ([0-9]+) system call slices, ([0-9]+) calls folded.*/\2/p" $T/out)
	slices=$(sed -En "s/.*--trace: .*: 2 windows, ([0-9]+) system call slices.*/\1/p" $T/out)
	[ -n "$folded" ] && [ "$folded" -ge $((2 * n)) ] || fail "folded: '$folded' of $((2 * n)) reads: $(grep -- --trace $T/out)"
	local counted; counted=$(jq '[.[] | select(.ph == "C" and .name == "folded calls") | .args.calls] | add' "$TRACE")
	[ "$counted" = "$folded" ] || fail "the counters hold $counted calls, the console says $folded folded"
	jq -e '[.[] | select(.ph == "X" and .dur < 100)] | length == 0' "$TRACE" > /dev/null ||
		fail "a slice shorter than 100 us was drawn"
	# System calls and pthread calls (each said apart) are all on the timeline.
	local whole first pth
	whole=$(sed -En "s/.*pid $PID: window 2: host data: ([0-9]+) system calls.*/\1/p" $T/out)
	first=$(sed -En "s/.*pid $PID: window 1: host data: ([0-9]+) system calls.*/\1/p" $T/out)
	pth=$(sed -En "s/.*pid $PID: window [12]: host data: ([0-9]+) pthread calls.*/\1/p" $T/out | awk '{ n += $1 } END { print n + 0 }')
	[ $((slices + folded)) -eq $((whole + first + pth)) ] ||
		fail "$slices slices + $folded folded != $first + $whole system calls + $pth pthread calls recorded"
	# Far smaller than the calls drawn would be (~110 bytes a slice).
	[ "$(stat -c %s "$TRACE")" -lt $((2 * n * 20)) ] || fail "trace of $(stat -c %s "$TRACE") bytes"
	tv_serve
	tv_browser $T/dom.html --dump-dom "$URL" || fail "chromium failed: $(tail -5 $T/chrome.log)"
	$TV profiles $T/dom.html > $T/shown
	grep -q "^pid $PID: .*(pid $PID), dynprof windows (tid 0)	" $T/shown || fail "page: $(cat $T/shown)"
}

# A target's hostile command line stays text in the file and on the page.
test_a_hostile_command_line_is_one_name() {
	tv_need_viewer
	local card; card=$(make_card 0)
	# Quotes that would end the JSON string, markup, a newline and a control
	# byte (the command as dynprof reads it has those two as "?").
	local exe=$T/$'sys"},{"ph":"X","name":"fake\n<b>x<i>\x01'
	cp $SYSCALLER "$exe"
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		"$exe" "$card" 10 $T/go > $T/peer.log 2>&1 &
	PID=$!
	remember_pid $PID
	wait_until 5 has_socket $PID || fail "peer $PID never opened its socket: $(cat $T/peer.log)"
	# osrt too: the threads' lanes are named by their comm, the program's name.
	dp_background --pid=$PID --output=$T/o --trace=on --host-sys=osrt
	dp_send start
	wait_until 10 tv_windows 1 || fail "no window: $(cat $T/out)"
	touch $T/go
	wait_until 30 tv_peer_done || fail "the peer did not finish: $(cat $T/peer.log)"
	dp_send stop quit
	wait $DP_PID
	TRACE=$(ls $T/o/*_dynprof_trace.json)
	jq -e '[.[] | select(.name == "fake")] | length == 0' "$TRACE" > /dev/null || fail "an event was injected"
	jq -re ".[] | select(.ph == \"M\" and .pid == $PID and .name == \"process_name\") | .args.name" "$TRACE" |
		grep -qF 'sys"},{"ph":"X","name":"fake?<b>x<i>? ' || fail "name: $(grep process_name "$TRACE")"
	LC_ALL=C grep -q '[^ -~]' "$TRACE" && fail "bytes outside printable ASCII in the file"
	tv_serve
	tv_browser $T/dom.html --dump-dom "$URL" || fail "chromium failed: $(tail -5 $T/chrome.log)"
	$TV profiles $T/dom.html > $T/shown
	grep -qF 'fake?<b>x<i>? ' $T/shown || fail "the page does not list the name as text: $(cat $T/shown)"
	grep -q '&lt;b&gt;x&lt;i&gt;' $T/dom.html || fail "the name is not escaped text in the page"
	! grep -q '<b>x<i>' $T/dom.html || fail "the name became markup"
	grep -qF ', sys"},{"ph":"X" (tid ' $T/shown || fail "no thread named by its comm: $(cat $T/shown)"
}

# tv_start_stepper ACTIONS...: tests/peers/stepper (the agent preloaded), its actions on SIGUSR1.
tv_start_stepper() {
	local card; card=$(make_card 0)
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		"$B/tests/peers/stepper" open=$card wait "$@" > "$T/stepper.log" 2>&1 < /dev/null &
	local pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "stepper $pid never opened its socket: $(cat $T/stepper.log)"
	echo $pid
}

# A gap: rule's firing is an instant with what the kernel measured, the
# same figures as the window record's, before the window it opened.
test_a_rule_firing_is_an_instant_with_its_measured_values() {
	PID=$(tv_start_stepper step=20,0,10 wait step=5,0,10 pause)
	dp_background --pid=$PID --output=$T/o --trace=on '--window=start=gap:stepper:dp_step>250ms,stop=+200ms'
	wait_until 10 grep -q "Start profiling" $T/out || fail "dynprof never started: $(cat $T/out)"
	kill -USR1 $PID
	wait_until 20 grep -qF "stepper: step=20,0,10 done" $T/stepper.log || fail "no steps: $(cat $T/stepper.log)"
	sleep 0.6
	kill -USR1 $PID
	wait_until 10 grep -q "every --window rule is done" $T/out || fail "no window: $(cat $T/out)"
	exec 7>&-
	wait $DP_PID
	TRACE=$(ls $T/o/*_dynprof_trace.json)
	local rec=$T/o/*_dynprof_windows m t
	m=$(jq -r ".[] | select(.ph == \"i\" and .pid == $PID and .name == \"rule 1 start\") | .args.measured_us" "$TRACE")
	t=$(jq -r ".[] | select(.ph == \"i\" and .pid == $PID and .name == \"rule 1 start\") | .args.typical_us" "$TRACE")
	[ "$m" = "$(head -1 $rec | jq .start.measured_us)" ] && [ "$t" = "$(head -1 $rec | jq .start.typical_us)" ] ||
		fail "instant: measured $m typical $t; record: $(head -1 $rec)"
	[ "$m" -ge 600000 ] || fail "measured gap $m us, the stepper was blocked 600 ms"
	jq -e ".[] | select(.ph == \"i\" and .pid == $PID and .name == \"rule 1 start\") | .args.condition == \"gap:stepper:dp_step>250ms\"" "$TRACE" > /dev/null ||
		fail "no condition on the instant"
	jq -e ".[] | select(.ph == \"i\" and .pid == $PID and .name == \"rule 1 stop\")" "$TRACE" > /dev/null || fail "no stop instant"
	local fired opened
	fired=$(jq ".[] | select(.ph == \"i\" and .pid == $PID and .name == \"rule 1 start\") | .ts" "$TRACE")
	opened=$(jq ".[] | select(.ph == \"X\" and .pid == $PID and .name == \"window 1 (saved)\") | .ts" "$TRACE")
	[ -n "$opened" ] || fail "no saved window slice: $(grep '"X"' "$TRACE")"
	awk -v a="$fired" -v b="$opened" 'BEGIN { exit !(a <= b && b - a < 5000000) }' ||
		fail "the rule fired at $fired us, the window opened at $opened us"
}

# A target killed in its window: the slice says incomplete, with why.
test_a_killed_target_window_is_drawn_incomplete() {
	local n=1000000
	PID=$(start_syscaller $n)
	dp_background --pid=$PID --output=$T/o --trace=on
	dp_send start
	wait_until 10 tv_windows 1 || fail "no window: $(cat $T/out)"
	touch $T/go
	sleep 0.3
	kill_hard $PID
	wait_until 10 grep -q "window saved incomplete\|window lost" $T/out || fail "no window end: $(cat $T/out)"
	exec 7>&- # end of input (dynprof may be gone already: its last target was)
	wait $DP_PID
	TRACE=$(ls $T/o/*_dynprof_trace.json)
	jq -e ".[] | select(.ph == \"X\" and .pid == $PID and (.name == \"window 1 (incomplete)\" or .name == \"window 1 (lost)\")) | .args.reason | length > 0" "$TRACE" > /dev/null ||
		fail "window slice: $(grep '"X"' "$TRACE")"
}

# The trace is opened as every file dynprof writes in --output: a symlink
# or another user's file planted at its name is refused before any target
# is reached, and what it points to is untouched.
test_a_planted_trace_name_is_refused() {
	local pid; pid=$(start_target)
	mkdir -p $T/o
	echo keep > $T/victim
	( ln -s $T/victim "$T/o/${BASHPID}_dynprof_trace.json"
	  exec "$DP" --pid=$pid --output=$T/o --trace=on < /dev/null ) > $T/out 2>&1 # $BASHPID is its pid
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument --trace: cannot write $T/o/[0-9]+_dynprof_trace.json: "
	expect_no_line "start success"
	[ "$(cat $T/victim)" = keep ] || fail "the symlink's target was written: $(cat $T/victim)"
	( touch "$T/o/${BASHPID}_dynprof_trace.json"; chown nobody "$T/o/${BASHPID}_dynprof_trace.json"
	  exec "$DP" --pid=$pid --output=$T/o --trace=on < /dev/null ) > $T/out 2>&1 # $BASHPID is its pid
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument --trace: cannot write .*: Operation not permitted\.$"
}
