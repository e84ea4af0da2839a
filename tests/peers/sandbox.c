// SPDX-License-Identifier: MIT
/*
 * sandbox: runs a command under the seccomp filters a systemd unit's
 * settings put on its service, so that service.sh can run dynprof with
 * tools/dynprof.service's settings where no systemd manager runs (the
 * mount-namespace settings the test sets up itself):
 *
 *   sandbox [OPTION...] -- COMMAND ARG...
 *
 *   --allow=NR,NR,...   SystemCallFilter=: only these syscalls (numbers)
 *   --errno=N           SystemCallErrorNumber=: a refused syscall fails
 *                       with N (else the process is killed, systemd's default)
 *   --native            SystemCallArchitectures=native: another ABI kills
 *   --families=F,F,...  RestrictAddressFamilies=: socket() of another
 *                       family fails with EAFNOSUPPORT
 *   --namespaces=MASK   RestrictNamespaces=: the CLONE_NEW* flags allowed
 *                       (hex); setns/unshare/clone asking for others, or
 *                       setns with no type, fail with EPERM; clone3 ENOSYS
 *   --no-wx             MemoryDenyWriteExecute=yes
 *   --no-suid           RestrictSUIDSGID=yes
 *   --no-hostname       ProtectHostname=yes (its syscall part)
 *
 * The checks run in that order of strictness systemd stacks them in: any
 * one refusing refuses. no_new_privs is set first, as for any filter.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PROG_MAX 4096
#define LIST_MAX 1024
#define X32_BIT 0x40000000u
#define NS_ALL                                                                                     \
	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | \
	 CLONE_NEWCGROUP)

static struct sock_filter prog[PROG_MAX];
static unsigned short len;

static void emit(unsigned short code, unsigned char jt, unsigned char jf, unsigned k)
{
	if (len == PROG_MAX) {
		fprintf(stderr, "sandbox: filter too long\n");
		exit(125);
	}
	prog[len++] = (struct sock_filter)BPF_JUMP(code, k, jt, jf);
}

static void load_nr(void)
{
	emit(BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, nr));
}

static void load_arg(int i)
{
	emit(BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, args[i])); /* low half */
}

static void ret(unsigned action)
{
	emit(BPF_RET | BPF_K, 0, 0, action);
}

/* A later jump's place, patched by land() once its target is known. */
static unsigned short here(void)
{
	return len;
}

static void land_jf(unsigned short at)
{
	prog[at].jf = (unsigned char)(len - at - 1);
}

static void land_jt(unsigned short at)
{
	prog[at].jt = (unsigned char)(len - at - 1);
}

static int parse_list(const char *s, unsigned *out, int max)
{
	int n = 0;

	for (char *end; s && *s && n < max; s = *end ? end + 1 : end)
		out[n++] = (unsigned)strtoul(s, &end, 0);
	return n;
}

/* For syscall `nr`: when (arg `a` & mask) != 0, fail with errno `e`. */
static void deny_bits(unsigned nr, int a, unsigned mask, int e)
{
	unsigned short skip;

	load_nr();
	skip = here();
	emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, nr);
	load_arg(a);
	emit(BPF_JMP | BPF_JSET | BPF_K, 0, 1, mask);
	ret(SECCOMP_RET_ERRNO | (unsigned)e);
	land_jf(skip);
}

/* open/openat: the mode only counts with O_CREAT (or O_TMPFILE). */
static void deny_create_mode(unsigned nr, int flags_arg, int mode_arg, unsigned mask)
{
	unsigned short skip, nocreate;

	load_nr();
	skip = here();
	emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, nr);
	load_arg(flags_arg);
	nocreate = here();
	emit(BPF_JMP | BPF_JSET | BPF_K, 0, 0, O_CREAT | __O_TMPFILE);
	load_arg(mode_arg);
	emit(BPF_JMP | BPF_JSET | BPF_K, 0, 1, mask);
	ret(SECCOMP_RET_ERRNO | EPERM);
	land_jf(skip);
	land_jf(nocreate);
}

static void native_only(void)
{
	unsigned short ok;

	emit(BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, arch));
	ok = here();
	emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, AUDIT_ARCH_X86_64);
	ret(SECCOMP_RET_KILL_PROCESS);
	land_jt(ok);
	load_nr();
	emit(BPF_JMP | BPF_JSET | BPF_K, 0, 1, X32_BIT);
	ret(SECCOMP_RET_KILL_PROCESS);
}

static void families(const unsigned *f, int n)
{
	unsigned short skip, oks[64];

	load_nr();
	skip = here();
	emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, __NR_socket);
	load_arg(0);
	for (int i = 0; i < n && i < 64; i++) {
		oks[i] = here();
		emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, f[i]);
	}
	ret(SECCOMP_RET_ERRNO | EAFNOSUPPORT);
	land_jf(skip);
	for (int i = 0; i < n && i < 64; i++)
		land_jt(oks[i]);
}

