/* SPDX-License-Identifier: MIT */
/*
 * Attribute updates in place: restrict permissions (write protection is
 * restricting W), relax them, the access flag.
 * None of these needs break-before-make: only permissions or AF change.
 * Every write goes through pte_try_update(), so that the CPU's own updates of
 * the access flag and dirty state are never lost.
 */
#include "internal.h"

/* A block the range covers only in part is split first. */
static int split_or_fail(const struct slat_walk_ctx *ctx, struct core_op *op)
{
	int ret = core_split_block(ctx, op->cache);
	return ret ? op_fail(op, ctx->addr, ret) : 0;
}

/* ---- restrict: remove permissions (write protection removes W) ---- */

/* What every entry of a run needs, in locals (see pte_write()). */
struct restrict_run {
	enum pte_writers who;
	bool per_entry;          /* SLAT_FLUSH_ENTRY */
	/* R or X go too: each leaf through the format's leaf_with_perms(),
	 * keeping @keep of its permissions. */
	bool by_leaf;
	uint32_t keep;
	/* W goes: the format's write-protection masks; else 0. */
	slat_pte_t present, clear, set;
	/* Shared: the locked marker, an entry another walker is replacing
	 * (what it installs may be writable); else a value no invalid entry
	 * has. */
	slat_pte_t locked;
	struct core_op *op;
};

/* The leaf @pte without the run's permissions. */
static SLAT_ALWAYS_INLINE slat_pte_t restricted(const struct slat_table *t,
						const struct restrict_run *w,
						slat_pte_t pte)
{
	return pte_restrict(t, pte, w->by_leaf, w->keep, w->clear, w->set);
}

/* The leaf with @add added and @remove removed is one the format can
 * express (execute on device memory, EPT write without read are not). */
static bool perms_change_ok(const struct slat_table *t, slat_pte_t leaf,
			    uint32_t add, uint32_t remove)
{
	uint32_t attrs = t->fmt->leaf_attrs(t, leaf) & ~(SLAT_YOUNG | SLAT_DIRTY);
	return t->fmt->check_attrs(t, (attrs | add) & ~remove) == SLAT_OK;
}

/* Write @pte's restriction in place. False when another agent changed
 * the entry first. */
static SLAT_ALWAYS_INLINE bool restrict_write(const struct slat_walk_ctx *ctx,
					      const struct restrict_run *w,
					      enum pte_writers who,
					      slat_pte_t *ptep, slat_pte_t pte)
{
	slat_pte_t clear = w->clear, set = w->set, was;
	if (w->by_leaf)
		pte_change(pte, restricted(ctx->t, w, pte), &clear, &set);
	return pte_try_update(ctx->t, who, ptep, pte, clear, set, &was);
}

/*
 * A shared walker lost the race for the leaf at @ptep: restrict what it
 * holds now, unless it is no leaf any more (a block another walker is
 * splitting or split): then the caller retries from @addr. Returns 1 when
 * it changed the entry, 0 when it is already restricted, or a negative
 * error.
 */
static __attribute__((noinline)) int
restrict_retry(const struct slat_walk_ctx *ctx, slat_pte_t *ptep,
		uint64_t addr, const struct restrict_run *w)
{
	const struct slat_table *t = ctx->t;
	slat_pte_t pte;

	do {
		ctx->stats->retries++;
		pte = pte_read(ptep);
		if (!pte_valid(t, pte) || pte_table(t, pte, ctx->level))
			return op_fail(w->op, addr, SLAT_E_AGAIN);
		if (restricted(t, w, pte) == pte)
			return 0;
		/* A leaf another walker installed after the check. */
		if (w->by_leaf && !perms_change_ok(t, pte, 0, SLAT_PERMS & ~w->keep))
			return op_fail(w->op, addr, SLAT_E_ATTR);
	} while (!restrict_write(ctx, w, PTE_SHARED, ptep, pte));
	return 1;
}

