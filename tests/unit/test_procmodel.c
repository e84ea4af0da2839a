// SPDX-License-Identifier: MIT
/*
 * The process model's pure parts: container ids from cgroup text, rows of
 * /proc/net/unix, status and stat fields, argv joining, start times in
 * clock ticks, the pid table; and the model's bookkeeping fed with
 * synthetic kernel events for pids above pid_max (no such process exists,
 * so nothing is read from /proc for them).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proc/fdscan.h"
#include "proc/netunix.h"
#include "common/pidtab.h"
#include "proc/procmodel.h"
#include "proc/procscan.h"
#include "unit.h"

#define ID "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899"
#define ID2 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const char *cid(const char *text)
{
	static char id[72];

	procmodel_container_id(text, id, sizeof(id));
	return id;
}

/* ---- container ids ---------------------------------------------------------------- */

static void container_docker_cgroupfs_v1(void)
{
	CHECK_STR(cid("12:memory:/docker/" ID "\n11:cpu,cpuacct:/docker/" ID "\n"
		      "1:name=systemd:/docker/" ID "\n0::/\n"), ID);
}

static void container_docker_systemd_v2(void)
{
	CHECK_STR(cid("0::/system.slice/docker-" ID ".scope\n"), ID);
}

static void container_docker_cgroupfs_v2(void)
{
	CHECK_STR(cid("0::/docker/" ID "\n"), ID);
}

static void container_containerd_scope(void)
{
	CHECK_STR(cid("0::/system.slice/cri-containerd-" ID ".scope\n"), ID);
}

static void container_crio_scope_and_cgroupfs(void)
{
	CHECK_STR(cid("0::/kubepods.slice/kubepods-besteffort.slice/"
		      "kubepods-besteffort-pod2b1c_33aa_4f1e.slice/crio-" ID ".scope\n"), ID);
	CHECK_STR(cid("0::/kubepods/besteffort/pod2b1c33aa-4f1e/crio-" ID "\n"), ID);
}

static void container_podman_root_and_rootless(void)
{
	CHECK_STR(cid("0::/machine.slice/libpod-" ID ".scope\n"), ID);
	CHECK_STR(cid("0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID
		      ".scope/container\n"), ID);
}

static void container_conmon_is_not_the_container(void)
{
	CHECK_STR(cid("0::/machine.slice/libpod-conmon-" ID ".scope\n"), "");
	CHECK_STR(cid("0::/system.slice/crio-conmon-" ID ".scope\n"), "");
}

static void container_kubepods_cgroupfs_v1(void)
{
	CHECK_STR(cid("11:memory:/kubepods/burstable/pod0d8e6a3c-6f0b-4c8e-9a36-0f6d6a1c2b3d/" ID
		      "\n10:pids:/kubepods/burstable/pod0d8e6a3c-6f0b-4c8e-9a36-0f6d6a1c2b3d/" ID "\n"),
		  ID);
	/* Guaranteed pods sit right under kubepods. */
	CHECK_STR(cid("0::/kubepods/pod0d8e6a3c/" ID "\n"), ID);
}

static void container_kubepods_systemd_slices(void)
{
	CHECK_STR(cid("0::/kubepods.slice/kubepods-burstable.slice/"
		      "kubepods-burstable-pod0d8e6a3c_6f0b_4c8e_9a36_0f6d6a1c2b3d.slice/"
		      "cri-containerd-" ID ".scope\n"), ID);
	CHECK_STR(cid("0::/kubepods.slice/kubepods-pod0d8e6a3c.slice/docker-" ID ".scope\n"), ID);
}

static void container_deepest_id_wins(void)
{
	/* docker-in-docker: the process is in the inner container. */
	CHECK_STR(cid("0::/docker/" ID "/docker/" ID2 "\n"), ID2);
	/* systemd inside the container: still the container's id. */
	CHECK_STR(cid("1:name=systemd:/docker/" ID "/init.scope\n"), ID);
}

