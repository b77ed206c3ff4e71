/* SPDX-License-Identifier: MIT */
/*
 * slat-perf dirty-log: dirty_log_perf_test's options, phases and lines, on
 * the simulator.
 */
#define _GNU_SOURCE
#include "perf.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

struct dl_state {
	int iterations;
	uint32_t mode_mask;        /* -m: the modes given, by ID */
	int modes[PERF_MAX_MODES]; /* the modes to run, in ID order */
	int nr_modes;
	uint32_t nr_vcpus;
	uint64_t vcpu_bytes;
	const char *backing;
	uint32_t slots;
	uint32_t write_percent;
	bool random_access, overlap, manual, keep_running;
	uint64_t phys_offset;
	uint32_t seed;
	bool nested;
	const char *pcpus;
	int cpu[512];              /* -c: the pCPU of each vCPU */
	bool pin;
};

static void dl_help(FILE *f, const struct perf_opts *o)
{
	const char *p = o->prog;

	/* dirty_log_perf_test's help, as it prints it */
	fprintf(f, "\nusage: %s [-h] [-a] [-i iterations] [-p offset] [-g] "
		"[-m mode] [-n] [-b vcpu bytes] [-v vcpus] [-o] [-r random seed ] "
		"[-s mem type][-x memslots] [-w percentage] [-c physical cpus to "
		"run test on]\n\n", p);
	fputs(" -a: access memory randomly rather than in order.\n"
	      " -i: specify iteration counts (default: 2)\n"
	      " -g: Do not enable KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2. This\n"
	      "     makes KVM_GET_DIRTY_LOG clear the dirty log (i.e.\n"
	      "     KVM_DIRTY_LOG_MANUAL_PROTECT_ENABLE is not enabled)\n"
	      "     and writes will be tracked as soon as dirty logging is\n"
	      "     enabled on the memslot (i.e. KVM_DIRTY_LOG_INITIALLY_SET\n"
	      "     is not enabled).\n"
	      " -p: specify guest physical test memory offset\n"
	      "     Warning: a low offset can conflict with the loaded test code.\n", f);
	perf_modes_help(f, o);
	fputs(" -n: Run the vCPUs in nested mode (L2)\n"
	      " -e: Run vCPUs while dirty logging is being disabled.  This\n"
	      "     can significantly increase runtime, especially if there\n"
	      "     isn't a dedicated pCPU for the main thread.\n"
	      " -b: specify the size of the memory region which should be\n"
	      "     dirtied by each vCPU. e.g. 10M or 3G.\n"
	      "     (default: 1G)\n"
	      " -v: specify the number of vCPUs to run.\n"
	      " -o: Overlap guest memory accesses instead of partitioning\n"
	      "     them into a separate region of memory for each vCPU.\n"
	      " -r: specify the starting random seed.\n", f);
	perf_backing_help(f, "-s");
	fputs(" -x: Split the memory region into this number of memslots.\n"
	      "     (default: 1)\n"
	      " -w: specify the percentage of pages which should be written to\n"
	      "     as an integer from 0-100 inclusive. This is probabilistic,\n"
	      "     so -w X means each page has an X% chance of writing\n"
	      "     and a (100-X)% chance of reading.\n"
	      "     (default: 100 i.e. all pages are written to.)\n"
	      " -c: Pin tasks to physical CPUs.  Takes a list of comma separated\n"
	      "     values (target pCPU), one for each vCPU, plus an optional\n"
	      "     entry for the main application task (specified via entry\n"
	      "     <nr_vcpus + 1>).  If used, entries must be provided for all\n"
	      "     vCPUs, i.e. pinning vCPUs is all or nothing.\n\n"
	      "     E.g. to create 3 vCPUs, pin vCPU0=>pCPU22, vCPU1=>pCPU23,\n"
	      "     vCPU2=>pCPU24, and pin the application task to pCPU50:\n\n", f);
	fprintf(f, "         %s -v 3 -c 22,23,24,50\n\n"
		"     To leave the application task unpinned, drop the final entry:\n\n"
		"         %s -v 3 -c 22,23,24\n\n"
		"     (default: no pinning)\n\n", p, p);
	if (o->selftest_only)
		return;
	fputs("slat-perf dirty-log: the lines above are dirty_log_perf_test's. Here:\n"
	      " -s also takes synthetic, synthetic_2mb, synthetic_1gb (no data, the\n"
	      "    page size in the name: 96 vCPUs x 1G fit); a hugetlb source\n"
	      "    without reserved huge pages runs on the synthetic source of its\n"
	      "    page size, and a note after the run says so\n"
	      " -n: slat has no nested stage-2 tables: reported as the real test\n"
	      "    does on a host without nested virtualisation (exit 4)\n"
	      " -v: at most 512, run one at a time in virtual time\n"
	      " -c: the vCPUs have no threads to pin; the main task's entry pins\n"
	      "    the thread that runs them\n"
	      " --arch arm64|x86 picks the supported modes (default arm64, the\n"
	      "    Armv8 stage-2 modes; x86: mode 9, Intel EPT, or AMD NPT with\n"
	      "    --format npt). Strategy switches,\n"
	      "    --compare, --cost, --json, --svg: slat-perf --help\n\n", f);
}