static SLAT_ALWAYS_INLINE int
restrict_step(const struct slat_walk_ctx *ctx, slat_pte_t *ptep,
	       slat_pte_t pte, uint64_t addr, void *arg)
{
	const struct restrict_run *w = arg;

	/* pte_valid(), with the mask hoisted; a hole is skipped (a caller
	 * that refuses them checked first). */
	if (!(pte & w->present))
		return pte == w->locked ? op_fail(w->op, addr, SLAT_E_AGAIN) : 0;
	if (restricted(ctx->t, w, pte) == pte)
		return 0;
	if (!restrict_write(ctx, w, w->who, ptep, pte)) {
		int ret = restrict_retry(ctx, ptep, addr, w);
		if (ret <= 0)
			return ret;
	}
	if (w->per_entry)
		core_tlbi_ipa(ctx->t, addr, ctx->level, SLAT_TLBI_INNER_SHAREABLE,
			      ctx->stats);
	return 1;
}

static int restrict_visitor(const struct slat_walk_ctx *ctx,
			     enum slat_visit visit)
{
	(void)visit;
	const struct restrict_run *run = ctx->arg;
	struct core_op *op = run->op;
	struct slat_table *t = ctx->t;
	struct restrict_run w = *run;
	uint32_t changed;

	w.who = walk_writers(ctx);
	if (pte_valid(t, ctx->old) && !walk_entry_covered(ctx)) {
		if (restricted(t, &w, ctx->old) == ctx->old)
			return 1;
		/* Before the split changes anything. */
		if (w.by_leaf &&
		    !perms_change_ok(t, ctx->old, 0, SLAT_PERMS & ~w.keep))
			return op_fail(op, ctx->addr, SLAT_E_ATTR);
		return split_or_fail(ctx, op);
	}
	/* A per-entry invalidation, or a change each leaf decides, needs
	 * the step at every leaf. */
	const struct leaf_update u = { w.present, w.clear, w.set };
	int n = w.per_entry || w.by_leaf
		? walk_leaf_run(ctx, restrict_step, &w, &changed)
		: walk_leaf_update(ctx, &u, restrict_step, &w, &changed);
	ctx->stats->written[SLAT_WRITE_ATTR] += changed;
	op->changed |= changed != 0;
	return n;
}

/* What relax and restrict check before any change (struct perms_check). */
struct perms_check {
	uint32_t add, remove;
	bool holes_refused;      /* SLAT_NO_HOLES */
};

/*
 * Refuse before any change: a hole in the range with SLAT_NO_HOLES
 * (SLAT_E_NOENT), or a leaf the change would make one the format cannot
 * express (SLAT_E_ATTR).
 */
static int perms_check_visitor(const struct slat_walk_ctx *ctx,
			       enum slat_visit visit)
{
	(void)visit;
	const struct perms_check *c = ctx->arg;
	struct slat_table *t = ctx->t;
	if (pte_locked(t, ctx->old)) {
		ctx->stats->retries++;
		return SLAT_E_AGAIN;
	}
	if (!pte_valid(t, ctx->old))
		return c->holes_refused ? SLAT_E_NOENT : 1;
	return perms_change_ok(t, ctx->old, c->add, c->remove) ? 1 : SLAT_E_ATTR;
}

/* Whether [ipa, ipa+size) passes perms_check_visitor(): SLAT_OK or the
 * refusal. */
static int perms_check(struct core_op *op, const struct perms_check *c)
{
	return core_op_walk(op, perms_check_visitor, (void *)c, SLAT_VISIT_LEAF,
			    SLAT_LAST_LEVEL);
}

