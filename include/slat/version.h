/* SPDX-License-Identifier: MIT */
/*
 * slat's version. The numbers must agree with project(slat VERSION ...) in
 * CMakeLists.txt: CMake refuses to configure otherwise.
 *
 * Freestanding: no includes but slat's.
 */
#ifndef SLAT_VERSION_H
#define SLAT_VERSION_H

#include <slat/export.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLAT_VERSION_MAJOR 0
#define SLAT_VERSION_MINOR 1
#define SLAT_VERSION_PATCH 0
#define SLAT_VERSION_STRING "0.1.0"

/*
 * The version of the libslat the program runs with (SLAT_VERSION_STRING
 * when it was built): "MAJOR.MINOR.PATCH".
 */
SLAT_API const char *slat_version(void);

#ifdef __cplusplus
}
#endif
#endif
