// SPDX-License-Identifier: MIT
/* --list and --list --watch (see listing.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "cli/console.h"
#include "cli/listing.h"
#include "common/hostpw.h"
#include "common/pidtab.h"
#include "report/escape.h"
#include "sock/socklocate.h"
#include "proc/procfs.h"
#include "report/report.h"
#include "model/tracker.h"
#include "model/match.h"
#include "session/target_select.h"
#include "shared/clock.h"

#define CONTAINER_SHORT 12 /* as `docker ps` shows ids */

struct table;

struct lister {
	const struct options *o;
	const struct procmodel *m;
	int rows;
	struct table *table;
};

static const char *change_name(enum pm_change what)
{
	switch (what) {
	case PM_CHANGE_EXEC:
		return "exec";
	case PM_CHANGE_CARD_OPEN:
		return "card-open";
	case PM_CHANGE_CARD_CLOSE:
		return "card-close";
	case PM_CHANGE_SOCKET:
		return "socket";
	case PM_CHANGE_EXIT:
		return "exit";
	}
	return "?";
}

/* "0,3", or "-" for none (a table cell is never empty). */
static void cards_text(uint64_t cards, char *buf, size_t len)
{
	cards_mask_text(cards, buf, len);
	if (!buf[0])
		snprintf(buf, len, "-");
}

/*
 * The socket path to show: as the process itself names it when dynprof
 * reaches the same file by that name (a process on the host), else the
 * path through /proc/<pid>/root.
 */
static struct pidtab plain_paths; /* --watch: processes shown by their plain path */
/*
 * --watch: processes shown so far (the first table or a change line). A
 * process that closed its last card before it exited still gets its exit
 * line: the close and the exit reach the model apart when the reader
 * wakes between them.
 */
static struct pidtab shown;

static void note_shown(const struct options *o, const struct pm_proc *p)
{
	if (o->watch && pidtab_put(&shown, p->pid, (void *)1)) {
		/* Out of memory: its exit line comes only while it holds a card. */
	}
}

static const char *socket_path(const struct pm_proc *p)
{
	if (procfs_same_file(p->socket_inside, p->socket)) {
		if (pidtab_put(&plain_paths, p->pid, (void *)1)) {
			/* Out of memory: its exit line may show the /proc path. */
		}
		return p->socket_inside;
	}
	/* Gone (its exit line): as its earlier lines showed it, not through /proc. */
	return pidtab_get(&plain_paths, p->pid) ? p->socket_inside : p->socket;
}

static const char *socket_text(const struct pm_proc *p)
{
	switch (p->socket_state) {
	case PM_SOCKET_LISTENING:
		return socket_path(p);
	case PM_SOCKET_BUSY:
		return "busy";
	case PM_SOCKET_NONE:
		break;
	}
	return "none";
}

static const char *socket_flavour_name(int flavour)
{
	switch (flavour) {
	case SOCK_FLAVOUR_FILE:
		return "file";
	case SOCK_FLAVOUR_FILE_ALT:
		return "file_alt";
	case SOCK_FLAVOUR_ABSTRACT:
		return "abstract";
	}
	return NULL;
}

static const char *socket_state_name(enum pm_socket_state s)
{
	return s == PM_SOCKET_LISTENING ? "listening" : s == PM_SOCKET_BUSY ? "busy" : NULL;
}

/* The user's name on this host, else the number. */
static void user_text(uid_t uid, char *buf, size_t len)
{
	if (hostpw_name(uid, buf, len))
		snprintf(buf, len, "%u", (unsigned)uid);
}

/* A target's text (command line, comm, paths), escaped (report/escape.h). */
static void add_text(cJSON *o, const char *key, const char *text)
{
	char *safe = text_escape_dup(text);

	cJSON_AddStringToObject(o, key, safe ? safe : "(out of memory)");
	free(safe);
}

/* The command column: the command line, else comm, escaped. */
static const char *command_text(const struct pm_proc *p, char *buf, size_t len)
{
	text_escape(p->cmdline[0] ? p->cmdline : p->comm, buf, len);
	return buf;
}

/* The socket column, escaped (the path holds the target's home). */
static const char *socket_shown(const struct pm_proc *p, char *buf, size_t len)
{
	text_escape(socket_text(p), buf, len);
	return buf;
}

