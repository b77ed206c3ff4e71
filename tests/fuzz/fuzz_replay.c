/* SPDX-License-Identifier: MIT */
/*
 * A plain main for the fuzz harness: runs every file given (directories are
 * read one level deep, in name order) through LLVMFuzzerTestOneInput, so the
 * seed corpus replays as an ordinary test with any compiler.
 *
 * Usage: fuzz_replay FILE|DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	for (;;) {
		if (!buf)
			abort();
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		cap *= 2;
		buf = realloc(buf, cap);
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	unsigned files = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st)) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]))
				return 1;
			files++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		if (!d) {
			perror(argv[i]);
			return 1;
		}
		char **names = NULL;
		size_t nn = 0;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			names = realloc(names, (nn + 1) * sizeof(*names));
			if (!names)
				abort();
			size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
			names[nn] = malloc(len);
			if (!names[nn])
				abort();
			snprintf(names[nn], len, "%s/%s", argv[i], e->d_name);
			nn++;
		}
		closedir(d);
		if (nn)
			qsort(names, nn, sizeof(*names), cmp);
		for (size_t j = 0; j < nn; j++) {
			if (run_file(names[j]))
				return 1;
			files++;
			free(names[j]);
		}
		free(names);
	}
	if (!files) {
		fprintf(stderr, "fuzz_replay: no input files\n");
		return 1;
	}
	printf("fuzz_replay: %u inputs replayed, no failure\n", files);
	return 0;
}
