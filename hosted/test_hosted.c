/* SPDX-License-Identifier: MIT */
/* Unit tests of the hosted arena: caches, frees, roots, hooks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slat/hosted.h>

#define PA_BASE 0x40010000ull /* 64 KiB aligned, not 1 MiB aligned */

static bool page_is_zero(const void *va, uint32_t bytes)
{
	const uint8_t *p = va;

	for (uint32_t i = 0; i < bytes; i++)
		if (p[i])
			return false;
	return true;
}

static void test_init_args(void **state)
{
	struct slat_hosted h;

	(void)state;
	assert_int_equal(slat_hosted_init(&h, 1 << 20, 8192, PA_BASE),
			 SLAT_E_INVAL);
	assert_int_equal(slat_hosted_init(&h, 4096 * 3 + 1, 4096, PA_BASE),
			 SLAT_E_INVAL);
	assert_int_equal(slat_hosted_init(&h, 0, 4096, PA_BASE), SLAT_E_INVAL);
	assert_int_equal(slat_hosted_init(&h, 1 << 20, 4096, PA_BASE + 4096),
			 SLAT_E_INVAL);
	assert_int_equal(slat_hosted_init(&h, 1 << 20, 4096, PA_BASE), SLAT_OK);
	assert_int_equal(h.nr_pages, 256);
	assert_int_equal(h.nr_free, 256);
	assert_int_equal(h.pages_in_use, 0);
	/* The host address follows PA alignment up to 1 MiB. */
	assert_int_equal((uintptr_t)h.arena & 0xfffff, PA_BASE & 0xfffff);
	slat_hosted_fini(&h);
}

/* A cache set up over a struct full of old bytes starts with an empty
 * memo: the fault path must never take another table's leaf encoding. */
static void test_cache_init_empties_the_memo(void **state)
{
	struct slat_page_cache c;

	(void)state;
	memset(&c, 0x5a, sizeof(c));
	c.memo.table_id = 1;
	c.memo.attrs = SLAT_RW;
	assert_int_equal(slat_hosted_cache_init(&c, 8), SLAT_OK);
	assert_int_equal(c.memo.table_id, 0);
	assert_int_equal(c.nr, 0);
	assert_null(c.stats);
	for (int level = 0; level <= SLAT_LAST_LEVEL; level++)
		assert_int_equal(c.memo.leaf[level], 0);
	slat_hosted_cache_fini(&c);
}

static void test_topup_pop_free_drain(void **state)
{
	const struct slat_mm_ops *ops = slat_hosted_ops();
	struct slat_page_cache c;
	struct slat_hosted h;
	void *a, *b;

	(void)state;
	assert_int_equal(slat_hosted_init(&h, 64 * 4096, 4096, PA_BASE),
			 SLAT_OK);
	assert_int_equal(slat_hosted_cache_init(&c, 8), SLAT_OK);
	assert_int_equal(slat_hosted_cache_topup(&h, &c, 100), SLAT_OK);
	assert_int_equal(c.nr, 8); /* at most the capacity */
	assert_int_equal(h.pages_in_use, 8);
	assert_int_equal(slat_hosted_table_pages(&h), 0);
	for (uint32_t i = 0; i < c.nr; i++) {
		assert_true(((uintptr_t)c.pages[i] & 4095) == 0);
		assert_true(page_is_zero(c.pages[i], 4096));
		assert_false(slat_hosted_is_table_page(&h, c.pages[i]));
		assert_int_equal(slat_hosted_page_state(&h, c.pages[i]),
				 SLAT_HOSTED_PAGE_CACHED);
		memset(c.pages[i], 0xa5, 4096); /* dirty it */
	}

	/* What the core does: pop two pages and use them as tables. */
	a = c.pages[--c.nr];
	b = c.pages[--c.nr];
	assert_int_equal(slat_hosted_table_pages(&h), 2);
	assert_true(slat_hosted_is_table_page(&h, a));
	assert_true(slat_hosted_is_table_page(&h, b));
	assert_int_equal(slat_hosted_page_state(&h, a), SLAT_HOSTED_PAGE_TABLE);
	assert_false(slat_hosted_is_table_page(&h, (uint8_t *)a + 8));
	*ops->refcount(&h, a) = 3;
	assert_int_equal(*ops->refcount(&h, a), 3);

	ops->free_page(&h, a);
	assert_int_equal(h.pages_in_use, 7);
	assert_int_equal(slat_hosted_table_pages(&h), 1);
	assert_false(slat_hosted_is_table_page(&h, a));
	assert_int_equal(slat_hosted_page_state(&h, a), SLAT_HOSTED_PAGE_FREE);

	/* A double free is counted, and the free list stays intact. */
	uint32_t nr_free = h.nr_free;
	ops->free_page(&h, a);
	assert_int_equal(h.double_frees, 1);
	assert_int_equal(h.nr_free, nr_free);
	assert_int_equal(h.pages_in_use, 7);

	slat_hosted_cache_drain(&h, &c);
	assert_int_equal(c.nr, 0);
	assert_int_equal(h.pages_in_use, 1);
	assert_int_equal(slat_hosted_table_pages(&h), 1);
	ops->free_page(&h, b);
	assert_int_equal(h.pages_in_use, 0);
	assert_int_equal(h.nr_free, 64);
	assert_int_equal(h.double_frees, 1);

	/* Dirty pages come back zeroed. */
	assert_int_equal(slat_hosted_cache_topup(&h, &c, 8), SLAT_OK);
	for (uint32_t i = 0; i < c.nr; i++)
		assert_true(page_is_zero(c.pages[i], 4096));
	slat_hosted_cache_drain(&h, &c);
	slat_hosted_cache_fini(&c);
	slat_hosted_fini(&h);
}

