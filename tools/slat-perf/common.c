/* SPDX-License-Identifier: MIT */
/* slat-perf: switches, guest modes, cost table, parsing helpers. */
#include "perf.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "textin.h"

/* A cost file is a dozen `key = value` lines and comments. */
#define COST_LINE_MAX 1024
#define COST_LINES_MAX 4096

/* ---- switches ---- */

static const char *const switch_names[] = {
	"cmo", "recover", "flush", "split-skip", "eager-split", "mmio-map",
	"dirty", "clean-time", "block-fault", "wp-partial", "x86-dirty",
	"host-memory", "fault-lock", NULL,
};

const struct perf_seed perf_seeds[] = {
	{ "000", "CMOs moved into the fault path", "Yanan Wang, 2021",
	  "20210415115032.35760-1-wangyanan55@huawei.com",
	  "cmo", "before-map", "in-walker", false },
	{ "001", "disabling dirty logging", "Ben Gardon, 2022",
	  "20220321224358.1305530-1-bgardon@google.com",
	  "recover", "zap-leaf", "promote", true },
	{ "002", "levels skipped in eager split", "Leonardo Bras, 2026",
	  "20260618131447.764085-1-leo.bras@arm.com",
	  "split-skip", "off", "on", false },
	{ "003", "trapped guest TLBIs", "Punit Agrawal, 2016",
	  "878tvblbhq.fsf@e105922-lin.cambridge.arm.com", NULL, NULL, NULL,
	  false },
	{ "004", "MMIO block mappings", "Keqian Zhu, 2021",
	  "20210122083650.21812-1-zhukeqian1@huawei.com",
	  "mmio-map", "page", "block", false },
	{ NULL, NULL, NULL, NULL, NULL, NULL, NULL, false },
};

const struct perf_seed *perf_seed_of(const char *sw, const char *a,
				     const char *b)
{
	for (const struct perf_seed *s = perf_seeds; s->id; s++) {
		if (!s->sw || strcmp(s->sw, sw))
			continue;
		if ((!strcmp(a, s->before) && !strcmp(b, s->after)) ||
		    (!strcmp(a, s->after) && !strcmp(b, s->before)))
			return s;
	}
	return NULL;
}

int perf_switch_index(const char *name)
{
	for (int i = 0; switch_names[i]; i++)
		if (!strcmp(name, switch_names[i]))
			return i;
	return -1;
}

bool perf_switch_known(const char *name)
{
	return perf_switch_index(name) >= 0;
}

#define BAD(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

/* --eager-split's CHUNK: a size with an optional k/m/g, or 0 if it is not
 * one (strtoull alone would take "-1" as 2^64 - 1). */
static uint64_t parse_chunk(const char *s)
{
	unsigned long long x;
	char *end;
	int sh = 0;

	if (!isdigit((unsigned char)*s))
		return 0;
	errno = 0;
	x = strtoull(s, &end, 0);
	switch (tolower((unsigned char)*end)) {
	case 'k': sh = 10; end++; break;
	case 'm': sh = 20; end++; break;
	case 'g': sh = 30; end++; break;
	default: break;
	}
	if (*end || errno || (x << sh) >> sh != x)
		return 0;
	return x << sh;
}

