#!/usr/bin/env bash
set -u
# check-private.sh [ROOT]
#
# A header user/<folder>/<name>_impl.h is private to <folder>: it holds
# structs whose members only that folder reads (struct session, struct
# target, struct triggers, ...), so that the layers above see them opaque
# and a member can change without them. So is any header of the folder
# that includes a private header (it would hand the members on). Checked
# on the sources (the compiler would accept either breach):
#   - only files of user/<folder>/ and its unit tests (tests/unit/<folder>/)
#     include a private header of <folder>;
#   - a struct a private header defines (`struct NAME {`) is defined in no
#     other file.
# The fuzz harnesses (tests/fuzz/) are not checked: each drives one
# module's insides on purpose. Prints one line per finding and exits 1 if
# there is any; ROOT is the source tree (default: this script's).
root=${1:-$(dirname "$0")/..}
[ -d "$root/user" ] || { echo "check-private: no user/ folder in $root" >&2; exit 2; }
cd "$root" || exit 2

# The folder a file belongs to: user/<folder>/... or tests/unit/<folder>/...
folder_of() {
	local rel=${1#user/}
	rel=${rel#tests/unit/}
	if [[ $rel == */* ]]; then REPLY=${rel%%/*}; else REPLY=${rel%.*}; fi
}

# The project's includes of one file, as written ("folder/name.h").
includes_of() {
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"
}

mapfile -t files < <(find user tests/unit -type f \( -name '*.c' -o -name '*.h' \) | sort)

# Private headers, by include name -> why ("" for an _impl.h itself).
declare -A private=()
for f in user/*/*_impl.h; do
	[ -e "$f" ] && private[${f#user/}]=""
done
# A header that includes a private header of its folder is private too:
# grow the set until it holds still.
changed=1
while [ $changed = 1 ]; do
	changed=0
	for f in user/*/*.h; do
		h=${f#user/}
		[ -n "${private[$h]+x}" ] && continue
		folder_of "$f"
		for inc in $(includes_of "$f"); do
			if [ -n "${private[$inc]+x}" ] && [ "${inc%%/*}" = "$REPLY" ]; then
				private[$h]=" (it includes $inc)"
				changed=1
				break
			fi
		done
	done
done

status=0
for f in "${files[@]}"; do
	folder_of "$f"
	for inc in $(includes_of "$f"); do
		[ -n "${private[$inc]+x}" ] || continue
		[ "${inc%%/*}" = "$REPLY" ] && continue
		echo "$f includes $inc, private to ${inc%%/*}/${private[$inc]}: use its public header"
		status=1
	done
done

for h in "${!private[@]}"; do
	[[ $h == *_impl.h ]] || continue
	for name in $(sed -n 's/^struct \([A-Za-z_][A-Za-z0-9_]*\) {.*/\1/p' "user/$h"); do
		while IFS= read -r hit; do
			[ "$hit" = "user/$h" ] && continue
			echo "$hit defines struct $name, whose members are private to ${h%%/*}/ ($h)"
			status=1
		done < <(grep -lE "^[[:space:]]*(typedef[[:space:]]+)?struct[[:space:]]+$name[[:space:]]*\{" "${files[@]}")
	done
done

if [ $status = 0 ]; then
	echo "check-private: ok (${#private[@]} private headers: $(printf '%s\n' "${!private[@]}" | sort | tr '\n' ' ' | sed 's/ $//'))"
fi
exit $status
