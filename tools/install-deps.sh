#!/bin/sh
# Checks dynprof's dependencies and installs the missing ones:
#   tools/install-deps.sh        the build's (make runs it first)
#   tools/install-deps.sh test   what `make test` needs beyond the build: a
#                                real SLURM cluster (tests/lib/slurm_cluster.sh),
#                                python3 (JSON checks), systemd-analyze (the unit),
#                                real container engines (tests/integration/engines.sh):
#                                dockerd, podman (rootful and rootless: uidmap,
#                                slirp4netns), containerd with ctr, runc, crun;
#                                chromium and npm, and the trace viewer the
#                                browser test loads (speedscope, from the npm
#                                registry, into $DYNPROF_BUILD/npm, default
#                                build/npm: tests/integration/trace_view.sh)
#   tools/install-deps.sh bench  the tracers bench/osrt.sh compares dynprof's
#                                --host-sys=osrt with: perf (linux-perf),
#                                strace, ltrace, bpftrace (make bench runs it)
# Debian/Ubuntu, as root: apt-get. Otherwise: one line naming the packages.
set -u
what=${1:-build}

missing=""
need() { # need PACKAGE TEST...
	pkg=$1; shift
	"$@" >/dev/null 2>&1 || missing="$missing $pkg"
}
has_cmd() { command -v "$1" || [ -x "/usr/sbin/$1" ]; }

if [ "$what" = test ]; then
	need munge        has_cmd munged
	need slurmctld    has_cmd slurmctld
	need slurmd       has_cmd slurmd
	need slurm-client has_cmd scontrol
	need python3      has_cmd python3
	need systemd      has_cmd systemd-analyze
	need clang-format has_cmd clang-format
	need kubernetes-client has_cmd kubectl
	# /usr/local/bin/docker may be a CLI alone: the daemon is what the tests need
	need docker.io    has_cmd dockerd
	need podman       has_cmd podman
	need containerd   has_cmd ctr
	need runc         has_cmd runc
	need crun         has_cmd crun
	need uidmap       has_cmd newuidmap
	need slirp4netns  has_cmd slirp4netns
	need chromium     has_cmd chromium
	need npm          has_cmd npm
	need strace       has_cmd strace # stall.sh holds a helper with it
elif [ "$what" = bench ]; then
	need linux-perf   has_cmd perf
	need strace       has_cmd strace
	need ltrace       has_cmd ltrace
	need bpftrace     has_cmd bpftrace
else
	need clang        has_cmd clang
	need llvm         has_cmd llvm-strip
	need bpftool      has_cmd bpftool
	need pkg-config   has_cmd pkg-config
	need make         has_cmd make
	need libbpf-dev   pkg-config --exists libbpf
	need libelf-dev   pkg-config --exists libelf
	need zlib1g-dev   pkg-config --exists zlib
	need libcjson-dev pkg-config --exists libcjson
fi

# The browser test's viewer: one pinned version (the test reads its page), from the npm registry.
VIEWER=speedscope@1.25.0
viewer() {
	dir=${DYNPROF_BUILD:-build}/npm
	[ -f "$dir/node_modules/speedscope/dist/release/index.html" ] && return 0
	command -v npm >/dev/null 2>&1 || { echo "dynprof test: no npm: cannot install $VIEWER" >&2; return 1; }
	echo "dynprof test: installing the trace viewer $VIEWER into $dir (npm)"
	mkdir -p "$dir" && npm install --prefix "$dir" --no-audit --no-fund --no-save "$VIEWER" >/dev/null 2>&1 ||
		{ echo "dynprof test: npm install $VIEWER into $dir failed" >&2; return 1; }
	echo "dynprof test: installed $VIEWER"
}

if [ -z "$missing" ]; then
	[ "$what" = test ] && { viewer || exit 1; }
	exit 0
fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "dynprof $what: missing packages:$missing; install them (Debian: sudo apt-get install$missing) and run make again" >&2
	exit 1
fi

echo "dynprof $what: installing missing packages:$missing (apt-get)"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1; then
	echo "dynprof $what: refreshing the package lists (apt-get update)"
	apt-get update -q >/dev/null || { echo "dynprof $what: apt-get update failed" >&2; exit 1; }
	apt-get install -y -q --no-install-recommends $missing >/dev/null ||
		{ echo "dynprof $what: apt-get install$missing failed" >&2; exit 1; }
fi
echo "dynprof $what: installed$missing"
[ "$what" = test ] && { viewer || exit 1; }
exit 0
