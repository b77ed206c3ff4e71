/* SPDX-License-Identifier: MIT */
/*
 * slat-perf: the KVM selftests' performance experiments (dirty_log_perf_test,
 * kvm_page_table_test) and the MMIO experiment, run on the VM simulator,
 * with exact counts per phase and a modeled hardware time.
 */
#ifndef SLAT_PERF_H
#define SLAT_PERF_H

#include <slat/sim.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* ---- strategy switches (one per seed) ---- */

enum perf_eager { EAGER_OFF, EAGER_ENABLE, EAGER_CLEAR };
enum perf_dirty { DIRTY_WP, DIRTY_HW, DIRTY_RING, DIRTY_RING_HW };

/* Dirty pages come from per-vCPU rings (harvest, reset), not the bitmap. */
static inline bool perf_dirty_ring(enum perf_dirty d)
{
	return d == DIRTY_RING || d == DIRTY_RING_HW;
}

struct perf_switches {
	enum slat_vm_cmo_placement cmo;      /* --cmo (000) */
	enum slat_vm_recovery recover;       /* --recover (001) */
	enum slat_vm_flush flush;            /* --flush (001, 004) */
	bool split_skip;                     /* --split-skip (002) */
	enum perf_eager eager;               /* --eager-split (002) */
	uint64_t eager_chunk;                /* bytes; 0: the granule's block */
	enum slat_vm_mmio_map mmio_map;      /* --mmio-map (004) */
	enum perf_dirty dirty;               /* --dirty */
	bool clean_slept;                    /* --clean-time=slept */
	enum slat_vm_block_fault block_fault; /* --block-fault */
	bool wp_split;                       /* --wp-partial=split */
	bool x86_wp;                         /* --x86-dirty=wp (else pml) */
	bool host_linux;                     /* --host-memory=linux */
	enum slat_vm_fault_lock fault_lock;  /* --fault-lock (000's kernel) */
};

/*
 * A seed (docs/seeds.md): the public thread a switch reproduces, and the
 * switch's value before the thread's change and after it.
 */
struct perf_seed {
	const char *id;          /* "000".."004" */
	const char *what;        /* what it changed, a few words */
	const char *by;          /* its author and year */
	const char *msgid;       /* the thread's Message-ID */
	const char *sw;          /* the switch, or NULL (a command of its own) */
	const char *before, *after;
	bool x86;                /* the change is KVM x86's (else arm64's) */
};

/* The five seeds, in order; NULL-terminated. */
extern const struct perf_seed perf_seeds[];
/* The seed whose before and after @sw=@a and @sw=@b are (either order),
 * or NULL. */
const struct perf_seed *perf_seed_of(const char *sw, const char *a,
				     const char *b);

/* Parse "NAME=VALUE" of a switch into @sw. Returns 0, or -1 with a message
 * in @err. */
int perf_switch_set(struct perf_switches *sw, const char *name,
		    const char *value, char *err, size_t errlen);
/* The current value of switch @name as text. */
const char *perf_switch_get(const struct perf_switches *sw, const char *name,
			    char *buf, size_t len);
bool perf_switch_known(const char *name);
/* The index of switch @name (-1: none), for perf_opts.sw_set. */
int perf_switch_index(const char *name);

/* ---- cost model ---- */

struct perf_cost {
	double tlbi_ipa, tlbi_ipa_local, tlbi_range, tlbi_vmid; /* ns each */
	double dsb;           /* ns per barrier completing a TLBI or clean */
	double clean_line;    /* ns per cache line cleaned to PoC */
	double cache_line;    /* bytes per line */
	double fault_exit;    /* ns per stage-2 fault: exit, handler entry, return */
	double entry_visit;   /* ns per descriptor read by a walk */
	double entry_write;   /* ns per descriptor store but a leaf's */
	double leaf_install;  /* ns per leaf installed (map, split, fault):
				 a store and what a map walker does for it */
	double ipi_send;      /* ns the initiator of an IPI shootdown spends
				 per vCPU it interrupts (x86) */
	double ipi_exit;      /* ns an interrupted vCPU loses: exit, ack,
				 re-entry; the initiator waits for it */
	double mem_bw;        /* bytes per ns (GB/s) the memory takes from
				 D-cache cleans of all CPUs together */
	double invept_single; /* ns of one single-context INVEPT: a vCPU's
				 flush of its own context (x86) */
	double invept_all;    /* ns of one all-context INVEPT: a vCPU's
				 answer to a flush request (x86) */
	double tlb_request;   /* ns the initiator of kvm_flush_remote_tlbs()
				 spends per vCPU: its request bit (x86) */
	double pml_full;      /* ns of a PML-full exit: the exit, the drain
				 of 512 entries into the log, re-entry */
	double asid_flush;    /* ns of the flush of a vCPU's ASID at VMRUN
				 (AMD NPT: TLB_CONTROL, no INVEPT) */
	uint32_t from_file;   /* bit i: perf_cost_keys[i] set by --cost */
};

