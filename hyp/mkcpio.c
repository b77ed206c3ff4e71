/* SPDX-License-Identifier: MIT */
/*
 * mkcpio: write an initramfs (cpio "newc", uncompressed) from a list of
 * entries, with no cpio program and no root privileges (device nodes are
 * only records in the archive).
 *
 *   slat-mkcpio OUT ENTRY...     (slat-mkcpio --help)
 *   ENTRY: d:PATH:MODE         a directory
 *          f:PATH:MODE:HOSTFILE a regular file, copied from HOSTFILE
 *          c:PATH:MODE:MAJ:MIN  a character device
 *          l:PATH:TARGET        a symbolic link
 * MODE is octal permission bits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *out;
static unsigned long offset, ino = 1;

static void pad4(void)
{
	while (offset % 4) {
		fputc(0, out);
		offset++;
	}
}

static void header(const char *name, unsigned long mode, unsigned long size,
		   unsigned long rmaj, unsigned long rmin)
{
	unsigned long namesize = strlen(name) + 1;

	offset += (unsigned long)fprintf(out,
		"070701%08lX%08lX%08lX%08lX%08lX%08lX%08lX%08lX%08lX%08lX%08lX"
		"%08lX%08lX",
		ino++, mode, 0ul, 0ul, 1ul, 0ul, size, 0ul, 0ul, rmaj, rmin,
		namesize, 0ul);
	fwrite(name, 1, namesize, out);
	offset += namesize;
	pad4();
}

static void data(const void *buf, unsigned long size)
{
	fwrite(buf, 1, size, out);
	offset += size;
	pad4();
}

static char *slurp(const char *path, unsigned long *size)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		return NULL;
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		return NULL;
	fclose(f);
	*size = (unsigned long)n;
	return buf;
}

/* Split @s at ':' into at most @max fields. */
static int fields(char *s, char **f, int max)
{
	int n = 0;

	while (n < max) {
		f[n++] = s;
		s = strchr(s, ':');
		if (!s)
			break;
		*s++ = '\0';
	}
	return n;
}

static int entry(char *arg)
{
	char *f[5];
	int n = fields(arg, f, 5);
	unsigned long mode = n > 2 ? strtoul(f[2], NULL, 8) : 0, size;
	char *buf;

	if (n == 3 && f[0][0] == 'd') {
		header(f[1], 0040000 | mode, 0, 0, 0);
	} else if (n == 4 && f[0][0] == 'f') {
		buf = slurp(f[3], &size);
		if (!buf)
			return -1;
		header(f[1], 0100000 | mode, size, 0, 0);
		data(buf, size);
		free(buf);
	} else if (n == 5 && f[0][0] == 'c') {
		header(f[1], 0020000 | mode, 0, strtoul(f[3], NULL, 10),
		       strtoul(f[4], NULL, 10));
	} else if (n == 3 && f[0][0] == 'l') {
		header(f[1], 0120777, strlen(f[2]), 0, 0);
		data(f[2], strlen(f[2]));
	} else {
		return -1;
	}
	return 0;
}

static const char usage[] =
"Usage: slat-mkcpio OUT ENTRY...\n"
"\n"
"Writes OUT, an initramfs (cpio newc, uncompressed), with one record per\n"
"ENTRY in the order given; no cpio program or root privileges needed.\n"
"\n"
"Arguments:\n"
"  OUT                     the archive to write\n"
"  d:PATH:MODE             a directory\n"
"  f:PATH:MODE:HOSTFILE    a regular file, copied from HOSTFILE\n"
"  c:PATH:MODE:MAJ:MIN     a character device (a record only)\n"
"  l:PATH:TARGET           a symbolic link\n"
"  (MODE: octal permission bits)\n"
"Options:\n"
"  -h, --help              this text\n"
"\n"
"Exit status: 0 written; 1 OUT or a HOSTFILE cannot be written or read,\n"
"or an ENTRY is malformed; 2 an error on the command line.\n";

/*
 * No ENTRY starts with '-': any such argument is an option, looked at
 * before OUT is created. Returns -1 to go on, else the exit status.
 */
static int parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] != '-' || !argv[i][1])
			continue;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage, stdout);
			return 0;
		}
		fprintf(stderr, "slat-mkcpio: unknown option %s "
			"(see slat-mkcpio --help)\n", argv[i]);
		return 2;
	}
	if (argc < 2) {
		fprintf(stderr, "slat-mkcpio: no OUT given "
			"(see slat-mkcpio --help)\n");
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	int ret = parse_args(argc, argv);

	if (ret >= 0)
		return ret;
	out = fopen(argv[1], "wb");
	if (!out)
		return 1;
	for (int i = 2; i < argc; i++) {
		if (entry(argv[i])) {
			fprintf(stderr, "mkcpio: bad entry or file: %s\n",
				argv[i]);
			return 1;
		}
	}
	header("TRAILER!!!", 0, 0, 0, 0);
	while (offset % 512) {
		fputc(0, out);
		offset++;
	}
	return fclose(out) ? 1 : 0;
}
