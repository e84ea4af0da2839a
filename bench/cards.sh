# Fake cards for the benchmarks (sourced): nodes no other process holds,
# as the tests' (tests/lib/common.sh). dynprof knows cards by device
# number and --pid=auto, --follow and --list take every holder of the host:
# borrowed numbers (/dev/full's) would take another run's processes as
# targets, and theirs would take ours ("connected to another client",
# rounds lost). So each card is a macvtap device (a character device whose
# minor is the host's own while it lives; it opens like any node wherever
# it is made) on a veth in a network namespace of this run's own, held by
# a sleeper that ends within a second of this script. A macvtap takes at
# most 256 opens at a time: more holders need more nodes of the same card
# (davinci0, davinci00, ...: the same trailing number).
# BENCH_CARD_NUMBERS="MAJOR MINOR" (a kernel without macvtap): that device's
# numbers instead, shared with whatever else holds them.

BENCH_CARD_NS=""
BENCH_CARDS=0

bench_card_ns() {
	[ -n "$BENCH_CARD_NS" ] && return 0
	local log; log=$(mktemp /tmp/dynprof-bench-cardns.XXXXXX)
	# Not a child of ours (( ... &)): a cleanup's bare `wait` must not wait for it.
	(unshare --net --mount --propagation private sh -c "ip link add dpcard type veth peer name dppeer &&
		mount -t sysfs sysfs /sys && echo ready \$\$ && while kill -0 $$ 2>/dev/null; do sleep 1; done" \
		< /dev/null > "$log" 2>&1 &)
	for _ in $(seq 250); do grep -q '^ready ' "$log" && break; sleep 0.02; done
	BENCH_CARD_NS=$(sed -n 's/^ready //p' "$log")
	[ -n "$BENCH_CARD_NS" ] || {
		echo "bench: cannot make a card namespace (macvtap; BENCH_CARD_NUMBERS=\"MAJOR MINOR\" borrows a device's numbers instead): $(cat "$log")" >&2
		rm -f "$log"
		exit 1
	}
	rm -f "$log"
}

bench_card() { # bench_card PATH: a fake card node at PATH, on a device of this run's own
	local dev name
	if [ -n "${BENCH_CARD_NUMBERS:-}" ]; then
		mknod "$1" c $BENCH_CARD_NUMBERS
		return
	fi
	bench_card_ns
	BENCH_CARDS=$((BENCH_CARDS + 1))
	name=dpcard$BENCH_CARDS
	dev=$(nsenter -t "$BENCH_CARD_NS" -n -m sh -c "ip link add link dpcard name $name type macvtap &&
		cat /sys/class/net/$name/tap*/dev" 2>&1) && [[ $dev =~ ^[0-9]+:[0-9]+$ ]] ||
		{ echo "bench: cannot make card node $1: $dev" >&2; exit 1; }
	mknod "$1" c ${dev/:/ }
}
