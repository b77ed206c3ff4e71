/* SPDX-License-Identifier: MIT */
/*
 * The Bochs EPT oracle's host driver. It builds EPT layouts with libslat on
 * the hosted platform (the arena stands for Bochs RAM at XTABLE_BASE, so
 * the table pages hold their real host-physical addresses): fixed ones,
 * then seeded random ones (4-level walks of 39, 40 and 48 bits; 4K, 2M
 * and 1G leaves; R, RW, RX, RWX and execute-only; write-back, write-
 * combining and uncacheable memory, ignore-PAT; A/D enabled or not;
 * after unmap, write-protect, relax, split, promote, access-flag and
 * dirty-log operations). It writes them with probe lists after the
 * bare-metal program (guest/) into a disk image, boots Bochs on it, and
 * compares every VM exit with what libslat says:
 *
 *  - slat_lookup: the leaf, its permissions and the host-physical address;
 *    a hole or a missing permission is an EPT violation (exit reason 48)
 *    whose qualification gives the access and the leaf's R/W/X, with the
 *    guest-physical address of the access; otherwise the access completes
 *    at that address: a load returns the tag written there, a store leaves
 *    its value there, a fetch runs the code written there (VMCALL);
 *  - slat_hw_access, libslat's model of the walker, must predict the
 *    same, and replays the accesses (the guest's own code fetch and page
 *    walk, then the probe) on the host copy: with A/D enabled every EPT
 *    entry on the probe's walk must then equal the one Bochs left;
 *  - the project's checker (tests/checker.c) validates every layout.
 *
 * Usage: oracle_ept --guest BIN [--layouts N] [--seed N] [--only ID]
 *                   [--bochs PATH] [--keep DIR] [--corrupt pa|mt]
 *                   [--verbose] [--help]
 * Exit: 0 all agree (with --corrupt: the corruption was reported), 1 a
 * disagreement, 77 skipped (no Bochs or no program).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#include "blob.h"
#include "checker.h"
#include "driver.h"
#include "xgen.h"
#include "xrun.h"


/* Exit reasons (SDM Vol. 3, Appendix C). */
#define EXIT_EXCEPTION 0
#define EXIT_VMCALL 18
#define EXIT_EPT_VIOLATION 48
#define EXIT_EPT_MISCONFIG 49

/* ------------------------------------------------------------ state */

static struct {
	uint64_t ad_layouts, xonly_layouts, fault_young;
} O;

/* ------------------------------------------------------------ probes */

/*
 * An EPT violation: the qualification gives the access in bits 2:0, the
 * leaf's R/W/X in 5:3 (the table entries are RWX), the guest linear
 * address valid, bit 7, and the access to it the translation, bit 8.
 */
static void violation(const struct xblob_probe *p, struct expect *e,
		      const struct slat_leaf *l)
{
	uint64_t rwx = !l ? 0 : ((l->attrs & SLAT_R) ? 1 : 0) |
				((l->attrs & SLAT_W) ? 2 : 0) |
				((l->attrs & SLAT_XK) ? 4 : 0);
	e->reason = EXIT_EPT_VIOLATION;
	e->qual = (1ull << access_of(p->kind)) | rwx << 3 | 1ull << 7 | 1ull << 8;
	e->linear = XGUEST_WINDOW | (p->gpa & 0xfff);
}

/*
 * slat_hw_access sets the accessed flag of the table entries a walk goes
 * through even when the walk ends in an EPT violation; Bochs sets the
 * flags of a walk only when the access goes ahead (docs/oracle.md). The
 * driver takes back the flags libslat set on a faulting walk, counting
 * them, so that every other bit stays compared.
 */
static void undo_fault_young(struct gen *g, const struct layout_rec *r,
			     const struct xblob_probe *p, const struct expect *e,
			     const uint64_t *pre)
{
	(void)r;
	(void)e;
	for (unsigned i = 0; i < XPROBE_DESCS; i++) {
		if (!p->desc_pa[i])
			continue;
		uint64_t *w = (uint64_t *)(g->o.h.arena + (p->desc_pa[i] - g->o.h.pa_base));
		if (*w == pre[i])
			continue;
		if ((*w ^ pre[i]) != 1ull << 8)
			die("slat_hw_access changed %#" PRIx64 " on a faulting walk",
			    p->desc_pa[i]);
		*w = pre[i];
		O.fault_young++;
	}
}

/* ------------------------------------------------------------ layouts */

static const unsigned ia_choices[] = { 39, 40, 48 };

/* Flip a bit of the first translating probe's leaf (--corrupt): the PA
 * one page off, or a reserved memory type (a misconfiguration). */
