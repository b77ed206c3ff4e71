/* SPDX-License-Identifier: MIT */
/* slat_version(): the library's version (include/slat/version.h). */
#include <slat/version.h>

const char *slat_version(void)
{
	return SLAT_VERSION_STRING;
}
