/* SPDX-License-Identifier: MIT */
/* A minimal test harness for the simulator's tests. */
#ifndef SLAT_SIM_TEST_CHECK_H
#define SLAT_SIM_TEST_CHECK_H

#include <slat/sim.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__,      \
				__LINE__, #cond);                            \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
			check_failures++;                                    \
		}                                                            \
	} while (0)

#define REQUIRE(cond, ...)                                                   \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__,      \
				__LINE__, #cond);                            \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
			exit(1);                                             \
		}                                                            \
	} while (0)

#define RUN(test)                                                            \
	do {                                                                 \
		int before_ = check_failures;                                \
		test();                                                      \
		printf("%s %s\n", check_failures == before_ ? "ok  " : "FAIL", \
		       #test);                                               \
		fflush(stdout);                                              \
	} while (0)

static inline struct slat_vm *new_vm(const struct slat_vm_config *cfg)
{
	int err;
	struct slat_vm *vm = slat_vm_create(cfg, &err);

	REQUIRE(vm, "slat_vm_create: %d", err);
	return vm;
}

static inline int add_slot(struct slat_vm *vm, uint32_t id, uint64_t gpa,
			   uint64_t size, const char *backing, uint32_t flags)
{
	struct slat_vm_memslot m = {
		.slot = id, .flags = flags, .guest_phys_addr = gpa,
		.memory_size = size, .backing = backing,
	};
	return slat_vm_set_user_memory_region(vm, &m);
}

#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* The table formats every simulator test runs on. */
struct test_fmt {
	const char *name;
	enum slat_format_id format;
	uint32_t granule;
	uint8_t ia_bits;
};

static const struct test_fmt test_fmts[] = {
	{ "arm-4k", SLAT_FMT_ARM_S2, 4096, 40 },
	{ "arm-16k", SLAT_FMT_ARM_S2, 16384, 40 },
	{ "arm-64k", SLAT_FMT_ARM_S2, 65536, 42 },
	{ "ept-4level", SLAT_FMT_EPT, 4096, 48 },
	{ "ept-5level", SLAT_FMT_EPT, 4096, 57 },
	{ "npt-4level", SLAT_FMT_NPT, 4096, 48 },
	{ "npt-5level", SLAT_FMT_NPT, 4096, 57 },
};
#define NR_TEST_FMTS (sizeof(test_fmts) / sizeof(test_fmts[0]))

/* The format the current test runs on (set by RUN_FMTS). */
static const struct test_fmt *cur_fmt = &test_fmts[0];

/* x86 (EPT, NPT): no invalidation by address, blocks split on a fault. */
static inline bool fmt_x86(void)
{
	return cur_fmt->format == SLAT_FMT_EPT ||
	       cur_fmt->format == SLAT_FMT_NPT;
}

/* A VM configuration for the current format with @features. */
static inline struct slat_vm_config fmt_config(uint32_t features)
{
	struct slat_vm_config cfg = {
		.table = { .format = cur_fmt->format, .granule = cur_fmt->granule,
			   .ia_bits = cur_fmt->ia_bits, .features = features },
	};
	/* NPT's A and D are always the CPU's */
	if (cur_fmt->format == SLAT_FMT_NPT)
		cfg.table.features |= SLAT_FEAT_HWDIRTY;
	return cfg;
}

static inline struct slat_vm *new_fmt_vm(void)
{
	struct slat_vm_config cfg = fmt_config(0);

	return new_vm(&cfg);
}

/* The largest leaf of @vm's table no larger than @limit. */
static inline uint64_t leaf_at_most(struct slat_vm *vm, uint64_t limit)
{
	struct slat_table *t = slat_vm_table(vm);
	uint64_t best = 0;

	for (int l = 0; l <= 3; l++)
		if ((t->geo.leaf_levels >> l) & 1) {
			uint64_t sz = slat_level_size(t, l);

			if (sz <= limit && sz > best)
				best = sz;
		}
	return best;
}

/* The smallest block (leaf larger than the granule) of @vm's table. */
static inline uint64_t smallest_block(struct slat_vm *vm)
{
	struct slat_table *t = slat_vm_table(vm);

	return slat_level_size(t, 2);
}

/* Run @test once per table format. */
#define RUN_FMTS(test)                                                       \
	do {                                                                 \
		for (size_t f_ = 0; f_ < NR_TEST_FMTS; f_++) {               \
			int before_ = check_failures;                        \
			cur_fmt = &test_fmts[f_];                            \
			test();                                              \
			printf("%s %s [%s]\n",                               \
			       check_failures == before_ ? "ok  " : "FAIL",  \
			       #test, cur_fmt->name);                        \
			fflush(stdout);                                      \
		}                                                            \
		cur_fmt = &test_fmts[0];                                     \
	} while (0)

#endif