int perf_switch_set(struct perf_switches *sw, const char *name,
		    const char *v, char *err, size_t errlen)
{
	if (!strcmp(name, "cmo")) {
		if (!strcmp(v, "in-walker"))
			sw->cmo = SLAT_VM_CMO_IN_WALKER;
		else if (!strcmp(v, "before-map"))
			sw->cmo = SLAT_VM_CMO_BEFORE_MAP;
		else
			BAD("--cmo=%s: use in-walker or before-map", v);
	} else if (!strcmp(name, "recover")) {
		if (!strcmp(v, "none"))
			sw->recover = SLAT_VM_RECOVER_NONE;
		else if (!strcmp(v, "zap-leaf"))
			sw->recover = SLAT_VM_RECOVER_ZAP_LEAF;
		else if (!strcmp(v, "zap-table"))
			sw->recover = SLAT_VM_RECOVER_ZAP_TABLE;
		else if (!strcmp(v, "promote"))
			sw->recover = SLAT_VM_RECOVER_PROMOTE;
		else
			BAD("--recover=%s: use none, zap-leaf, zap-table or promote", v);
	} else if (!strcmp(name, "flush")) {
		if (!strcmp(v, "entry"))
			sw->flush = SLAT_VM_FLUSH_ENTRY;
		else if (!strcmp(v, "range"))
			sw->flush = SLAT_VM_FLUSH_RANGE;
		else if (!strcmp(v, "vm"))
			sw->flush = SLAT_VM_FLUSH_VMID;
		else
			BAD("--flush=%s: use entry, range or vm", v);
	} else if (!strcmp(name, "split-skip")) {
		if (!strcmp(v, "on"))
			sw->split_skip = true;
		else if (!strcmp(v, "off"))
			sw->split_skip = false;
		else
			BAD("--split-skip=%s: use on or off", v);
	} else if (!strcmp(name, "eager-split")) {
		const char *colon = strchr(v, ':');
		size_t n = colon ? (size_t)(colon - v) : strlen(v);

		sw->eager_chunk = 0;
		if (n == 3 && !strncmp(v, "off", 3) && !colon)
			sw->eager = EAGER_OFF;
		else if (n == 6 && !strncmp(v, "enable", 6))
			sw->eager = EAGER_ENABLE;
		else if (n == 5 && !strncmp(v, "clear", 5))
			sw->eager = EAGER_CLEAR;
		else
			BAD("--eager-split=%s: use off, enable[:CHUNK] or clear[:CHUNK]"
			    " (CHUNK a block size such as 2M or 1G)", v);
		if (colon && !(sw->eager_chunk = parse_chunk(colon + 1)))
			BAD("--eager-split=%s: CHUNK must be a size such as 2M or "
			    "1G", v);
	} else if (!strcmp(name, "mmio-map")) {
		if (!strcmp(v, "page"))
			sw->mmio_map = SLAT_VM_MMIO_PAGES;
		else if (!strcmp(v, "block"))
			sw->mmio_map = SLAT_VM_MMIO_BLOCKS;
		else
			BAD("--mmio-map=%s: use page or block", v);
	} else if (!strcmp(name, "dirty")) {
		if (!strcmp(v, "wp"))
			sw->dirty = DIRTY_WP;
		else if (!strcmp(v, "hw"))
			sw->dirty = DIRTY_HW;
		else if (!strcmp(v, "ring"))
			sw->dirty = DIRTY_RING;
		else if (!strcmp(v, "ring-hw"))
			sw->dirty = DIRTY_RING_HW;
		else
			BAD("--dirty=%s: use wp, hw, ring or ring-hw", v);
	} else if (!strcmp(name, "clean-time")) {
		if (!strcmp(v, "counted"))
			sw->clean_slept = false;
		else if (!strcmp(v, "slept"))
			sw->clean_slept = true;
		else
			BAD("--clean-time=%s: use counted or slept", v);
	} else if (!strcmp(name, "block-fault")) {
		if (!strcmp(v, "auto"))
			sw->block_fault = SLAT_VM_BLOCK_FAULT_AUTO;
		else if (!strcmp(v, "lazy"))
			sw->block_fault = SLAT_VM_BLOCK_FAULT_LAZY;
		else if (!strcmp(v, "split"))
			sw->block_fault = SLAT_VM_BLOCK_FAULT_SPLIT;
		else
			BAD("--block-fault=%s: use auto, lazy or split", v);
	} else if (!strcmp(name, "wp-partial")) {
		if (!strcmp(v, "block"))
			sw->wp_split = false;
		else if (!strcmp(v, "split"))
			sw->wp_split = true;
		else
			BAD("--wp-partial=%s: use block or split", v);
	} else if (!strcmp(name, "x86-dirty")) {
		if (!strcmp(v, "pml"))
			sw->x86_wp = false;
		else if (!strcmp(v, "wp"))
			sw->x86_wp = true;
		else
			BAD("--x86-dirty=%s: use pml or wp", v);
	} else if (!strcmp(name, "host-memory")) {
		if (!strcmp(v, "populated"))
			sw->host_linux = false;
		else if (!strcmp(v, "linux"))
			sw->host_linux = true;
		else
			BAD("--host-memory=%s: use populated or linux", v);
	} else if (!strcmp(name, "fault-lock")) {
		if (!strcmp(v, "read"))
			sw->fault_lock = SLAT_VM_FAULT_LOCK_READ;
		else if (!strcmp(v, "write"))
			sw->fault_lock = SLAT_VM_FAULT_LOCK_WRITE;
		else
			BAD("--fault-lock=%s: use read or write", v);
	} else {
		BAD("unknown switch '%s': use cmo, recover, flush, split-skip, "
		    "eager-split, mmio-map, dirty, clean-time, block-fault, "
		    "wp-partial, x86-dirty, host-memory or fault-lock", name);
	}
	return 0;
}

