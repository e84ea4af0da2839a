// SPDX-License-Identifier: MIT
/* Printing dynprof's lines (see report.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/escape.h"
#include "report/events_out.h"
#include "report/report.h"

/*
 * A line's text, formatted and then escaped (report/escape.h): a target's
 * text in it (a v1 reply detail, a folder name, a path) can neither start a
 * line of its own nor reach the terminal as a control sequence. NULL when
 * out of memory.
 */
static char *format_escaped(const char *fmt, va_list ap)
{
	char *text = NULL, *safe;

	if (vasprintf(&text, fmt, ap) < 0)
		return NULL;
	if (text_is_plain(text))
		return text;
	safe = text_escape_dup(text);
	free(text);
	return safe;
}

/* A held line: an error (with its target's pid, for its event) or a prefixed one. */
struct report_line {
	struct report_line *next;
	const char *prefix; /* NULL: an error */
	int pid;
	char *text;
};

static _Thread_local struct report_capture *capturing;

void report_capture_begin(struct report_capture *c)
{
	c->head = NULL;
	c->tail = &c->head;
	capturing = c;
}

void report_capture_end(void)
{
	capturing = NULL;
}

/* Held when this thread captures: true when `text` is now the capture's. */
static bool held(const char *prefix, int pid, char *text)
{
	struct report_line *l;

	if (!capturing || !text || !(l = malloc(sizeof(*l))))
		return false;
	*l = (struct report_line){ .prefix = prefix, .pid = pid, .text = text };
	*capturing->tail = l;
	capturing->tail = &l->next;
	return true;
}

static void print_line(const char *prefix, char *text)
{
	printf("%s%s\n", prefix, text ? text : "(out of memory)");
	fflush(stdout);
	free(text);
}

/* Printed once, so the console line and the event carry the same text. */
static void print_error(int pid, char *text)
{
	if (!text) {
		puts("[ERROR] dynprof: out of memory");
		return;
	}
	printf("[ERROR] %s\n", text);
	fflush(stdout);
	events_error(pid, text);
	free(text);
}

void report_capture_flush(struct report_capture *c)
{
	struct report_line *l = c->head, *next;

	for (; l; l = next) {
		next = l->next;
		if (l->prefix)
			print_line(l->prefix, l->text);
		else
			print_error(l->pid, l->text);
		free(l);
	}
	c->head = NULL;
	c->tail = &c->head;
}

static void vline(const char *prefix, const char *fmt, va_list ap)
{
	char *text = format_escaped(fmt, ap);

	if (!held(prefix, 0, text))
		print_line(prefix, text);
}

static void verror_about(int pid, const char *fmt, va_list ap)
{
	char *text = format_escaped(fmt, ap);

	if (!held(NULL, pid, text))
		print_error(pid, text);
}

void report_verror(const char *fmt, va_list ap)
{
	verror_about(0, fmt, ap);
}

void report_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror_about(0, fmt, ap);
	va_end(ap);
}

void report_target_error(int pid, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror_about(pid, fmt, ap);
	va_end(ap);
}

#define REPORT_FN(name, prefix)         \
	void name(const char *fmt, ...) \
	{                               \
		va_list ap;             \
		va_start(ap, fmt);      \
		vline(prefix, fmt, ap); \
		va_end(ap);             \
	}

REPORT_FN(report_warning, "[WARNING] ")
REPORT_FN(report_info, "[INFO] ")
REPORT_FN(report_plain, "")
