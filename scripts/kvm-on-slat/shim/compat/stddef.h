/* SPDX-License-Identifier: MIT */
/* libslat's <stddef.h> inside the kernel: size_t, NULL, offsetof. */
#ifndef KVM_SLAT_COMPAT_STDDEF_H
#define KVM_SLAT_COMPAT_STDDEF_H

#include <linux/stddef.h>
#include <linux/types.h>

#endif