const char *perf_switch_get(const struct perf_switches *sw, const char *name,
			    char *buf, size_t len)
{
	static const char *const cmo[] = { "in-walker", "before-map" };
	static const char *const rec[] = { "none", "zap-leaf", "zap-table",
					   "promote" };
	static const char *const fl[] = { "range", "entry", "vm" };
	static const char *const eg[] = { "off", "enable", "clear" };
	static const char *const mm[] = { "page", "block" };
	static const char *const di[] = { "wp", "hw", "ring", "ring-hw" };
	static const char *const bf[] = { "auto", "lazy", "split" };

	if (!strcmp(name, "cmo"))
		snprintf(buf, len, "%s", cmo[sw->cmo]);
	else if (!strcmp(name, "recover"))
		snprintf(buf, len, "%s", rec[sw->recover]);
	else if (!strcmp(name, "flush"))
		snprintf(buf, len, "%s", fl[sw->flush]);
	else if (!strcmp(name, "split-skip"))
		snprintf(buf, len, "%s", sw->split_skip ? "on" : "off");
	else if (!strcmp(name, "eager-split")) {
		if (sw->eager_chunk)
			snprintf(buf, len, "%s:%lluK", eg[sw->eager],
				 (unsigned long long)(sw->eager_chunk >> 10));
		else
			snprintf(buf, len, "%s", eg[sw->eager]);
	} else if (!strcmp(name, "mmio-map"))
		snprintf(buf, len, "%s", mm[sw->mmio_map]);
	else if (!strcmp(name, "dirty"))
		snprintf(buf, len, "%s", di[sw->dirty]);
	else if (!strcmp(name, "clean-time"))
		snprintf(buf, len, "%s", sw->clean_slept ? "slept" : "counted");
	else if (!strcmp(name, "block-fault"))
		snprintf(buf, len, "%s", bf[sw->block_fault]);
	else if (!strcmp(name, "wp-partial"))
		snprintf(buf, len, "%s", sw->wp_split ? "split" : "block");
	else if (!strcmp(name, "x86-dirty"))
		snprintf(buf, len, "%s", sw->x86_wp ? "wp" : "pml");
	else if (!strcmp(name, "host-memory"))
		snprintf(buf, len, "%s", sw->host_linux ? "linux" : "populated");
	else if (!strcmp(name, "fault-lock"))
		snprintf(buf, len, "%s", sw->fault_lock == SLAT_VM_FAULT_LOCK_WRITE
					 ? "write" : "read");
	else
		snprintf(buf, len, "?");
	return buf;
}