static void dl_defaults(struct dl_state *s)
{
	s->iterations = 2;
	s->nr_vcpus = 1;
	s->vcpu_bytes = 1ull << 30;
	s->backing = "anonymous";
	s->slots = 1;
	s->write_percent = 100;
	s->manual = true;
	s->seed = 1;
}

static void dl_option(struct dl_state *s, struct perf_opts *o, int c)
{
	switch (c) {
	case 'a': s->random_access = true; break;
	case 'b': s->vcpu_bytes = perf_parse_size("-b (bytes per vCPU)", optarg); break;
	case 'c': s->pcpus = optarg; break;
	case 'e': s->keep_running = true; break;
	case 'g': s->manual = false; break;
	case 'h': dl_help(stdout, o); exit(0);
	case 'i': s->iterations = perf_parse_positive("Number of iterations", optarg); break;
	case 'm': s->mode_mask |= 1u << perf_parse_mode(optarg); break;
	case 'n': s->nested = true; break;
	case 'o': s->overlap = true; break;
	case 'p': s->phys_offset = perf_parse_size("-p (guest physical offset)", optarg); break;
	case 'r': s->seed = (uint32_t)perf_parse_positive("Random seed", optarg); break;
	case 's': s->backing = perf_parse_backing(optarg); break;
	case 'v': s->nr_vcpus = perf_parse_vcpus(optarg, 1); break;
	case 'x': s->slots = (uint32_t)perf_parse_positive("Number of slots", optarg); break;
	case 'w': {
		int w = perf_parse_nonneg("Write percentage", optarg);

		if (w > 100)
			perf_usage_error("Write percentage must be between 0 and 100, "
					 "got %d", w);
		s->write_percent = (uint32_t)w;
		break;
	}
	default:
		perf_bad_option(o, c, dl_help);
	}
}

/* -c: a pCPU per vCPU, and one more for this thread. */
static void dl_pin_list(struct dl_state *s)
{
	char *list = strdup(s->pcpus), *save = NULL, *tok;
	uint32_t n = 0;
	cpu_set_t allowed;
	int last = -1;

	if (!list)
		perf_usage_error("out of memory");
	sched_getaffinity(0, sizeof(allowed), &allowed);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int cpu = perf_parse_nonneg("pCPU", tok);

		if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed))
			perf_usage_error("Not allowed to run on pCPU '%d', check "
					 "cgroups? (this machine allows %d CPUs)",
					 cpu, CPU_COUNT(&allowed));
		last = cpu;
		if (n < 512)
			s->cpu[n] = cpu;
		n++;
	}
	free(list);
	if (n < s->nr_vcpus)
		perf_usage_error("-c: not all vCPUs were pinned (%u pCPUs for %u "
				 "vCPUs)", n, s->nr_vcpus);
	if (n > s->nr_vcpus + 1)
		perf_usage_error("-c: too many pCPUs (%u for %u vCPUs plus the "
				 "main task)", n, s->nr_vcpus);
	if (n == s->nr_vcpus + 1) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(last, &one);
		sched_setaffinity(0, sizeof(one), &one);
	}
	s->pin = true;
}