static cJSON *proc_json(const struct pm_proc *p)
{
	cJSON *o = cJSON_CreateObject(), *chain, *cards;

	cJSON_AddNumberToObject(o, "pid", p->pid);
	cJSON_AddNumberToObject(o, "nspid", pm_proc_nspid(p));
	chain = cJSON_AddArrayToObject(o, "nspids");
	cards = cJSON_AddArrayToObject(o, "cards");
	for (int i = 0; i < p->nslevels; i++)
		cJSON_AddItemToArray(chain, cJSON_CreateNumber(p->nspid[i]));
	for (int i = 0; i <= PM_MAX_CARD_INDEX; i++)
		if (p->cards & (1ULL << i))
			cJSON_AddItemToArray(cards, cJSON_CreateNumber(i));
	if (p->socket_state != PM_SOCKET_NONE)
		add_text(o, "socket", socket_path(p));
	else
		cJSON_AddNullToObject(o, "socket");
	if (socket_state_name(p->socket_state))
		cJSON_AddStringToObject(o, "socket_state", socket_state_name(p->socket_state));
	else
		cJSON_AddNullToObject(o, "socket_state");
	if (p->socket_state != PM_SOCKET_NONE && socket_flavour_name(p->socket_flavour))
		cJSON_AddStringToObject(o, "socket_flavour", socket_flavour_name(p->socket_flavour));
	else
		cJSON_AddNullToObject(o, "socket_flavour");
	if (p->container[0])
		add_text(o, "container", p->container);
	else
		cJSON_AddNullToObject(o, "container");
	if (p->container_name[0])
		add_text(o, "container_name", p->container_name);
	else
		cJSON_AddNullToObject(o, "container_name");
	cJSON_AddNumberToObject(o, "uid", p->uid);
	cJSON_AddNumberToObject(o, "ppid", p->ppid);
	add_text(o, "comm", p->comm);
	add_text(o, "exe", p->exe);
	add_text(o, "cmdline", p->cmdline);
	return o;
}

static void print_json(cJSON *o)
{
	char *text = cJSON_PrintUnformatted(o);

	if (text) {
		printf("%s\n", text);
		free(text);
	}
	cJSON_Delete(o);
	fflush(stdout);
}

/* The container column: its name (whole), else its id as `docker ps` shows it, else "-". */
static void container_text(const struct pm_proc *p, char *buf, size_t len)
{
	char id[CONTAINER_SHORT + 1];

	if (p->container_name[0]) {
		text_escape(p->container_name, buf, len);
		return;
	}
	snprintf(id, sizeof(id), "%.*s", CONTAINER_SHORT, p->container[0] ? p->container : "-");
	text_escape(id, buf, len);
}

/*
 * The table's columns, widest cell first seen in the whole table: a long
 * container or user name, or a socket path reached through /proc, moves its
 * column instead of breaking the rows after it. Widths stop at a bound (a
 * longer cell makes only its own row longer); COMMAND, last, is never padded.
 */
enum { COL_PID, COL_NSPID, COL_CONTAINER, COL_USER, COL_CARDS, COL_SOCKET, COL_COMMAND, NCOLS };

static const char *const col_names[NCOLS] = { "HOST PID", "NS PID", "CONTAINER", "USER",
					      "CARDS",    "SOCKET", "COMMAND" };
static const int col_min[NCOLS] = { 8, 8, 12, 10, 8, 40, 0 };
static const int col_max[NCOLS] = { 8, 8, 64, 32, 24, 120, 0 };

struct table {
	char *(*rows)[NCOLS];
	int n, cap;
};

static void table_print(const char *const cells[NCOLS], const int width[NCOLS])
{
	for (int c = 0; c < COL_COMMAND; c++)
		printf("%-*s ", width[c], cells[c]);
	printf("%s\n", cells[COL_COMMAND]);
}

static void table_free_row(char *row[NCOLS])
{
	for (int c = 0; c < NCOLS; c++)
		free(row[c]);
}