void perf_vm_config(const struct perf_switches *sw, const struct perf_cost *cost,
		    const struct slat_config *table, struct slat_vm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->table = *table;
	cfg->cmo = sw->cmo;
	cfg->recovery = sw->recover;
	cfg->recovery_flush = sw->flush;
	cfg->block_fault = sw->block_fault;
	cfg->wrprotect_split = sw->wp_split;
	cfg->host_zero_page = sw->host_linux;
	cfg->fault_lock = sw->fault_lock;
	cfg->arena_bytes = 4ull << 30;
	if (sw->clean_slept)
		cfg->synthetic_clean_ns_per_line = cost->clean_line;
	/* EPT is KVM x86's, which logs with PML where the CPU has it
	 * (enable_pml): dirty bits and the log instead of write faults.
	 * AMD has no PML: KVM on NPT logs by write protection. */
	cfg->pml = table->format == SLAT_FMT_EPT && !sw->x86_wp;
	if (sw->dirty == DIRTY_HW || sw->dirty == DIRTY_RING_HW || cfg->pml) {
		cfg->table.features |= SLAT_FEAT_HWDIRTY;
		cfg->hw_dirty = true;
	}
	/* The vCPUs run in virtual time, their races decided by the cost
	 * table: the counts are the same on any host. */
	cfg->vtime = (struct slat_vm_vtime){
		.on = true, .seed = 1, .fault_exit = cost->fault_exit,
		.clean_line = cost->clean_line * 64 / cost->cache_line,
		.dsb = cost->dsb, .tlbi_ipa = cost->tlbi_ipa,
		.tlbi_ipa_local = cost->tlbi_ipa_local,
		.tlbi_range = cost->tlbi_range, .tlbi_vmid = cost->tlbi_vmid,
		.pml_full = cost->pml_full,
	};
	/* x86: a flush is an INVEPT or an ASID flush, no barrier (the
	 * replay adds the requests and IPIs). */
	if (perf_fmt_x86(table->format)) {
		struct slat_vm_vtime *vt = &cfg->vtime;

		vt->dsb = 0;
		vt->tlbi_ipa = vt->tlbi_range = vt->tlbi_vmid =
			perf_x86_vcpu_flush_ns(cost, table->format, false);
		vt->tlbi_ipa_local = perf_x86_vcpu_flush_ns(cost, table->format,
							    true);
	}
}

/* ---- cost table ---- */

void perf_cost_default(struct perf_cost *c)
{
	/* Sources and reasoning: docs/slat-perf.md, "Cost table". */
	c->tlbi_ipa = 100;
	c->tlbi_ipa_local = 20;
	c->tlbi_range = 150;
	c->tlbi_vmid = 200;
	c->dsb = 1000;
	c->clean_line = 5;
	c->cache_line = 64;
	c->fault_exit = 1500;
	c->entry_visit = 4.765;  /* KVM's pgtable.c measured here */
	c->entry_write = 2.272;
	c->leaf_install = 21.606;
	c->ipi_send = 200;
	c->ipi_exit = 1500;
	c->mem_bw = 204.8;
	c->invept_single = 500;
	c->invept_all = 500;
	c->tlb_request = 20;
	c->pml_full = 12000;
	c->asid_flush = 500;
	c->from_file = 0;
}

#define K(n, unit, source) { #n, offsetof(struct perf_cost, n), unit, source }
const struct perf_cost_key perf_cost_keys[] = {
	K(tlbi_ipa, "ns", NULL),
	K(tlbi_ipa_local, "ns", NULL),
	K(tlbi_range, "ns", NULL),
	K(tlbi_vmid, "ns", NULL),
	K(dsb, "ns", NULL),
	K(clean_line, "ns", NULL),
	K(cache_line, "bytes", "the Arm Cortex-A and Neoverse technical "
				"reference manuals: 64-byte lines"),
	K(fault_exit, "ns", NULL),
	K(entry_visit, "ns", "KVM's stage-2 walk (arch/arm64/kvm/hyp/pgtable.c, "
			     "Debian linux-source 6.12.118-1~deb12u1) measured "
			     "by slat-bench --kvm --cost-out: scenario 7, CPU "
			     "time per entry, AMD EPYC, 2 CPUs, 2026-12-07, "
			     "load 3.4-3.9, median of 9 runs"),
	K(entry_write, "ns", "the same runs: KVM's write-protect (scenario 8) "
			     "per leaf beyond its visits, median of 9 runs"),
	K(leaf_install, "ns", "KVM's split of 2M blocks (scenario 5) per "
			      "leaf beyond its visits, by slat-bench --kvm "
			      "--cost-out: the same kernel source and CPU, "
			      "2026-12-08, load 2.6-2.8, median of 9 runs"),
	K(ipi_send, "ns", NULL),
	K(ipi_exit, "ns", NULL),
	K(mem_bw, "bytes/ns", "Ampere Altra product brief: 8 channels of "
			      "DDR4-3200, 204.8 GB/s"),
	K(invept_single, "ns", NULL),
	K(invept_all, "ns", NULL),
	K(tlb_request, "ns", NULL),
	K(pml_full, "ns", NULL),
	K(asid_flush, "ns", NULL),
};
#undef K
const int perf_cost_nkeys = sizeof(perf_cost_keys) / sizeof(perf_cost_keys[0]);