/*
 * One cost of the table: its key, its place in struct perf_cost, its unit,
 * and the published measurement its default cites, or NULL: assumed (no
 * published figure; reports mark it, and a comparison shows what halving
 * or doubling it moves).
 */
struct perf_cost_key {
	const char *key;
	size_t off;
	const char *unit;
	const char *source;
};
extern const struct perf_cost_key perf_cost_keys[];
extern const int perf_cost_nkeys;

/* The cost of @k in @c. */
static inline double *perf_cost_at(struct perf_cost *c,
				   const struct perf_cost_key *k)
{
	return (double *)((char *)c + k->off);
}

/* Whether @c's value of @k is assumed: the default, without a source. */
static inline bool perf_cost_assumed(const struct perf_cost *c, int i)
{
	return !perf_cost_keys[i].source && !(c->from_file & (1u << i));
}

void perf_cost_default(struct perf_cost *c);
/* Read `key = value` lines (# comments) from @path into @c. Returns 0, or
 * the exit status after a message on stderr: 1 the file cannot be read, 2
 * its contents are wrong. */
int perf_cost_load(struct perf_cost *c, const char *path);

/* ---- phases and runs ---- */

/* A phase's modeled elapsed time and what a guest feels in it. */
struct perf_elapsed {
	double elapsed_ns;        /* virtual time from start to the last end */
	double work_ns;           /* total work: counts x costs, summed */
	uint64_t faults;
	double lat_p50_ns, lat_p99_ns, lat_max_ns; /* worst vCPU's */
	double stall_host_ns;     /* worst vCPU's time held up by host work */
	double lock_wait_ns;      /* worst vCPU's time waiting for mmu_lock */
	double max_write_hold_ns; /* longest exclusive mmu_lock hold */
};

struct perf_phase {
	char name[48];        /* "populate", "enable", "dirty", "get", ... */
	int iteration;        /* 0: not an iteration phase */
	uint64_t wall_ns;     /* measured on this host */
	double model_ns;      /* >= 0: the command's own model (tlbi-trap's
				 guest time); < 0: the cost table's */
	uint32_t vcpus;       /* vCPUs of the VM during the phase */
	struct slat_vm_stats st;
	struct perf_elapsed el; /* set by perf_run_elapsed() after the run */
};

struct perf_run {
	char label[64];       /* "" or "SWITCH=VALUE" */
	struct perf_switches sw;
	struct perf_phase *ph;
	int nph, cap;
};

struct perf_phase *perf_run_add(struct perf_run *r, const char *name,
				int iteration, uint64_t wall_ns,
				const struct slat_vm_stats *st);
void perf_run_free(struct perf_run *r);

/* Invalidations the simulator issued itself (by range, after its own range
 * operations: dirty log calls, logging on), outside the core's hooks. */
uint64_t perf_vm_tlbi(const struct slat_vm_stats *s);

struct perf_opts;

/*
 * x86's TLB flushes of a phase (KVM x86 has no invalidation by guest
 * physical address with EPT or NPT): each invalidation the counts hold is
 * one kvm_flush_remote_tlbs(), a request to every vCPU that it flushes
 * before it next enters the guest (EPT: an all-context INVEPT,
 * vmx_flush_tlb_all(); NPT: a flush of its ASID by the VMRUN,
 * TLB_CONTROL), and an IPI to each vCPU then in the guest. A local
 * invalidation is the faulting vCPU's flush of its own context (EPT: a
 * single-context INVEPT, vmx_flush_tlb_current()).
 */
