/* SPDX-License-Identifier: MIT */
/*
 * Live dirty logging checked byte for byte: a pre-copy "migration" of
 * guest RAM into a shadow copy in slat-hyp's memory while the guest
 * writes, with write protection (slat_wrprotect after an eager split) or
 * with hardware dirty state (FEAT_HAFDBS, DBM, slat_dirty_read). The
 * guest's /init rings a doorbell (a read of HYP_DOORBELL, which nothing
 * maps) and each phase runs in that trap, on that CPU: the other vCPU
 * goes on running the guest's writers meanwhile.
 *
 * The shadow is filled at boot. Then, a phase per doorbell: enable
 * logging and copy every mapped page; rounds: harvest, copy the dirty
 * pages (and, with write protection, age guest RAM), until a round is
 * small or the rounds stop shrinking (precopy_done()); in that round's
 * trap, stop the other vCPUs, harvest and copy the last pages, compare
 * the shadow with guest RAM, end logging with huge-page recovery
 * (promotion) and let the guest go on.
 */
#include "hyp.h"

#define WORDS_MAX	(HYP_LOG_SPAN_MAX / HYP_GRANULE / 64)
#define BIG_PAGES	2048	/* the eager split's tables, at most */
#define STOP_TIMEOUT_MS	10000
/* Pre-copy's stopping rule (precopy_done()). */
#define SMALL_ROUND	256	/* pages (1 MiB): few enough to copy stopped */
#define STALL_ROUNDS	2	/* rounds in a row with no new low */
#define MAX_ROUNDS	10
/* In a round's doorbell value: that round ended pre-copy. */
#define DOORBELL_DONE	(1ull << 31)
/* Nothing to do: no check, or it is over. */
#define DOORBELL_NONE	(~0ull)
/* Refused, nothing changed: a doorbell while another vCPU's is being
 * handled, or a start while a migration runs. 0xfffffffe to a 32-bit
 * load, no count's. */
#define DOORBELL_BUSY	(~1ull)

/* Guest RAM as the bitmaps and the shadow see it: from HYP_RAM_BASE,
 * slat-hyp's part a hole of pages never mapped, never dirty. */
static uint64_t span(void)
{
	return hyp_mem.guest_end - HYP_RAM_BASE;
}

static uint64_t words(void)
{
	return span() / HYP_GRANULE / 64;
}

static bool in_hole(uint64_t page)
{
	return page - (HYP_OWN - HYP_RAM_BASE) / HYP_GRANULE <
	       (HYP_OWN_END - HYP_OWN) / HYP_GRANULE;
}

static enum hyp_log_mode mode;
static bool logging;		/* faults map pages; write faults mark them */
static uint64_t fault_dirty[WORDS_MAX];	/* write protection: by the faults */
static uint64_t harvest_bits[WORDS_MAX];
static uint64_t diff_bytes, rounds_done;
static uint64_t fewest_dirty = ~0ull, stalled;
static bool checked;

/* ------------------------------------------------------ the MMU lock */

/*
 * Faults hold it for reading (shared walkers beside each other); the
 * operations that need the table to themselves (split, wrprotect,
 * test_clear_young, recover) hold it for writing. One writer only: the
 * CPU whose doorbell is being handled (hyp_log_doorbell()). The writer
 * walks inside its walk count as the faults do (mm.c), from once every
 * reader has left: a reader that waits in a deferred free for the
 * writer's count to move never holds the lock the writer waits for.
 */
#define LOCK_WRITER (1u << 31)
static uint32_t mmu_lock;

