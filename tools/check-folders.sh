#!/usr/bin/env bash
# check-folders.sh [USER_DIR]: the shape of user/ that keeps each folder one
# concern (part of make check-layers):
#  - no folder holds more than 15% of user/'s lines of C (a folder that
#    grows past it holds more than one concern: split it);
#  - no folder has a name that build systems, editors and search tools
#    treat as generated output (target, out, build, bin, obj, dist), which
#    hides its files from them.
# Prints one line per finding, and exits 1 if there is any.
set -u
dir=${1:-$(dirname "$0")/../user}
max_percent=15
status=0
total=$(cat "$dir"/*.[ch] "$dir"/*/*.[ch] 2>/dev/null | wc -l)
[ "$total" -gt 0 ] || { echo "check-folders: no C files under $dir"; exit 1; }
for d in "$dir"/*/; do
	name=$(basename "$d")
	case $name in
	target | out | build | bin | obj | dist)
		echo "check-folders: user/$name: a build-output name; name the folder for what it holds"
		status=1
		;;
	esac
	n=$(cat "$d"*.[ch] 2>/dev/null | wc -l)
	if [ $((n * 100)) -gt $((total * max_percent)) ]; then
		echo "check-folders: user/$name holds $n of $total lines ($((n * 100 / total))%), more than $max_percent%: split it by concern"
		status=1
	fi
done
[ $status -eq 0 ] && echo "check-folders: ok (largest: $(for d in "$dir"/*/; do echo "$(cat "$d"*.[ch] 2>/dev/null | wc -l) $(basename "$d")"; done | sort -rn | head -1 | awk -v t="$total" '{ printf "%s %.1f%%", $2, 100 * $1 / t }'))"
exit $status