/* shrink keeps the bottom of a cache and what the core popped; reset
 * takes an empty arena back to its first free-list order. */
static void test_shrink_and_reset(void **state)
{
	struct slat_page_cache c;
	struct slat_hosted h;
	void *first[4], *a;

	(void)state;
	assert_int_equal(slat_hosted_init(&h, 16 * 4096, 4096, PA_BASE),
			 SLAT_OK);
	assert_int_equal(slat_hosted_cache_init(&c, 8), SLAT_OK);
	assert_int_equal(slat_hosted_cache_topup(&h, &c, 4), SLAT_OK);
	memcpy(first, c.pages, sizeof(first));
	assert_int_equal(slat_hosted_reset(&h), SLAT_E_INVAL); /* in use */

	a = c.pages[--c.nr]; /* the core takes one */
	memset(a, 0x5a, 4096);  /* and writes it */
	assert_int_equal(slat_hosted_cache_topup(&h, &c, 8), SLAT_OK);
	assert_int_equal(h.pages_in_use, 9);
	slat_hosted_cache_shrink(&h, &c, 2);
	assert_int_equal(c.nr, 2);
	assert_ptr_equal(c.pages[0], first[0]);
	assert_ptr_equal(c.pages[1], first[1]);
	assert_int_equal(h.pages_in_use, 3);
	assert_int_equal(slat_hosted_table_pages(&h), 1);
	assert_int_equal(slat_hosted_page_state(&h, a), SLAT_HOSTED_PAGE_TABLE);
	assert_int_equal(slat_hosted_page_state(&h, first[0]),
			 SLAT_HOSTED_PAGE_CACHED);
	slat_hosted_cache_shrink(&h, &c, 5); /* already fewer: nothing */
	assert_int_equal(c.nr, 2);
	/* still registered: the pages are told apart from table pages */
	assert_false(slat_hosted_is_table_page(&h, first[1]));

	/* pages given back by shrink, and a written page freed, come back
	 * zeroed */
	slat_hosted_ops()->free_page(&h, a);
	assert_int_equal(slat_hosted_cache_topup(&h, &c, 8), SLAT_OK);
	for (uint32_t i = 0; i < c.nr; i++)
		assert_true(page_is_zero(c.pages[i], 4096));
	slat_hosted_cache_shrink(&h, &c, 2);
	assert_int_equal(slat_hosted_reset(&h), SLAT_E_INVAL); /* registered */
	slat_hosted_cache_drain(&h, &c);
	assert_int_equal(h.pages_in_use, 0);
	assert_int_equal(slat_hosted_reset(&h), SLAT_OK);
	/* the same pages in the same order as on the fresh arena */
	assert_int_equal(slat_hosted_cache_topup(&h, &c, 4), SLAT_OK);
	for (int i = 0; i < 4; i++)
		assert_ptr_equal(c.pages[i], first[i]);
	slat_hosted_cache_drain(&h, &c);
	slat_hosted_cache_fini(&c);
	slat_hosted_fini(&h);
}

