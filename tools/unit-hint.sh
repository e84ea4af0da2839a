#!/bin/sh
# unit-hint.sh UNIT_DIR DESTDIR: after make install, the one line saying how
# to start the unit, true for where it went. systemd reads units only from
# its own search path (systemd-analyze unit-paths); a unit put elsewhere
# (PREFIX=/tmp/x, a DESTDIR staging tree) is not started by systemctl.
dir=$1 destdir=$2
if [ -n "$destdir" ]; then
	echo "dynprof: the unit is staged in $destdir$dir; on the target system: systemctl daemon-reload && systemctl enable --now dynprof"
	exit 0
fi
if command -v systemd-analyze >/dev/null 2>&1 &&
	systemd-analyze unit-paths 2>/dev/null | grep -qx "$(cd "$dir" && pwd -P)"; then
	echo "dynprof: the unit is in $dir; start it with: systemctl daemon-reload && systemctl enable --now dynprof"
elif command -v systemd-analyze >/dev/null 2>&1; then
	echo "dynprof: the unit is in $dir, where systemd does not look for units; link it first: systemctl link $dir/dynprof.service && systemctl enable --now dynprof"
else
	echo "dynprof: the unit is in $dir (systemd not found here)"
fi