static void corrupt(const struct layout_rec *r, uint8_t *pages, uint32_t nr)
{
	for (uint32_t i = 0; i < r->nr_probes && !X.corrupted; i++) {
		if (r->exp[i].reason != EXIT_VMCALL)
			continue;
		uint64_t pa = r->probes[i].desc_pa[r->exp[i].level];
		uint64_t *d = page_word(pages, nr, pa);
		*d = strcmp(X.corrupt, "mt") ? *d ^ PAGE
					     : (*d & ~(7ull << 3)) | 2ull << 3;
		X.corrupted++;
		printf("corrupted layout %u: the entry at %#" PRIx64 " is now %#" PRIx64 "\n",
		       r->id, pa, *d);
	}
}

/* Layout @id (fixed below FIXED_LAYOUTS, else random from its seed). */
static void build_layout(uint32_t id)
{
	struct gen g;
	uint64_t seed = X.seed ^ (uint64_t)id * 0x9e3779b97f4a7c15ull;
	rng = seed;
	bool fixed = id < FIXED_LAYOUTS;
	unsigned ia = fixed ? ia_choices[(id / 2) % 3] : ia_choices[below(3)];
	uint32_t feat = 0;
	if (fixed ? id % 2 : chance(50))
		feat |= SLAT_FEAT_HWDIRTY;
	if (fixed ? id >= 2 : chance(40))
		feat |= SLAT_FEAT_EPT_XONLY;
	open_gen(&g, SLAT_FMT_EPT, ia, 0, feat);
	struct layout_rec *r = fill_layout(&g, id, seed);
	snprintf(r->desc, sizeof(r->desc),
		 "%s ept-%u a/d=%d xonly=%d window %#" PRIx64 " ops %s seed %#" PRIx64,
		 fixed ? "fixed" : "random", ia, !!(feat & SLAT_FEAT_HWDIRTY),
		 !!(feat & SLAT_FEAT_EPT_XONLY), g.iwin, g.ops[0] ? g.ops : "none",
		 seed);
	O.ad_layouts += !!(feat & SLAT_FEAT_HWDIRTY);
	O.xonly_layouts += !!(feat & SLAT_FEAT_EPT_XONLY);
	put_layout(&g, r, slat_ept_eptp(&g.o.t));
}

/* ------------------------------------------------------------ Bochs */

/* The disk: the program, the blob at XBLOB_LBA, whole cylinders of 16
 * heads and 63 sectors (a flat image's geometry). */
static uint64_t write_disk(const char *path)
{
	size_t glen;
	uint8_t *prog = read_file(X.guest, &glen);
	if (glen > XBLOB_LBA * 512ull)
		die("%s is larger than %u sectors", X.guest, XBLOB_LBA);
	const uint64_t cyl = 16 * 63 * 512;
	uint64_t len = XBLOB_LBA * 512ull + X.blen;
	len = (len + cyl - 1) / cyl * cyl;
	uint8_t *img = calloc(1, len);
	if (!img)
		die("out of memory");
	memcpy(img, prog, glen);
	memcpy(img + XBLOB_LBA * 512ull, X.blob, X.blen);
	write_file(path, img, len);
	free(img);
	free(prog);
	return len / cyl;
}

/* Headless: SDL2 with its dummy video driver (Debian's Bochs has no
 * nogui library), no sound, the program's output on port 0xE9. */
static void write_bochsrc(const char *path, const char *disk, uint64_t cyls)
{
	FILE *f = fopen(path, "w");
	if (!f)
		die("write %s: %s", path, strerror(errno));
	fprintf(f, "megs: 2048\n"
		"romimage: file=/usr/share/bochs/BIOS-bochs-latest\n"
		"vgaromimage: file=/usr/share/vgabios/vgabios.bin\n"
		"cpu: model=corei7_haswell_4770, ips=50000000, reset_on_triple_fault=0\n"
		"ata0: enabled=1, ioaddr1=0x1f0, ioaddr2=0x3f0, irq=14\n"
		"ata0-master: type=disk, path=%s, mode=flat, cylinders=%" PRIu64
		", heads=16, spt=63\n"
		"boot: disk\n"
		"display_library: sdl2\n"
		"port_e9_hack: enabled=1\n"
		"log: bochs.log\n"
		"panic: action=fatal\n"
		"error: action=report\n"
		"clock: sync=none\n"
		"speaker: enabled=0\n"
		"sound: driver=dummy\n", disk, cyls);
	if (fclose(f))
		die("write %s", path);
}