/* Syscall `nr` fails with errno `e`, whatever its arguments. */
static void deny_nr(unsigned nr, int e)
{
	load_nr();
	emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, nr);
	ret(SECCOMP_RET_ERRNO | (unsigned)e);
}

static void namespaces(unsigned allowed)
{
	unsigned denied = NS_ALL & ~allowed;
	unsigned short skip;

	if (!denied)
		return;
	/* setns(fd, 0) joins whatever fd is: refused unless every kind is allowed. */
	load_nr();
	skip = here();
	emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, __NR_setns);
	load_arg(1);
	emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
	ret(SECCOMP_RET_ERRNO | EPERM);
	emit(BPF_JMP | BPF_JSET | BPF_K, 0, 1, denied);
	ret(SECCOMP_RET_ERRNO | EPERM);
	land_jf(skip);
	deny_bits(__NR_unshare, 0, denied, EPERM);
	deny_bits(__NR_clone, 0, denied, EPERM);
	/* clone3's flags are in memory a filter cannot read: glibc falls back to clone. */
	deny_nr(__NR_clone3, ENOSYS);
}

static void no_wx(void)
{
	unsigned short skip, notboth;

	/* mmap with both PROT_WRITE and PROT_EXEC. */
	load_nr();
	skip = here();
	emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, __NR_mmap);
	load_arg(2);
	emit(BPF_ALU | BPF_AND | BPF_K, 0, 0, PROT_WRITE | PROT_EXEC);
	notboth = here();
	emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, PROT_WRITE | PROT_EXEC);
	ret(SECCOMP_RET_ERRNO | EPERM);
	land_jf(skip);
	land_jf(notboth);
	deny_bits(__NR_mprotect, 2, PROT_EXEC, EPERM);
	deny_bits(__NR_pkey_mprotect, 2, PROT_EXEC, EPERM);
	deny_bits(__NR_shmat, 2, SHM_EXEC, EPERM);
}

static void no_suid(void)
{
	unsigned m = S_ISUID | S_ISGID;

	deny_bits(__NR_chmod, 1, m, EPERM);
	deny_bits(__NR_fchmod, 1, m, EPERM);
	deny_bits(__NR_fchmodat, 2, m, EPERM);
#ifdef __NR_fchmodat2
	deny_bits(__NR_fchmodat2, 2, m, EPERM);
#endif
	deny_bits(__NR_mkdir, 1, m, EPERM);
	deny_bits(__NR_mkdirat, 2, m, EPERM);
	deny_bits(__NR_mknod, 1, m, EPERM);
	deny_bits(__NR_mknodat, 2, m, EPERM);
	deny_bits(__NR_creat, 1, m, EPERM);
	deny_create_mode(__NR_open, 1, 2, m);
	deny_create_mode(__NR_openat, 2, 3, m);
}

static void no_hostname(void)
{
	deny_nr(__NR_sethostname, EPERM);
	deny_nr(__NR_setdomainname, EPERM);
}

static void allow_list(const unsigned *nr, int n, int err)
{
	load_nr();
	for (int i = 0; i < n; i++) {
		emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, nr[i]);
		ret(SECCOMP_RET_ALLOW);
	}
	ret(err > 0 ? SECCOMP_RET_ERRNO | (unsigned)err : SECCOMP_RET_KILL_PROCESS);
}

int main(int argc, char **argv)
{
	static unsigned allow[LIST_MAX], fam[64];
	int nallow = -1, nfam = -1, err = 0, i;
	long ns = -1;
	int native = 0, wx = 0, suid = 0, host = 0;
	struct sock_fprog fprog;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i];

		if (!strncmp(a, "--allow=", 8))
			nallow = parse_list(a + 8, allow, LIST_MAX);
		else if (!strncmp(a, "--errno=", 8))
			err = atoi(a + 8);
		else if (!strncmp(a, "--families=", 11))
			nfam = parse_list(a + 11, fam, 64);
		else if (!strncmp(a, "--namespaces=", 13))
			ns = strtol(a + 13, NULL, 16);
		else if (!strcmp(a, "--native"))
			native = 1;
		else if (!strcmp(a, "--no-wx"))
			wx = 1;
		else if (!strcmp(a, "--no-suid"))
			suid = 1;
		else if (!strcmp(a, "--no-hostname"))
			host = 1;
		else {
			fprintf(stderr, "sandbox: unknown option %s\n", a);
			return 125;
		}
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "usage: sandbox [OPTION...] -- COMMAND ARG...\n");
		return 125;
	}
	if (native)
		native_only();
	if (nfam >= 0)
		families(fam, nfam);
	if (ns >= 0)
		namespaces((unsigned)ns);
	if (wx)
		no_wx();
	if (suid)
		no_suid();
	if (host)
		no_hostname();
	if (nallow >= 0)
		allow_list(allow, nallow, err);
	else
		ret(SECCOMP_RET_ALLOW);
	fprog.len = len;
	fprog.filter = prog;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog)) {
		perror("sandbox: seccomp");
		return 125;
	}
	execvp(argv[i + 1], argv + i + 1);
	perror("sandbox: exec");
	return 127;
}
