# A real SLURM cluster on this machine, for tests and benchmarks
# (facts in docs/CLUSTER-NOTES.md): munged, slurmctld and N
# `slurmd -N nK` on 127.0.0.1, each node in its own uts, mount and pid
# namespace under a tiny init, every file under one short folder, nothing
# in /etc or /run touched. Source it, then:
#
#   slurm_up DIR N      bring it up (installs the packages first when missing,
#                       saying so); exports SLURM_CONF; nodes n1..nN idle
#   slurm_down DIR      end every process of it (also clients such as srun
#                       that still carry its SLURM_CONF), leaving nothing
#   slurm_job_state J   the job's state (RUNNING, PENDING...)
#
# In each node: hostname nK, a private /etc/hosts naming every node (no
# name goes to DNS), a private /root (a target's socket is
# $HOME/dynamic_profiling_socket_<pid> and pids repeat across pid
# namespaces). /tmp and the rest of the file system are shared by all nodes.
# DIR must be short: slurmd's step sockets live under it (about 60
# characters is the limit of a unix socket path).

SLURM_SBIN=/usr/sbin

slurm_have() { [ -x $SLURM_SBIN/slurmctld ] && [ -x $SLURM_SBIN/slurmd ] && [ -x $SLURM_SBIN/munged ] && command -v scontrol >/dev/null; }

slurm_install() {
	slurm_have && return 0
	"${DYNPROF_TESTS:-$(dirname "${BASH_SOURCE[0]}")/..}/../tools/install-deps.sh" test >&2
	slurm_have || { echo "slurm cluster: munge, slurmctld, slurmd and slurm-client are needed" >&2; return 1; }
}

# A TCP port base with COUNT free ports above it (none listening on any address).
slurm_free_ports() { # slurm_free_ports COUNT -> base
	local count=$1 base i used
	used=$(awk 'NR > 1 && $4 == "0A" { split($2, a, ":"); print strtonum("0x" a[2]) }' /proc/net/tcp /proc/net/tcp6 2>/dev/null | sort -u)
	for _ in $(seq 50); do
		base=$((20000 + RANDOM % 20000))
		for ((i = 0; i <= count; i++)); do
			grep -qx $((base + i)) <<<"$used" && continue 2
		done
		echo $base
		return 0
	done
	return 1
}

slurm_write_conf() { # DIR N BASE
	local d=$1 n=$2 base=$3 k
	cat > "$d/slurm.conf" <<EOF
ClusterName=dptest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$base
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/%n.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SchedulerParameters=batch_sched_delay=0
MailProg=/bin/true
KillWait=5
MpiDefault=none
EOF
	for ((k = 1; k <= n; k++)); do
		echo "NodeName=n$k NodeHostname=n$k NodeAddr=127.0.0.1 Port=$((base + k)) CPUs=2 State=UNKNOWN" >> "$d/slurm.conf"
	done
	echo "PartitionName=all Nodes=n[1-$n] Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8" >> "$d/slurm.conf"
}

# The node's init, pid 1 of its namespaces: names the node, gives it its own
# /etc/hosts and /root, runs slurmd, forwards SIGTERM, reaps every child
# (bash reaps the orphans the namespace hands it), exits with slurmd.
slurm_node_init='
	d=$1 node=$2
	hostname "$node"
	mount --bind "$d/hosts" /etc/hosts
	mkdir -p "$d/home/$node"
	mount --bind "$d/home/$node" /root
	/usr/sbin/slurmd -D -N "$node" -f "$d/slurm.conf" > "$d/$node.out" 2>&1 &
	child=$!
	trap "kill -TERM $child 2>/dev/null" TERM INT
	while kill -0 $child 2>/dev/null; do wait $child; done
'

