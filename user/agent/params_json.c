// SPDX-License-Identifier: MIT
/* CANN's two params readers (see params_json.h). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "agent/params_json.h"

#define MAX_DEPTH 32

struct cur {
	const char *p;
	bool strict;
	int depth;
};

static void ws(struct cur *c)
{
	while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')
		c->p++;
}

static int put_utf8(char *out, unsigned cp)
{
	if (cp < 0x80)
		return out[0] = (char)cp, 1;
	if (cp < 0x800)
		return out[0] = (char)(0xc0 | cp >> 6), out[1] = (char)(0x80 | (cp & 0x3f)), 2;
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static int hex4(const char *p, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		if (!isxdigit((unsigned char)p[i]))
			return -EINVAL;
		*v = *v * 16 + (unsigned)(isdigit((unsigned char)p[i]) ?
						  p[i] - '0' :
						  (tolower((unsigned char)p[i]) - 'a' + 10));
	}
	return 0;
}

/* One escape after '\': appended to out; *p advanced past it. */
static int unescape(const char **p, char *out, size_t *n)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e = strchr(from, **p);
	unsigned cp, lo;

	if (**p && e) {
		out[(*n)++] = to[e - from];
		(*p)++;
		return 0;
	}
	if (**p != 'u' || hex4(*p + 1, &cp))
		return -EINVAL;
	*p += 5;
	if (cp >= 0xd800 && cp < 0xdc00) {
		if ((*p)[0] != '\\' || (*p)[1] != 'u' || hex4(*p + 2, &lo) || lo < 0xdc00 || lo > 0xdfff)
			return -EINVAL;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		*p += 6;
	} else if (cp >= 0xdc00 && cp < 0xe000) {
		return -EINVAL;
	}
	*n += (size_t)put_utf8(out + *n, cp);
	return 0;
}

/*
 * A double's integer part, saturated at int64's ends (and NaN as 0):
 * converting a double outside the range is undefined (found by
 * fuzz_agent_params: "dataTypeConfig":1.38e23).
 */
static int64_t double_to_i64(double d)
{
	if (d != d)
		return 0;
	if (d >= 0x1p63)
		return INT64_MAX;
	if (d < -0x1p63)
		return INT64_MIN;
	return (int64_t)d;
}

/* At the opening '"'. *s gets the value (malloc'd) when s is given. */
static int string(struct cur *c, char **s, const char **raw, size_t *rawlen)
{
	const char *start, *end;
	size_t n = 0;
	char *out;

	c->p++;
	if (!c->strict) {
		while (isspace((unsigned char)*c->p))
			c->p++;
		start = c->p;
		end = strchr(start, '"');
		if (!end)
			return -EINVAL;
		c->p = end + 1;
		if (raw)
			*raw = start, *rawlen = (size_t)(end - start);
		if (s && !(*s = strndup(start, (size_t)(end - start))))
			return -ENOMEM;
		return 0;
	}
	start = c->p;
	out = malloc(strlen(start) * 2 + 1); /* an escape never grows its text */
	if (!out)
		return -ENOMEM;
	while (*c->p != '"') {
		unsigned char ch = (unsigned char)*c->p;

		if (ch < 0x20) { /* the NUL (unterminated) included */
			free(out);
			return -EINVAL;
		}
		if (ch == '\\') {
			c->p++;
			if (unescape(&c->p, out, &n)) {
				free(out);
				return -EINVAL;
			}
			continue;
		}
		out[n++] = *c->p++;
	}
	if (raw)
		*raw = start, *rawlen = (size_t)(c->p - start);
	c->p++;
	out[n] = '\0';
	if (s)
		*s = out;
	else
		free(out);
	return 0;
}

static int strict_number(struct cur *c, struct pj_member *m)
{
	const char *s = c->p, *q = s;
	bool real = false;

	if (*q == '-')
		q++;
	if (*q == '0')
		q++;
	else if (isdigit((unsigned char)*q))
		while (isdigit((unsigned char)*q))
			q++;
	else
		return -EINVAL;
	if (*q == '.') {
		real = true;
		if (!isdigit((unsigned char)*++q))
			return -EINVAL;
		while (isdigit((unsigned char)*q))
			q++;
	}
	if (*q == 'e' || *q == 'E') {
		real = true;
		q++;
		if (*q == '+' || *q == '-')
			q++;
		if (!isdigit((unsigned char)*q))
			return -EINVAL;
		while (isdigit((unsigned char)*q))
			q++;
	}
	c->p = q;
	if (real) {
		m->kind = PJ_DOUBLE;
		m->i = double_to_i64(strtod(s, NULL));
		return 0;
	}
	m->kind = PJ_INT;
	errno = 0;
	if (*s == '-') {
		m->i = strtoll(s, NULL, 10);
	} else {
		m->u = strtoull(s, NULL, 10);
		m->i = (int64_t)m->u;
	}
	return errno ? -EINVAL : 0;
}

