/* SPDX-License-Identifier: MIT */
/*
 * Private to libslat: every core file includes this. Freestanding. Each
 * rule lives in one header, which says what it owns and what it may not
 * do:
 *
 *  format.h    the format interface (struct slat_format)
 *  geometry.h  level sizes, leaf_fits() (the one leaf-fit rule), the input
 *              checks
 *  pte.h       descriptors and pte_write(), the one writer of an entry
 *              another agent may see
 *  tables.h    table pages, count words, the page cache, counters, hooks
 *  cmo.h       cache maintenance of guest memory
 *  batch.h     work that waits for an invalidation covering it
 *  op.h        the frame of a range operation
 *  walker.h    the visitor's view of the walk, and core_descend(), the one
 *              descent that bypasses the walker
 *  lines.h     bulk loops over lines of entries
 *  entry.h     the entry primitives operations are built from
 */
#ifndef SLAT_CORE_INTERNAL_H
#define SLAT_CORE_INTERNAL_H

#include "defs.h"
#include "format.h"
#include "geometry.h"
#include "pte.h"
#include "tables.h"
#include "cmo.h"
#include "batch.h"
#include "op.h"
#include "walker.h"
#include "lines.h"
#include "entry.h"

#endif