static void test_exhaustion_and_distinct(void **state)
{
	const struct slat_mm_ops *ops = slat_hosted_ops();
	struct slat_page_cache c;
	struct slat_hosted h;

	(void)state;
	assert_int_equal(slat_hosted_init(&h, 32 * 4096, 4096, PA_BASE),
			 SLAT_OK);
	assert_int_equal(slat_hosted_cache_init(&c, 40), SLAT_OK);
	assert_int_equal(slat_hosted_cache_topup(&h, &c, 4), SLAT_OK);
	/* Free one popped page twice, then take the whole arena. */
	void *p = c.pages[--c.nr];
	ops->free_page(&h, p);
	ops->free_page(&h, p);
	ops->free_page(&h, p);
	assert_int_equal(h.double_frees, 2);
	assert_int_equal(slat_hosted_cache_topup(&h, &c, 40), SLAT_E_NOMEM);
	assert_int_equal(c.nr, 32);
	assert_int_equal(h.nr_free, 0);
	for (uint32_t i = 0; i < c.nr; i++)
		for (uint32_t j = i + 1; j < c.nr; j++)
			assert_ptr_not_equal(c.pages[i], c.pages[j]);
	assert_null(ops->zalloc_root(&h, 4096));
	/* fini returns the pages of a cache that was not drained. */
	slat_hosted_cache_fini(&c);
	assert_int_equal(h.pages_in_use, 0);
	assert_int_equal(h.nr_free, 32);
	slat_hosted_fini(&h);
}

static void check_roots(uint32_t granule, uint64_t pa_base)
{
	const struct slat_mm_ops *ops = slat_hosted_ops();
	struct slat_page_cache c;
	struct slat_hosted h;
	void *roots[5];

	assert_int_equal(slat_hosted_init(&h, 128ull * granule, granule,
					  pa_base), SLAT_OK);
	assert_int_equal(slat_hosted_cache_init(&c, 16), SLAT_OK);
	assert_int_equal(slat_hosted_cache_topup(&h, &c, 16), SLAT_OK);
	for (int k = 0; k < 5; k++) {
		size_t bytes = (size_t)granule << k;
		uint64_t pa;

		roots[k] = ops->zalloc_root(&h, bytes);
		assert_non_null(roots[k]);
		pa = slat_pa_v(ops->virt_to_phys(&h, roots[k]));
		assert_int_equal(pa % bytes, 0);
		assert_int_equal((uintptr_t)roots[k] % bytes, 0);
		assert_true(page_is_zero(roots[k], (uint32_t)bytes));
		for (size_t off = 0; off < bytes; off += granule) {
			uint8_t *pg = (uint8_t *)roots[k] + off;

			assert_int_equal(slat_hosted_page_state(&h, pg),
					 SLAT_HOSTED_PAGE_ROOT);
			assert_true(slat_hosted_is_table_page(&h, pg));
		}
		memset(roots[k], 0x5a, bytes);
	}
	assert_int_equal(slat_hosted_table_pages(&h), 1 + 2 + 4 + 8 + 16);
	for (int k = 0; k < 5; k++)
		ops->free_root(&h, roots[k], (size_t)granule << k);
	assert_int_equal(slat_hosted_table_pages(&h), 0);
	assert_int_equal(h.pages_in_use, 16);
	assert_int_equal(h.double_frees, 0);
	ops->free_root(&h, roots[0], granule);
	assert_int_equal(h.double_frees, 1);

	/* Freed roots are reused: no leak across many tables. */
	for (int i = 0; i < 1000; i++) {
		void *r = ops->zalloc_root(&h, 16ull * granule);

		assert_non_null(r);
		assert_true(page_is_zero(r, 16 * granule));
		memset(r, 0xff, 16ull * granule);
		ops->free_root(&h, r, 16ull * granule);
	}
	slat_hosted_cache_fini(&c);
	assert_int_equal(h.pages_in_use, 0);
	assert_int_equal(h.nr_free, 128);
	slat_hosted_fini(&h);
}

static void test_roots(void **state)
{
	(void)state;
	check_roots(4096, PA_BASE);
	check_roots(16384, PA_BASE);
	check_roots(65536, PA_BASE);
	check_roots(65536, 0x80000000ull);
}

static void test_addresses(void **state)
{
	const struct slat_mm_ops *ops = slat_hosted_ops();
	struct slat_hosted h;

	(void)state;
	assert_int_equal(slat_hosted_init(&h, 16 * 65536, 65536, PA_BASE),
			 SLAT_OK);
	for (uint64_t off = 0; off < h.arena_bytes; off += 4096 + 8) {
		void *va = h.arena + off;
		slat_pa_t pa = ops->virt_to_phys(&h, va);

		assert_int_equal(slat_pa_v(pa), PA_BASE + off);
		assert_ptr_equal(ops->phys_to_virt(&h, pa), va);
	}
	assert_int_equal(slat_hosted_page_state(&h, h.arena - 1), -1);
	assert_false(slat_hosted_is_table_page(&h, h.arena + h.arena_bytes));
	slat_hosted_fini(&h);
}

