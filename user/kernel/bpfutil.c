// SPDX-License-Identifier: MIT
/*
 * Shared by the BPF loaders (bpfutil.h): the checks made before any load,
 * and the capture of libbpf's messages.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "kernel/bpfutil.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define KERNEL_BTF "/sys/kernel/btf/vmlinux"
/* Inode of the initial pid namespace, fixed by the kernel (proc_ns.h). */
#define PROC_PID_INIT_INO 0xEFFFFFFCU

/* ---- libbpf messages ---------------------------------------------------- */

/*
 * libbpf warns on stderr by default; the tool speaks only through its own
 * lines. A failed step quotes the first warning since the step began:
 * libbpf says the cause first ("prog 'dp_exit': BPF program load failed:
 * ...", "Error in bpf_object__probe_loading():...") and its consequences
 * after ("failed to load BPF skeleton"). Skipped: verifier logs (multi-line;
 * the line after one names the failure) and the RLIMIT_MEMLOCK remark
 * libbpf makes on its way to any bpf(2) failure. The last line is kept for
 * when nothing else is.
 */
static char libbpf_first[160], libbpf_last[160];
static int quiet_holders;
static libbpf_print_fn_t quiet_prev;

static void keep_line(char *dst, size_t size, const char *s, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(dst, s, len);
	dst[len] = '\0';
}

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[512];
	const char *s = buf, *stop;
	size_t len;

	if (level != LIBBPF_WARN)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (strstr(buf, "BEGIN PROG LOAD LOG"))
		return 0;
	if (strncmp(s, "libbpf: ", 8) == 0)
		s += 8;
	len = strcspn(s, "\n");
	if (len == 0)
		return 0;
	keep_line(libbpf_last, sizeof(libbpf_last), s, len);
	if (libbpf_first[0] || strncmp(s, "Failed to bump RLIMIT_MEMLOCK", 29) == 0)
		return 0;
	stop = strstr(s, ". "); /* first sentence only */
	if (stop && (size_t)(stop - s) < len)
		len = (size_t)(stop - s);
	keep_line(libbpf_first, sizeof(libbpf_first), s, len);
	return 0;
}

void bpfutil_quiet_hold(void)
{
	if (quiet_holders++ == 0)
		quiet_prev = libbpf_set_print(quiet_print);
}

void bpfutil_quiet_release(void)
{
	if (quiet_holders > 0 && --quiet_holders == 0)
		libbpf_set_print(quiet_prev);
}

void bpfutil_quiet_reset(void)
{
	libbpf_first[0] = libbpf_last[0] = '\0';
}

void bpfutil_failure(char *why, size_t why_len, const char *step, int err)
{
	const char *msg = libbpf_first[0] ? libbpf_first : libbpf_last;

	if (err >= 0)
		err = -EINVAL;
	if (msg[0])
		snprintf(why, why_len, "%s: %s; libbpf: %s", step, strerror(-err), msg);
	else
		snprintf(why, why_len, "%s: %s", step, strerror(-err));
}

/* ---- can BPF be used here? ------------------------------------------------ */

/* Can this process load and attach tracing programs at all? */
static const char *privilege_problem(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
	bool admin, bpf, perfmon;

	if (syscall(SYS_capget, &hdr, caps) != 0)
		return NULL; /* cannot tell: let the loader find out */
#define HAS_CAP(c) (caps[(c) / 32].effective & (1u << ((c) % 32)))
	admin = HAS_CAP(CAP_SYS_ADMIN);
	bpf = HAS_CAP(CAP_BPF);
	perfmon = HAS_CAP(CAP_PERFMON);
#undef HAS_CAP
	if (admin || (bpf && perfmon))
		return NULL;
	if (geteuid() != 0)
		return "not root";
	return "root without CAP_SYS_ADMIN, or CAP_BPF and CAP_PERFMON";
}

/*
 * The BPF programs see host pids; pids given to the tool and in /proc are
 * in our namespace. They agree only in the initial pid namespace. NULL
 * when we are there, else why BPF cannot be used.
 */
static const char *pidns_problem(void)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) == 0)
		return st.st_ino == PROC_PID_INIT_INO ? NULL : "not in the initial pid namespace";
	if (access("/proc/self/stat", R_OK) == 0)
		return NULL; /* a kernel without pid namespaces */
	return "/proc is not mounted";
}

int bpfutil_usable(char *why, size_t why_len)
{
	const char *problem = privilege_problem();

	if (problem) {
		snprintf(why, why_len, "%s", problem);
		return -EPERM;
	}
	if (access(KERNEL_BTF, R_OK) != 0) {
		snprintf(why, why_len, "no kernel BTF at %s", KERNEL_BTF);
		return -ENOENT;
	}
	problem = pidns_problem();
	if (problem) {
		snprintf(why, why_len, "%s", problem);
		return -EPERM;
	}
	return 0;
}

int bpfutil_tgid_watch(struct bpf_map *m, uint32_t tgid, const void *init, size_t size, char *why,
		       size_t why_len)
{
	int err = bpf_map__update_elem(m, &tgid, sizeof(tgid), init, size, BPF_ANY);

	if (err)
		snprintf(why, why_len, "adding pid %u to the BPF map: %s", tgid, strerror(-err));
	return err;
}

int bpfutil_tgid_value(const struct bpf_map *m, uint32_t tgid, void *value, size_t size)
{
	return bpf_map__lookup_elem(m, &tgid, sizeof(tgid), value, size, 0);
}

int bpfutil_load_begin(char *why, size_t why_len)
{
	int err = bpfutil_usable(why, why_len);

	if (!err) {
		bpfutil_quiet_hold();
		bpfutil_quiet_reset();
	}
	return err;
}

void bpfutil_load_end(char *why, size_t why_len, const char *step, int err)
{
	if (err)
		bpfutil_failure(why, why_len, step, err < 0 ? err : -EINVAL);
	bpfutil_quiet_release();
}
