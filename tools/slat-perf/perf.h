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
};

/* Parse "NAME=VALUE" of a switch into @sw. Returns 0, or -1 with a message
 * in @err. */
int perf_switch_set(struct perf_switches *sw, const char *name,
		    const char *value, char *err, size_t errlen);
/* The current value of switch @name as text. */
const char *perf_switch_get(const struct perf_switches *sw, const char *name,
			    char *buf, size_t len);
bool perf_switch_known(const char *name);

/* ---- cost model ---- */

struct perf_cost {
	double tlbi_ipa, tlbi_ipa_local, tlbi_range, tlbi_vmid; /* ns each */
	double dsb;           /* ns per barrier completing a TLBI or clean */
	double clean_line;    /* ns per cache line cleaned to PoC */
	double cache_line;    /* bytes per line */
	double fault_exit;    /* ns per stage-2 fault: exit, handler entry, return */
	double entry_visit;   /* ns per descriptor read by a walk */
	double entry_write;   /* ns per descriptor store */
};

void perf_cost_default(struct perf_cost *c);
/* Read `key = value` lines (# comments) from @path into @c. Returns 0, or
 * the exit status after a message on stderr: 1 the file cannot be read, 2
 * its contents are wrong. */
int perf_cost_load(struct perf_cost *c, const char *path);

/* ---- phases and runs ---- */

struct perf_phase {
	char name[48];        /* "populate", "enable", "dirty", "get", ... */
	int iteration;        /* 0: not an iteration phase */
	uint64_t wall_ns;     /* measured on this host */
	struct slat_vm_stats st;
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

/* Modeled hardware time of the counts in @st, in ns. */
double perf_modeled_ns(const struct perf_cost *c, const struct slat_vm_stats *st);

/* ---- common options ---- */

struct perf_opts {
	const char *cmd;          /* "dirty-log", "page-table", "mmio" */
	struct perf_switches sw;
	struct perf_cost cost;
	const char *cost_file;
	const char *json;
	const char *svg;
	const char *cmp_name;     /* --compare NAME=A,B */
	char *cmp_vals[8];
	int cmp_n;
	int repeat;               /* --repeat: runs per value (alternating) */
	int ept_levels;           /* 4 or 5, for PA-bits:ANY */
	bool quiet_counts;        /* --no-counts */
	bool progress;            /* stderr is a terminal */
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
#define PERF_MODE_DEFAULT 6      /* PA-bits:40, 4K: the simulator's default */
#define PERF_MODE_EPT 9          /* PA-bits:ANY */

/* Fill @cfg for mode @id; returns true when slat supports it. */
bool perf_mode_config(int id, int ept_levels, struct slat_config *cfg);
void perf_modes_help(FILE *f, int ept_levels);

/* ---- shared helpers ---- */

/* Parse a size with an optional b/k/m/g/t suffix, like the selftests'
 * parse_size(). Exits with a message on a bad value. */
uint64_t perf_parse_size(const char *what, const char *s);
/* A positive int (atoi_positive). Exits on a bad value. */
int perf_parse_positive(const char *what, const char *s);
/* A non-negative int. */
int perf_parse_nonneg(const char *what, const char *s);
/* The selftests' -m: a guest mode ID this build supports. */
int perf_parse_mode(const char *s, int ept_levels);
/* -v: @min (0 or 1) to 512 vCPUs. */
uint32_t perf_parse_vcpus(const char *s, int min);
/* -s: a backing source name the simulator knows. */
const char *perf_parse_backing(const char *s);
/* Print "%ld.%.9lds" of @ns into @buf. */
const char *perf_ts(char *buf, uint64_t ns);
#define PERF_TS(ns) perf_ts((char[32]){0}, (ns))

void perf_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* Stats of @vm now. */
void perf_stats(struct slat_vm *vm, struct slat_vm_stats *s);

/* Build the VM config for @sw and mode config @table (@cost: how long a
 * synthetic clean takes with --clean-time=slept). */
void perf_vm_config(const struct perf_switches *sw, const struct perf_cost *cost,
		    const struct slat_config *table, struct slat_vm_config *cfg);

/* Progress on stderr when it is a terminal: @done of @total steps. */
void perf_progress(const struct perf_opts *o, const char *what, uint64_t done,
		   uint64_t total);
void perf_progress_end(const struct perf_opts *o);

/* ---- output ---- */

void perf_print_counts(FILE *f, const struct perf_opts *o,
		       const struct perf_cmd *cmd, const struct perf_run *runs,
		       int nruns);
void perf_print_compare(FILE *f, const struct perf_opts *o,
			const struct perf_cmd *cmd, const struct perf_run *runs,
			int nruns);
int perf_write_json(const char *path, const struct perf_opts *o,
		    const struct perf_cmd *cmd, void *state,
		    const struct perf_run *runs, int nruns);
int perf_write_svg(const char *path, const struct perf_opts *o,
		   const struct perf_cmd *cmd, const struct perf_run *runs,
		   int nruns);

#endif
