// SPDX-License-Identifier: GPL-2.0
/*
 * smbdctl: JSON written as it goes (-j), one value after another, as
 * ip -j writes it: no library, no tree in memory.
 */

#include <stdio.h>

#include "smbdctl.h"

/* Whether the value about to be written is not the first of its object. */
static bool js_more[16];
static int js_depth;

static void js_sep(void)
{
	if (js_more[js_depth])
		putchar(',');
	js_more[js_depth] = true;
}

static void js_quote(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* A key, or nothing inside an array (@k NULL). */
void js_key(const char *k)
{
	js_sep();
	if (k) {
		js_quote(k);
		putchar(':');
	}
}

/* Open an object ('{') or array ('['), under key @k set by js_key(). */
void js_begin(char open)
{
	putchar(open);
	if (js_depth < 15)
		js_more[++js_depth] = false;
}

void js_end(char close)
{
	putchar(close);
	if (js_depth > 0)
		js_depth--;
}

void js_str(const char *k, const char *v)
{
	js_key(k);
	js_quote(v);
}

void js_u64(const char *k, uint64_t v)
{
	js_key(k);
	printf("%llu", (unsigned long long)v);
}

void js_i64(const char *k, int64_t v)
{
	js_key(k);
	printf("%lld", (long long)v);
}

void js_bool(const char *k, bool v)
{
	js_key(k);
	fputs(v ? "true" : "false", stdout);
}

void js_newline(void)
{
	putchar('\n');
}