/* NanoJson: stod then stoi of the token (json9:110-148). */
static int lenient_number(struct cur *c, struct pj_member *m)
{
	const char *s = c->p, *d = s + (*s == '-');
	size_t n = strspn(s, "0123456789+-.eE");
	long long v;

	c->p = s + n;
	if (!isdigit((unsigned char)*d) || (d[0] == '0' && d[1] == '0') || s[n - 1] == '.')
		return -EINVAL;
	if (memchr(s, '.', n)) {
		m->kind = PJ_DOUBLE;
		m->i = double_to_i64(strtod(s, NULL));
		return 0;
	}
	errno = 0;
	v = strtoll(s, NULL, 10);
	if (errno || v < INT_MIN || v > INT_MAX)
		return -EINVAL;
	m->kind = PJ_INT;
	m->i = v;
	m->u = (uint64_t)v;
	return 0;
}

static int value(struct cur *c, struct pj_member *m);

/* A nested object or array: checked, then dropped. */
static int container(struct cur *c, char close)
{
	struct pj_member m;
	bool first = true;
	int rc;

	if (++c->depth > MAX_DEPTH)
		return -EINVAL;
	c->p++;
	for (;;) {
		ws(c);
		if (*c->p == close)
			break;
		if (!*c->p || (c->strict && !first && *c->p++ != ','))
			return -EINVAL;
		if (!c->strict && *c->p == ',')
			c->p++;
		ws(c);
		if (close == '}') {
			if (*c->p != '"' || (rc = string(c, NULL, NULL, NULL)))
				return -EINVAL;
			ws(c);
			if (*c->p == ':')
				c->p++;
			else if (c->strict)
				return -EINVAL;
			ws(c);
		}
		memset(&m, 0, sizeof(m));
		rc = value(c, &m);
		free(m.str);
		if (rc)
			return rc;
		first = false;
	}
	c->p++;
	c->depth--;
	return 0;
}

static int literal(struct cur *c, const char *word, struct pj_member *m, enum pj_kind kind, int v)
{
	size_t n = strlen(word);

	/* NanoJson takes any 4 bytes starting with 'n' as null. */
	if (c->strict || kind != PJ_NULL ? strncmp(c->p, word, n) : strnlen(c->p, 4) < 4)
		return -EINVAL;
	c->p += n;
	m->kind = kind;
	m->i = v;
	return 0;
}

static int value(struct cur *c, struct pj_member *m)
{
	switch (*c->p) {
	case '"':
		m->kind = PJ_STR;
		return string(c, &m->str, NULL, NULL);
	case '{':
	case '[':
		m->kind = PJ_OTHER;
		return container(c, *c->p == '{' ? '}' : ']');
	case 't':
		return literal(c, "true", m, PJ_BOOL, 1);
	case 'f':
		return literal(c, "false", m, PJ_BOOL, 0);
	case 'n':
		return literal(c, "null", m, PJ_NULL, 0);
	default:
		if (*c->p == '-' || isdigit((unsigned char)*c->p))
			return c->strict ? strict_number(c, m) : lenient_number(c, m);
		return -EINVAL;
	}
}

static int member(struct cur *c, int (*fn)(void *, struct pj_member *), void *ctx)
{
	struct pj_member m = { 0 };
	int rc;

	if (*c->p != '"')
		return -EINVAL;
	rc = string(c, NULL, &m.key, &m.klen);
	if (rc)
		return rc;
	ws(c);
	if (*c->p == ':')
		c->p++;
	else if (c->strict)
		return -EINVAL;
	ws(c);
	rc = value(c, &m);
	if (!rc)
		rc = fn(ctx, &m);
	free(m.str);
	return rc;
}

int pj_parse(const char *text, bool strict, int (*fn)(void *ctx, struct pj_member *m), void *ctx)
{
	struct cur c = { text, strict, 0 };
	bool first = true;
	int rc;

	ws(&c);
	if (*c.p != '{')
		return -EINVAL;
	c.p++;
	for (;;) {
		ws(&c);
		if (*c.p == '}')
			break;
		if (!*c.p || (strict && !first && *c.p++ != ','))
			return -EINVAL;
		if (!strict && *c.p == ',')
			c.p++;
		ws(&c);
		if (!strict && *c.p == '}')
			break; /* NanoJson takes a trailing comma */
		rc = member(&c, fn, ctx);
		if (rc)
			return rc;
		first = false;
	}
	c.p++;
	ws(&c);
	return strict && *c.p ? -EINVAL : 0;
}
