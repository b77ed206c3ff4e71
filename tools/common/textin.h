/* SPDX-License-Identifier: MIT */
/*
 * Text the tools read from users (slat-dump scripts, slat-perf cost files):
 * untrusted, so read a bounded line at a time, and quoted back in errors
 * only as a short prefix with non-printable bytes escaped.
 */
#ifndef SLAT_TOOLS_TEXTIN_H
#define SLAT_TOOLS_TEXTIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A quoted word shows at most this many bytes of the word, then "...". */
#define TEXT_QUOTE_BYTES 40

/*
 * One text file read a line at a time. Errors say "@prefix@name:LINE: ..."
 * (@prefix "" or "tool: ") and call it a @what ("script"); @line_max is
 * the longest line it may have in bytes, newline excluded; @lines_max the
 * most lines.
 */
struct text_in {
	FILE *f;
	const char *prefix;
	const char *name;
	const char *what;
	size_t line_max;
	unsigned long lines_max;
	unsigned long line;     /* the last line read, from 1 */
	char *buf;              /* line_max + 2 bytes */
};

/* Set up @in over @f; false (and a message) when out of memory. */
bool text_in_open(struct text_in *in, FILE *f, const char *prefix,
		  const char *name, const char *what, size_t line_max,
		  unsigned long lines_max);
void text_in_close(struct text_in *in);

/*
 * The next line, its newline removed, in *@line (valid until the next
 * call) and its length in *@len. Returns 1 for a line, 0 at the end, 2
 * after printing why the input is refused: a line longer than line_max
 * (nothing past its line_max + 1st byte is read), a NUL byte (which would
 * end the line unseen), more than lines_max lines; 1 for a read error
 * (printed).
 */
int text_in_line(struct text_in *in, char **line, size_t *len);

/*
 * Write @msg to @f with every byte that is not printable ASCII (or a
 * newline) escaped (\xNN, a backslash as two), and every double-quoted
 * span, which is a word the user gave, cut to its first TEXT_QUOTE_BYTES
 * bytes and "..." when it is longer than TEXT_QUOTE_BYTES + 3: the one way
 * the tools echo what a user gave them.
 */
void text_put_safe(FILE *f, const char *msg);

/* How many bytes of a quoted word of @len bytes text_put_safe() shows. */
size_t text_quote_shown(size_t len);

/* printf-style text_put_safe() of one message. */
void text_printf_safe(FILE *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