struct perf_x86_flush {
	uint64_t flushes;  /* kvm_flush_remote_tlbs() calls */
	uint64_t requests; /* request bits set: flushes x vCPUs */
	uint64_t kicks;    /* IPIs: vCPUs in the guest at a flush */
	uint64_t vcpu_flushes; /* flush requests honoured: all-context
				  INVEPTs or ASID flushes (requests coalesce
				  while a vCPU is out of the guest) */
	uint64_t local_flushes; /* a vCPU's flushes of its own context:
				   single-context INVEPTs or ASID flushes */
};
/* The flushes of phase @p (its counts and vCPUs) on x86. */
void perf_x86_flush(const struct perf_phase *p, struct perf_x86_flush *x);
/* The cost of one flush a vCPU does for itself on x86 table format @fmt:
 * an all-context INVEPT for a flush request or, @local, a single-context
 * one (EPT); an ASID flush at VMRUN either way (NPT). */
double perf_x86_vcpu_flush_ns(const struct perf_cost *c,
			      enum slat_format_id fmt, bool local);
/* Whether @fmt is an x86 table (EPT or NPT). */
static inline bool perf_fmt_x86(enum slat_format_id fmt)
{
	return fmt == SLAT_FMT_EPT || fmt == SLAT_FMT_NPT;
}
/* The short name of table format @fmt: "arm-s2", "ept", "npt". */
const char *perf_fmt_name(enum slat_format_id fmt);

/* Modeled hardware time (total work) of phase @p's counts, in ns, with the
 * cost table and architecture of @o. */
double perf_modeled_ns(const struct perf_opts *o, const struct perf_phase *p);
/* The software cost of the table work counted in @t, in ns: entries
 * visited, leaves installed, other descriptor stores. */
double perf_entry_ns(const struct perf_cost *c, const struct slat_stats *t);
/* The modeled time of phase @p: its own model or the cost table's. */
double perf_phase_model(const struct perf_opts *o, const struct perf_phase *p);

/**
 * perf_phase_elapsed() - the modeled elapsed time of a phase
 * @o: the options (cost table, architecture)
 * @sw: the run's switches (where cleans happen)
 * @p: the phase, with its counts and vCPU count
 * @e: the result
 *
 * Replays the phase's counts in virtual time (vtime.h): with faults, the
 * vCPUs share them evenly; without, one host operation does the work.
 * A phase with its own model (tlbi-trap) keeps it.
 *
 * Return: 0, or -1 when memory runs out.
 */
int perf_phase_elapsed(const struct perf_opts *o, const struct perf_switches *sw,
		       const struct perf_phase *p, struct perf_elapsed *e);

/**
 * perf_run_elapsed() - perf_phase_elapsed() of every phase of @r, kept in
 * its phase (p->el) for every report to read
 * @o: the options
 * @r: the run, complete
 *
 * Return: 0, or -1 when memory runs out.
 */
int perf_run_elapsed(const struct perf_opts *o, struct perf_run *r);

/* ---- common options ---- */

/* The host architecture the selftest command lines stand for (--arch):
 * it picks the guest modes that are supported and so the table format. */
enum perf_arch { PERF_ARCH_ARM64, PERF_ARCH_X86 };

struct perf_opts {
	const char *cmd;          /* "dirty-log", "page-table", "mmio" */
	const char *prog;         /* the name usage lines and getopt print */
	struct perf_switches sw;
	uint32_t sw_set;          /* bit i: switch_names[i] given on the line */
	struct perf_cost cost;
	const char *cost_file;
	const char *json;
	const char *svg;
	FILE *json_f, *svg_f;     /* opened before the run */
	const char *cmp_name;     /* --compare NAME=A,B */
	char *cmp_vals[8];
	int cmp_n;
	int repeat;               /* --repeat: runs per value (alternating) */
	int ept_levels;           /* 4 or 5, for PA-bits:ANY */
	enum perf_arch arch;      /* --arch */
	bool arch_set;            /* --arch given (else -m 9 alone means x86) */
	enum slat_format_id x86_fmt; /* --format: EPT (Intel) or NPT (AMD) */
	bool fmt_set;             /* --format given */
	bool strict;              /* --strict: slat-perf's errors, exit 2 */
	bool selftest_only;       /* --selftest-output: only the real lines */
	bool quiet_counts;        /* --no-counts */
	bool progress;            /* stderr is a terminal, or --progress */
	char title[160];          /* the command line, for the chart */
	int argc;                 /* the command's own arguments */
	char **argv;
};