/* One row's cells, kept until the table is printed: 0, or -ENOMEM (the row is left out). */
static int table_add(struct table *tb, const struct pm_proc *p)
{
	char num[2][16], cards[64], user[64], container[sizeof(p->container_name) * 4],
		cmd[4 * 1024], sock[4 * 1024];
	const char *text[NCOLS] = { num[0], num[1], container, user, cards, NULL, NULL };

	if (tb->n == tb->cap) {
		int cap = tb->cap ? tb->cap * 2 : 64;
		void *grown = realloc(tb->rows, (size_t)cap * sizeof(*tb->rows));

		if (!grown)
			return -ENOMEM;
		tb->rows = grown;
		tb->cap = cap;
	}
	snprintf(num[0], sizeof(num[0]), "%d", p->pid);
	snprintf(num[1], sizeof(num[1]), "%d", pm_proc_nspid(p));
	cards_text(p->cards, cards, sizeof(cards));
	user_text(p->uid, user, sizeof(user));
	container_text(p, container, sizeof(container));
	text[COL_SOCKET] = socket_shown(p, sock, sizeof(sock));
	text[COL_COMMAND] = command_text(p, cmd, sizeof(cmd));
	for (int c = 0; c < NCOLS; c++) {
		tb->rows[tb->n][c] = strdup(text[c]);
		if (!tb->rows[tb->n][c]) {
			table_free_row(tb->rows[tb->n]);
			return -ENOMEM;
		}
	}
	tb->n++;
	return 0;
}

static void table_flush(struct table *tb)
{
	int width[NCOLS];

	for (int c = 0; c < NCOLS; c++) {
		width[c] = col_min[c];
		for (int r = 0; r < tb->n && c != COL_COMMAND; r++) {
			int w = (int)strlen(tb->rows[r][c]);

			if (w > width[c])
				width[c] = w < col_max[c] ? w : col_max[c];
		}
	}
	table_print(col_names, width);
	for (int r = 0; r < tb->n; r++) {
		table_print((const char *const *)tb->rows[r], width);
		table_free_row(tb->rows[r]);
	}
	free(tb->rows);
	*tb = (struct table){ 0 };
}

static bool selected(const struct options *o, const struct pm_proc *p)
{
	return p->cards && match_filters(o, p);
}

static void collect_row(void *ctx, const struct pm_proc *p)
{
	struct lister *l = ctx;

	if (!selected(l->o, p))
		return;
	l->rows++;
	note_shown(l->o, p);
	if (table_add(l->table, p))
		fprintf(stderr, "dynprof: pid %d left out of the table: %s\n", p->pid, strerror(ENOMEM));
}

struct json_collect {
	const struct options *o;
	cJSON *array;
};

static void collect_json(void *ctx, const struct pm_proc *p)
{
	struct json_collect *c = ctx;

	if (!selected(c->o, p))
		return;
	note_shown(c->o, p);
	cJSON_AddItemToArray(c->array, proc_json(p));
}

/*
 * An empty table says why on stderr: nothing matched these patterns, or,
 * not root, nothing among the processes whose fds dynprof may read.
 */
static void explain_empty(const struct procmodel *m, const struct card_patterns *patterns)
{
	int unseen = target_select_unseen(m);

	fprintf(stderr, "dynprof: no process %sholds a card node matching",
		unseen ? "dynprof can see " : "");
	for (int i = 0; i < patterns->count; i++)
		fprintf(stderr, " %s", patterns->glob[i]);
	if (unseen)
		fprintf(stderr,
			" (not root: the cards of %d processes of other users cannot be seen; run it as root)",
			unseen);
	fprintf(stderr, "\n");
}

/* Card holders without a socket, under the table (stderr): why, when it is a worker pool's fork. */
static void note_nosocket(void *ctx, const struct pm_proc *p)
{
	const struct lister *l = ctx;
	char why[512];

	if (!selected(l->o, p) || p->socket_state != PM_SOCKET_NONE)
		return;
	if (target_select_nosocket_why(l->m, p, why, sizeof(why)))
		fprintf(stderr, "dynprof: pid %d holds a card but serves no socket: %s\n", p->pid, why);
}

