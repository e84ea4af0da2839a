// SPDX-License-Identifier: MIT
/* info.json from uname and /proc (see hostinfo.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "shared/hostinfo.h"
#include "shared/procnet.h"

#define MAX_PACKAGES 64

/* One physical CPU package, as CANN's CPU[] entries describe them. */
struct cpu_pkg {
	int id;
	int logical;
	char name[128];
	char mhz[32];
	char vendor[64];
};

struct cpu_scan {
	int count;
	struct cpu_pkg pkg[MAX_PACKAGES];
	/* the logical CPU being read */
	int in_cpu, phys;
	char name[128], mhz[32], vendor[64];
};

/* "key\t: value" -> value with the newline dropped, when the key matches. */
static const char *field(const char *line, const char *key)
{
	size_t n = strlen(key);
	const char *colon;

	if (strncmp(line, key, n) || (line[n] != ' ' && line[n] != '\t' && line[n] != ':'))
		return NULL;
	colon = strchr(line + n, ':');
	if (!colon)
		return NULL;
	colon++;
	while (*colon == ' ' || *colon == '\t')
		colon++;
	return colon;
}

static void copy_value(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%.*s", (int)strcspn(src, "\n"), src);
}

static struct cpu_pkg *package(struct cpu_scan *s, int id)
{
	for (int i = 0; i < s->count; i++)
		if (s->pkg[i].id == id)
			return &s->pkg[i];
	if (s->count == MAX_PACKAGES)
		return NULL;
	memset(&s->pkg[s->count], 0, sizeof(s->pkg[0]));
	s->pkg[s->count].id = id;
	return &s->pkg[s->count++];
}

/* The logical CPU just read joins its package. */
static void commit_cpu(struct cpu_scan *s)
{
	struct cpu_pkg *p;

	if (!s->in_cpu)
		return;
	s->in_cpu = 0;
	p = package(s, s->phys);
	if (!p)
		return;
	p->logical++;
	if (!p->name[0])
		snprintf(p->name, sizeof(p->name), "%s", s->name);
	if (!p->mhz[0])
		snprintf(p->mhz, sizeof(p->mhz), "%s", s->mhz);
	if (!p->vendor[0])
		snprintf(p->vendor, sizeof(p->vendor), "%s", s->vendor);
}

static void scan_line(struct cpu_scan *s, const char *line)
{
	const char *v;

	if ((v = field(line, "processor"))) {
		commit_cpu(s);
		s->in_cpu = 1;
		s->phys = 0;
		s->name[0] = s->mhz[0] = s->vendor[0] = '\0';
	} else if ((v = field(line, "model name"))) {
		copy_value(s->name, sizeof(s->name), v);
	} else if ((v = field(line, "cpu MHz"))) {
		copy_value(s->mhz, sizeof(s->mhz), v);
	} else if ((v = field(line, "vendor_id")) || (v = field(line, "CPU implementer"))) {
		copy_value(s->vendor, sizeof(s->vendor), v);
	} else if ((v = field(line, "physical id"))) {
		s->phys = atoi(v);
	}
}

static void scan_cpuinfo(struct cpu_scan *s)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "re");

	memset(s, 0, sizeof(*s));
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		scan_line(s, line);
	commit_cpu(s);
	fclose(f);
}

static cJSON *cpu_array(void)
{
	struct cpu_scan *s = malloc(sizeof(*s));
	cJSON *arr = cJSON_CreateArray();

	if (!s || !arr) {
		free(s);
		cJSON_Delete(arr);
		return NULL;
	}
	scan_cpuinfo(s);
	for (int i = 0; i < s->count; i++) {
		cJSON *o = cJSON_CreateObject();

		if (!o)
			break;
		cJSON_AddItemToArray(arr, o);
		cJSON_AddNumberToObject(o, "Id", s->pkg[i].id);
		cJSON_AddStringToObject(o, "Name", s->pkg[i].name);
		cJSON_AddStringToObject(o, "Frequency", s->pkg[i].mhz);
		cJSON_AddNumberToObject(o, "Logical_CPU_Count", s->pkg[i].logical);
		cJSON_AddStringToObject(o, "Type", s->pkg[i].vendor);
	}
	free(s);
	return arr;
}

