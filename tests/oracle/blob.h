/* SPDX-License-Identifier: MIT */
/*
 * The oracle blob: what the host driver writes and the EL2 program reads
 * (loaded at ORACLE_BLOB_ADDR). Every field is little-endian; every record
 * is a multiple of 8 bytes.
 *
 *   struct oracle_hdr
 *   nr_layouts x {
 *     struct oracle_layout
 *     nr_pages  x { u64 pa; u8 page[granule]; }   table pages, root first
 *     nr_probes x struct oracle_probe
 *   }
 *
 * A layout is a stage-2 table (regime ORACLE_STAGE2: VTCR_EL2, VTTBR_EL2,
 * probes from EL1/EL0 or AT S12E1*) or a stage-1 table of EL2's own
 * regime with HCR_EL2.E2H = 0 (ORACLE_EL2: TCR_EL2, TTBR0_EL2, MAIR_EL2,
 * probes made by the EL2 program itself with SCTLR_EL2.M set, or AT
 * S1E2*).
 *
 * Output (PL011 UART, one line each):
 *   "ORACLE hafdbs=<n> parange=<n>"
 *   per layout "L <id>", then per probe
 *     AT probes:    "A <PAR_EL1>"
 *     EL1 probes:   "E <code> <ESR_EL2> <FAR_EL2> <HPFAR_EL2> <x0> <ESR_EL1>
 *                    <ELR_EL1> <word at check_pa> <descriptor at desc_pa>"
 *     EL2 probes:   the same, with ELR_EL2 in place of ELR_EL1
 *   "END <layouts>"
 * numbers in hex without 0x. <code>: the exception that ended the probe,
 * by ESR_EL2.EC: H an HVC (the stub's, or the EL1 vectors'), D a Data
 * Abort, I an Instruction Abort (from EL1/EL0, or taken at EL2 itself), K
 * a BRK at EL2 (an EL2 fetch that reached its target), X anything else.
 */
#ifndef SLAT_ORACLE_BLOB_H
#define SLAT_ORACLE_BLOB_H

#include <stdint.h>

#define ORACLE_BLOB_ADDR  0x41000000ull
#define ORACLE_BLOB_MAX   0x07000000ull /* up to the table window */
#define ORACLE_TABLE_BASE 0x48000000ull /* the hosted arena's pa_base */
#define ORACLE_TABLE_MAX  0x01000000ull
/* Guest RAM (-m 1G: 0x40000000..0x80000000) that EL1 probes may reach. */
#define ORACLE_TEST_RAM   0x60000000ull
#define ORACLE_TEST_SIZE  0x20000000ull
/* The program's own image, identity-mapped in layouts with EL1 probes. */
#define ORACLE_IMAGE_BASE 0x40000000ull
#define ORACLE_IMAGE_SIZE 0x00400000ull

#define ORACLE_MAGIC  0x31524f54414c53ull /* "SLATOR1\0" */
#define ORACLE_LAYOUT_MAGIC 0x5459414cu      /* "LAYT" */

/* BRK #0x77: what an instruction-fetch target holds. */
#define ORACLE_BRK_INSN 0xd4200ee0u

struct oracle_hdr {
	uint64_t magic;
	uint32_t nr_layouts;
	uint32_t reserved;
	uint64_t bytes; /* the whole blob */
};

enum oracle_regime {
	ORACLE_STAGE2 = 0, /* a stage-2 table for EL1&0 */
	ORACLE_EL2 = 1,    /* EL2's own stage 1, HCR_EL2.E2H = 0 */
};

struct oracle_layout {
	uint32_t magic;
	uint32_t id;
	uint32_t granule;
	uint32_t nr_pages;
	uint32_t nr_probes;
	uint32_t regime; /* enum oracle_regime */
	uint64_t vtcr;  /* VTCR_EL2 (stage 2) */
	uint64_t vttbr; /* VTTBR_EL2 (VMID 1) */
	uint64_t hcr;   /* HCR_EL2 */
	uint64_t tcr;   /* TCR_EL2 (EL2) */
	uint64_t ttbr;  /* TTBR0_EL2 */
	uint64_t mair;  /* MAIR_EL2 */
};

enum oracle_kind {
	ORACLE_AT_R = 1,     /* AT S12E1R */
	ORACLE_AT_W = 2,     /* AT S12E1W */
	ORACLE_LOAD = 3,     /* LDR at EL1 */
	ORACLE_STORE = 4,    /* STR at EL1 */
	ORACLE_FETCH = 5,    /* BLR at EL1 */
	ORACLE_FETCH_EL0 = 6,/* BR at EL0 */
	/* EL2 layouts: through EL2's own stage 1 */
	ORACLE_AT_E2R = 7,   /* AT S1E2R */
	ORACLE_AT_E2W = 8,   /* AT S1E2W */
	ORACLE_EL2_LOAD = 9, /* LDR at EL2 */
	ORACLE_EL2_STORE = 10, /* STR at EL2 */
	ORACLE_EL2_FETCH = 11, /* BLR at EL2 */
};

struct oracle_probe {
	uint64_t ipa;
	uint32_t kind;
	uint32_t reserved;
	uint64_t poke_pa;  /* before the probe: *poke_pa = poke_val (0: none) */
	uint64_t poke_val;
	uint64_t check_pa; /* after: report the word there (0: none) */
	uint64_t desc_pa;  /* after: report the descriptor there (0: none) */
	uint64_t value;    /* STORE: what EL1 writes */
};

#endif