/* slat_restrict(), of which slat_wrprotect() is the case SLAT_W. */
static int restrict_perms(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
			  uint32_t perms, struct slat_op *args)
{
	struct core_op op;
	int ret = core_op_begin(&op, t, ipa, size, args,
				SLAT_SHARED | SLAT_NO_HOLES);
	if (ret)
		return ret;
	ret = check_perms_arg(perms, true);
	if (ret)
		return core_op_refuse(&op, ret);
	const struct slat_format *f = t->fmt;
	const bool w_goes = perms & SLAT_W;
	const struct restrict_run w = {
		.per_entry = op.policy == SLAT_FLUSH_ENTRY,
		.by_leaf = perms & ~SLAT_W, .keep = SLAT_PERMS & ~perms,
		.present = f->present_mask,
		.clear = w_goes ? f->wp_clear : 0, .set = w_goes ? f->wp_set : 0,
		.locked = op_shared(&op) ? f->locked : ~0ull, .op = &op,
	};
	const struct perms_check c = { 0, perms, op.flags & SLAT_NO_HOLES };

	if (w.by_leaf || c.holes_refused) {
		ret = perms_check(&op, &c);
		if (ret)
			return core_op_refuse(&op, ret);
	}
	ret = core_op_walk(&op, restrict_visitor, (void *)&w, SLAT_VISIT_LEAF,
			   SLAT_LAST_LEVEL);
	return core_op_end(&op, ret);
}

int slat_wrprotect(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
		   struct slat_op *args)
{
	return restrict_perms(t, ipa, size, SLAT_W, args);
}

int slat_restrict(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
		  uint32_t perms, struct slat_op *args)
{
	return restrict_perms(t, ipa, size, perms, args);
}

/* ---- relax ---- */

struct relax_data {
	struct core_op op;
	uint32_t perms;          /* permissions to add */
};

/* Adding execute on Arm without DIC invalidates the I-cache for the leaf. */
static bool relax_needs_icache(const struct slat_table *t,
			       const struct relax_data *d, uint32_t attrs)
{
	return (d->perms & ~attrs & SLAT_X) &&
	       (cmo_for_attrs(t, SLAT_X) & CORE_CMO_ICACHE);
}

/*
 * Claim the leaf with the locked marker, so that only the winner
 * invalidates the I-cache, then publish the relaxed leaf built from what
 * the claim replaced: the CPU may have set AF or dirty state meanwhile.
 */
static int relax_exec_leaf(const struct slat_walk_ctx *ctx,
			   const struct relax_data *d, slat_pte_t *ptep,
			   slat_pte_t old, slat_pte_t new)
{
	struct slat_table *t = ctx->t;
	uint64_t size = level_size(t, ctx->level);
	slat_pte_t clear, set, was;

	pte_change(old, new, &clear, &set);
	if (!pte_try_set(t, walk_writers(ctx), ptep, old, ~0ull, t->locked,
			 &was)) {
		ctx->stats->retries++;
		return SLAT_E_AGAIN;
	}
	if (d->op.flags & SLAT_SKIP_CMO)
		ctx->stats->cmo_skipped++;
	else
		cmo_do(t, t->fmt->pte_pa(t, old), size, CORE_CMO_ICACHE, ctx->stats);
	pte_write_owned(t, ptep, pte_apply(was, clear, set));
	return SLAT_OK;
}

/*
 * A shared caller found the leaf already relaxed: another vCPU's fault got
 * there first, but this CPU may still hold the entry that faulted, which a
 * permission fault does not drop on Arm. Invalidate this CPU's copy, as
 * KVM does, or it faults on the stale entry again.
 */
static void relax_unchanged(const struct slat_walk_ctx *ctx,
			    const struct relax_data *d, uint64_t addr)
{
	if (op_shared(&d->op) && d->op.policy == SLAT_FLUSH_ENTRY)
		core_tlbi_ipa(ctx->t, addr, ctx->level, SLAT_TLBI_LOCAL,
			      ctx->stats);
}

