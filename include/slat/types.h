/* SPDX-License-Identifier: MIT */
/*
 * slat basic types: typed addresses, attributes, status codes.
 *
 * Freestanding: only <stdint.h>, <stdbool.h> and <stddef.h>.
 */
#ifndef SLAT_TYPES_H
#define SLAT_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slat/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Guest-physical (intermediate physical) and host-physical addresses are
 * distinct types so that passing one for the other does not compile.
 */
typedef struct { uint64_t ipa; } slat_ipa_t;
typedef struct { uint64_t pa; } slat_pa_t;

/* Without compound literals: the headers are C++ too. */
static inline slat_ipa_t slat_ipa(uint64_t v)
{
	slat_ipa_t a;
	a.ipa = v;
	return a;
}

static inline slat_pa_t slat_pa(uint64_t v)
{
	slat_pa_t a;
	a.pa = v;
	return a;
}
static inline uint64_t slat_ipa_v(slat_ipa_t a) { return a.ipa; }
static inline uint64_t slat_pa_v(slat_pa_t a) { return a.pa; }

/* One hardware descriptor, whatever the format. */
typedef uint64_t slat_pte_t;

/*
 * Status codes. Zero and positive values are success; negative values are
 * errors. Every error returned for bad input leaves the table unchanged.
 */
enum slat_status {
	SLAT_OK = 0,
	/* The range already was as asked; nothing was written. map: every page
	 * had this translation (the same output address and memory type;
	 * leaves that differ only in permissions are left alone: use relax);
	 * relax, mkyoung, flush: nothing to add, set or clean. */
	SLAT_NOTHING_TO_DO = 1,
	/* slat_test_clear_young(): a leaf in the range was young (SLAT_OK:
	 * none was). */
	SLAT_WAS_YOUNG = 2,

	SLAT_E_ALIGN = -1,   /* address or size not aligned to the granule */
	SLAT_E_RANGE = -2,   /* empty range, wraps, beyond the IPA or PA size */
	SLAT_E_ATTR = -3,    /* invalid attribute combination for this format */
	SLAT_E_CONFIG = -4,  /* configuration not supported */
	SLAT_E_NOMEM = -5,   /* page cache ran out; the table stays valid */
	SLAT_E_EXISTS = -6,  /* SLAT_MAP_NO_REPLACE met a different mapping */
	SLAT_E_AGAIN = -7,   /* lost a race with a concurrent walker: retry */
	SLAT_E_NOENT = -8,   /* nothing is mapped there */
	SLAT_E_INVAL = -9,   /* bad argument (unknown flag or policy, NULL) */
	SLAT_E_VERSION = -10, /* hooks of another struct slat_mm_ops layout */
};

/* A short English description of a status code ("unknown status" if none). */
SLAT_API const char *slat_strerror(int status);

/*
 * Leaf attributes, format-neutral. Each format encodes them exactly as its
 * architecture requires and refuses what it cannot express (SLAT_E_ATTR).
 */
#define SLAT_R        (1u << 0) /* readable */
#define SLAT_W        (1u << 1) /* writable */
#define SLAT_XK       (1u << 2) /* executable at EL1 / supervisor */
#define SLAT_XU       (1u << 3) /* executable at EL0 / user */
#define SLAT_X        (SLAT_XK | SLAT_XU)
#define SLAT_RW       (SLAT_R | SLAT_W)
#define SLAT_RWX      (SLAT_R | SLAT_W | SLAT_X)
#define SLAT_PERMS    (SLAT_R | SLAT_W | SLAT_X)

/* Memory type, a two-bit field. */
#define SLAT_MT_SHIFT      4
#define SLAT_MT_MASK       (3u << SLAT_MT_SHIFT)
#define SLAT_MT_NORMAL     (0u << SLAT_MT_SHIFT) /* Normal write-back */
#define SLAT_MT_NORMAL_NC  (1u << SLAT_MT_SHIFT) /* Normal non-cacheable */
#define SLAT_MT_DEVICE     (2u << SLAT_MT_SHIFT) /* Device-nGnRE / UC */
#define SLAT_MT(attrs)     ((attrs) & SLAT_MT_MASK)

/* Four software bits, stored in the descriptor's software-defined field. */
#define SLAT_SW_SHIFT      8
#define SLAT_SW_MASK       (0xfu << SLAT_SW_SHIFT)
#define SLAT_SW(n)         (((uint32_t)(n) & 0xfu) << SLAT_SW_SHIFT)

/* Reported by lookup: the access flag is set. map always installs young. */
#define SLAT_YOUNG         (1u << 12)
/* Reported by lookup: hardware dirty state says written (Arm DBM+S2AP.W,
 * EPT D bit). A writable leaf is installed dirty. */
#define SLAT_DIRTY         (1u << 13)

/* EPT only: ignore the guest PAT (bit 6), suppress #VE (bit 63). */
#define SLAT_IPAT          (1u << 16)
#define SLAT_SVE           (1u << 17)

/* Arm stage 1 only: accessible from EL0 (AP[1]), not global (nG: tagged
 * with the ASID). */
#define SLAT_USER          (1u << 18)
#define SLAT_NG            (1u << 19)

/* Everything a caller may pass to map (each format refuses what it lacks). */
#define SLAT_ATTR_INPUT    (SLAT_PERMS | SLAT_MT_MASK | SLAT_SW_MASK | \
			    SLAT_IPAT | SLAT_SVE | SLAT_USER | SLAT_NG)

/* Levels: the last level is always 3 (4K pages at 4K granule); the start
 * level depends on the configuration. */
#define SLAT_LAST_LEVEL    3
#define SLAT_LEVEL_ANY     (-99) /* TLBI level hint: unknown */

#ifdef __cplusplus
}
#endif
#endif
