#!/bin/sh
# Checks dynprof's build dependencies and installs the missing ones.
# Debian/Ubuntu, as root: apt-get. Otherwise: one line naming the packages.
set -u

missing=""
need() { # need PACKAGE TEST...
	pkg=$1; shift
	"$@" >/dev/null 2>&1 || missing="$missing $pkg"
}
has_cmd() { command -v "$1" || [ -x "/usr/sbin/$1" ]; }

need clang        has_cmd clang
need llvm         has_cmd llvm-strip
need bpftool      has_cmd bpftool
need pkg-config   has_cmd pkg-config
need make         has_cmd make
need libbpf-dev   pkg-config --exists libbpf
need libelf-dev   pkg-config --exists libelf
need zlib1g-dev   pkg-config --exists zlib
need libcjson-dev pkg-config --exists libcjson

[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "dynprof build: missing packages:$missing; install them (Debian: sudo apt-get install$missing) and run make again" >&2
	exit 1
fi

echo "dynprof build: installing missing packages:$missing (apt-get)"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1; then
	echo "dynprof build: refreshing the package lists (apt-get update)"
	apt-get update -q >/dev/null || { echo "dynprof build: apt-get update failed" >&2; exit 1; }
	apt-get install -y -q --no-install-recommends $missing >/dev/null ||
		{ echo "dynprof build: apt-get install$missing failed" >&2; exit 1; }
fi
echo "dynprof build: installed$missing"
