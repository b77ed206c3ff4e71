/* SPDX-License-Identifier: MIT */
/*
 * A plain main for the fuzz harness: runs every file given (directories are
 * read one level deep, in name order) through LLVMFuzzerTestOneInput, so the
 * seed corpus replays as an ordinary test with any compiler.
 *
 * Usage: fuzz_replay [--] FILE|DIR...    (fuzz_replay --help)
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

/* Runs the files of @dir in name order; counts them in @files. */
static int run_dir(const char *dir, unsigned *files)
{
	DIR *d = opendir(dir);
	if (!d) {
		perror(dir);
		return -1;
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
		size_t len = strlen(dir) + strlen(e->d_name) + 2;
		names[nn] = malloc(len);
		if (!names[nn])
			abort();
		snprintf(names[nn], len, "%s/%s", dir, e->d_name);
		nn++;
	}
	closedir(d);
	if (nn)
		qsort(names, nn, sizeof(*names), cmp);
	for (size_t j = 0; j < nn; j++) {
		if (run_file(names[j]))
			return -1;
		(*files)++;
		free(names[j]);
	}
	free(names);
	return 0;
}

static const char usage[] =
"Usage: fuzz_replay [--] FILE|DIR...\n"
"\n"
"Runs every FILE, and every file of each DIR (one level deep, in name\n"
"order), through the fuzz harness's checks (docs/fuzzing.md).\n"
"FUZZ_VERBOSE=1 in the environment prints each operation.\n"
"\n"
"Arguments and options:\n"
"  FILE|DIR     an input, or a folder of inputs (a corpus)\n"
"  --           the arguments after it are files, even if they start\n"
"               with '-'\n"
"  -h, --help   this text\n"
"\n"
"Exit status: 0 every input replayed; 1 a file cannot be read, or no\n"
"input; 2 an error on the command line. A failed check aborts.\n";

/* Returns the index of the first input, or -1 after --help, -2 on error. */
static int parse_args(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "--"))
			return i + 1;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage, stdout);
			return -1;
		}
		fprintf(stderr, "fuzz_replay: unknown option %s "
			"(see fuzz_replay --help)\n", argv[i]);
		return -2;
	}
	return i;
}

int main(int argc, char **argv)
{
	unsigned files = 0;
	int first = parse_args(argc, argv);
	if (first < 0)
		return first == -1 ? 0 : 2;
	if (first >= argc) {
		fprintf(stderr, "fuzz_replay: no FILE or DIR given "
			"(see fuzz_replay --help)\n");
		return 2;
	}
	for (int i = first; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st)) {
			perror(argv[i]);
			return 1;
		}
		if (S_ISDIR(st.st_mode)) {
			if (run_dir(argv[i], &files))
				return 1;
			continue;
		}
		if (run_file(argv[i]))
			return 1;
		files++;
	}
	if (!files) {
		fprintf(stderr, "fuzz_replay: no input files\n");
		return 1;
	}
	printf("fuzz_replay: %u inputs replayed, no failure\n", files);
	return 0;
}
