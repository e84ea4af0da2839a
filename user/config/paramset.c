// SPDX-License-Identifier: MIT
/* A params JSON being built (see paramset.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/paramset.h"
#include "shared/jsonstr.h"

int paramset_init(struct paramset *ps, const struct mp_key *tab, size_t n)
{
	ps->v = calloc(n, sizeof(*ps->v));
	ps->n = 0;
	ps->err = 0;
	if (!ps->v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct pval *p = &ps->v[ps->n++];

		*p = (struct pval){ tab[i].key, tab[i].type, NULL, tab[i].num };
		if (tab[i].type == MP_STR && !(p->str = strdup(tab[i].str))) {
			paramset_free(ps);
			return -ENOMEM;
		}
	}
	return 0;
}

void paramset_free(struct paramset *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free(ps->v[i].str);
	free(ps->v);
	ps->v = NULL;
	ps->n = 0;
}

static struct pval *lookup(const struct paramset *ps, const char *key)
{
	for (size_t i = 0; i < ps->n; i++)
		if (!strcmp(ps->v[i].key, key))
			return &ps->v[i];
	return NULL;
}

static struct pval *lookup_typed(struct paramset *ps, const char *key, enum mp_type type)
{
	struct pval *p = lookup(ps, key);

	if (!p || p->type != type) {
		if (!ps->err)
			ps->err = -ENOENT;
		return NULL;
	}
	return p;
}

void paramset_set(struct paramset *ps, const char *key, const char *value)
{
	struct pval *p = lookup_typed(ps, key, MP_STR);
	char *copy;

	if (!p)
		return;
	copy = strdup(value);
	if (!copy) {
		if (!ps->err)
			ps->err = -ENOMEM;
		return;
	}
	free(p->str);
	p->str = copy;
}

void paramset_num(struct paramset *ps, const char *key, int64_t value)
{
	struct pval *p = lookup(ps, key);

	if (p && p->type == MP_BOOL)
		p->num = value != 0;
	else if ((p = lookup_typed(ps, key, MP_INT)))
		p->num = value;
}

void paramset_u64(struct paramset *ps, const char *key, uint64_t value)
{
	struct pval *p = lookup_typed(ps, key, MP_U64);

	if (p)
		p->num = (int64_t)value;
}

const char *paramset_str(const struct paramset *ps, const char *key)
{
	const struct pval *p = lookup(ps, key);

	return p && p->type == MP_STR ? p->str : "";
}

int64_t paramset_get_num(const struct paramset *ps, const char *key)
{
	const struct pval *p = lookup(ps, key);

	return p && p->type != MP_STR ? p->num : 0;
}

bool paramset_is(const struct paramset *ps, const char *key, const char *value)
{
	return !strcmp(paramset_str(ps, key), value);
}

const char *paramset_uncarried(const struct paramset *ps, char *bad)
{
	for (size_t i = 0; i < ps->n; i++) {
		if (ps->v[i].type != MP_STR)
			continue;
		for (const unsigned char *c = (const unsigned char *)ps->v[i].str; *c; c++) {
			if (*c == '"' || *c == '\\' || *c < 0x20 || *c == 0x7f) {
				*bad = (char)*c;
				return ps->v[i].key;
			}
		}
	}
	return NULL;
}

/* Unescaped: what 9.x's NanoJson reads is the text as written (checked before). */
static void put_string(FILE *f, const char *s, bool escape)
{
	if (escape)
		json_put_string(f, s);
	else
		fprintf(f, "\"%s\"", s);
}

static void put_value(FILE *f, const struct pval *p, bool escape)
{
	switch (p->type) {
	case MP_STR:
		put_string(f, p->str, escape);
		break;
	case MP_INT:
		fprintf(f, "%" PRId64, p->num);
		break;
	case MP_BOOL:
		fputs(p->num ? "true" : "false", f);
		break;
	case MP_U64:
		/* Not through a double: 0xC0000000A4000847 has no exact one. */
		fprintf(f, "%" PRIu64, (uint64_t)p->num);
		break;
	}
}

char *paramset_json(const struct paramset *ps, bool escape)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (ps->err) {
		errno = -ps->err;
		return NULL;
	}
	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	fputc('{', f);
	for (size_t i = 0; i < ps->n; i++) {
		if (i)
			fputc(',', f);
		put_string(f, ps->v[i].key, false);
		fputc(':', f);
		put_value(f, &ps->v[i], escape);
	}
	fputc('}', f);
	if (fclose(f) || !text) {
		free(text);
		errno = ENOMEM;
		return NULL;
	}
	return text;
}
