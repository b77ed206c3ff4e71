/* SPDX-License-Identifier: MIT */
/*
 * slat-dump scripts (docs/slat-dump.md): a config line, then operations
 * applied one by one to a table on the hosted platform.
 */
#ifndef SLAT_DUMP_SCRIPT_H
#define SLAT_DUMP_SCRIPT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <slat/hosted.h>
#include <slat/slat.h>

struct script {
	/* Set by the caller. */
	uint64_t arena_bytes; /* table-page arena, committed lazily */
	bool verbose;         /* print every operation's status */
	bool stats;           /* with verbose: and the counters it moved */
	bool hex;             /* the header shows the root's PA */
	bool no_header;       /* print no "# config" header (--json) */
	FILE *out;            /* where lookup and friends print */

	/* The table, valid once @ready. */
	struct slat_config cfg;
	struct slat_hosted h;
	struct slat_table t;
	struct slat_page_cache cache;
	bool ready;

	/* Where the script is. */
	const char *path;
	unsigned line;
	unsigned ops;
};

/*
 * Run the script in @in (named @path in messages) on a new table.
 * Returns 0, 1 (the host failed: I/O, memory) or 2 (an error in the script,
 * reported on stderr as "path:LINE: op: error (what to do)").
 */
int script_run(struct script *s, FILE *in, const char *path);

/*
 * Tear the table down; returns 0, or 1 when the hosted platform saw leaked
 * table pages or double frees (a libslat bug).
 */
int script_fini(struct script *s);

/* Print the table's counters, as text or as a JSON object. */
void script_print_stats(const struct script *s, FILE *f);
void script_json_stats(const struct script *s, FILE *f);

/*
 * Write the table as it is now as a raw image (docs/raw-image.md) to
 * @path; @records and @leaves (either may be NULL) tell what it holds.
 * Returns 0, or -1 with a message that starts with @path in @err.
 */
int script_write_raw(struct script *s, const char *path, uint32_t *records,
		     size_t *leaves, char *err, size_t errlen);

#endif
