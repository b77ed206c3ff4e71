/* SPDX-License-Identifier: MIT */
/*
 * The frame every public range operation shares: argument checks, walker
 * set-up, where it counts, the invalidation at the end, *done.
 */
#include "internal.h"

int core_op_begin(struct core_op *op, struct slat_table *t, slat_ipa_t ipa,
		  uint64_t size, struct slat_op *args, uint32_t allowed)
{
	uint32_t flags = args ? args->flags : 0;
	enum slat_tlbi_policy policy = args ? args->flush : SLAT_FLUSH_ENTRY;

	if (args)
		args->done = 0;
	if (!table_live(t) || (flags & ~allowed) || !tlbi_policy_ok(policy) ||
	    shared_refused(t, flags))
		return SLAT_E_INVAL;
	int ret = check_ipa_range(t, ipa.ipa, size);
	if (ret)
		return ret;
	core_op_start(op, t, ipa, size, args);
	return SLAT_OK;
}

void core_op_start(struct core_op *op, struct slat_table *t, slat_ipa_t ipa,
		   uint64_t size, struct slat_op *args)
{
	uint32_t flags = args ? args->flags : 0;

	op->t = t;
	op->ipa = ipa.ipa;
	op->end = ipa.ipa + size;
	op->flags = flags;
	op->policy = args ? args->flush : SLAT_FLUSH_ENTRY;
	op->cache = args ? args->cache : NULL;
	op->done = args ? &args->done : NULL;
	op->st = stats_begin(t, &op->local, (flags & SLAT_SHARED) != 0,
			     op->cache);
	op->fail_addr = op->end;
	op->changed = false;
}

int core_op_walk(struct core_op *op, slat_visitor_fn cb, void *arg,
		 uint32_t visits, int stop_level)
{
	struct slat_walker w = {
		.cb = cb,
		.arg = arg,
		.flags = visits | (op_shared(op) ? SLAT_WALK_SHARED : 0),
		.stop_level = stop_level,
	};
	if (stop_level != SLAT_LAST_LEVEL)
		w.flags |= SLAT_WALK_STOP_LEVEL;
	return core_walk(op->t, op->ipa, op->end - op->ipa, &w, op->st);
}

int core_op_end(struct core_op *op, int ret)
{
	if (op->changed && op->policy == SLAT_FLUSH_RANGE)
		core_tlbi_range(op->t, op->ipa, op->end - op->ipa, op->st);
	else if (op->changed && op->policy == SLAT_FLUSH_VMID)
		core_tlbi_vmid(op->t, op->st);
	if (op->done)
		*op->done = (ret < 0 ? op->fail_addr : op->end) - op->ipa;
	stats_end(op->t, op->st, &op->local);
	return ret;
}

int core_op_refuse(struct core_op *op, int ret)
{
	stats_end(op->t, op->st, &op->local);
	return ret;
}
