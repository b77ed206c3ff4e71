// SPDX-License-Identifier: MIT
/*
 * What libslat did for KVM since boot, summed over every stage-2 table:
 * the shim's own calls as KVM's fault handler makes them, and each table's
 * struct slat_stats added when the table is destroyed. Read from
 * /sys/module/kvm/parameters/slat_counts as `name=value` pairs: init.sh
 * prints it before and after each selftest, beside the hit counts of
 * KVM's own tracepoints, so that a test's faults, invalidations and
 * cleans are seen from both sides of the interface.
 */
#include <linux/moduleparam.h>
#include <linux/sysfs.h>

#include "kvm_slat.h"

static atomic64_t kvm_slat_counts[KVM_SLAT_COUNTS];

static const char *const kvm_slat_count_names[KVM_SLAT_COUNTS] = {
	[KVM_SLAT_FAULT_MAP] = "fault_map",
	[KVM_SLAT_FAULT_AGAIN] = "fault_again",
	[KVM_SLAT_RELAX] = "relax",
	[KVM_SLAT_MKYOUNG] = "mkyoung",
	[KVM_SLAT_TLBI_SHIM] = "tlbi_shim",
	[KVM_SLAT_TABLES] = "tables",
	[KVM_SLAT_LEAVES] = "leaves",
	[KVM_SLAT_TLBI_IPA] = "tlbi_ipa",
	[KVM_SLAT_TLBI_IPA_LOCAL] = "tlbi_ipa_local",
	[KVM_SLAT_TLBI_RANGE] = "tlbi_range",
	[KVM_SLAT_TLBI_VMID] = "tlbi_vmid",
	[KVM_SLAT_DCACHE_CALLS] = "dcache_calls",
	[KVM_SLAT_DCACHE_BYTES] = "dcache_bytes",
	[KVM_SLAT_ICACHE_CALLS] = "icache_calls",
	[KVM_SLAT_PAGES_ALLOC] = "pages_alloc",
	[KVM_SLAT_RETRIES] = "retries",
};

/**
 * kvm_slat_count() - add @n to the counter @c.
 * @c: which.
 * @n: how many.
 */
void kvm_slat_count(enum kvm_slat_count c, u64 n)
{
	atomic64_add(n, &kvm_slat_counts[c]);
}

/**
 * kvm_slat_count_table() - add what a table's libslat counters hold, when
 * nothing changes them any more (its destroy).
 * @t: the table.
 */
void kvm_slat_count_table(const struct slat_table *t)
{
	struct slat_stats st;

	slat_stats_read(t, &st);
	kvm_slat_count(KVM_SLAT_TABLES, 1);
	kvm_slat_count(KVM_SLAT_LEAVES, st.written[SLAT_WRITE_LEAF]);
	kvm_slat_count(KVM_SLAT_TLBI_IPA, st.tlbi[SLAT_TLBI_IPA]);
	kvm_slat_count(KVM_SLAT_TLBI_IPA_LOCAL, st.tlbi[SLAT_TLBI_IPA_LOCAL]);
	kvm_slat_count(KVM_SLAT_TLBI_RANGE, st.tlbi[SLAT_TLBI_RANGE]);
	kvm_slat_count(KVM_SLAT_TLBI_VMID, st.tlbi[SLAT_TLBI_VMID]);
	kvm_slat_count(KVM_SLAT_DCACHE_CALLS, st.dcache_calls);
	kvm_slat_count(KVM_SLAT_DCACHE_BYTES, st.dcache_bytes);
	kvm_slat_count(KVM_SLAT_ICACHE_CALLS, st.icache_calls);
	kvm_slat_count(KVM_SLAT_PAGES_ALLOC, st.pages_alloc);
	kvm_slat_count(KVM_SLAT_RETRIES, st.retries);
}

static int kvm_slat_counts_get(char *buf, const struct kernel_param *kp)
{
	int n = 0;

	for (int i = 0; i < KVM_SLAT_COUNTS; i++)
		n += sysfs_emit_at(buf, n, "%s%s=%lld", i ? " " : "",
				   kvm_slat_count_names[i],
				   atomic64_read(&kvm_slat_counts[i]));
	return n + sysfs_emit_at(buf, n, "\n");
}

static const struct kernel_param_ops kvm_slat_counts_ops = {
	.get = kvm_slat_counts_get,
};

module_param_cb(slat_counts, &kvm_slat_counts_ops, NULL, 0444);
MODULE_PARM_DESC(slat_counts, "what libslat did for KVM's stage 2 since boot");
