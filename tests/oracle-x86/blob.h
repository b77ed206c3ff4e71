/* SPDX-License-Identifier: MIT */
/*
 * The EPT oracle's disk image: what the host driver writes and the bare-
 * metal x86-64 program (guest/) reads under Bochs. Every field is
 * little-endian; every record is a multiple of 8 bytes. The NPT oracle
 * (guest-npt/, under QEMU) takes the same blob and memory map, loaded by
 * QEMU at XBLOB_ADDR, with the differences marked "NPT".
 *
 *   sector 0            the boot sector (guest/boot.S)
 *   sectors 1..         the program, loaded at 0x7e00 by the boot sector
 *   XBLOB_LBA..         the blob, read by the program over ATA PIO:
 *     struct xblob_hdr
 *     nr_layouts x {
 *       struct xblob_layout
 *       nr_pages  x { u64 pa; u8 page[4096]; }   table pages, root first
 *       nr_probes x struct xblob_probe
 *     }
 *
 * Output (port 0xE9, one line each; numbers in hex without 0x):
 *   "XORACLE basic=<IA32_VMX_BASIC> ept=<IA32_VMX_EPT_VPID_CAP>
 *    proc2=<IA32_VMX_PROCBASED_CTLS2> maxphy=<CPUID.80000008H:EAX[7:0]>"
 *   per layout "L <id>", then per probe
 *     "P <exit reason> <exit qualification> <guest-physical address>
 *      <guest RAX> <guest RIP> <exit interruption information>
 *      <guest linear address> <word at check_pa> <desc[0]> .. <desc[4]>"
 *   "END <layouts>"
 * or "FAIL <what> <value>" when the program cannot go on.
 */
#ifndef SLAT_XORACLE_BLOB_H
#define SLAT_XORACLE_BLOB_H

#include <stdint.h>

/* Bochs RAM (megs: 2048), host-physical, identity-mapped by the program. */
#define XBLOB_LBA        2048u           /* the blob: 1 MiB into the disk */
#define XBLOB_ADDR       0x04000000ull   /* where the program reads it */
#define XBLOB_MAX        0x0c000000ull   /* up to the table window */
#define XTABLE_BASE      0x01000000ull   /* the hosted arena's pa_base */
#define XTABLE_MAX       0x01000000ull
/* The guest's code and page tables: GPA == HPA, mapped RWX in every
 * layout as one 2 MiB leaf. */
#define XGUEST_BASE      0x00200000ull
#define XGUEST_SIZE      0x00200000ull
#define XGUEST_LOAD      (XGUEST_BASE + 0x00)  /* mov (%rdi),%rax; vmcall */
#define XGUEST_STORE     (XGUEST_BASE + 0x10)  /* mov %rsi,(%rdi); vmcall */
#define XGUEST_FETCH     (XGUEST_BASE + 0x20)  /* jmp *%rdi */
#define XGUEST_PML4      (XGUEST_BASE + 0x100000)
#define XGUEST_PDPT      (XGUEST_PML4 + 0x1000)
#define XGUEST_PD0       (XGUEST_PML4 + 0x2000) /* VA 0..1G: 2M identity */
#define XGUEST_PD1       (XGUEST_PML4 + 0x3000) /* VA 1G..2G */
#define XGUEST_PT        (XGUEST_PML4 + 0x4000) /* PT[0]: the probed page */
#define XGUEST_WINDOW    0x40000000ull  /* guest VA of the probed page */
/* Host-physical memory that leaves map and probes reach (1 GiB leaves). */
#define XTEST_RAM        0x40000000ull
#define XTEST_SIZE       0x40000000ull

#define XBLOB_MAGIC        0x3154504554414c53ull /* "SLATEPT1" */
#define XBLOB_LAYOUT_MAGIC 0x5459414cu           /* "LAYT" */

/* A fetch target: mov $imm32,%eax; vmcall (8 bytes, imm32 in bits 8..39). */
#define XFETCH_CODE(tag) (0xc1010f00000000b8ull | ((uint64_t)(uint32_t)(tag) << 8))
/* NPT: mov $imm32,%eax; vmmcall. */
#define XFETCH_CODE_NPT(tag) (0xd9010f00000000b8ull | ((uint64_t)(uint32_t)(tag) << 8))

/* NPT: struct xblob_hdr.flags: the program runs with CR4.LA57 (5-level
 * layouts; the nested walk has the host's paging levels). */
#define XBLOB_NPT_LA57 1u

struct xblob_hdr {
	uint64_t magic;
	uint32_t nr_layouts;
	uint32_t flags; /* NPT: XBLOB_NPT_LA57; EPT: 0 */
	uint64_t bytes; /* the whole blob */
};

struct xblob_layout {
	uint32_t magic;
	uint32_t id;
	uint32_t nr_pages;
	uint32_t nr_probes;
	uint64_t eptp;   /* VMCS EPT pointer; NPT: the VMCB's nCR3 */
	uint32_t proc2;  /* secondary processor-based controls to add */
	uint32_t reserved;
};

enum xblob_kind {
	XPROBE_LOAD = 1,  /* mov (%rdi),%rax */
	XPROBE_STORE = 2, /* mov %rsi,(%rdi) */
	XPROBE_FETCH = 3, /* jmp *%rdi */
};

#define XPROBE_DESCS 5

struct xblob_probe {
	uint64_t gpa;
	uint32_t kind;
	uint32_t reserved;
	uint64_t poke_pa;  /* before: *poke_pa = poke_val (0: none) */
	uint64_t poke_val;
	uint64_t check_pa; /* after: report the word there (0: none) */
	uint64_t value;    /* STORE: what the guest writes */
	uint64_t desc_pa[XPROBE_DESCS]; /* after: report these (0: none) */
};

#endif