/* Run Bochs in @dir (its built-in debugger reads "c" from a script);
 * returns its output (port 0xE9 and Bochs's own lines). */
static char *run_bochs(const char *dir, size_t *len)
{
	char rc[4096], cmds[4096], disk[4096];
	snprintf(disk, sizeof(disk), "%s/disk.img", dir);
	snprintf(rc, sizeof(rc), "%s/bochsrc", dir);
	snprintf(cmds, sizeof(cmds), "%s/cmds", dir);
	write_bochsrc(rc, disk, write_disk(disk));
	write_file(cmds, "c\n", 2);
	setenv("SDL_VIDEODRIVER", "dummy", 1);
	setenv("SDL_AUDIODRIVER", "dummy", 1);
	char *argv[] = { (char *)X.emu, "-q", "-f", rc, "-rc", cmds, NULL };
	return xrun_exec(dir, argv, true, len);
}

/*
 * What the layouts assume of Bochs's CPU: 40 physical address bits, and in
 * IA32_VMX_EPT_VPID_CAP execute-only translations (bit 0), 4-level walks
 * (6), write-back walks (14), 2 MiB and 1 GiB pages (16, 17), INVEPT (20)
 * and A/D (21). Another Bochs or CPU model is refused by name, not by a
 * flood of disagreements.
 */
static void check_banner(void)
{
	uint64_t basic, ept, proc2;
	unsigned maxphy;
	const uint64_t need = 1ull << 0 | 1ull << 6 | 1ull << 14 | 1ull << 16 |
			      1ull << 17 | 1ull << 20 | 1ull << 21;
	if (sscanf(X.banner, "XORACLE basic=%" SCNx64 " ept=%" SCNx64 " proc2=%"
		   SCNx64 " maxphy=%x", &basic, &ept, &proc2, &maxphy) != 4)
		die("no banner from the program");
	if (maxphy != XMAXPHY || (ept & need) != need || !(proc2 >> 33 & 1))
		die("Bochs's CPU lacks what the layouts use: %s", X.banner);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: oracle_ept --guest BIN [--layouts N] [--seed N] [--only ID]\n"
		"                  [--bochs PATH] [--keep DIR] [--corrupt pa|mt] [--verbose]\n"
		"Checks EPT tables libslat builds against Bochs's EPT walker:\n"
		"%u fixed layouts, then random ones (N in all, default 60), %u probes each.\n"
		"--corrupt flips one leaf (its address, or a reserved memory type) after\n"
		"libslat's expectations are made: the run passes only if it is reported.\n"
		"Exit: 0 agree, 1 disagreement, 77 skipped (no bochs or no program).\n",
		FIXED_LAYOUTS, PROBES_PER_LAYOUT);
}

static void print_summary(void)
{
	printf("%s\n", X.banner);
	printf("bochs EPT oracle: %" PRIu64 " layouts (%u fixed; %" PRIu64
	       " with A/D, %" PRIu64 " execute-only), seed %#" PRIx64 ", %u boot%s, %.1f s"
	       " in Bochs\n", X.layouts, FIXED_LAYOUTS, O.ad_layouts, O.xonly_layouts,
	       X.seed, X.boots, X.boots == 1 ? "" : "s", X.seconds);
	xrun_print_walks("EPT violations");
	printf("  accessed flags slat_hw_access set on the tables of faulting walks"
	       " (Bochs does not): %" PRIu64 "\n", O.fault_young);
}

int main(int argc, char **argv)
{
	uint64_t first, end;
	X.name = "oracle_ept";
	X.emu_opt = "--bochs";
	X.emu = "bochs";
	X.emu_name = "Bochs";
	X.table_name = "EPT";
	X.fault_name = "EPT violation";
	X.banner_tag = "XORACLE ";
	X.corrupts[0] = "pa";
	X.corrupts[1] = "mt";
	X.code_call = EXIT_VMCALL;
	X.code_fault = EXIT_EPT_VIOLATION;
	X.a_bit = 8;
	X.expect_fault = violation;
	X.fault_hook = undo_fault_young;
	X.corrupt_hook = corrupt;
	X.usage = usage;
	X.check_banner = check_banner;
	X.run = run_bochs;
	X.seed = 0xe970;
	if (xrun_start(argc, argv, "bochs bochs-sdl bochsbios vgabios", &first, &end))
		return SKIP;
	for (uint64_t id = first; id < end; id++) {
		build_layout((uint32_t)id);
		if (X.blen > XBLOB_MAX / 2)
			xrun_flush(0);
	}
	xrun_flush(0);
	print_summary();
	return xrun_end();
}
