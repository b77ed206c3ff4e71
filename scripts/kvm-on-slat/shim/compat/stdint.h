/* SPDX-License-Identifier: MIT */
/*
 * libslat's <stdint.h> inside the kernel, which builds with -nostdinc: the
 * fixed-width types the kernel already defines.
 */
#ifndef KVM_SLAT_COMPAT_STDINT_H
#define KVM_SLAT_COMPAT_STDINT_H

#include <linux/types.h>

#endif
