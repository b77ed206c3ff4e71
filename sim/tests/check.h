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

#endif
