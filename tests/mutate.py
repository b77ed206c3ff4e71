#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Mutation check of the test suite: can it fail?

Applies realistic single bugs to src/core and src/format, one at a time, in
a copy of the tree; rebuilds; runs the plain suite (CTest, stopping at the
first failure); and reports each mutation killed (some test failed) or
survived (every test passed). A mutation whose text is not found exactly
once in its file (not applied), or that does not build, fails the run: the
list must follow the code.

  tests/mutate.py [--only ID,...] [--list] [--keep DIR] [--jobs N]
                  [--no-baseline]

Slow (a build and up to a whole suite per mutation): run it by hand, not in
CI. The last result is in tests/README.md.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

# (id, file, text in the file, its replacement, the bug it stands for)
MUTATIONS = [
    ("ipa-align", "src/core/geometry.h",
     "\treturn (ipa | pa) & (size - 1);",
     "\treturn (ipa & 0) | (pa & (size - 1));",
     "a leaf fits when only its PA is aligned (the fault-path bug)"),
    ("leaf-covers", "src/core/geometry.h",
     "!leaf_misaligned(ipa, pa, size) && remaining >= size;",
     "!leaf_misaligned(ipa, pa, size) && remaining > 0;",
     "a leaf fits a request that does not cover it whole"),
    ("cap-ignored", "src/core/geometry.h",
     "bool capped = level < SLAT_LAST_LEVEL && shift > cap_shift;",
     "bool capped = level < SLAT_LAST_LEVEL && shift > cap_shift && false;",
     "SLAT_MAP_CAP ignored"),
    ("input-pa-range", "src/core/geometry.h",
     "\treturn range_beyond(pa, size, granule_size(t), t->pa_beyond) |",
     "\treturn range_beyond(pa, size, granule_size(t), 1ull << 63) |",
     "map's input check forgets the PA size"),
    ("input-range-last", "src/core/geometry.h",
     "\treturn range_beyond(ipa, size, granule_size(t), t->ia_beyond) |",
     "\treturn range_beyond(ipa, granule_size(t), granule_size(t), t->ia_beyond) |",
     "the range check tests only the first granule: a request that runs "
     "past the address size, or is empty, passes"),
    ("descend-index", "src/core/walker.h",
     "ptep = &table[(ipa >> shift) & index_mask];",
     "ptep = &table[((ipa >> shift) + 1) & index_mask];",
     "an off-by-one index below the root in the descent"),
    ("walk-index", "src/core/walk.c",
     "uint32_t i = (uint32_t)((addr - base) >> shift);",
     "uint32_t i = (uint32_t)((addr - base) >> shift) + (level == SLAT_LAST_LEVEL);",
     "an off-by-one index at the last level in the walker"),
    ("walk-stale-table", "src/core/walk.c",
     "\t\tctx->old = pte_read(ctx->ptep);\n\t\ttable = pte_table(wk->t, ctx->old, ctx->level);",
     "\t\tctx->old = pte_read(ctx->ptep);",
     "the walker decides whether to descend on the entry as it was before the visitor changed it"),
    ("run-long", "src/core/walker.h",
     "uint64_t fit = (ctx->end - ctx->addr) >> level_shift(ctx->t, ctx->level);",
     "uint64_t fit = ((ctx->end - ctx->addr) >> level_shift(ctx->t, ctx->level)) + 1;",
     "a run goes one entry past the range's end (wrprotect, unmap one entry too many)"),
    ("unmap-no-tlbi", "src/core/entry.c",
     "\t\tif (per_entry)\n\t\t\tcore_tlbi_ipa(t, addr, level, SLAT_TLBI_INNER_SHAREABLE,\n\t\t\t\t      ctx->stats);",
     "\t\tif (per_entry && false)\n\t\t\tcore_tlbi_ipa(t, addr, level, SLAT_TLBI_INNER_SHAREABLE,\n\t\t\t\t      ctx->stats);",
     "unmap drops the per-entry TLBI"),
    ("bbm-no-tlbi", "src/core/entry.c",
     "\telse\n\t\tcore_tlbi_ipa(t, ctx->addr, ctx->level, SLAT_TLBI_INNER_SHAREABLE,\n\t\t\t      ctx->stats);\n\treturn SLAT_OK;\n}",
     "\treturn SLAT_OK;\n}",
     "break-before-make drops the TLBI of a leaf"),
    ("bbm-skipped", "src/core/entry.c",
     "\tif (t->fmt->split_needs_bbm)\n\t\treturn core_break(ctx, block, NULL);",
     "\tif (t->fmt->split_needs_bbm) {\n\t\t*block = ctx->old;\n\t\treturn SLAT_OK;\n\t}",
     "a block is split in place where the architecture needs break-before-make"),
    ("batch-no-flush", "src/core/batch.c",
     "\t\telse if (b->policy == SLAT_FLUSH_RANGE || b->nr || b->nr_cmo)",
     "\t\telse if (b->policy == SLAT_FLUSH_RANGE)",
     "tables freed under SLAT_FLUSH_NONE without an invalidation"),
    ("free-before-flush", "src/core/batch.c",
     "void core_batch_flush(struct slat_table *t, struct core_batch *b,\n\t\t      struct slat_stats *st)\n{",
     "void core_batch_flush(struct slat_table *t, struct core_batch *b,\n\t\t      struct slat_stats *st)\n{\n\tfor (uint32_t i = 0; i < b->nr; i++)\n\t\tif (b->e[i].table && !b->e[i].ptep) {\n\t\t\tcore_release_unlinked(t, b->e[i].table, b->e[i].level, NULL, st);\n\t\t\tb->e[i].table = NULL;\n\t\t}",
     "unlinked tables freed before the invalidation that covers them"),
    ("af-missing", "src/format/arm_s2.c",
     "perm_bits(t, attrs) | sh_bits(t) | S2_AF |",
     "perm_bits(t, attrs) | sh_bits(t) |",
     "Arm stage-2 leaves installed without the access flag"),
    ("s2ap-w", "src/format/arm_s2.c",
     "#define S2_AP_W         (1ull << 7)",
     "#define S2_AP_W         (1ull << 8)",
     "S2AP[1] (write) at the wrong bit"),
    ("xn-el0", "src/format/arm_s2.c",
     "\t[SLAT_XU >> 2] = S2_XN0,",
     "\t[SLAT_XU >> 2] = S2_XN0 | S2_XN1,",
     "XN[1:0] for EL0-only execute encoded as EL1-only"),
    ("memattr-wb", "src/format/arm_s2.c",
     "#define MEMATTR_NORMAL_WB     0xfull",
     "#define MEMATTR_NORMAL_WB     0xeull",
     "MemAttr of Normal write-back mis-encoded"),
    ("ept-memtype", "src/format/ept.c",
     "#define EPT_MT_WB 6ull",
     "#define EPT_MT_WB 4ull",
     "EPT memory type WB encoded as WT"),
    ("ept-table-x", "src/format/ept.c",
     "\tslat_pte_t v = EPT_RWX | (pa.pa & EPT_PA_MASK);",
     "\tslat_pte_t v = EPT_R | EPT_W | (pa.pa & EPT_PA_MASK);",
     "EPT table entries without execute"),
    ("ept-xu-split", "src/format/x86.h",
     "\treturn level == SLAT_LAST_LEVEL ? pte & ~X86_PS : pte | X86_PS;",
     "\treturn level == SLAT_LAST_LEVEL ? pte & ~(X86_PS | (1ull << 10)) : pte | X86_PS;",
     "an EPT split drops the MBEC user-execute bit"),
    ("npt-leaf-us", "src/format/npt.c",
     "\tslat_pte_t v = NPT_P | NPT_US;\n",
     "\tslat_pte_t v = NPT_P;\n",
     "NPT leaves without U/S: every nested access (a user access) faults"),
    ("npt-nx", "src/format/npt.c",
     "\tif (!(perms & SLAT_X))\n\t\tv |= NPT_NX;",
     "\tif (!(perms & SLAT_X) && false)\n\t\tv |= NPT_NX;",
     "NPT leaves never NX: every page executable"),
    ("npt-memtype-wc", "src/format/npt.c",
     "#define NPT_MT_WC    NPT_PWT",
     "#define NPT_MT_WC    NPT_PCD",
     "NPT write-combining through host PAT index 2 (UC-) instead of 1"),
    ("npt-no-bbm", "src/format/npt.c",
     "\t.split_needs_bbm = true,",
     "\t.split_needs_bbm = false,",
     "NPT splits a large page in place (AMD erratum 383)"),
    ("npt-relax-no-flush", "src/format/npt.c",
     "\t.fault_invalidates = false,",
     "\t.fault_invalidates = true,",
     "NPT relax taken for EPT's: no flush, the stale entry faults again"),
    ("npt-hw-no-dirty", "src/format/npt.c",
     "\tif (access == SLAT_ACCESS_WRITE)\n\t\t*new |= NPT_D;",
     "\tif (access == SLAT_ACCESS_WRITE && false)\n\t\t*new |= NPT_D;",
     "the CPU's nested walk never sets D: dirty logging by D bits sees no write"),
    ("block-level", "src/format/vmsa.h",
     "\telse if (g == 14 ? lpa2 : pa == 52)",
     "\telse if (g == 14 ? lpa2 : pa >= 32)",
     "64K granule: level-1 blocks allowed without 52-bit output"),
    ("ds-block-level", "src/format/vmsa.h",
     "\telse if (g == 14 ? lpa2 : pa == 52)",
     "\telse if (g == 14 ? true : pa == 52)",
     "16K granule: level-1 blocks allowed without FEAT_LPA2"),
    ("root-concat-32", "src/format/vmsa.h",
     "\tif (ia <= start_shift || ia - start_shift > bpl + concat_bits)",
     "\tif (ia <= start_shift || ia - start_shift > bpl + concat_bits + 1)",
     "slat_config.levels: 32 concatenated root tables accepted (one bit too many)"),
    ("sl2-dropped", "src/format/regs.c",
     "\tuint64_t sl2 = start < 0;",
     "\tuint64_t sl2 = 0;",
     "VTCR_EL2 for a level -1 start without SL2 (SL0 = 3, the level-3 encoding)"),
    ("ds-sh-kept", "src/format/arm_s2.c",
     "\treturn vmsa_lpa2(&t->cfg) ? 0 : S2_SH_IS;",
     "\treturn (vmsa_lpa2(&t->cfg) & 0) ? 0 : S2_SH_IS;",
     "FEAT_LPA2: SH written into bits [9:8], which hold PA[51:50]"),
    ("refcount-dec", "src/core/entry.c",
     "\trefcount_note(t, ptep, level, -(int32_t)cleared, false, false);",
     "\trefcount_note(t, ptep, level, 0, false, false);",
     "unmap does not decrement the table's count"),
    ("has-blocks", "src/core/tables.h",
     "\tif (block)\n\t\t*rc |= SLAT_REFCOUNT_HAS_BLOCKS;",
     "\t(void)block;",
     "a block installed without HAS_BLOCKS in its table's word"),
    ("page-leak", "src/core/memory.c",
     "\t*table_refcount(w->t, table) = 0;\n\tw->t->mm->free_page(w->t->mm_ctx, table);",
     "\t*table_refcount(w->t, table) = 0;\n\tif (level != SLAT_LAST_LEVEL)\n\t\tw->t->mm->free_page(w->t->mm_ctx, table);",
     "last-level table pages never freed"),
    ("double-free", "src/core/entry.c",
     "\tcore_release_unlinked(t, table, ctx->level + 1, b->cmo ? &run : NULL,\n\t\t\t      ctx->stats);",
     "\tcore_release_unlinked(t, table, ctx->level + 1, b->cmo ? &run : NULL,\n\t\t\t      ctx->stats);\n\tif (ctx->level + 1 == SLAT_LAST_LEVEL)\n\t\tt->mm->free_page(t->mm_ctx, table);",
     "an emptied last-level table freed twice"),
    ("map-no-clean", "src/core/cmo.h",
     "\tif (SLAT_MT(attrs) == SLAT_MT_NORMAL && !(t->cfg.features & SLAT_FEAT_FWB))\n\t\tk |= CORE_CMO_DCACHE;",
     "",
     "no D-cache clean of new Normal memory without FWB"),
    ("unmap-no-clean", "src/core/map.c",
     "\tcore_batch_init(&d.batch, d.op.policy, d.op.ipa, d.op.end, cmo_needed(t));",
     "\tcore_batch_init(&d.batch, d.op.policy, d.op.ipa, d.op.end, false);",
     "unmap leaves removed memory in the caches without FWB"),
    ("clean-before-lock", "src/core/entry.h",
     "\t\t\t cmo ? t->locked : leaf, &was)) {",
     "\t\t\t cmo ? leaf : leaf, &was)) {",
     "a shared fault publishes the leaf before its memory is clean (seed 000)"),
    ("icache-relax", "src/core/attr.c",
     "\treturn (d->perms & ~attrs & SLAT_X) &&",
     "\treturn (d->perms & ~attrs & SLAT_X) && false &&",
     "relax adding execute without the I-cache invalidation"),
    ("promote-dirty", "src/core/pte.h",
     "\treturn (block & ~(young | dirty)) | (any & young) | (dirty_now & dirty);",
     "\treturn (block & ~(young | dirty)) | (any & young) | (dirty_now & dirty & 0);",
     "promote does not merge the dirty state"),
    ("promote-premerge", "src/core/batch.c",
     "\t\tif (hw_updates_ptes(t))\n\t\t\tmake = core_merge_hw_state(t, make, table, level);",
     "",
     "promote publishes the block without the CPU's updates since the scan"),
    ("cas-store", "src/core/pte.h",
     "\t\t*was = old;\n\t\treturn __atomic_compare_exchange_n(ptep, &old,\n\t\t\t\t\t\t   pte_apply(old, clear, set),\n\t\t\t\t\t\t   false, __ATOMIC_ACQ_REL,\n\t\t\t\t\t\t   __ATOMIC_RELAXED);",
     "\t\t*was = old;\n\t\t__atomic_store_n(ptep, pte_apply(old, clear, set), __ATOMIC_RELEASE);\n\t\treturn true;",
     "shared walkers store where they must compare-and-swap"),
    ("cas-loop-store", "src/core/pte.h",
     "\tif (who == PTE_WITH_CPU && pte_valid(t, old) && !cpu_done_with(t, old)) {",
     "\tif (who == PTE_WITH_CPU && pte_valid(t, old) && false) {",
     "beside the CPU, a plain store loses its AF/dirty updates"),
    ("cas-loop-stale", "src/core/pte.h",
     "\t\twhile (!__atomic_compare_exchange_n(ptep, &old,\n\t\t\t\t\t\t    pte_apply(old, clear, set),",
     "\t\tslat_pte_t stale = pte_apply(old, clear, set);\n\t\twhile (!__atomic_compare_exchange_n(ptep, &old,\n\t\t\t\t\t\t    stale,",
     "the CAS loop retries with the value built from the first read"),
    ("dirty-clear-miss", "src/core/dirty.c",
     "\tset_bits(d->bitmap, (lo - d->op.ipa) >> g, (hi - lo) >> g);",
     "\tset_bits(d->bitmap, (lo - d->op.ipa) >> g, ((hi - lo) >> g) - 1);",
     "a dirty-log read misses the last page of each dirty leaf"),
    ("mkold-noop", "src/core/attr.c",
     "\twhile (!pte_try_update(ctx->t, y->who, ptep, pte, y->af, 0, &was)) {",
     "\twhile (!pte_try_update(ctx->t, y->who, ptep, pte, 0, 0, &was)) {",
     "test_clear_young does not clear the access flag"),
    ("relax-not-young", "src/core/attr.c",
     "\tslat_pte_t new = t->fmt->leaf_with_perms(t, old, (attrs | d->perms) & SLAT_PERMS) |\n\t\t\t t->fmt->young_bit;",
     "\tslat_pte_t new = t->fmt->leaf_with_perms(t, old, (attrs | d->perms) & SLAT_PERMS);",
     "relax leaves the leaf old"),
    ("memo-key", "src/core/map.c",
     "\tif (cache && cache->memo.table_id == t->id && cache->memo.attrs == attrs)",
     "\tif (cache && cache->memo.table_id && t->id && cache->memo.attrs == attrs)",
     "the fault path's memo is used for another table"),
    ("split-skip", "src/core/split.c",
     "\treturn last_read && !core_table_may_hold_blocks(t, table_va(t, ctx->old));",
     "\treturn last_read && (core_table_may_hold_blocks(t, table_va(t, ctx->old)) || 1);",
     "split skips tables that still hold blocks"),
    ("split-step", "src/core/split.c",
     "\t\t\t\t\t      slat_pa(w->pa + (addr - w->base)));",
     "\t\t\t\t\t      slat_pa(w->pa + (addr - w->base) / 2));",
     "a split through two levels gives its inner blocks the wrong output addresses"),
    ("oa-64k-high", "src/format/vmsa.h",
     "\t\treturn (pa & VMSA_OA_LOW_MASK(g)) | ((pa >> 36) & VMSA_OA_HIGH_MASK);",
     "\t\treturn (pa & VMSA_OA_LOW_MASK(g)) | ((pa >> 32) & VMSA_OA_HIGH_MASK);",
     "64K granule: PA[51:48] placed in the wrong descriptor bits"),
    ("oa-ds-high", "src/format/vmsa.h",
     "\t\t\t       (pte & VMSA_DS_OA_HIGH_MASK) << 42);",
     "\t\t\t       (pte & VMSA_DS_OA_HIGH_MASK) << 41);",
     "FEAT_LPA2: PA[51:50] read from bits [9:8] into the wrong PA bits"),
    ("dbm-missing", "src/format/arm_s2.c",
     "\tslat_pte_t w = hwdirty(t) ? S2_AP_W | S2_DBM : S2_AP_W;",
     "\tslat_pte_t w = hwdirty(t) ? S2_AP_W : S2_AP_W;",
     "writable leaves without DBM under hardware dirty state"),
    ("unmap-table-post", "src/core/map.c",
     "\t\tif (core_refcount_get(t, table_va(t, ctx->old)) == 0)\n\t\t\tcore_unlink_table(ctx, &d->batch);",
     "",
     "unmap leaves empty tables behind"),
    ("no-replace-atomic", "src/core/map.c",
     "\tif (d->no_replace)\n\t\treturn op_fail(&d->op, ctx->addr, SLAT_E_EXISTS);",
     "",
     "SLAT_MAP_NO_REPLACE replaces what another walker mapped after the check"),
    ("descend-stale", "src/core/dirty.c",
     "\t\tres->fault = t->fmt->hw_update(t, pte, access, &new);",
     "\t\tpte = pte_read(ptep);\n\t\tres->fault = t->fmt->hw_update(t, pte, access, &new);",
     "the CPU's walk reads the entry again after deciding it is a leaf"),
    ("break-count", "src/core/entry.c",
     "\tif (!shared && !is_root_level(t, ctx->level))\n\t\t(void)core_refcount_get(t, table_page_of(t, ctx->ptep));",
     "\tif (!shared && !is_root_level(t, ctx->level) && false)\n\t\t(void)core_refcount_get(t, table_page_of(t, ctx->ptep));",
     "an entry broken for a batched promote is missed by a recount of its table"),
    ("ept-d-permission", "src/format/ept.c",
     "\t.dirty_bit_is_state = true,\n",
     "\t.dirty_bit_is_state = false,\n",
     "EPT's D bit taken for a permission: leaves differing in it are not promoted"),
    ("skip-cmo-count", "src/core/map.c",
     "\t\tst->cmo_skipped += !!(need & CORE_CMO_DCACHE) +\n\t\t\t\t    !!(need & CORE_CMO_ICACHE);",
     "\t\tst->cmo_skipped += need != 0;",
     "SLAT_SKIP_CMO counts one maintenance for a leaf that needs two"),
    ("relax-policy", "src/core/attr.c",
     "\tif (d->op.policy == SLAT_FLUSH_ENTRY)\n\t\tcore_tlbi_ipa(t, addr, ctx->level, SLAT_TLBI_LOCAL, ctx->stats);",
     "\tif (d->op.policy == SLAT_FLUSH_ENTRY || true)\n\t\tcore_tlbi_ipa(t, addr, ctx->level, SLAT_TLBI_LOCAL, ctx->stats);",
     "relax invalidates per entry whatever the flush policy"),
    ("dirty-words", "src/core/dirty.c",
     "\tif (!bitmap || words < (pages + 63) / 64)",
     "\tif (!bitmap || words < (pages + 63) / 64 - 1)",
     "dirty_read writes past a bitmap one word too short"),
    ("batch-post-order", "src/core/batch.c",
     "\tcore_batch_changed(b, at, level_size(t, level - 1));",
     "\tcore_batch_changed(b, at, level_size(t, SLAT_LAST_LEVEL));",
     "a queued table stands for one granule, not its span: a full batch's invalidation misses most of the last table queued before a parent unlinked after its children"),
    ("batch-cmo-unnoted", "src/core/entry.c",
     "\tcore_batch_changed(b, from, to - from);\n\tcore_batch_add_cmo(t, b, r, st);",
     "\tcore_batch_changed(b, from, 0 * to);\n\tcore_batch_add_cmo(t, b, r, st);",
     "a clean queued before its leaves' IPAs join the batch: a flush it forces cleans memory no invalidation covered"),
    ("need-split-block", "src/core/need.c",
     "\t\tn->pages += split_pages(t, ctx->level, n->target);",
     "\t\tn->pages += 1;",
     "slat_pages_needed() counts one page per block a split builds"),
    ("need-map-pa", "src/core/need.c",
     "\t\treturn leaf_fits(n->t, level, addr, need_pa(n, addr),",
     "\t\treturn leaf_fits(n->t, level, addr, addr,",
     "slat_pages_needed() sizes a map's leaves by the IPA alone"),
    ("need-partial", "src/core/need.c",
     "\treturn (addr & (size - 1)) == 0 && n->end - addr >= size;",
     "\treturn n->end - addr >= size;",
     "slat_pages_needed() takes a block met at its middle for covered"),
    ("wp-shared-retry", "src/core/attr.c",
     "\t} while (!restrict_write(ctx, w, PTE_SHARED, ptep, pte));",
     "\t} while (false && !restrict_write(ctx, w, PTE_SHARED, ptep, pte));",
     "a shared wrprotect that loses a race to the CPU reads the leaf again but never writes it"),
    ("restrict-no-check", "src/core/attr.c",
     "\tif (w.by_leaf || c.holes_refused) {",
     "\tif (c.holes_refused) {",
     "restrict changes leaves before it finds one it cannot restrict (EPT write without read)"),
    ("restrict-keeps-others", "src/core/attr.c",
     "\t\t.by_leaf = perms & ~SLAT_W, .keep = SLAT_PERMS & ~perms,",
     "\t\t.by_leaf = perms & ~SLAT_W, .keep = SLAT_PERMS,",
     "restrict removes write permission but keeps the read and execute it was asked to remove"),
    ("holes-refused-always", "src/core/attr.c",
     "\treturn c->holes_refused ? SLAT_E_NOENT : 1;",
     "\treturn SLAT_E_NOENT;",
     "wrprotect, restrict and relax refuse a hole without SLAT_NO_HOLES"),
    ("relax-step-hole", "src/core/attr.c",
     "\t    !(d->op.flags & SLAT_NO_HOLES))\n\t\treturn 0;",
     "\t    true)\n\t\treturn 0;",
     "a fault handler's one-page relax (SLAT_NO_HOLES) skips a leaf that went, and reports nothing to do"),
    ("abort-hpfar-perm", "src/format/arm_abort.c",
     "\tout->ipa_valid = out->s1ptw || out->address_size ||",
     "\tout->ipa_valid = true || out->s1ptw || out->address_size ||",
     "the IPA of every stage-2 abort taken from HPFAR_EL2, where the architecture leaves it UNKNOWN for permission faults"),
    ("abort-s1ptw-write", "src/format/arm_abort.c",
     "\t\treturn perm ? SLAT_ACCESS_WRITE : SLAT_ACCESS_READ;\n\tif (iabt)",
     "\t\treturn SLAT_ACCESS_READ;\n\tif (iabt)",
     "a permission fault on the guest's stage-1 walk (its hardware AF or dirty update) taken as a read"),
    ("s1-el0-ap1", "src/format/arm_s1.c",
     "\tif ((access & SLAT_ACCESS_USER) && !(pte & S1_AP_USER))",
     "\tif ((access & SLAT_ACCESS_USER) && !(pte & S1_AP_USER) && false)",
     "stage 1 lets EL0 read and write privileged-only memory"),
    ("memo-unlinks", "src/core/memory.c",
     "\t__atomic_add_fetch(&t->unlinks, 1, __ATOMIC_RELEASE);",
     "\t(void)0;",
     "a fault's memo of its last table outlives the table unlinked"),
    ("memo-span", "src/core/walker.h",
     "\treturn !((ipa ^ m->path[level].ipa) & t->table_beyond[level]);",
     "\treturn !((ipa ^ m->path[level].ipa) & (t->table_beyond[level] << 1));",
     "a fault starts from the memo's table for an IPA beyond its span"),
    ("table-beyond", "src/core/table.c",
     "\t\tunsigned span = level_shift(t, level - 1);",
     "\t\tunsigned span = level_shift(t, level);",
     "a table's span is taken as one of its entries'"),
    ("path-record-count", "src/core/walker.h",
     "\t\tpath->path[level + 1].refcount = rc;",
     "\t\tpath->path[level + 1].refcount = (how & DESCEND_LINEAR) ? rc + 1 : rc;",
     "the scattered fault's step records the next table's count word"),
    ("fault-step-table", "src/core/walker.h",
     "\tif ((pte & c->table_mask) != c->table_match &&",
     "\tif (!(how & DESCEND_LINEAR) && (pte & c->table_mask) != c->table_match &&",
     "the scattered fault's step enters an entry that is no table"),
    ("memo-forget", "src/core/memory.c",
     "\t\tm->path[level].ipa = ~0ull;",
     "\t\tm->path[level].ipa = 0;",
     "an emptied slot of the memo's path still holds the IPAs from 0"),
    ("fault-entry-level", "src/core/walk.c",
     "\treturn d.level == stop_level && d.level > start && !d.pte ? d.ptep",
     "\treturn d.level > start && !d.pte ? d.ptep",
     "a fault whose descent stopped above its level installs its leaf there"),
    ("break-same-kept", "src/core/map.c",
     "\tif (!fits && d->break_block)\n",
     "\tif (!fits && d->break_block &&\n\t    !same_translation(t, d, ctx->old, ctx->addr, walk_first_addr(ctx)))\n",
     "SLAT_MAP_BREAK_BLOCK keeps a block that translates the page as asked"),
    ("break-chain", "src/core/map.c",
     "\tint ret = core_break_block(ctx, d->op.cache, (uint64_t)chain);",
     "\tint ret = core_break_block(ctx, d->op.cache, (uint64_t)(chain > 0));",
     "a broken block's table is made when the pages below it are missing"),
    ("break-need-no-replace", "src/core/need.c",
     "\tif ((f & SLAT_MAP_BREAK_BLOCK) && !(f & SLAT_MAP_NO_REPLACE))",
     "\tif (f & SLAT_MAP_BREAK_BLOCK)",
     "slat_pages_needed counts a break that NO_REPLACE prevents"),
    ("memo-align", "src/core/map.c",
     "\tif (!leaf_fits(t, level, ipa, pa, size, map_cap_shift(flags)))",
     "\tif (!leaf_fits(t, level, ipa, ipa, size, map_cap_shift(flags)))",
     "a one-leaf map of a block checks the leaf's IPA alignment but not its PA's"),
    ("memo-pa-size", "src/core/map.c",
     "\tif (check_map_input(t, ipa.ipa, size, pa.pa, flags) ||",
     "\tif (check_map_input(t, ipa.ipa, size, 0, flags) ||",
     "the fault path checks the IPA of its request but not its PA"),
    ("memo-cap", "src/core/map.c",
     "\tif (!leaf_fits(t, level, ipa, pa, size, map_cap_shift(flags)))",
     "\tif (!leaf_fits(t, level, ipa, pa, size, 63))",
     "a one-leaf map ignores the caller's cap on the leaf size"),
    ("cpu-done-old", "src/core/pte.h",
     "\treturn (pte & t->fmt->young_bit) && leaf_dirty(t, pte);",
     "\treturn leaf_dirty(t, pte);",
     "a dirty leaf the CPU may still mark young is stored over without a CAS"),
    ("mkold-group-noop", "src/core/attr.c",
     "\tconst struct leaf_update u = { y.present, y.af, 0 };",
     "\tconst struct leaf_update u = { y.present, 0, 0 };",
     "test_clear_young's groups clear nothing (and skip young leaves)"),
    ("group-none-set", "src/core/lines.h",
     "\tif (!(any & r->clear) && (all & r->set) == r->set)",
     "\tif (!(any & r->clear))",
     "a line that lacks a bit to set is taken for one with nothing to do"),
    ("pair-install-step", "src/core/lines.h",
     "\t\tconst pte_unit step = unit_splat(PTE_LANES * size);\n\t\tslat_pte_t *p = ptep + head;",
     "\t\tconst pte_unit step = unit_splat(size);\n\t\tslat_pte_t *p = ptep + head;",
     "a run installed a unit per store steps by one leaf, not by the unit"),
    ("pair-group-lane", "src/core/pte.h",
     "\t\tr &= unit_lane(v, k);",
     "\t\tr &= unit_lane(v, 0);",
     "a line read in units is judged by each unit's first entry only"),
    ("group-tail-long", "src/core/lines.h",
     "\t\tif (c.nr_left > max - n)\n\t\t\tc.nr_left = max - n;",
     "",
     "the step after the lines runs a whole line past the run's end"),
    ("cmo-group-contiguous", "src/core/cache.c",
     "\tconst slat_pte_t same = m->oa_mask | m->memattr | m->present;",
     "\tconst slat_pte_t same = m->memattr | m->present;",
     "unmap cleans a line of cacheable pages as one run whatever their PAs"),
    ("promote-group-oa", "src/core/split.c",
     "\t\t~s->ignore, &any, &all);",
     "\t\t~s->ignore & ~t->oa_mask, &any, &all);",
     "promotion's line test ignores the leaves' output addresses"),
    ("dirty-group-clean", "src/core/lines.h",
     "\tif (!(all & r->present) || (all & r->want) != r->want ||\n\t    (any & r->refuse))",
     "\tif (!(all & r->present) || (all & r->want) != r->want)",
     "dirty_read takes a line with a clean leaf for a dirty one (stage 1: AP[2] set)"),
    ("pair-line-or", "src/core/pte.h",
     "\t\tr |= unit_lane(v, k);",
     "\t\tr |= unit_lane(v, 0);",
     "a line read in units takes its OR from each unit's first entry only"),
    ("dirty-young-alone", "src/core/lines.h",
     "\treturn (all & w->young) && (all & w->dirty_want) == w->dirty_want &&",
     "\treturn (all & w->dirty_want) == w->dirty_want &&",
     "a line of old leaves is written with plain stores beside the CPU, which may set their access flag meanwhile"),
    ("lines-next-short", "src/core/lines.h",
     "\tconst pte_unit line_step = unit_splat(LEAF_GROUP * size);",
     "\tconst pte_unit line_step = unit_splat((LEAF_GROUP - 1) * size);",
     "the run a line must continue starts a leaf short of the line before's end"),
    ("cmo-stretch-long", "src/core/cache.c",
     "\t\t\t\t\t    (uint64_t)(stop - p) * m->size, st);",
     "\t\t\t\t\t    (uint64_t)(stop - p + 1) * m->size, st);",
     "unmap cleans a page past the lines of cacheable pages that continue one another"),
    ("split-fill-step", "src/core/entry.c",
     "\t\tlines_install(t, page, n, child, step,\n",
     "\t\tlines_install(t, page, n, child, level_size(t, level),\n",
     "a split's new leaves step by the block's size instead of their own"),
    ("writer-cpu-once", "src/core/pte.h",
     "\t\twhile (!__atomic_compare_exchange_n(ptep, &old,",
     "\t\t(void)(!__atomic_compare_exchange_n(ptep, &old,",
     "the writer beside the CPU tries its CAS once: an access flag or dirty bit the CPU set meanwhile is written over"),
    ("writer-shared-store", "src/core/pte.h",
     "\tif (who == PTE_SHARED) {",
     "\tif (who == PTE_SHARED && false) {",
     "the writer stores where other walkers may have changed the entry since it was read"),
    ("subtree-skip-one", "src/core/walker.h",
     "\t       !core_refcount_get(t, table_page_of(t, ptep));",
     "\t       core_refcount_get(t, table_page_of(t, ptep)) < 2;",
     "a subtree walk skips a table with one entry: freeing leaks the table below it, a clean misses its leaves"),
    ("line-none-any-refuse", "src/core/lines.h",
     "\tif (!any || (~any & r->want) || (all & r->refuse))",
     "\tif (!any || (~any & r->want) || (any & r->refuse))",
     "a line with one refused (stage 1: clean) leaf is taken for one with nothing to do"),
    ("memo-path-base", "src/core/walker.h",
     "\t\tpath->path[level + 1].ipa = ipa & t->table_beyond[level + 1];",
     "\t\tpath->path[level + 1].ipa = ipa & (t->table_beyond[level + 1] << 1);",
     "the memo's path records a table as translating twice its span"),
    ("path-index-base", "src/core/walker.h",
     "\t\t\t\t  m->path[from].ipa, ~0ull };",
     "\t\t\t\t  0, ~0ull };",
     "a descent from the memo's path indexes its table by the whole IPA"),
    ("mm-ops-size", "src/core/table.c",
     "\tif (mm && mm->size != sizeof(*mm))\n\t\treturn SLAT_E_VERSION;",
     "\tif (mm && mm->size > sizeof(*mm))\n\t\treturn SLAT_E_VERSION;",
     "hooks of an older, shorter layout are taken as this one's"),
    ("split-pass-tables", "src/core/split.c",
     "\tif (ctx->level >= d->target) {",
     "\tif (ctx->level >= d->target - 1) {",
     "split skips the blocks of the level above the target"),
]