/* One experiment: parses its own selftest options from o->argv once
 * (prepare), then runs with switches @sw, printing the selftest lines to
 * @out and recording phases in @run. Returns 0 or an exit status. */
struct perf_cmd {
	const char *name;
	int (*prepare)(struct perf_opts *o, void **state);
	int (*run)(void *state, const struct perf_opts *o,
		   const struct perf_switches *sw, struct perf_run *run, FILE *out);
	void (*release)(void *state);
	/* A settings summary for JSON: writes `"key": value` pairs. */
	void (*settings_json)(void *state, FILE *f);
	const char *const *table_phases; /* the phases the counts table shows */
	/* The chart's second panel (NULL: "modeled hardware time"). */
	const char *model_label;
};

extern const struct perf_cmd perf_cmd_dirty_log;
extern const struct perf_cmd perf_cmd_page_table;
extern const struct perf_cmd perf_cmd_mmio;
extern const struct perf_cmd perf_cmd_tlbi_trap;

/* ---- guest modes (-m) ---- */

struct perf_mode {
	const char *str;          /* the selftests' string */
	enum slat_format_id fmt;  /* 0: no slat format (RISC-V) */
	uint32_t granule;
	uint8_t ia_bits;
};
extern const struct perf_mode perf_modes[];
extern const int perf_nr_modes;
#define PERF_MODE_ARM64 6        /* PA-bits:40, 4K: the seed commands' default */
#define PERF_MODE_EPT 9          /* PA-bits:ANY */
#define PERF_MAX_MODES 32

/* The seed commands' default mode for the architecture of @o. */
int perf_mode_default(const struct perf_opts *o);
/* Fill @cfg for mode @id; returns true when the architecture of @o runs it
 * and slat supports it. */
bool perf_mode_config(const struct perf_opts *o, int id, struct slat_config *cfg);
/* The selftests' -m help block, " (supported)" after the modes of @o. */
void perf_modes_help(FILE *f, const struct perf_opts *o);
/* The selftests' -m: a mode ID of the table (exits on a bad number). Its
 * support is checked when the run reaches it (perf_mode_check). */
int perf_parse_mode(const char *s);
/* Without --arch, a command line whose -m modes (@mask) are all x86's
 * stands for x86. */
void perf_arch_from_modes(struct perf_opts *o, uint32_t mask);
/* All supported modes of the architecture into @modes; returns how many. */
int perf_modes_all(const struct perf_opts *o, int *modes);
/**
 * perf_modes_select() - the modes a command line runs
 * @o: the options (the architecture is set from @mask without --arch)
 * @mask: bit i set for each -m i given
 * @modes: filled with the mode IDs, in ID order
 *
 * The -m modes, or every supported mode of the architecture when none
 * was given, as the real tools run them.
 *
 * Return: the number of modes in @modes.
 */
int perf_modes_select(struct perf_opts *o, uint32_t mask, int *modes);
/* The real tools' assertion when mode @id is not supported. */
void perf_mode_check(const struct perf_opts *o, int id);

/* ---- the real tools' behaviour ---- */

/* The line every selftest run starts with (its library's constructor). */
void perf_selftest_banner(void);
/*
 * A failed TEST_ASSERT of the real tool: its block on stderr, exit 254.
 * @where is the tool's "file:line: expression"; the message follows. With
 * --strict: "slat-perf: <message> (<hint>)" and exit 2 instead.
 */
void perf_assert_fail(const struct perf_opts *o, const char *where,
		      const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 4, 5), noreturn));
/* The real tools on an unknown option: getopt's message, the help on
 * stdout, exit 0 (--strict: the message, exit 2). */
void perf_bad_option(const struct perf_opts *o, int opt,
		     void (*help)(FILE *, const struct perf_opts *));
/* A note of slat-perf's, printed after the real lines. */
void perf_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void perf_print_notes(FILE *f);

/* ---- backing sources (-s) ---- */

