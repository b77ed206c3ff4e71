/* SPDX-License-Identifier: MIT */
/* lookup: the descent a hardware walker makes, read-only. */
#include "internal.h"

int slat_lookup(const struct slat_table *t, slat_ipa_t ipa,
		struct slat_leaf *leaf)
{
	if (!table_live(t) || !leaf)
		return SLAT_E_INVAL;
	if (ipa.ipa >> t->geo.ia_bits)
		return SLAT_E_RANGE;

	struct descent d = core_descend(t, descend_root(t), ipa.ipa,
					SLAT_LAST_LEVEL, 0, NULL);
	int level = d.level;
	slat_pte_t pte = d.pte;
	if (!pte_valid(t, pte))
		return SLAT_E_NOENT;
	uint64_t size = level_size(t, level);
	uint64_t base = ipa.ipa & ~(size - 1);
	leaf->base = slat_ipa(base);
	leaf->size = size;
	leaf->pa = slat_pa(t->fmt->pte_pa(t, pte).pa + (ipa.ipa - base));
	leaf->attrs = t->fmt->leaf_attrs(t, pte);
	leaf->level = level;
	leaf->pte = pte;
	return SLAT_OK;
}
