#!/usr/bin/env bash
# msprof-export-check.sh PROF_DIR: run msprof's own analysis (a checkout of
# Ascend/msprof, its analysis/ folder named by MSPROF_ANALYSIS) on a copy
# of one window's folder and say what it made of dynprof's host data:
#   lane <pid> <tid> <name> <count>   OS Runtime API slices per thread and call
#   counter <name> <count>            samples of each CPU/Memory counter lane
# Without MSPROF_ANALYSIS it prints why and exits 77 (skipped): the suite
# never needs that checkout (no network there). msprof's analysis exits 0
# even when it wrote nothing, so the verdict is what its timeline holds:
# exit 1 when it made no timeline at all. The folder itself is left as is.
set -u
dir=${1:?usage: msprof-export-check.sh PROF_DIR}
if [ -z "${MSPROF_ANALYSIS:-}" ]; then
	echo "msprof-export-check: skipped: MSPROF_ANALYSIS (msprof's analysis/ folder) not set" >&2
	exit 77
fi
script=$MSPROF_ANALYSIS/msprof/msprof.py
[ -f "$script" ] || { echo "msprof-export-check: no $script" >&2; exit 2; }
work=$(mktemp -d /tmp/msprof-export-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
copy=$work/$(basename "$dir")
cp -a "$dir" "$copy" || exit 2
(cd "$MSPROF_ANALYSIS" && timeout 600 python3 "$script" export timeline -dir="$copy") > "$work/log" 2>&1
timeline=$(ls "$copy"/mindstudio_profiler_output/msprof_*.json 2>/dev/null | head -1)
if [ -z "$timeline" ]; then
	echo "msprof-export-check: msprof wrote no timeline:" >&2
	grep -Ev '\[INFO\]' "$work/log" | tail -20 >&2
	exit 1
fi
# Lanes by their process_name: "OS Runtime API" slices, the counters' samples.
jq -r '
	(map(select(.ph == "M" and .name == "process_name") | {key: (.pid | tostring), value: .args.name}) | from_entries) as $lane
	| .[] | select(.ph == "X" or .ph == "C")
	| if .ph == "X" and $lane[.pid | tostring] == "OS Runtime API" then "lane \(.pid) \(.tid) \(.name)"
	  elif .ph == "C" then "counter \(.name)"
	  else empty end
' "$timeline" | sort | uniq -c | awk '{ n = $1; $1 = ""; sub(/^ /, ""); print $0, n }'