static int dl_prepare(struct perf_opts *o, void **statep)
{
	struct dl_state *s = calloc(1, sizeof(*s));
	int c;

	if (!s)
		return 1;
	dl_defaults(s);
	optind = 1;
	opterr = 0;
	while ((c = getopt(o->argc, o->argv, ":ab:c:eghi:m:nop:r:s:v:x:w:")) != -1)
		dl_option(s, o, c);
	if (optind < o->argc)
		perf_usage_error("dirty-log: unexpected argument '%s'", o->argv[optind]);
	if (s->iterations < 2)
		perf_assert_fail(o, "dirty_log_perf_test.c:390: p.iterations >= 2",
				 "-i 2 or more", "The test should have at least two "
				 "iterations");
	if (!s->vcpu_bytes)
		perf_usage_error("-b 0: each vCPU needs at least one guest page of "
				 "memory (e.g. -b 4K, -b 1G)");
	if (s->vcpu_bytes > UINT64_MAX / s->nr_vcpus)
		perf_usage_error("-b 0x%llx x -v %u does not fit in 64 bits",
				 (unsigned long long)s->vcpu_bytes, s->nr_vcpus);
	s->nr_modes = perf_modes_select(o, s->mode_mask, s->modes);
	if (s->pcpus)
		dl_pin_list(s);
	*statep = s;
	return 0;
}

struct bg {
	struct slat_vm *vm;
	volatile bool stop;
	int err;
};

static void *bg_iterate(void *arg)
{
	struct bg *b = arg;

	while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
		int64_t r = slat_vm_memstress_iterate(b->vm);

		if (r < 0) {
			b->err = (int)r;
			break;
		}
	}
	return NULL;
}

static int fail(struct slat_vm *vm, const char *what, int err)
{
	fprintf(stderr, "slat-perf: %s: %s (%s)\n", what,
		vm ? slat_vm_error(vm) : "", strerror(err < 0 ? -err : err));
	return 1;
}

static uint64_t pow2_at_least(uint64_t x)
{
	uint64_t p = 64;

	while (p < x)
		p <<= 1;
	return p;
}

/* One mode's run: its layout, VM and dirty bitmaps. */
struct dl_run {
	struct dl_state *s;
	const struct perf_opts *o;
	const struct perf_switches *sw;
	struct perf_run *run;
	FILE *out;
	int mode;
	struct slat_config tcfg;
	struct perf_backing back;
	struct slat_vm *vm;
	uint64_t granule, align, total, slot_size, npages, words, gpa, chunk;
	uint64_t **bitmaps;
	bool manual, ring;
	uint64_t get_total, clear_total;
};

/* The bytes an entry at @level maps in @cfg's table. */
static uint64_t level_bytes(const struct slat_config *cfg, int level)
{
	struct slat_geometry g;

	slat_config_geometry(cfg, &g);
	return 1ull << (g.granule_shift + (3 - level) * g.bits_per_level);
}

/* --eager-split's chunk: a block size of the mode's table (usage error). */
static void dl_check_chunk(struct dl_run *r)
{
	uint64_t l2 = level_bytes(&r->tcfg, 2), l1 = level_bytes(&r->tcfg, 1);

	r->chunk = r->sw->eager_chunk ? r->sw->eager_chunk : l2;
	if (r->sw->eager != EAGER_OFF && r->chunk != l1 && r->chunk != l2)
		perf_usage_error("--eager-split chunk 0x%llx is not a block size of "
				 "this mode's table (use 0x%llx or 0x%llx)",
				 (unsigned long long)r->chunk,
				 (unsigned long long)l2, (unsigned long long)l1);
}

/* Where the test memory goes, as memstress places it; usage errors for
 * what does not fit. */
