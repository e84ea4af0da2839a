#!/usr/bin/env bash
set -u
# check-layers.sh [-l LAYERS_FILE] OBJECT... [-- OBJECT...]...
#
# Each group of objects (groups are separated by --) is one link unit: the
# tool's objects, then the agent library's. Reads their symbols (nm), not
# the includes: an object under .../user/<folder>/ that uses a symbol defined
# by an object of a folder it may not use is a violation; so is any cycle
# between two or more objects of one unit. Prints one line per finding and
# exits 1 if there is any.
layers=$(dirname "$0")/layers
if [ "${1:-}" = -l ]; then layers=$2; shift 2; fi
[ $# -gt 0 ] || { echo "usage: check-layers.sh [-l LAYERS_FILE] OBJECT... [-- OBJECT...]" >&2; exit 2; }
[ -r "$layers" ] || { echo "check-layers: cannot read $layers" >&2; exit 2; }

# folder -> space-separated folders it may use
declare -A allowed rank
order=()
while read -r line; do
	line=${line%%#*}
	[ -n "${line// /}" ] || continue
	name=${line%% *}
	if [[ $line == *" only:"* ]]; then
		only=${line#* only:}; allowed[$name]="$name ${only# }"
	else
		allowed[$name]="$name ${order[*]}"
	fi
	order+=("$name")
done <"$layers"

folder_of() { # folder_of OBJECT: its layer name in REPLY (no subshell: called per object)
	local rel=${1#*/user/}
	if [[ $rel == */* ]]; then REPLY=${rel%%/*}; else REPLY=${rel%.o}; fi
}

status=0
check_unit() { # $@: the objects of one link unit
	local o f s d df kind table edges
	declare -A def=() folder=()
	[ $# -gt 0 ] || return 0
	for o in "$@"; do folder_of "$o"; folder[$o]=$REPLY; done
	# One nm for the unit: "OBJECT KIND SYMBOL" per global symbol; U, w and
	# v are the undefined ones (what the object uses), the rest defined.
	table=$(nm -A -g "$@" | awk '{ sub(/:.*/, "", $1); print $1, $(NF - 1), $NF }')
	while read -r o kind s; do
		[[ $kind == [Uwv] ]] || def[$s]=$o
	done <<<"$table"
	for o in "$@"; do
		f=${folder[$o]}
		if [ -z "${allowed[$f]+x}" ]; then
			echo "check-layers: $o: folder '$f' is not in $layers"
			status=1
		fi
	done
	edges=$(mktemp)
	while read -r o kind s; do
		[[ $kind == [Uwv] ]] || continue
		f=${folder[$o]}
		[ -n "${allowed[$f]+x}" ] || continue
		d=${def[$s]:-}
		[ -n "$d" ] && [ "$d" != "$o" ] || continue
		echo "$o $d" >>"$edges"
		df=${folder[$d]}
		if [[ " ${allowed[$f]} " != *" $df "* ]]; then
			echo "check-layers: $o ($f) uses $s from $d ($df): $f may use only: ${allowed[$f]}"
			status=1
		fi
	done <<<"$table"
	# tsort names the members of each loop it has to break, one loop after
	# each "input contains a loop" line.
	local loops
	loops=$(sort -u "$edges" | tsort 2>&1 >/dev/null |
		awk '/input contains a loop/ { if (l != "") print l; l = ""; next }
		     { sub(/^tsort: /, ""); l = (l == "" ? $0 : l " -> " $0) }
		     END { if (l != "") print l }')
	if [ -n "$loops" ]; then
		while IFS= read -r l; do
			echo "check-layers: a cycle of objects that use each other: $l"
		done <<<"$loops"
		status=1
	fi
	rm -f "$edges"
}

unit=()
for a in "$@"; do
	if [ "$a" = -- ]; then check_unit "${unit[@]}"; unit=(); else unit+=("$a"); fi
done
check_unit "${unit[@]}"
[ $status -eq 0 ] && echo "check-layers: ok (${order[*]})"
exit $status
