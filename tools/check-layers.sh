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

folder_of() { # obj path relative to the unit's root -> its layer name
	local rel=${1#*/user/}
	if [[ $rel == */* ]]; then echo "${rel%%/*}"; else echo "${rel%.o}"; fi
}

status=0
check_unit() { # $@: the objects of one link unit
	local o f s d edges
	declare -A def=()
	local objs=("$@")
	[ ${#objs[@]} -gt 0 ] || return 0
	for o in "${objs[@]}"; do
		while read -r s; do def[$s]=$o; done < <(nm --defined-only -g "$o" | awk 'NF==3 {print $3}')
	done
	edges=$(mktemp)
	for o in "${objs[@]}"; do
		f=$(folder_of "$o")
		if [ -z "${allowed[$f]+x}" ]; then
			echo "check-layers: $o: folder '$f' is not in $layers"
			status=1
			continue
		fi
		while read -r s; do
			d=${def[$s]:-}
			[ -n "$d" ] && [ "$d" != "$o" ] || continue
			echo "${o} ${d}" >>"$edges"
			local df; df=$(folder_of "$d")
			if [[ " ${allowed[$f]} " != *" $df "* ]]; then
				echo "check-layers: ${o} ($f) uses $s from ${d} ($df): $f may use only: ${allowed[$f]}"
				status=1
			fi
		done < <(nm -u "$o" | awk '{print $2}')
	done
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
