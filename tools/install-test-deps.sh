#!/bin/sh
# Checks the packages `make test` needs beyond the build's and installs the
# missing ones: a real SLURM cluster for tests/integration/slurm.sh and
# bench/slurm_fanout.sh (tests/lib/slurm_cluster.sh). Debian/Ubuntu, as
# root: apt-get. Otherwise: one line naming the packages (the SLURM tests
# then fail, saying so).
set -u

missing=""
need() { # need PACKAGE TEST...
	pkg=$1; shift
	"$@" >/dev/null 2>&1 || missing="$missing $pkg"
}
has_cmd() { command -v "$1" || [ -x "/usr/sbin/$1" ]; }

need munge         has_cmd munged
need slurmctld     has_cmd slurmctld
need slurmd        has_cmd slurmd
need slurm-client  has_cmd scontrol

[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "dynprof tests: missing packages:$missing; install them (Debian: sudo apt-get install$missing)" >&2
	exit 1
fi

echo "dynprof tests: installing missing packages:$missing (apt-get)"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1; then
	echo "dynprof tests: refreshing the package lists (apt-get update)"
	apt-get update -q >/dev/null || { echo "dynprof tests: apt-get update failed" >&2; exit 1; }
	apt-get install -y -q --no-install-recommends $missing >/dev/null ||
		{ echo "dynprof tests: apt-get install$missing failed" >&2; exit 1; }
fi
echo "dynprof tests: installed$missing"
