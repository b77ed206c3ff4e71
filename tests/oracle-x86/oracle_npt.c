/* SPDX-License-Identifier: MIT */
/*
 * The QEMU NPT oracle's host driver. It builds AMD nested page tables with
 * libslat on the hosted platform (the arena stands for QEMU's RAM at
 * XTABLE_BASE, so the table pages hold their real host-physical
 * addresses), the layouts of the EPT oracle (xgen.h) in NPT's terms:
 * fixed ones, then seeded random ones (4-level walks of 39, 40 and 48
 * bits, 5-level walks of 40 and 57 bits; 4K, 2M and 1G leaves; R, RW, RX,
 * RWX; write-back, write-combining and uncacheable; after unmap, write-
 * protect, relax, split, promote, access-flag and dirty-log operations).
 * QEMU (TCG, -cpu max) loads the program (guest-npt/) as a Multiboot
 * kernel and the layouts with their probes as a blob; the program runs a
 * guest through each table with VMRUN, nested paging on, and reports each
 * #VMEXIT. The driver compares every one with what libslat says:
 *
 *  - slat_lookup: the leaf, its permissions and the host-physical address;
 *    a hole or a missing permission is a nested page fault (EXITCODE
 *    0x400) whose EXITINFO1 is the page-fault error code of a user access
 *    (P when the leaf was present, RW for a store, US always, ID for a
 *    fetch) with bit 32 (the fault is on the final guest-physical
 *    address), and whose EXITINFO2 is the guest-physical address; otherwise
 *    the access completes at that address: a load returns the tag written
 *    there, a store leaves its value there, a fetch runs the code written
 *    there (VMMCALL, EXITCODE 0x81);
 *  - slat_hw_access, libslat's model of the walker, must predict the
 *    same, and replays the accesses (the guest's code fetch and page walk,
 *    then the probe) on the host copy: every NPT entry on the probe's walk
 *    must then equal the one QEMU left, accessed and dirty flags included;
 *  - the project's checker (tests/checker.c) validates every layout.
 *
 * Usage: oracle_npt --guest BIN [--layouts N] [--seed N] [--only ID]
 *                   [--qemu PATH] [--keep DIR] [--corrupt pa|us]
 *                   [--verbose] [--help]
 * Exit: 0 all agree (with --corrupt: the corruption was reported), 1 a
 * disagreement, 77 skipped (no QEMU or no program).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#include "blob.h"
#include "checker.h"
#include "driver.h"
#include "xgen.h"
#include "xrun.h"


/* #VMEXIT codes (APM vol. 2, appendix C). */
#define VMEXIT_VMMCALL 0x81
#define VMEXIT_NPF 0x400

/* EXITINFO1 of a nested page fault: the page-fault error code, and where
 * the fault arose (APM vol. 2, "Nested versus Guest Page Faults"). */
#define NPF_P   (1ull << 0)
#define NPF_RW  (1ull << 1)
#define NPF_US  (1ull << 2)
#define NPF_ID  (1ull << 4)
#define NPF_GPA (1ull << 32) /* on the final guest-physical address */

/* The NPT entries' accessed flag (dirty is the next bit). */
#define NPT_A_BIT 5

static struct {
	uint64_t l5_layouts, leaf_1g_young;
} O;

/* ------------------------------------------------------------ probes */

/*
 * A nested page fault on the final guest-physical address: a user access
 * (US) whatever the guest's CPL, P when the leaf was present (the access
 * lacked W, or X: NX set), RW for a store, ID for a fetch.
 */
static void npf(const struct xblob_probe *p, struct expect *e,
		const struct slat_leaf *l)
{
	unsigned a = access_of(p->kind);
	e->reason = VMEXIT_NPF;
	e->qual = (l ? NPF_P : 0) | NPF_US | NPF_GPA |
		  (a == SLAT_ACCESS_WRITE ? NPF_RW : 0) |
		  (a == SLAT_ACCESS_EXEC_EL1 ? NPF_ID : 0);
}

/*
 * QEMU 7.2 sets the accessed flag of a 1 GiB leaf before it checks the
 * leaf's permissions (its walk sets A on every PDPTE it reads, leaf or
 * not), so a store to a read-only or a fetch from a no-execute 1 GiB leaf
 * leaves it accessed; libslat, like the architecture, leaves a leaf alone
 * when the access faults, and so does QEMU for 2 MiB and 4 KiB leaves
 * (docs/oracle.md). The driver sets the flag on the host copy too,
 * counting it, so that every other bit stays compared.
 */