void hyp_mmu_read_lock(void)
{
	for (;;) {
		uint32_t v = __atomic_load_n(&mmu_lock, __ATOMIC_RELAXED);

		if (!(v & LOCK_WRITER) &&
		    __atomic_compare_exchange_n(&mmu_lock, &v, v + 1, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		__asm__ volatile("yield");
	}
}

void hyp_mmu_read_unlock(void)
{
	__atomic_fetch_sub(&mmu_lock, 1, __ATOMIC_RELEASE);
}

static void mmu_write_lock(void)
{
	__atomic_fetch_or(&mmu_lock, LOCK_WRITER, __ATOMIC_ACQUIRE);
	while (__atomic_load_n(&mmu_lock, __ATOMIC_ACQUIRE) != LOCK_WRITER)
		__asm__ volatile("yield");
	hyp_walk_begin(hyp_this_cpu());
}

static void mmu_write_unlock(void)
{
	hyp_walk_end(hyp_this_cpu());
	__atomic_store_n(&mmu_lock, 0, __ATOMIC_RELEASE);
}

/* --------------------------------------------- what the faults ask */

bool hyp_logging(void)
{
	return __atomic_load_n(&logging, __ATOMIC_ACQUIRE);
}

/* Write protection makes a page read-only until its first write. */
bool hyp_logging_wp(void)
{
	return hyp_logging() && mode == HYP_LOG_WRPROTECT;
}

void hyp_log_mark(uint64_t ipa)
{
	uint64_t page = (ipa - HYP_RAM_BASE) / HYP_GRANULE;

	__atomic_fetch_or(&fault_dirty[page / 64], 1ull << (page % 64),
			  __ATOMIC_RELAXED);
}

/* ------------------------------------------------ stopping the vCPUs */

static uint32_t stop_requested, parked;
static struct hyp_cpu *migrator;

/* A vCPU that traps while the others are being stopped waits here, at
 * EL2, outside any walk. */
void hyp_log_park(struct hyp_cpu *c)
{
	if (!__atomic_load_n(&stop_requested, __ATOMIC_ACQUIRE) || c == migrator)
		return;
	__atomic_fetch_add(&parked, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&stop_requested, __ATOMIC_ACQUIRE))
		__asm__ volatile("yield");
	__atomic_fetch_sub(&parked, 1, __ATOMIC_ACQ_REL);
}

static uint32_t others_online(void)
{
	uint32_t n = 0;

	for (int i = 0; i < HYP_MAX_CPUS; i++)
		n += hyp_cpus[i].online && &hyp_cpus[i] != migrator;
	return n;
}

/* The IPA of the guest's exception vectors (VBAR_EL1, the same on every
 * CPU in Linux), through its stage 1 with AT S1E1R; 0 if untranslated. */
static uint64_t vectors_ipa(void)
{
	uint64_t saved = read_sysreg(par_el1), par;

	__asm__ volatile("at s1e1r, %0" ::"r"(read_sysreg(vbar_el1)));
	isb();
	par = read_sysreg(par_el1);
	write_sysreg(par_el1, saved);
	return (par & 1) ? 0 : par & 0x0000fffffffff000ull;
}

/* Pages for the table operations of logging's own steps (split, the
 * vectors' restriction, promotion). */
static struct slat_page_cache big_cache;

static bool kicked[HYP_MAX_CPUS];
static uint64_t kick_vct;	/* from the first kick until all parked */

/*
 * Once the page holding the vectors loses execute permission (in place:
 * its translation, and its dirty state, stay), any exception the other
 * vCPUs take traps at the fetch of its vector, and they park in the
 * fault handler. A kick (an SGI, gic.c) makes each take one at once,
 * instead of at its next timer tick (none at all while its idle loop
 * waits with the tick stopped). The restriction's invalidation completes
 * before the kicks are sent. Returns the page, to be made executable
 * again.
 */
/* [snippet:stop] */
static uint64_t stop_vcpus(void)
{
	uint64_t ipa = vectors_ipa(), t0 = hyp_counter_ms();

	__atomic_store_n(&stop_requested, 1, __ATOMIC_RELEASE);
	if (ipa - HYP_RAM_BASE >= span())
		hyp_panic("guest vectors not in its RAM, IPA", ipa);
	/* A page of a block: the block is split around it. Counted under
	 * the lock, where the table holds still. */
	mmu_write_lock();
	int64_t need = slat_pages_needed(
		&hyp_s2, SLAT_NEED(.kind = SLAT_OP_RESTRICT,
				   .ipa = slat_ipa(ipa), .size = HYP_GRANULE,
				   .attrs = SLAT_X));
	hyp_cache_fill(&big_cache, need < 0 ? 0 : (uint32_t)need);
	if (slat_restrict(&hyp_s2, slat_ipa(ipa), HYP_GRANULE, SLAT_X,
			  SLAT_OP(.flush = SLAT_FLUSH_ENTRY,
				  .cache = &big_cache)) < 0)
		hyp_panic("execute removed from the guest's vectors", ipa);
	mmu_write_unlock();
	hyp_cache_drain(&big_cache);
	kick_vct = hyp_vcount();
	for (int i = 0; i < HYP_MAX_CPUS; i++) {
		kicked[i] = hyp_cpus[i].online && &hyp_cpus[i] != migrator;
		if (kicked[i])
			hyp_gic_kick(&hyp_cpus[i]);
	}
	while (__atomic_load_n(&parked, __ATOMIC_ACQUIRE) != others_online())
		if (hyp_counter_ms() - t0 > STOP_TIMEOUT_MS)
			hyp_panic("vCPUs did not stop, parked", parked);
	kick_vct = hyp_vcount() - kick_vct;
	return ipa;
}
/* [end] */

/* The kicks taken back while the vCPUs are still parked: the guest
 * never sees them. */
static void resume_vcpus(void)
{
	for (int i = 0; i < HYP_MAX_CPUS; i++)
		if (kicked[i])
			hyp_gic_unkick(&hyp_cpus[i]);
	__atomic_store_n(&stop_requested, 0, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------- copying */

static uint64_t *ram_word(uint64_t page)
{
	return (uint64_t *)(HYP_RAM_BASE + page * HYP_GRANULE);
}

static uint64_t *shadow_word(uint64_t page)
{
	return (uint64_t *)(hyp_mem.shadow + page * HYP_GRANULE);
}

/* Eight words a step: loads and stores in pairs (LDP/STP). */
static void copy_page(uint64_t page)
{
	const uint64_t *src = ram_word(page);
	uint64_t *dst = shadow_word(page);

	for (uint64_t i = 0; i < HYP_GRANULE / 8; i += 8) {
		uint64_t a = src[i], b = src[i + 1], c = src[i + 2],
			 d = src[i + 3], e = src[i + 4], f = src[i + 5],
			 g = src[i + 6], h = src[i + 7];

		dst[i] = a, dst[i + 1] = b, dst[i + 2] = c, dst[i + 3] = d;
		dst[i + 4] = e, dst[i + 5] = f, dst[i + 6] = g, dst[i + 7] = h;
	}
}

static uint64_t copy_marked(const uint64_t *bits)
{
	uint64_t n = 0;

	for (uint64_t w = 0; w < words(); w++)
		for (uint64_t b = bits[w]; b; b &= b - 1, n++)
			copy_page(w * 64 + (uint64_t)__builtin_ctzll(b));
	return n;
}

static void mark(uint64_t *bits, uint64_t page)
{
	bits[page / 64] |= 1ull << (page % 64);
}

/*
 * The pages stage 2 maps now. The others the guest cannot have written
 * since the shadow was filled at boot (no device does DMA here).
 */
static void mapped_pages(uint64_t *bits)
{
	uint64_t ipa = HYP_RAM_BASE, end = HYP_RAM_BASE + span();

	for (uint64_t w = 0; w < words(); w++)
		bits[w] = 0;
	while (ipa < end) {
		struct slat_leaf leaf;
		uint64_t next = ipa + HYP_GRANULE;

		if (hyp_s2_lookup(ipa, &leaf) == SLAT_OK) {
			next = slat_ipa_v(leaf.base) + leaf.size;
			for (uint64_t a = ipa; a < next && a < end;
			     a += HYP_GRANULE)
				mark(bits, (a - HYP_RAM_BASE) / HYP_GRANULE);
		}
		ipa = next;
	}
}

static uint64_t page_diff(uint64_t page)
{
	const uint64_t *r = ram_word(page), *s = shadow_word(page);
	uint64_t any = 0, bytes = 0;

	for (uint64_t i = 0; i < HYP_GRANULE / 8; i += 4)
		any |= (r[i] ^ s[i]) | (r[i + 1] ^ s[i + 1]) |
		       (r[i + 2] ^ s[i + 2]) | (r[i + 3] ^ s[i + 3]);
	if (!any)
		return 0;
	for (uint64_t i = 0; i < HYP_GRANULE / 8; i++)
		for (uint64_t x = r[i] ^ s[i]; x; x >>= 8)
			bytes += (x & 0xff) != 0;
	return bytes;
}

/* Differing bytes between the shadow and guest RAM over @bits; the first
 * few differing pages are named. */
static uint64_t compare(const uint64_t *bits, uint64_t *pages_compared,
			uint64_t *pages_differing)
{
	uint64_t bytes = 0;

	*pages_compared = *pages_differing = 0;
	for (uint64_t w = 0; w < words(); w++) {
		for (uint64_t b = bits[w]; b; b &= b - 1) {
			uint64_t p = w * 64 + (uint64_t)__builtin_ctzll(b);
			uint64_t d = page_diff(p);

			(*pages_compared)++;
			bytes += d;
			if (d && (*pages_differing)++ < 8) {
				hyp_puts("slat-hyp: log: page differs, IPA ");
				hyp_putx(HYP_RAM_BASE + p * HYP_GRANULE);
				hyp_puts("\n");
			}
		}
	}
	return bytes;
}

/* Before the guest runs: the shadow starts as a copy of all its RAM. */
void hyp_log_boot_copy(void)
{
	if (mode == HYP_LOG_OFF)
		return;
	for (uint64_t p = 0; p < words() * 64; p++)
		if (!in_hole(p))
			copy_page(p);
	hyp_puts("slat-hyp: log: shadow filled, ");
	hyp_putu(hyp_counter_ms());
	hyp_puts(" ms\n");
}

/* ------------------------------------------- logging on and off */

static void *big_pages[BIG_PAGES];

static void must(int ret, const char *what)
{
	if (ret < 0)
		hyp_panic(what, (uint64_t)ret);
}

static void log_enable(void)
{
	int64_t need;

	/* Counted under the lock: a fault on another vCPU in between
	 * could map one more block to split. */
	mmu_write_lock();
	need = slat_pages_needed(
		&hyp_s2, SLAT_NEED(.kind = SLAT_OP_SPLIT,
				   .ipa = slat_ipa(HYP_RAM_BASE),
				   .size = span()));
	slat_page_cache_init(&big_cache, big_pages, BIG_PAGES);
	if (need < 0 || need > BIG_PAGES)
		hyp_panic("split needs pages", (uint64_t)need);
	hyp_cache_fill(&big_cache, (uint32_t)need);
	__atomic_store_n(&logging, true, __ATOMIC_RELEASE);
	/* Eager split, skipping the levels that hold no block (seed 002):
	 * every page then reports itself. */
	must(slat_split(&hyp_s2, slat_ipa(HYP_RAM_BASE), span(), 0,
			SLAT_OP(.cache = &big_cache)), "slat_split");
	if (mode == HYP_LOG_WRPROTECT)
		must(slat_wrprotect(&hyp_s2, slat_ipa(HYP_RAM_BASE),
				    span(),
				    SLAT_OP(.flush = SLAT_FLUSH_VMID)),
		     "slat_wrprotect");
	else	/* writable leaves are installed dirty: start clean */
		must((int)slat_dirty_read(&hyp_s2, slat_ipa(HYP_RAM_BASE),
					  span(), harvest_bits,
					  words(), true,
					  SLAT_OP(.flush = SLAT_FLUSH_VMID)),
		     "slat_dirty_read");
	mmu_write_unlock();
	hyp_cache_drain(&big_cache);
}

/* Write protection: take the faults' marks, protect those pages again
 * (runs of pages per call), one invalidation of the VMID for all. */
static uint64_t harvest_wp(void)
{
	uint64_t n = 0;

	mmu_write_lock();
	for (uint64_t w = 0; w < words(); w++) {
		uint64_t bits = __atomic_exchange_n(&fault_dirty[w], 0,
						    __ATOMIC_RELAXED);

		harvest_bits[w] = bits;
		while (bits) {
			uint64_t first = (uint64_t)__builtin_ctzll(bits);
			uint64_t rest = ~(bits >> first);
			uint64_t run = rest ? (uint64_t)__builtin_ctzll(rest)
					    : 64 - first;
			uint64_t ipa = HYP_RAM_BASE +
				       (w * 64 + first) * HYP_GRANULE;

			must(slat_wrprotect(&hyp_s2, slat_ipa(ipa),
					    run * HYP_GRANULE,
					    SLAT_OP(.flush = SLAT_FLUSH_NONE)),
			     "slat_wrprotect");
			bits &= run == 64 ? 0 : ~(((1ull << run) - 1) << first);
			n += run;
		}
	}
	hyp_mm_ops.tlbi_vmid(NULL);
	mmu_write_unlock();
	return n;
}

/* Hardware dirty state: read and clean every page's, one invalidation. */
/* [snippet:harvest-hw] */
static uint64_t harvest_hw(void)
{
	int64_t n;

	mmu_write_lock();
	n = slat_dirty_read(&hyp_s2, slat_ipa(HYP_RAM_BASE), span(),
			    harvest_bits, words(), true,
			    SLAT_OP(.flush = SLAT_FLUSH_VMID));
	mmu_write_unlock();
	must((int)n, "slat_dirty_read");
	return (uint64_t)n;
}
/* [end] */

static uint64_t harvest(void)
{
	return mode == HYP_LOG_WRPROTECT ? harvest_wp() : harvest_hw();
}

/* The vectors' page executable again, as it was before the stop. */
static void exec_back(uint64_t ipa)
{
	mmu_write_lock();
	must(slat_relax(&hyp_s2, slat_ipa(ipa), HYP_GRANULE, SLAT_X,
			SLAT_OP(.flush = SLAT_FLUSH_ENTRY)),
	     "slat_relax");
	mmu_write_unlock();
}

/*
 * End logging: writable again (write protection), then every table
 * whose pages add up to a block becomes that block (promotion, seed
 * 001). A 2 MiB range with a hole or with pages of different
 * permissions keeps its pages.
 */
static void log_disable(void)
{
	mmu_write_lock();
	__atomic_store_n(&logging, false, __ATOMIC_RELEASE);
	/* The whole of RAM at once: relax skips the holes (slat-hyp's own
	 * memory, what the guest never touched). */
	if (mode == HYP_LOG_WRPROTECT)
		must(slat_relax(&hyp_s2, slat_ipa(HYP_RAM_BASE), span(), SLAT_W,
				SLAT_OP(.flush = SLAT_FLUSH_NONE)),
		     "slat_relax");
	must(slat_recover(&hyp_s2, slat_ipa(HYP_RAM_BASE), span(),
			  SLAT_RECOVERY(.strategy = SLAT_RECOVER_PROMOTE,
					.max_level = hyp_max_level),
			  SLAT_OP(.flush = SLAT_FLUSH_VMID)),
	     "slat_recover");
	mmu_write_unlock();
}

/* ------------------------------------------------------- the check */

/* The whole VM's counters at one moment, for per-phase differences. */
struct tally {
	uint64_t faults[HYP_F_KINDS];
	uint64_t tlbi_ipa, tlbi_local, tlbi_range, tlbi_vmid, dc_lines, vct;
	uint64_t maps;
};

/* A round's steps, or the stop's, in virtual-counter ticks. */
struct steps {
	uint64_t stop, harvest, copy, age;
};

static void tally(struct tally *t)
{
	*t = (struct tally){ .vct = hyp_vcount() };
	for (int i = 0; i < HYP_MAX_CPUS; i++) {
		const struct hyp_cpu *c = &hyp_cpus[i];

		for (int k = 0; k < HYP_F_KINDS; k++)
			t->faults[k] += c->faults[k];
		t->tlbi_ipa += c->tlbi.ipa_is;
		t->tlbi_local += c->tlbi.ipa_local;
		t->tlbi_range += c->tlbi.range_pages + c->tlbi.range_all;
		t->tlbi_vmid += c->tlbi.vmid;
		t->dc_lines += c->tlbi.dcache_lines;
		t->maps += c->stats.written[SLAT_WRITE_LEAF];
	}
}


/* A round's steps and the leaves mapping guest RAM at its end: how much
 * of it logging keeps in pages, how much recovery gave back as blocks. */
static void report_steps(const struct steps *st)
{
	uint64_t g, m, p;

	if (st && st->stop) {
		hyp_put_kv("stop_us", hyp_ticks_us(st->stop));
		hyp_put_kv("kick_to_parked_us", hyp_ticks_us(kick_vct));
	}
	if (st) {
		hyp_put_kv("harvest_us", hyp_ticks_us(st->harvest));
		hyp_put_kv("copy_us", hyp_ticks_us(st->copy));
	}
	if (st && !st->stop)
		hyp_put_kv("age_us", hyp_ticks_us(st->age));
	hyp_count_leaves(&g, &m, &p);
	hyp_put_kv("blocks", g + m);
	hyp_put_kv("pages", p);
}

/*
 * One line per phase: what it found and copied, what it cost. Times are
 * CNTVCT_EL0's (us: the whole phase since the last line, the guest's own
 * work on the other vCPUs included); the leaf count after it is left out
 * of the next phase's time.
 */
static void report_phase(const char *phase, int64_t round, uint64_t dirty,
			 uint64_t copied, const struct steps *st,
			 struct tally *since)
{
	struct tally now;

	tally(&now);
	hyp_puts("slat-hyp: log ");
	hyp_puts(phase);
	if (round >= 0)
		hyp_put_kv("round", (uint64_t)round);
	hyp_put_kv("dirty", dirty);
	hyp_put_kv("copied", copied);
	hyp_put_kv("us", hyp_ticks_us(now.vct - since->vct));
	report_steps(st);
	hyp_put_kv("wp_faults", now.faults[HYP_F_PERMISSION] -
				    since->faults[HYP_F_PERMISSION]);
	hyp_put_kv("af_faults", now.faults[HYP_F_ACCESS_FLAG] -
				    since->faults[HYP_F_ACCESS_FLAG]);
	hyp_put_kv("translation", now.faults[HYP_F_TRANSLATION] -
				      since->faults[HYP_F_TRANSLATION]);
	hyp_put_kv("maps", now.maps - since->maps);
	hyp_put_kv("tlbi_ipa", now.tlbi_ipa - since->tlbi_ipa);
	hyp_put_kv("tlbi_local", now.tlbi_local - since->tlbi_local);
	hyp_put_kv("tlbi_range", now.tlbi_range - since->tlbi_range);
	hyp_put_kv("tlbi_vmid", now.tlbi_vmid - since->tlbi_vmid);
	hyp_put_kv("dc_lines", now.dc_lines - since->dc_lines);
	hyp_put_kv("pool_pages", hyp_pool_pages_used());
	hyp_puts("\n");
	*since = now;
	since->vct = hyp_vcount();
}

static struct tally phase_start;

/*
 * Without hardware access flags (write protection runs without
 * FEAT_HAFDBS), age guest RAM as a host would for reclaim: clear every
 * access flag, then invalidate, so that the guest's next touch of each
 * leaf takes an access-flag fault and slat_mkyoung() sets it again.
 */
static void age(void)
{
	if (mode != HYP_LOG_WRPROTECT)
		return;
	mmu_write_lock();
	must(slat_test_clear_young(&hyp_s2, slat_ipa(HYP_RAM_BASE),
				   span(), true, NULL),
	     "slat_test_clear_young");
	hyp_mm_ops.tlbi_vmid(NULL);
	mmu_write_unlock();
}

/* Doorbell +0, the first time: logging on, copy every mapped page. */
static uint64_t phase_start_log(void)
{
	uint64_t copied;

	tally(&phase_start);
	log_enable();
	report_phase("enable", -1, 0, 0, NULL, &phase_start);
	mapped_pages(harvest_bits);
	copied = copy_marked(harvest_bits);
	report_phase("copy-mapped", -1, copied, copied, NULL, &phase_start);
	return copied;
}

/*
 * After a round of @dirty pages: is it time to stop the vCPUs? Yes when
 * the round was small (what is left copies quickly with the guest
 * stopped), when STALL_ROUNDS rounds in a row found no fewer pages than
 * the best round so far (the guest dirties pages as fast as the rounds
 * copy them: more rounds would not shrink the last copy), or after
 * MAX_ROUNDS. The first round has nothing to compare with, so a stall
 * stops at round STALL_ROUNDS + 1 at the earliest.
 */
static bool precopy_done(uint64_t dirty, const char **why)
{
	if (dirty < fewest_dirty) {
		fewest_dirty = dirty;
		stalled = 0;
	} else {
		stalled++;
	}
	*why = dirty <= SMALL_ROUND	  ? "small"
	       : stalled >= STALL_ROUNDS ? "stalled"
	       : rounds_done >= MAX_ROUNDS ? "max-rounds"
					   : NULL;
	return *why != NULL;
}

static uint64_t phase_finish(void);

/* Doorbell +0 afterwards: one pre-copy round; if it ends pre-copy, the
 * stop and the check follow in the same trap. */
static uint64_t phase_round(void)
{
	uint64_t t0 = hyp_vcount(), n = harvest(), t1 = hyp_vcount();
	uint64_t copied = copy_marked(harvest_bits), t2 = hyp_vcount();
	const char *why;
	bool done;

	rounds_done++;
	done = precopy_done(n, &why);
	/* Not after the last round: an old leaf under the guest's stage-1
	 * tables would fail vectors_ipa()'s walk. */
	if (!done)
		age();
	report_phase("pre-copy", (int64_t)rounds_done, n, copied,
		     &(struct steps){ 0, t1 - t0, t2 - t1, hyp_vcount() - t2 },
		     &phase_start);
	if (!done)
		return n;
	hyp_puts("slat-hyp: log pre-copy ends: ");
	hyp_puts(why);
	hyp_put_kv("rounds", rounds_done);
	hyp_put_kv("fewest_dirty", fewest_dirty);
	hyp_puts("\n");
	phase_finish();
	return n | DOORBELL_DONE;
}

/* Stop, last copy, compare, recovery, go on. */
static uint64_t phase_finish(void)
{
	uint64_t n, copied, vectors, compared, differing;
	struct steps st = { .stop = hyp_vcount() };

	vectors = stop_vcpus();
	st.harvest = hyp_vcount();
	st.stop = st.harvest - st.stop;
	/* The vectors' page kept its translation and dirty state: the log
	 * alone says whether it is copied. */
	n = harvest();
	st.copy = hyp_vcount();
	st.harvest = st.copy - st.harvest;
	copied = copy_marked(harvest_bits);
	st.copy = hyp_vcount() - st.copy;
	report_phase("stopped", -1, n, copied, &st, &phase_start);
	/* All of it but slat-hyp's part, mapped or not: a write that went
	 * to the wrong page shows as well as one the log lost. */
	for (uint64_t w = 0; w < words(); w++)
		harvest_bits[w] = in_hole(w * 64) ? 0 : ~0ull;
	diff_bytes = compare(harvest_bits, &compared, &differing);
	hyp_puts("slat-hyp: log check");
	hyp_put_kv("mode", mode);
	hyp_put_kv("rounds", rounds_done);
	hyp_put_kv("pages_compared", compared);
	hyp_put_kv("differing_bytes", diff_bytes);
	hyp_put_kv("differing_pages", differing);
	hyp_puts("\n");
	report_phase("compared", -1, 0, 0, NULL, &phase_start);
	exec_back(vectors);
	log_disable();
	report_phase("recovered", -1, 0, 0, NULL, &phase_start);
	hyp_report_leaves();
	checked = true;
	resume_vcpus();
	return diff_bytes;
}

/* Doorbells refused (DOORBELL_BUSY), and the one being handled. */
static uint64_t refused_busy, refused_running;
static uint32_t doorbell_owner;

static uint64_t doorbell(uint64_t offset)
{
	if (offset == 4)
		return checked ? diff_bytes : DOORBELL_NONE;
	if (mode == HYP_LOG_OFF || checked)
		return DOORBELL_NONE;
	if (offset == 8 && hyp_logging()) {
		refused_running++;
		return DOORBELL_BUSY;
	}
	return hyp_logging() ? phase_round() : phase_start_log();
}

/*
 * A read of the doorbell (+0) runs the next phase of the check on this
 * CPU while the others go on, and returns its count: pages copied, then
 * each round's dirty pages, with DOORBELL_DONE once the stopping rule
 * ended pre-copy (DOORBELL_NONE: nothing to do). +8 asks for the start
 * only: refused while a migration runs. +4 reads the differing bytes of
 * the check. /init paces the rounds (it sleeps between them, so that
 * every vCPU runs the guest's writers); slat-hyp decides how many.
 *
 * One doorbell at a time: a phase takes the MMU lock for writing, which
 * has room for one writer, and names the vCPU that must not park
 * (migrator). A vCPU that rings while another's doorbell is handled (its
 * trap comes before it could park) gets DOORBELL_BUSY at once, the check's
 * state as it was.
 */
void hyp_log_doorbell(struct hyp_cpu *c, struct hyp_frame *f, uint64_t esr)
{
	struct hyp_mmio m;
	uint64_t v = DOORBELL_NONE;
	uint32_t free = 0;

	if (!hyp_mmio_decode(esr, &m))
		hyp_panic("doorbell access without syndrome, ESR_EL2", esr);
	if (m.write) {
		hyp_mmio_complete(f, &m, v);
		return;
	}
	if (!__atomic_compare_exchange_n(&doorbell_owner, &free, 1, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		__atomic_fetch_add(&refused_busy, 1, __ATOMIC_RELAXED);
		hyp_mmio_complete(f, &m, DOORBELL_BUSY);
		return;
	}
	migrator = c;
	v = doorbell(read_sysreg(far_el2) & 0xfff);
	__atomic_store_n(&doorbell_owner, 0, __ATOMIC_RELEASE);
	hyp_mmio_complete(f, &m, v);
}

void hyp_log_init(uint64_t m)
{
	uint64_t hafdbs = read_sysreg(id_aa64mmfr1_el1) & 0xf;

	if (m > HYP_LOG_HWDIRTY)
		hyp_panic("unknown dirty logging mode", m);
	mode = (enum hyp_log_mode)m;
	hyp_puts("slat-hyp: ID_AA64MMFR1_EL1.HAFDBS=");
	hyp_putu(hafdbs);
	hyp_puts(hafdbs >= 2 ? " (access flag and dirty state)\n"
			     : " (no hardware dirty state)\n");
	if (mode == HYP_LOG_HWDIRTY && hafdbs < 2)
		hyp_panic("hardware dirty state asked for, HAFDBS", hafdbs);
}

bool hyp_log_hwdirty(void)
{
	return mode == HYP_LOG_HWDIRTY;
}

void hyp_log_report(void)
{
	if (mode == HYP_LOG_OFF)
		return;
	hyp_puts("slat-hyp: log summary");
	hyp_put_kv("mode", mode);
	hyp_put_kv("checked", checked);
	hyp_put_kv("rounds", rounds_done);
	hyp_put_kv("differing_bytes", diff_bytes);
	hyp_put_kv("refused_running", refused_running);
	hyp_put_kv("refused_busy", refused_busy);
	hyp_puts("\n");
}