/* One `key = value` line of a cost file: 0, or -1 after a message. */
static int cost_line(struct perf_cost *c, const char *path, int lineno,
		     char *p)
{
	char key[64], *eq, *end;
	size_t n, i;
	double v;

	if ((eq = strchr(p, '#')))
		*eq = 0;
	while (isspace((unsigned char)*p))
		p++;
	if (!*p)
		return 0;
	eq = strchr(p, '=');
	if (!eq)
		goto bad;
	n = (size_t)(eq - p);
	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	if (!n || n >= sizeof(key))
		goto bad;
	memcpy(key, p, n);
	key[n] = 0;
	errno = 0;
	v = strtod(eq + 1, &end);
	while (isspace((unsigned char)*end))
		end++;
	/* strtod also takes "nan" and "inf" */
	if (end == eq + 1 || *end || errno || !isfinite(v) || v < 0)
		goto bad;
	for (i = 0; i < (size_t)perf_cost_nkeys; i++)
		if (!strcmp(key, perf_cost_keys[i].key))
			break;
	if (i == (size_t)perf_cost_nkeys) {
		fprintf(stderr, "slat-perf: %s:%d: ", path, lineno);
		text_printf_safe(stderr, "unknown key \"%s\" (keys:", key);
		/* the table's own keys: the list cannot miss one */
		for (i = 0; i < (size_t)perf_cost_nkeys; i++)
			fprintf(stderr, "%s %s", i ? "," : "",
				perf_cost_keys[i].key);
		fprintf(stderr, ")\n");
		return -1;
	}
	*perf_cost_at(c, &perf_cost_keys[i]) = v;
	c->from_file |= 1u << i;
	return 0;
bad:
	fprintf(stderr, "slat-perf: %s:%d: expected `key = value` with a "
		"non-negative number\n", path, lineno);
	return -1;
}

int perf_cost_load(struct perf_cost *c, const char *path)
{
	FILE *f = fopen(path, "r");
	struct text_in text;
	char *line;
	size_t len;
	int ret;

	if (!f) {
		fprintf(stderr, "slat-perf: --cost %s: %s (give a file of "
			"`key = value` lines)\n", path, strerror(errno));
		return 1;
	}
	if (!text_in_open(&text, f, "slat-perf: ", path, "cost file",
			  COST_LINE_MAX, COST_LINES_MAX)) {
		fclose(f);
		return 1;
	}
	while ((ret = text_in_line(&text, &line, &len)) == 1)
		if (cost_line(c, path, (int)text.line, line) < 0) {
			ret = 2;
			break;
		}
	text_in_close(&text);
	fclose(f);
	if (!ret && c->cache_line < 1) {
		fprintf(stderr, "slat-perf: %s: cache_line must be at least 1\n", path);
		ret = 2;
	}
	return ret;
}

uint64_t perf_vm_tlbi(const struct slat_vm_stats *s)
{
	const struct slat_stats *t = &s->table;
	uint64_t hooked = t->tlbi[SLAT_TLBI_IPA] + t->tlbi[SLAT_TLBI_RANGE] +
			  t->tlbi[SLAT_TLBI_VMID];

	/* Every non-local hook call is one shootdown, and so is a local one
	 * made outside a vCPU. */
	if (t->tlbi[SLAT_TLBI_IPA_LOCAL] > s->local_invals)
		hooked += t->tlbi[SLAT_TLBI_IPA_LOCAL] - s->local_invals;
	return s->shootdowns > hooked ? s->shootdowns - hooked : 0;
}