static void container_first_hierarchy_with_an_id(void)
{
	CHECK_STR(cid("13:misc:/\n12:memory:/docker/" ID "\n0::/\n"), ID);
}

static void container_host_processes(void)
{
	CHECK_STR(cid("0::/init.scope\n"), "");
	CHECK_STR(cid("0::/user.slice/user-0.slice/session-3.scope\n"), "");
	CHECK_STR(cid("0::/\n"), "");
	CHECK_STR(cid(""), "");
	CHECK_STR(cid(NULL), "");
	CHECK_STR(cid("12:memory:/user.slice\n1:name=systemd:/system.slice/sshd.service\n0::/\n"),
		  "");
	/* A 32-hex name is not a container engine's id. */
	CHECK_STR(cid("4:memory:/process_api/cc7fca339ae472a28b77235115a065e5\n"), "");
}

static void container_near_misses(void)
{
	CHECK_STR(cid("0::/docker/" ID "0\n"), "");                    /* 65 hex */
	CHECK_STR(cid("0::/docker/3f4e5d6c7b8a99887766554433221100ffeeddccbbaa0011223344556677889\n"),
		  "");                                                  /* 63 hex */
	CHECK_STR(cid("0::/docker/3F4E5D6C7B8A99887766554433221100FFEEDDCCBBAA00112233445566778899\n"),
		  "");                                                  /* upper case */
	CHECK_STR(cid("0::/system.slice/docker-" ID ".scopex\n"), "");
	CHECK_STR(cid("0::/system.slice/rkt-" ID ".scope\n"), "");     /* unknown engine */
	CHECK_STR(cid("no colons at all " ID "\n"), "");
}

static void container_id_cut_to_buffer(void)
{
	char id[13];

	procmodel_container_id("0::/docker/" ID "\n", id, sizeof(id));
	CHECK_STR(id, "3f4e5d6c7b8a");
}

/* ---- /proc/net/unix ------------------------------------------------------------------ */

static int row(const char *line, struct netunix_row *r)
{
	return netunix_parse_row(line, strlen(line), r);
}

static void netunix_listening_row(void)
{
	struct netunix_row r;

	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001 01 23456 "
		      "/root/dynamic_profiling_socket_42", &r), 0);
	CHECK_INT(r.flags, 0x10000);
	CHECK_INT(r.type, 1);
	CHECK_INT(r.state, NETUNIX_SS_UNCONNECTED);
	CHECK_INT(r.inode, 23456);
	CHECK_INT(r.path_len, strlen("/root/dynamic_profiling_socket_42"));
	CHECK(!memcmp(r.path, "/root/dynamic_profiling_socket_42", r.path_len));
	CHECK(netunix_is_listener(&r));
}

static void netunix_accepted_row_has_the_listener_path(void)
{
	struct netunix_row r;

	CHECK_INT(row("ffff8881a2b3c400: 00000003 00000000 00000000 0001 03 23460 /root/s", &r), 0);
	CHECK_INT(r.state, NETUNIX_SS_CONNECTED);
	CHECK_INT(r.inode, 23460);
	CHECK_INT(r.path_len, 7);
	CHECK(!netunix_is_listener(&r));
}

static void netunix_unbound_row_has_no_path(void)
{
	struct netunix_row r;

	/* %5lu pads the inode with blanks. */
	CHECK_INT(row("00000000e130848b: 00000003 00000000 00000000 0001 03   546", &r), 0);
	CHECK_INT(r.inode, 546);
	CHECK_INT(r.path_len, 0);
	CHECK_STR(r.path, "");
}

static void netunix_paths_with_blanks_and_abstract_names(void)
{
	struct netunix_row r;

	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001 01   123 /tmp/a b ", &r), 0);
	CHECK_INT(r.path_len, 9);
	CHECK(!memcmp(r.path, "/tmp/a b ", 9));
	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0005 01 77 @abstract", &r), 0);
	CHECK_INT(r.type, 5);
	CHECK(r.path_len == 9 && !memcmp(r.path, "@abstract", 9));
}