static void dl_layout(struct dl_run *r)
{
	struct dl_state *s = r->s;
	uint64_t top = 1ull << r->tcfg.ia_bits;

	r->granule = r->tcfg.granule;
	r->total = s->vcpu_bytes * s->nr_vcpus;
	if (s->vcpu_bytes % r->granule)
		perf_usage_error("Guest memory size is not guest page size aligned: "
				 "-b %llu is not a multiple of %llu",
				 (unsigned long long)s->vcpu_bytes,
				 (unsigned long long)r->granule);
	perf_backing_resolve(s->backing, r->total, &r->back);
	r->align = r->back.page_size > r->granule ? r->back.page_size : r->granule;
	r->slot_size = r->total / s->slots;
	if (r->total % s->slots || r->slot_size % r->align)
		perf_usage_error("-x %u: the guest memory (0x%llx) must split into "
				 "slots that are multiples of 0x%llx (the backing or "
				 "guest page size); change -b, -v or -x", s->slots,
				 (unsigned long long)r->total,
				 (unsigned long long)r->align);
	if (s->phys_offset) {
		r->gpa = s->phys_offset;
		if (r->gpa % r->align)
			perf_usage_error("-p 0x%llx is not aligned to 0x%llx",
					 (unsigned long long)r->gpa,
					 (unsigned long long)r->align);
	} else {
		uint64_t max_gfn = top / r->granule - 1;

		if (r->total / r->granule >= max_gfn)
			perf_usage_error("0x%llx bytes of test memory do not fit in the "
					 "mode's %u-bit guest physical space",
					 (unsigned long long)r->total, r->tcfg.ia_bits);
		r->gpa = ((max_gfn - r->total / r->granule) * r->granule) &
			 ~(r->align - 1);
	}
	if (r->gpa > top || r->total > top - r->gpa)
		perf_usage_error("test memory [0x%llx, +0x%llx) is beyond the mode's "
				 "%u-bit guest physical space (change -p, -b or -v)",
				 (unsigned long long)r->gpa,
				 (unsigned long long)r->total, r->tcfg.ia_bits);
	r->npages = r->slot_size / r->granule;
	r->words = (r->npages + 63) / 64;
}

/* Every slot with @flags (creates them the first time). */
static int dl_slots(struct dl_run *r, uint32_t flags)
{
	for (uint32_t i = 0; i < r->s->slots; i++) {
		struct slat_vm_memslot m = {
			.slot = 1 + i, .flags = flags,
			.guest_phys_addr = r->gpa + i * r->slot_size,
			.memory_size = r->slot_size, .backing = r->back.sim,
		};
		int ret = slat_vm_set_user_memory_region(r->vm, &m);

		if (ret)
			return ret;
	}
	return 0;
}

/* The VM and its caps, as dirty_log_perf_test enables them. */
static int dl_create(struct dl_run *r)
{
	struct slat_vm_config cfg;
	int ret;

	perf_vm_config(r->sw, &r->o->cost, &r->tcfg, &cfg);
	/* --split-skip=off: the simulator's eager split walks every level. */
	cfg.eager_split_no_skip = !r->sw->split_skip;
	r->vm = slat_vm_create(&cfg, &ret);
	if (!r->vm)
		return fail(NULL, "creating the VM", ret);
	/* The simulator splits where KVM does: when logging is enabled, or
	 * on CLEAR_DIRTY_LOG with INITIALLY_SET. */
	if (r->sw->eager != EAGER_OFF &&
	    (ret = slat_vm_enable_cap(r->vm, SLAT_VM_CAP_EAGER_SPLIT_CHUNK_SIZE,
				      r->chunk)))
		return fail(r->vm, "eager split chunk size", ret);
	if (r->manual) {
		uint64_t caps = SLAT_VM_MANUAL_PROTECT_ENABLE;

		/* Eager split when logging starts needs the protection then. */
		if (r->sw->eager != EAGER_ENABLE)
			caps |= SLAT_VM_INITIALLY_SET;
		ret = slat_vm_enable_cap(r->vm, SLAT_VM_CAP_MANUAL_DIRTY_LOG_PROTECT2,
					 caps);
		if (ret)
			return fail(r->vm, "manual dirty log protect", ret);
	}
	if (r->ring) {
		uint64_t per = (r->s->overlap ? r->total : r->s->vcpu_bytes) /
			       r->granule;

		if (per + 128 > (1u << 24))
			perf_usage_error("--dirty=ring: a vCPU dirties %llu pages per "
					 "pass, more than a 16M-entry ring holds; "
					 "lower -b", (unsigned long long)per);
		ret = slat_vm_enable_cap(r->vm, SLAT_VM_CAP_DIRTY_LOG_RING,
					 pow2_at_least(per + 128));
		if (ret)
			return fail(r->vm, "dirty ring", ret);
	}
	return 0;
}

