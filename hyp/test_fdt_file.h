/* SPDX-License-Identifier: MIT */
/* The host-built device-tree tests' one input: a .dtb file, whole. */
#ifndef TEST_FDT_FILE_H
#define TEST_FDT_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* @path into @buf (@cap bytes); a file too short to be a device tree,
 * or as long as @buf (maybe cut), or none, ends the test (exit 2). */
static inline void read_dtb_file(const char *path, uint8_t *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		perror(path);
		exit(2);
	}
	n = fread(buf, 1, cap, f);
	fclose(f);
	if (n < 40 || n == cap) {
		fprintf(stderr, "%s: not a device tree that fits\n", path);
		exit(2);
	}
}

#endif
