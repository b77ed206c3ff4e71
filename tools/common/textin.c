/* SPDX-License-Identifier: MIT */
#include "textin.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

bool text_in_open(struct text_in *in, FILE *f, const char *prefix,
		  const char *name, const char *what, size_t line_max,
		  unsigned long lines_max)
{
	in->f = f;
	in->prefix = prefix;
	in->name = name;
	in->what = what;
	in->line_max = line_max;
	in->lines_max = lines_max;
	in->line = 0;
	in->buf = malloc(line_max + 2);
	if (!in->buf)
		fprintf(stderr, "%sout of memory\n", prefix);
	return in->buf != NULL;
}

void text_in_close(struct text_in *in)
{
	free(in->buf);
	in->buf = NULL;
}

/* "name:LINE: why (advice)" and status 2. */
static int refuse(const struct text_in *in, const char *why,
		  const char *advice)
{
	fprintf(stderr, "%s%s:%lu: %s (a %s %s)\n", in->prefix, in->name,
		in->line + 1, why, in->what, advice);
	return 2;
}

int text_in_line(struct text_in *in, char **line, size_t *len)
{
	char why[64];
	size_t n = 0;
	int c;

	/* A byte at a time: nothing past the limit is read, and a NUL, which
	 * would end a C string early, is seen where it is. */
	while ((c = getc(in->f)) != EOF && c != '\n') {
		if (c == '\0') {
			snprintf(why, sizeof(why), "NUL byte at column %zu",
				 n + 1);
			return refuse(in, why, "is text; remove the byte, or "
				      "check that this is the right file");
		}
		if (n == in->line_max) {
			snprintf(why, sizeof(why), "line longer than %zu bytes",
				 in->line_max);
			return refuse(in, why, "line is short; check that this "
				      "is the right file, with a newline after "
				      "each line");
		}
		in->buf[n++] = (char)c;
	}
	if (c == EOF && ferror(in->f)) {
		fprintf(stderr, "%s%s: %s\n", in->prefix, in->name,
			strerror(errno));
		return 1;
	}
	if (c == EOF && n == 0)
		return 0;
	if (in->line == in->lines_max) {
		fprintf(stderr, "%s%s: more than %lu lines (split the %s "
			"into several)\n", in->prefix, in->name, in->lines_max,
			in->what);
		return 2;
	}
	in->line++;
	in->buf[n] = '\0';
	*line = in->buf;
	*len = n;
	return 1;
}

/* Bytes a terminal shows as themselves. */
static bool printable(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

/* @n bytes of @p, escaped where a terminal would not show them. */
static void put_escaped(FILE *f, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\\')
			fputs("\\\\", f);
		else if (printable(p[i]) || p[i] == '\n')
			putc(p[i], f);
		else
			fprintf(f, "\\x%02x", p[i]);
	}
}

void text_put_safe(FILE *f, const char *msg)
{
	const unsigned char *p = (const unsigned char *)msg;

	for (;;) {
		const char *open = strchr((const char *)p, '"');
		if (!open) {
			put_escaped(f, p, strlen((const char *)p));
			return;
		}
		put_escaped(f, p, (size_t)(open - (const char *)p) + 1);
		p = (const unsigned char *)open + 1;
		/* Quoted: the user's word; no closing quote, the rest. */
		const char *close = strchr((const char *)p, '"');
		size_t word = close ? (size_t)(close - (const char *)p)
				    : strlen((const char *)p);
		size_t shown = text_quote_shown(word);
		put_escaped(f, p, shown);
		if (shown < word)
			fputs("...", f);
		p += word;
		if (!close)
			return;
		putc('"', f);
		p++;
	}
}

size_t text_quote_shown(size_t len)
{
	return len > TEXT_QUOTE_BYTES + 3 ? TEXT_QUOTE_BYTES : len;
}

void text_printf_safe(FILE *f, const char *fmt, ...)
{
	va_list ap, again;

	va_start(ap, fmt);
	va_copy(again, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *msg = n < 0 ? NULL : malloc((size_t)n + 1);
	if (msg) {
		vsnprintf(msg, (size_t)n + 1, fmt, again);
		text_put_safe(f, msg);
		free(msg);
	} else {
		fputs("(out of memory for this message)\n", f);
	}
	va_end(again);
}