/* Slots, bitmaps and the memstress vCPUs. */
static int dl_start(struct dl_run *r)
{
	struct dl_state *s = r->s;
	struct slat_vm_memstress ms = {
		.gpa = r->gpa, .bytes_per_vcpu = s->vcpu_bytes,
		.nr_vcpus = s->nr_vcpus, .write_percent = 100,
		.overlap = s->overlap, .seed = s->seed,
	};
	int ret;

	r->bitmaps = calloc(s->slots, sizeof(*r->bitmaps));
	for (uint32_t i = 0; r->bitmaps && i < s->slots; i++)
		if (!(r->bitmaps[i] = calloc(r->words, sizeof(uint64_t))))
			break;
	if (!r->bitmaps || !r->bitmaps[s->slots - 1]) {
		fprintf(stderr, "slat-perf: out of memory for dirty bitmaps\n");
		return 1;
	}
	if ((ret = dl_slots(r, 0)))
		return fail(r->vm, "creating a memslot", ret);
	if ((ret = slat_vm_memstress_start(r->vm, &ms)))
		return fail(r->vm, "starting the vCPUs", ret);
	for (uint32_t v = 0; s->pin && v < s->nr_vcpus; v++)
		if ((ret = slat_vcpu_pin(slat_vm_vcpu(r->vm, v), s->cpu[v])))
			return fail(r->vm, "pinning a vCPU", ret);
	return 0;
}

/* Guest accesses of one memstress pass. */
static uint64_t dl_pass_accesses(const struct dl_run *r)
{
	const struct dl_state *s = r->s;

	return (s->overlap ? r->total : s->vcpu_bytes) / r->granule * s->nr_vcpus;
}

/* One memstress pass: populate, or iteration @it's dirtying. */
static int dl_pass(struct dl_run *r, const char *name, int it)
{
	struct perf_timer t;
	int64_t ns;

	perf_phase_begin(&t, r->o, r->vm, it ? "dirty memory" : "populate",
			 dl_pass_accesses(r));
	ns = slat_vm_memstress_iterate(r->vm);
	perf_phase_end(&t, r->run, name, it, ns < 0 ? 0 : ns);
	if (ns < 0)
		return fail(r->vm, it ? "dirtying memory" : "populating", (int)ns);
	if (it)
		fprintf(r->out, "Iteration %d dirty memory time: %s\n", it,
			PERF_TS((uint64_t)ns));
	else
		fprintf(r->out, "Populate memory time: %s\n", PERF_TS((uint64_t)ns));
	return 0;
}

static int dl_enable(struct dl_run *r)
{
	struct perf_timer t;
	uint64_t ns;
	int ret;

	slat_vm_memstress_set_write_percent(r->vm, r->s->write_percent);
	slat_vm_memstress_set_random_access(r->vm, r->s->random_access);
	perf_phase_begin(&t, r->o, r->vm, "enable dirty logging", 0);
	ret = dl_slots(r, SLAT_VM_MEM_LOG_DIRTY_PAGES);
	ns = perf_phase_end(&t, r->run, "enable", 0, -1);
	if (ret)
		return fail(r->vm, "enabling dirty logging", ret);
	fprintf(r->out, "Enabling dirty logging time: %s\n\n", PERF_TS(ns));
	return 0;
}

