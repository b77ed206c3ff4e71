/* SPDX-License-Identifier: MIT */
/*
 * What every private header of the core starts from: the public types and
 * the two attributes of internal functions. Freestanding.
 */
#ifndef SLAT_CORE_DEFS_H
#define SLAT_CORE_DEFS_H

#include <slat/slat.h>
#include <slat/walk.h>

/* Functions shared between the core's files, never exported. */
#define SLAT_INTERNAL __attribute__((visibility("hidden")))
#define SLAT_ALWAYS_INLINE inline __attribute__((always_inline))

#endif