void perf_x86_flush(const struct perf_phase *p, struct perf_x86_flush *x)
{
	const struct slat_stats *t = &p->st.table;
	uint64_t n = p->vcpus;

	x->flushes = t->tlbi[SLAT_TLBI_IPA] + t->tlbi[SLAT_TLBI_RANGE] +
		     t->tlbi[SLAT_TLBI_VMID] + perf_vm_tlbi(&p->st);
	x->requests = x->flushes * n;
	if (p->st.accesses) {
		/* The vCPUs are in the guest: each is kicked out of it (but
		 * the one that flushes, in the host) and does the INVEPT as
		 * it enters again. */
		x->kicks = n ? x->flushes * (n - 1) : 0;
		x->vcpu_flushes = x->flushes * n;
	} else {
		/* The selftests' vCPUs wait in user space: the requests wait
		 * for their next entry, one INVEPT each however many came. */
		x->kicks = 0;
		x->vcpu_flushes = x->flushes ? n : 0;
	}
	/* A local invalidation is the faulting vCPU's own flush. */
	x->local_flushes = t->tlbi[SLAT_TLBI_IPA_LOCAL];
}

double perf_x86_vcpu_flush_ns(const struct perf_cost *c,
			      enum slat_format_id fmt, bool local)
{
	/* KVM on SVM has no INVEPT: a flush request sets TLB_CONTROL to
	 * flush the vCPU's ASID (or takes a new ASID) at its next VMRUN. */
	if (fmt == SLAT_FMT_NPT)
		return c->asid_flush;
	return local ? c->invept_single : c->invept_all;
}

const char *perf_fmt_name(enum slat_format_id fmt)
{
	return fmt == SLAT_FMT_NPT ? "npt" : fmt == SLAT_FMT_EPT ? "ept"
								  : "arm-s2";
}

/* The invalidations of @st as arm64 does them: broadcast TLBIs, each
 * completed by a DSB, and local ones. */
static double arm_tlbi_ns(const struct perf_cost *c, const struct slat_vm_stats *s)
{
	const struct slat_stats *t = &s->table;
	uint64_t tlbis = t->tlbi[SLAT_TLBI_IPA] + t->tlbi[SLAT_TLBI_IPA_LOCAL] +
			 t->tlbi[SLAT_TLBI_RANGE] + t->tlbi[SLAT_TLBI_VMID] +
			 perf_vm_tlbi(s);

	return c->tlbi_ipa * (double)t->tlbi[SLAT_TLBI_IPA] +
	       c->tlbi_ipa_local * (double)t->tlbi[SLAT_TLBI_IPA_LOCAL] +
	       c->tlbi_range * (double)(t->tlbi[SLAT_TLBI_RANGE] + perf_vm_tlbi(s)) +
	       c->tlbi_vmid * (double)t->tlbi[SLAT_TLBI_VMID] +
	       c->dsb * (double)tlbis;
}

/* The same on x86: requests, kicks and the vCPUs' INVEPTs or ASID
 * flushes (perf_x86_flush). */
static double x86_flush_ns(const struct perf_opts *o, const struct perf_phase *p)
{
	const struct perf_cost *c = &o->cost;
	struct perf_x86_flush x;

	perf_x86_flush(p, &x);
	return c->tlb_request * (double)x.requests +
	       (c->ipi_send + c->ipi_exit) * (double)x.kicks +
	       perf_x86_vcpu_flush_ns(c, o->x86_fmt, false) *
		       (double)x.vcpu_flushes +
	       perf_x86_vcpu_flush_ns(c, o->x86_fmt, true) *
		       (double)x.local_flushes;
}

double perf_modeled_ns(const struct perf_opts *o, const struct perf_phase *p)
{
	const struct perf_cost *c = &o->cost;
	const struct slat_vm_stats *s = &p->st;
	uint64_t faults = 0;
	double lines = (double)s->cmo_bytes / c->cache_line;

	for (int i = 0; i < SLAT_VM_FAULT_KINDS; i++)
		faults += s->faults[i];
	return (o->arch == PERF_ARCH_X86 ? x86_flush_ns(o, p)
					 : arm_tlbi_ns(c, s)) +
	       c->dsb * (double)s->cmo_calls +
	       c->clean_line * lines +
	       c->fault_exit * (double)faults +
	       c->pml_full * (double)s->pml_full_exits +
	       perf_entry_ns(c, &s->table);
}