static void netunix_queued_client_is_connecting(void)
{
	struct netunix_row r;

	CHECK_INT(row("0000000000000000: 00000002 00000000 00000000 0001 02     0 /root/s", &r), 0);
	CHECK_INT(r.state, NETUNIX_SS_CONNECTING);
	CHECK_INT(r.inode, 0);
	CHECK(!netunix_is_listener(&r));
}

static void netunix_rejects_header_and_junk(void)
{
	struct netunix_row r;

	CHECK_INT(row("Num       RefCount Protocol Flags    Type St Inode Path", &r), -EINVAL);
	CHECK_INT(row("", &r), -EINVAL);
	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001", &r), -EINVAL);
	CHECK_INT(row("0000000000000000 00000002 00000000 00010000 0001 01 1 /p", &r), -EINVAL);
	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001 01 12x /p", &r), -EINVAL);
	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001 01 12 ", &r), -EINVAL);
}

static void netunix_row_needs_no_nul(void)
{
	const char text[] = "0000000000000000: 00000002 00000000 00010000 0001 01 9 /p\nNEXT";
	struct netunix_row r;

	CHECK_INT(netunix_parse_row(text, (size_t)(strchr(text, '\n') - text), &r), 0);
	CHECK(r.path_len == 2 && !memcmp(r.path, "/p", 2));
}

/* netunix_find reads "net/unix" under any folder: a fake one, across chunk boundaries. */
static void netunix_find_collects_inodes_of_one_path(void)
{
	char dir[] = "/tmp/dynprof-netunix-XXXXXX", sub[64], file[80], line[600];
	struct netunix_match m;
	FILE *f;
	int dfd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(sub, sizeof(sub), "%s/net", dir);
	snprintf(file, sizeof(file), "%s/unix", sub);
	CHECK(mkdir(sub, 0700) == 0);
	f = fopen(file, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "Num       RefCount Protocol Flags    Type St Inode Path\n");
	for (int i = 0; i < 2000; i++) /* ~150 KiB: many reads */
		fprintf(f, "0000000000000000: 00000002 00000000 00010000 0001 01 %5d /run/other/%d\n",
			1000 + i, i);
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	fprintf(f, "0000000000000000: 00000002 00000000 00010000 0001 01 5 /root/s%s\n", line);
	fprintf(f, "0000000000000000: 00000002 00000000 00010000 0001 01 71 /root/s\n");
	fprintf(f, "0000000000000000: 00000003 00000000 00000000 0001 03 72 /root/s\n");
	fprintf(f, "0000000000000000: 00000002 00000000 00000000 0001 02     0 /root/s\n");
	fprintf(f, "0000000000000000: 00000003 00000000 00000000 0001 03 73\n");
	fprintf(f, "0000000000000000: 00000002 00000000 00010000 0001 01 74 /root/s2\n");
	fclose(f);
	dfd = open(dir, O_PATH | O_DIRECTORY);
	CHECK_INT(netunix_find(dfd, "/root/s", &m), 0);
	CHECK_INT(m.nlistening, 1);
	CHECK_INT(m.listening[0], 71);
	CHECK_INT(m.nconnected, 1);
	CHECK_INT(m.connected[0], 72);
	CHECK_INT(netunix_find(dfd, "/run/other/1999", &m), 0);
	CHECK_INT(m.nlistening, 1);
	CHECK_INT(m.listening[0], 2999);
	close(dfd);
	unlink(file);
	rmdir(sub);
	rmdir(dir);
}

static void fdscan_socket_inodes(void)
{
	CHECK_INT(fdscan_socket_inode("socket:[123]"), 123);
	CHECK_INT(fdscan_socket_inode("socket:[12"), 0);
	CHECK_INT(fdscan_socket_inode("socket:[12]x"), 0);
	CHECK_INT(fdscan_socket_inode("pipe:[123]"), 0);
	CHECK_INT(fdscan_socket_inode("/dev/davinci0"), 0);
}