# The host pid of the namespace's pid 1 (unshare's only child).
slurm_inner_pid() { # slurm_inner_pid UNSHARE_PID
	local c
	c=$(cat /proc/$1/task/*/children 2>/dev/null)
	[ -n "$c" ] && echo ${c%% *}
}

slurm_idle_count() {
	sinfo -h -o '%T %D' 2>/dev/null | awk '$1 == "idle" { n += $2 } END { print n + 0 }'
}

slurm_nodes_idle() { [ "$(slurm_idle_count)" -ge "$1" ]; }

slurm_up() { # slurm_up DIR N
	local d=$1 n=$2 base k u inner
	slurm_install || return 1
	mkdir -p "$d/state" "$d/home" && chmod 0700 "$d" || return 1
	export SLURM_CONF=$d/slurm.conf
	base=$(slurm_free_ports $((n + 1))) || { echo "slurm cluster: no free ports" >&2; return 1; }
	slurm_write_conf "$d" "$n" "$base"
	{ printf '127.0.0.1 localhost'; for ((k = 1; k <= n; k++)); do printf ' n%d' $k; done; echo; } > "$d/hosts"
	dd if=/dev/urandom of="$d/munge.key" bs=1024 count=1 status=none && chmod 0400 "$d/munge.key"
	$SLURM_SBIN/munged -F --force --socket="$d/munge.sock" --key-file="$d/munge.key" \
		--pid-file="$d/munged.pid" --log-file="$d/munged.log" --seed-file="$d/munge.seed" \
		</dev/null >/dev/null 2>&1 &
	echo $! > "$d/pids"
	slurm_wait 5 test -S "$d/munge.sock" || { echo "slurm cluster: munged did not start" >&2; return 1; }
	$SLURM_SBIN/slurmctld -D -c -i -f "$d/slurm.conf" </dev/null > "$d/slurmctld.out" 2>&1 &
	echo $! >> "$d/pids"
	for ((k = 1; k <= n; k++)); do
		# SLURM_SHIFTED_NODE=nK: that node's CLOCK_MONOTONIC 100000 s ahead of the
		# host's (a time namespace), as another machine's would be.
		local tns=()
		[ "${SLURM_SHIFTED_NODE:-}" = n$k ] && tns=(--time --monotonic 100000)
		unshare --uts --mount --pid "${tns[@]}" --fork --mount-proc bash -c "$slurm_node_init" init "$d" n$k \
			</dev/null >/dev/null 2>&1 &
		u=$!
		echo $u >> "$d/pids"
		slurm_wait 5 slurm_inner_pid $u >/dev/null || { echo "slurm cluster: node n$k did not start" >&2; return 1; }
		inner=$(slurm_inner_pid $u)
		echo $inner >> "$d/pids"
		echo $inner > "$d/n$k.init"
	done
	slurm_wait 5 scontrol ping >/dev/null || { echo "slurm cluster: slurmctld does not answer" >&2; return 1; }
	slurm_wait 20 slurm_nodes_idle "$n" ||
		{ sinfo >&2; echo "slurm cluster: $n nodes not idle" >&2; return 1; }
}

# slurm_wait SECONDS COMMAND...: poll every 20 ms until COMMAND succeeds.
slurm_wait() {
	local end=$((SECONDS + $1)); shift
	while ! "$@" 2>/dev/null; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.02
	done
}

# Processes that carry this cluster's SLURM_CONF: clients (srun, sbatch, a
# dynprof coordinator) left by a test, and everything the nodes started.
slurm_clients() { # slurm_clients DIR -> pids
	local e p
	for e in /proc/[0-9]*/environ; do
		p=${e#/proc/}; p=${p%/environ}
		[ "$p" = $$ ] || [ "$p" = "$BASHPID" ] && continue
		# The test's card sleeper has SLURM_CONF too (made after it was set):
		# it goes last, with the card namespace (cleanup_test), not here.
		[ -s "${T:-}/.cardns" ] && [ "$p" = "$(cat "$T/.cardns")" ] && continue
		tr '\0' '\n' 2>/dev/null < "$e" | grep -qxF "SLURM_CONF=$1/slurm.conf" && echo $p
	done
}

slurm_gone() { # slurm_gone PID...
	local p
	for p in "$@"; do [ -e /proc/$p ] && [ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" != Z ] && return 1; done
	return 0
}

slurm_down() { # slurm_down DIR
	local d=$1 pids=() clients
	[ -f "$d/pids" ] || return 0
	mapfile -t pids < "$d/pids"
	clients=$(slurm_clients "$d")
	# The nodes first (each init ends its namespace), then clients and daemons.
	kill -TERM $(cat "$d"/n*.init 2>/dev/null) $clients 2>/dev/null
	slurm_wait 3 slurm_gone $(cat "$d"/n*.init 2>/dev/null)
	kill -TERM "${pids[@]}" 2>/dev/null
	slurm_wait 3 slurm_gone "${pids[@]}" $clients
	kill -KILL "${pids[@]}" $clients $(slurm_clients "$d") 2>/dev/null
	slurm_wait 3 slurm_gone "${pids[@]}" $clients
	rm -f "$d/pids"
}

slurm_job_state() { # slurm_job_state J
	scontrol show job -o "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'
}