double perf_entry_ns(const struct perf_cost *c, const struct slat_stats *t)
{
	uint64_t written = 0;

	for (int i = 0; i < SLAT_WRITE_KINDS; i++)
		if (i != SLAT_WRITE_LEAF)
			written += t->written[i];
	return c->entry_visit * (double)t->visited +
	       c->leaf_install * (double)t->written[SLAT_WRITE_LEAF] +
	       c->entry_write * (double)written;
}

/* ---- runs ---- */

struct perf_phase *perf_run_add(struct perf_run *r, const char *name,
				int iteration, uint64_t wall_ns,
				const struct slat_vm_stats *st)
{
	struct perf_phase *p;

	if (r->nph == r->cap) {
		int cap = r->cap ? r->cap * 2 : 16;
		void *n = realloc(r->ph, (size_t)cap * sizeof(*r->ph));

		if (!n) {
			fprintf(stderr, "slat-perf: out of memory\n");
			exit(1);
		}
		r->ph = n;
		r->cap = cap;
	}
	p = &r->ph[r->nph++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->iteration = iteration;
	p->wall_ns = wall_ns;
	p->model_ns = -1;
	if (st)
		p->st = *st;
	return p;
}

void perf_run_free(struct perf_run *r)
{
	free(r->ph);
	r->ph = NULL;
	r->nph = r->cap = 0;
}

/* ---- parsing ---- */

void perf_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "slat-perf: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(2);
}

static long parse_long(const char *what, const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (end == s || *end || errno || v > 0x7fffffffL || v < -0x7fffffffL)
		perf_usage_error("%s: '%s' is not a number", what, s);
	return v;
}

int perf_parse_positive(const char *what, const char *s)
{
	long v = parse_long(what, s);

	if (v <= 0)
		perf_usage_error("%s must be greater than 0, got '%s'", what, s);
	return (int)v;
}

int perf_parse_nonneg(const char *what, const char *s)
{
	long v = parse_long(what, s);

	if (v < 0)
		perf_usage_error("%s must not be negative, got '%s'", what, s);
	return (int)v;
}

uint32_t perf_parse_vcpus(const char *s, int min)
{
	int n = min ? perf_parse_positive("Number of vCPUs", s)
		    : perf_parse_nonneg("Number of vCPUs", s);

	if (n > 512)
		perf_usage_error("Invalid number of vcpus, must be between %d "
				 "and 512 (got %d)", min, n);
	return (uint32_t)n;
}

const char *perf_ts(char *buf, uint64_t ns)
{
	sprintf(buf, "%ld.%.9lds", (long)(ns / 1000000000ull),
		(long)(ns % 1000000000ull));
	return buf;
}

void perf_stats(struct slat_vm *vm, struct slat_vm_stats *s)
{
	slat_vm_stats_read(vm, s);
}


int perf_modes_select(struct perf_opts *o, uint32_t mask, int *modes)
{
	int n = 0;

	perf_arch_from_modes(o, mask);
	for (int m = 0; m < perf_nr_modes; m++)
		if (mask & (1u << m))
			modes[n++] = m;
	return n ? n : perf_modes_all(o, modes);
}

double perf_phase_model(const struct perf_opts *o, const struct perf_phase *p)
{
	return p->model_ns >= 0 ? p->model_ns : perf_modeled_ns(o, p);
}

const char *perf_scaled(char *buf, size_t len, double ns)
{
	static const struct { double div; const char *unit; } u[] = {
		{ 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" },
	};

	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		if (ns >= u[i].div) {
			snprintf(buf, len, "%.3g %s", ns / u[i].div, u[i].unit);
			return buf;
		}
	snprintf(buf, len, "%.3g ns", ns);
	return buf;
}