/* ---- status, stat, argv, ticks ----------------------------------------------------------- */

static void status_chain_and_ppid(void)
{
	int ppid = -1, ns[PM_MAX_NS], n = 0;

	CHECK_INT(procscan_parse_status("Name:\tbash\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t100\n"
					"Ngid:\t0\nPid:\t100\nPPid:\t42\nTracerPid:\t0\n"
					"NSpid:\t100\t5\t1\nNSpgid:\t100\t5\t1\n",
					&ppid, ns, PM_MAX_NS, &n), 0);
	CHECK_INT(ppid, 42);
	CHECK_INT(n, 3);
	CHECK_INT(ns[0], 100);
	CHECK_INT(ns[1], 5);
	CHECK_INT(ns[2], 1);
}

static void status_without_nspid_uses_pid(void)
{
	int ppid = -1, ns[PM_MAX_NS], n = 0;

	CHECK_INT(procscan_parse_status("Pid:\t77\nPPid:\t1\n", &ppid, ns, PM_MAX_NS, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(ns[0], 77);
	CHECK_INT(procscan_parse_status("Pid:\t77\n", &ppid, ns, PM_MAX_NS, &n), -EINVAL);
	CHECK_INT(procscan_parse_status("PPid:\t1\nNSpid:\tx\n", &ppid, ns, PM_MAX_NS, &n), -EINVAL);
}

static void status_deep_chain_keeps_host_and_innermost(void)
{
	int ppid, ns[3], n = 0;

	CHECK_INT(procscan_parse_status("PPid:\t0\nNSpid:\t1\t2\t3\t4\t5\n", &ppid, ns, 3, &n), 0);
	CHECK_INT(n, 3);
	CHECK_INT(ns[0], 1);
	CHECK_INT(ns[1], 2);
	CHECK_INT(ns[2], 5);
}

static void stat_comm_with_parentheses(void)
{
	char comm[16];

	CHECK_INT(procscan_parse_comm("123 (a) b)) S 1 123 123 0 -1", comm, sizeof(comm)), 0);
	CHECK_STR(comm, "a) b)");
	CHECK_INT(procscan_parse_comm("123 (python3) R 1", comm, sizeof(comm)), 0);
	CHECK_STR(comm, "python3");
	CHECK_INT(procscan_parse_comm("123 python3 R 1", comm, sizeof(comm)), -EINVAL);
}

static const char *joined(const char *buf, size_t len, size_t outlen)
{
	static char out[64];

	procscan_join_args(buf, len, out, outlen);
	return out;
}

static void argv_joined_by_spaces(void)
{
	static const char argv[] = "python3\0train.py\0--epochs\0003\0";

	CHECK_STR(joined(argv, sizeof(argv) - 1, 64), "python3 train.py --epochs 3");
	CHECK_STR(joined("a\0\0b", 4, 64), "a  b");          /* an empty argument */
	CHECK_STR(joined("sleep\0001", 7, 64), "sleep 1");  /* no trailing NUL */
	CHECK_STR(joined("", 0, 64), "");
	CHECK_STR(joined("\0\0\0", 3, 64), "");
}

static void argv_cut_and_made_printable(void)
{
	CHECK_STR(joined("abcdef\0ghi", 10, 8), "abcdef ");
	CHECK_STR(joined("abc", 3, 1), "");
	CHECK_STR(joined("a\nb\tc\x7f", 6, 64), "a?b?c?");
	CHECK_STR(joined("caf\xc3\xa9", 5, 64), "caf\xc3\xa9");      /* UTF-8 kept */
}

static void start_ns_to_clock_ticks(void)
{
	CHECK_INT(procscan_ns_to_ticks(1234567890123ULL, 100), 123456);
	CHECK_INT(procscan_ns_to_ticks(9999999ULL, 100), 0);
	CHECK_INT(procscan_ns_to_ticks(10000000ULL, 100), 1);
	CHECK_INT(procscan_ns_to_ticks(1234567890123ULL, 1000), 1234567);
	CHECK_INT(procscan_ns_to_ticks(1234567890123ULL, 250), 308641);
	CHECK_INT(procscan_ns_to_ticks(1234567890123ULL, 0), 0);
}

/* The same number /proc shows for this very process. */
static void start_ticks_match_proc(void)
{
	struct timespec now;
	unsigned long long start, boot_ns;
	char buf[4096];
	FILE *f = fopen("/proc/self/stat", "r");
	char *p;

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(fgets(buf, sizeof(buf), f) != NULL);
	fclose(f);
	p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	CHECK(p != NULL);
	if (!p)
		return;
	start = strtoull(p + 1, NULL, 10);
	clock_gettime(CLOCK_BOOTTIME, &now);
	boot_ns = (unsigned long long)now.tv_sec * 1000000000ULL + (unsigned long long)now.tv_nsec;
	/* This process started before now, and not long before. */
	CHECK(start <= procscan_ns_to_ticks(boot_ns, sysconf(_SC_CLK_TCK)));
	CHECK(start + 100 * 60 >= procscan_ns_to_ticks(boot_ns, sysconf(_SC_CLK_TCK)));
}

/* ---- the pid table --------------------------------------------------------------------------- */

static void pidtab_survives_churn(void)
{
	static char vals[5000];
	struct pidtab t;
	int ok = 1;

	pidtab_init(&t);
	for (int i = 0; i < 5000; i++)
		CHECK_INT(pidtab_put(&t, 1 + i * 7, &vals[i]), 0);
	CHECK_INT(t.count, 5000);
	for (int i = 0; i < 5000; i += 2)
		ok &= pidtab_del(&t, 1 + i * 7) == &vals[i];
	for (int i = 0; i < 5000; i++)
		ok &= pidtab_get(&t, 1 + i * 7) == (i % 2 ? &vals[i] : NULL);
	CHECK(ok);
	CHECK_INT(t.count, 2500);
	CHECK(pidtab_del(&t, 3) == NULL);
	CHECK(pidtab_get(&t, 0) == NULL);
	CHECK_INT(pidtab_put(&t, 0, vals), -EINVAL);
	CHECK_INT(pidtab_put(&t, 8, &vals[0]), 0); /* replace */
	CHECK(pidtab_get(&t, 8) == &vals[0]);
	CHECK_INT(t.count, 2500);
	pidtab_free(&t);
}

/* ---- the model, fed with events for pids that cannot exist ---------------------------------- */

#define NOPID 5000000 /* above PID_MAX_LIMIT (2^22): never a real process */

struct recorder {
	char log[1024];
};

static void record(void *ctx, enum pm_change what, const struct pm_proc *p)
{
	static const char *const names[] = { "exec", "open", "close", "socket", "exit" };
	struct recorder *r = ctx;
	size_t n = strlen(r->log);

	snprintf(r->log + n, sizeof(r->log) - n, "%s%s:%d:%llx", n ? " " : "", names[what], p->pid,
		 (unsigned long long)p->cards);
}

static struct dp_event ev(enum dp_event_type type, int pid, int ppid, unsigned long long start_s)
{
	struct dp_event e;

	memset(&e, 0, sizeof(e));
	e.type = type;
	e.pid = (uint32_t)pid;
	e.ppid = (uint32_t)ppid;
	e.uid = 1000;
	e.card = -1;
	e.fd = -1;
	e.start_ns = start_s * 1000000000ULL;
	snprintf(e.comm, sizeof(e.comm), "task%d", pid);
	return e;
}

static struct procmodel *test_model(struct recorder *r)
{
	struct card_patterns p;
	struct procmodel *m;

	memset(r, 0, sizeof(*r));
	CHECK_INT(cards_parse_patterns(&p, "/nonexistent-dynprof/davinci*"), 0);
	m = procmodel_new(&p);
	cards_free_patterns(&p);
	if (m)
		procmodel_set_listener(m, record, r);
	return m;
}

static void model_fork_chain_gives_ancestry(void)
{
	struct recorder r;
	struct procmodel *m = test_model(&r);
	struct dp_event e;

	CHECK(m != NULL);
	if (!m)
		return;
	e = ev(DP_EVENT_FORK, NOPID + 1, 1, 100);
	procmodel_apply(m, &e);
	e = ev(DP_EVENT_FORK, NOPID + 2, NOPID + 1, 101);
	procmodel_apply(m, &e);
	e = ev(DP_EVENT_FORK, NOPID + 3, NOPID + 2, 102);
	procmodel_apply(m, &e);
	CHECK(procmodel_descends_from(m, NOPID + 3, NOPID + 1));
	CHECK(procmodel_descends_from(m, NOPID + 3, NOPID + 3));
	CHECK(!procmodel_descends_from(m, NOPID + 1, NOPID + 3));
	CHECK_INT(procmodel_get(m, NOPID + 3)->start_time, 10200);
	CHECK_INT(procmodel_get(m, NOPID + 3)->ppid, NOPID + 2);
	CHECK(!procmodel_get(m, NOPID + 3)->complete);
	/* The middle one exits: the chain stops there. */
	e = ev(DP_EVENT_EXIT, NOPID + 2, NOPID + 1, 101);
	procmodel_apply(m, &e);
	CHECK(procmodel_get(m, NOPID + 2) == NULL);
	CHECK(!procmodel_descends_from(m, NOPID + 3, NOPID + 1));
	CHECK_STR(r.log, "exec:5000001:0 exec:5000002:0 exec:5000003:0 exit:5000002:0");
	procmodel_free(m);
}

static void model_reused_pid_is_a_new_process(void)
{
	struct recorder r;
	struct procmodel *m = test_model(&r);
	struct dp_event e;

	if (!m)
		return;
	e = ev(DP_EVENT_FORK, NOPID + 1, 1, 100);
	procmodel_apply(m, &e);
	e = ev(DP_EVENT_FORK, NOPID + 2, NOPID + 1, 200);
	procmodel_apply(m, &e);
	/* An EXIT for another process on that pid changes nothing. */
	e = ev(DP_EVENT_EXIT, NOPID + 2, 1, 150);
	procmodel_apply(m, &e);
	CHECK(procmodel_get(m, NOPID + 2) != NULL);
	/* A FORK on the pid with another start: the old one is gone (its EXIT was lost). */
	e = ev(DP_EVENT_FORK, NOPID + 2, 1, 300);
	procmodel_apply(m, &e);
	CHECK_INT(procmodel_get(m, NOPID + 2)->start_time, 30000);
	CHECK_STR(r.log, "exec:5000001:0 exec:5000002:0 exit:5000002:0 exec:5000002:0");
	/* A "parent" younger than its child is a reused pid, not an ancestor. */
	e = ev(DP_EVENT_FORK, NOPID + 3, NOPID + 1, 400);
	procmodel_apply(m, &e);
	e = ev(DP_EVENT_EXIT, NOPID + 1, 1, 100);
	procmodel_apply(m, &e);
	e = ev(DP_EVENT_FORK, NOPID + 1, 1, 500);
	procmodel_apply(m, &e);
	CHECK(!procmodel_descends_from(m, NOPID + 3, NOPID + 1));
	CHECK_INT(procmodel_count(m), 3);
	procmodel_free(m);
}

static void model_exec_takes_argv_from_the_event(void)
{
	static const char args[] = "python3\0train.py\0--npu\0";
	struct recorder r;
	struct procmodel *m = test_model(&r);
	struct dp_event e;

	if (!m)
		return;
	e = ev(DP_EVENT_EXEC, NOPID + 5, 1, 100);
	snprintf(e.path, sizeof(e.path), "/usr/bin/python3");
	memcpy(e.args, args, sizeof(args));
	e.args_len = sizeof(args) - 1;
	procmodel_apply(m, &e);
	CHECK_STR(procmodel_get(m, NOPID + 5)->cmdline, "python3 train.py --npu");
	CHECK_STR(procmodel_get(m, NOPID + 5)->exe, "/usr/bin/python3");
	CHECK_STR(procmodel_get(m, NOPID + 5)->comm, "task5000005");
	CHECK_INT(procmodel_get(m, NOPID + 5)->uid, 1000);
	CHECK_STR(procmodel_get(m, NOPID + 5)->socket, "");
	procmodel_free(m);
}

static void model_card_open_sets_the_card_and_forks_inherit_it(void)
{
	struct recorder r;
	struct procmodel *m = test_model(&r);
	struct dp_event e;

	if (!m)
		return;
	e = ev(DP_EVENT_FORK, NOPID + 1, 1, 100);
	procmodel_apply(m, &e);
	e = ev(DP_EVENT_CARD_OPEN, NOPID + 1, 1, 100);
	e.card = 3;
	procmodel_apply(m, &e);
	/* No index from the kernel: the path's number. */
	e = ev(DP_EVENT_CARD_OPEN, NOPID + 1, 1, 100);
	snprintf(e.path, sizeof(e.path), "/nonexistent-dynprof/davinci5");
	procmodel_apply(m, &e);
	CHECK_INT(procmodel_get(m, NOPID + 1)->cards, (1 << 3) | (1 << 5));
	/* A child inherits every fd, cards included. */
	e = ev(DP_EVENT_FORK, NOPID + 2, NOPID + 1, 101);
	procmodel_apply(m, &e);
	CHECK_INT(procmodel_get(m, NOPID + 2)->cards, (1 << 3) | (1 << 5));
	/* A card open by a process never seen: it appears holding it. */
	e = ev(DP_EVENT_CARD_OPEN, NOPID + 9, 1, 100);
	e.card = 0;
	procmodel_apply(m, &e);
	CHECK_INT(procmodel_get(m, NOPID + 9)->cards, 1);
	CHECK_STR(r.log, "exec:5000001:0 open:5000001:8 open:5000001:28 exec:5000002:28 open:5000002:28 "
			 "exec:5000009:1 open:5000009:1");
	procmodel_free(m);
}

int main(void)
{
	RUN(container_docker_cgroupfs_v1);
	RUN(container_docker_systemd_v2);
	RUN(container_docker_cgroupfs_v2);
	RUN(container_containerd_scope);
	RUN(container_crio_scope_and_cgroupfs);
	RUN(container_podman_root_and_rootless);
	RUN(container_conmon_is_not_the_container);
	RUN(container_kubepods_cgroupfs_v1);
	RUN(container_kubepods_systemd_slices);
	RUN(container_deepest_id_wins);
	RUN(container_first_hierarchy_with_an_id);
	RUN(container_host_processes);
	RUN(container_near_misses);
	RUN(container_id_cut_to_buffer);
	RUN(netunix_listening_row);
	RUN(netunix_accepted_row_has_the_listener_path);
	RUN(netunix_unbound_row_has_no_path);
	RUN(netunix_paths_with_blanks_and_abstract_names);
	RUN(netunix_queued_client_is_connecting);
	RUN(netunix_rejects_header_and_junk);
	RUN(netunix_row_needs_no_nul);
	RUN(netunix_find_collects_inodes_of_one_path);
	RUN(fdscan_socket_inodes);
	RUN(status_chain_and_ppid);
	RUN(status_without_nspid_uses_pid);
	RUN(status_deep_chain_keeps_host_and_innermost);
	RUN(stat_comm_with_parentheses);
	RUN(argv_joined_by_spaces);
	RUN(argv_cut_and_made_printable);
	RUN(start_ns_to_clock_ticks);
	RUN(start_ticks_match_proc);
	RUN(pidtab_survives_churn);
	RUN(model_fork_chain_gives_ancestry);
	RUN(model_reused_pid_is_a_new_process);
	RUN(model_exec_takes_argv_from_the_event);
	RUN(model_card_open_sets_the_card_and_forks_inherit_it);
	UNIT_EXIT();
}