/* --dirty=ring: harvest every vCPU's ring into the bitmaps. */
static int dl_harvest(struct dl_run *r)
{
	static struct slat_vm_dirty_gfn buf[4096];

	for (uint32_t i = 0; i < r->s->slots; i++)
		memset(r->bitmaps[i], 0, r->words * sizeof(uint64_t));
	for (uint32_t v = 0; v < r->s->nr_vcpus; v++) {
		struct slat_vcpu *vc = slat_vm_vcpu(r->vm, v);
		int n;

		while ((n = slat_vcpu_dirty_ring_harvest(vc, buf, 4096)) > 0)
			for (int k = 0; k < n; k++)
				r->bitmaps[buf[k].slot - 1][buf[k].offset / 64] |=
					1ull << (buf[k].offset % 64);
		if (n < 0)
			return n;
	}
	return 0;
}

static int dl_get(struct dl_run *r, int it)
{
	struct perf_timer t;
	uint64_t ns;
	int ret = 0;

	perf_phase_begin(&t, r->o, r->vm, "get dirty log", 0);
	if (r->ring)
		ret = dl_harvest(r);
	for (uint32_t i = 0; !r->ring && !ret && i < r->s->slots; i++)
		ret = slat_vm_get_dirty_log(r->vm, 1 + i, r->bitmaps[i]);
	ns = perf_phase_end(&t, r->run, "get", it, -1);
	if (ret)
		return fail(r->vm, r->ring ? "harvesting a dirty ring" :
			    "KVM_GET_DIRTY_LOG", ret);
	r->get_total += ns;
	fprintf(r->out, "Iteration %d get dirty log time: %s\n", it, PERF_TS(ns));
	return 0;
}

static int dl_clear(struct dl_run *r, int it)
{
	struct perf_timer t;
	uint64_t ns;
	int ret = 0;

	perf_phase_begin(&t, r->o, r->vm, "clear dirty log", 0);
	if (r->ring) {
		int64_t n = slat_vm_reset_dirty_rings(r->vm);

		ret = n < 0 ? (int)n : 0;
	}
	for (uint32_t i = 0; !r->ring && !ret && i < r->s->slots; i++)
		ret = slat_vm_clear_dirty_log(r->vm, 1 + i, 0, r->npages,
					      r->bitmaps[i]);
	ns = perf_phase_end(&t, r->run, "clear", it, -1);
	if (ret)
		return fail(r->vm, r->ring ? "KVM_RESET_DIRTY_RINGS" :
			    "KVM_CLEAR_DIRTY_LOG", ret);
	r->clear_total += ns;
	fprintf(r->out, "Iteration %d clear dirty log time: %s\n", it, PERF_TS(ns));
	return 0;
}