static void young_1g_leaf(struct gen *g, const struct layout_rec *r,
			  const struct xblob_probe *p, const struct expect *e,
			  const uint64_t *pre)
{
	(void)pre;
	if (e->level != 1)
		return;
	uint64_t *w = (uint64_t *)(g->o.h.arena +
				   (p->desc_pa[1 - r->start_level] - g->o.h.pa_base));
	if (!(*w & 1ull << NPT_A_BIT)) {
		*w |= 1ull << NPT_A_BIT;
		O.leaf_1g_young++;
	}
}

/* ------------------------------------------------------------ layouts */

/* Guest-physical bits and levels: 4-level walks, and 5-level ones (CR4.LA57
 * on the host) of a small and of the whole 57-bit space. */
static const struct { unsigned ia, levels; } shapes[] = {
	{ 39, 4 }, { 40, 4 }, { 48, 4 }, { 40, 5 }, { 57, 5 },
};
#define NR_SHAPES (sizeof(shapes) / sizeof(shapes[0]))

/* Layout @id's shape: fixed ones take the 4-level shapes in turn, then
 * 5-level; a random one draws it first from its seed. */
static unsigned layout_shape(uint32_t id, uint64_t *seed)
{
	*seed = X.seed ^ (uint64_t)id * 0x9e3779b97f4a7c15ull;
	rng = *seed;
	if (id < FIXED_LAYOUTS)
		return id < 4 ? id % 3 : 3 + id % 2;
	return (unsigned)below(NR_SHAPES);
}

/* Change the first translating probe's leaf (--corrupt): a 4K leaf one
 * page off, or any leaf without US (a supervisor page: every nested access
 * is a user access, so it must fault). */
static void corrupt(const struct layout_rec *r, uint8_t *pages, uint32_t nr)
{
	bool pa = !strcmp(X.corrupt, "pa");
	for (uint32_t i = 0; i < r->nr_probes && !X.corrupted; i++) {
		const struct expect *e = &r->exp[i];
		if (e->reason != VMEXIT_VMMCALL || (pa && e->level != 3))
			continue;
		uint64_t at = r->probes[i].desc_pa[e->level - r->start_level];
		uint64_t *d = page_word(pages, nr, at);
		*d ^= pa ? PAGE : NPF_US;
		X.corrupted++;
		printf("corrupted layout %u: the entry at %#" PRIx64 " is now %#" PRIx64 "\n",
		       r->id, at, *d);
	}
}

/* Layout @id (fixed below FIXED_LAYOUTS, else random from its seed). */
static void build_layout(uint32_t id)
{
	struct gen g;
	uint64_t seed;
	unsigned s = layout_shape(id, &seed);
	bool fixed = id < FIXED_LAYOUTS;
	open_gen(&g, SLAT_FMT_NPT, shapes[s].ia, shapes[s].levels, SLAT_FEAT_HWDIRTY);
	struct layout_rec *r = fill_layout(&g, id, seed);
	snprintf(r->desc, sizeof(r->desc),
		 "%s npt-%u %u-level window %#" PRIx64 " ops %s seed %#" PRIx64,
		 fixed ? "fixed" : "random", shapes[s].ia, shapes[s].levels, g.iwin,
		 g.ops[0] ? g.ops : "none", seed);
	O.l5_layouts += shapes[s].levels == 5;
	put_layout(&g, r, slat_npt_ncr3(&g.o.t));
}

/* ------------------------------------------------------------ QEMU */

/* QEMU: TCG (any host), -cpu max (SVM with nested paging, LA57), 2 GiB of
 * RAM (the test RAM ends at 2 GiB), the program as a Multiboot kernel, the
 * blob at XBLOB_ADDR, port 0xE9 into a file, isa-debug-exit to end.
 * Returns its output, the program's lines then QEMU's own. */
static char *run_qemu(const char *dir, size_t *len)
{
	char blob[4096], loader[4200];
	snprintf(blob, sizeof(blob), "%s/blob.bin", dir);
	snprintf(loader, sizeof(loader), "loader,file=%s,addr=%#llx,force-raw=on",
		 blob, XBLOB_ADDR);
	write_file(blob, X.blob, X.blen);
	char *argv[] = { (char *)X.emu, "-M", "pc", "-accel", "tcg", "-cpu", "max",
			 "-m", "2G", "-smp", "1", "-nographic", "-monitor", "none",
			 "-serial", "none", "-nic", "none", "-no-reboot",
			 "-debugcon", "file:out.txt",
			 "-device", "isa-debug-exit,iobase=0xf4,iosize=4",
			 "-kernel", (char *)X.guest, "-device", loader, NULL };
	return xrun_exec(dir, argv, false, len);
}

