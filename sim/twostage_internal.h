/* SPDX-License-Identifier: MIT */
/* Two-stage model internals (twostage*.c). */
#ifndef SLAT_SIM_TWOSTAGE_INTERNAL_H
#define SLAT_SIM_TWOSTAGE_INTERNAL_H

#include <slat/hosted.h>
#include <slat/twostage.h>

#define TS_PAGE        4096ull
#define TS_IA_BITS     48       /* both stages: four levels from level 0 */
#define TS_START_LEVEL 0
#define TS_OA_MASK     0x0000fffffffff000ull
#define TS_AF          (1ull << 10)
#define TS_S2_ARENA_PA (1ull << 30)   /* stage-2 table pages */
#define TS_RAM_PA      (64ull << 30)  /* guest RAM in host-physical space */
#define TS_S1_CACHE    64             /* guest table pages kept ready */
#define TS_MAX_TLBI_OPS 512           /* Linux: larger ranges flush the ASID */

/* A combined (stage 1 + 2) TLB entry for one 4K page. */
struct ts_tlbe {
	bool valid, global;
	uint8_t s1_shift;      /* the stage-1 leaf's span, for TLBI by VA */
	uint16_t vmid, asid;
	uint64_t va, ipa, pa;  /* page addresses */
	uint32_t s1_attrs, s2_perms;
	uint64_t stamp;        /* last use, for LRU in the set */
};

/* A stage-2-only entry (IPA -> PA), used by walks. */
struct ts_s2e {
	bool valid;
	uint8_t shift;
	uint16_t vmid;
	uint64_t ipa, pa;      /* leaf-aligned */
	uint32_t perms;
};

struct ts_vcpu {
	struct ts_tlbe *tlb;
	struct ts_s2e *s2tlb;
	uint64_t clock;
	struct slat_ts_as *user, *kernel;
};

struct slat_ts {
	struct slat_ts_config cfg;
	uint8_t *ram;
	uint64_t ram_pa;
	uint32_t *free_frames, nr_free;
	uint32_t *frame_rc;         /* the core's refcount of table frames */
	struct slat_hosted s2_arena;
	struct slat_table s2;
	bool s2_ready;
	struct slat_page_cache s1_cache; /* guest frames for stage-1 tables */
	struct ts_vcpu vcpu[SLAT_TS_MAX_VCPUS];
	uint32_t current;           /* vCPU running the guest's table code */
	struct slat_ts_stats st;
};

struct slat_ts_as {
	struct slat_ts *ts;
	struct slat_table t;
	bool kernel;
	uint16_t asid;
	uint64_t root_ipa;
	uint64_t pages;             /* table frames in use */
};

void *ts_host_of_pa(const struct slat_ts *ts, uint64_t pa);
void *ts_host_of_ipa(const struct slat_ts *ts, uint64_t ipa);
uint64_t ts_ipa_of_host(const struct slat_ts *ts, const void *va);
uint32_t *ts_frame_refcount(struct slat_ts *ts, const void *va);
void ts_s1_cache_drain(struct slat_ts *ts);

#endif
