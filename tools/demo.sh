#!/usr/bin/env bash
# make demo: start the bundled demo AI task (it serves the dynamic-profiling
# socket through our agent and holds a card node of its own), attach to it
# with dynprof, collect one window of a few seconds, quit; then let a rule
# open a window by itself from the 100th to the 150th call of the task's
# step function (counted in the kernel); show the results.
set -u
B=${DYNPROF_BUILD:-build}
out=${DEMO_OUTPUT:-$PWD/build/demo-output}
seconds=${DEMO_SECONDS:-3}

echo "demo: starting $B/demo_task (a fake card, steps every 10 ms)"
"$B/demo_task" --step-ms=10 > "$B/demo_task.log" 2>&1 &
task=$!
trap 'kill $task 2>/dev/null; wait $task 2>/dev/null' EXIT

# Wait for its socket: the demo prints its line once it serves (up to 20 s:
# on a loaded machine, beside another suite, 5 s were once too few).
for _ in $(seq 400); do
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

rule="start=call:demo_task:demo_step#100,stop=call:demo_task:demo_step#50"
echo "demo: dynprof --pid=$task --output=$out --window=$rule   (no commands: the rule opens and closes the window)"
"$B/dynprof" --pid=$task --output="$out" --window="$rule" < /dev/null
rc=$?
[ $rc -eq 0 ] || { echo "demo: dynprof exited with status $rc"; exit $rc; }
echo "demo: the window record ($out/*_dynprof_windows):"
cat "$out"/*_dynprof_windows 2>/dev/null | sed 's/^/  /'

echo "demo: PROF_ folders in $out:"
for d in "$out"/PROF_*; do
	[ -d "$d" ] || continue
	echo "  $d"
	(cd "$d" && find . -type f -name '*' ! -name '*.done' | sort | sed 's/^/    /')
done
