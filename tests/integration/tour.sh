# serial: the tour's follow block takes every card user of this build's demo,
# so it runs alone, not beside hermetic.sh's foreign demo jobs.
# README's "Five minutes", run as written: its ```sh blocks, in order, in
# one shell from the checkout, with /tmp/tour, /tmp/run.sh and
# /tmp/tour.ctl moved into the test's folder and build/ read as the suite's
# build (build/san for SANITIZE=1): the only changes. Each block
# must end with status 0 and print what the README shows it printing.

REPO=$(cd "$DYNPROF_TESTS/.." && pwd)

# The tour's shell blocks, the paths moved into $T.
tour_script() {
	awk '/^## Five minutes/ { on = 1; next } on && /^## / { exit }
	     on && /^```sh$/ { code = 1; print "echo \"== block " ++n "\""; next }
	     code && /^```$/ { code = 0; print "rc=$?; [ $rc -eq 0 ] || { echo \"== block " n " ended with status $rc\"; exit 1; }"; next }
	     code { print }' "$REPO/README.md" |
		sed -e "s|/tmp/tour.ctl|$T/tour.ctl|g; s|/tmp/tour|$T/tour|g; s|/tmp/run.sh|$T/run.sh|g; s|/tmp/follow.log|$T/follow.log|g" \
		    -e "s|\$PWD/build/|$B/|g; s|\([ '\"(]\)build/|\1$B/|g; s|^build/|$B/|"
}

test_readme_five_minutes_runs_as_written() {
	tour_script > $T/tour.sh
	[ "$(grep -c '^echo "== block' $T/tour.sh)" -ge 6 ] || fail "fewer than 6 blocks in the tour: $(cat $T/tour.sh)"
	(cd "$REPO" && PATH="$PATH" timeout -s KILL 120 bash $T/tour.sh) > $T/out 2>&1
	expect_status 0 $?
	expect_line "^dynamic profiling for pid [0-9]+ stop success$"
	[ "$(count_lines 'window saved in ')" -ge 4 ] || fail "not four windows saved: $(cat $T/out)"
	expect_line "^[0-9]+ +[0-9]+ +- +root +0 +/root/dynamic_profiling_socket_[0-9]+ +[^ ]*demo_task --quiet"
	expect_line "rule 1: start=call:demo_task:demo_step#100 fired for pid [0-9]+ \(call 100\)"
	expect_line "rule 1: start=gap:demo_task:demo_step>10x fired for pid [0-9]+"
	expect_line "target joined: pid [0-9]+ \([^ ]*demo_task --quiet --steps=300\), cards 0"
	expect_line "^ack stop: pid [0-9]+ success, window saved $T/tour/PROF_"
	expect_line "^ack quit$"
}