struct log {
	struct slat_hosted_event ev[8];
	int n;
};

static void observe(void *arg, const struct slat_hosted_event *ev)
{
	struct log *l = arg;

	if (l->n < 8)
		l->ev[l->n] = *ev;
	l->n++;
}

static void test_observer(void **state)
{
	const struct slat_mm_ops *ops = slat_hosted_ops();
	struct slat_page_cache c;
	struct slat_hosted h;
	struct log l = { .n = 0 };
	void *p;

	(void)state;
	assert_null(ops->free_deferred);
	assert_int_equal(slat_hosted_init(&h, 16 * 4096, 4096, PA_BASE),
			 SLAT_OK);
	/* Without an observer the hooks do nothing. */
	ops->tlbi_vmid(&h);
	slat_hosted_set_observer(&h, observe, &l);
	ops->tlbi_ipa(&h, slat_ipa(0x200000), 2, SLAT_TLBI_LOCAL);
	ops->tlbi_range(&h, slat_ipa(0x400000), 0x10000);
	ops->tlbi_vmid(&h);
	ops->dcache_clean_inval_poc(&h, slat_pa(0x80000000), 4096);
	ops->icache_inval_pou(&h, slat_pa(0x80001000), 8192);
	assert_int_equal(slat_hosted_cache_init(&c, 1), SLAT_OK);
	assert_int_equal(slat_hosted_cache_topup(&h, &c, 1), SLAT_OK);
	p = c.pages[--c.nr];
	ops->free_page(&h, p);

	assert_int_equal(l.n, 6);
	assert_int_equal(l.ev[0].kind, SLAT_EV_TLBI_IPA);
	assert_int_equal(l.ev[0].addr, 0x200000);
	assert_int_equal(l.ev[0].level, 2);
	assert_int_equal(l.ev[0].scope, SLAT_TLBI_LOCAL);
	assert_int_equal(l.ev[1].kind, SLAT_EV_TLBI_RANGE);
	assert_int_equal(l.ev[1].addr, 0x400000);
	assert_int_equal(l.ev[1].size, 0x10000);
	assert_int_equal(l.ev[2].kind, SLAT_EV_TLBI_VMID);
	assert_int_equal(l.ev[3].kind, SLAT_EV_DCACHE_CLEAN_INVAL);
	assert_int_equal(l.ev[3].addr, 0x80000000);
	assert_int_equal(l.ev[3].size, 4096);
	assert_int_equal(l.ev[4].kind, SLAT_EV_ICACHE_INVAL);
	assert_int_equal(l.ev[4].size, 8192);
	assert_int_equal(l.ev[5].kind, SLAT_EV_PAGE_FREE);
	assert_int_equal(l.ev[5].addr, (uintptr_t)p);
	slat_hosted_cache_fini(&c);
	slat_hosted_fini(&h);
}

/*
 * RCU deferred free with the core: a shared map that replaces a table by a
 * block hands the table to free_deferred; its pages come back only after a
 * grace period (slat_hosted_rcu_barrier). A subtree queued twice counts as
 * a double free and is freed once.
 */