static int relax_step(const struct slat_walk_ctx *ctx, slat_pte_t *ptep,
		      slat_pte_t old, uint64_t addr, void *arg)
{
	struct relax_data *d = arg;
	struct slat_table *t = ctx->t;
	int ret;

	if (!pte_valid(t, old) && !pte_locked(t, old) &&
	    !(d->op.flags & SLAT_NO_HOLES))
		return 0;
	if (!pte_valid(t, old))
		ret = pte_locked(t, old) ? SLAT_E_AGAIN : SLAT_E_NOENT;
	else if (!perms_change_ok(t, old, d->perms, 0))
		ret = SLAT_E_ATTR;
	else
		ret = SLAT_OK;
	if (ret)
		return op_fail(&d->op, addr, ret);

	uint32_t attrs = t->fmt->leaf_attrs(t, old);
	slat_pte_t new = t->fmt->leaf_with_perms(t, old, (attrs | d->perms) & SLAT_PERMS) |
			 t->fmt->young_bit;
	if (new == old) {
		relax_unchanged(ctx, d, addr);
		return 0;
	}
	if (relax_needs_icache(t, d, attrs)) {
		ret = relax_exec_leaf(ctx, d, ptep, old, new);
	} else {
		slat_pte_t clear, set, was;
		pte_change(old, new, &clear, &set);
		if (!pte_try_update(t, walk_writers(ctx), ptep, old, clear, set,
				    &was)) {
			ctx->stats->retries++;
			ret = SLAT_E_AGAIN;
		}
	}
	if (ret)
		return op_fail(&d->op, addr, ret);
	/* A stale entry with fewer permissions would only fault again: on
	 * Arm, where it may stay cached, invalidate this CPU only (the policy
	 * is none where the fault itself removes it: EPT). */
	if (d->op.policy == SLAT_FLUSH_ENTRY)
		core_tlbi_ipa(t, addr, ctx->level, SLAT_TLBI_LOCAL, ctx->stats);
	return 1;
}

static int relax_visitor(const struct slat_walk_ctx *ctx, enum slat_visit visit)
{
	(void)visit;
	struct relax_data *d = ctx->arg;
	struct slat_table *t = ctx->t;
	uint32_t changed;

	if (pte_locked(t, ctx->old)) {
		ctx->stats->retries++;
		return op_fail(&d->op, ctx->addr, SLAT_E_AGAIN);
	}
	if (pte_valid(t, ctx->old) && !walk_entry_covered(ctx)) {
		if (relax_done(t, ctx->old, d->perms)) {
			relax_unchanged(ctx, d, ctx->addr);
			return 1;
		}
		/* Before the split changes anything. */
		if (!perms_change_ok(t, ctx->old, d->perms, 0))
			return op_fail(&d->op, ctx->addr, SLAT_E_ATTR);
		return split_or_fail(ctx, &d->op);
	}
	int n = walk_leaf_run(ctx, relax_step, d, &changed);
	ctx->stats->written[SLAT_WRITE_ATTR] += changed;
	d->op.changed |= changed != 0;
	return n;
}

int slat_relax(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
	       uint32_t perms, struct slat_op *args)
{
	/* Set field by field: an initializer would zero the op's counters
	 * with a memset, which the freestanding core does not have. */
	struct relax_data d;
	d.perms = perms;
	int ret = core_op_begin(&d.op, t, ipa, size, args,
				SLAT_SHARED | SLAT_SKIP_CMO | SLAT_NO_HOLES);
	if (ret)
		return ret;
	if (t->fmt->fault_invalidates)
		d.op.policy = SLAT_FLUSH_NONE;
	ret = check_perms_arg(perms, false);
	if (ret)
		return core_op_refuse(&d.op, ret);

	/* One page cannot be half changed; a larger range is checked first. */
	const struct perms_check c = { perms, 0, d.op.flags & SLAT_NO_HOLES };
	if (size > (1ull << t->geo.granule_shift))
		ret = perms_check(&d.op, &c);
	if (ret)
		return core_op_refuse(&d.op, ret);
	ret = core_op_walk(&d.op, relax_visitor, &d, SLAT_VISIT_LEAF,
			   SLAT_LAST_LEVEL);
	ret = core_op_end(&d.op, ret);
	return ret ? ret : d.op.changed ? SLAT_OK : SLAT_NOTHING_TO_DO;
}

/* ---- access flag ---- */

struct young_data {
	bool young;              /* something was young */
	bool mkold;
};

