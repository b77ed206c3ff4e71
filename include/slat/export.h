/* SPDX-License-Identifier: MIT */
/*
 * SLAT_API marks the functions of slat's public interface. The libraries
 * are compiled with -fvisibility=hidden, so that a shared library exports
 * these functions and nothing else; in a static archive the mark changes
 * nothing. A program may define SLAT_API itself before including a slat
 * header (to nothing, for a compiler without the attribute).
 *
 * Freestanding: no includes.
 */
#ifndef SLAT_EXPORT_H
#define SLAT_EXPORT_H

#ifndef SLAT_API
#if defined(__GNUC__) || defined(__clang__)
#define SLAT_API __attribute__((visibility("default")))
#else
#define SLAT_API
#endif
#endif

#endif