/* Disable dirty logging, with -e while the vCPUs keep running. */
static int dl_disable(struct dl_run *r)
{
	struct bg bg = { .vm = r->vm };
	struct perf_timer t;
	pthread_t th;
	bool bg_on = false;
	uint64_t ns;
	int ret;

	if (r->s->keep_running)
		bg_on = !pthread_create(&th, NULL, bg_iterate, &bg);
	perf_phase_begin(&t, r->o, r->vm, "disable dirty logging", 0);
	ret = dl_slots(r, 0);
	if (bg_on) {
		__atomic_store_n(&bg.stop, true, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
	}
	ns = perf_phase_end(&t, r->run, "disable", 0, -1);
	if (ret)
		return fail(r->vm, "disabling dirty logging", ret);
	fprintf(r->out, "Disabling dirty logging time: %s\n", PERF_TS(ns));
	return 0;
}

/* The phases of one mode, after the VM exists. */
static int dl_phases_run(struct dl_run *r)
{
	int rc = dl_start(r);

	rc = rc ? rc : dl_pass(r, "populate", 0);
	rc = rc ? rc : dl_enable(r);
	for (int it = 1; !rc && it <= r->s->iterations; it++) {
		rc = dl_pass(r, "dirty", it);
		rc = rc ? rc : dl_get(r, it);
		if (!rc && (r->manual || r->ring))
			rc = dl_clear(r, it);
		fflush(r->out);
	}
	rc = rc ? rc : dl_disable(r);
	slat_vm_memstress_stop(r->vm);
	return rc;
}

/* The real test's lines for -n, where it cannot run (exit 4). */
static void dl_nested(const struct dl_run *r)
{
	fprintf(r->out, "Configuring vCPUs to run in L2 (nested).\n");
	if (r->o->arch == PERF_ARCH_X86)
		fprintf(r->out, "1..0 # SKIP - Requirement not met: "
			"kvm_cpu_has_tdp()\n");
	else
		fprintf(r->out, "memstress_setup_nested() not support on this "
			"architecture, skipping.\n");
	fflush(r->out);
	if (!r->o->selftest_only)
		fprintf(stderr, "slat-perf: -n: slat has no nested stage-2 tables; "
			"run without -n\n");
	exit(4);
}

static void print_avg(FILE *out, const char *what, int iters, uint64_t total)
{
	fprintf(out, "%s dirty log over %lu iterations took %s. (Avg %s/iteration)\n",
		what, (unsigned long)iters, PERF_TS(total), PERF_TS(total / (uint64_t)iters));
}

static int run_mode(struct dl_state *s, const struct perf_opts *o,
		    const struct perf_switches *sw, int mode,
		    struct perf_run *run, FILE *out)
{
	struct dl_run r = { .s = s, .o = o, .sw = sw, .run = run, .out = out,
			    .mode = mode };
	int rc;

	perf_mode_check(o, mode);
	perf_mode_config(o, mode, &r.tcfg);
	r.ring = perf_dirty_ring(sw->dirty);
	r.manual = s->manual && !r.ring;
	dl_check_chunk(&r);
	dl_layout(&r);
	fprintf(out, "Testing guest mode: %s\n", perf_modes[mode].str);
	fprintf(out, "Random seed: 0x%x\n", s->seed);
	fprintf(out, "guest physical test memory: [0x%llx, 0x%llx)\n",
		(unsigned long long)r.gpa, (unsigned long long)(r.gpa + r.total));
	fflush(out);
	if (s->nested)
		dl_nested(&r);
	rc = dl_create(&r);
	rc = rc ? rc : dl_phases_run(&r);
	for (uint32_t i = 0; r.bitmaps && i < s->slots; i++)
		free(r.bitmaps[i]);
	free(r.bitmaps);
	slat_vm_destroy(r.vm);
	if (rc)
		return rc;
	print_avg(out, "Get", s->iterations, r.get_total);
	if (r.manual || r.ring)
		print_avg(out, "Clear", s->iterations, r.clear_total);
	fflush(out);
	return 0;
}

static int dl_run(void *state, const struct perf_opts *o,
		  const struct perf_switches *sw, struct perf_run *run, FILE *out)
{
	struct dl_state *s = state;

	fprintf(out, "Test iterations: %lu\n", (unsigned long)s->iterations);
	for (int i = 0; i < s->nr_modes; i++) {
		int rc = run_mode(s, o, sw, s->modes[i], run, out);

		if (rc)
			return rc;
	}
	return 0;
}

static void dl_settings(void *state, FILE *f)
{
	struct dl_state *s = state;

	fprintf(f, "\"iterations\": %d, \"vcpus\": %u, \"vcpu_bytes\": %llu, "
		"\"backing\": \"%s\", \"slots\": %u, \"write_percent\": %u, "
		"\"random_access\": %s, \"overlap\": %s, \"manual_protect\": %s, "
		"\"run_vcpus_while_disabling\": %s, \"seed\": %u, \"modes\": [",
		s->iterations, s->nr_vcpus, (unsigned long long)s->vcpu_bytes,
		s->backing, s->slots, s->write_percent,
		s->random_access ? "true" : "false", s->overlap ? "true" : "false",
		s->manual ? "true" : "false", s->keep_running ? "true" : "false",
		s->seed);
	for (int i = 0; i < s->nr_modes; i++)
		fprintf(f, "%s\"%s\"", i ? ", " : "", perf_modes[s->modes[i]].str);
	fprintf(f, "]");
}

static const char *const dl_phases[] = {
	"populate", "enable", "dirty", "get", "clear", "disable", NULL,
};

const struct perf_cmd perf_cmd_dirty_log = {
	.name = "dirty-log",
	.prepare = dl_prepare,
	.run = dl_run,
	.release = free,
	.settings_json = dl_settings,
	.table_phases = dl_phases,
};