/* What every entry of a run needs, in locals (see pte_write()). */
struct young_run {
	struct young_data *d;
	enum pte_writers who;
	slat_pte_t present, af;
	bool mkold;
};

static SLAT_ALWAYS_INLINE int
young_step(const struct slat_walk_ctx *ctx, slat_pte_t *ptep, slat_pte_t pte,
	   uint64_t addr, void *arg)
{
	(void)addr;
	const struct young_run *y = arg;
	slat_pte_t was;

	/* pte_valid(), with the mask hoisted. */
	if (!(pte & y->present) || !(pte & y->af))
		return 0;
	y->d->young = true;
	if (!y->mkold)
		return 0;
	/* The access flag is a hint: retry rather than fail. */
	while (!pte_try_update(ctx->t, y->who, ptep, pte, y->af, 0, &was)) {
		ctx->stats->retries++;
		pte = pte_read(ptep);
		if (!pte_leaf(ctx->t, pte, ctx->level) || !(pte & y->af))
			return 0;
	}
	return 1;
}

static int young_visitor(const struct slat_walk_ctx *ctx, enum slat_visit visit)
{
	(void)visit;
	struct young_data *d = ctx->arg;
	const struct young_run y = {
		.d = d, .present = ctx->t->fmt->present_mask,
		.af = ctx->t->fmt->young_bit, .mkold = d->mkold,
		.who = walk_writers(ctx),
	};
	const struct leaf_update u = { y.present, y.af, 0 };
	uint32_t changed;
	int n = d->mkold
		? walk_leaf_update(ctx, &u, young_step, (void *)&y, &changed)
		: walk_leaf_run(ctx, young_step, (void *)&y, &changed);
	/* Leaves made old were young, whether or not their step ran. */
	d->young |= changed != 0;
	ctx->stats->written[SLAT_WRITE_ATTR] += changed;
	return n;
}

int slat_test_clear_young(struct slat_table *t, slat_ipa_t ipa,
			  uint64_t size, bool mkold, struct slat_op *args)
{
	struct core_op op;
	struct young_data d = { .mkold = mkold };
	int ret = core_op_begin(&op, t, ipa, size, args, SLAT_SHARED);
	if (ret)
		return ret;
	/* No invalidation: a stale young entry only delays the next report. */
	op.policy = SLAT_FLUSH_NONE;
	ret = core_op_walk(&op, young_visitor, &d, SLAT_VISIT_LEAF,
			   SLAT_LAST_LEVEL);
	ret = core_op_end(&op, ret);
	return ret ? ret : d.young ? SLAT_WAS_YOUNG : SLAT_OK;
}

int slat_mkyoung(struct slat_table *t, slat_ipa_t ipa, uint32_t flags)
{
	if (!table_live(t) || (flags & ~SLAT_SHARED) || shared_refused(t, flags))
		return SLAT_E_INVAL;
	uint64_t g = 1ull << t->geo.granule_shift;
	int ret = check_ipa_range(t, ipa.ipa & ~(g - 1), g);
	if (ret)
		return ret;

	bool shared = flags & SLAT_SHARED;
	struct slat_stats local;
	struct slat_stats *st = stats_begin(t, &local, shared, NULL);
	slat_pte_t was;
	struct descent d = core_descend(t, descend_root(t), ipa.ipa,
					SLAT_LAST_LEVEL, 0, st);
	slat_pte_t pte = d.pte, *ptep = d.ptep;
	if (pte_locked(t, pte))
		ret = SLAT_E_AGAIN;
	else if (!pte_valid(t, pte))
		ret = SLAT_E_NOENT;
	else if (pte & t->fmt->young_bit)
		ret = SLAT_NOTHING_TO_DO;
	else if (!pte_try_update(t, pte_writers_of(t, shared), ptep, pte, 0,
				 t->fmt->young_bit, &was))
		ret = SLAT_E_AGAIN;
	else
		st->written[SLAT_WRITE_ATTR]++;
	st->retries += ret == SLAT_E_AGAIN;
	stats_end(t, st, &local);
	return ret;
}
