# The benchmark programs measure what they say (make test builds them but
# does not time them): bench/fanout's window waits for every target's
# STOP reply, so it cannot take less than the targets' STOP flush. Bounds
# only, never a timing a loaded machine could miss.

FANOUT=$B/bench/fanout

# fanout_line FLUSH_MS: one round over two demo tasks whose STOP takes FLUSH_MS.
fanout_line() {
	local a b; a=$(start_demo --flush-ms=$1); b=$(start_demo --flush-ms=$1)
	"$FANOUT" 1 $a $b > $T/fanout.out 2>&1 || fail "fanout failed: $(cat $T/fanout.out)"
	cat $T/fanout.out
}

test_fanout_waits_for_every_reply() {
	local line par ser
	line=$(fanout_line 150)
	par=$(sed -n 's/.*parallel_median_ms=\([0-9]*\).*/\1/p' <<<"$line")
	ser=$(sed -n 's/.*serial_median_ms=\([0-9]*\).*/\1/p' <<<"$line")
	[ -n "$par" ] && [ -n "$ser" ] || fail "no figures: $line"
	[ "$par" -ge 150 ] || fail "one window in both targets took $par ms, less than one 150 ms STOP: $line"
	[ "$ser" -ge 300 ] || fail "one target after the other took $ser ms, less than two 150 ms STOPs: $line"
}
