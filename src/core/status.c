/* SPDX-License-Identifier: MIT */
#include <slat/types.h>

const char *slat_strerror(int status)
{
	switch (status) {
	case SLAT_OK: return "success";
	case SLAT_NOTHING_TO_DO: return "nothing to do: the range already was as asked";
	case SLAT_WAS_YOUNG: return "a leaf in the range was young";
	case SLAT_E_ALIGN: return "address or size not aligned to the granule";
	case SLAT_E_RANGE: return "range empty, wrapping, or beyond the address size";
	case SLAT_E_ATTR: return "attributes not valid for this format";
	case SLAT_E_CONFIG: return "configuration not supported";
	case SLAT_E_NOMEM: return "page cache empty: top it up and retry";
	case SLAT_E_EXISTS: return "a different mapping exists and replacing was refused";
	case SLAT_E_AGAIN: return "lost a race with a concurrent update: retry";
	case SLAT_E_NOENT: return "nothing mapped at that address";
	case SLAT_E_INVAL: return "invalid argument";
	case SLAT_E_VERSION: return "platform hooks built for another slat: rebuild them against these headers (struct slat_mm_ops.size)";
	default: return "unknown status";
	}
}