/* MemTotal in kB, or 0 when /proc/meminfo does not say. */
static long long mem_total_kb(void)
{
	char line[256];
	long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void add_machine(cJSON *root, long pid_of)
{
	char host[256] = "", os[3 * sizeof(((struct utsname *)0)->release)] = "", pid[16];
	struct utsname u;

	gethostname(host, sizeof(host) - 1);
	if (uname(&u) == 0)
		snprintf(os, sizeof(os), "%s-%s-%s", u.sysname, u.release, u.machine);
	snprintf(pid, sizeof(pid), "%ld", pid_of);
	cJSON_AddStringToObject(root, "pid", pid);
	cJSON_AddStringToObject(root, "hostname", host);
	cJSON_AddStringToObject(root, "OS", os);
	cJSON_AddNumberToObject(root, "cpuNums", (double)sysconf(_SC_NPROCESSORS_CONF));
	cJSON_AddNumberToObject(root, "memoryTotal", (double)mem_total_kb());
	/* msprof's cpu lane turns jiffies into time with it; an integer, or the lane is empty. */
	cJSON_AddNumberToObject(root, "sysClockFreq", (double)sysconf(_SC_CLK_TCK));
}

/*
 * An interface's speed in Mb/s from sysfs; a virtual one (lo, veth, a
 * bridge) has none, and msprof drops an interface whose speed is -1 from
 * its Network lane: it is given HOSTINFO_NET_SPEED_NONE instead, so its
 * traffic is drawn (as a share of that speed).
 */
static int net_speed(const char *name)
{
	char path[64], text[32];
	FILE *f;
	int mbps = -1;

	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", name);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(text, sizeof(text), f) || sscanf(text, "%d", &mbps) != 1)
			mbps = -1;
		fclose(f);
	}
	return mbps > 0 ? mbps : HOSTINFO_NET_SPEED_NONE;
}

/*
 * netCard: the interfaces of the described process's network namespace
 * (`net_dev`: its /proc/<pid>/net/dev, the lines the network samples
 * read), each with its speed. An unreadable list gives an empty one:
 * msprof needs the key.
 */
static cJSON *net_cards(const char *net_dev)
{
	cJSON *cards = cJSON_CreateArray();
	char line[512];
	FILE *f = fopen(net_dev, "re");

	while (cards && f && fgets(line, sizeof(line), f)) {
		struct hostproc_netdev d;
		cJSON *c;

		/* The kernel forbids '/' in a name; a name that holds one is not looked up. */
		if (hostproc_parse_netdev(line, strcspn(line, "\n"), &d) || strchr(d.name, '/') ||
		    !(c = cJSON_CreateObject()))
			continue;
		cJSON_AddStringToObject(c, "netCardName", d.name);
		cJSON_AddNumberToObject(c, "speed", net_speed(d.name));
		cJSON_AddItemToArray(cards, c);
	}
	if (f)
		fclose(f);
	return cards;
}

/* Takes `item` into `root`; 0, or -1 when either is missing (out of memory). */
static int attach(cJSON *root, const char *key, cJSON *item)
{
	if (item && cJSON_AddItemToObject(root, key, item))
		return 0;
	cJSON_Delete(item);
	return -1;
}

char *hostinfo_json(int chip, long pid, const char *net_dev)
{
	cJSON *root = cJSON_CreateObject();
	char chip_text[16];
	char *text = NULL;

	if (!root)
		return NULL;
	snprintf(chip_text, sizeof(chip_text), "%d", chip);
	add_machine(root, pid);
	/*
	 * The folder holds host data only: msprof takes an empty DeviceInfo for
	 * a host collection and device 64 for the host; any id there makes it
	 * look for device data that is not in the folder.
	 */
	if (cJSON_AddStringToObject(root, "devices", HOSTINFO_HOST_DEVICE) &&
	    cJSON_AddStringToObject(root, "platform_version", chip_text) &&
	    cJSON_AddStringToObject(root, "cannVersion", HOSTINFO_NO_CANN) &&
	    /* compared with a number by msprof: a string makes it fail */
	    cJSON_AddNumberToObject(root, "drvVersion", 0) &&
	    !attach(root, "DeviceInfo", cJSON_CreateArray()) && !attach(root, "CPU", cpu_array()) &&
	    /* msprof's network lane draws only the interfaces named here (it needs the key). */
	    !attach(root, "netCard", net_cards(net_dev)))
		text = cJSON_PrintUnformatted(root); /* msprof reads the first line only */
	cJSON_Delete(root);
	return text;
}
