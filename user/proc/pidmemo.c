// SPDX-License-Identifier: MIT
/* Answers about a live process, read beside the loop (see pidmemo.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/thread.h"
#include "proc/pidmemo.h"
#include "proc/procfs.h"

/* One answer; a pid's answers in a list (a few questions each). */
struct entry {
	struct entry *next;
	unsigned long long start;
	unsigned tag;
	int err;
	size_t len;
	unsigned char val[];
};

static struct entry **find(struct pidmemo *m, const struct pidmemo_key *k, struct entry **head)
{
	struct entry **e;

	*head = pidtab_get(&m->tab, k->pid);
	for (e = head; *e; e = &(*e)->next)
		if ((*e)->start == k->start && (*e)->tag == k->tag)
			return e;
	return NULL;
}

bool pidmemo_get(struct pidmemo *m, const struct pidmemo_key *k, bool pending_ok, int *err,
		 void *val, size_t len)
{
	struct entry *head, **e;
	bool hit;

	pthread_mutex_lock(&m->lock);
	e = find(m, k, &head);
	hit = e && (pending_ok || (*e)->err != -EINPROGRESS);
	if (hit) {
		*err = (*e)->err;
		memcpy(val, (*e)->val, len < (*e)->len ? len : (*e)->len);
	}
	pthread_mutex_unlock(&m->lock);
	return hit;
}

static void free_list(struct entry *e)
{
	while (e) {
		struct entry *next = e->next;

		free(e);
		e = next;
	}
}

/* Let go of the answers about processes that are gone (all of them when none is). */
static void sweep(struct pidmemo *m)
{
	int *gone = malloc(m->tab.count * sizeof(*gone));
	size_t n = 0;

	for (size_t i = 0; gone && i < pidtab_cap(&m->tab); i++) {
		const struct pidtab_slot *sl = pidtab_slot(&m->tab, i);
		const struct entry *e = sl->val;
		unsigned long long start;

		if (sl->pid && (procfs_start_time(sl->pid, &start) || start != e->start))
			gone[n++] = sl->pid;
	}
	if (!gone || n == 0) {
		for (size_t i = 0; i < pidtab_cap(&m->tab); i++)
			free_list(pidtab_slot(&m->tab, i)->val);
		pidtab_free(&m->tab);
		pidtab_init(&m->tab);
	}
	for (size_t i = 0; i < n; i++)
		free_list(pidtab_del(&m->tab, gone[i]));
	free(gone);
}

/* Under the lock: k's entry replaced by e (NULL: removed). An older start's entries go too. */
static void replace(struct pidmemo *m, const struct pidmemo_key *k, struct entry *e)
{
	struct entry *head = pidtab_del(&m->tab, k->pid), *keep = e, **tail = e ? &e->next : &keep;

	while (head) {
		struct entry *next = head->next;

		if (head->start != k->start || head->tag == k->tag) {
			free(head);
		} else {
			head->next = NULL;
			*tail = head;
			tail = &head->next;
		}
		head = next;
	}
	if (keep && pidtab_put(&m->tab, k->pid, keep))
		free_list(keep);
}

void pidmemo_put(struct pidmemo *m, const struct pidmemo_key *k, int err, const void *val, size_t len)
{
	struct entry *e = malloc(sizeof(*e) + len);

	if (!e)
		return;
	*e = (struct entry){ .start = k->start, .tag = k->tag, .err = err, .len = len };
	memcpy(e->val, val, len);
	pthread_mutex_lock(&m->lock);
	if (m->tab.count >= PIDMEMO_MAX)
		sweep(m);
	replace(m, k, e);
	pthread_mutex_unlock(&m->lock);
}

/* k's mark goes, if it is still the mark: its read had no answer to keep. */
static void unmark(struct pidmemo *m, const struct pidmemo_key *k)
{
	struct entry *head, **e;

	pthread_mutex_lock(&m->lock);
	e = find(m, k, &head);
	if (e && (*e)->err == -EINPROGRESS)
		replace(m, k, NULL);
	pthread_mutex_unlock(&m->lock);
}

/* A thread taken (+1; false when PIDMEMO_THREADS run) or ended (-1). */
static bool threads_add(struct pidmemo *m, int d)
{
	bool ok;

	pthread_mutex_lock(&m->lock);
	ok = d < 0 || m->threads < PIDMEMO_THREADS;
	if (ok)
		m->threads += d;
	pthread_mutex_unlock(&m->lock);
	return ok;
}

struct beside {
	struct pidmemo *m;
	struct pidmemo_key k;
	void (*read)(void *arg);
	void *arg;
};

static void *beside_main(void *p)
{
	struct beside *b = p;

	b->read(b->arg);
	unmark(b->m, &b->k);
	threads_add(b->m, -1);
	free(b->arg);
	free(b);
	return NULL;
}

int pidmemo_beside(struct pidmemo *m, const struct pidmemo_key *k, void (*read)(void *arg), void *arg)
{
	struct beside *b = malloc(sizeof(*b));
	pthread_attr_t a;
	pthread_t th;
	int rc;

	if (!b || !threads_add(m, 1)) {
		free(b);
		free(arg);
		return -EINPROGRESS;
	}
	*b = (struct beside){ .m = m, .k = *k, .read = read, .arg = arg };
	pidmemo_put(m, k, -EINPROGRESS, "", 0);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	rc = thread_start(&th, &a, beside_main, b);
	pthread_attr_destroy(&a);
	if (rc) {
		unmark(m, k);
		threads_add(m, -1);
		free(arg);
		free(b);
	}
	return -EINPROGRESS;
}