static void list_once(const struct options *o, struct procmodel *m, const struct card_patterns *patterns)
{
	struct table tb = { 0 };
	struct lister l = { o, m, 0, &tb };

	if (o->json) {
		struct json_collect c = { o, cJSON_CreateArray() };

		procmodel_foreach(m, collect_json, &c);
		print_json(c.array);
		return;
	}
	procmodel_foreach(m, collect_row, &l);
	table_flush(&tb);
	fflush(stdout);
	if (l.rows == 0 && !o->watch)
		explain_empty(m, patterns);
	else
		procmodel_foreach(m, note_nosocket, &l);
}

/* --watch: one line per change of a card user. */
static void on_change(void *ctx, enum pm_change what, const struct pm_proc *p)
{
	const struct options *o = ctx;
	char cards[64], cmd[4 * 1024], sock[4 * 1024], container[sizeof(p->container_name) * 4];

	/* A card user's changes only; a close that took its last card counts, and the exit of one shown. */
	if (!p->cards && what != PM_CHANGE_CARD_CLOSE &&
	    !(what == PM_CHANGE_EXIT && pidtab_get(&shown, p->pid)))
		return;
	if (!match_filters(o, p))
		return;
	if (what == PM_CHANGE_EXIT)
		pidtab_del(&shown, p->pid);
	else
		note_shown(o, p);
	if (o->json) {
		cJSON *j = proc_json(p);

		cJSON_AddStringToObject(j, "event", change_name(what));
		/* When dynprof learned of the change: lets users (and the benchmark) time it. */
		cJSON_AddNumberToObject(j, "time_us", (double)clock_wall_us());
		print_json(j);
		if (what == PM_CHANGE_EXIT)
			pidtab_del(&plain_paths, p->pid);
		return;
	}
	cards_text(p->cards, cards, sizeof(cards));
	container_text(p, container, sizeof(container));
	printf("%-10s pid %d (ns %d)%s%s cards %s socket %s: %s\n", change_name(what), p->pid,
	       pm_proc_nspid(p), p->container[0] ? " container " : "", p->container[0] ? container : "",
	       cards, socket_shown(p, sock, sizeof(sock)), command_text(p, cmd, sizeof(cmd)));
	fflush(stdout);
	if (what == PM_CHANGE_EXIT)
		pidtab_del(&plain_paths, p->pid);
}

static int watch(struct tracker *t)
{
	char why[160];
	int sigfd = console_signalfd();
	if (sigfd < 0) {
		fprintf(stderr, "dynprof: cannot watch for signals: %s\n", strerror(-sigfd));
		return sigfd;
	}
	for (;;) {
		struct pollfd pfds[2] = { { .fd = sigfd, .events = POLLIN },
					  { .fd = tracker_fd(t), .events = POLLIN } };

		if (poll(pfds, 2, tracker_timeout_ms(t)) < 0 && errno != EINTR)
			break;
		if (pfds[0].revents)
			break;
		/* stderr: standard output holds only the listing (maybe JSON lines). */
		if (tracker_tick(t, why, sizeof(why)))
			fprintf(stderr, "dynprof: %s; trying again\n", why);
	}
	close(sigfd);
	return 0;
}

int listing_run(const struct options *o)
{
	struct card_patterns patterns;
	enum tracker_mode mode;
	struct tracker *t;
	const char *note = NULL;

	options_card_patterns(o, &patterns);
	mode = !o->watch ? TRACKER_SCAN_ONCE : o->no_bpf ? TRACKER_NO_BPF : TRACKER_BPF;
	t = tracker_open(&patterns, mode, on_change, (void *)o, false, &note);
	if (!t) {
		report_error("dynprof: cannot track processes: %s", strerror(errno ? errno : ENOMEM));
		return 1;
	}
	if (o->watch && note)
		fprintf(stderr, "dynprof: %s\n", note);
	list_once(o, tracker_model(t), &patterns);
	if (o->watch && watch(t) < 0) {
		tracker_close(t);
		return 1;
	}
	pidtab_free(&shown);
	pidtab_free(&plain_paths);
	if (o->watch && tracker_lost_events(t))
		fprintf(stderr, "dynprof: %llu kernel events lost, answered by %u rescans of /proc\n",
			tracker_lost_events(t), tracker_rescans(t));
	tracker_close(t);
	return 0;
}