/*
 * What the layouts assume of QEMU's CPU: SVM with nested paging
 * (CPUID 8000000AH:EDX[0]), 40 physical address bits, and the paging
 * levels the blob asked for (LA57: CPUID 7.0:ECX[16], then CR4.LA57).
 */
static void check_banner(void)
{
	uint64_t svm, asids;
	unsigned maxphy, la57cpu, la57on;
	if (sscanf(X.banner, "NORACLE svm=%" SCNx64 " asids=%" SCNx64 " maxphy=%x"
		   " la57cpu=%x la57=%x", &svm, &asids, &maxphy, &la57cpu, &la57on) != 5)
		die("no banner from the program");
	if (!(svm & 1) || maxphy != XMAXPHY || la57on != (X.flags & XBLOB_NPT_LA57))
		die("QEMU's CPU lacks what the layouts use: %s", X.banner);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: oracle_npt --guest BIN [--layouts N] [--seed N] [--only ID]\n"
		"                  [--qemu PATH] [--keep DIR] [--corrupt pa|us] [--verbose]\n"
		"Checks AMD NPT tables libslat builds against QEMU's nested paging walker\n"
		"(qemu-system-x86_64 -cpu max, TCG): %u fixed layouts, then random ones\n"
		"(N in all, default 60; 4- and 5-level), %u probes each.\n"
		"--corrupt changes one leaf (a 4K leaf one page off, or US clear) after\n"
		"libslat's expectations are made: the run passes only if it is reported.\n"
		"Exit: 0 agree, 1 disagreement, 77 skipped (no QEMU or no program).\n",
		FIXED_LAYOUTS, PROBES_PER_LAYOUT);
}

static void print_summary(void)
{
	printf("%s\n", X.banner);
	printf("qemu NPT oracle: %" PRIu64 " layouts (%u fixed; %" PRIu64 " 5-level),"
	       " seed %#" PRIx64 ", %u boot%s, %.1f s in QEMU\n", X.layouts,
	       FIXED_LAYOUTS, O.l5_layouts, X.seed, X.boots, X.boots == 1 ? "" : "s",
	       X.seconds);
	xrun_print_walks("nested page faults");
	printf("  accessed flags QEMU set on 1 GiB leaves of faulting accesses"
	       " (libslat does not): %" PRIu64 "\n", O.leaf_1g_young);
}

/* The layouts of one paging mode (5-level: the host runs with LA57), in
 * as many boots as the blob's size takes. */
static void run_mode(uint64_t first, uint64_t end, bool la57)
{
	for (uint64_t id = first; id < end; id++) {
		uint64_t seed;
		if ((shapes[layout_shape((uint32_t)id, &seed)].levels == 5) != la57)
			continue;
		build_layout((uint32_t)id);
		if (X.blen > XBLOB_MAX / 2)
			xrun_flush(la57 ? XBLOB_NPT_LA57 : 0);
	}
	xrun_flush(la57 ? XBLOB_NPT_LA57 : 0);
}

int main(int argc, char **argv)
{
	uint64_t first, end;
	X.name = "oracle_npt";
	X.emu_opt = "--qemu";
	X.emu = "qemu-system-x86_64";
	X.emu_name = "QEMU";
	X.table_name = "NPT";
	X.fault_name = "#NPF";
	X.banner_tag = "NORACLE ";
	X.corrupts[0] = "pa";
	X.corrupts[1] = "us";
	X.code_call = VMEXIT_VMMCALL;
	X.code_fault = VMEXIT_NPF;
	X.a_bit = NPT_A_BIT;
	X.npt = true;
	X.expect_fault = npf;
	X.fault_hook = young_1g_leaf;
	X.corrupt_hook = corrupt;
	X.usage = usage;
	X.check_banner = check_banner;
	X.run = run_qemu;
	X.seed = 0x5e7a;
	if (xrun_start(argc, argv, "qemu-system-x86", &first, &end))
		return SKIP;
	run_mode(first, end, false);
	run_mode(first, end, true);
	print_summary();
	return xrun_end();
}