struct perf_backing {
	const char *name;         /* the selftests' name (or synthetic*) */
	const char *sim;          /* the simulator's source for it */
	uint64_t page_size;       /* the source's page size on this host */
	bool real;                /* holds data (not a synthetic stand-in) */
};

/* -s: a selftest backing source or a synthetic one; exits on a bad name. */
const char *perf_parse_backing(const char *s);
/* The selftests' -s help block. */
void perf_backing_help(FILE *f, const char *flag);
/*
 * The source that runs @name for @bytes on this host: the simulator's own
 * when it has it and the host can hold it, else a synthetic stand-in of the
 * same page size (with a note saying so). A real source larger than the
 * host's available memory is refused (exit 1) before anything is touched.
 */
void perf_backing_resolve(const char *name, uint64_t bytes,
			  struct perf_backing *b);
/* Whether @name is a hugetlb source (kvm_page_table_test -u needs one). */
bool perf_backing_hugetlb(const char *name);

/* ---- shared helpers ---- */

/* Parse a size as the selftests' parse_size() does: a number, then one
 * optional b/k/m/g/t letter (what follows it is ignored: "1GB" is 1G).
 * Exits with a message on a bad value. */
uint64_t perf_parse_size(const char *what, const char *s);
/* A positive int (atoi_positive). Exits on a bad value. */
int perf_parse_positive(const char *what, const char *s);
/* A non-negative int. */
int perf_parse_nonneg(const char *what, const char *s);
/* -v: @min (0 or 1) to 512 vCPUs. */
uint32_t perf_parse_vcpus(const char *s, int min);
/* Print "%ld.%.9lds" of @ns into @buf. */
const char *perf_ts(char *buf, uint64_t ns);
#define PERF_TS(ns) perf_ts((char[32]){0}, (ns))
/* @ns with a unit that suits it: "512 ns", "3.25 us", "1.20 ms", "2.5 s". */
const char *perf_scaled(char *buf, size_t len, double ns);

void perf_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* Stats of @vm now. */
void perf_stats(struct slat_vm *vm, struct slat_vm_stats *s);

/* Build the VM config for @sw and mode config @table (@cost: how long a
 * synthetic clean takes with --clean-time=slept). */
void perf_vm_config(const struct perf_switches *sw, const struct perf_cost *cost,
		    const struct slat_config *table, struct slat_vm_config *cfg);

/*
 * One timed phase: perf_phase_begin() reads the counters and the clock
 * (and, on a terminal, starts a progress bar that follows the guest
 * accesses, @expect of them, with their rate); perf_phase_end() records
 * the phase's counts in @run as @name with @ns (or the measured wall time
 * when @ns < 0) and returns that time.
 */
struct perf_timer {
	const struct perf_opts *o;
	struct slat_vm *vm;
	struct slat_vm_stats a;
	uint64_t t0;
	struct perf_ticker *ticker;
};
void perf_phase_begin(struct perf_timer *t, const struct perf_opts *o,
		      struct slat_vm *vm, const char *what, uint64_t expect);
uint64_t perf_phase_end(struct perf_timer *t, struct perf_run *run,
			const char *name, int iteration, int64_t ns);
/* The same bar for work that is not a VM's: @done of @total steps. */
void perf_progress(const struct perf_opts *o, const char *what, uint64_t done,
		   uint64_t total);
void perf_progress_end(const struct perf_opts *o);

/* ---- output ---- */

void perf_print_counts(FILE *f, const struct perf_opts *o,
		       const struct perf_cmd *cmd, const struct perf_run *runs,
		       int nruns);
/* Compared value @v as the output names it: "page (before)" when the
 * comparison is a seed's. */
const char *perf_cmp_label(char *buf, size_t n, const struct perf_opts *o,
			   int v);
void perf_print_compare(FILE *f, const struct perf_opts *o,
			const struct perf_cmd *cmd, const struct perf_run *runs,
			int nruns);
int perf_write_json(FILE *f, const char *path, const struct perf_opts *o,
		    const struct perf_cmd *cmd, void *state,
		    const struct perf_run *runs, int nruns);
int perf_write_svg(FILE *f, const char *path, const struct perf_opts *o,
		   const struct perf_cmd *cmd, const struct perf_run *runs,
		   int nruns);

#endif