# The quick tests first, then the random sequences: most mutations die in
# seconds, and a survivor costs one whole suite.
PHASES = [["-E", "^random_"], ["-R", "^random_"]]


def run(cmd, cwd, log, timeout=None):
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        return subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT,
                              timeout=timeout).returncode


def apply(tree, m):
    path = os.path.join(tree, m[1])
    with open(path) as f:
        text = f.read()
    if text.count(m[2]) != 1:
        return None
    with open(path, "w") as f:
        f.write(text.replace(m[2], m[3]))
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated mutation ids")
    ap.add_argument("--list", action="store_true", help="list the mutations")
    ap.add_argument("--check", action="store_true",
                    help="only check that every mutation applies")
    ap.add_argument("--keep", help="work in DIR (kept) instead of a temporary one")
    ap.add_argument("--jobs", type=int, default=2, help="build and test jobs")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the unmutated tree's run of the suite (only "
                    "when it is known to pass)")
    a = ap.parse_args()
    muts = MUTATIONS
    if a.only:
        want = a.only.split(",")
        muts = [m for m in MUTATIONS if m[0] in want]
    if a.list:
        for m in muts:
            print("%-18s %-22s %s" % (m[0], m[1], m[4]))
        return 0
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if a.check:
        bad = 0
        for m in muts:
            with open(os.path.join(root, m[1])) as f:
                n = f.read().count(m[2])
            if n != 1:
                bad += 1
                print("%-18s found %d times in %s" % (m[0], n, m[1]))
        print("%d of %d mutations apply" % (len(muts) - bad, len(muts)))
        return 1 if bad else 0
    work = a.keep or tempfile.mkdtemp(prefix="slat-mutate-")
    tree, build = os.path.join(work, "src"), os.path.join(work, "build")
    log = os.path.join(work, "mutate.log")
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(root, tree, ignore=shutil.ignore_patterns(
        ".git", "build*", "*.o"))
    if run(["cmake", "-S", tree, "-B", build, "-DSLAT_SANITIZE="], work, log):
        print("configure failed: see " + log)
        return 2
    if run(["cmake", "--build", build, "-j%d" % a.jobs], work, log):
        print("the unmutated tree does not build: see " + log)
        return 2
    # A suite that fails without a mutation would "kill" every one.
    for phase in [] if a.no_baseline else PHASES:
        if run(["ctest", "--stop-on-failure", "-j%d" % a.jobs,
                "--timeout", "900"] + phase, build, log):
            print("the unmutated tree fails its tests: see " + log)
            return 2
    results = []
    for m in muts:
        t0 = time.time()
        orig = apply(tree, m)
        if orig is None:
            results.append((m, "not applied", 0))
            print("%-18s NOT APPLIED (text not found exactly once in %s)"
                  % (m[0], m[1]), flush=True)
            continue
        try:
            if run(["cmake", "--build", build, "-j%d" % a.jobs], work, log):
                verdict = "does not build"
            else:
                verdict = "SURVIVED"
                for phase in PHASES:
                    if run(["ctest", "--stop-on-failure", "-j%d" % a.jobs,
                            "--timeout", "900"] + phase, build, log):
                        verdict = "killed"
                        break
        finally:
            with open(os.path.join(tree, m[1]), "w") as f:
                f.write(orig)
        dt = time.time() - t0
        results.append((m, verdict, dt))
        print("%-18s %-15s %6.0f s  %s" % (m[0], verdict, dt, m[4]), flush=True)
    run(["cmake", "--build", build, "-j%d" % a.jobs], work, log)
    killed = sum(1 for r in results if r[1] == "killed")
    print("score: %d of %d killed (%.0f %%)" % (killed, len(results),
          100.0 * killed / max(1, len(results))))
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if killed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
