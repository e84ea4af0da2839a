#!/usr/bin/env bash
# make demo: start the bundled demo AI task (it serves the dynamic-profiling
# socket through our agent and holds a card node of its own), attach to it
# with dynprof, collect one window of a few seconds, quit, show the result.
set -u
B=${DYNPROF_BUILD:-build}
out=${DEMO_OUTPUT:-$PWD/build/demo-output}
seconds=${DEMO_SECONDS:-3}

echo "demo: starting $B/demo_task (a fake card, steps every 10 ms)"
"$B/demo_task" --step-ms=10 > "$B/demo_task.log" 2>&1 &
task=$!
trap 'kill $task 2>/dev/null; wait $task 2>/dev/null' EXIT

# Wait for its socket: the demo prints its line once it serves.
for _ in $(seq 100); do
	grep -q 'serving' "$B/demo_task.log" && break
	sleep 0.05
done
grep -q 'serving' "$B/demo_task.log" || { echo "demo: the demo task did not start:"; cat "$B/demo_task.log"; exit 1; }
cat "$B/demo_task.log"

echo "demo: dynprof --dynamic=on --pid=$task --output=$out   (commands: start, wait ${seconds}s, stop, quit)"
{ echo start; sleep "$seconds"; echo stop; echo quit; } |
	"$B/dynprof" --dynamic=on --pid=$task --output="$out"
rc=$?
[ $rc -eq 0 ] || { echo "demo: dynprof exited with status $rc"; exit $rc; }

echo "demo: PROF_ folders in $out:"
for d in "$out"/PROF_*; do
	[ -d "$d" ] || continue
	echo "  $d"
	(cd "$d" && find . -type f -name '*' ! -name '*.done' | sort | sed 's/^/    /')
done