static void test_rcu_deferred(void **state)
{
	const struct slat_mm_ops *ops = slat_hosted_ops_rcu();
	const struct slat_config cfg = {
		.format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 40,
		.pa_bits = 48,
	};
	struct slat_page_cache c;
	struct slat_hosted h;
	struct slat_table t;
	uint64_t gib = 1ull << 30;

	(void)state;
	assert_non_null(ops->free_deferred);
	assert_int_equal(slat_hosted_init(&h, 64 * 4096, 4096, PA_BASE),
			 SLAT_OK);
	assert_int_equal(slat_hosted_enable_rcu(&h, &t), SLAT_OK);
	assert_int_equal(slat_table_init(&t, &cfg, ops, &h), SLAT_OK);
	assert_int_equal(slat_hosted_cache_init(&c, 4), SLAT_OK);
	assert_int_equal(slat_hosted_cache_topup(&h, &c, 2), SLAT_OK);
	slat_hosted_rcu_register_thread();

	/* A page at 1 GiB: a level-2 and a level-3 table. */
	assert_int_equal(slat_map(&t, slat_ipa(gib), 4096, slat_pa(0x80000000),
				  SLAT_RW, SLAT_OP(.cache = &c)),
			 SLAT_OK);
	uint64_t root = t.geo.root_pages;
	assert_int_equal(slat_hosted_table_pages(&h), root + 2);
	/* A block with another translation replaces both, shared. */
	slat_hosted_rcu_read_lock();
	assert_int_equal(slat_map(&t, slat_ipa(gib), gib, slat_pa(3 * gib),
				  SLAT_RW,
				  SLAT_OP(.flags = SLAT_SHARED, .cache = &c)),
			 SLAT_OK);
	/* Still in use: a walker may be reading them. */
	assert_int_equal(slat_hosted_table_pages(&h), root + 2);
	slat_hosted_rcu_read_unlock();
	slat_hosted_rcu_barrier();
	assert_int_equal(slat_hosted_deferred_pending(&h), 0);
	assert_int_equal(h.deferred, 1);
	assert_int_equal(slat_hosted_table_pages(&h), root);
	assert_int_equal(h.double_frees, 0);

	/* Queued twice before a grace period: once freed, once counted. */
	assert_int_equal(slat_hosted_cache_topup(&h, &c, 1), SLAT_OK);
	void *p = c.pages[--c.nr];
	ops->free_deferred(&h, p, 3);
	ops->free_deferred(&h, p, 3);
	slat_hosted_rcu_barrier();
	assert_int_equal(h.double_frees, 1);
	assert_int_equal(slat_hosted_page_state(&h, p), SLAT_HOSTED_PAGE_FREE);
	assert_int_equal(slat_hosted_table_pages(&h), root);

	slat_hosted_rcu_unregister_thread();
	slat_hosted_cache_fini(&c);
	slat_table_destroy(&t);
	assert_int_equal(slat_hosted_table_pages(&h), 0);
	slat_hosted_fini(&h);
}

/* Misuse that is a bug in the core aborts: run it in a child. */
enum misuse {
	BAD_PHYS,
	BAD_VIRT,
	FREE_ROOT_AS_PAGE,
	FREE_CACHED_PAGE,
	FREE_UNALIGNED,
	REFCOUNT_OF_FREE,
	DEFERRED_WITHOUT_RCU,
	FREE_CACHED_PAGE_RCU,
};

static void do_misuse(enum misuse m)
{
	const struct slat_mm_ops *ops = slat_hosted_ops();
	struct slat_page_cache c;
	struct slat_hosted h;
	int x;

	if (slat_hosted_init(&h, 16 * 4096, 4096, PA_BASE) ||
	    slat_hosted_cache_init(&c, 2) || slat_hosted_cache_topup(&h, &c, 2))
		_exit(2);
	switch (m) {
	case BAD_PHYS:
		ops->phys_to_virt(&h, slat_pa(PA_BASE + 16 * 4096));
		break;
	case BAD_VIRT:
		ops->virt_to_phys(&h, &x);
		break;
	case FREE_ROOT_AS_PAGE:
		ops->free_page(&h, ops->zalloc_root(&h, 4096));
		break;
	case FREE_CACHED_PAGE:
		ops->free_page(&h, c.pages[0]);
		break;
	case FREE_UNALIGNED:
		ops->free_page(&h, (uint8_t *)c.pages[0] + 64);
		break;
	case REFCOUNT_OF_FREE:
		ops->refcount(&h, h.arena + 8 * 4096);
		break;
	case DEFERRED_WITHOUT_RCU:
		slat_hosted_ops_rcu()->free_deferred(&h, c.pages[--c.nr], 3);
		break;
	case FREE_CACHED_PAGE_RCU:
		/* Concurrent use: caught at the owner's next topup. */
		if (slat_hosted_enable_rcu(&h, (struct slat_table *)&x))
			_exit(2);
		ops->free_page(&h, c.pages[0]);
		slat_hosted_cache_topup(&h, &c, 2);
		break;
	}
	_exit(0);
}

static void test_misuse_aborts(void **state)
{
	(void)state;
	for (int m = BAD_PHYS; m <= FREE_CACHED_PAGE_RCU; m++) {
		int status;
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0)
				dup2(fd, 2);
			do_misuse((enum misuse)m);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), SIGABRT);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_args),
		cmocka_unit_test(test_cache_init_empties_the_memo),
		cmocka_unit_test(test_topup_pop_free_drain),
		cmocka_unit_test(test_shrink_and_reset),
		cmocka_unit_test(test_exhaustion_and_distinct),
		cmocka_unit_test(test_roots),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_observer),
		cmocka_unit_test(test_rcu_deferred),
		cmocka_unit_test(test_misuse_aborts),
	};

	return cmocka_run_group_tests_name("hosted_arena", tests, NULL, NULL);
}
